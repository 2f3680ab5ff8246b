"""The commands that read traces against a contract, or measure them: fields, check, budget."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from slacheck.cli.helpers import (
    EXIT_FINDINGS,
    EXIT_OK,
    Lang,
    ReportFormat,
    _inputs,
    handles_input_errors,
    load_contract_and_period,
)
from slacheck.cli.helptext import _Command
from slacheck.cli.options import (
    ContractArg,
    EngineOpt,
    FormatOpt,
    FormatOpt3,
    MappingOpt,
    SparkMasterOpt,
    TracesArg,
    VerboseOpt,
    _ingest,
)
from slacheck.cli.root import app
from slacheck.cli.says import CliSays
from slacheck.cli.terminal import _working, out
from slacheck.console import safe, say
from slacheck.outputs import check_target, write_output
from slacheck.render import jsonout

# --------------------------------------------------------------------------------------------
# Matcher, evaluator, budget


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

    # before the engine's imports: a bad contract or period is said at once
    c = load_contract_and_period(contract, period)
    from slacheck.console import field_check_tables, metrics_coverage_table
    from slacheck.metering.metrics import coverage_rows
    from slacheck.prepare import prepare_fields
    from slacheck.render.markdown import fields_markdown, metrics_coverage_markdown

    ev = _metrics(metrics, lang.value)
    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
    result = prepare_fields(c, loaded, period=period)
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

    for also in (junit, json_file):
        if also is not None:
            check_target(also, _inputs(contract, traces, mapping))
    # before the engine's imports: a bad contract or period is said at once
    c = load_contract_and_period(contract, period)
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
    from slacheck.budget import analyse
    from slacheck.cli.whatif import parse_what_if
    from slacheck.render.budget import to_markdown

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
