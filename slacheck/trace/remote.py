"""Trace inputs given as URLs (``s3a://bucket/spans/``, ``hdfs://nn/otel/*.jsonl``,
``file:/data/day=2026-07-01``): read by Spark where they are, never copied to this machine.

What a URL may name: slacheck's canonical Parquet (``traces convert`` writes it, one folder per
day) or OTLP JSON lines (the collector's file exporter), as one file, a folder or a glob
pattern Spark expands. The kind comes from ``--trace-format`` (``canonical`` or ``otlp``), else
from the URL's ending (``.parquet``/``.pq``, ``.jsonl``/``.ndjson``). Each file Spark lists is a
source of its own: its rows, and its SHA-256 computed by Spark next to the data (only the hex
digest comes back), so an evidence list names every file read. A URL needs the Spark engine;
DuckDB reads files on this machine only.

What a URL does not get that a local file does: a line of an OTLP file that is not an export
request cannot go to the Python reader (which says where and what is wrong) — the file is
reported with the number of such lines, to be copied here and read locally to see them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from slacheck.engine import Engine, EngineSession
from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.trace.results import READ_BY_ENGINE, SourceFile

if TYPE_CHECKING:
    import ibis.expr.types as ir

_PARQUET = (".parquet", ".pq")
_JSON_LINES = (".jsonl", ".ndjson")


def kind_of(url: str, fmt: str | None) -> str:
    """``canonical`` or ``otlp``: from ``--trace-format``, else from the URL's ending."""
    if fmt is not None:
        if fmt not in ("canonical", "otlp"):
            raise TraceInputError(
                [
                    Problem(
                        url,
                        f"a URL is read as canonical Parquet or OTLP JSON lines, not as {fmt}",
                        Reason.UNKNOWN_FORMAT,
                        fix="use --trace-format canonical or otlp, or copy the files here",
                    )
                ]
            )
        return fmt
    tail = url.rstrip("/").lower()
    if tail.endswith(_PARQUET):
        return "canonical"
    if tail.endswith(_JSON_LINES):
        return "otlp"
    raise TraceInputError(
        [
            Problem(
                url,
                "cannot tell what the URL holds from its name",
                Reason.UNKNOWN_FORMAT,
                fix="add --trace-format canonical (slacheck's Parquet) or --trace-format otlp "
                "(OTLP JSON lines)",
            )
        ]
    )


def read_urls(
    session: EngineSession, urls: Sequence[str], fmt: str | None
) -> tuple[list[ir.Table], list[SourceFile]]:
    """The canonical spans of every URL (one table per URL kind) and a source per file read."""
    if session.engine is not Engine.SPARK:
        raise TraceInputError(
            [
                Problem(
                    u,
                    "a URL is read by the Spark engine; DuckDB reads files on this machine",
                    Reason.FILE_NOT_FOUND,
                    fix="add --engine spark (and --spark-master), or copy the files here",
                )
                for u in urls
            ]
        )
    problems: list[Problem] = []
    by_kind: dict[str, list[str]] = {}
    for url in urls:
        try:
            by_kind.setdefault(kind_of(url, fmt), []).append(url)
        except TraceInputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise TraceInputError(problems)
    parts: list[ir.Table] = []
    sources: list[SourceFile] = []
    for url in by_kind.get("canonical", []):
        part, found = _canonical(session, url)
        parts.append(part)
        sources.extend(found)
    if "otlp" in by_kind:
        part, found = _otlp(session, by_kind["otlp"])
        if part is not None:
            parts.append(part)
        sources.extend(found)
    return parts, sources


