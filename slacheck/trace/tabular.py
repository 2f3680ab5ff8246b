"""Read CSV, Parquet and JSON-lines tables into canonical spans through a column mapping."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import ibis
import ibis.expr.types as ir
from ibis.backends import BaseBackend
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from slacheck.errors import MAX_PROBLEMS, Problem, Reason, TraceInputError
from slacheck.inputs import (
    YamlAliasBound,
    bounded_yaml,
    decode_utf8,
    depth_problem,
    read_bounded,
    reading,
)
from slacheck.trace.schema import BY_NAME, COLUMN_NAMES, COLUMNS, SetAside

TableFormat = Literal["csv", "parquet", "jsonl"]
_UNITS = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 0.000001}
_EPOCH_TO_US = {"epoch_s": 1_000_000, "epoch_ms": 1_000, "epoch_us": 1, "epoch_ns": 0.001}


class ColumnSpec(BaseModel):
    """Where one canonical field comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    column: str = Field(description="Source column name.")
    unit: Literal["s", "ms", "us", "ns"] | None = Field(
        default=None, description="Unit of a duration column (converted to ms)."
    )
    values: dict[str, str] = Field(
        default_factory=dict, description="Source value → canonical value (kind, status)."
    )
    default: str | None = Field(default=None, description="Canonical value for unlisted values.")


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

    @field_validator("columns", "constants")
    @classmethod
    def _canonical_names(cls, v: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(v) - set(COLUMN_NAMES))
        if unknown:
            raise ValueError(
                f"not canonical fields: {', '.join(unknown)}; known: {', '.join(COLUMN_NAMES)}"
            )
        return v

    def spec(self, field: str) -> ColumnSpec | None:
        raw = self.columns.get(field)
        if raw is None:
            return None
        return ColumnSpec(column=raw) if isinstance(raw, str) else raw


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
        raise TraceInputError(
            [
                Problem(
                    str(path),
                    f"cannot read as {fmt}: {str(exc).splitlines()[0]}",
                    Reason.MALFORMED_TRACE,
                    fix=f"check that the file is {fmt}",
                )
            ]
        ) from None


def read_table(backend: BaseBackend, path: Path, mapping: Mapping) -> ir.Table:
    """A canonical span table (as an Ibis expression) from a tabular file and its mapping."""
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
    missing = [
        (field, spec.column)
        for field in mapping.columns
        if (spec := mapping.spec(field)) is not None and spec.column not in src.columns
    ]
    if missing:
        raise TraceInputError(
            [
                Problem(
                    str(path),
                    f"column `{col}` (mapped to `{field}`) is not in the file",
                    Reason.BAD_MAPPING,
                    field=f"columns.{field}",
                    fix=f"columns present: {', '.join(src.columns)}",
                )
                for field, col in missing
            ]
        )
    return project(src, mapping, str(path))


def project(src: ir.Table, mapping: Mapping, source_file: str | ir.StringValue) -> ir.Table:
    """The canonical columns of ``src`` read through ``mapping``; ``source_file``: the file's
    name, or a column naming each row's file (a folder Spark read as one table)."""
    defects: list[ir.StringValue] = []
    exprs: dict[str, ir.Value] = {}
    for col in COLUMNS:
        name = col.name
        spec = mapping.spec(name)
        if name in ("start_us", "end_us") and spec is not None:
            raw = src[spec.column]
            parsed = _timestamp_us(raw, mapping.timestamp_format)
            bad = raw.notnull() & parsed.isnull()
            defects.append(
                ibis.ifelse(bad, ibis.literal(f"{SetAside.UNPARSEABLE_TIMESTAMP}:{name}"), None)
            )
            exprs[name] = parsed
        elif spec is not None:
            exprs[name] = _value(src[spec.column], name, spec, defects)
        elif name in mapping.constants:
            exprs[name] = ibis.literal(mapping.constants[name]).cast(_ibis_type(name))
        else:
            exprs[name] = ibis.null().cast(_ibis_type(name))
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
    return src.select(**{c.name: exprs[c.name] for c in COLUMNS})


def _value(raw: ir.Value, name: str, spec: ColumnSpec, defects: list[ir.StringValue]) -> ir.Value:
    target = _ibis_type(name)
    if spec.values or spec.default is not None:
        text = raw.cast("string")
        mapped = text.substitute(spec.values, else_=spec.default if spec.default else text)
        return mapped.cast(target)
    if name.endswith("_ms") and spec.unit is not None:
        number = raw.try_cast("float64")
        defects.append(
            ibis.ifelse(raw.notnull() & number.isnull(), f"unparseable_number:{name}", None)
        )
        return number * _UNITS[spec.unit]
    if target.is_numeric():
        number = raw.try_cast(target)
        defects.append(
            ibis.ifelse(
                raw.notnull() & number.isnull(),
                ibis.literal(f"{SetAside.UNPARSEABLE_NUMBER}:{name}"),
                None,
            )
        )
        return number
    return raw.cast(target)


def _timestamp_us(raw: ir.Value, fmt: str) -> ir.IntegerValue:
    if fmt == "epoch_us" and raw.type().is_integer():
        return raw.cast("int64")
    if fmt in _EPOCH_TO_US:
        number = raw.try_cast("float64")
        return (number * _EPOCH_TO_US[fmt]).round().cast("int64")
    if raw.type().is_timestamp():
        ts = raw
    elif fmt == "iso8601":
        ts = raw.cast("string").try_cast("timestamp('UTC')")
    else:
        ts = raw.cast("string").as_timestamp(fmt)
    # epoch seconds plus the sub-second microseconds; DuckDB's microsecond() counts within
    # the minute, so take it modulo one second.
    # DuckDB's epoch is fractional and a cast rounds: floor it first.
    seconds = ts.epoch_seconds().floor().cast("int64")
    return seconds * 1_000_000 + ts.microsecond().cast("int64") % 1_000_000


def _ibis_type(name: str) -> Any:
    return ibis.dtype(BY_NAME[name].type)


#: Exports whose columns slacheck knows: name → mapping file shipped in slacheck/trace/mappings.
BUILTIN_MAPPINGS = {"langfuse-csv": "langfuse_csv.yaml", "langsmith-csv": "langsmith_csv.yaml"}


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
        wanted = {spec.column for f in mapping.columns if (spec := mapping.spec(f)) is not None}
        if wanted <= columns:
            return name, mapping
    return None
