"""The command line: parse, call the public API, print, exit with 0 / 1 / 2 (3: a bug)."""

from __future__ import annotations

import datetime as dt
import functools
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from slacheck import __version__
from slacheck.console import plain, safe
from slacheck.errors import InputError, Problem, SlacheckError, UsageError
from slacheck.inputs import current_input
from slacheck.outputs import check_target, write_output
from slacheck.render import jsonout

app = typer.Typer(
    name="slacheck",
    help="Check AI-inference SLA contracts against your own agent traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
#: the width of output that goes to a pipe or a file: wide enough that nothing is ever cut
PIPE_WIDTH = 10_000


def _console(*, stderr: bool = False) -> Console:
    """A terminal gets its width; a pipe or a file gets lines as long as they are, never the 80
    columns Rich assumes there (or a COLUMNS some CI exports): tables and bullets were cut."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, soft_wrap=True, width=None if stream.isatty() else PIPE_WIDTH)


out = _console()
err = _console(stderr=True)

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

F = TypeVar("F", bound=Callable[..., Any])


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    md = "md"


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


def _error_line(message: str) -> None:
    # Text, not markup: messages quote user input such as "[98.0, 99.0)"; and terminal-safe,
    # for they quote keys and ids from the other side's files.
    err.print(Text.assemble(("error: ", "bold red"), safe(message)), highlight=False)


def _fail(message: str) -> NoReturn:
    _error_line(message)
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
    try:
        return fn(*args, **kwargs)
    except InputError as exc:
        for problem in exc.problems:
            _error_line(str(problem))
        if exc.more:
            _error_line(f"… and {exc.more:,} more")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except (UsageError, SlacheckError) as exc:
        _fail(str(exc))
    except typer.Exit:
        raise
    except Exception as exc:  # a bug: one line, exit 3, never 1 (which means "breached")
        if os.environ.get("SLACHECK_DEBUG"):
            raise
        _internal_error(fn.__name__, exc, kwargs)


def _internal_error(command: str, exc: BaseException, kwargs: dict[str, Any]) -> NoReturn:
    where = current_input()
    if where is None:
        paths = [str(v) for v in kwargs.values() if isinstance(v, Path)]
        paths += [str(p) for v in kwargs.values() if isinstance(v, list) for p in v]
        where = ", ".join(paths) or "(no input file)"
    detail = str(exc).splitlines()[0] if str(exc) else ""
    _error_line(
        f"internal error in `{command}` while processing {where}: "
        f"{type(exc).__name__}{': ' + detail[:300] if detail else ''} — a bug in slacheck, "
        "not a verdict; please report it (SLACHECK_DEBUG=1 shows the traceback)"
    )
    raise typer.Exit(EXIT_INTERNAL)


def _inputs(*paths: Path | list[Path] | None) -> list[Path]:
    """The input files among a command's arguments, for refusing to write over one."""
    found: list[Path] = []
    for p in paths:
        if isinstance(p, list):
            found.extend(p)
        elif p is not None:
            found.append(p)
    return found


def _version(value: bool) -> None:
    if value:
        out.print(f"slacheck {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Check AI-inference SLA contracts against your own agent traces."""


# --------------------------------------------------------------------------------------------
# Contracts


@app.command()
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
        line = Text.assemble(("valid", "green"), safe(f"  {path}  ({c.contract.id}, "))
        line.append(f"{len(c.latency)} latency terms)")
        out.print(line, highlight=False)
    if problems:
        raise InputError(problems, more=more)


@app.command()
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
        err.print(plain(f"wrote {output}"))


class Lang(StrEnum):
    en = "en"
    zh = "zh"


@app.command()
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
    err.print(plain(f"wrote {output}; check it with: slacheck validate {output}"))
    if preset_name is not None:
        err.print(plain("the published terms only: check every number against the text you signed"))


@app.command()
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


export_app = typer.Typer(help="Hand the contract to other tools.", no_args_is_help=True)
app.add_typer(export_app, name="export")


@export_app.command("openslo")
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
        err.print(plain(f"wrote {output}: {len(exported.documents)} SLOs"))
    for what in exported.left_out:
        err.print(plain(f"left out: {what}"), highlight=False)


# --------------------------------------------------------------------------------------------
# Traces

traces_app = typer.Typer(help="Read and inspect trace files.", no_args_is_help=True)
app.add_typer(traces_app, name="traces")

TraceFiles = Annotated[list[Path], typer.Argument(help="Trace files (format detected).")]
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--trace-format",
        help="Override detection: otlp, langfuse, langsmith, table (needs --mapping), canonical.",
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
    paths: list[Path],
    trace_format: str | None,
    mapping: Path | None,
    engine: str,
    spark_master: str | None = None,
    verbose: bool = False,
) -> Any:
    """Read the traces in an engine session that ends with the command (tables dropped, scratch
    removed). The environment configures the engine: see the README's engines section."""
    from slacheck.engine import EngineConfig, EngineSession
    from slacheck.trace.ingest import ingest
    from slacheck.trace.tabular import load_mapping

    config = EngineConfig.from_env(engine, spark_master=spark_master, verbose=verbose)
    session = EngineSession(config)
    _sessions.append(session)
    with err.status("reading traces…"):
        traces = ingest(
            paths,
            fmt=trace_format,
            mapping=load_mapping(mapping) if mapping else None,
            session=session,
        )
    for source in traces.sources:
        if source.fallback is not None:  # never silently: a slow path the user did not choose
            err.print(
                plain(
                    f"note: {source.path} was parsed in Python, not by the {config.engine} "
                    f"engine, which failed on it ({source.fallback})"
                ),
                highlight=False,
            )
    return traces


@traces_app.command("inspect")
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


@traces_app.command("convert")
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
    from slacheck.trace.convert import convert

    traces = _ingest(paths, trace_format, mapping, engine, spark_master, verbose)
    with err.status("writing Parquet…"):
        done = convert(traces, output)
    q = traces.quality
    out.print(
        plain(
            f"wrote {done.rows:,} rows ({q.rows_used:,} used, {q.rows_set_aside:,} set aside) "
            f"in {done.files:,} files under {done.folder}/"
        ),
        highlight=False,
    )


@traces_app.command("conventions")
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


@app.command()
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
    with err.status(f"generating {tasks} tasks over {days} days…"):
        table = make(profile)
        write(table, output, fmt.value)
    err.print(
        plain(f"wrote {output}: {table.num_rows} spans, {tasks} tasks, {days} days ({fmt.value})")
    )


# --------------------------------------------------------------------------------------------
# Matcher, evaluator, budget


FormatOpt3 = Annotated[ReportFormat, typer.Option("--format", help="table, json or md.")]
ContractArg = Annotated[Path, typer.Argument(help="Contract YAML file.")]
TracesArg = Annotated[list[Path], typer.Argument(help="Trace files (format detected).")]


@app.command()
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
) -> None:
    """The eight-item field check: can these traces measure what the contract meters?

    Exit 0 when every item is measurable (or derivable), 1 when a gap remains.
    """
    from slacheck.console import field_check_tables
    from slacheck.contract.load import load_contract
    from slacheck.match.fields import check_fields
    from slacheck.render.markdown import fields_markdown

    c = load_contract(contract)
    result = check_fields(c, _ingest(traces, trace_format, mapping, engine, spark_master, verbose))
    if fmt is ReportFormat.json:
        sys.stdout.write(jsonout.dumps(result.to_dict()))
    elif fmt is ReportFormat.md:
        sys.stdout.write(fields_markdown(result, lang.value))
    else:
        for table in field_check_tables(result, lang.value):
            out.print(table)
    raise typer.Exit(EXIT_OK if result.ok else EXIT_FINDINGS)


