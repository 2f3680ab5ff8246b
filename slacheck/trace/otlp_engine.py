"""Read OTLP JSON lines (the collector's file exporter) in the engine: DuckDB or Spark parses the
lines, unnests resource → scope → span and flattens the attributes through case expressions
generated from the conventions table, so no span passes through Python.

The result is the canonical table ``otlp.read_otlp`` builds for the same file, row for row (the
same ``source_ref``, ``defect`` and ``kind``), so ingestion's set-aside accounting holds.

This module reads and checks the lines (in slices on DuckDB, by split on Spark); the parsed
lines become canonical columns in ``otlp_columns``, from the values ``otlp_values`` reads.

What the engine path reads differently, and why files go to the Python reader instead:

* A file with a line that is not a JSON object with a ``resourceSpans`` list (or ``{}``) is
  read by the Python reader, which reports where and what is wrong; so is a file holding a
  carriage return or a value nested deeper than ``numbers.MAX_JSON_DEPTH``
  (``numbers.bytes_beyond_engine``). Numbers and timestamps are read as ``numbers`` says.
* A key written twice in one object is not detected (DuckDB and Spark keep one of them); a list
  or object of the wrong type below ``resourceSpans`` reads as absent instead of a problem.
* Attribute values are compared as the engine writes them as text: a ``doubleValue`` written
  ``1.0`` or ``1e3`` may read as a different string than Python's ``str(float)`` in a text column.
* Only the first level of an ``arrayValue`` is read (``openai-processing-ms`` style headers);
  a ``kvlistValue`` counts as present but has no value (as in the Python reader, where it is an
  object), and a dotted name is not looked up inside one.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ibis.expr.types as ir

from slacheck.engine import Engine, EngineSession
from slacheck.trace import numbers
from slacheck.trace.otlp_columns import canonical, unnest_spans, with_tasks
from slacheck.trace.urls import is_url

# -- the raw shape, one description for both engines -------------------------------------------

_S = "string"
_SCALAR: dict[str, Any] = {
    "stringValue": _S,
    "boolValue": _S,
    "intValue": _S,
    "doubleValue": _S,
    "bytesValue": _S,
}
#: AnyValue: scalars as the text the engine reads them as; one level of arrays; kvlists present
_ANY: dict[str, Any] = {
    **_SCALAR,
    "arrayValue": {"values": [_SCALAR]},
    "kvlistValue": {"values": [{"key": _S}]},
}
_ATTRS: list[Any] = [{"key": _S, "value": _ANY}]
_SPAN: dict[str, Any] = {
    "traceId": _S,
    "spanId": _S,
    "parentSpanId": _S,
    "name": _S,
    "startTimeUnixNano": _S,
    "endTimeUnixNano": _S,
    "status": {"code": _S, "message": _S},
    "attributes": _ATTRS,
    "events": [{"name": _S, "timeUnixNano": _S, "attributes": _ATTRS}],
}
_SCOPE_SPANS: list[Any] = [{"scope": {"attributes": _ATTRS}, "spans": [_SPAN]}]
#: one line of the file: an ExportTraceServiceRequest
LINE: dict[str, Any] = {
    "resourceSpans": [
        {
            "resource": {"attributes": _ATTRS},
            "scopeSpans": _SCOPE_SPANS,
            "instrumentationLibrarySpans": _SCOPE_SPANS,
        }
    ]
}
#: a line as the collector writes it: parsed once, by ``json_transform`` (which fails the scan if
#: the rest of the line is not JSON); any other line is checked first
_EXPORT_START = r"""regexp_matches(text, '^[ \t]*\{[ \t]*"resourceSpans"[ \t]*:[ \t]*\[')"""
#: the longest line DuckDB reads (one export request); a longer one sends its file to Python
MAX_LINE_BYTES = numbers.MAX_LINE_BYTES


def _duckdb_structure(node: Any) -> str:
    """``LINE`` as a DuckDB ``json_transform`` structure."""
    import json

    def conv(n: Any) -> Any:
        if isinstance(n, dict):
            return {k: conv(v) for k, v in n.items()}
        if isinstance(n, list):
            return [conv(n[0])]
        return "VARCHAR"

    return json.dumps(conv(node), separators=(",", ":"))


def _spark_ddl(node: Any) -> str:
    """``LINE`` as a Spark DDL type."""
    if isinstance(node, dict):
        return "struct<" + ",".join(f"`{k}`:{_spark_ddl(v)}" for k, v in node.items()) + ">"
    if isinstance(node, list):
        return f"array<{_spark_ddl(node[0])}>"
    return "string"


# -- reading the lines --------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineRead:
    """What the engine read: the canonical spans of the files it could read, and the files it
    left to the Python reader (a line that is not an OTLP export request, or no line at all)."""

    spans: ir.Table | None
    rows: dict[str, int]
    to_python: tuple[Path, ...]


def read_otlp_lines(session: EngineSession, paths: Sequence[Path]) -> EngineRead:
    """The canonical table of OTLP JSON-lines ``paths``: a first scan checks every line (and,
    on DuckDB, cuts the files into slices of about ``SLICE_BYTES``), a second parses, unnests
    and flattens them. Memory stays bounded by the slice (DuckDB) or by one line (Spark)."""
    # a file with a bare CR or a value nested too deep is read by Python (``numbers``)
    python_reads = [p for p in paths if numbers.bytes_beyond_engine(p) is not None]
    names = [str(p) for p in paths if p not in python_reads]
    if not names:
        return EngineRead(None, {}, tuple(paths))
    if session.engine is Engine.DUCKDB:
        stats, slices = _duckdb_check(session, names)
    else:
        lines = _spark_lines(session, names)
        stats = _line_stats(lines)
    good = [n for n in names if n in stats and stats[n][1] == 0]
    to_python = tuple(p for p in paths if str(p) not in good)
    if not good:
        return EngineRead(None, {}, to_python)
    if session.engine is Engine.DUCKDB:
        rows_only = _duckdb_parse(session, [s for s in slices if s[0] in good])
    else:
        rows_only = _spark_parse(session, lines, good)
    return EngineRead(*_with_tasks_once(session, rows_only, good), to_python)


def read_otlp_urls(
    session: EngineSession, urls: Sequence[str]
) -> tuple[ir.Table | None, dict[str, int], dict[str, int]]:
    """OTLP JSON lines at ``urls`` (files, folders, glob patterns) read by Spark: the canonical
    spans of the files whose every line is an export request, the spans per file, and the files
    with lines that are not (how many), which a URL cannot hand to the Python reader."""
    lines = _spark_lines(session, list(urls))
    stats = _line_stats(lines)
    bad = {f: b for f, (_, b) in stats.items() if b}
    good = sorted(f for f in stats if f not in bad)
    if not good:
        return None, {}, bad
    spans, rows = _with_tasks_once(session, _spark_parse(session, lines, good), good)
    return spans, rows, bad


def _line_stats(lines: ir.Table) -> dict[str, tuple[int, int]]:
    """Per file (Spark's lines): lines, and lines that are not export requests."""
    per_file = lines.group_by("source_file").aggregate(
        n=lines.count(), bad=(~lines.ok).cast("int64").sum()
    )
    return {str(f): (int(n), int(b or 0)) for f, n, b in _rows(per_file)}


def _spark_parse(session: EngineSession, lines: ir.Table, good: list[str]) -> ir.Table:
    src = lines.filter(lines.source_file.isin(good))
    return session.materialise(canonical(unnest_spans(src), session.engine, session.view))


def _with_tasks_once(
    session: EngineSession, rows_only: ir.Table, good: list[str]
) -> tuple[ir.Table, dict[str, int]]:
    """The parsed rows with the task rule applied, and the spans per file. The rows first,
    then the task rule over them: a self-join on the parse itself would reference it twice
    (and DuckDB would hold all of it in memory)."""
    spans = session.materialise(with_tasks(rows_only))
    session.drop(rows_only)
    return spans, dict.fromkeys(good, 0) | rows_per_file(spans)


def rows_per_file(spans: ir.Table) -> dict[str, int]:
    """Canonical rows per ``source_file`` (files without a row are absent)."""
    counts = spans.group_by("source_file").aggregate(n=spans.count())
    return {str(f): int(n) for f, n in _rows(counts)}


def _rows(t: ir.Table) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in t.to_pyarrow().to_pylist() for r in [r.values()]]


