"""Where a contract and a trace meter different things: the mismatches a verdict must carry."""

# Each finder answers one question a procurement team or an acceptance engineer asks before
# trusting a verdict, one finder to a module with the messages it says: does the contract's
# scope match any call (scope); is the contracted point in the trace at all, was it measured at
# a later point (which can prove "met" but never "breached"), is the tokens/s basis stated and
# measurable (points); can the trace reproduce the percentile or the time slices
# (reproducibility); does it cover the contracted windows (window_coverage) in the contract's
# own time zone (time_zone); how much of the task time the contracted point leaves unprotected
# (task_time). ``core`` holds the types and the per-term coverage they share. Every number is
# an Ibis aggregate; Python only loops over contract terms and calendar windows.

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ibis.expr.types as ir

from slacheck.contract.model import Contract
from slacheck.match.mismatch.core import (
    Code,
    Mismatch,
    Range,
    TermCoverage,
    UnitSaid,
    aggregate_row,
    task_scope,
    term_coverage,
)
from slacheck.match.mismatch.points import PointSaid, find_points
from slacheck.match.mismatch.reproducibility import (
    StatisticSaid,
    find_reproducibility,
    resolution_aggregates,
    resolution_from,
    timestamp_resolution_us,
)
from slacheck.match.mismatch.scope import ScopeSaid, find_scope
from slacheck.match.mismatch.task_time import TaskTimeSaid, find_task_time
from slacheck.match.mismatch.time_zone import ZoneSaid, find_time_zone
from slacheck.match.mismatch.window_coverage import CoverageSaid, find_window_coverage
from slacheck.messages import CodeIndex
from slacheck.metering.context import Metering
from slacheck.metering.derive import scoped
from slacheck.results import ScopeMatch
from slacheck.trace.traces import Traces

__all__ = [
    "Code",
    "Extent",
    "Mismatch",
    "Said",
    "TermCoverage",
    "extent_aggregates",
    "extent_from",
    "find_mismatches",
    "task_scope",
    "term_coverage",
    "timestamp_resolution_us",
]

#: every mismatch message by member name (``Said.SHARE``), whichever finder says it
Said = CodeIndex(
    ScopeSaid, PointSaid, UnitSaid, StatisticSaid, CoverageSaid, ZoneSaid, TaskTimeSaid
)


def find_mismatches(
    contract: Contract,
    traces: Traces,
    calls: ir.Table,
    tasks: ir.Table,
    *,
    coverage: Sequence[TermCoverage] | None = None,
    metering: Metering | None = None,
    scope: ScopeMatch | None = None,
    extent: Extent | None = None,
) -> tuple[Mismatch, ...]:
    """Every metering mismatch between ``contract`` and the traces, most severe first.

    ``calls`` and ``tasks`` are ``derive.calls(traces)`` and ``derive.tasks(traces)``, best
    ``.cache()``d: a dozen small queries run on them. ``coverage`` (from ``term_coverage``) is
    recomputed when not given; ``metering``: the run's metering model, whose windows and
    coverage the window mismatches report (one is made when not given); ``scope``: the
    contract scope's ``scope_match`` over ``calls``, when the caller has it; ``extent``: the
    calls' ``Extent`` (``extent_aggregates``), when the caller has computed it.
    """
    m = metering if metering is not None else Metering(contract, traces)
    cov = tuple(coverage) if coverage is not None else term_coverage(contract, calls, tasks)
    if extent is None:
        aggs = extent_aggregates(calls, scoped(calls, contract))
        extent = extent_from(aggregate_row(calls, **aggs))
    found: list[Mismatch] = []
    found += find_scope(contract, calls, scope)
    found += find_points(contract, cov)
    found += find_reproducibility(m, calls, tasks, extent.every, extent.resolution_us)
    found += find_window_coverage(m)
    found += find_time_zone(contract, calls, extent.scoped)
    found += find_task_time(contract, calls, tasks)
    return tuple(sorted(found, key=lambda m: m.severity.rank))


@dataclass(frozen=True, slots=True)
class Extent:
    """Where the calls lie in time: first start → last end of every call and of the calls in
    the contract's scope, and the coarsest unit every start and end is a multiple of."""

    every: Range
    scoped: Range
    resolution_us: int | None


def extent_aggregates(c: ir.Table, sc: ir.BooleanValue) -> dict[str, ir.Scalar]:
    """``Extent``'s figures as aggregates over the calls ``c``, of which ``sc`` are in the
    contract's scope (``extent_from`` reads them)."""
    return {
        "lo": c.start_us.min(),
        "hi": c.end_us.max(),
        "slo": c.start_us.min(where=sc),
        "shi": c.end_us.max(where=sc),
        **{f"res_{k}": v for k, v in resolution_aggregates(c).items()},
    }


def extent_from(row: dict[str, Any]) -> Extent:
    """The ``Extent`` of ``extent_aggregates``' values."""
    every = None if row["lo"] is None else (int(row["lo"]), int(row["hi"]))
    in_scope = None if row["slo"] is None else (int(row["slo"]), int(row["shi"]))
    res = resolution_from({k[4:]: v for k, v in row.items() if k.startswith("res_")})
    return Extent(every, in_scope, res)
