"""The command line: parse, call the public API, print, exit with 0 / 1 / 2 (3: a bug)."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import functools
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from slacheck import __version__
from slacheck.console import plain, safe, say
from slacheck.errors import InputError, Problem, SlacheckError, UsageError
from slacheck.inputs import current_input
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.outputs import (
    check_target,
    guarded_stdout,
    raise_if_signalled,
    write_folder,
    write_output,
)
from slacheck.progress import Stage, Step, reporting
from slacheck.render import jsonout


def _plain_metavars(params: list[Any]) -> list[Any]:
    """Help text without type placeholders: a flag shows none (current typer prints
    ``--version <bool>``), an option its name (``--period PERIOD``); choices and arguments keep
    theirs. Set here, once for every command, under any typer and click."""
    for param in params:
        if getattr(param, "metavar", None) is not None:
            continue
        if not _is_option(param):  # an argument: its name (current click prints ``{contract}``,
            # typer's panel ``<path>`` and ``<list[str]>``), with the marks click would add
            if param.name and not _has_choices(param):
                _plain_argument(param)
            continue
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif not _has_choices(param) and param.name:
            param.metavar = param.name.upper()
    return params


def _plain_argument(param: Any) -> None:
    """An argument shown by its name, as click writes it (``TRACES...``, ``[TRACES]...``), with
    no type beside it: current typer writes ``{contract}`` in the usage line and ``<path>`` or
    ``<list[str]>`` in the panel. The per-instance overrides reach only the typer versions that
    have those methods; older ones take the metavar as it is."""
    many = "..." if getattr(param, "nargs", 1) != 1 else ""
    name = param.name.upper() + many
    metavar = name if getattr(param, "required", False) else f"[{name}]"
    param.metavar = metavar
    if hasattr(param, "_usage_display_name"):
        param._usage_display_name = lambda: metavar
    if hasattr(param, "display_type_rich"):
        param.display_type_rich = lambda ctx: None


def _has_choices(param: Any) -> bool:
    kinds = (getattr(param, "type", None), getattr(param, "type_descriptor", None))
    return any(getattr(k, "choices", None) for k in kinds)


def _is_option(param: Any) -> bool:
    return any(str(o).startswith("-") for o in getattr(param, "opts", ()))


def _help_to_a_terminal() -> bool:
    """Help goes to a terminal: typer's panels. Piped or to a file, click's plain help, which
    pads nothing (rich pads every panel line to the console's width)."""
    stream = sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_metavars(super().get_params(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if _help_to_a_terminal():
            return super().format_help(ctx, formatter)
        return super(TyperCommand, self).format_help(ctx, formatter)  # click's own


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_metavars(super().get_params(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if _help_to_a_terminal():
            return super().format_help(ctx, formatter)
        return super(TyperGroup, self).format_help(ctx, formatter)  # click's own


app = typer.Typer(
    name="slacheck",
    help="Check AI-inference SLA contracts against your own agent traces.",
    no_args_is_help=True,
    cls=_Group,
    pretty_exceptions_enable=False,
)
#: the width of output that goes to a pipe or a file: wide enough that nothing is ever cut
#: (tables take the width of their content; nothing is padded to it)
PIPE_WIDTH = 10_000


class _Unpadded:
    """The current stdout (or stderr) without the spaces Rich pads a line's end with (rich 13.0
    pads a table's centred title to PIPE_WIDTH): piped lines are as long as their content."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr

    def _stream(self) -> Any:
        return sys.stderr if self._stderr else sys.stdout

    def write(self, text: str) -> int:
        return int(self._stream().write(_PADDING.sub("\n", text)))

    def flush(self) -> None:
        self._stream().flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream(), name)


_PADDING = re.compile(r"[ \t]+\n")


def _console(*, stderr: bool = False) -> Console:
    """A terminal gets its width, and text wraps at it; a pipe or a file gets lines as long as
    they are, never the 80 columns Rich assumes there (or a COLUMNS some CI exports): tables
    and bullets were cut."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr, soft_wrap=False)
    return Console(file=_Unpadded(stderr), soft_wrap=True, width=PIPE_WIDTH)  # type: ignore[arg-type]


out = _console()
err = _console(stderr=True)
#: --quiet: no progress line
_quiet = False

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class CliSays(MessageCode):
    """The command line's own lines: what was written, progress, the error frame. In the
    language of the command's --lang, English where it has none."""

    ERROR = NC_("cli.error", "error:")
    AND_MORE = NC_("cli.error.and_more", "… and {n} more")
    INTERNAL = NC_(
        "cli.error.internal",
        "internal error in `{command}` while processing {where}: {error} — a bug in slacheck, "
        "not a verdict; please report it (SLACHECK_DEBUG=1 shows the traceback)",
    )
    NO_INPUT_FILE = NC_("cli.error.no_input_file", "(no input file)")
    VALID = NC_("cli.validate.valid", "valid")
    VALID_DETAIL = NPC_(
        "cli.validate.detail",
        "{path}  ({contract}, {n} latency term)",
        "{path}  ({contract}, {n} latency terms)",
    )
    WROTE = NC_("cli.wrote", "wrote {path}")
    WROTE_STARTER = NC_("cli.init.wrote", "wrote {path}; check it with: slacheck validate {path}")
    PRESET_HINT = NC_(
        "cli.init.preset_hint",
        "the published terms only: check every number against the text you signed",
    )
    WROTE_SLOS = NPC_("cli.openslo.wrote", "wrote {path}: {n} SLO", "wrote {path}: {n} SLOs")
    LEFT_OUT = NC_("cli.openslo.left_out", "left out: {what}")
    READING_TRACES = NC_("cli.status.reading", "reading traces…")
    READING_METRICS = NC_("cli.status.reading_metrics", "reading metrics…")
    ENGINE_FALLBACK = NC_(
        "cli.engine_fallback",
        "note: {file} was parsed in Python, not by the {engine} engine, which failed on it ({why})",
    )
    ID_PASS_IN_PARTS = NC_(
        "cli.id_pass_in_parts",
        "note: the {engine} engine ran out of memory finding duplicate ids and orphans in one "
        "pass, so it read the ids again in {parts} passes (the same result, more time)",
    )
    WRITING_PARQUET = NC_("cli.status.writing_parquet", "writing Parquet…")
    CHECKING = NC_("cli.status.checking", "checking terms…")
    CHECKING_RENDERING = NC_("cli.status.checking_rendering", "checking and rendering…")
    COMPUTING_CLAIM = NC_("cli.status.claim", "computing the claim…")
    RUNNING_DEMO = NC_("cli.status.demo", "running the demo…")
    PROGRESS = NC_("cli.status.progress", "{step}…")
    PROGRESS_READ = NC_("cli.progress.read", "files {done}/{total}, {rows}, {rate} spans/s")
    PROGRESS_READ_LEFT = NC_(
        "cli.progress.read_left",
        "files {done}/{total}, {rows}, {rate} spans/s, about {time} left",
    )
    PROGRESS_QUALITY = NC_("cli.progress.quality", "{rows} read, checking them")
    PROGRESS_CHECKS = NC_("cli.progress.checks", "checks {done}/{total}: {item}")
    PROGRESS_CHECKS_DONE = NC_("cli.progress.checks_done", "checks {done}/{total}")
    GENERATING = NC_("cli.status.generating", "generating {tasks} over {days}…")
    WROTE_CONVERTED = NC_(
        "cli.convert.wrote",
        "wrote {rows} ({used} used, {set_aside} set aside) in {files} under {folder}/",
    )
    WROTE_GENERATED = NC_("cli.generate.wrote", "wrote {path}: {spans}, {tasks}, {days} ({format})")
    WROTE_CLAIM = NC_(
        "cli.claim.wrote",
        "wrote {folder}/: {calls} (affected_calls.csv sha256 {sha256}), {incidents}, letters in "
        "en and zh",
    )
    DEMO_TITLE = NC_("cli.demo.title", "slacheck demo — {files} in {folder}/")
    HEADLINES = NC_("cli.demo.headlines", "Headline findings")
    ROWS = NPC_("cli.count.rows", "{n} row", "{n} rows")
    FILES = NPC_("cli.count.files", "{n} file", "{n} files")
    SPANS = NPC_("cli.count.spans", "{n} span", "{n} spans")
    TASKS = NPC_("cli.count.tasks", "{n} task", "{n} tasks")
    DAYS = NPC_("cli.count.days", "{n} day", "{n} days")
    AFFECTED_CALLS = NPC_("cli.count.affected_calls", "{n} affected call", "{n} affected calls")
    INCIDENTS = NPC_("cli.count.incidents", "{n} incident", "{n} incidents")


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


def _error_line(message: str, lang: str = "en") -> None:
    # Text, not markup: messages quote user input such as "[98.0, 99.0)"; and terminal-safe,
    # for they quote keys and ids from the other side's files.
    label = say(CliSays.ERROR, lang) + ("" if lang == "zh" else " ")
    err.print(Text.assemble((label, "bold red"), safe(message)), highlight=False)


def _fail(message: str, lang: str = "en") -> NoReturn:
    _error_line(message, lang)
    raise typer.Exit(EXIT_BAD_INPUT)


class _Quiet:
    """What `_working` gives when there is no progress line to draw."""

    def update(self, _status: str) -> None:
        pass


class _ProgressLine:
    """The progress line on stderr: the command's words, then how far ingestion and evaluation
    have got (files and rows read, spans per second, time left from the bytes read, checks)."""

    def __init__(self, status: Any, words: str, lang: str) -> None:
        self.status, self.words, self.lang = status, words, lang
        self.started = time.monotonic()

    def update(self, words: str) -> None:
        self.words = words
        self.status.update(words)

    def __call__(self, step: Step) -> None:
        self.status.update(f"{self.words} {say(self.detail(step), self.lang)}")

    def detail(self, step: Step) -> Message:
        elapsed = max(time.monotonic() - self.started, 1e-3)
        if step.stage is Stage.READ:
            figures = {
                "done": step.done,
                "total": step.total,
                "rows": CliSays.ROWS(n=step.rows),
                "rate": f"{step.rows / elapsed:,.0f}",
            }
            if step.bytes_total and 0 < step.bytes_done < step.bytes_total:
                left = elapsed * (step.bytes_total - step.bytes_done) / step.bytes_done
                minutes, seconds = divmod(int(left), 60)
                return CliSays.PROGRESS_READ_LEFT(**figures, time=f"{minutes}:{seconds:02d}")
            return CliSays.PROGRESS_READ(**figures)
        if step.stage is Stage.QUALITY:
            return CliSays.PROGRESS_QUALITY(rows=CliSays.ROWS(n=step.rows))
        if step.item is None:
            return CliSays.PROGRESS_CHECKS_DONE(done=step.done, total=step.total)
        return CliSays.PROGRESS_CHECKS(done=step.done, total=step.total, item=step.item)


@contextlib.contextmanager
def _working(words: str, lang: str = "en") -> Iterator[_Quiet | _ProgressLine]:
    """A spinner with ``words`` and the progress of the work inside, on stderr, only on a
    terminal and without --quiet; piped, nothing (a log gets no spinner frames)."""
    if _quiet or not err.is_terminal:
        yield _Quiet()
        return
    with err.status(words) as status:
        line = _ProgressLine(status, words, lang)
        with reporting(line):
            yield line


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


def _version(value: object) -> None:
    # `is True`, never truthiness: typer < 0.16 with click >= 8.2 passes the string "False"
    # when the flag is absent, and every command printed the version and exited 0
    if value is True:
        out.print(f"slacheck {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress line on stderr.")
    ] = False,
) -> None:
    """Check AI-inference SLA contracts against your own agent traces."""
    global _quiet
    _quiet = quiet is True


# --------------------------------------------------------------------------------------------
# Contracts


@app.command(cls=_Command)
@handles_input_errors
def validate(
    contracts: Annotated[list[Path], typer.Argument(help="Contract YAML files.")],
) -> None:
    """Validate contract files; report every problem with file, line, column and field."""
    from slacheck.contract.load import load_contract

    problems: list[Problem] = []
    more = 0
    for path in contracts:
        try:
            c = load_contract(path)
        except InputError as exc:
            problems.extend(exc.problems)
            more += exc.more
            continue
        detail = CliSays.VALID_DETAIL(path=str(path), contract=c.contract.id, n=len(c.latency))
        line = Text.assemble((say(CliSays.VALID), "green"), "  " + say(detail))
        out.print(line, highlight=False)
    if problems:
        raise InputError(problems, more=more)


@app.command(cls=_Command)
@handles_input_errors
def schema(
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the contract's JSON Schema (for editors: see the README)."""
    from slacheck.contract.docs import json_schema_text

    text = json_schema_text()
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text)
        err.print(say(CliSays.WROTE(path=str(output))), highlight=False)


class Lang(StrEnum):
    en = "en"
    zh = "zh"


@app.command(cls=_Command)
@handles_input_errors
def init(
    lang: Annotated[Lang, typer.Option("--lang", help="Language of the comments.")] = Lang.en,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead of stdout.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    preset_name: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Start from a vendor's published standard terms (see --list-presets); "
            "comments in English.",
        ),
    ] = None,
    list_presets: Annotated[
        bool, typer.Option("--list-presets", help="List the vendor presets and exit.")
    ] = False,
) -> None:
    """Write a commented starting contract that validates (or a vendor preset)."""
    from slacheck.contract.presets import preset, presets

    if list_presets:
        for p in presets():
            out.print(plain(f"{p.name:<20} {p.title}"), highlight=False)
        return
    if preset_name is not None:
        chosen = preset(preset_name)
        if chosen is None:
            names = ", ".join(p.name for p in presets())
            raise UsageError(f"no preset {preset_name!r}; the presets are: {names}")
        text = chosen.text
    else:
        text = (
            resources.files("slacheck.contract")
            .joinpath(f"starters/{lang.value}.yaml")
            .read_text(encoding="utf-8")
        )
    if output is None:
        sys.stdout.write(text)
        return
    if output.exists() and not force:
        raise UsageError(f"{output} exists; pass --force to overwrite it")
    write_output(output, text)
    err.print(say(CliSays.WROTE_STARTER(path=str(output)), lang.value), highlight=False)
    if preset_name is not None:
        err.print(say(CliSays.PRESET_HINT, lang.value), highlight=False)


@app.command(cls=_Command)
@handles_input_errors
def lint(
    contract: Annotated[Path, typer.Argument(help="Contract YAML file.")],
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = (
        OutputFormat.table
    ),
    lang: Annotated[
        Lang, typer.Option("--lang", help="Language of the table: en or zh (JSON: English text).")
    ] = Lang.en,
) -> None:
    """Review the clauses as a procurement reviewer would. Exit 1 when anything is found."""
    from slacheck.console import findings_table
    from slacheck.contract.load import read_contract
    from slacheck.contract.review import review

    loaded = read_contract(contract)
    findings = review(loaded.contract)
    if fmt is OutputFormat.json:
        rows = []
        for f in findings:
            line, _ = loaded.position(f.field)
            rows.append({**f.to_dict(), "file": str(contract), "line": line})
        sys.stdout.write(jsonout.dumps({"findings": rows}))
    else:
        out.print(findings_table(loaded, findings, lang.value))
    raise typer.Exit(EXIT_FINDINGS if findings else EXIT_OK)


export_app = typer.Typer(help="Hand the contract to other tools.", no_args_is_help=True, cls=_Group)
app.add_typer(export_app, name="export")


@export_app.command("openslo", cls=_Command)
@handles_input_errors
def export_openslo(
    contract: Annotated[Path, typer.Argument(help="Contract YAML file.")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """OpenSLO v1 SLOs (multi-document YAML) for the terms that map; the rest in annotations.

    What has no SLO (regions, routing, peak, rate limit, credits) is listed on stderr and in
    the file's leading comments."""
    from slacheck.contract.load import load_contract
    from slacheck.render.openslo import to_openslo

    exported = to_openslo(load_contract(contract))
    if output is None:
        sys.stdout.write(exported.text)
    else:
        write_output(output, exported.text, [contract])
        wrote = CliSays.WROTE_SLOS(path=str(output), n=len(exported.documents))
        err.print(say(wrote), highlight=False)
    for what in exported.left_out:
        err.print(say(CliSays.LEFT_OUT(what=what)), highlight=False)


# --------------------------------------------------------------------------------------------
# Traces

traces_app = typer.Typer(help="Read and inspect trace files.", no_args_is_help=True, cls=_Group)
app.add_typer(traces_app, name="traces")

TraceFiles = Annotated[
    list[str],
    typer.Argument(
        help="Trace files, folders or glob patterns (format detected); with --engine spark also "
        "URLs Spark reads (s3a://…, hdfs://…) of canonical Parquet or OTLP JSON lines."
    ),
]
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--trace-format",
        help=(
            "Override detection: otlp, langfuse, langsmith, litellm, openai_agents, "
            "table (needs --mapping), canonical."
        ),
    ),
]
MappingOpt = Annotated[
    Path | None, typer.Option("--mapping", help="Column mapping YAML for CSV/Parquet/JSONL.")
]
EngineOpt = Annotated[str, typer.Option("--engine", help="duckdb (default) or spark.")]
SparkMasterOpt = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        envvar="SLACHECK_SPARK_MASTER",
        help="With --engine spark: a master (local[*] by default, spark://host:7077, yarn) "
        "or a Spark Connect URL (sc://host:15002).",
        show_default=False,
    ),
]
VerboseOpt = Annotated[
    bool, typer.Option("--verbose", help="Show the engine's own log lines and progress bars.")
]


