"""Write output files atomically, and never over an input or a good file.

An output is written to a temporary file in the target's folder and renamed over the target
only once complete: a failed write (disk full, killed, a renderer error) leaves whatever was
there before. A target that is one of the command's inputs is refused, as is a folder.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from slacheck.errors import UsageError


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def check_target(path: Path, inputs: Iterable[Path] = ()) -> None:
    """Refuse ``path`` as an output when it is a folder or one of ``inputs`` (exit 2)."""
    for source in inputs:
        if _same(path, Path(source)):
            raise UsageError(f"{path} is an input of this command; refusing to overwrite it")
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give a file name to write")


@contextlib.contextmanager
def atomic_path(
    path: Path, inputs: Iterable[Path] = (), *, make_parents: bool = False
) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` when the block ends
    without error, removed otherwise. A device or FIFO target (``/dev/stdout``) is written
    directly: there is nothing there to lose."""
    check_target(path, inputs)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        yield path
        return
    # write beside the file a symbolic link points to, so the link itself stays
    target = Path(os.path.realpath(path))
    try:
        if make_parents:
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else _default_mode())
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_output(
    path: Path, data: bytes | str, inputs: Iterable[Path] = (), *, make_parents: bool = False
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; see ``atomic_path``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path, inputs, make_parents=make_parents) as tmp, tmp.open("wb") as fh:
        fh.write(raw)
        fh.flush()
        if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # not /dev/stdout
            os.fsync(fh.fileno())
