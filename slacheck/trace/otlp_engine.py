"""Read OTLP JSON lines (the collector's file exporter) in the engine: DuckDB or Spark parses the
lines, unnests resource → scope → span and flattens the attributes through case expressions
generated from the conventions table, so no span passes through Python.

The result is the canonical table ``otlp.read_otlp`` builds for the same file, row for row (the
same ``source_ref``, ``defect`` and ``kind``), so ingestion's set-aside accounting holds.

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

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from slacheck.engine import Engine, EngineSession
from slacheck.trace import numbers
from slacheck.trace.conventions import DERIVED_PROVIDER, FieldRule, KindRule, table
from slacheck.trace.normalise import host_expr
from slacheck.trace.records import FIRST_TOKEN_END, STREAM_LOG_END, USAGE_SPELLINGS
from slacheck.trace.schema import BY_NAME, COLUMNS, Kind, SetAside, Status
from slacheck.trace.status import classify_expr
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
_SCOPE_KEYS = ("scopeSpans", "instrumentationLibrarySpans")
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
    return session.materialise(canonical(_spans(src), session.engine, session.view))


def _with_tasks_once(
    session: EngineSession, rows_only: ir.Table, good: list[str]
) -> tuple[ir.Table, dict[str, int]]:
    """The parsed rows with the task rule applied, and the spans per file. The rows first,
    then the task rule over them: a self-join on the parse itself would reference it twice
    (and DuckDB would hold all of it in memory)."""
    spans = session.materialise(_with_tasks(rows_only))
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


def _batches(slices: list[tuple[str, int, int, int]]) -> list[list[tuple[str, int, int]]]:
    """Consecutive slices grouped into batches of at most ``SLICE_BYTES`` and ``BATCH_SLICES``
    slices: a folder of small files is parsed in a quarter of the statements."""
    batches: list[list[tuple[str, int, int]]] = []
    size = 0
    for name, lo, hi, nbytes in slices:
        if not batches or size + nbytes > SLICE_BYTES or len(batches[-1]) >= BATCH_SLICES:
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
        sql = con.compile(canonical(_spans(con.table(view)), Engine.DUCKDB, session.view))
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


# -- unnesting ----------------------------------------------------------------------------------


def _spans(lines: ir.Table) -> ir.Table:
    """One row per span: its file, reference, raw fields and its attributes (resource, scope
    and span, in that order, so the span's own win as in the Python reader)."""
    lines = lines.filter(lines.ok)

    # each level's index is written into its list before it is unnested, and every unnest is in
    # a select list: an unnest with an offset compiles to a lateral join, which DuckDB runs by
    # holding the whole left side (every parsed line) in memory
    def scopes(x: ir.StructValue) -> ir.ArrayValue:
        """Both scope lists of a resource in one, each entry tagged with its key and index."""
        listed = [
            x[key].map(
                lambda y, j, key=key: ibis.struct(
                    {
                        "scope_key": ibis.literal(key),
                        "j": j.cast("int64"),
                        "scope": y.scope.attributes,
                        "spans": y.spans,
                    }
                )
            )
            for key in _SCOPE_KEYS
        ]
        empty = ibis.literal([], type=listed[0].type())
        return listed[0].fill_null(empty).concat(listed[1].fill_null(empty))

    rs = lines.doc.resourceSpans.map(
        lambda x, i: ibis.struct(
            {"i": i.cast("int64"), "res": x.resource.attributes, "ss": scopes(x)}
        )
    )
    r = lines.select("source_file", "line", rs=rs.unnest())
    s = r.select("source_file", "line", i=r.rs.i, res=r.rs.res, ss=r.rs.ss.unnest())
    sp = s.ss.spans.map(lambda z, k: ibis.struct({"k": k.cast("int64"), "span": z}))
    s = s.select(
        "source_file",
        "line",
        "i",
        "res",
        j=s.ss.j,
        scope_key=s.ss.scope_key,
        scope=s.ss.scope,
        sp=sp.unnest(),
    )
    s = s.mutate(k=s.sp.k, sp=s.sp.span)
    ref = (
        ibis.literal("line ")
        + s.line.cast("string")
        + ": resourceSpans["
        + s.i.cast("string")
        + "]."
        + s.scope_key
        + "["
        + s.j.cast("string")
        + "].spans["
        + s.k.cast("string")
        + "]"
    )
    empty = ibis.literal([], type=dt.Array(s.res.type().value_type))
    attrs = s.res.fill_null(empty).concat(
        s.scope.fill_null(empty), s.sp.attributes.fill_null(empty)
    )
    exception_type, exception_message = _exception_event(s.sp.events)
    return s.select(
        source_file=s.source_file,
        source_ref=ref,
        trace_id=s.sp.traceId,
        span_id=s.sp.spanId,
        parent_id=s.sp.parentSpanId,
        name=s.sp["name"],
        start=s.sp.startTimeUnixNano,
        end=s.sp.endTimeUnixNano,
        code=s.sp.status.code,
        message=s.sp.status.message,
        exception_type=exception_type,
        exception_message=exception_message,
        attrs=attrs,
        events=s.sp.events,
    )


def _exception_event(events: ir.ArrayValue) -> tuple[ir.StringValue, ir.StringValue]:
    """``otlp.exception_event`` in the engine: the type and message of the span's last
    ``exception`` event, null when not recorded."""
    exc = events.filter(lambda e: e["name"] == "exception")
    n = exc.length().fill_null(0)
    last = ibis.ifelse(n > 0, exc[n - 1], ibis.null(exc.type().value_type))

    def attribute(key: str) -> ir.StringValue:
        found = last.attributes.filter(lambda a: a.key == key)
        m = found.length().fill_null(0)
        value = ibis.ifelse(
            m > 0, found[m - 1].value, ibis.null(found.type().value_type.fields["value"])
        )
        return _scalar_text(value)  # as written (the Python reader's as_text)

    return attribute("exception.type"), attribute("exception.message")


# -- values -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Value:
    """An attribute's value as the Python reader would see it: which variant it is, and its
    text when it is a scalar."""

    present: ir.BooleanValue
    text: ir.StringValue  # null unless a scalar (string, bool, int, double, bytes)
    is_array: ir.BooleanValue
    first: ir.StringValue  # the array's first element as text
    array_empty: ir.BooleanValue
    variant: ir.StringValue  # "string", "bool", "int", "double", "array", "kvlist", "bytes"


def _scalar_text(v: ir.StructValue) -> ir.StringValue:
    return ibis.coalesce(v.stringValue, v.boolValue, v.intValue, v.doubleValue, v.bytesValue)


def _json_string(text: ir.StringValue, engine: Engine) -> ir.StringValue:
    """The string a JSON-encoded string holds; null when ``text`` is not JSON."""
    return _json_get(text, [], engine)


def _json_get(text: ir.StringValue, path: list[str], engine: Engine) -> ir.StringValue:
    """The value at ``path`` (keys) of the JSON in ``text``, as text (a string unquoted, a
    number as written, an object as JSON); null when absent, JSON null or not JSON."""
    if engine is Engine.DUCKDB:
        where = "$" + "".join('."' + p.replace('"', '\\"') + '"' for p in path)
        return ibis.ifelse(
            _JSON_VALID(text).fill_null(False),
            _JSON_EXTRACT_STRING(text, where),
            ibis.null(dt.string),
        )
    where = "$" + "".join("['" + p.replace("'", "\\'") + "']" for p in path)
    return _GET_JSON_OBJECT(text, where)


def _normalised(rule: FieldRule, v: _Value, engine: Engine) -> tuple[_Value, ir.BooleanValue]:
    """``conventions.normalised``: the value after the rule's normaliser, and whether the
    source counts as present (a normaliser that finds nothing makes it absent)."""
    yes: ir.BooleanValue = ibis.literal(True)
    if rule.normalise is None:
        return v, yes
    conv = table()
    if rule.normalise == "host":
        host = host_expr(v.text, conv.placeholders)
        return dataclasses.replace(v, text=host), host.notnull()
    if rule.normalise == "provider":
        framework = v.text.notnull() & v.text.lower().isin(list(conv.frameworks))
        return v, ~framework.fill_null(False)
    # usage: an object in a JSON string (a kvlistValue is not read by the engine)
    obj = ibis.ifelse(
        (v.variant == "string").fill_null(False) & v.text.startswith("{").fill_null(False),
        v.text,
        ibis.null(dt.string),
    )
    ats: list[ir.StringValue] = []
    for path in USAGE_SPELLINGS[rule.field]:
        ats.append(_json_get(obj, [path], engine))  # a flat key first, as records.lookup
        if "." in path:
            ats.append(_json_get(obj, path.split("."), engine))
    count = ibis.coalesce(*ats)
    found = count.notnull()
    return dataclasses.replace(v, text=count, is_array=ibis.literal(False)), found


def _value(v: ir.StructValue, engine: Engine) -> _Value:
    # the first key present wins, in the Python reader's order
    variant = ibis.cases(
        (v.stringValue.notnull(), "string"),
        (v.boolValue.notnull(), "bool"),
        (v.intValue.notnull(), "int"),
        (v.doubleValue.notnull(), "double"),
        (v.arrayValue.notnull(), "array"),
        (v.kvlistValue.notnull(), "kvlist"),
        (v.bytesValue.notnull(), "bytes"),
        else_=ibis.null(dt.string),
    )
    values = v.arrayValue["values"]
    is_array = (variant == "array").fill_null(False)
    text = _scalar_text(v)
    # a JSON-encoded string ("\"chat\"") decoded once, as normalise.unquoted does
    quoted = (variant == "string") & (text.length() > 1) & text.startswith('"') & text.endswith('"')
    decoded = _json_string(text, engine)
    text = ibis.ifelse(quoted.fill_null(False), ibis.coalesce(decoded, text), text)
    return _Value(
        present=variant.notnull(),
        text=ibis.ifelse(variant.isin(["array", "kvlist"]), ibis.null(dt.string), text),
        is_array=is_array,
        first=_scalar_text(values[0]),
        array_empty=values.fill_null(ibis.literal([], type=values.type())).length() == 0,
        variant=variant,
    )


def _strip(text: ir.StringValue) -> ir.StringValue:
    """Leading and trailing whitespace removed. Not Ibis's ``strip``: on Spark it trims the
    letters ``v`` and ``f`` (its ``\\v\\f`` escapes are not Spark SQL's), so "false" → "alse"."""
    return text.re_replace(r"^\s+|\s+$", "")


# -- numbers and timestamps, as ``numbers`` specifies them ------------------------------------

_INT64 = 2.0**63
#: JSON whitespace as a regular-expression class body (``numbers.JSON_WS``)
_WS = numbers.JSON_WS.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


@dataclass(frozen=True)
class _Number:
    """A scalar's text read as ``numbers.number`` reads it: which spelling, and its value."""

    text: ir.StringValue  # JSON whitespace stripped
    is_int: ir.BooleanValue  # ``numbers.INTEGER``
    is_dec: ir.BooleanValue  # ``numbers.DECIMAL`` and not an integer
    exact: ir.IntegerValue  # an ``INTEGER`` within int64, else null
    double: ir.FloatingValue  # a ``DECIMAL`` as float64, else null


def _number(raw: ir.StringValue) -> _Number:
    text = raw.re_replace(f"^[{_WS}]+|[{_WS}]+$", "")
    is_int = text.re_search(f"^{numbers.INTEGER}$").fill_null(False)
    is_dec = ~is_int & text.re_search(f"^{numbers.DECIMAL}$").fill_null(False)
    exact = ibis.ifelse(is_int, text.try_cast("int64"), ibis.null(dt.int64))
    double = ibis.ifelse(is_dec, text.try_cast("float64"), ibis.null(dt.float64))
    return _Number(text, is_int, is_dec, exact, double)


def _integral(f: ir.FloatingValue) -> ir.BooleanValue:
    # not ``floor() == f``: Ibis's floor is an integer, which a float beyond int64 overflows
    return f.notnull() & ~f.isnan() & ~f.isinf() & ((f % 1.0) == 0)


def _to_int64(f: ir.FloatingValue, ok: ir.BooleanValue) -> ir.IntegerValue:
    """``f`` as int64 where ``ok`` (the caller's range check), else null: the engine casts
    every row, so the others are cast from 0."""
    return ibis.ifelse(ok, ibis.ifelse(ok, f, 0.0).cast("int64"), ibis.null(dt.int64))


def _as_int(text: ir.StringValue) -> ir.IntegerValue:
    """``records.as_int`` (``numbers.count``) on a scalar's text: an integer within int64, an
    integral float within int64; null otherwise (the caller adds the defect)."""
    n = _number(text)
    fits = _integral(n.double) & (n.double >= -_INT64) & (n.double < _INT64)
    return ibis.coalesce(n.exact, _to_int64(n.double, fits.fill_null(False)))


def _as_float(text: ir.StringValue) -> ir.FloatingValue:
    """``records.as_float``: a number of either spelling as float64, null otherwise."""
    n = _number(text)
    spelled = n.is_int | n.is_dec | n.text.isin(list(numbers.NOT_FINITE))
    return ibis.ifelse(spelled, n.text.try_cast("float64"), ibis.null(dt.float64))


def _nanos_parts(
    raw: ir.StringValue,
) -> tuple[_Number, ir.IntegerValue, ir.BooleanValue, ir.BooleanValue]:
    """``numbers.nanos`` on text: (its number, µs of a number of nanoseconds 0 ≤ n ≤ 2⁶⁴−1 else
    null, whether it is 0, whether it is a number at all). µs = n // 1000 exactly: from the
    digits of an integer, and from a float beyond int64 in two steps."""
    n = _number(raw)
    digits = n.text.re_replace("^[+-]?0*", "")
    size = digits.length()
    fits = (size < 20) | ((size == 20) & (digits <= str(numbers.UINT64_MAX)))
    int_zero = n.is_int & (size == 0)
    int_ok = n.is_int & ~n.text.startswith("-") & fits
    int_us = ibis.ifelse(size > 3, digits.substr(0, size - 3), "0").try_cast("int64")
    f = n.double
    dec_ok = _integral(f) & (f >= 0) & (f < 2.0**64)
    dec_zero = dec_ok & (f == 0)
    # (2⁶³ + x) // 1000 = 2⁶³ // 1000 + (x + 2⁶³ % 1000) // 1000, each part exact in int64
    low = (dec_ok & (f < _INT64)).fill_null(False)
    above = (dec_ok & (f >= _INT64)).fill_null(False)
    high = ibis.literal(2**63 // 1000) + (_to_int64(f - _INT64, above) + 2**63 % 1000) // 1000
    dec_us = ibis.ifelse(low, _to_int64(f, low) // 1000, high)
    us = ibis.cases((int_ok, int_us), (dec_ok, dec_us), else_=ibis.null(dt.int64))
    return n, us, (int_zero | dec_zero), (n.is_int | n.is_dec)


def _as_bool(text: ir.StringValue) -> ir.BooleanValue:
    low = _strip(text).lower()
    return ibis.cases((low == "true", True), (low == "false", False), else_=ibis.null(dt.boolean))


@dataclass(frozen=True)
class _Read:
    """One field rule applied: its converted value (null when unparseable) and whether it
    could not be converted."""

    value: ir.Value
    bad: ir.BooleanValue


_TO_MS = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 0.000001}


def _convert(rule: FieldRule, v: _Value) -> _Read:
    """``conventions._converter`` in the engine; ``bad`` where Python raises ``Unparseable``."""
    column = BY_NAME[rule.field]
    typ = column.type
    if rule.unit == "timestamp":  # the first token's arrival; checked with the timestamps
        return _Read(v.text, ibis.literal(False))
    import pyarrow as pa

    if pa.types.is_floating(typ):
        text = ibis.ifelse(v.is_array, v.first, v.text)
        num = _as_float(text)
        value = num * _TO_MS[rule.unit or "ms"]
        return _Read(value, num.isnull())
    if pa.types.is_integer(typ):
        num = _as_int(v.text)
        return _Read(num + rule.offset if rule.offset else num, num.isnull())
    if pa.types.is_boolean(typ):
        flag = _as_bool(v.text)
        return _Read(flag, flag.isnull())
    return _Read(v.text, ibis.literal(False))


# -- the canonical table ------------------------------------------------------------------------


def _keys(kinds: Sequence[KindRule], fields: Sequence[FieldRule]) -> list[str]:
    logs = [a for r in table().stream_logs for a in (r.attribute, r.duration)]
    named = [r.attribute for r in kinds] + [r.attribute for r in fields if r.attribute] + logs
    return list(dict.fromkeys(named))


def canonical(
    s: ir.Table, engine: Engine, barrier: Callable[[ir.Table], ir.Table] = lambda t: t
) -> ir.Table:
    """The canonical columns of unnested spans, as ``otlp._add_span`` and ``SpanRows`` make
    them, driven by the ``otlp`` rows of the conventions table; ``_with_tasks`` then marks the
    tasks."""
    conv = table()
    kinds, fields = conv.rows_for("otlp")
    keys = _keys(kinds, fields)
    events = list(dict.fromkeys(r.event for r in fields if r.event is not None))
    col = {k: f"_a{i}" for i, k in enumerate(keys)}
    ecol = {e: f"_e{i}" for i, e in enumerate(events)}
    # the last attribute of each name (span over scope over resource, later over earlier), and
    # the first event of each name
    s = barrier(s)
    found = barrier(
        s.mutate(
            **{col[k]: s.attrs.filter(lambda a, k=k: a.key == k) for k in keys},
            **{ecol[e]: s.events.filter(lambda x, e=e: x["name"] == e) for e in events},
        )
    )
    found = found.mutate(
        **{
            col[k]: ibis.ifelse(
                found[col[k]].length() > 0,
                found[col[k]][found[col[k]].length() - 1].value,
                ibis.null(found[col[k]].type().value_type.fields["value"]),
            )
            for k in keys
        },
        **{
            ecol[e]: ibis.ifelse(
                found[ecol[e]].length() > 0,
                found[ecol[e]][0].timeUnixNano,
                ibis.null(dt.string),
            )
            for e in events
        },
    ).drop("attrs", "events")
    # each stage is computed once: ``barrier`` makes it a view, so the next stage refers to its
    # columns instead of repeating its expressions at every use (a query of megabytes otherwise)
    found = barrier(found)
    parts: dict[str, ir.Value] = {}
    for k in keys:
        v = _value(found[col[k]], engine)
        parts |= {f"{col[k]}_{part}": getattr(v, part) for part in _Value.__dataclass_fields__}
    flat = barrier(found.mutate(**parts).drop(*col.values()))
    values = {
        k: _Value(**{part: flat[f"{col[k]}_{part}"] for part in _Value.__dataclass_fields__})
        for k in keys
    }
    found = flat

    out: dict[str, ir.Value] = {}
    defects: list[ir.StringValue] = []
    ft_us: ir.IntegerValue = ibis.null(dt.int64)
    ft_bad: ir.BooleanValue = ibis.literal(False)
    by_field: dict[str, list[FieldRule]] = {}
    for rule in fields:
        by_field.setdefault(rule.field, []).append(rule)
    # each rule's value after its normaliser, and whether its source counts as present
    reads: dict[int, _Read] = {}
    usable: dict[int, ir.BooleanValue] = {}
    stamps: dict[int, tuple[ir.IntegerValue, ir.BooleanValue]] = {}
    # the normalised values are a stage of their own (one column each), so the conversions
    # below refer to them instead of repeating the JSON and host expressions
    normal: dict[str, ir.Value] = {}
    for i, rule in enumerate(fields):
        if rule.normalise is not None:
            v, ok = _normalised(rule, values[rule.attribute], engine)
            normal |= {f"_n{i}_text": v.text, f"_n{i}_ok": v.present & ok}
    if normal:
        found = barrier(found.mutate(**normal))
        values = {
            k: _Value(**{part: found[f"{col[k]}_{part}"] for part in _Value.__dataclass_fields__})
            for k in keys
        }
    for i, rule in enumerate(fields):
        if rule.event is not None:
            raw = found[ecol[rule.event]]
            us, bad = _nanos_us(raw, engine)
            text = _strip(raw)
            unset = raw.isnull() | (text == "") | text.re_search(r"^0+$").fill_null(False)
            stamps[id(rule)] = (us, bad)
            usable[id(rule)] = ~unset
            reads[id(rule)] = _Read(ibis.null(dt.string), ibis.literal(False))
            continue
        v = values[rule.attribute]
        if rule.normalise is not None:
            usable[id(rule)] = found[f"_n{i}_ok"]
            v = dataclasses.replace(v, text=found[f"_n{i}_text"])
            if rule.normalise == "usage":
                v = dataclasses.replace(v, is_array=ibis.literal(False))
        else:
            usable[id(rule)] = v.present
        reads[id(rule)] = _convert(rule, v)
        if rule.unit == "timestamp":
            stamps[id(rule)] = _first_token_us(v.text, v.variant, engine)
    # each field: the first rule whose source is present; defects in the order of the rules
    winners: dict[int, ir.BooleanValue] = {}
    for rules in by_field.values():
        earlier: ir.BooleanValue = ibis.literal(False)
        for rule in rules:
            winners[id(rule)] = usable[id(rule)] & ~earlier
            earlier = earlier | usable[id(rule)]
    sources: dict[str, ir.StringValue] = {}
    for rule in fields:
        read = reads[id(rule)]
        wins = winners[id(rule)]
        source = sources.get(rule.field, ibis.null(dt.string))
        sources[rule.field] = ibis.ifelse(wins, ibis.literal(rule.source), source)
        defects.append(
            ibis.ifelse(
                wins & read.bad,
                ibis.literal(f"{SetAside.UNPARSEABLE_NUMBER}:{rule.field}"),
                ibis.null(dt.string),
            )
        )
        if rule.unit == "timestamp":
            us, bad = stamps[id(rule)]
            ft_us = ibis.ifelse(wins, us, ft_us)
            ft_bad = ibis.ifelse(wins, bad, ft_bad)
            continue
        cases = out.setdefault(rule.field, ibis.null(_ibis_type(rule.field)))
        out[rule.field] = ibis.ifelse(wins, read.value.cast(_ibis_type(rule.field)), cases)

    kind = ibis.literal(str(Kind.OTHER))
    operation = ibis.null(dt.string)
    kind_source = ibis.null(dt.string)
    for krule in reversed(kinds):
        v = values[krule.attribute]
        hit = v.present
        if krule.value is not None:
            hit = hit & (v.text.lower() == krule.value.lower()).fill_null(False)
        if krule.name_suffix is not None:
            suffix = krule.name_suffix.lower()
            hit = hit & found["name"].lower().endswith(suffix).fill_null(False)
        kind = ibis.ifelse(hit, ibis.literal(str(krule.kind)), kind)
        operation = ibis.ifelse(hit, ibis.literal(krule.operation, type=dt.string), operation)
        kind_source = ibis.ifelse(hit, ibis.literal(krule.attribute), kind_source)
    stream_log: ir.BooleanValue = ibis.literal(False)
    for slog in conv.stream_logs:
        v = values[slog.attribute]
        stream_log = stream_log | (
            v.present
            & (v.text.lower() == slog.value.lower()).fill_null(False)
            & found["name"].startswith(slog.name_prefix).fill_null(False)
            & values[slog.duration].present
        )
    kind = ibis.ifelse(stream_log, ibis.literal(str(Kind.OTHER)), kind)
    operation = ibis.ifelse(stream_log, ibis.null(dt.string), operation)
    sources["kind"] = ibis.ifelse(stream_log, ibis.null(dt.string), kind_source)
    out["operation"] = ibis.coalesce(out.get("operation", ibis.null(dt.string)), operation)

    # a call whose sources name no provider: the vendor its endpoint host names (derived)
    if conv.vendor_hosts and "endpoint" in out:
        endpoint = out["endpoint"]
        vendor = ibis.cases(
            *(
                (endpoint.re_search(h.regex).fill_null(False), h.provider)
                for h in conv.vendor_hosts
            ),
            else_=ibis.null(dt.string),
        )
        provider = out.get("provider", ibis.null(dt.string))
        derived = provider.isnull() & vendor.notnull()
        out["provider"] = ibis.coalesce(provider, vendor)
        sources["provider"] = ibis.ifelse(
            derived, ibis.literal(DERIVED_PROVIDER), sources.get("provider", ibis.null(dt.string))
        )

    t = found
    start, start_bad = _nanos_us(t.start, engine)
    end, end_bad = _nanos_us(t.end, engine)
    defects += [
        _defect(start_bad, f"{SetAside.UNPARSEABLE_TIMESTAMP}:start_us"),
        _defect(end_bad, f"{SetAside.UNPARSEABLE_TIMESTAMP}:end_us"),
        _defect(ft_bad, f"{SetAside.UNPARSEABLE_TIMESTAMP}:ttft_ms"),
    ]
    # a span that ended before its first token arrived lasted at least until that token
    late = (ft_us > end).fill_null(False)
    end = ibis.ifelse(late, ft_us, end)
    end_source = ibis.ifelse(late, ibis.literal(FIRST_TOKEN_END), ibis.null(dt.string))
    from_first = (ft_us.cast("float64") - start.cast("float64")) / 1000.0
    out["ttft_ms"] = ibis.coalesce(from_first, out.get("ttft_ms", ibis.null(dt.float64)))

    failed = _strip(t.code).isin(["2", "STATUS_CODE_ERROR"]).fill_null(False)
    error_type = out.get("error_type", ibis.null(dt.string))
    status, status_source = _status(
        failed, error_type, out.get("http_status"), t.message, t.exception_type, t.exception_message
    )
    derived = ibis.coalesce(t.exception_type.nullif(""), _error_class(t.message))
    out["error_type"] = ibis.ifelse(
        error_type.isnull() & (status != str(Status.OK)), derived, error_type
    )
    out["status"] = status
    out["status_source"] = status_source
    out["kind"] = kind
    out["task_id"] = _otlp_id(t.trace_id, 16, engine)
    out["span_id"] = _otlp_id(t.span_id, 8, engine)
    out["parent_span_id"] = _otlp_id(t.parent_id, 8, engine)
    out["name"] = t.name
    out["start_us"] = start
    out["end_us"] = end
    out["duration_ms"] = (end.cast("float64") - start.cast("float64")) / 1000.0
    out["source_file"] = t.source_file
    out["source_ref"] = t.source_ref
    joined = ibis.literal(";").join(defects)
    out["defect"] = ibis.ifelse(joined == "", ibis.null(dt.string), joined)
    # the evidence in two parts, the columns before and after end_us: ``_complete_streams``
    # puts a call's end between them when a stream log ends it
    names = [c.name for c in COLUMNS]
    halves = (names[: names.index("end_us")], names[names.index("end_us") + 1 :])
    out["evidence"], tail = (_pairs(sources, half) for half in halves)
    return t.select(
        **{
            c.name: out.get(c.name, ibis.null(_ibis_type(c.name))).cast(_ibis_type(c.name))
            for c in COLUMNS
        },
        _stream_log=stream_log,
        _request_model=out.get("request_model", ibis.null(dt.string)),
        _evidence_tail=tail,
        _end_source=end_source,
    )


def _pairs(sources: dict[str, ir.StringValue], names: Sequence[str]) -> ir.StringValue:
    """``records.evidence_text`` of the ``names`` among ``sources``: null when none."""
    pairs = [
        ibis.ifelse(sources[n].notnull(), n + "=" + sources[n], ibis.null(dt.string))
        for n in names
        if n in sources
    ]
    if not pairs:
        return ibis.null(dt.string)
    joined = ibis.literal(";").join(pairs)
    return ibis.ifelse(joined == "", ibis.null(dt.string), joined)


def _complete_streams(t: ir.Table) -> ir.Table:
    """``records._complete_streams`` in the engine: each stream log ends the model call of its
    task that ended last at or before the log's time (same requested model where both name
    one; ties by the larger span id). The call's ``end_us`` becomes the log's time, its
    duration is recomputed and its evidence says ``end_us=stream_log``."""
    logs = t.filter(t._stream_log & t.start_us.notnull() & t.task_id.notnull()).select(
        _lf=t.source_file, _lt=t.task_id, _lid=t.source_ref, _lus=t.start_us, _lm=t._request_model
    )
    calls = t.filter((t.kind == str(Kind.LLM)) & ~t._stream_log & t.end_us.notnull()).select(
        _cf=t.source_file,
        _ct=t.task_id,
        _cid=t.source_ref,
        _cend=t.end_us,
        _cspan=t.span_id.fill_null(""),
        _cm=t._request_model,
    )
    pairs = logs.join(
        calls,
        [
            logs._lf == calls._cf,
            logs._lt == calls._ct,
            calls._cend <= logs._lus,
            logs._lm.isnull() | calls._cm.isnull() | (logs._lm == calls._cm),
        ],
    )
    rank = ibis.row_number().over(
        group_by=[pairs._lf, pairs._lid], order_by=[ibis.desc(pairs._cend), ibis.desc(pairs._cspan)]
    )
    pairs = pairs.mutate(_rank=rank)
    chosen = pairs.filter(pairs._rank == 0)
    ends = chosen.group_by(["_cf", "_cid"]).aggregate(_new_end=chosen._lus.max())
    j = t.left_join(ends, [t.source_file == ends._cf, t.source_ref == ends._cid])
    done = j._new_end.notnull()
    end = ibis.coalesce(j._new_end, j.end_us)
    mark = ibis.ifelse(done, ibis.literal("end_us=" + STREAM_LOG_END), "end_us=" + j._end_source)
    joined = ibis.literal(";").join([j.evidence, mark, j._evidence_tail])
    evidence = ibis.ifelse(joined == "", ibis.null(dt.string), joined)
    return j.select(
        *[
            end.name("end_us")
            if c.name == "end_us"
            else ibis.ifelse(
                done, (end.cast("float64") - j.start_us.cast("float64")) / 1000.0, j.duration_ms
            ).name("duration_ms")
            if c.name == "duration_ms"
            else evidence.name("evidence")
            if c.name == "evidence"
            else j[c.name]
            for c in COLUMNS
        ]
    )


def _ibis_type(name: str) -> dt.DataType:
    return ibis.dtype(BY_NAME[name].type)


def _defect(flag: ir.BooleanValue, text: str) -> ir.StringValue:
    return ibis.ifelse(flag.fill_null(False), ibis.literal(text), ibis.null(dt.string))


def _nanos_us(raw: ir.StringValue, engine: Engine) -> tuple[ir.IntegerValue, ir.BooleanValue]:
    """``*UnixNano`` text → (µs, unparseable) as ``numbers.nanos`` and ``SpanRows`` read it:
    a number is nanoseconds (0 means unset), blank is unset, other text is ISO-8601."""
    n, us, zero, numeric = _nanos_parts(raw)
    blank = raw.isnull() | (n.text == "")
    value = ibis.cases(
        (blank | zero, ibis.null(dt.int64)),
        (numeric, us),
        else_=_iso_us(n.text, engine),
    )
    bad = ~blank & ~zero & value.isnull()
    return value, bad


def _first_token_us(
    text: ir.StringValue | None, variant: ir.StringValue | None, engine: Engine
) -> tuple[ir.IntegerValue, ir.BooleanValue]:
    """A ``timestamp`` rule's value → (µs, unparseable): an ``intValue`` is nanoseconds, a
    string ISO-8601 (a JSON-encoded string is unwrapped first); anything else unparseable."""
    if text is None or variant is None:
        return ibis.null(dt.int64), ibis.literal(False)
    quoted = (text.length() > 1) & text.startswith('"') & text.endswith('"')
    unq = ibis.ifelse(quoted, text.substr(1, text.length() - 2), text)
    stripped = _strip(unq)
    _, from_int_us, int_zero, _ = _nanos_parts(text)
    from_int = ibis.ifelse(int_zero, ibis.literal(0, type=dt.int64), from_int_us)
    iso = ibis.ifelse(stripped == "", ibis.null(dt.int64), _iso_us(stripped, engine))
    value = ibis.cases(
        (variant.isin(["string", "bytes"]), iso),
        (variant == "int", from_int),
        else_=ibis.null(dt.int64),
    )
    blank = variant.isin(["string", "bytes"]) & (stripped == "")
    bad = variant.notnull() & ~blank.fill_null(False) & value.isnull()
    return value, bad


def _otlp_id(raw: ir.StringValue, size: int, engine: Engine) -> ir.StringValue:
    """``otlp._otlp_id``, lower-cased: hex as written, base64 of ``size`` bytes as hex."""
    b64 = r"^[A-Za-z0-9+/]{22}==$" if size == 16 else r"^[A-Za-z0-9+/]{11}=$"
    hex_ok = (raw.length() == 2 * size) & raw.re_search(r"^[0-9a-fA-F]+$")
    decoded = _HEX(_DECODE[engine](raw))
    return ibis.cases(
        (raw.isnull() | (raw == ""), ibis.null(dt.string)),
        (hex_ok, raw),
        (raw.re_search(b64), decoded),
        else_=raw,
    ).lower()


def _hex(x: dt.binary) -> str:  # type: ignore[empty-body]
    """The engine's hex of a blob (DuckDB and Spark: ``hex``)."""


def _from_base64(x: str) -> dt.binary:
    """DuckDB's base64 decoding."""


def _unbase64(x: str) -> dt.binary:
    """Spark's base64 decoding."""


def _epoch_us(x: dt.timestamp) -> dt.int64:
    """DuckDB's microseconds since the epoch."""


def _unix_micros(x: dt.timestamp) -> dt.int64:
    """Spark's microseconds since the epoch."""


def _json_valid(x: str) -> bool:  # type: ignore[empty-body]
    """DuckDB's JSON check."""


def _json_extract_string(x: str, path: str) -> str:  # type: ignore[empty-body]
    """DuckDB's JSON value as text."""


def _get_json_object(x: str, path: str) -> str:  # type: ignore[empty-body]
    """Spark's JSON value as text."""


_builtin: Any = ibis.udf.scalar.builtin
_JSON_VALID = _builtin(_json_valid, name="json_valid")
_JSON_EXTRACT_STRING = _builtin(_json_extract_string, name="json_extract_string")
_GET_JSON_OBJECT = _builtin(_get_json_object, name="get_json_object")
_HEX = _builtin(_hex, name="hex")
_EPOCH_US: dict[Engine, Any] = {
    Engine.DUCKDB: _builtin(_epoch_us, name="epoch_us"),
    Engine.SPARK: _builtin(_unix_micros, name="unix_micros"),
}
_DECODE: dict[Engine, Any] = {
    Engine.DUCKDB: _builtin(_from_base64, name="from_base64"),
    Engine.SPARK: _builtin(_unbase64, name="unbase64"),
}


def _iso_us(text: ir.StringValue, engine: Engine) -> ir.IntegerValue:
    """ISO-8601 text (no offset means UTC) → µs since the epoch; null when it does not parse."""
    return _EPOCH_US[engine](text.try_cast("timestamp('UTC')"))


def _error_class(message: ir.StringValue) -> ir.StringValue:
    """``status.error_class``: the class of ``RateLimitError('...')``, or a short first line."""
    line = _strip(_strip(message).re_extract(r"^([^\r\n]*)", 1))
    cls = line.re_extract(r"^([A-Za-z_][A-Za-z0-9_.]*)\s*[(:]", 1)
    return ibis.cases(
        (message.isnull() | (line == ""), ibis.null(dt.string)),
        (cls != "", cls),
        (line.length() <= 100, line),
        else_=ibis.null(dt.string),
    )


def _status(
    failed: ir.BooleanValue,
    error_type: ir.StringValue,
    http: ir.IntegerValue | None,
    message: ir.StringValue,
    exception_type: ir.StringValue,
    exception_message: ir.StringValue,
) -> tuple[ir.StringValue, ir.StringValue]:
    """``status.set_status`` in the engine: (status, status_source), from the same table."""
    return classify_expr(
        failed=failed,
        error_type=error_type,
        http_status=http if http is not None else ibis.null(dt.int64),
        exception_type=exception_type,
        exception_message=exception_message,
        message=message,
    )


def _with_tasks(t: ir.Table) -> ir.Table:
    """``records._with_tasks`` per file: a root span (no parent in its own file) of kind other
    is the task (after ``_complete_streams``)."""
    t = _complete_streams(t)
    keys = t.select(
        _f=t.source_file, _t=t.task_id, _s=t.span_id, _here=ibis.literal(True)
    ).distinct()
    j = t.left_join(
        keys,
        [t.source_file == keys._f, t.task_id == keys._t, t.parent_span_id == keys._s],
    )
    here = j._here.fill_null(False)
    base = ibis.ifelse(j.kind == str(Kind.TASK), str(Kind.OTHER), j.kind)
    kind = ibis.ifelse(~here & (base == str(Kind.OTHER)), str(Kind.TASK), base)
    return j.select(*[kind.name("kind") if c.name == "kind" else j[c.name] for c in COLUMNS])