def _ingest(
    paths: list[str],
    trace_format: str | None,
    mapping: Path | None,
    engine: str,
    spark_master: str | None = None,
    verbose: bool = False,
    lang: str = "en",
) -> Any:
    """Read the traces in an engine session that ends with the command (tables dropped, scratch
    removed). The environment configures the engine: see the README's engines section."""
    from slacheck.engine import EngineConfig, EngineSession
    from slacheck.trace.ingest import ingest
    from slacheck.trace.tabular import load_mapping

    config = EngineConfig.from_env(engine, spark_master=spark_master, verbose=verbose)
    session = EngineSession(config)
    _sessions.append(session)
    with _working(say(CliSays.READING_TRACES, lang), lang):
        traces = ingest(
            paths,
            fmt=trace_format,
            mapping=load_mapping(mapping) if mapping else None,
            session=session,
        )
    for source in traces.sources:
        if source.fallback is not None:  # never silently: a slow path the user did not choose
            said = CliSays.ENGINE_FALLBACK(
                file=str(source.path), engine=str(config.engine), why=str(source.fallback)
            )
            err.print(say(said, lang), markup=False, highlight=False)
    if traces.id_pass_parts > 1:  # never silently either: a slow path
        said = CliSays.ID_PASS_IN_PARTS(engine=str(config.engine), parts=traces.id_pass_parts)
        err.print(say(said, lang), markup=False, highlight=False)
    return traces