def _canonical(session: EngineSession, url: str) -> tuple[ir.Table, list[SourceFile]]:
    from pyspark.sql import functions as F

    from slacheck.trace.otlp_engine import rows_per_file
    from slacheck.trace.schema import COLUMN_NAMES
    from slacheck.trace.tabular import identity_mapping, project

    spark = session.backend._session
    try:
        df = spark.read.parquet(url)
        columns = set(df.columns)
    except Exception as exc:  # Spark raises its own types; all mean "cannot read this"
        raise TraceInputError([_unreadable(url, exc, "slacheck's canonical Parquet")]) from None
    mapping = identity_mapping("parquet")
    missing = sorted(mapping.source_columns() - columns)
    if missing:
        raise TraceInputError(
            [
                Problem(
                    url,
                    f"not slacheck's canonical Parquet: no column {', '.join(missing)}",
                    Reason.MALFORMED_TRACE,
                    fix="write it with `slacheck traces convert`, or read the files with a "
                    "--mapping on this machine",
                )
            ]
        )
    keep = [c for c in COLUMN_NAMES if c in columns and c not in ("source_file", "source_ref")]
    df = df.select(
        *keep,
        F.col("_metadata.file_path").alias("_file"),
        # the row within its file, as DuckDB numbers a local file's rows
        F.col("_metadata.row_index").alias("file_row_number"),
    )
    view = f"slacheck_url_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(view)
    src = session.backend.table(view)
    spans = session.materialise(project(src, mapping, src["_file"]))
    rows = rows_per_file(spans)
    hashes = _hashes(session, url, "*.parquet" if not url.lower().endswith(_PARQUET) else None)
    # a file with no rows is a source too: it was read
    files = sorted(set(rows) | {f for f in hashes if f.lower().endswith(_PARQUET)})
    return spans, [
        SourceFile(f, "canonical", hashes.get(f, ""), rows.get(f, 0), READ_BY_ENGINE) for f in files
    ]


def _otlp(session: EngineSession, urls: list[str]) -> tuple[ir.Table | None, list[SourceFile]]:
    from slacheck.trace.otlp_engine import read_otlp_urls

    try:
        spans, rows, bad = read_otlp_urls(session, urls)
    except Exception as exc:  # Spark raises its own types; all mean "cannot read this"
        raise TraceInputError([_unreadable(urls[0], exc, "OTLP JSON lines")]) from None
    if bad:
        raise TraceInputError(
            [
                Problem(
                    f,
                    f"{n} {'line is' if n == 1 else 'lines are'} not an OTLP export request "
                    "(a JSON object with `resourceSpans`)",
                    Reason.MALFORMED_TRACE,
                    fix="copy the file here and run `slacheck traces inspect` on it to see "
                    "which lines and why",
                )
                for f, n in sorted(bad.items())
            ]
        )
    hashes: dict[str, str] = {}
    for url in urls:
        hashes |= _hashes(session, url, None)
    return spans, [
        SourceFile(f, "otlp", hashes.get(f, ""), n, READ_BY_ENGINE) for f, n in sorted(rows.items())
    ]


def _hashes(session: EngineSession, url: str, glob: str | None) -> dict[str, str]:
    """Each file's SHA-256 under ``url``, computed by Spark beside the data: only the digests
    come back. ``glob``: the files of a folder to hash (a Parquet folder holds other files)."""
    from pyspark.sql import functions as F

    spark = session.backend._session
    reader = spark.read.format("binaryFile")
    if glob is not None:
        reader = reader.option("pathGlobFilter", glob)
    df = reader.load(url).select("path", F.sha2(F.col("content"), 256).alias("sha256"))
    return {str(r["path"]): str(r["sha256"]) for r in df.collect()}


def _unreadable(url: str, exc: BaseException, what: str) -> Problem:
    detail = (str(exc).splitlines() or [""])[0][:200]
    return Problem(
        url,
        f"Spark cannot read it as {what}: {type(exc).__name__}: {detail}",
        Reason.FILE_NOT_FOUND if "PATH_NOT_FOUND" in str(exc) else Reason.MALFORMED_TRACE,
        fix="check the URL, Spark's access to it (SLACHECK_SPARK_CONF) and its format",
    )


__all__ = ["kind_of", "read_urls"]
