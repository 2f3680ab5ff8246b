"""Can the trace reproduce the contracted statistic: timestamp grain, time slices, percentiles?"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import ibis.expr.types as ir

from slacheck.contract.model import Contract, LatencyTerm, MeasurementPoint, TimeSliceObjective
from slacheck.contract.review import Severity
from slacheck.match.mismatch.core import Code, Mismatch, UnitSaid, aggregate_row, as_int, task_scope
from slacheck.messages import NC_, NPC_, MessageCode, Param
from slacheck.metering.context import Metering
from slacheck.metering.derive import point_value, scoped, succeeded
from slacheck.metering.windowexpr import window_label_expr

__all__ = ["StatisticSaid", "find_reproducibility", "timestamp_resolution_us"]

_MS = 1_000
_S = 1_000_000
_MIN = 60 * _S
_HOUR = 60 * _MIN


class StatisticSaid(MessageCode):
    """What the reproducibility finder says."""

    GRAIN_MICROSECOND = NC_("mismatch.grain.microsecond", "microsecond")
    GRAIN_MILLISECOND = NC_("mismatch.grain.millisecond", "millisecond")
    GRAIN_SECOND = NC_("mismatch.grain.second", "second")
    GRAIN_MINUTE = NC_("mismatch.grain.minute", "minute")
    GRAIN_HOUR = NC_("mismatch.grain.hour", "hour")
    COARSE_SLICES_TITLE = NC_(
        "mismatch.coarse_timestamps.slices.title",
        "{term}: timestamps are recorded to the {grain}, too coarse for {minutes}-minute slices",
    )
    COARSE_SLICES_DETAIL = NC_(
        "mismatch.coarse_timestamps.slices.detail",
        "Calls cannot be placed in the contracted time slices; record start and end times to "
        "the millisecond.",
    )
    SPARSE_TITLE = NPC_(
        "mismatch.sparse_slices.title",
        "{term}: {sparse} of {slices} {minutes}-minute slice with calls falls below the minimum "
        "measurable call count ({min_calls})",
        "{term}: {sparse} of {slices} {minutes}-minute slices with calls fall below the minimum "
        "measurable call count ({min_calls})",
        count="slices",
    )
    SPARSE_DETAIL = NPC_(
        "mismatch.sparse_slices.detail",
        "The contract counts a slice below its minimum call count ({min_calls}) as empty, so "
        "{sparse} slice with traffic drops out of the {passing} % target (slices aligned to UTC).",
        "The contract counts a slice below its minimum call count ({min_calls}) as empty, so "
        "{sparse} slices with traffic drop out of the {passing} % target (slices aligned to UTC).",
        count="sparse",
    )
    COARSE_THRESHOLD_TITLE = NC_(
        "mismatch.coarse_timestamps.threshold.title",
        "{term}: timestamps are recorded to the {grain}, coarse for a {threshold} ms threshold",
    )
    COARSE_THRESHOLD_DETAIL = NC_(
        "mismatch.coarse_timestamps.threshold.detail",
        "Durations come from start and end times; at this grain a figure near the threshold "
        "cannot be told apart from one beyond it.",
    )
    WINDOW_COUNT = NC_("mismatch.window_count", "{window}: {n}")
    MAXIMUM_TITLE = NC_(
        "mismatch.percentile_is_maximum.title",
        "{term}: p{percentile} over fewer than {needed} {unit} is the largest value ({windows})",
    )
    MAXIMUM_DETAIL_GUARDED = NPC_(
        "mismatch.percentile_is_maximum.detail.guarded",
        "By nearest rank, p{percentile} of fewer than {needed} value is their maximum, so one "
        "slow outlier decides the window. The contract's min_samples ({min_samples}) makes such "
        "windows 'no data'.",
        "By nearest rank, p{percentile} of fewer than {needed} values is their maximum, so one "
        "slow outlier decides the window. The contract's min_samples ({min_samples}) makes such "
        "windows 'no data'.",
        count="needed",
    )
    MAXIMUM_DETAIL = NPC_(
        "mismatch.percentile_is_maximum.detail",
        "By nearest rank, p{percentile} of fewer than {needed} value is their maximum, so one "
        "slow outlier decides the window. Set min_samples in the contract so such windows give "
        "'no data'.",
        "By nearest rank, p{percentile} of fewer than {needed} values is their maximum, so one "
        "slow outlier decides the window. Set min_samples in the contract so such windows give "
        "'no data'.",
        count="needed",
    )


_UNITS = (_MS, _S, _MIN, _HOUR)


def timestamp_resolution_us(calls: ir.Table) -> int | None:
    """The coarsest unit (1 µs, 1 ms, 1 s, 1 min, 1 h) every call start and end is a multiple of."""
    return resolution_from(aggregate_row(calls, **resolution_aggregates(calls)))


def resolution_aggregates(calls: ir.Table) -> dict[str, ir.Scalar]:
    """``timestamp_resolution_us``'s counts, for a query that computes others beside them."""
    off = {f"off{u}": ((calls.start_us % u != 0) | (calls.end_us % u != 0)).sum() for u in _UNITS}
    return {"n": calls.count(), **off}


def resolution_from(row: dict[str, Any]) -> int | None:
    """``timestamp_resolution_us`` from ``resolution_aggregates``' values."""
    if not as_int(row["n"]):
        return None
    res = 1
    for u in _UNITS:
        if as_int(row[f"off{u}"]):
            break
        res = u
    return res


