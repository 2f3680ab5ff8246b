"""Read CSV, Parquet and JSON-lines tables into canonical spans through a column mapping."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import ibis
import ibis.expr.types as ir
import pyarrow as pa
from ibis.backends import BaseBackend
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from slacheck.engine import Engine, engine_of
from slacheck.errors import MAX_PROBLEMS, Problem, Reason, TraceInputError
from slacheck.inputs import (
    YamlAliasBound,
    bounded_yaml,
    decode_utf8,
    depth_problem,
    read_bounded,
    reading,
)
from slacheck.trace.normalise import blank_expr, host_expr, stripped_expr
from slacheck.trace.otlp_values import epoch_us, json_get
from slacheck.trace.schema import BY_NAME, COLUMN_NAMES, COLUMNS, SetAside, Status

TableFormat = Literal["csv", "parquet", "jsonl"]
_UNITS = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 0.000001}
_EPOCH_TO_US = {"epoch_s": 1_000_000, "epoch_ms": 1_000, "epoch_us": 1, "epoch_ns": 0.001}


class ColumnSpec(BaseModel):
    """Where one canonical field comes from: a column (optionally a value inside its JSON, a
    host from its URL), two timestamp columns (a duration), the first of several sources that
    has a value, or a constant."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    column: str | None = Field(default=None, description="Source column name.")
    json_path: str | list[str] | None = Field(
        default=None,
        alias="json",
        description="Path inside the column's JSON (text, or a nested record): `a.b`, or a "
        "list of keys when a key holds a dot (`[attributes, gen_ai.system]`).",
    )
    between: tuple[str, str] | None = Field(
        default=None,
        description="A duration (ms) from two timestamp columns: `[start, end]` gives end − "
        "start, e.g. `ttft_ms: {between: [startTime, completionStartTime]}`.",
    )
    first_of: list[ColumnSpec] | None = Field(
        default=None, description="Sources tried in order: the first that has a value."
    )
    value: str | int | float | bool | None = Field(
        default=None, description="A constant, for what the export implies but does not write."
    )
    normalise: Literal["host"] | None = Field(
        default=None, description="`host`: the host of a URL (`http://gw:4000/v1/` → `gw`)."
    )
    unit: Literal["s", "ms", "us", "ns"] | None = Field(
        default=None, description="Unit of a duration column (converted to ms)."
    )
    values: dict[str, str] = Field(
        default_factory=dict, description="Source value → canonical value (kind, status)."
    )
    default: str | None = Field(default=None, description="Canonical value for unlisted values.")

    @model_validator(mode="after")
    def _one_source(self) -> ColumnSpec:
        given = [
            k
            for k, v in (
                ("column", self.column),
                ("between", self.between),
                ("first_of", self.first_of),
                ("value", self.value),
            )
            if v is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of `column`, `between`, `first_of`, `value`"
                + (f" (got {', '.join(given)})" if given else "")
            )
        if self.json_path is not None and self.column is None:
            raise ValueError("`json` reads inside a `column`: name the column too")
        return self

    def path(self) -> list[str]:
        """The keys of ``json``, in order."""
        if self.json_path is None:
            return []
        return self.json_path.split(".") if isinstance(self.json_path, str) else self.json_path

    def source_columns(self) -> set[str]:
        """Every source column this spec reads."""
        if self.column is not None:
            return {self.column}
        if self.between is not None:
            return set(self.between)
        return {c for alt in self.first_of or () for c in alt.source_columns()}


