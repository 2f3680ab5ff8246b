"""Ingest trace files into one canonical span table, setting aside (and counting) unusable rows."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir
import pyarrow as pa
from ibis.backends import BaseBackend

from slacheck.engine import Engine, connect, engine_of
from slacheck.errors import Problem, Reason, TraceInputError, UsageError
from slacheck.trace import schema
from slacheck.trace.schema import SetAside
from slacheck.trace.tabular import Mapping, identity_mapping, read_table, table_format

FORMATS = ("otlp", "langfuse", "langsmith", "table", "canonical")
_EXAMPLES = 3
_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str
    format: str
    sha256: str
    rows: int


@dataclass(frozen=True, slots=True)
class Quality:
    """rows_read = rows_used + sum(set_aside.values()); orphans are used but flagged."""

    rows_read: int
    rows_used: int
    set_aside: dict[str, int]
    examples: dict[str, tuple[str, ...]]  # reason → a few "file: ref" strings
    orphans: int
    orphan_examples: tuple[str, ...]

    @property
    def rows_set_aside(self) -> int:
        return sum(self.set_aside.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows_read": self.rows_read,
            "rows_used": self.rows_used,
            "rows_set_aside": self.rows_set_aside,
            "set_aside": dict(sorted(self.set_aside.items())),
            "examples": {k: list(v) for k, v in sorted(self.examples.items())},
            "orphans": self.orphans,
            "orphan_examples": list(self.orphan_examples),
        }


@dataclass(frozen=True)
class Traces:
    """The result of ingestion: the usable spans (an Ibis table), where they came from, quality."""

    spans: ir.Table
    backend: BaseBackend
    sources: tuple[SourceFile, ...]
    quality: Quality
    set_aside_rows: ir.Table = field(repr=False)

    @property
    def engine(self) -> Engine:
        return engine_of(self.backend)


def _json_readers() -> dict[str, Callable[[Path], pa.Table]]:
    from slacheck.trace.langfuse import read_langfuse
    from slacheck.trace.langsmith import read_langsmith
    from slacheck.trace.otlp import read_otlp

    return {"otlp": read_otlp, "langfuse": read_langfuse, "langsmith": read_langsmith}


def detect(path: Path) -> str:
    """The format of ``path``: sniffed from its content."""
    from slacheck.trace.detect import detect_format

    fmt = detect_format(path)
    if fmt == "table" and table_format(path) == "parquet" and _has_canonical_columns(path):
        return "canonical"
    return fmt


def _has_canonical_columns(path: Path) -> bool:
    import pyarrow.parquet as pq

    names = set(pq.read_schema(path).names)
    return {"task_id", "span_id", "start_us", "end_us", "kind"} <= names


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ingest(
    paths: Sequence[str | Path],
    *,
    fmt: str | None = None,
    mapping: Mapping | None = None,
    engine: Engine | str = Engine.DUCKDB,
    backend: BaseBackend | None = None,
    database: str | None = None,
) -> Traces:
    """Read every file into one canonical table on ``backend`` (a new one for ``engine``).

    ``fmt`` overrides detection for all files; ``mapping`` is required for generic tables;
    ``database``: a DuckDB file to hold the table when it outgrows memory.
    """
    if not paths:
        raise UsageError("no trace files given")
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown trace format {fmt!r}; use one of {', '.join(FORMATS)}")
    con = backend if backend is not None else connect(engine, database)
    parts: list[ir.Table] = []
    arrow_parts: list[pa.Table] = []
    sources: list[SourceFile] = []
    problems: list[Problem] = []
    for raw_path in paths:
        path = Path(raw_path)
        if not path.is_file():
            problems.append(Problem(str(path), "no such file", Reason.FILE_NOT_FOUND))
            continue
        try:
            kind = fmt or detect(path)
            if kind in ("table", "canonical"):
                use = mapping
                if kind == "canonical" or use is None:
                    tf = table_format(path)
                    if kind == "table" and use is None:
                        raise TraceInputError([_needs_mapping(path)])
                    use = identity_mapping(tf or "parquet")
                part = read_table(con, path, use)
                parts.append(part)
                rows = int(part.count().execute())
            else:
                table = _json_readers()[kind](path)
                arrow_parts.append(table)
                rows = table.num_rows
        except TraceInputError as exc:
            problems.extend(exc.problems)
            continue
        sources.append(SourceFile(str(path), kind, sha256_of(path), rows))
    if problems:
        raise TraceInputError(problems)
    if arrow_parts:
        merged = pa.concat_tables(arrow_parts)
        parts.append(_register(con, merged))
    raw = parts[0] if len(parts) == 1 else ibis.union(*parts, distinct=False)
    return _quality(con, raw, tuple(sources))


def _needs_mapping(path: Path) -> Problem:
    return Problem(
        str(path),
        "a CSV, Parquet or JSON-lines table needs a column mapping",
        Reason.UNKNOWN_FORMAT,
        fix="pass --mapping FILE (see the README's mapping section), or use OTLP, Langfuse "
        "or LangSmith exports, or slacheck's canonical Parquet",
    )


def _register(con: BaseBackend, table: pa.Table) -> ir.Table:
    name = f"slacheck_raw_{next(_counter)}"
    if engine_of(con) is Engine.SPARK:
        # PySpark has no Arrow ingest through Ibis; go through pandas with explicit types.
        return con.create_table(name, table.to_pandas(), schema=ibis.schema(table.schema))
    return con.create_table(name, table, temp=True)


def reason_expr(t: ir.Table) -> ir.StringValue:
    """Why a row cannot be used, or null. Order matters: the first reason found is reported."""
    tokens_negative = (
        (t.input_tokens < 0) | (t.output_tokens < 0) | (t.cached_tokens < 0)
    ).fill_null(False)
    missing_id = (
        t.task_id.isnull() | t.span_id.isnull() | (t.task_id == "") | (t.span_id == "")
    )
    defect_reason = t.defect.split(":")[0]
    return (
        ibis.cases(
            (t.defect.notnull(), defect_reason),
            (missing_id, ibis.literal(str(SetAside.MISSING_ID))),
            (
                t.start_us.isnull() | t.end_us.isnull(),
                ibis.literal(str(SetAside.MISSING_TIMESTAMP)),
            ),
            (t.end_us < t.start_us, ibis.literal(str(SetAside.END_BEFORE_START))),
            (tokens_negative, ibis.literal(str(SetAside.NEGATIVE_TOKENS))),
            else_=ibis.null().cast("string"),
        )
    )


def _quality(con: BaseBackend, raw: ir.Table, sources: tuple[SourceFile, ...]) -> Traces:
    t = raw.mutate(_reason=reason_expr(raw))
    # Duplicate span ids: keep the earliest (by start, then source) so row order changes nothing.
    w = ibis.window(
        group_by=[t.task_id, t.span_id, t._reason.isnull()],
        order_by=[t.start_us, t.source_file, t.source_ref],
    )
    t = t.mutate(
        _reason=ibis.ifelse(
            t._reason.isnull() & (ibis.row_number().over(w) > 0),
            ibis.literal(str(SetAside.DUPLICATE_SPAN_ID)),
            t._reason,
        )
    )
    # Orphans: a parent id that is not a usable span of the same task. Kept, flagged.
    clean = t.filter(t._reason.isnull())
    keys = clean.select(p_task=clean.task_id, p_span=clean.span_id).distinct()
    joined = t.left_join(keys, [t.task_id == keys.p_task, t.parent_span_id == keys.p_span])
    flagged = joined.mutate(
        orphan=joined._reason.isnull() & joined.parent_span_id.notnull() & joined.p_span.isnull()
    ).drop("p_task", "p_span")
    # One materialisation: inputs are parsed once and later queries read the engine's copy.
    t = _materialise(con, flagged)
    spans = t.filter(t._reason.isnull()).drop("_reason")
    bad = t.filter(t._reason.notnull()).drop("orphan")

    counts = bad.group_by(reason=bad._reason).aggregate(n=bad.count()).execute()
    set_aside = {str(r): int(n) for r, n in zip(counts["reason"], counts["n"], strict=True)}
    ew = ibis.window(group_by=bad._reason, order_by=[bad.source_file, bad.source_ref])
    ex = bad.mutate(_i=ibis.row_number().over(ew)).filter(lambda x: x._i < _EXAMPLES)
    ex_df = ex.select(ex._reason, ex.source_file, ex.source_ref).execute()
    examples: dict[str, list[str]] = {}
    for r, f, ref in zip(ex_df["_reason"], ex_df["source_file"], ex_df["source_ref"], strict=True):
        examples.setdefault(str(r), []).append(f"{f}: {ref}")
    orphans_t = spans.filter(spans.orphan)
    orphan_df = (
        orphans_t.order_by([orphans_t.source_file, orphans_t.source_ref])
        .select("source_file", "source_ref")
        .limit(_EXAMPLES)
        .execute()
    )
    rows_read = int(t.count().execute())
    rows_used = int(spans.count().execute())
    quality = Quality(
        rows_read=rows_read,
        rows_used=rows_used,
        set_aside=set_aside,
        examples={k: tuple(sorted(v)) for k, v in examples.items()},
        orphans=int(orphans_t.count().execute()),
        orphan_examples=tuple(
            f"{f}: {r}"
            for f, r in zip(orphan_df["source_file"], orphan_df["source_ref"], strict=True)
        ),
    )
    if quality.rows_read != quality.rows_used + quality.rows_set_aside:
        raise AssertionError(f"row accounting broken: {quality}")  # a bug, never bad input
    return Traces(spans=spans, backend=con, sources=sources, quality=quality, set_aside_rows=bad)


def _materialise(con: BaseBackend, t: ir.Table) -> ir.Table:
    """Compute once and keep the result in the engine, so later queries don't re-parse inputs."""
    name = f"slacheck_t_{next(_counter)}"
    if engine_of(con) is Engine.SPARK:
        return con.create_table(name, t)
    return con.create_table(name, t, temp=True)