@traces_app.command("inspect", cls=_Command)
@handles_input_errors
def traces_inspect(
    paths: TraceFiles,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = (
        OutputFormat.table
    ),
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Spans, tasks, time range, kinds, field coverage and rows set aside."""
    from slacheck.console import summary_tables
    from slacheck.trace.inspect import summarize

    summary = summarize(_ingest(paths, trace_format, mapping, engine, spark_master, verbose))
    if fmt is OutputFormat.json:
        sys.stdout.write(jsonout.dumps(summary.to_dict()))
    else:
        for table in summary_tables(summary):
            out.print(table)


@traces_app.command("convert", cls=_Command)
@handles_input_errors
def traces_convert(
    paths: TraceFiles,
    output: Annotated[Path, typer.Option("-o", "--output", help="A new folder to write.")],
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Write the traces as canonical Parquet, one folder per UTC day, for repeated runs."""
    from slacheck.trace.convert import check_new_folder, convert

    check_new_folder(output)  # before the traces are read, not after
    traces = _ingest(paths, trace_format, mapping, engine, spark_master, verbose)
    with _working(say(CliSays.WRITING_PARQUET)):
        done = convert(traces, output)
    q = traces.quality
    wrote = CliSays.WROTE_CONVERTED(
        rows=CliSays.ROWS(n=done.rows),
        used=q.rows_used,
        set_aside=q.rows_set_aside,
        files=CliSays.FILES(n=done.files),
        folder=str(done.folder),
    )
    out.print(say(wrote), highlight=False)


@traces_app.command("conventions", cls=_Command)
@handles_input_errors
def traces_conventions(
    fmt: Annotated[ReportFormat, typer.Option("--format", help="table, json or md.")] = (
        ReportFormat.table
    ),
) -> None:
    """The conventions table: which SDK attributes fill which canonical fields and span kinds."""
    from slacheck.console import conventions_table
    from slacheck.trace.conventions import reference_markdown, rows

    if fmt is ReportFormat.json:
        sys.stdout.write(jsonout.dumps({"rows": rows()}))
    elif fmt is ReportFormat.md:
        sys.stdout.write(reference_markdown())
    else:
        out.print(conventions_table(rows()))


class GenFormat(StrEnum):
    parquet = "parquet"
    otlp = "otlp"
    langfuse = "langfuse"


@app.command(cls=_Command)
@handles_input_errors
def generate(
    output: Annotated[Path, typer.Option("-o", "--output", help="File to write.")],
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="Agent tasks.")] = 1000,
    days: Annotated[int, typer.Option("--days", min=1, help="Days of traffic.")] = 30,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (output is deterministic).")] = 0,
    fmt: Annotated[GenFormat, typer.Option("--format", help="parquet, otlp or langfuse.")] = (
        GenFormat.parquet
    ),
    start: Annotated[
        str, typer.Option("--start", help="First day, YYYY-MM-DD (UTC midnight).")
    ] = "2026-07-01",
    malformed: Annotated[
        int, typer.Option("--malformed", min=0, help="Add this many deliberately bad rows.")
    ] = 0,
) -> None:
    """Write realistic synthetic agent traffic (for demos, tests and benchmarks)."""

    from slacheck.trace.generate import TrafficProfile, write
    from slacheck.trace.generate import generate as make

    try:
        first = dt.datetime.strptime(start, "%Y-%m-%d").replace(tzinfo=dt.UTC)
    except ValueError:
        raise UsageError(f"--start {start!r} is not a date like 2026-07-01") from None
    if not 1970 <= first.year <= 2199 or days > 3660:
        raise UsageError("--start must be in 1970–2199 and --days at most 3660 (ten years)")
    check_target(output)
    profile = TrafficProfile(tasks=tasks, days=days, seed=seed, start=first, malformed=malformed)
    with _working(say(CliSays.GENERATING(tasks=CliSays.TASKS(n=tasks), days=CliSays.DAYS(n=days)))):
        table = make(profile)
        write(table, output, fmt.value)
    wrote = CliSays.WROTE_GENERATED(
        path=str(output),
        spans=CliSays.SPANS(n=table.num_rows),
        tasks=CliSays.TASKS(n=tasks),
        days=CliSays.DAYS(n=days),
        format=fmt.value,
    )
    err.print(say(wrote), highlight=False)