def _grain(us: int) -> Param:
    said = {
        1: StatisticSaid.GRAIN_MICROSECOND,
        _MS: StatisticSaid.GRAIN_MILLISECOND,
        _S: StatisticSaid.GRAIN_SECOND,
        _MIN: StatisticSaid.GRAIN_MINUTE,
        _HOUR: StatisticSaid.GRAIN_HOUR,
    }.get(us)
    return said() if said is not None else f"{us} µs"


def _term_values(
    contract: Contract, term: LatencyTerm, c: ir.Table, tasks: ir.Table
) -> tuple[ir.Table, str]:
    """The term's measurable in-scope units as a table with ``ts_us`` (start), and the unit."""
    if term.measurement_point is MeasurementPoint.TASK_END_TO_END:
        j = task_scope(c, tasks, contract, term)
        j = j.filter((j.in_scope_calls > 0) & j.task_ms.notnull())
        return j.select(ts_us=j.start_us), "tasks"
    _, src = point_value(c, term.measurement_point, term.tokens_per_second_basis)
    keep = scoped(c, contract, term) & succeeded(c) & src.notnull() & (src != "client")
    x = c.filter(keep)
    return x.select(ts_us=x.start_us), "calls"


def find_reproducibility(
    m: Metering, c: ir.Table, tasks: ir.Table, every: tuple[int, int] | None, res: int | None
) -> Iterable[Mismatch]:
    """Can the trace reproduce the contracted statistic: slices, timestamp grain, percentiles.
    ``res``: the calls' ``timestamp_resolution_us``."""
    contract = m.contract
    if not contract.latency or every is None:
        return
    for term in contract.latency:
        o = term.objective
        values, unit = _term_values(contract, term, c, tasks)
        if isinstance(o, TimeSliceObjective):
            slice_us = o.slice_minutes * _MIN
            if res is not None and res >= slice_us:
                yield Mismatch(
                    Code.COARSE_TIMESTAMPS,
                    Severity.HIGH,
                    term.id,
                    StatisticSaid.COARSE_SLICES_TITLE(
                        term=term.id, grain=_grain(res), minutes=o.slice_minutes
                    ),
                    StatisticSaid.COARSE_SLICES_DETAIL(),
                    {"resolution_us": res, "slice_minutes": o.slice_minutes},
                )
            per = values.group_by(slice=values.ts_us // slice_us).aggregate(n=values.count())
            r = aggregate_row(
                per,
                slices=per.count(),
                sparse=(per.n < o.min_calls_per_slice).sum(),
            )
            slices, sparse = as_int(r["slices"]), as_int(r["sparse"])
            if sparse:
                yield Mismatch(
                    Code.SPARSE_SLICES,
                    Severity.HIGH if sparse * 2 > slices else Severity.MEDIUM,
                    term.id,
                    StatisticSaid.SPARSE_TITLE(
                        term=term.id,
                        sparse=sparse,
                        slices=slices,
                        minutes=o.slice_minutes,
                        min_calls=o.min_calls_per_slice,
                    ),
                    StatisticSaid.SPARSE_DETAIL(
                        min_calls=o.min_calls_per_slice,
                        sparse=sparse,
                        passing=o.slices_passing_percent,
                    ),
                    {
                        "slices_with_calls": slices,
                        "sparse_slices": sparse,
                        "min_calls_per_slice": o.min_calls_per_slice,
                        "slice_minutes": o.slice_minutes,
                    },
                )
            continue
        # occurrence objective
        if (
            res is not None
            and term.measurement_point
            in (MeasurementPoint.FULL_RESPONSE, MeasurementPoint.TASK_END_TO_END)
            and res / _MS * 10 > o.threshold
        ):
            yield Mismatch(
                Code.COARSE_TIMESTAMPS,
                Severity.MEDIUM,
                term.id,
                StatisticSaid.COARSE_THRESHOLD_TITLE(
                    term=term.id, grain=_grain(res), threshold=o.threshold
                ),
                StatisticSaid.COARSE_THRESHOLD_DETAIL(),
                {"resolution_us": res, "threshold_ms": o.threshold},
            )
        needed = 100.0 / (100.0 - o.percentile)
        wins = m.windows(term.window)
        labelled = values.mutate(window=window_label_expr(values.ts_us, wins))
        counts = labelled.group_by("window").aggregate(n=labelled.count()).to_pyarrow().to_pylist()
        thin = sorted(
            (str(x["window"]), int(x["n"]))
            for x in counts
            if x["window"] is not None and int(x["n"]) < needed
        )
        if thin:
            guarded = term.min_samples is not None and term.min_samples >= needed
            yield Mismatch(
                Code.PERCENTILE_IS_MAXIMUM,
                Severity.LOW if guarded else Severity.MEDIUM,
                term.id,
                StatisticSaid.MAXIMUM_TITLE(
                    term=term.id,
                    percentile=o.percentile,
                    needed=math.ceil(needed),
                    unit=UnitSaid.UNIT_TASKS() if unit == "tasks" else UnitSaid.UNIT_CALLS(),
                    windows=[StatisticSaid.WINDOW_COUNT(window=w, n=n) for w, n in thin],
                ),
                (
                    StatisticSaid.MAXIMUM_DETAIL_GUARDED(
                        percentile=o.percentile,
                        needed=math.ceil(needed),
                        min_samples=term.min_samples,
                    )
                    if guarded
                    else StatisticSaid.MAXIMUM_DETAIL(
                        percentile=o.percentile, needed=math.ceil(needed)
                    )
                ),
                {
                    "percentile": o.percentile,
                    "values_needed": math.ceil(needed),
                    "windows": {w: n for w, n in thin},
                    "min_samples": term.min_samples,
                },
            )