@app.command()
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
) -> None:
    """Verdict per term and calendar window. Exit 0 all met, 1 otherwise, 2 bad input."""
    from slacheck.console import evaluation_table
    from slacheck.contract.load import load_contract
    from slacheck.evaluate import evaluate
    from slacheck.render.junit import to_junit
    from slacheck.render.markdown import evaluation_markdown

    if junit is not None:
        check_target(junit, _inputs(contract, traces, mapping))
    c = load_contract(contract)
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose)
    with err.status("checking terms…"):
        result = evaluate(c, loaded, period=period)
    if junit is not None:
        write_output(junit, to_junit(result, lang.value), _inputs(contract, traces, mapping))
    if fmt is ReportFormat.json:
        sys.stdout.write(jsonout.dumps(result.to_dict()))
    elif fmt is ReportFormat.md:
        sys.stdout.write(evaluation_markdown(result, lang.value))
    else:
        out.print(evaluation_table(result, lang.value))
    raise typer.Exit(result.exit_code)


@app.command()
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
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Where task time goes (model, network, tool, queue, retries, gaps), and what-ifs."""
    from slacheck.budget import analyse, parse_what_if, to_markdown

    scenarios = [parse_what_if(spec) for spec in (what_if or [])]
    result = analyse(_ingest(traces, trace_format, mapping, engine, spark_master, verbose))
    projections = [s.apply(result) for s in scenarios]
    if fmt is ReportFormat.json:
        data = {**result.to_dict(), "what_if": [p.to_dict() for p in projections]}
        sys.stdout.write(jsonout.dumps(data))
    else:
        from rich.markdown import Markdown

        text = to_markdown(result, projections)
        if fmt is ReportFormat.md:
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


def _write_document(output: Path, data: bytes, inputs: list[Path]) -> None:
    write_output(output, data, inputs, make_parents=True)
    err.print(plain(f"wrote {output}"))


@app.command()
@handles_input_errors
def draft(
    contract: ContractArg, output: OutOpt, lang: LangOpt = Lang.en, fmt: DocFormatOpt = None
) -> None:
    """Clause draft from the contract, with the clause review as reviewer notes."""
    from slacheck.contract.load import load_contract
    from slacheck.render.documents import format_for, render_draft

    kind = format_for(output, fmt)
    check_target(output, [contract])
    _write_document(
        output, render_draft(load_contract(contract), lang=lang.value, fmt=kind), [contract]
    )


@app.command()
@handles_input_errors
def accept(
    contract: ContractArg,
    output: OutOpt,
    traces: Annotated[
        list[Path] | None, typer.Argument(help="Optional trace files for the field check.")
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
    from slacheck.render.documents import format_for, render_accept

    kind = format_for(output, fmt)
    inputs = _inputs(contract, traces, mapping)
    check_target(output, inputs)
    c = load_contract(contract)
    loaded = (
        _ingest(traces, trace_format, mapping, engine, spark_master, verbose) if traces else None
    )
    data = render_accept(
        c, loaded, lang=lang.value, fmt=kind, contract_file=contract, period=period
    )
    _write_document(output, data, inputs)


@app.command()
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
    from slacheck.render.documents import (
        evidence_path,
        format_for,
        prepare_report,
        render_prepared_report,
    )

    kind = format_for(output, fmt)
    issue_date = _issue_date(issued)
    inputs = _inputs(contract, traces, mapping)
    check_target(output, inputs)
    c = load_contract(contract)
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose)
    with err.status("checking and rendering…"):
        prepared = prepare_report(
            c, loaded, period=period, contract_file=contract, issued=issue_date
        )
        data = render_prepared_report(prepared, lang=lang.value, fmt=kind)
    csv_path = evidence_path(output, prepared)
    check_target(csv_path, inputs)
    _write_document(output, data, inputs)
    _write_document(csv_path, prepared.evidence.data, inputs)


@app.command()
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
    from slacheck.messages import render
    from slacheck.render.claim import prepare_claim, render_letter

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
    with err.status("computing the claim…"):
        pack = prepare_claim(c, loaded, period=period)
    data: dict[str, bytes | str] = {
        "claim.json": jsonout.dumps(pack.to_dict()),
        "affected_calls.csv": pack.affected_csv,
        "letter.en.md": render_letter(pack, "en"),
        "letter.zh.md": render_letter(pack, "zh"),
    }
    for name, path in files.items():
        write_output(path, data[name], inputs, make_parents=True)
    out.print(plain(render(pack.message, "en")), highlight=False)
    out.print(
        plain(
            f"wrote {output}/: {pack.affected_rows:,} affected calls "
            f"(affected_calls.csv sha256 {pack.affected_sha256}), "
            f"{len(pack.incidents):,} incidents, letters in en and zh"
        ),
        highlight=False,
    )
    raise typer.Exit(EXIT_FINDINGS if pack.due else EXIT_OK)


def _issue_date(text: str | None) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--issued {text!r} is not a date; write it as YYYY-MM-DD") from None


@app.command()
@handles_input_errors
def demo(
    output: Annotated[Path, typer.Option("-o", "--output", help="Folder to write.")] = Path(
        "demo-out"
    ),
    tasks: Annotated[int, typer.Option("--tasks", min=10, help="Agent tasks to generate.")] = 4000,
) -> None:
    """A month (31 days) of synthetic traffic checked against a bundled contract; all documents."""
    from slacheck.demo import headlines, run_demo

    with err.status("running the demo…") as status:
        result = run_demo(output, tasks=tasks, progress=lambda m: status.update(m + "…"))
    out.print(
        Text.assemble(("slacheck demo", "bold"), safe(f" — {len(result.files)} files in {output}/"))
    )
    for path in result.files:
        out.print(plain(f"  {path}"), highlight=False)
    out.print("\n[bold]Headline findings[/]")
    for line in headlines(result):
        out.print(plain(f"  • {line}"))


def main() -> None:
    """Console-script entry point."""
    app()
