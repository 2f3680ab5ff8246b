"""Read OTLP/JSON metrics (``ExportMetricsServiceRequest``) into a table of histogram points.

Shape read (opentelemetry-proto ``metrics/v1``, JSON encoding)::

    {"resourceMetrics": [{"resource": {"attributes": [...]},
      "scopeMetrics": [{"scope": {...}, "metrics": [{"name": "...", "unit": "s",
        "histogram": {"aggregationTemporality": 1 | 2 | "AGGREGATION_TEMPORALITY_DELTA" | ...,
          "dataPoints": [{"attributes": [...], "startTimeUnixNano": "…", "timeUnixNano": "…",
            "count": "…", "sum": 1.5, "bucketCounts": ["…", …], "explicitBounds": [0.01, …],
            "min": …, "max": …}]}}]}]}]}

One document, a list of them, or one per line (the collector's file exporter). uint64 and
fixed64 fields may be strings (proto-JSON) or numbers.

Only histograms of the metrics ``slacheck.metering.metrics`` interprets are kept; a data point
that cannot be read is set aside with its reason, counted, and its first locations kept. Points
come out as deltas: a cumulative series is differenced point to point (a restart — a new start
time, or a count that went down — starts it anew). Bucket ``i`` holds values in
``(explicitBounds[i-1], explicitBounds[i]]``; the first is open below, the last above.

What the file cannot be read as at all (not JSON, not a metrics export, a list where an
object belongs) is an error naming file, line and field.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.inputs import regular_file_problem
from slacheck.trace.otlp import _attributes, export_requests
from slacheck.trace.records import load_json, problem, read_text

#: the OTel GenAI server metrics slacheck reads (all histograms, unit seconds)
SERVER_METRICS = (
    "gen_ai.server.request.duration",
    "gen_ai.server.time_to_first_token",
    "gen_ai.server.time_per_output_token",
)
#: units accepted, as a factor to milliseconds (UCUM codes, as the conventions write them)
_TO_MS = {"s": 1000.0, "ms": 1.0, "us": 0.001}
#: more explicit bounds than this is no latency histogram
MAX_BOUNDS = 1024
#: at most this many locations are kept per set-aside reason
_MAX_EXAMPLES = 3
_DELTA = (1, "1", "AGGREGATION_TEMPORALITY_DELTA")
_CUMULATIVE = (2, "2", "AGGREGATION_TEMPORALITY_CUMULATIVE")
#: nanoseconds since 1970 that are before 2200 (beyond that a timestamp is a defect)
_MAX_NANOS = 7_258_118_400 * 10**9
#: more observations than this in one point is no histogram (and would not fit the table)
MAX_COUNT = 2**53
#: ``DataPointFlags.FLAG_NO_RECORDED_VALUE``: the point holds no value (a gap, not zeros)
_NO_RECORDED_VALUE = 1


class SetAside:
    """Reasons a data point is not read (stable strings: JSON consumers match on them)."""

    EXPONENTIAL = "exponential_histogram"
    NOT_HISTOGRAM = "not_a_histogram"
    UNIT = "unknown_unit"
    TEMPORALITY = "unknown_temporality"
    TIME = "bad_time"
    NO_START = "no_start_time"
    BOUNDS = "bad_explicit_bounds"
    COUNTS = "bad_bucket_counts"
    COUNT_MISMATCH = "count_not_sum_of_buckets"
    NO_VALUE = "no_recorded_value"
    OVERLAP = "overlapping_interval"
    RESET_OVERLAP = "restart_overlaps_counted_interval"


_SCHEMA = pa.schema(
    [
        ("point_id", pa.int64()),
        ("metric", pa.string()),
        ("series", pa.string()),
        ("provider", pa.string()),
        ("request_model", pa.string()),
        ("response_model", pa.string()),
        ("endpoint", pa.string()),
        ("error_type", pa.string()),
        ("start_us", pa.int64()),
        ("end_us", pa.int64()),
        ("count", pa.int64()),
        ("sum_ms", pa.float64()),
    ]
)
_BUCKET_SCHEMA = pa.schema(
    [
        ("point_id", pa.int64()),
        ("lo_ms", pa.float64()),  # exclusive; -inf for the first bucket
        ("hi_ms", pa.float64()),  # inclusive; +inf for the last bucket
        ("n", pa.int64()),
    ]
)


@dataclass(frozen=True)
class MetricPoints:
    """Histogram points (deltas) of one or more metrics files, and what was set aside."""

    points: pa.Table  # one row per point (``_SCHEMA``)
    buckets: pa.Table  # one row per non-empty bucket of a point (``_BUCKET_SCHEMA``)
    sources: tuple[dict[str, Any], ...]  # path, sha256, data points read
    set_aside: dict[str, int] = field(default_factory=dict)
    #: the first few locations per reason: "file:line: field"
    set_aside_at: dict[str, list[str]] = field(default_factory=dict)
    #: other metrics in the files (not read), by name: data points
    other_metrics: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": list(self.sources),
            "points": self.points.num_rows,
            "by_metric": dict(
                sorted(Counter(str(m) for m in self.points.column("metric").to_pylist()).items())
            ),
            "set_aside": dict(sorted(self.set_aside.items())),
            "set_aside_at": {k: v for k, v in sorted(self.set_aside_at.items())},
            "other_metrics": dict(sorted(self.other_metrics.items())),
        }


@dataclass(slots=True)
class _Raw:
    """One readable data point before differencing."""

    ref: str
    metric: str
    series: str
    attrs: dict[str, object]
    cumulative: bool
    start: int  # ns; 0 when unset
    end: int  # ns
    count: int
    sum_ms: float | None
    bounds: tuple[float, ...]  # ms
    counts: tuple[int, ...]


@dataclass
class _Reader:
    path: Path
    problems: list[Problem] = field(default_factory=list)
    set_aside: Counter[str] = field(default_factory=Counter)
    set_aside_at: dict[str, list[str]] = field(default_factory=dict)
    other: Counter[str] = field(default_factory=Counter)
    raw: list[_Raw] = field(default_factory=list)
    read: int = 0

    def aside(self, reason: str, ref: str, n: int = 1) -> None:
        self.set_aside[reason] += n
        at = self.set_aside_at.setdefault(reason, [])
        if len(at) < _MAX_EXAMPLES:
            at.append(f"{self.path}: {ref}")


def read_otlp_metrics(paths: list[Path]) -> MetricPoints:
    """Read OTLP/JSON metrics files; bad structure raises ``TraceInputError`` (exit 2)."""
    raws: list[_Raw] = []
    sources: list[dict[str, Any]] = []
    set_aside: Counter[str] = Counter()
    at: dict[str, list[str]] = {}
    other: Counter[str] = Counter()
    for path in paths:
        refused = regular_file_problem(path, "metrics file")
        if refused is not None:
            raise TraceInputError([refused])
        reader = _Reader(path)
        text = read_text(path)
        loaded = load_json(path)
        for prefix, request in _requests(path, loaded.value, loaded.line_numbers, reader):
            _read_request(reader, prefix, request)
        if reader.problems:
            raise TraceInputError(reader.problems)
        raws.extend(reader.raw)
        set_aside.update(reader.set_aside)
        for k, v in reader.set_aside_at.items():
            at.setdefault(k, []).extend(v[: _MAX_EXAMPLES - len(at.get(k, []))])
        other.update(reader.other)
        sources.append(
            {
                "path": str(path),
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "data_points": reader.read,
            }
        )
    points, buckets = _deltas(raws, set_aside, at)
    return MetricPoints(
        points=pa.Table.from_pylist(points, schema=_SCHEMA),
        buckets=pa.Table.from_pylist(buckets, schema=_BUCKET_SCHEMA),
        sources=tuple(sources),
        set_aside=dict(set_aside),
        set_aside_at=at,
        other_metrics=dict(other),
    )


def _requests(
    path: Path, value: Any, line_numbers: tuple[int, ...] | None, reader: _Reader
) -> list[tuple[str, dict[str, Any]]]:
    return export_requests(
        path,
        value,
        line_numbers,
        reader.problems,
        key="resourceMetrics",
        what="OTLP metrics",
        line_reason=Reason.UNKNOWN_FORMAT,
        fix="export with the OpenTelemetry collector's file exporter (JSON)",
        lines_may_hold_none=True,
    )


def _items(
    reader: _Reader, container: Mapping[str, Any], key: str, at: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of ``container[key]``; a missing list is empty, a wrong one a problem."""
    items = container.get(key)
    if items is None:
        return
    if not isinstance(items, list):
        reader.problems.append(problem(reader.path, "expected a list", field=f"{at}{key}"))
        return
    for index, item in enumerate(items):
        if isinstance(item, dict):
            yield index, item
        else:
            reader.problems.append(
                problem(reader.path, "expected an object", field=f"{at}{key}[{index}]")
            )


