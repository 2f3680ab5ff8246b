"""The options the trace commands share, and reading the traces they name."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from slacheck.cli.helpers import ReportFormat, _sessions
from slacheck.cli.says import CliSays
from slacheck.cli.terminal import _working, err
from slacheck.console import say

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

FormatOpt3 = Annotated[ReportFormat, typer.Option("--format", help="table, json or md.")]
ContractArg = Annotated[Path, typer.Argument(help="Contract YAML file.")]
TracesArg = TraceFiles


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
    if traces.record_refused is not None:  # never silently: the record is not trusted
        said = CliSays.RECORD_REFUSED(folder=str(paths[0]), why=traces.record_refused)
        err.print(say(said, lang), markup=False, highlight=False)
    if traces.id_pass_parts > 1:  # never silently either: a slow path
        said = CliSays.ID_PASS_IN_PARTS(engine=str(config.engine), parts=traces.id_pass_parts)
        err.print(say(said, lang), markup=False, highlight=False)
    return traces
