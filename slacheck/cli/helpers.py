"""What every command shares: exit codes, the formats and languages it takes, and the frame
that turns bad input, usage and bugs into a message and an exit code."""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.text import Text

from slacheck.cli.says import CliSays
from slacheck.cli.terminal import err
from slacheck.console import safe, say
from slacheck.errors import InputError, SlacheckError, UsageError
from slacheck.inputs import current_input
from slacheck.messages import Message
from slacheck.outputs import guarded_stdout, raise_if_signalled

if TYPE_CHECKING:
    from slacheck.contract.load import LoadedContract
    from slacheck.contract.model import Contract

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def _lang_of(kwargs: dict[str, Any]) -> str:
    """The language a command was given (--lang), English where it has none."""
    return str(getattr(kwargs.get("lang"), "value", "en"))


F = TypeVar("F", bound=Callable[..., Any])


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    md = "md"


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


class Lang(StrEnum):
    en = "en"
    zh = "zh"


def _error_line(message: str, lang: str = "en") -> None:
    # Text, not markup: messages quote user input such as "[98.0, 99.0)"; and terminal-safe,
    # for they quote keys and ids from the other side's files.
    label = say(CliSays.ERROR, lang) + ("" if lang == "zh" else " ")
    err.print(Text.assemble((label, "bold red"), safe(message)), highlight=False)


def _fail(message: str, lang: str = "en") -> NoReturn:
    _error_line(message, lang)
    raise typer.Exit(EXIT_BAD_INPUT)


#: engine sessions the running command opened; closed when it ends, however it ends
_sessions: list[Any] = []


def handles_input_errors(fn: F) -> F:
    """Bad input or usage: a clear message on stderr and exit 2, never a traceback. Engine
    sessions the command opened are closed at its end (tables dropped, scratch removed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return _run(fn, args, kwargs)
        finally:
            while _sessions:
                _sessions.pop().close()

    return wrapper  # type: ignore[return-value]


def _run(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The command, with bad input, usage and bugs turned into a message and an exit code."""
    lang = _lang_of(kwargs)
    try:
        with guarded_stdout():
            return fn(*args, **kwargs)
    except InputError as exc:
        raise_if_signalled()  # an engine's "query interrupted", taken for the input's fault
        for problem in exc.problems:
            _error_line(str(problem), lang)
        if exc.more:
            _error_line(say(CliSays.AND_MORE(n=exc.more), lang), lang)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except (UsageError, SlacheckError) as exc:
        raise_if_signalled()
        said = getattr(exc, "message", None)  # worded in the command's language where it can be
        _fail(say(said, lang) if isinstance(said, Message) else str(exc), lang)
    except typer.Exit:
        raise
    except ModuleNotFoundError as exc:  # a light install: name the extra, or it is a bug
        from slacheck.extras import missing_part

        part = missing_part(_command_name(fn), exc)
        if part is None:
            if os.environ.get("SLACHECK_DEBUG"):
                raise
            _internal_error(fn.__name__, exc, kwargs)
        _fail(say(part.message, lang), lang)
    except Exception as exc:  # a bug: one line, exit 3, never 1 (which means "breached")
        raise_if_signalled()
        said = _environment_problem(exc)
        if said is not None:  # a disk full, a file gone: the user's to fix, not a bug
            _fail(said, lang)
        if os.environ.get("SLACHECK_DEBUG"):
            raise
        _internal_error(fn.__name__, exc, kwargs)


#: what the file system says that is the user's to fix: no space, a size or quota limit, a
#: device error, a read-only disk, a file gone or not accessible
_ENVIRONMENT_ERRNOS = frozenset(
    getattr(errno, name)
    for name in (
        "ENOSPC", "EDQUOT", "EFBIG", "EIO", "EROFS", "ENXIO", "ENODEV", "ESTALE", "ENOENT",
        "EACCES", "EPERM",
    )
    if hasattr(errno, name)
)  # fmt: skip


def _environment_problem(exc: Exception) -> str | None:
    """The message for an error that is the file system's, not slacheck's: an ``OSError`` the
    writers did not already say (a read, a scratch file), or an engine's I/O error (a trace
    file deleted while the engine still reads it, its scratch disk full). None otherwise."""
    from slacheck.engine import file_system_problem

    if isinstance(exc, OSError) and exc.errno in _ENVIRONMENT_ERRNOS:
        where = exc.filename or current_input()
        cause = exc.strerror or str(exc)
        return f"{where}: {cause}" if where else f"a file could not be read or written: {cause}"
    return file_system_problem(exc)


def _command_name(fn: Callable[..., Any]) -> str:
    """The command as typed: ``traces_inspect`` → ``slacheck traces inspect``."""
    return "slacheck " + fn.__name__.replace("_", " ")


def _internal_error(command: str, exc: BaseException, kwargs: dict[str, Any]) -> NoReturn:
    lang = _lang_of(kwargs)
    where = current_input()
    if where is None:
        paths = [str(v) for v in kwargs.values() if isinstance(v, Path)]
        paths += [str(p) for v in kwargs.values() if isinstance(v, list) for p in v]
        where = ", ".join(paths) or say(CliSays.NO_INPUT_FILE, lang)
    detail = str(exc).splitlines()[0] if str(exc) else ""
    error = f"{type(exc).__name__}{': ' + detail[:300] if detail else ''}"
    _error_line(say(CliSays.INTERNAL(command=command, where=where, error=error), lang), lang)
    raise typer.Exit(EXIT_INTERNAL)


def _inputs(*paths: Path | list[Path] | list[str] | None) -> list[Path]:
    """The input files among a command's arguments, for refusing to write over one (a URL is
    not a file here)."""
    from slacheck.trace.urls import is_url

    found: list[Path] = []
    for p in paths:
        if isinstance(p, list):
            found.extend(Path(x) for x in p if not is_url(x))
        elif p is not None:
            found.append(p)
    return found


def load_contract_and_period(path: Path, period: str | None) -> Contract:
    """The contract at ``path``, with ``--period`` read in its zone: a period that names no month
    or quarter is refused before the traces are read, not after minutes of ingestion."""
    return read_contract_and_period(path, period).contract


def read_contract_and_period(path: Path, period: str | None) -> LoadedContract:
    """``load_contract_and_period`` with the SHA-256 of the bytes read (``LoadedContract``)."""
    from slacheck.contract.load import read_contract
    from slacheck.windows import parse_period

    loaded = read_contract(path)
    if period is not None:
        parse_period(period, loaded.contract.zone)
    return loaded