# --------------------------------------------------------------------------------------------
# Matcher, evaluator, budget


FormatOpt3 = Annotated[ReportFormat, typer.Option("--format", help="table, json or md.")]
ContractArg = Annotated[Path, typer.Argument(help="Contract YAML file.")]
TracesArg = TraceFiles
MetricsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--metrics",
        help="OTLP/JSON metrics file (repeatable): server-side gen_ai.server.* histograms, "
        "a second evidence source for server-side terms.",
    ),
]


def _metrics(paths: list[Path] | None, lang: str = "en") -> Any:
    """The server-side metrics evidence, or None without `--metrics`."""
    if not paths:
        return None
    from slacheck.inputs import reading
    from slacheck.metering.metrics import MetricsEvidence
    from slacheck.trace.otlp_metrics import read_otlp_metrics

    with _working(say(CliSays.READING_METRICS, lang), lang), reading(paths[0]):
        return MetricsEvidence(read_otlp_metrics(paths))


@app.command(cls=_Command)
@handles_input_errors
def fields(
    contract: ContractArg,
    traces: TracesArg,
    fmt: FormatOpt3 = ReportFormat.table,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    lang: Annotated[
        Lang, typer.Option("--lang", help="Language of the table and Markdown: en or zh.")
    ] = Lang.en,
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
    metrics: MetricsOpt = None,
    period: Annotated[
        str | None,
        typer.Option(
            "--period",
            help="Measure only this month (2026-07) or quarter (2026-Q3); default: every trace "
            "given, inside the effective period or not.",
        ),
    ] = None,
) -> None:
    """The eight-item field check: can these traces measure what the contract meters?

    It measures the traces given (all of them, or --period), before the contract starts
    as well as during it, and says how many calls fall before and after the effective period.
    With --metrics, also which latency terms the server-side metrics cover. Exit 0 when
    every item is measurable (or derivable), 1 when a gap remains.
    """
    from slacheck.contract.load import load_contract

    c = load_contract(contract)  # before the engine's imports: a bad contract is said at once
    from slacheck.console import field_check_tables, metrics_coverage_table
    from slacheck.match.fields import check_fields
    from slacheck.metering.context import Metering
    from slacheck.metering.metrics import coverage_rows
    from slacheck.render.markdown import fields_markdown, metrics_coverage_markdown
    from slacheck.windows import parse_period

    ev = _metrics(metrics, lang.value)
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
    window = None if period is None else parse_period(period, c.zone)
    result = check_fields(c, loaded, Metering(c, loaded, window))
    rows = None if ev is None else coverage_rows(c, ev)
    if fmt is ReportFormat.json:
        doc = result.to_dict()
        if rows is not None and ev is not None:
            doc["metrics"] = {
                **ev.data.to_dict(),
                "terms": [{**r, "message": r["message"].to_dict()} for r in rows],
            }
        sys.stdout.write(jsonout.dumps(doc))
    elif fmt is ReportFormat.md:
        sys.stdout.write(fields_markdown(result, lang.value))
        if rows is not None:
            sys.stdout.write("\n" + metrics_coverage_markdown(rows, lang.value))
    else:
        for table in field_check_tables(result, lang.value):
            out.print(table)
        if rows is not None:
            out.print(metrics_coverage_table(rows, lang.value))
    raise typer.Exit(EXIT_OK if result.ok else EXIT_FINDINGS)