#: DuckDB parses a file's lines in slices of about this many bytes of text: it parses a chunk of
#: lines at once (up to 2,048 of them), and a parsed line takes several times its text's memory
SLICE_BYTES = 16 * 2**20


def _duckdb_file_lines(name: str, *, doc: bool, upto: int | None = None) -> str:
    """DuckDB SQL: one row per non-blank line of ``name`` (a streaming CSV scan with a single
    text column: no delimiter, quote or escape a JSON line can hold unescaped), numbered in file
    order as Python's reader numbers them (blank lines count): ``source_file``, ``line``,
    ``bytes``, ``ok`` (an object with a ``resourceSpans`` list, or ``{}``) and, with ``doc``,
    the line parsed to ``LINE``'s shape. ``upto``: stop reading after that line."""
    structure = _duckdb_structure(LINE).replace("'", "''")
    parsed = (
        f", CASE WHEN {_EXPORT_START} OR json_valid(text) "
        f"THEN json_transform(text, '{structure}') END AS doc"
        if doc
        else ""
    )
    return f"""
        SELECT source_file, line, strlen(text) AS bytes,
               CASE WHEN {_EXPORT_START} THEN true
                    ELSE coalesce(json_valid(text) AND json_type(text) = 'OBJECT'
                                  AND (json_type(text, '$.resourceSpans') = 'ARRAY'
                                       OR json_keys(text) = []), false)
               END AS ok{parsed}
        FROM (
            SELECT {_sql_text(name)} AS source_file, CAST(row_number() OVER () AS BIGINT) AS line,
                   text
            FROM read_csv({_sql_text(name)}, columns = {{'text': 'VARCHAR'}}, delim = chr(1),
                          quote = '', escape = '', header = false, auto_detect = false,
                          strict_mode = false, max_line_size = {MAX_LINE_BYTES},
                          buffer_size = {MAX_LINE_BYTES})
            {f"LIMIT {upto}" if upto is not None else ""}
        )
        WHERE text IS NOT NULL AND trim(text, ' ' || chr(9) || chr(13)) <> ''
    """


