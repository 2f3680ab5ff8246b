"""Open input files as the untrusted things they are: regular files only, bounded, located errors.

A FIFO or a device given as an input would block or never end; a directory or a symlink loop
is not "no such file". Every check here happens on the open descriptor (opened without
blocking), so nothing hangs and nothing changes between the check and the read.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, SequenceNode

from slacheck.errors import InputError, Problem, Reason

#: Contracts and mappings are hand-written YAML of a few kilobytes; anything near this is not one.
MAX_SPEC_BYTES = 256 * 1024
#: Deeper than this is no contract, mapping or trace record slacheck reads.
MAX_DEPTH = 64

#: The input being read now, named when an unexpected error escapes (see ``cli``).
_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("input", default=None)


def current_input() -> str | None:
    """The input file being read, if any."""
    return _current.get()


@contextlib.contextmanager
def reading(path: str | Path) -> Iterator[None]:
    """Mark ``path`` as the input being read while the block runs."""
    token = _current.set(str(path))
    try:
        yield
    finally:
        _current.reset(token)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _os_problem(path: Path, exc: OSError, what: str) -> Problem:
    if exc.errno == errno.ENOENT:
        return Problem(str(path), f"no such {what}", Reason.FILE_NOT_FOUND, fix="check the path")
    if exc.errno == errno.ELOOP:
        return Problem(
            str(path), "a symbolic link loop", Reason.NOT_A_FILE, fix="point the link at a file"
        )
    if exc.errno == errno.EISDIR:
        return Problem(str(path), f"is a folder, not a {what}", Reason.NOT_A_FILE)
    return Problem(
        str(path),
        f"cannot read the {what}: {exc.strerror or exc}",
        Reason.FILE_NOT_FOUND,
        fix="check the path and its permissions",
    )


def regular_file_problem(path: Path, what: str = "file") -> Problem | None:
    """Why ``path`` cannot be read as a regular file, or None when it can. Never blocks."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _os_problem(path, exc, what)
    except ValueError:  # an embedded NUL in the path
        return Problem(str(path), "not a valid path", Reason.FILE_NOT_FOUND)
    if not stat.S_ISREG(mode):
        return Problem(
            str(path),
            f"is {_kind(mode)}; only regular files are read",
            Reason.NOT_A_FILE,
            fix=f"give the path of a {what}",
        )
    return None


@contextlib.contextmanager
def open_regular(path: Path, error: type[InputError], what: str = "file") -> Iterator[BinaryIO]:
    """``path`` opened for reading, refused unless it is a regular file (checked on the open
    descriptor, opened without blocking so a FIFO cannot hang us)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error([_os_problem(path, exc, what)]) from None
    except ValueError:
        raise error([Problem(str(path), "not a valid path", Reason.FILE_NOT_FOUND)]) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(
                [
                    Problem(
                        str(path),
                        f"is {_kind(mode)}; only regular files are read",
                        Reason.NOT_A_FILE,
                        fix=f"give the path of a {what}",
                    )
                ]
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        yield fh


#: what says a file is still the one read: device, inode, size, modification and change times
#: (ns). A write, a truncation or a file moved over it changes one of them; the change time
#: cannot be set back by a program, so neither can a writer that restores the others
Stamp = tuple[int, int, int, int, int]


def stamp_of(path: Path) -> Stamp | None:
    """``path``'s ``Stamp`` now, or None when it cannot be read (gone, no longer accessible)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def sha256_of(path: Path) -> str:
    """SHA-256 of the file's bytes as they are (what ``sha256sum`` prints), read in blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_if_readable(path: Path) -> str | None:
    """``sha256_of(path)``, or None when the file can no longer be read (gone, not accessible)."""
    try:
        return sha256_of(path)
    except OSError:
        return None


def read_bounded(
    path: Path, error: type[InputError], *, limit: int = MAX_SPEC_BYTES, what: str = "file"
) -> bytes:
    """The bytes of the regular file ``path``; more than ``limit`` bytes is refused."""
    with open_regular(path, error, what) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise error([_os_problem(path, exc, what)]) from None
    if len(data) > limit:
        raise error(
            [
                Problem(
                    str(path),
                    f"larger than {limit:,} bytes; no {what} is that large",
                    Reason.TOO_LARGE,
                    fix=f"check that this is the {what} you meant",
                )
            ]
        )
    return data


def decode_utf8(data: bytes, path: Path, error: type[InputError]) -> str:
    """``data`` as UTF-8 text (a byte-order mark is dropped); the error names line and column."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise error(
            [
                Problem(
                    str(path),
                    "UTF-16 text; slacheck reads UTF-8",
                    Reason.NOT_UTF8,
                    line=1,
                    column=1,
                    fix="save the file as UTF-8",
                )
            ]
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", errors="replace")) + 1
        raise error(
            [
                Problem(
                    str(path),
                    f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot start a character",
                    Reason.NOT_UTF8,
                    line=line,
                    column=column,
                    fix="save the file as UTF-8",
                )
            ]
        ) from None