class Mapping(BaseModel):
    """A mapping file: which source column feeds each canonical field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: TableFormat | None = Field(default=None, description="From the extension if unset.")
    timestamp_format: str = Field(
        default="iso8601",
        description="`iso8601`, `epoch_s`, `epoch_ms`, `epoch_us`, `epoch_ns` or a strptime "
        "pattern such as `%Y-%m-%d %H:%M:%S`. Naive timestamps are UTC.",
    )
    columns: dict[str, str | ColumnSpec] = Field(description="canonical field → source column.")
    constants: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Fixed values for fields the table lacks."
    )
    status_message: str | ColumnSpec | None = Field(
        default=None,
        description="The error text of a failed call, read with its error class and HTTP "
        "status by the shared status classification.",
    )

    @field_validator("columns", "constants")
    @classmethod
    def _canonical_names(cls, v: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(v) - set(COLUMN_NAMES))
        if unknown:
            raise ValueError(
                f"not canonical fields: {', '.join(unknown)}; known: {', '.join(COLUMN_NAMES)}"
            )
        return v

    @model_validator(mode="after")
    def _fits_fields(self) -> Mapping:
        for name, raw in self.columns.items():
            if isinstance(raw, str):
                continue
            for spec in _leaves(raw):
                if spec.between is not None and not name.endswith("_ms"):
                    raise ValueError(
                        f"columns.{name}: `between` gives a duration, for a *_ms field only"
                    )
                if spec.normalise == "host" and BY_NAME[name].type != pa.string():
                    raise ValueError(f"columns.{name}: a host is text, not {BY_NAME[name].type}")
            if name == "status":
                bad = sorted(set(_status_values(raw)) - _STATUS_VALUES)
                if bad:
                    raise ValueError(
                        f"columns.status: {', '.join(bad)} is not a status; use ok, error (a "
                        f"failure the shared classification names) or one of "
                        f"{', '.join(sorted(_STATUS_VALUES - {'ok', 'error'}))}"
                    )
        return self

    def spec(self, field: str) -> ColumnSpec | None:
        raw = self.columns.get(field)
        if raw is None:
            return None
        return ColumnSpec(column=raw) if isinstance(raw, str) else raw

    def message_spec(self) -> ColumnSpec | None:
        raw = self.status_message
        return ColumnSpec(column=raw) if isinstance(raw, str) else raw

    def source_columns(self) -> set[str]:
        """Every source column the mapping reads."""
        specs = [self.spec(f) for f in self.columns] + [self.message_spec()]
        return {c for spec in specs if spec is not None for c in spec.source_columns()}


def _leaves(spec: ColumnSpec) -> list[ColumnSpec]:
    return [leaf for alt in spec.first_of for leaf in _leaves(alt)] if spec.first_of else [spec]


def _status_values(raw: ColumnSpec) -> list[str]:
    out: list[str] = []
    for spec in _leaves(raw):
        out.extend(spec.values.values())
        if spec.default is not None:
            out.append(spec.default)
        if isinstance(spec.value, str):
            out.append(spec.value)
    return out


#: what a mapping may give as a status: ``ok``, ``error`` (failed: the class is the shared
#: classification's, from the error class, HTTP status and message) or a status class itself
_STATUS_VALUES = frozenset({"ok", "error", *(str(s) for s in Status)})


def _alias_problem(path: Path, exc: YamlAliasBound) -> Problem:
    mark = exc.problem_mark
    return Problem(
        str(path),
        f"mapping refused: {exc.message}",
        Reason.TOO_LARGE,
        line=mark.line + 1 if mark is not None else None,
        column=mark.column + 1 if mark is not None else None,
        fix="write the values out; an anchor (&name) is for a few repeated blocks",
    )


def load_mapping(path: Path) -> Mapping:
    """Read a mapping YAML file; errors name the file, the line and the field."""
    with reading(path):
        text = decode_utf8(
            read_bounded(path, TraceInputError, what="mapping file"), path, TraceInputError
        )
        deep: Problem | None
        try:
            data = bounded_yaml().load(text)
        except YamlAliasBound as exc:
            raise TraceInputError([_alias_problem(path, exc)]) from None
        except RecursionError:
            data = None
            deep = Problem(str(path), "nested too deep", Reason.TOO_DEEP)
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise TraceInputError(
                [
                    Problem(
                        str(path),
                        f"mapping is not valid YAML: {exc.problem or exc}",
                        Reason.BAD_MAPPING,
                        line=mark.line + 1 if mark is not None else None,
                        column=mark.column + 1 if mark is not None else None,
                        fix="check indentation, colons and quotes on this line",
                    )
                ]
            ) from None
        except YAMLError as exc:
            raise TraceInputError(
                [Problem(str(path), f"mapping is not valid YAML: {exc}", Reason.BAD_MAPPING)]
            ) from None
        else:
            deep = depth_problem(data, str(path))
        if deep is not None:
            raise TraceInputError([deep])
        try:
            return Mapping.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors()
            raise TraceInputError(
                [
                    Problem(
                        str(path),
                        e["msg"],
                        Reason.BAD_MAPPING,
                        field=".".join(str(x) for x in e["loc"]),
                    )
                    for e in errors[:MAX_PROBLEMS]
                ],
                more=max(0, len(errors) - MAX_PROBLEMS),
            ) from None


def identity_mapping(fmt: TableFormat) -> Mapping:
    """The mapping of a table that already has the canonical columns (slacheck's own Parquet)."""
    return Mapping(
        format=fmt,
        timestamp_format="epoch_us",
        # source_ref is the row in this file, so every number can be found again
        columns={
            c.name: c.name for c in COLUMNS if c.name not in ("source_file", "source_ref", "defect")
        },
    )


def table_format(path: Path) -> TableFormat | None:
    suffixes = "".join(path.suffixes).lower()
    if suffixes.endswith((".parquet", ".pq")):
        return "parquet"
    if suffixes.endswith((".csv", ".csv.gz", ".tsv")):
        return "csv"
    if suffixes.endswith((".jsonl", ".ndjson", ".jsonl.gz")):
        return "jsonl"
    return None


def read_source(backend: BaseBackend, path: Path, fmt: TableFormat) -> ir.Table:
    """Let the engine read the file (no per-row Python)."""
    try:
        if fmt == "parquet":
            if backend.name == "duckdb":
                # exact, stable row numbers for source references, whatever the scan order
                return backend.read_parquet(str(path), file_row_number=True)
            return backend.read_parquet(str(path))
        if fmt == "csv":
            return backend.read_csv(str(path))
        return backend.read_json(str(path))
    except Exception as exc:  # the engines raise their own types; all mean "unreadable"
        raise _unreadable([path], fmt, exc) from None


def _unreadable(paths: list[Path], fmt: TableFormat, exc: Exception) -> TraceInputError:
    """The engine could not read ``paths`` as ``fmt``: each file named, with the engine's
    first line."""
    first = (str(exc).splitlines() or [""])[0]
    return TraceInputError(
        [
            Problem(
                str(path),
                f"cannot read as {fmt}: {first}",
                Reason.MALFORMED_TRACE,
                fix=f"check that the file is {fmt}",
            )
            for path in paths
        ]
    )


def read_table(
    backend: BaseBackend, path: Path, mapping: Mapping, *, keep: tuple[str, ...] = ()
) -> ir.Table:
    """A canonical span table (as an Ibis expression) from a tabular file and its mapping;
    ``keep``: columns of the file carried through as they are, after the canonical ones."""
    fmt = mapping.format or table_format(path)
    if fmt is None:
        raise TraceInputError(
            [
                Problem(
                    str(path),
                    "cannot tell the table format from the file name",
                    Reason.UNKNOWN_FORMAT,
                    fix="name it .csv, .parquet or .jsonl, or set `format:` in the mapping",
                )
            ]
        )
    src = read_source(backend, path, fmt)
    _check_columns(src, mapping, [path])
    return _canonical(src, mapping, str(path), keep)


#: the column of a many-file read that names each row's file (a name no trace file uses)
_FILE_COLUMN = "_slacheck_source_file"


def read_parquet_files(
    backend: BaseBackend, paths: list[Path], mapping: Mapping, *, keep: tuple[str, ...] = ()
) -> ir.Table:
    """One canonical span table from Parquet files of one schema, read by DuckDB as one scan:
    what ``read_table`` gives for each file, unioned, but one expression whatever the number of
    files (a converted folder holds one a day; a union of one projection per file made every
    later query compile ninety of them). Each row keeps its own file's name and row number;
    ``keep``: as ``read_table``'s."""
    src, name = _scan_files(backend, paths)
    _check_columns(src, mapping, paths)
    return _canonical(src, mapping, name, keep)


def _scan_files(backend: BaseBackend, paths: list[Path]) -> tuple[ir.Table, ir.StringValue]:
    """The Parquet files as one DuckDB scan, with each row's row number, and each row's file
    named as it was given (DuckDB names each file by its absolute path)."""
    try:
        src = backend.read_parquet(
            [str(p) for p in paths],
            filename=_FILE_COLUMN,
            file_row_number=True,
            hive_partitioning=False,
        )
    except Exception as exc:  # the engines raise their own types; all mean "unreadable"
        raise _unreadable(paths, "parquet", exc) from None
    given = {os.path.abspath(p): str(p) for p in paths}
    renamed = {a: g for a, g in given.items() if a != g}
    name = src[_FILE_COLUMN]
    return src, name.substitute(renamed) if renamed else name


def read_canonical_files(
    backend: BaseBackend, paths: list[Path], *, keep: tuple[str, ...] = ()
) -> ir.Table:
    """Parquet files ``traces convert`` wrote, read as they are: what ``read_parquet_files``
    gives for them with ``identity_mapping``, without its per-row work. Only for files known
    to be byte for byte that output under this code's rules (a converted folder whose record
    holds, ``trace.record``): every value in them is already canonical — text trimmed to null,
    statuses classified, root spans named — so normalising each value again at every query of
    the folder (about 1.2 s of CPU per query over 10⁷ spans) would change nothing. What names
    the row is its own, as ``project`` gives it: this file's name and row number; the
    duration is the one ``project`` computes from the two timestamps."""
    src, name = _scan_files(backend, paths)
    start, end = src.start_us, src.end_us
    root = src.parent_span_id.isnull() & (src.kind == "other")
    exprs: dict[str, ir.Value] = {
        "source_file": name,
        "source_ref": ibis.literal("row ") + (src.file_row_number + 1).cast("string"),
        "duration_ms": (end.cast("float64") - start.cast("float64")) / 1000.0,
        "kind": ibis.ifelse(root, ibis.literal("task"), src.kind),
    }
    out = {
        c.name: exprs[c.name] if c.name in exprs else src[c.name].cast(_ibis_type(c.name))
        for c in COLUMNS
    }
    out.update({k: src[k] for k in keep})
    return src.select(**out)


def _check_columns(src: ir.Table, mapping: Mapping, paths: list[Path]) -> None:
    """Every column the mapping reads is in the file (each of ``paths``, which share ``src``'s
    columns)."""
    specs = [(f, mapping.spec(f)) for f in mapping.columns]
    specs.append(("status_message", mapping.message_spec()))
    missing = sorted(
        {
            (field, col)
            for field, spec in specs
            if spec is not None
            for col in spec.source_columns()
            if col not in src.columns
        }
    )
    if missing:
        raise TraceInputError(
            [
                Problem(
                    str(path),
                    f"column `{col}` (mapped to `{field}`) is not in the file",
                    Reason.BAD_MAPPING,
                    field=field if field == "status_message" else f"columns.{field}",
                    fix="columns present: "
                    + ", ".join(c for c in src.columns if c != _FILE_COLUMN),
                )
                for path in paths
                for field, col in missing
            ]
        )


def _canonical(
    src: ir.Table,
    mapping: Mapping,
    source_file: str | ir.StringValue,
    keep: tuple[str, ...] = (),
) -> ir.Table:
    if not _classifies(mapping):
        return project(src, mapping, source_file, keep=keep)
    return classify_status(project(src, mapping, source_file, status_inputs=True, keep=keep))


def _classifies(mapping: Mapping) -> bool:
    """The mapping gives a failure flag, an error class or an HTTP status: the rows' status is
    then the shared classification's (``status.set_status``)."""
    return any(mapping.spec(f) is not None for f in ("status", "error_type", "http_status"))


#: the columns ``project`` adds for the status classification (``status_inputs``)
_FAILED, _MESSAGE = "_slacheck_failed", "_slacheck_message"
#: how much of a failed call's message the classification reads (its class and codes are at
#: its start; the rest is request ids and payloads, which would only multiply the distinct rows)
_MESSAGE_CHARS = 300


def project(
    src: ir.Table,
    mapping: Mapping,
    source_file: str | ir.StringValue,
    *,
    status_inputs: bool = False,
    keep: tuple[str, ...] = (),
) -> ir.Table:
    """The canonical columns of ``src`` read through ``mapping``; ``source_file``: the file's
    name, or a column naming each row's file (a folder Spark read as one table).
    ``status_inputs``: also the failure flag and message ``classify_status`` reads; ``keep``:
    columns of ``src`` carried through as they are (a converted folder's ``orphan``)."""
    reader = _Reader(src, mapping.timestamp_format)
    exprs: dict[str, ir.Value] = {}
    for col in COLUMNS:
        name = col.name
        spec = mapping.spec(name)
        if name in ("start_us", "end_us") and spec is not None:
            exprs[name] = reader.timestamp(spec, name)
        elif spec is not None:
            exprs[name] = reader.value(spec, name)
        elif name in mapping.constants:
            exprs[name] = ibis.literal(mapping.constants[name]).cast(_ibis_type(name))
        else:
            exprs[name] = ibis.null().cast(_ibis_type(name))
    defects = reader.defects
    # Durations come from the timestamps when both are there; a mapped duration fills the end.
    start, end = exprs["start_us"], exprs["end_us"]
    if mapping.spec("end_us") is None and mapping.spec("duration_ms") is not None:
        end = start + (exprs["duration_ms"] * 1000).round().cast("int64")
        exprs["end_us"] = end
    if mapping.spec("start_us") is not None:
        # in floats: a row at the int64 limits (set aside later) must not overflow the engine
        exprs["duration_ms"] = (end.cast("float64") - start.cast("float64")) / 1000.0
    if mapping.spec("parent_span_id") is not None:
        # as the JSON readers do: a root span of no model/tool kind is the agent task
        root = exprs["parent_span_id"].isnull() & (exprs["kind"] == "other")
        exprs["kind"] = ibis.ifelse(root, ibis.literal("task"), exprs["kind"])
    exprs["source_file"] = (
        ibis.literal(source_file) if isinstance(source_file, str) else source_file
    )
    if mapping.spec("source_ref") is None:
        row = src.file_row_number if "file_row_number" in src.columns else ibis.row_number()
        exprs["source_ref"] = ibis.literal("row ") + (row + 1).cast("string")
    if "defect" in src.columns and mapping == identity_mapping(mapping.format or "parquet"):
        # slacheck's own Parquet (``traces convert``) keeps the reasons found when it was parsed
        defects.insert(0, src["defect"].cast("string"))
    exprs["defect"] = (
        ibis.coalesce(*defects, ibis.null().cast("string"))
        if defects
        else (ibis.null().cast("string"))
    )
    out = {c.name: exprs[c.name] for c in COLUMNS}
    out.update({name: src[name] for name in keep})
    if status_inputs:
        status = exprs["status"]
        out[_FAILED] = status.isin(sorted(_STATUS_VALUES - {"ok"})).fill_null(False)
        message = mapping.message_spec()
        out[_MESSAGE] = (
            ibis.null("string")
            if message is None
            else reader.value(message, "status_message").substr(0, _MESSAGE_CHARS)
        )
    return src.select(**out)


def classify_status(spans: ir.Table) -> ir.Table:
    """``spans`` (from ``project(..., status_inputs=True)``) with ``status`` and ``error_type``
    as the shared rule gives them (``status.set_status``: the failure flag, the error class,
    the HTTP status and, for a failed call, its message): the rule runs once per distinct
    combination, in Python, and is joined back in the engine. A status the mapping names
    itself (``throttled``, …) stays; a row with none of the four stays unknown (null)."""
    from slacheck.trace.status import set_status

    # a status the mapping names itself stays; a value that is none (LangSmith's `pending`)
    # is no status
    given = _given(spans)
    flagged = spans.status.isin(["ok", "error"]).fill_null(False)
    decided = (flagged | spans.error_type.notnull() | spans.http_status.notnull()) & ~given
    message = ibis.ifelse(spans[_FAILED], spans[_MESSAGE], ibis.null("string"))
    # the distinct combinations the rule reads, classified in Python once each
    seen = (
        spans.filter(decided)
        .select(f=spans[_FAILED], e=spans.error_type, h=spans.http_status, m=message)
        .distinct()
    )
    combos = seen.to_pyarrow()
    statuses, classes = [], []
    for row in combos.to_pylist():
        fields: dict[str, Any] = {"error_type": row["e"], "http_status": row["h"]}
        set_status(fields, failed=bool(row["f"]), message=row["m"])
        statuses.append(fields["status"])
        classes.append(fields["error_type"])
    rule = ibis.memtable(
        pa.table(
            {
                "_slacheck_f": combos.column("f"),
                "_slacheck_e": combos.column("e"),
                "_slacheck_h": combos.column("h"),
                "_slacheck_m": combos.column("m"),
                "_slacheck_d": pa.array([True] * combos.num_rows, pa.bool_()),
                "_slacheck_status": pa.array(statuses, pa.string()),
                "_slacheck_class": pa.array(classes, pa.string()),
            }
        )
    )
    # joined back on the four values themselves, nulls matching nulls (a hash join on the
    # columns: no text built per row); a row the rule does not decide matches nothing
    keyed = spans.mutate(_slacheck_d=decided, _slacheck_m=message)
    j = keyed.left_join(
        rule,
        [
            keyed[_FAILED].identical_to(rule._slacheck_f),
            keyed.error_type.identical_to(rule._slacheck_e),
            keyed.http_status.identical_to(rule._slacheck_h),
            keyed._slacheck_m.identical_to(rule._slacheck_m),
            keyed._slacheck_d == rule._slacheck_d,
        ],
    )
    decided_here = j._slacheck_d_right.notnull()
    replaced = {
        "status": ibis.cases(
            (decided_here, j._slacheck_status),
            (_given(j), j.status),
            else_=ibis.null("string"),
        ),
        "error_type": ibis.ifelse(decided_here, j._slacheck_class, j.error_type),
    }
    # columns ``project`` kept beyond the canonical ones go through as they are
    kept = [c for c in spans.columns if c not in BY_NAME and c not in (_FAILED, _MESSAGE)]
    return j.select(
        *[replaced.get(c.name, j[c.name]).name(c.name) for c in COLUMNS], *[j[c] for c in kept]
    )


def _given(t: ir.Table) -> ir.BooleanValue:
    return t.status.isin(sorted(_STATUS_VALUES - {"ok", "error"})).fill_null(False)


class _Reader:
    """Canonical values from one source table's columns, collecting each row's defects."""

    def __init__(self, src: ir.Table, timestamp_format: str) -> None:
        self.src = src
        self.timestamp_format = timestamp_format
        self.defects: list[ir.StringValue] = []
        self.engine = engine_of(src._find_backend())

    def _flag(self, bad: ir.BooleanValue, reason: str) -> None:
        self.defects.append(ibis.ifelse(bad, ibis.literal(reason), None))

    def raw(self, spec: ColumnSpec) -> ir.Value:
        """The source value: the column, or the text at the JSON path inside it; empty text
        is no value (CSV writes a missing value as an empty field)."""
        assert spec.column is not None
        col = self.src[spec.column]
        path = spec.path()
        if path:
            col = self._json_text(col, path)
        if col.type().is_string():
            col = ibis.ifelse(blank_expr(col), ibis.null("string"), col)
        if spec.normalise == "host":
            col = host_expr(col.cast("string"))
        return col

    def _json_text(self, col: ir.Value, path: list[str]) -> ir.StringValue:
        """The value at ``path`` in a JSON column (text, a JSON type or a nested record), as
        text; null where the path is absent or the text is not JSON."""
        text = col if col.type().is_string() else col.cast("json").cast("string")
        return json_get(text, path, self.engine)

    def timestamp(self, spec: ColumnSpec, name: str) -> ir.IntegerValue:
        if spec.first_of:
            return ibis.coalesce(*(self.timestamp(alt, name) for alt in spec.first_of))
        if spec.value is not None or spec.column is None:
            raise ValueError(f"columns.{name}: a timestamp comes from a column")
        raw = self.raw(spec)
        parsed = _timestamp_us(raw, self.timestamp_format, self.engine)
        self._flag(raw.notnull() & parsed.isnull(), f"{SetAside.UNPARSEABLE_TIMESTAMP}:{name}")
        return parsed

    def value(self, spec: ColumnSpec, name: str) -> ir.Value:
        target = _ibis_type(name) if name in BY_NAME else ibis.dtype("string")
        if spec.first_of:
            return ibis.coalesce(*(self.value(alt, name) for alt in spec.first_of))
        if spec.value is not None:
            return ibis.literal(spec.value).cast(target)
        if spec.between is not None:
            first, second = (self.timestamp(ColumnSpec(column=c), name) for c in spec.between)
            return (second.cast("float64") - first.cast("float64")) / 1000.0
        raw = self.raw(spec)
        if spec.values or spec.default is not None:
            text = raw.cast("string")
            mapped = text.substitute(spec.values, else_=spec.default if spec.default else text)
            return self._typed(mapped, name, target)
        if name.endswith("_ms") and spec.unit is not None:
            number = raw.try_cast("float64")
            self._flag(raw.notnull() & number.isnull(), f"{SetAside.UNPARSEABLE_NUMBER}:{name}")
            return number * _UNITS[spec.unit]
        return self._typed(raw, name, target)

    def _typed(self, raw: ir.Value, name: str, target: Any) -> ir.Value:
        if target.is_boolean():
            if raw.type().is_boolean():
                return raw
            text = stripped_expr(raw.cast("string")).lower()
            return ibis.cases(
                (text.isin(["true", "1", "yes"]), True),
                (text.isin(["false", "0", "no"]), False),
                else_=ibis.null("boolean"),
            )
        if target.is_numeric():
            number = raw.try_cast(target)
            if target.is_integer() and raw.type().is_string():
                # a count written as 12.0 is 12 (JSON numbers read as text)
                as_float = raw.try_cast("float64")
                whole = as_float == as_float.floor()
                number = ibis.coalesce(number, ibis.ifelse(whole, as_float.cast(target), None))
            self._flag(raw.notnull() & number.isnull(), f"{SetAside.UNPARSEABLE_NUMBER}:{name}")
            return number
        return raw.cast(target)


def _timestamp_us(raw: ir.Value, fmt: str, engine: Engine) -> ir.IntegerValue:
    if fmt == "epoch_us" and raw.type().is_integer():
        return raw.cast("int64")
    if fmt in _EPOCH_TO_US:
        number = raw.try_cast("float64")
        return (number * _EPOCH_TO_US[fmt]).round().cast("int64")
    if raw.type().is_timestamp():
        ts = raw
    elif fmt == "iso8601":
        # a timestamp written as a JSON string, in quotes (Langfuse's CSV export writes its
        # dates through JSON.stringify), is read without them
        text = stripped_expr(raw.cast("string")).re_replace(r'^"(.*)"$', r"\1")
        ts = text.try_cast("timestamp('UTC')")
    else:
        ts = raw.cast("string").as_timestamp(fmt)
    return epoch_us(ts, engine)


def _ibis_type(name: str) -> Any:
    return ibis.dtype(BY_NAME[name].type)


#: Exports whose columns slacheck knows: name → mapping file shipped in slacheck/trace/mappings.
#: Tried in order; the first whose columns the file has all of is used (the full export layouts
#: before the smaller hand-picked ones).
BUILTIN_MAPPINGS = {
    "langfuse-export": "langfuse_export.yaml",
    "langsmith-runs": "langsmith_runs.yaml",
    "litellm-spendlogs": "litellm_spendlogs.yaml",
    "langfuse-csv": "langfuse_csv.yaml",
    "langsmith-csv": "langsmith_csv.yaml",
}


def builtin_mapping(backend: BaseBackend, path: Path) -> tuple[str, Mapping] | None:
    """The shipped mapping whose source columns are all in ``path`` (e.g. a Langfuse CSV)."""
    from importlib import resources

    fmt = table_format(path)
    if fmt is None:
        return None
    columns = set(read_source(backend, path, fmt).columns)
    for name, file in BUILTIN_MAPPINGS.items():
        ref = resources.files("slacheck.trace").joinpath(f"mappings/{file}")
        mapping = Mapping.model_validate(YAML(typ="safe").load(ref.read_text(encoding="utf-8")))
        if mapping.source_columns() <= columns:
            return name, mapping
    return None
