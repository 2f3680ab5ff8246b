"""The trace commands: traces inspect, convert and conventions, and generate."""

from __future__ import annotations

import datetime as dt
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from slacheck.cli.helpers import OutputFormat, ReportFormat, handles_input_errors
from slacheck.cli.helptext import _Command, _Group
from slacheck.cli.options import (
    EngineOpt,
    FormatOpt,
    MappingOpt,
    SparkMasterOpt,
    TraceFiles,
    VerboseOpt,
    _ingest,
)
from slacheck.cli.root import app
from slacheck.cli.says import CliSays
from slacheck.cli.terminal import _working, err, out
from slacheck.console import say
from slacheck.errors import UsageError
from slacheck.outputs import check_target
from slacheck.render import jsonout

# --------------------------------------------------------------------------------------------
# Traces

traces_app = typer.Typer(help="Read and inspect trace files.", no_args_is_help=True, cls=_Group)
app.add_typer(traces_app, name="traces")


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
    from slacheck.metering.recorded import derived
    from slacheck.trace.convert import check_new_folder, convert

    check_new_folder(output)  # before the traces are read, not after
    traces = _ingest(paths, trace_format, mapping, engine, spark_master, verbose)
    with _working(say(CliSays.WRITING_PARQUET)):
        done = convert(traces, output, derived(traces))
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