def _read_request(reader: _Reader, prefix: str, request: dict[str, Any]) -> None:
    for i, rm in _items(reader, request, "resourceMetrics", prefix):
        resource = rm.get("resource")
        resource_attrs = _attributes(
            resource.get("attributes") if isinstance(resource, dict) else None
        )
        at_resource = f"{prefix}resourceMetrics[{i}]."
        for j, sm in _items(reader, rm, "scopeMetrics", at_resource):
            at_scope = f"{at_resource}scopeMetrics[{j}]."
            for k, metric in _items(reader, sm, "metrics", at_scope):
                _read_metric(reader, f"{at_scope}metrics[{k}]", metric, resource_attrs)


def _read_metric(
    reader: _Reader, at: str, metric: dict[str, Any], resource: dict[str, object]
) -> None:
    name = metric.get("name")
    if not isinstance(name, str) or name not in SERVER_METRICS:
        data: object = next((metric[k] for k in _DATA_KEYS if isinstance(metric.get(k), dict)), {})
        points = data.get("dataPoints") if isinstance(data, dict) else None
        reader.other[str(name)] += len(points) if isinstance(points, list) else 0
        return
    for kind in ("exponentialHistogram", "gauge", "sum", "summary"):
        if kind in metric:
            data = metric[kind]
            points = data.get("dataPoints") if isinstance(data, dict) else None
            n = len(points) if isinstance(points, list) else 1
            reason = (
                SetAside.EXPONENTIAL if kind == "exponentialHistogram" else (SetAside.NOT_HISTOGRAM)
            )
            reader.read += n
            reader.aside(reason, f"{at}.{kind}", n)
    histogram = metric.get("histogram")
    if histogram is None:
        return
    if not isinstance(histogram, dict):
        reader.problems.append(problem(reader.path, "expected an object", field=f"{at}.histogram"))
        return
    at_h = f"{at}.histogram."
    unit = metric.get("unit", "s")
    factor = _TO_MS.get(unit) if isinstance(unit, str) else None
    temporality = histogram.get("aggregationTemporality")
    for p, point in _items(reader, histogram, "dataPoints", at_h):
        ref = f"{at_h}dataPoints[{p}]"
        reader.read += 1
        if factor is None:
            reader.aside(SetAside.UNIT, f"{at}.unit")
            continue
        if temporality not in _DELTA and temporality not in _CUMULATIVE:
            reader.aside(SetAside.TEMPORALITY, f"{at_h}aggregationTemporality")
            continue
        raw = _read_point(reader, ref, point, name, resource, factor)
        if raw is not None:
            raw.cumulative = temporality in _CUMULATIVE
            reader.raw.append(raw)