def _duckdb_check(
    session: EngineSession, names: list[str]
) -> tuple[dict[str, tuple[int, int]], list[tuple[str, int, int, int]]]:
    """Every line checked, no line parsed into structs: per file (lines, bad lines), and the
    slices ``(file, first line, last line, bytes)`` of about ``SLICE_BYTES`` each."""
    scans = " UNION ALL ".join(_duckdb_file_lines(n, doc=False) for n in names)
    rows = session.backend.raw_sql(
        f"""
        WITH l AS ({scans}),
        c AS (
            SELECT source_file, line, ok, bytes,
                   (sum(bytes) OVER (PARTITION BY source_file ORDER BY line) - bytes)
                       // {SLICE_BYTES} AS slice
            FROM l
        )
        SELECT source_file, slice, count(*), sum(CASE WHEN ok THEN 0 ELSE 1 END),
               min(line), max(line), sum(bytes)
        FROM c GROUP BY source_file, slice ORDER BY source_file, slice
        """
    ).fetchall()
    stats: dict[str, tuple[int, int]] = {}
    slices: list[tuple[str, int, int, int]] = []
    for name, _, n, bad, lo, hi, size in rows:
        total, wrong = stats.get(name, (0, 0))
        stats[name] = (total + int(n), wrong + int(bad))
        slices.append((str(name), int(lo), int(hi), int(size)))
    return stats, slices


#: at most this many slices are parsed in one statement: each scan holds a read buffer of
#: ``MAX_LINE_BYTES``
BATCH_SLICES = 4

#: and at most this many bytes of text: a batch holds as much parsed text as one slice
BATCH_BYTES = SLICE_BYTES


def _batches(slices: list[tuple[str, int, int, int]]) -> list[list[tuple[str, int, int]]]:
    """Consecutive slices grouped into batches of at most ``BATCH_BYTES`` and ``BATCH_SLICES``
    slices: a folder of small files is parsed in a quarter of the statements."""
    batches: list[list[tuple[str, int, int]]] = []
    size = 0
    for name, lo, hi, nbytes in slices:
        if not batches or size + nbytes > BATCH_BYTES or len(batches[-1]) >= BATCH_SLICES:
            batches.append([])
            size = 0
        batches[-1].append((name, lo, hi))
        size += nbytes
    return batches