@app.command(cls=_Command)
@handles_input_errors
def check(
    contract: ContractArg,
    traces: TracesArg,
    period: Annotated[
        str | None,
        typer.Option("--period", help="A month (2026-07) or quarter (2026-Q3), contract zone."),
    ] = None,
    fmt: FormatOpt3 = ReportFormat.table,
    junit: Annotated[
        Path | None, typer.Option("--junit", help="Also write JUnit XML to this file.")
    ] = None,
    json_file: Annotated[
        Path | None,
        typer.Option("--json", help="Also write the JSON result (as --format json) to this file."),
    ] = None,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    lang: Annotated[
        Lang,
        typer.Option(
            "--lang", help="Language of criteria and notes: en or zh (JSON: English text)."
        ),
    ] = Lang.en,
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
    metrics: MetricsOpt = None,
) -> None:
    """Verdict per term and calendar window. Exit 0 all met, 1 otherwise, 2 bad input.

    With --metrics: server-side OTLP metrics (histograms) bound server-side terms where the
    traces cannot; each term's JSON details.evidence says which source its verdict rests on.
    """
    from slacheck.contract.load import load_contract

    for also in (junit, json_file):
        if also is not None:
            check_target(also, _inputs(contract, traces, mapping))
    c = load_contract(contract)  # before the engine's imports: a bad contract is said at once
    from slacheck.console import evaluation_table
    from slacheck.evaluation import evaluate
    from slacheck.render.junit import to_junit
    from slacheck.render.markdown import evaluation_markdown

    ev = _metrics(metrics, lang.value)
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
    with _working(say(CliSays.CHECKING, lang.value), lang.value):
        result = evaluate(c, loaded, period=period, metrics=ev)
    if junit is not None:
        write_output(junit, to_junit(result, lang.value), _inputs(contract, traces, mapping))
    if json_file is not None:
        write_output(json_file, jsonout.dumps(result.to_dict()), _inputs(contract, traces, mapping))
    if fmt is ReportFormat.json:
        sys.stdout.write(jsonout.dumps(result.to_dict()))
    elif fmt is ReportFormat.md:
        sys.stdout.write(evaluation_markdown(result, lang.value))
    else:
        out.print(evaluation_table(result, lang.value))
    raise typer.Exit(result.exit_code)