def depth_problem(value: object, path: str, limit: int = MAX_DEPTH) -> Problem | None:
    """A problem when ``value`` (parsed YAML or JSON) nests deeper than ``limit``; iterative,
    so depth itself cannot overflow the stack."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return Problem(
                path,
                f"nested more than {limit} levels deep",
                Reason.TOO_DEEP,
                fix="no contract, mapping or trace record nests this deep",
            )
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list | tuple):
            stack.extend((v, depth + 1) for v in node)
    return None


# -- YAML with bounded aliases ------------------------------------------------------------------

#: A hand-written contract or mapping uses an anchor a few times; more alias uses than this, or
#: aliases that stand for more nodes than ``MAX_YAML_ALIAS_NODES`` in all, is no contract (a
#: "billion laughs" document: nine nested anchors of nine aliases each stand for 9⁹ nodes).
MAX_YAML_ALIASES = 1_000
MAX_YAML_ALIAS_NODES = 10_000


class YamlAliasBound(MarkedYAMLError):
    """A YAML document whose aliases stand for more than the bound (or for themselves)."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(problem=message, problem_mark=mark)
        self.message = message


class _BoundedComposer(Composer):
    """ruamel's composer, counting each alias use and the nodes it stands for as the document
    is composed: a document beyond the bounds is refused at the alias that crosses them,
    before a single Python object (or model) is built from it. Sizes are memoised per node
    (children are complete before their parent), so counting costs one step per node."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._sizes: dict[int, int] = {}
        self._aliases = 0
        self._alias_nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.parser.check_event(AliasEvent):
            mark = self.parser.peek_event().start_mark
            node = super().compose_node(parent, index)
            size = self._sizes.get(id(node))
            if size is None:  # its anchor is still open: the alias is inside what it names
                raise YamlAliasBound("an alias inside the node its anchor names", mark)
            self._aliases += 1
            self._alias_nodes += size
            if self._aliases > MAX_YAML_ALIASES:
                raise YamlAliasBound(f"more than {MAX_YAML_ALIASES:,} aliases (*name)", mark)
            if self._alias_nodes > MAX_YAML_ALIAS_NODES:
                raise YamlAliasBound(
                    f"aliases (*name) that stand for more than {MAX_YAML_ALIAS_NODES:,} "
                    "values in all",
                    mark,
                )
            return node
        node = super().compose_node(parent, index)
        if isinstance(node, SequenceNode):
            children: list[Any] = node.value
        elif isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        self._sizes[id(node)] = 1 + sum(self._sizes.get(id(c), 1) for c in children)
        return node


def bounded_yaml(typ: str = "safe") -> YAML:
    """A ruamel ``YAML`` loader (``typ`` "safe" or "rt") whose aliases are bounded (see
    ``MAX_YAML_ALIASES``); a document beyond the bounds raises ``YamlAliasBound``, a
    ``MarkedYAMLError`` with the alias's line. The pure-Python parser, so the composer is ours."""
    yaml = YAML(typ=typ, pure=True)
    yaml.Composer = _BoundedComposer
    return yaml