def _duckdb_parse(session: EngineSession, slices: list[tuple[str, int, int, int]]) -> ir.Table:
    """The canonical rows (before the task rule) of every slice, parsed a batch of slices at a
    time into one table: the query is compiled once, over a view each batch redefines."""
    con = session.backend
    view = f"slacheck_otlp_slice_{uuid.uuid4().hex}"

    def define(batch: list[tuple[str, int, int]]) -> None:
        parts = " UNION ALL ".join(
            f"SELECT * FROM ({_duckdb_file_lines(name, doc=True, upto=hi)}) WHERE line >= {lo}"
            for name, lo, hi in batch
        )
        con.raw_sql(f"CREATE OR REPLACE TEMP VIEW {view} AS {parts}")

    batches = _batches(slices)
    try:
        define(batches[0])
        # a view, not ``con.sql``: Ibis reads a query's schema through a call DuckDB deprecates
        sql = con.compile(canonical(unnest_spans(con.table(view)), Engine.DUCKDB, session.view))
        name = session.new_table_name()
        con.raw_sql(f'CREATE TEMP TABLE "{name}" AS {sql}')
        table = session.adopt(name)
        for batch in batches[1:]:
            define(batch)
            con.raw_sql(f'INSERT INTO "{name}" {sql}')
    finally:
        con.raw_sql(f"DROP VIEW IF EXISTS {view}")
    return table


def _spark_lines(session: EngineSession, names: list[str]) -> ir.Table:
    """One row per non-blank line: ``source_file``, ``line`` (1-based, blank lines counted as
    Python's reader counts them), ``ok`` (an object with a ``resourceSpans`` list, or ``{}``)
    and ``doc`` (the line parsed to ``LINE``'s shape). Spark's text reader reads line by line,
    a file in splits; a line's number is its split's offset (the lines of the splits before it)
    plus its place in the split, so no line is moved between executors to be numbered."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    con = session.backend
    spark = con._session
    # a local file is named as it was given; a URL's files by the paths Spark lists. A literal
    # map, not a DataFrame of Python rows: that needs a Python worker on every executor, of the
    # driver's Python version, which a cluster's executors may not have
    uris = {Path(n).resolve().as_uri(): n for n in names if not is_url(n)}
    pairs = [*uris.items(), *((u.replace("file:///", "file:/", 1), n) for u, n in uris.items())]
    named = F.col("uri")
    if pairs:
        lookup = F.create_map(*[F.lit(x) for pair in pairs for x in pair])
        named = F.coalesce(lookup[F.col("uri")], F.col("uri"))
    read = [n if is_url(n) else str(Path(n).resolve()) for n in names]
    # lines end at \n only, as ``numbers`` says (Hadoop's reader also ends one at a bare CR)
    raw = spark.read.text(read, lineSep="\n").select(
        F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("id"),
        F.col("value").alias("text"),
    )
    splits = raw.groupBy("uri", "block").agg(F.min("id").alias("first"), F.count("*").alias("n"))
    before = Window.partitionBy("uri").orderBy("block").rowsBetween(Window.unboundedPreceding, -1)
    splits = splits.select(
        "uri", "block", "first", F.coalesce(F.sum("n").over(before), F.lit(0)).alias("offset")
    )
    numbered = raw.join(F.broadcast(splits), ["uri", "block"]).where(~F.col("text").rlike(r"^\s*$"))
    doc = F.from_json(F.col("text"), _spark_ddl(LINE))
    head = F.get_json_object(F.col("text"), "$.resourceSpans")
    ok = (
        F.get_json_object(F.col("text"), "$").isNotNull()
        & F.trim(F.col("text")).startswith("{")
        & (F.trim(head).startswith("[") | F.col("text").rlike(r"^\s*\{\s*\}\s*$"))
        & doc.isNotNull()
    )
    df = numbered.select(
        named.alias("source_file"),
        (F.col("offset") + F.col("id") - F.col("first") + 1).cast("bigint").alias("line"),
        F.coalesce(ok, F.lit(False)).alias("ok"),
        doc.alias("doc"),
    )
    view = f"slacheck_otlp_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(view)
    return con.table(view)


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