@app.command(cls=_Command)
@handles_input_errors
def budget(
    traces: TracesArg,
    what_if: Annotated[
        list[str] | None,
        typer.Option(
            "--what-if",
            help="steps=0.5, parallel-tools, network=20 (ms per call), utilisation=0.85->0.5. "
            "Repeat for several.",
        ),
    ] = None,
    fmt: FormatOpt3 = ReportFormat.table,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    lang: Annotated[
        Lang,
        typer.Option(
            "--lang", help="Language of the table and Markdown: en or zh (JSON: English text)."
        ),
    ] = Lang.en,
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Where task time goes (model, network, tool, queue, retries, gaps), and what-ifs."""
    from slacheck.budget import analyse, parse_what_if, to_markdown

    scenarios = [parse_what_if(spec) for spec in (what_if or [])]
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
    result = analyse(loaded)
    projections = [s.apply(result) for s in scenarios]
    if fmt is ReportFormat.json:
        data = {**result.to_dict(), "what_if": [p.to_dict() for p in projections]}
        sys.stdout.write(jsonout.dumps(data))
    else:
        from rich.markdown import Markdown

        text = to_markdown(result, projections, lang.value)
        if fmt is ReportFormat.md or not out.is_terminal:
            # piped, the Markdown as it is: rich pads every line of rendered Markdown to the
            # console's width (10,000 characters at PIPE_WIDTH) and centres its headings
            sys.stdout.write(text)
        else:
            out.print(Markdown(safe(text)))


# --------------------------------------------------------------------------------------------
# Documents and the demo

LangOpt = Annotated[Lang, typer.Option("--lang", help="en or zh.")]
OutOpt = Annotated[Path, typer.Option("-o", "--output", help="File to write (.pdf, .html, .md).")]
DocFormatOpt = Annotated[
    str | None, typer.Option("--format", help="pdf, html or md (default: from the extension).")
]


def _no_window(contract: Any, loaded: Any, period: str | None, lang: str = "en") -> bool:
    """Say (on the terminal, in ``lang``) when no window of the effective period overlaps the
    traces or the period: both date ranges, and every term as no data. True when it did."""
    from slacheck.console import TerminalSays, verdict_counts
    from slacheck.metering.context import Metering
    from slacheck.results import Evaluation
    from slacheck.windows import parse_period

    window = None if period is None else parse_period(period, contract.zone)
    m = Metering(contract, loaded, window)
    said = m.no_window()
    if said is None:
        return False
    ev = Evaluation(
        contract, (), loaded.sources, loaded.quality, str(loaded.engine), period, no_window=said
    )
    title = TerminalSays.CHECK_TITLE(
        contract=contract.contract.id, counts=verdict_counts(ev), engine=ev.engine
    )
    out.print(say(title, lang), highlight=False)
    out.print(say(said, lang), style="yellow", highlight=False)
    return True


def _write_document(output: Path, data: bytes, inputs: list[Path], lang: str = "en") -> None:
    write_output(output, data, inputs, make_parents=True)
    err.print(say(CliSays.WROTE(path=str(output)), lang), highlight=False)


@app.command(cls=_Command)
@handles_input_errors
def draft(
    contract: ContractArg, output: OutOpt, lang: LangOpt = Lang.en, fmt: DocFormatOpt = None
) -> None:
    """Clause draft from the contract, with the clause review as reviewer notes."""
    from slacheck.contract.load import load_contract
    from slacheck.render.documents import format_for, render_draft

    kind = format_for(output, fmt)
    check_target(output, [contract])
    data = render_draft(load_contract(contract), lang=lang.value, fmt=kind)
    _write_document(output, data, [contract], lang.value)


@app.command(cls=_Command)
@handles_input_errors
def accept(
    contract: ContractArg,
    output: OutOpt,
    traces: Annotated[
        list[str] | None, typer.Argument(help="Optional trace files for the field check.")
    ] = None,
    lang: LangOpt = Lang.en,
    fmt: DocFormatOpt = None,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    period: Annotated[
        str | None,
        typer.Option(
            "--period",
            help="The test period, a month (2026-07) or quarter (2026-Q3); default: the windows "
            "the traces cover.",
        ),
    ] = None,
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Acceptance criteria per term: test period and traffic, who runs it, how each verdict
    counts, re-test and evidence; with traces, the eight-item field check; a sign-off block."""
    from slacheck.contract.load import load_contract
    from slacheck.prepare import prepare_accept
    from slacheck.render.documents import format_for, render_accept

    kind = format_for(output, fmt)
    inputs = _inputs(contract, traces, mapping)
    check_target(output, inputs)
    c = load_contract(contract)
    loaded = (
        _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
        if traces
        else None
    )
    prepared = prepare_accept(c, loaded, contract_file=contract, period=period)
    data = render_accept(prepared, lang=lang.value, fmt=kind)
    _write_document(output, data, inputs, lang.value)
    # the criteria stand; the traces given cannot test them in the effective period
    if loaded is not None and _no_window(c, loaded, period, lang.value):
        raise typer.Exit(EXIT_FINDINGS)


@app.command(cls=_Command)
@handles_input_errors
def report(
    contract: ContractArg,
    traces: TracesArg,
    output: OutOpt,
    period: Annotated[str, typer.Option("--period", help="Quarter (2026-Q3) or month.")],
    lang: LangOpt = Lang.en,
    fmt: DocFormatOpt = None,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    issued: Annotated[
        str | None,
        typer.Option(
            "--issued",
            help="Issue date YYYY-MM-DD (claim status is stated as of it); default today in "
            "the contract's time zone.",
        ),
    ] = None,
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Quarterly compliance report: verdicts per term and month, charts, credits, evidence.

    Writes the evidence appendix (every failing or excluded call, CSV) beside the report."""
    from slacheck.contract.load import load_contract
    from slacheck.prepare import prepare_report
    from slacheck.render.documents import format_for, render_report
    from slacheck.render.inputs import evidence_path

    kind = format_for(output, fmt)
    issue_date = _issue_date(issued)
    inputs = _inputs(contract, traces, mapping)
    check_target(output, inputs)
    c = load_contract(contract)
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
    if _no_window(c, loaded, period, lang.value):
        raise typer.Exit(EXIT_FINDINGS)  # nothing in the effective period to report on
    with _working(say(CliSays.CHECKING_RENDERING, lang.value), lang.value):
        prepared = prepare_report(
            c, loaded, period=period, contract_file=contract, issued=issue_date
        )
        data = render_report(prepared, lang=lang.value, fmt=kind)
    csv_path = evidence_path(output, prepared)
    check_target(csv_path, inputs)
    _write_document(output, data, inputs, lang.value)
    _write_document(csv_path, prepared.evidence.data, inputs, lang.value)


@app.command(cls=_Command)
@handles_input_errors
def claim(
    contract: ContractArg,
    traces: TracesArg,
    period: Annotated[str, typer.Option("--period", help="The month to claim for (2026-07).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="A folder to write the pack.")],
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Credit-claim pack for one month: computation, incidents, affected calls, letters (en, zh).

    Writes claim.json, affected_calls.csv, letter.en.md and letter.zh.md into the folder.
    Exit 1 when a credit is due, 0 when none is."""
    from slacheck.contract.load import load_contract
    from slacheck.prepare import prepare_claim
    from slacheck.render.claim import render_letter

    inputs = _inputs(contract, traces, mapping)
    if output.exists() and not output.is_dir():
        raise UsageError(f"{output} is not a folder")
    files = {
        name: output / name
        for name in ("claim.json", "affected_calls.csv", "letter.en.md", "letter.zh.md")
    }
    for path in files.values():
        check_target(path, inputs)
    c = load_contract(contract)
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose)
    if _no_window(c, loaded, period):
        raise typer.Exit(EXIT_FINDINGS)  # no window of the effective period to claim for
    with _working(say(CliSays.COMPUTING_CLAIM)):
        pack = prepare_claim(c, loaded, period=period)
    data: dict[str, bytes | str] = {
        "claim.json": jsonout.dumps(pack.to_dict()),
        "affected_calls.csv": pack.affected_csv,
        "letter.en.md": render_letter(pack, "en"),
        "letter.zh.md": render_letter(pack, "zh"),
    }
    write_folder(output, data, inputs)  # the whole pack, or the folder as it was
    out.print(say(pack.message), highlight=False)
    wrote = CliSays.WROTE_CLAIM(
        folder=str(output),
        calls=CliSays.AFFECTED_CALLS(n=pack.affected_rows),
        sha256=pack.affected_sha256,
        incidents=CliSays.INCIDENTS(n=len(pack.incidents)),
    )
    out.print(say(wrote), highlight=False)
    raise typer.Exit(EXIT_FINDINGS if pack.due else EXIT_OK)


def _issue_date(text: str | None) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--issued {text!r} is not a date; write it as YYYY-MM-DD") from None


@app.command(cls=_Command)
@handles_input_errors
def demo(
    output: Annotated[Path, typer.Option("-o", "--output", help="Folder to write.")] = Path(
        "demo-out"
    ),
    tasks: Annotated[int, typer.Option("--tasks", min=10, help="Agent tasks to generate.")] = 4000,
) -> None:
    """A month (31 days) of synthetic traffic checked against a bundled contract; all documents."""
    from slacheck.demo import headlines, run_demo

    with _working(say(CliSays.RUNNING_DEMO)) as status:
        result = run_demo(
            output,
            tasks=tasks,
            progress=lambda step: status.update(say(CliSays.PROGRESS(step=step))),
        )
    title = CliSays.DEMO_TITLE(files=CliSays.FILES(n=len(result.files)), folder=str(output))
    out.print(Text(say(title), style="bold"), highlight=False)
    for path in result.files:
        out.print(plain(f"  {path}"), highlight=False)
    out.print(Text("\n" + say(CliSays.HEADLINES), style="bold"))
    for line in headlines(result):
        out.print(Text(f"  • {say(line)}"), highlight=False)


class DoctorColumn(MessageCode):
    """The doctor table's column headers."""

    WHAT = NC_("cli.doctor.what", "what")
    STATUS = NC_("cli.doctor.status", "status")
    FOUND = NC_("cli.doctor.found", "found")
    FIX = NC_("cli.doctor.fix", "fix")
    TITLE = NC_("cli.doctor.title", "slacheck {version} on Python {python}")


@app.command(cls=_Command)
@handles_input_errors
def doctor(
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = (
        OutputFormat.table
    ),
    lang: Annotated[Lang, typer.Option("--lang", help="Language of the table: en or zh.")] = (
        Lang.en
    ),
) -> None:
    """What this install can do: dependencies and their versions, extras, the PDF engine, a
    font per document language, Java for Spark. Exit 0 when everything the default install
    needs is there, 1 otherwise (each missing part with the command that installs it)."""
    from rich.table import Table

    from slacheck.doctor import Status, checks, exit_code, summary

    with _working(say(CliSays.PROGRESS(step="slacheck doctor"), lang.value), lang.value):
        rows = checks()
    code = exit_code(rows)
    if fmt is OutputFormat.json:
        data = {"ok": code == 0, "checks": [r.to_dict() for r in rows]}
        sys.stdout.write(jsonout.dumps(data))
        raise typer.Exit(code)
    python = ".".join(map(str, sys.version_info[:3]))
    table = Table(title=say(DoctorColumn.TITLE(version=__version__, python=python), lang.value))
    for column in (DoctorColumn.WHAT, DoctorColumn.STATUS, DoctorColumn.FOUND, DoctorColumn.FIX):
        table.add_column(say(column, lang.value))
    styles = {Status.OK: "green", Status.MISSING: "red", Status.UNUSABLE: "red"}
    for r in rows:
        table.add_row(
            plain(say(r.area, lang.value)),
            plain(say(r.status_word, lang.value), styles.get(r.status, "yellow")),
            plain(say(r.detail, lang.value)),
            plain("" if r.fix is None else say(r.fix, lang.value)),
        )
    out.print(table)
    out.print(plain(say(summary(rows), lang.value), "green" if code == 0 else "red"))
    raise typer.Exit(code)


def main() -> None:
    """Console-script entry point. SIGTERM ends a command as SIGINT does (its temporary outputs
    removed, what was there before intact), with exit 128 + 15."""
    from slacheck.outputs import Terminated, handle_signals

    if sys.argv[1:] == ["--version"]:  # whatever typer and click make of the flag
        out.print(f"slacheck {__version__}", highlight=False)
        sys.exit(EXIT_OK)
    handle_signals()
    try:
        app()
    except Terminated as exc:
        raise SystemExit(exc.exit_code) from None
