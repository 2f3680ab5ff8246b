"""Write output files and folders atomically, never over an input, and say a failed write as
the user's problem.

An output is written to a temporary file (or folder) beside the target and renamed over it
only once complete: a failed write (disk full, file too large, killed, a renderer error) leaves
whatever was there before. A target that is one of the command's inputs is refused, as is a
folder where a file is wanted. A write that fails in the file system (no space, a file-size
limit, a device that refuses it) is a ``UsageError`` naming the path and the cause (exit 2).

SIGINT and SIGTERM (``handle_signals``, installed by the command line) raise in the main
thread, so every block here removes its temporary file or folder on the way out; the renames
that put a finished output in place hold them back (``signals_held``) so they are never cut
halfway.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import IO, Any

from slacheck import interrupts
from slacheck.errors import UsageError


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt (temporary outputs removed), so that the
    command line exits with 128 + 15. Not an ``Exception``: no ``except Exception`` stops it."""

    exit_code = 128 + signal.SIGTERM


#: signals that arrived while held (``signals_held``), delivered when the hold ends
_pending: list[int] = []
_holds = 0
#: signals whose exception was raised: the process is ending
_received: list[int] = []


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _holds:
        _pending.append(signum)
        return
    _received.append(signum)
    raise_if_signalled()


def raise_if_signalled() -> None:
    """Raise the exception of a signal received (``handle_signals``) again. An engine turns the
    exception raised in its query into an error of its own (DuckDB: ``RuntimeError: Query
    interrupted``), which a caller may take for the input's fault and go on: callers that
    catch an engine's errors call this first."""
    if _received:
        if _received[0] == signal.SIGTERM:
            raise Terminated
        raise KeyboardInterrupt


def handle_signals() -> None:
    """SIGTERM unwinds like SIGINT (``Terminated``); both wait while a finished output is put in
    place, and both interrupt a running engine query (``add_interrupter``). SIGXFSZ is ignored,
    so a file-size limit fails the write (EFBIG, said as such) rather than killing the process
    with its temporary file left behind. Main thread only."""
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    interrupts.start_watcher()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM (as ``handle_signals`` installs them) wait until the block ends."""
    global _holds
    _holds += 1
    try:
        yield
    finally:
        _holds -= 1
        if not _holds and _pending:
            signum = _pending[0]
            _pending.clear()
            _on_signal(signum, None)


def write_failed(path: Path | str, exc: OSError) -> UsageError:
    """The error for a write to ``path`` that the file system refused, naming the cause."""
    cause = exc.strerror or str(exc)
    return UsageError(f"cannot write {path}: {cause}")


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
    directly: there is nothing there to lose. An ``OSError`` in the block is a ``UsageError``
    naming ``path``."""
    check_target(path, inputs)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        try:
            yield path
        except OSError as exc:  # /dev/full: "No space left on device"
            raise write_failed(path, exc) from None
        return
    # write beside the file a symbolic link points to, so the link itself stays
    target = Path(os.path.realpath(path))
    tmp: Path | None = None
    try:
        # made and named, or not made: a signal that arrives meanwhile is delivered as the hold
        # ends, inside this ``try``, so the file just made is removed below
        with signals_held():
            if make_parents:
                target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(
                prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
            )
            os.close(fd)
            tmp = Path(tmp_name)
        yield tmp
        with signals_held():
            os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else _default_mode())
            os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise write_failed(path, exc) from None
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_folder(path: Path, *, make_parents: bool = True) -> Iterator[Path]:
    """A folder to fill, in place of ``path`` once the block ends without error; removed with
    everything in it otherwise, ``path`` untouched. The yielded path does not exist yet: the
    block creates it (a Parquet writer wants to).

    Where ``path`` does not exist, the new folder is renamed onto it: it appears whole or not
    at all. Where it is a folder already, the new one is made inside it and each of its entries
    then replaces its namesake there (renames within one folder, signals held), so the folder's
    other files stay and no entry is ever half-written."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path} is not a folder")
    target = Path(os.path.realpath(path))
    into = target.exists()
    home = target if into else target.parent
    staging: Path | None = None
    try:
        # as in ``atomic_path``: a signal held while the staging folder is made is delivered
        # inside this ``try``, and the folder goes with it
        with signals_held():
            if make_parents:
                home.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=home))
        out = staging / "out"
        yield out
        with signals_held():
            if not into:
                out.rename(target)
            else:
                entries = sorted(out.iterdir())
                for entry in entries:  # every one checked before any is moved
                    _check_replaceable(entry, target / entry.name)
                for entry in entries:
                    _replace(entry, target / entry.name)
    except OSError as exc:
        raise write_failed(path, exc) from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _check_replaceable(new: Path, old: Path) -> None:
    """Refuse to put ``new`` where ``old`` is unless one rename can: a file over a file or
    nothing, a folder over an empty folder or nothing. A folder of the user's is never merged
    into or deleted."""
    if not os.path.lexists(old):
        return
    if old.is_dir() and not old.is_symlink():
        if not new.is_dir() or any(old.iterdir()):
            raise UsageError(f"{old} is a folder in the way; move it and run again")
    elif new.is_dir():
        raise UsageError(f"{old} is a file where a folder is to be written; move it")


def _replace(new: Path, old: Path) -> None:
    if new.is_dir() and old.is_dir() and not old.is_symlink():
        old.rmdir()
    os.replace(new, old)


def write_folder(path: Path, files: Mapping[str, bytes | str], inputs: Iterable[Path] = ()) -> None:
    """Write ``files`` (name → data, text as UTF-8) into the folder ``path`` together: all of
    them, or, when one cannot be written, none (see ``atomic_folder``)."""
    for name in files:
        check_target(path / name, inputs)
    with atomic_folder(path) as out:
        out.mkdir()
        for name, data in files.items():
            _write_file(out / name, data)


def _write_file(path: Path, data: bytes | str) -> None:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with path.open("wb") as fh:
        fh.write(raw)
        fh.flush()
        if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # not /dev/stdout
            os.fsync(fh.fileno())


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_output(
    path: Path, data: bytes | str, inputs: Iterable[Path] = (), *, make_parents: bool = False
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; see ``atomic_path``."""
    with atomic_path(path, inputs, make_parents=make_parents) as tmp:
        _write_file(tmp, data)


class _Guarded:
    """A text stream whose failed writes are ``UsageError``s naming it (a closed pipe stays an
    ``OSError``: the reader stopped reading, the caller decides); everything else delegates."""

    def __init__(self, stream: IO[str], name: str) -> None:
        self._stream = stream
        self._name = name

    def _failed(self, exc: OSError) -> BaseException:
        if exc.errno == errno.EPIPE:
            return exc
        # nothing more can be said there: what is still buffered goes nowhere, so that the
        # interpreter's last flush does not fail again
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        return write_failed(self._name, exc)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._failed(exc) from None

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._failed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """While the block runs, a write to ``sys.stdout`` that the file system refuses (``>
    /dev/full``, a full disk) is a ``UsageError`` naming standard output; at its end, however
    it ends, what is buffered is written under the same rule."""
    stream = sys.stdout
    if isinstance(stream, _Guarded):
        yield
        return
    guarded = _Guarded(stream, "standard output")
    sys.stdout = guarded
    try:
        yield
    finally:
        try:
            guarded.flush()  # however the block ended (an exit code is an exception too)
        finally:
            if sys.stdout is guarded:
                sys.stdout = stream