_DATA_KEYS = ("histogram", "exponentialHistogram", "gauge", "sum", "summary")


def _uint(value: object) -> int | None:
    """A uint64 as proto-JSON writes it (a string) or as some exporters do (a number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, int) and value >= 0:
        return value
    return None


def _double(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):  # proto-JSON writes NaN and Infinity as strings
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _read_point(
    reader: _Reader,
    ref: str,
    point: dict[str, Any],
    metric: str,
    resource: dict[str, object],
    factor: float,
) -> _Raw | None:
    flags = _uint(point.get("flags", 0))
    if flags is not None and flags & _NO_RECORDED_VALUE:
        reader.aside(SetAside.NO_VALUE, f"{ref}.flags")
        return None
    end = _uint(point.get("timeUnixNano"))
    start = _uint(point.get("startTimeUnixNano", 0))
    if end is None or end == 0 or end >= _MAX_NANOS:
        reader.aside(SetAside.TIME, f"{ref}.timeUnixNano")
        return None
    if start is None or start > end:
        reader.aside(SetAside.TIME, f"{ref}.startTimeUnixNano")
        return None
    raw_bounds = point.get("explicitBounds", [])
    raw_counts = point.get("bucketCounts", [])
    if not isinstance(raw_bounds, list) or len(raw_bounds) > MAX_BOUNDS:
        reader.aside(SetAside.BOUNDS, f"{ref}.explicitBounds")
        return None
    parsed = [_double(b) for b in raw_bounds]
    bounds = [b for b in parsed if b is not None and math.isfinite(b)]
    if (
        len(bounds) != len(parsed)
        or any(a >= b for a, b in itertools.pairwise(bounds))
        or any(not math.isfinite(b * factor) for b in bounds)
    ):
        reader.aside(SetAside.BOUNDS, f"{ref}.explicitBounds")
        return None
    if not isinstance(raw_counts, list) or len(raw_counts) != len(bounds) + 1:
        reader.aside(SetAside.COUNTS, f"{ref}.bucketCounts")
        return None
    counts = [_uint(c) for c in raw_counts]
    if any(c is None or c > MAX_COUNT for c in counts):
        reader.aside(SetAside.COUNTS, f"{ref}.bucketCounts")
        return None
    total = _uint(point.get("count", 0))
    ints = [int(c) for c in counts if c is not None]
    if total is None or total != sum(ints) or total > MAX_COUNT:
        reader.aside(SetAside.COUNT_MISMATCH, f"{ref}.count")
        return None
    s = _double(point.get("sum")) if "sum" in point else None
    attrs = {**resource, **_attributes(point.get("attributes"))}
    series = json.dumps([metric, sorted((k, str(v)) for k, v in attrs.items())], ensure_ascii=False)
    return _Raw(
        ref=ref,
        metric=metric,
        series=series,
        attrs=attrs,
        cumulative=False,
        start=start,
        end=end,
        count=total,
        sum_ms=None if s is None or not math.isfinite(s) else s * factor,
        bounds=tuple(b * factor for b in bounds),
        counts=tuple(ints),
    )


def _text(attrs: Mapping[str, object], *keys: str) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def _deltas(
    raws: list[_Raw], set_aside: Counter[str], at: dict[str, list[str]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each series as deltas, in time order: cumulative points differenced, restarts begun
    anew, overlapping intervals set aside."""

    def aside(reason: str, ref: str) -> None:
        set_aside[reason] += 1
        where = at.setdefault(reason, [])
        if len(where) < _MAX_EXAMPLES:
            where.append(ref)

    by_series: dict[tuple[str, bool], list[_Raw]] = {}
    for r in raws:
        by_series.setdefault((r.series, r.cumulative), []).append(r)
    points: list[dict[str, Any]] = []
    buckets: list[dict[str, Any]] = []

    def emit(r: _Raw, start: int, counts: tuple[int, ...], total: int, s: float | None) -> None:
        pid = len(points)
        points.append(
            {
                "point_id": pid,
                "metric": r.metric,
                "series": r.series,
                "provider": _text(r.attrs, "gen_ai.provider.name", "gen_ai.system"),
                "request_model": _text(r.attrs, "gen_ai.request.model"),
                "response_model": _text(r.attrs, "gen_ai.response.model"),
                "endpoint": _text(r.attrs, "server.address"),
                "error_type": _text(r.attrs, "error.type"),
                "start_us": start // 1000,
                "end_us": r.end // 1000,
                "count": total,
                "sum_ms": s,
            }
        )
        edges = (-math.inf, *r.bounds, math.inf)
        for i, n in enumerate(counts):
            if n:
                buckets.append({"point_id": pid, "lo_ms": edges[i], "hi_ms": edges[i + 1], "n": n})

    for (_, cumulative), series in by_series.items():
        series.sort(key=lambda r: (r.end, r.start))
        if not cumulative:
            counted_to = 0
            for r in series:
                if r.start == 0:
                    aside(SetAside.NO_START, r.ref)
                elif r.start < counted_to:
                    aside(SetAside.OVERLAP, r.ref)
                else:
                    emit(r, r.start, r.counts, r.count, r.sum_ms)
                    counted_to = r.end
            continue
        prev: _Raw | None = None
        counted_to = 0
        for r in series:
            restart = (
                prev is None
                or r.start != prev.start
                or r.bounds != prev.bounds
                or r.count < prev.count
                or any(a < b for a, b in zip(r.counts, prev.counts, strict=True))
            )
            if not restart and prev is not None:
                if r.end == prev.end:
                    aside(SetAside.OVERLAP, r.ref)
                    continue
                diff = tuple(a - b for a, b in zip(r.counts, prev.counts, strict=True))
                s = (
                    None
                    if r.sum_ms is None or prev.sum_ms is None
                    else max(0.0, r.sum_ms - prev.sum_ms)
                )
                emit(r, prev.end, diff, r.count - prev.count, s)
                counted_to = r.end
            elif r.start == 0:
                aside(SetAside.NO_START, r.ref)
            elif r.start < counted_to:
                # a restart whose interval reaches back into what was counted: its counts
                # would count those observations twice; it is the base for what follows
                aside(SetAside.RESET_OVERLAP, r.ref)
            else:
                emit(r, r.start, r.counts, r.count, r.sum_ms)
                counted_to = r.end
            prev = r
    return points, buckets


__all__ = ["SERVER_METRICS", "MetricPoints", "SetAside", "read_otlp_metrics"]
