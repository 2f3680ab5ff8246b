"""The latency check: each latency term per window, at its point or bounded by a later one.

How a term is metered:

- units: ok model calls in scope (``server_processing``: ``server_ms``; ``time_to_first_token``:
  ``ttft_ms``; ``full_response``: ``duration_ms``; ``output_tokens_per_second``: tokens/s over
  the whole request or after the first token), or tasks holding an in-scope call
  (``task_end_to_end``: ``task_ms``, windowed by the task's start);
- excluded units (maintenance, long input, downgraded tier, customer error) are counted by reason
  and left out; failed calls (and tasks whose root span failed) are counted and left out;
- occurrence objectives use exact order statistics (nearest rank: the k-th smallest value with
  k = ceil(p·n/100); linear: interpolation at the 0-based rank (n−1)·p/100); an ``at_least``
  objective reads the same rank counted from the top, so it is met exactly when at least
  ceil(p·n/100) values reach the threshold;
- points nest (full response ≥ time to first token, full response ≥ server processing, generation
  speed ≥ whole-request speed), so when the contracted figure is missing a later point can still
  prove one side of the verdict; the other side is ``indeterminate``;
- time-slice objectives compute the statistic per UTC-aligned slice and count passing slices.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import ibis
import ibis.expr.types as ir
import numpy as np
import numpy.typing as npt

from slacheck.checks.registry import check
from slacheck.contract.model import (
    AtTheLimit,
    Direction,
    ExcludedInTaskTerms,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    PercentileMethod,
    TimeSliceObjective,
    TokensPerSecondBasis,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.metering import derive
from slacheck.metering import metrics as server_metrics
from slacheck.metering.context import CheckContext, Exclusion
from slacheck.metering.rank import bucket, exact_percent, nearest_rank, order_stats
from slacheck.metering.windowed import examples_by_window
from slacheck.metering.windowexpr import window_index_expr
from slacheck.results import Losses, LossSays
from slacheck.verdict import TermKind, TermResult, Verdict
from slacheck.windows import CalendarWindow

#: exclusion reasons in the order ``CheckContext.exclusion_reason`` tries them: a task with
#: calls excluded for several reasons is counted once, under the first
_REASON_ORDER = tuple(str(e) for e in Exclusion)
_SLICE_PERCENTILES = {"p50": 50, "p90": 90, "p95": 95, "p99": 99}
_US_PER_MINUTE = 60_000_000
_NULL_FLOAT = ibis.null().cast("float64")
#: unit states that are measured: ok, and no status recorded (see metering.derive.succeeded)
_ANSWERED = ["ok", "unknown"]
#: a unit's state as the check's table stores it (``_compact``), the answered states first
_STATE_CODES = {"ok": 0, "unknown": 1, "failed": 2}
_ANSWERED_CODES = [_STATE_CODES[s] for s in _ANSWERED]
#: what latency terms read of a call (scope columns included, for ``derive.scoped``)
_CALL_COLUMNS = (
    "task_id",
    "span_id",
    "start_us",
    "state",
    "provider",
    "provider_key",
    "model",
    "requested",
    "served_model",
    "endpoint",
    "server_ms",
    "ttft_ms",
    "duration_ms",
    "tps_whole",
    "tps_gen",
)


class LatencySays(MessageCode):
    """What the latency check says: its criteria and notes."""

    # criteria
    AT_MOST = NC_(
        "check.latency.criterion.at_most",
        "p{percentile} ≤ {threshold} {unit} ({method}) at {point}, {scope}",
    )
    AT_LEAST = NC_(
        "check.latency.criterion.at_least",
        "p{percentile} ≥ {threshold} {unit} ({method}, from the top: {share} % of {noun} at or "
        "above) at {point}, {scope}",
    )
    SLICES_AT_MOST = NC_(
        "check.latency.criterion.slices_at_most",
        "{statistic} {unit} ≤ {threshold} in ≥ {share} % of {slices}, {scope}, ≥ {min} per slice",
    )
    SLICES_AT_LEAST = NC_(
        "check.latency.criterion.slices_at_least",
        "{statistic} {unit} ≥ {threshold} in ≥ {share} % of {slices}, {scope}, ≥ {min} per slice",
    )
    POINT = NC_("check.latency.point", "{point}")
    POINT_BASIS = NC_("check.latency.point_basis", "{point} ({basis})")
    SLICES = NC_("check.latency.slices", "{minutes}-minute slices")
    SLICES_BASIS = NC_("check.latency.slices_basis", "{minutes}-minute slices ({basis})")
    AFTER_FIRST_TOKEN = NC_("check.latency.basis.after_first_token", "after first token")
    WHOLE_REQUEST = NC_("check.latency.basis.whole_request", "whole request")
    BASIS_UNSTATED = NC_("check.latency.basis.unstated", "whole request; basis unstated")
    SCOPE_CALLS = NC_("check.latency.scope.calls", "answered calls in scope")
    SCOPE_TASKS = NC_("check.latency.scope.tasks", "answered tasks with ≥ 1 in-scope call")
    SCOPE_CALLS_MIN = NPC_(
        "check.latency.scope.calls_min",
        "answered calls in scope, ≥ {min} call",
        "answered calls in scope, ≥ {min} calls",
        count="min",
    )
    SCOPE_TASKS_MIN = NPC_(
        "check.latency.scope.tasks_min",
        "answered tasks with ≥ 1 in-scope call, ≥ {min} task",
        "answered tasks with ≥ 1 in-scope call, ≥ {min} tasks",
        count="min",
    )
    NEAREST_RANK = NC_("check.latency.method.nearest_rank", "nearest rank")
    LINEAR = NC_("check.latency.method.linear", "linear")
    MEAN = NC_("check.latency.statistic.mean", "mean")
    MIN = NC_("check.latency.statistic.min", "min")
    MS = NC_("check.latency.unit.ms", "ms")
    TOKENS_PER_SECOND = NC_("check.latency.unit.tokens_per_second", "tokens/s")
    CALLS = NPC_("check.latency.noun.calls", "call", "calls")
    TASKS = NPC_("check.latency.noun.tasks", "task", "tasks")
    # which point a window was measured at
    LATER_SERVER = NC_(
        "check.latency.later_point.server",
        "measured at a later point: the client figure bounds the server figure from above",
    )
    LATER_TTFT = NC_(
        "check.latency.later_point.ttft",
        "measured at a later point: the client figure bounds the time-to-first-token figure "
        "from above",
    )
    WHOLE_FOR_GENERATION = NC_(
        "check.latency.whole_for_generation",
        "time to first token missing: the speed over the whole request bounds the generation "
        "speed (after the first token) from below",
    )
    SUBTREE = NC_(
        "check.latency.subtree",
        "tasks not recorded whole (their root is not in the export, or a span of theirs has no "
        "end) count with the time recorded, a lower bound",
    )
    MIXED = NC_(
        "check.latency.mixed",
        "{field} recorded for {n} of {ok} answered {noun} in scope: the others count with "
        "{fallback} ({point}), a bound",
    )
    MIXED_SUBTREE = NPC_(
        "check.latency.mixed_subtree",
        "{field} recorded for {n} of {ok} answered task in scope: the others (an exported "
        "subtree, or a span with no end) count with the time recorded, a lower bound",
        "{field} recorded for {n} of {ok} answered tasks in scope: the others (an exported "
        "subtree, or a span with no end) count with the time recorded, a lower bound",
        count="ok",
    )
    NEITHER = NPC_(
        "check.latency.neither",
        "{n} answered {noun} has neither and is left out",
        "{n} answered {noun} have neither and are left out",
    )
    PARTLY_RECORDED = NC_(
        "check.latency.partly_recorded",
        "{field} recorded for {n} of {ok} answered {noun} in scope; the others are left out",
    )
    # an unstated tokens-per-second basis
    BASIS_ALTERNATIVE = NPC_(
        "check.latency.basis_alternative",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) it is {value} tokens/s over {n} call",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) it is {value} tokens/s over {n} calls",
    )
    BASIS_ALTERNATIVE_DECIDES = NPC_(
        "check.latency.basis_alternative_decides",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) it is {value} tokens/s over {n} call; the verdict depends on the "
        "unstated basis",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) it is {value} tokens/s over {n} calls; the verdict depends on the "
        "unstated basis",
    )
    BASIS_ALTERNATIVE_SLICES = NPC_(
        "check.latency.basis_alternative_slices",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) {share} % of {n} slice passes",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) {share} % of {n} slices pass",
    )
    BASIS_ALTERNATIVE_SLICES_DECIDES = NPC_(
        "check.latency.basis_alternative_slices_decides",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) {share} % of {n} slice passes; the verdict depends on the unstated "
        "basis",
        "tokens-per-second basis unstated: measured over the whole request; after the first token "
        "(generation only) {share} % of {n} slices pass; the verdict depends on the unstated basis",
    )
    BASIS_NO_COMPARISON = NC_(
        "check.latency.basis_no_comparison",
        "tokens-per-second basis unstated: measured over the whole request (the slower "
        "reading); after the first token (generation only) the figure is higher (no time to "
        "first token recorded to compare)",
    )
    # too little, or nothing, to measure
    BELOW_MIN = NC_("check.latency.below_min", "{n} {noun} < minimum {min}")
    SLICES_BELOW_MIN = NPC_(
        "check.latency.slices_below_min",
        "{n} slice with data < minimum {min}",
        "{n} slices with data < minimum {min}",
    )
    EMPTY_SLICES = NPC_(
        "check.latency.empty_slices",
        "{empty} of {spanned} {minutes}-minute slice have no ok {noun} and are left out as empty",
        "{empty} of {spanned} {minutes}-minute slices have no ok {noun} and are left out as empty",
        count="spanned",
    )
    SPARSE_SLICES = NPC_(
        "check.latency.sparse_slices",
        "{empty} of {spanned} {minutes}-minute slice have fewer than {min} ok {noun} and are left "
        "out as empty",
        "{empty} of {spanned} {minutes}-minute slices have fewer than {min} ok {noun} and are "
        "left out as empty",
        count="spanned",
    )
    NO_SLICE = NC_("check.latency.no_slice", "no slice with at least {min} answered {noun}")
    UNKNOWN_STATUS = NPC_(
        "check.latency.unknown_status",
        "{n} {noun} without a recorded status is measured as answered (no status is how "
        "OpenTelemetry records success)",
        "{n} {noun} without a recorded status are measured as answered (no status is how "
        "OpenTelemetry records success)",
    )
    NO_UNITS = NC_("check.latency.no_units", "no {noun} in scope in this window")
    NO_ANSWERED = NC_(
        "check.latency.no_answered",
        "no answered {noun} in scope in this window ({excluded} excluded, {failed} failed)",
    )
    NOT_RECORDED = NPC_(
        "check.latency.not_recorded",
        "{field} not recorded for the {ok} answered {noun} in scope, and no later point",
        "{field} not recorded for any of the {ok} answered {noun} in scope, and no later point",
        count="ok",
    )
    NOT_RECORDED_TASKS = NPC_(
        "check.latency.not_recorded_tasks",
        "{field} not recorded for the {ok} answered task in scope, and no later point (no root "
        "task span, and no task whose spans are all there)",
        "{field} not recorded for any of the {ok} answered tasks in scope, and no later point (no "
        "root task span, and no task whose spans are all there)",
        count="ok",
    )


class Bound(StrEnum):
    """How a stand-in figure relates to the contracted one, call by call."""

    UPPER = "upper"  # stand-in ≥ contracted (a later point of the clock)
    LOWER = "lower"  # stand-in ≤ contracted (whole-request speed vs generation speed)


@dataclass(frozen=True, slots=True)
class Point:
    """Where a figure is read: the point's name, the units column, and its bound if a stand-in."""

    name: str
    #: "_p" (the contracted figure), "_f" (the stand-in), or "_m" (each unit's own contracted
    #: figure where it has one, else its stand-in: a per-call bound)
    column: str
    field: str  # the trace field(s) the figure comes from, for notes
    bound: Bound | None = None
    note: Message | None = None

    @property
    def mixed(self) -> bool:
        return self.column == "_m"


@dataclass(frozen=True, slots=True)
class Units:
    """What a term counts: one row per unit, the contracted figure and a stand-in."""

    #: task_id, start_us, _ex (exclusion reason), _state (ok | failed | unknown), _p, _f, _a
    table: ir.Table
    noun: str  # "calls" | "tasks"
    primary: Point
    fallback: Point | None
    #: for an unstated tokens/s basis: what the figure after the first token would be (``_a``)
    alternative: str | None = None

    @property
    def noun_message(self) -> Message:
        """The counted noun in the plural ("calls", "tasks")."""
        return self.noun_for(2)

    def noun_for(self, n: int) -> Message:
        """The counted noun in the form that agrees with ``n`` ("1 call", "2 calls")."""
        return LatencySays.TASKS(n=n) if self.noun == "tasks" else LatencySays.CALLS(n=n)


@dataclass(frozen=True, slots=True)
class Counts:
    """Per window: the units in scope and how many of them carry each figure."""

    units: int = 0  # not excluded
    ok: int = 0
    failed: int = 0
    unknown: int = 0
    n_p: int = 0
    n_f: int = 0
    n_a: int = 0
    n_m: int = 0  # units with the contracted figure or, failing it, the stand-in
    good_p: int = 0
    good_f: int = 0
    good_m: int = 0
    excluded: dict[str, int] = field(default_factory=dict)

    def n(self, column: str) -> int:
        return {"_p": self.n_p, "_f": self.n_f, "_a": self.n_a, "_m": self.n_m}[column]

    def good(self, column: str) -> int:
        return {"_p": self.good_p, "_f": self.good_f, "_m": self.good_m}[column]


@dataclass(frozen=True, slots=True)
class Rank:
    """Which order statistics make a percentile: 1-based ranks and the interpolation fraction."""

    ranks: tuple[int, ...]
    fraction: float
    details: dict[str, Any]

    def value(self, stats: Mapping[int, float]) -> float:
        lo = stats[self.ranks[0]]
        if len(self.ranks) == 1:
            return lo
        return lo + self.fraction * (stats[self.ranks[1]] - lo)


@check("latency")
def latency(ctx: CheckContext) -> list[TermResult]:
    """Every latency term in every window: one TermResult each."""
    results: list[TermResult] = []
    calls = call_base(ctx) if ctx.contract.latency else None
    for term in ctx.contract.latency:
        results.extend(check_term(ctx, term, calls))
    return results


def call_base(ctx: CheckContext) -> ir.Table:
    """The model calls with what latency terms read, and their exclusion reason.

    ``ctx.calls`` is already a table in the engine, so this stays a cheap projection of it
    rather than a second in-memory copy (which doubled peak memory on 10⁷ spans).
    """
    c = ctx.calls
    return c.select(*_CALL_COLUMNS, _ex=ctx.exclusion_reason(c))


def check_term(
    ctx: CheckContext, term: LatencyTerm, calls: ir.Table | None = None
) -> list[TermResult]:
    """One latency term in each of its windows; ``calls``: a ``call_base`` to reuse."""
    windows = ctx.windows(term.window)
    if not windows:
        return []
    units = term_units(ctx, term, call_base(ctx) if calls is None else calls)
    threshold, direction = term.objective.threshold, term.objective.direction
    passes = _passes(direction, threshold, _inclusive(ctx))
    # a time slice's examples are any of its units; an occurrence's, units beyond the threshold
    t = _compact(units, windows, None if isinstance(term.objective, TimeSliceObjective) else passes)
    counts, counted = _counts(t, units, passes, windows)
    chosen = {w.label: choose_point(units, counts.get(w.label, Counts())) for w in windows}
    if any(p is not None and p.column != "_p" for p, _ in chosen.values()):
        counted = None  # a window measured at another figure: its values are counted anew
    t = t.filter(t._ex.isnull())  # excluded units are counted above and nowhere else
    t = t.mutate(
        _v=_by_window(
            t, {label: p.column for label, (p, _) in chosen.items() if p is not None}, windows
        )
    )
    t = t.mutate(_worst=t._v if direction is Direction.AT_MOST else -t._v)
    if isinstance(term.objective, OccurrenceObjective):
        results = _occurrence(ctx, term, term.objective, units, t, windows, counts, chosen, counted)
    else:
        results = _time_slices(ctx, term, term.objective, units, t, windows, counts, chosen)
    return _with_metrics(ctx, term, windows, results)


def _compact(
    units: Units,
    windows: list[CalendarWindow],
    passes: Callable[[ir.FloatingValue], ir.BooleanValue] | None,
) -> ir.Table:
    """The term's units in its windows, computed once as a table that every later query of the
    term reads. Per unit it holds what those queries read, compactly: ``_w`` is the window's
    position in ``windows`` and ``_state`` a code of ``_STATE_CODES`` (small integers, not a
    label per call); a figure the term has no stand-in or alternative for is left out of the
    table and put back as the constant it is.

    ``passes``: an occurrence objective's test of one figure. The task id (a long string, most
    of the table's size) is kept only for units that fail it at some figure they have, the
    only ones an example can be; a unit that passes at every figure keeps none. Without it
    (time slices: an example is any unit of a failing slice) every unit keeps its id, and the
    start that places it in its slice."""
    u = units.table
    state = ibis.cases(
        *((u._state == name, ibis.literal(code, "int8")) for name, code in _STATE_CODES.items()),
        else_=ibis.literal(_STATE_CODES["failed"], "int8"),
    )
    task_id = u.task_id
    if passes is not None:
        fails = [f.notnull() & ~passes(f) for f in (u._p, u._f)]
        task_id = ibis.ifelse(fails[0] | fails[1], u.task_id, ibis.null().cast("string"))
    cols: dict[str, ir.Value] = {
        "task_id": task_id,
        "_ex": u._ex,
        "_state": state,
        "_w": window_index_expr(u.start_us, windows),
        "_p": u._p,
    }
    if passes is None:
        cols["start_us"] = u.start_us
    if units.fallback is not None:
        cols |= {"_f": u._f, "_m": u._m}
    if units.alternative is not None:
        cols["_a"] = u._a
    t = u.select(**cols)
    t = t.filter(t._w.notnull()).cache()
    constants: dict[str, ir.Value] = {}
    if units.fallback is None:  # no stand-in: _f is null, so _m = coalesce(_p, _f) is _p
        constants |= {"_f": _NULL_FLOAT, "_m": t._p}
    if units.alternative is None:
        constants["_a"] = _NULL_FLOAT
    return t.mutate(**constants)


def _answered(t: ir.Table) -> ir.BooleanValue:
    """Whether a unit of a ``_compact`` table is measured (ok, or no status recorded)."""
    return t._state.isin(_ANSWERED_CODES)


def _position(windows: list[CalendarWindow]) -> dict[str, int]:
    """Window label → its position in ``windows``: the ``_w`` of a ``_compact`` table."""
    return {w.label: i for i, w in enumerate(windows)}


# ---------------------------------------------------------------------------------------------
# Units


def term_units(ctx: CheckContext, term: LatencyTerm, calls: ir.Table) -> Units:
    """The term's units with the contracted figure (``_p``) and its stand-in (``_f``)."""
    scoped = calls.filter(derive.scoped(calls, ctx.contract, term))
    point = term.measurement_point
    if point is MeasurementPoint.TASK_END_TO_END:
        return _task_units(ctx, scoped)
    # one state rule (metering.derive): answered calls are measured, a missing status included
    state = ibis.cases(
        (scoped.state.isin(["ok", "cached"]), "ok"),
        (scoped.state == "unknown", "unknown"),
        else_="failed",
    )
    full = Point("full_response", "_p", "duration_ms")
    p, f, a = scoped.duration_ms, _NULL_FLOAT, _NULL_FLOAT
    primary, fallback, alternative = full, None, None
    if point is MeasurementPoint.SERVER_PROCESSING:
        p, f = scoped.server_ms, scoped.duration_ms
        primary = Point(point.value, "_p", "server_ms")
        fallback = Point(
            "full_response", "_f", "duration_ms", Bound.UPPER, LatencySays.LATER_SERVER()
        )
    elif point is MeasurementPoint.TIME_TO_FIRST_TOKEN:
        p, f = scoped.ttft_ms, scoped.duration_ms
        primary = Point(point.value, "_p", "ttft_ms")
        fallback = Point(
            "full_response",
            "_f",
            "duration_ms",
            Bound.UPPER,
            LatencySays.LATER_TTFT(),
        )
    elif point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        basis = term.tokens_per_second_basis
        if basis is TokensPerSecondBasis.AFTER_FIRST_TOKEN:
            p, f = scoped.tps_gen, scoped.tps_whole
            primary = Point(point.value, "_p", "output_tokens, duration_ms, ttft_ms")
            fallback = Point(
                point.value,
                "_f",
                "output_tokens, duration_ms",
                Bound.LOWER,
                LatencySays.WHOLE_FOR_GENERATION(),
            )
        else:
            p = scoped.tps_whole
            primary = Point(point.value, "_p", "output_tokens, duration_ms")
            if basis is None or basis is TokensPerSecondBasis.UNSTATED:
                # an unstated basis is itself a finding: show what the other reading gives
                a, alternative = scoped.tps_gen, "after_first_token"
    table = scoped.select(
        task_id=scoped.task_id,
        start_us=scoped.start_us,
        _ex=scoped._ex,
        _state=state,
        _p=p.cast("float64"),
        _f=f.cast("float64"),
        _a=a.cast("float64"),
    )
    table = table.mutate(_m=ibis.coalesce(table._p, table._f))
    return Units(table, "calls", primary, fallback, alternative)


def _task_units(ctx: CheckContext, scoped: ir.Table) -> Units:
    """Tasks holding ≥ 1 in-scope call; excluded when any in-scope call of theirs is excluded."""
    known = [(scoped._ex == r, ibis.literal(f"{i}{r}")) for i, r in enumerate(_REASON_ORDER)]
    key = ibis.cases(*known, else_=ibis.literal("9") + scoped._ex)
    per_task = scoped.group_by("task_id").aggregate(_key=key.min())
    s = ctx.traces.spans
    root = s.filter((s.kind == "task") & s.parent_span_id.isnull())
    root_failed = root.group_by("task_id").aggregate(
        _rfail=(root.status.notnull() & (root.status != "ok")).any()
    )
    tasks = ctx.tasks.inner_join(per_task, "task_id")
    j = tasks.left_join(root_failed, tasks.task_id == root_failed.task_id).drop("task_id_right")
    # an exported subtree (no root in the export) is part of its task, and a task with a span
    # still open is longer than what is recorded: either time is a lower bound on the task's,
    # counted as a bound (see _mixed), never as the task's time
    subtree = derive.lower_bound(j.task_source)
    whole = ibis.ifelse(subtree, _NULL_FLOAT, j.task_ms.cast("float64"))
    part = ibis.ifelse(subtree, j.task_ms.cast("float64"), _NULL_FLOAT)
    # readings.excluded_calls_in_task_terms: remove_task (default) takes a task with an excluded
    # call out; remove_call keeps the task, whose time still includes that call
    keep_task = (
        ctx.contract.readings.excluded_calls_in_task_terms is ExcludedInTaskTerms.REMOVE_CALL
    )
    table = j.select(
        task_id=j.task_id,
        start_us=j.start_us,
        _ex=ibis.null().cast("string") if keep_task else j._key.substr(1),
        _state=ibis.ifelse(j._rfail.fill_null(False), "failed", "ok"),
        _p=whole,
        _f=part,
        _a=_NULL_FLOAT,
        _m=j.task_ms.cast("float64"),
    )
    primary = Point(MeasurementPoint.TASK_END_TO_END.value, "_p", "task_ms")
    fallback = Point(
        MeasurementPoint.TASK_END_TO_END.value,
        "_f",
        "task_ms",
        Bound.LOWER,
        LatencySays.SUBTREE(),
    )
    return Units(table, "tasks", primary, fallback)


def _passes(
    direction: Direction, threshold: float, inclusive: bool = True
) -> Callable[[ir.FloatingValue], ir.BooleanValue]:
    """Per value: within the threshold (``inclusive``: a value at the limit is within)."""

    def passes(v: ir.FloatingValue) -> ir.BooleanValue:
        if direction is Direction.AT_MOST:
            cmp = v <= threshold if inclusive else v < threshold
        else:
            cmp = v >= threshold if inclusive else v > threshold
        return cmp.fill_null(False)

    return passes


def _meets(direction: Direction, value: float, threshold: float, inclusive: bool = True) -> bool:
    if direction is Direction.AT_MOST:
        return value <= threshold if inclusive else value < threshold
    return value >= threshold if inclusive else value > threshold


def _inclusive(ctx: CheckContext) -> bool:
    """The contract's reading of a value exactly at the limit (``readings.at_the_limit``)."""
    return ctx.contract.readings.at_the_limit is AtTheLimit.WITHIN


def _counts(
    t: ir.Table,
    units: Units,
    passes: Callable[[ir.FloatingValue], ir.BooleanValue],
    windows: list[CalendarWindow],
) -> tuple[dict[str, Counts], ir.Table]:
    """Per window: units not excluded, their states, figure coverage and passing counts, and
    the excluded units per reason. With them, from the same scan of the units: the answered
    units' contracted figures counted per window (``_win``) and bucket (``_b``,
    ``rank.bucket``), as ``rank.order_stats`` counts them.

    The units are counted per window, exclusion, state and bucket of the contracted figure
    (null when it is missing), so most counts are sums of those groups' sizes; only what a
    bucket cannot say is summed per unit: passing the threshold, and the stand-in's and the
    alternative's figures where the term has them."""
    per_unit: dict[str, ir.Value] = {"n": t.count(), "good_p": passes(t._p).sum()}
    if units.fallback is not None:
        per_unit |= {
            "n_f": t._f.notnull().sum(),
            "n_m": t._m.notnull().sum(),
            "good_f": passes(t._f).sum(),
            "good_m": passes(t._m).sum(),
        }
    if units.alternative is not None:
        per_unit["n_a"] = t._a.notnull().sum()
    b = t.group_by(["_w", "_ex", "_state", bucket(t._p).name("_b")]).aggregate(**per_unit)
    b = b.cache()  # a few rows per window, state and millisecond
    summed = b.group_by(["_w", "_ex", "_state", b._b.notnull().name("_has_p")]).aggregate(
        **{c: b[c].sum() for c in per_unit}
    )
    kept: dict[str, dict[str, int]] = {}
    excluded: dict[str, dict[str, int]] = {}
    for row in summed.to_pyarrow().to_pylist():
        label, reason, n = windows[int(row["_w"])].label, row["_ex"], int(row["n"])
        if reason is not None:
            ex = excluded.setdefault(label, {})
            ex[str(reason)] = ex.get(str(reason), 0) + n
            continue
        c = kept.setdefault(label, dict.fromkeys(_COUNTED, 0))
        c["units"] += n
        state = int(row["_state"])
        if state == _STATE_CODES["failed"]:
            c["failed"] += n
            continue
        if state == _STATE_CODES["unknown"]:
            c["unknown"] += n
        c["ok"] += n
        c["n_p"] += n if row["_has_p"] else 0
        for k in ("good_p", "n_f", "n_m", "good_f", "good_m", "n_a"):
            c[k] += int(row.get(k) or 0)
    for c in kept.values():
        if units.fallback is None:  # no stand-in: _m is _p
            c["n_m"], c["good_m"] = c["n_p"], c["good_p"]
    counts = {
        label: Counts(**kept.get(label, {}), excluded=excluded.get(label, {}))
        for label in kept.keys() | excluded.keys()
    }
    mine = b.filter(b._ex.isnull() & b._state.isin(_ANSWERED_CODES) & b._b.notnull())
    counted = mine.group_by(_win=mine._w, _b=mine._b).aggregate(_n=mine.n.sum())
    return counts, counted


#: the per-window counts of ``Counts`` (all but ``excluded``)
_COUNTED = (
    "units",
    "ok",
    "failed",
    "unknown",
    "n_p",
    "n_f",
    "n_a",
    "n_m",
    "good_p",
    "good_f",
    "good_m",
)


def choose_point(units: Units, c: Counts) -> tuple[Point | None, tuple[Message, ...]]:
    """The point a window is measured at, and why. None: nothing to measure it with.

    The contracted figure when every answered unit has it; the stand-in (a later point) when
    none has it; otherwise each unit counts with what it has — its own contracted figure, or a
    bound from its stand-in (``_m``) — so no recorded figure is thrown away (see ``_mixed``).
    """
    if c.ok == 0:
        return None, ()
    primary, fallback = units.primary, units.fallback
    if c.n_p == c.ok:
        return primary, ()
    if fallback is not None and c.n_f > 0:
        left_out = c.ok - c.n_m
        tail = (LatencySays.NEITHER(n=left_out, noun=units.noun_for(left_out)),) if left_out else ()
        if c.n_p == 0:
            return fallback, (*((fallback.note,) if fallback.note is not None else ()), *tail)
        note = (
            LatencySays.MIXED_SUBTREE(field=primary.field, n=c.n_p, ok=c.ok)
            if units.noun == "tasks"
            else LatencySays.MIXED(
                field=primary.field,
                n=c.n_p,
                ok=c.ok,
                noun=units.noun_for(c.ok),
                fallback=fallback.field,
                point=fallback.name,
            )
        )
        mixed = Point(primary.name, "_m", primary.field, fallback.bound, note)
        return mixed, (note, *tail)
    if c.n_p > 0:
        return primary, (
            LatencySays.PARTLY_RECORDED(
                field=primary.field, n=c.n_p, ok=c.ok, noun=units.noun_for(c.ok)
            ),
        )
    return None, ()


@dataclass(frozen=True, slots=True)
class PeriodValues:
    """A latency term's figures over a span of time, read as the check reads a window: the
    answered units that no exclusion removes, at the point ``choose_point`` picks for them."""

    #: the figures, ascending (milliseconds, or tokens per second)
    values: npt.NDArray[np.float64]
    #: where they were read (the contracted point when no answered unit has a figure)
    point: Point
    #: "upper" or "lower" (a stand-in's bound on every figure), "mixed" (each unit's own
    #: contracted figure where it has one, else its stand-in's bound) or None (exact figures)
    bound: str | None


def period_values(
    ctx: CheckContext, term: LatencyTerm, start_us: int, end_us: int, calls: ir.Table | None = None
) -> PeriodValues:
    """``term``'s figures for units starting in [start_us, end_us), for a chart of their
    distribution: the same units, states, exclusions and point choice as the check's count of a
    window, so a chart cannot show figures the verdict did not count."""
    units = term_units(ctx, term, call_base(ctx) if calls is None else calls)
    t = units.table
    t = t.filter(
        t._state.isin(_ANSWERED) & t._ex.isnull() & (t.start_us >= start_us) & (t.start_us < end_us)
    )
    cols = t.select("_p", "_f", "_m").to_pyarrow()
    ok = cols.num_rows
    counts = Counts(
        units=ok,
        ok=ok,
        n_p=ok - cols.column("_p").null_count,
        n_f=ok - cols.column("_f").null_count,
        n_m=ok - cols.column("_m").null_count,
    )
    point, _ = choose_point(units, counts)
    if point is None:
        return PeriodValues(np.empty(0, dtype=np.float64), units.primary, None)
    column = cols.column(point.column).drop_null()
    values = np.sort(column.to_numpy(zero_copy_only=False).astype(np.float64))
    bound = "mixed" if point.mixed else None if point.bound is None else str(point.bound)
    return PeriodValues(values, point, bound)


def _by_window(
    t: ir.Table, columns: Mapping[str, str], windows: list[CalendarWindow]
) -> ir.FloatingValue:
    """Each window's chosen column (null in a window measured at no point)."""
    if not columns:
        return _NULL_FLOAT
    if set(columns) == {w.label for w in windows} and len(set(columns.values())) == 1:
        return t[next(iter(columns.values()))]  # the same column everywhere: no case per row
    at = _position(windows)
    return ibis.cases(
        *[(t._w == at[label], t[col]) for label, col in columns.items()], else_=_NULL_FLOAT
    )


# ---------------------------------------------------------------------------------------------
# Occurrence objectives


def percentile_rank(
    n: int, percentile: float, method: PercentileMethod, direction: Direction
) -> Rank:
    """The order statistics of the contracted percentile among ``n`` values (exact arithmetic).

    ``at_most``: the p-th percentile. ``at_least``: the same rank counted from the top (the
    (100 − p)-th percentile), so that "p % of units ≥ threshold" holds exactly when it is met.
    """
    p = exact_percent(percentile)
    if method is PercentileMethod.NEAREST_RANK:
        k = nearest_rank(n, percentile)
        rank = k if direction is Direction.AT_MOST else n - k + 1
        return Rank((rank,), 0.0, {"k": k, "n": n, "rank": rank, "good_needed": k})
    q = p if direction is Direction.AT_MOST else 100 - p
    h = (n - 1) * q / 100
    lo = math.floor(h)
    frac = h - lo
    ranks = (lo + 1,) if frac == 0 else (lo + 1, lo + 2)
    return Rank(ranks, float(frac), {"h": float(h), "n": n})


def _order_stats(
    t: ir.Table,
    column: str,
    wanted: Mapping[str, Iterable[int]],
    windows: list[CalendarWindow],
    counted: ir.Table | None = None,
) -> dict[str, dict[int, float]]:
    """The values at the given 1-based ranks (ascending) per window, among answered units
    (``counted``: their values' bucket counts, see ``_counts``)."""
    at = _position(windows)
    want = {at[w]: r for w, r in wanted.items()}
    got = order_stats(t.filter(_answered(t)), "_w", column, want, counted)
    return {windows[int(i)].label: stats for i, stats in got.items()}


def _occurrence(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: OccurrenceObjective,
    units: Units,
    t: ir.Table,
    windows: list[CalendarWindow],
    counts: dict[str, Counts],
    chosen: dict[str, tuple[Point | None, tuple[Message, ...]]],
    counted: ir.Table | None = None,
) -> list[TermResult]:
    """``counted``: the contracted figures' bucket counts (``_counts``), when every window is
    measured at that figure."""
    inclusive = _inclusive(ctx)
    losses = ctx.losses(windows)
    ranks: dict[str, Rank] = {}
    alt_ranks: dict[str, Rank] = {}
    for w in windows:
        point, _ = chosen[w.label]
        c = counts.get(w.label, Counts())
        if point is not None:
            ranks[w.label] = percentile_rank(
                c.n(point.column), obj.percentile, obj.method, obj.direction
            )
        if units.alternative is not None and c.n_a > 0:
            alt_ranks[w.label] = percentile_rank(c.n_a, obj.percentile, obj.method, obj.direction)
    stats = _order_stats(t, "_v", {k: r.ranks for k, r in ranks.items()}, windows, counted)
    alt_stats = _order_stats(t, "_a", {k: r.ranks for k, r in alt_ranks.items()}, windows)
    unit = _unit(term)
    results: list[TermResult] = []
    need: list[str] = []  # the windows whose offending units are shown
    for w in windows:
        c = counts.get(w.label, Counts())
        point, point_notes = chosen[w.label]
        base = _Base(ctx, term, units, w, c, _occurrence_criterion(term, obj, units), losses)
        if point is None:
            results.append(base.unmeasured(unit))
            continue
        rank = ranks[w.label]
        observed = rank.value(stats[w.label])
        n, good = c.n(point.column), c.good(point.column)
        notes: list[Message] = list(point_notes)
        if w.label in alt_ranks:
            alt = alt_ranks[w.label].value(alt_stats[w.label])
            met_here = _meets(obj.direction, observed, obj.threshold, inclusive)
            notes.append(_alt_note(obj, alt, c.n_a, met_here, inclusive))
        elif units.alternative is not None:
            notes.append(LatencySays.BASIS_NO_COMPARISON())
        passes = _meets(obj.direction, observed, obj.threshold, inclusive)
        if point.mixed and obj.method is PercentileMethod.NEAREST_RANK:
            verdict = _mixed(point, obj.direction, n, good, c, rank.details["k"])
        else:
            verdict = decide(passes, point.bound, obj.direction)
        if term.min_samples is not None and n < term.min_samples:
            verdict = Verdict.NO_DATA
            notes.append(LatencySays.BELOW_MIN(n=n, noun=units.noun_for(n), min=term.min_samples))
        if verdict is not Verdict.MET and good < n:
            need.append(w.label)
        details = {
            **rank.details,
            "method": obj.method.value,
            "direction": obj.direction.value,
            "point_used": point.name,
            **base.common_details(),
        }
        results.append(base.result(verdict, observed, unit, good, n, (), notes, point, details))
    if need:
        at = _position(windows)
        offending = (
            t._w.isin([at[label] for label in need])
            & _answered(t)
            & t._v.notnull()
            & ~_passes(obj.direction, obj.threshold, inclusive)(t._v)
        )
        found = examples_by_window(t, offending, "_worst", window="_w")
        results = [_with_examples(r, found.get(at[r.window], ())) for r in results]
    return results


def _with_examples(r: TermResult, examples: tuple[str, ...]) -> TermResult:
    return dataclasses.replace(r, examples=examples) if examples else r


def _mixed(point: Point, direction: Direction, n: int, good: int, c: Counts, k: int) -> Verdict:
    """Nearest rank over per-unit figures, some exact and some bounds (DOMAIN.md's rule).

    With n units and k = ⌈p·n/100⌉: met when the units proven within the threshold number at
    least k; breached when those proven beyond it number more than n − k; else indeterminate.
    A bound proves one side only: a later point's figure (``upper``) proves an at-most value
    within, never beyond; so ``good`` (units whose figure passes) is what is proven on the
    provable side, and the exact figures alone on the other.
    """
    provable_pass = (point.bound is Bound.UPPER) == (direction is Direction.AT_MOST)
    exact_pass, exact_fail = c.good_p, c.n_p - c.good_p
    if provable_pass:
        if good >= k:
            return Verdict.MET
        return Verdict.BREACHED if exact_fail > n - k else Verdict.INDETERMINATE
    if n - good > n - k:
        return Verdict.BREACHED
    return Verdict.MET if exact_pass >= k else Verdict.INDETERMINATE


def decide(passes: bool, bound: Bound | None, direction: Direction) -> Verdict:
    """met/breached from a figure at the contracted point; from a stand-in, only the provable side.

    A stand-in above the contracted figure (a later point) can prove an ``at_most`` term met and
    an ``at_least`` term breached; one below it, the reverse. Otherwise: indeterminate.
    """
    if bound is None:
        return Verdict.MET if passes else Verdict.BREACHED
    provable_pass = (bound is Bound.UPPER) == (direction is Direction.AT_MOST)
    if passes and provable_pass:
        return Verdict.MET
    if not passes and not provable_pass:
        return Verdict.BREACHED
    return Verdict.INDETERMINATE


# ---------------------------------------------------------------------------------------------
# Time-slice objectives


def _slice_table(t: ir.Table, column: str, obj: TimeSliceObjective, inclusive: bool) -> ir.Table:
    """One row per (window, slice) with data: value count ``_n`` and the statistic ``_stat``."""
    v = t.filter(_answered(t) & t[column].notnull())
    v = v.mutate(_s=v.start_us // (obj.slice_minutes * _US_PER_MINUTE), _x=v[column])
    if obj.statistic in _SLICE_PERCENTILES:
        q = _SLICE_PERCENTILES[obj.statistic]
        part = ibis.window(group_by=[v._w, v._s], order_by=v._x)
        r = v.mutate(
            _rn=ibis.row_number().over(part) + 1,
            _n=v._x.count().over(ibis.window(group_by=[v._w, v._s])),
        )
        # nearest rank in integers: ceil(q·n/100)
        per = r.filter(r._rn == (r._n * q + 99) // 100).select("_w", "_s", "_n", _stat=r._x)
    else:
        stat = v._x.mean() if obj.statistic == "mean" else v._x.min()
        per = v.group_by(["_w", "_s"]).aggregate(_n=v.count(), _stat=stat)
    return per.mutate(
        _data=per._n >= obj.min_calls_per_slice,
        _pass=_passes(obj.direction, obj.threshold, inclusive)(per._stat),
        _bad=per._stat - obj.threshold
        if obj.direction is Direction.AT_MOST
        else obj.threshold - per._stat,
    )


def _slice_counts(per: ir.Table, windows: list[CalendarWindow]) -> dict[str, tuple[int, int]]:
    """Per window label: slices passing and slices with data."""
    agg = per.group_by("_w").aggregate(total=per._data.sum(), good=(per._data & per._pass).sum())
    return {
        windows[int(r["_w"])].label: (int(r["good"] or 0), int(r["total"] or 0))
        for r in agg.to_pyarrow().to_pylist()
    }


def spanned_slices(ctx: CheckContext, w: CalendarWindow, slice_minutes: int) -> int:
    """Slices the window spans: all of it, or (a partial window) the part the traces cover."""
    lo, hi = w.start_us, w.end_us
    if ctx.partial(w):
        data_lo, data_hi = ctx.data_range
        lo = max(lo, data_lo if data_lo is not None else hi)
        hi = min(hi, data_hi if data_hi is not None else lo)
    if hi <= lo:
        return 0
    size = slice_minutes * _US_PER_MINUTE
    return (hi - 1) // size - lo // size + 1


def _time_slices(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: TimeSliceObjective,
    units: Units,
    t: ir.Table,
    windows: list[CalendarWindow],
    counts: dict[str, Counts],
    chosen: dict[str, tuple[Point | None, tuple[Message, ...]]],
) -> list[TermResult]:
    losses = ctx.losses(windows)
    inclusive = _inclusive(ctx)
    per = _slice_table(t, "_v", obj, inclusive)
    slices = _slice_counts(per, windows)
    alt = (
        _slice_counts(_slice_table(t, "_a", obj, inclusive), windows)
        if units.alternative is not None
        else {}
    )
    unit = "% of slices"
    results: list[TermResult] = []
    need: list[str] = []  # the windows whose failing slices' units are shown
    for w in windows:
        c = counts.get(w.label, Counts())
        point, point_notes = chosen[w.label]
        base = _Base(ctx, term, units, w, c, _slice_criterion(term, obj, units), losses)
        if point is None:
            results.append(base.unmeasured(unit))
            continue
        good, total = slices.get(w.label, (0, 0))
        spanned = spanned_slices(ctx, w, obj.slice_minutes)
        empty = max(0, spanned - total)
        details = {
            "slice_minutes": obj.slice_minutes,
            "statistic": obj.statistic,
            "slices_spanned": spanned,
            "empty_slices": empty,
            "failing_slices": total - good,
            "values": c.n(point.column),
            "point_used": point.name,
            **base.common_details(),
        }
        notes: list[Message] = list(point_notes)
        noun = units.noun_message
        if empty:
            minutes = obj.slice_minutes
            notes.append(
                LatencySays.EMPTY_SLICES(empty=empty, spanned=spanned, minutes=minutes, noun=noun)
                if obj.min_calls_per_slice == 1
                else LatencySays.SPARSE_SLICES(
                    empty=empty,
                    spanned=spanned,
                    minutes=minutes,
                    min=obj.min_calls_per_slice,
                    noun=units.noun_for(obj.min_calls_per_slice),
                )
            )
        if total == 0:
            notes.append(
                LatencySays.NO_SLICE(
                    min=obj.min_calls_per_slice, noun=units.noun_for(obj.min_calls_per_slice)
                )
            )
            results.append(
                base.result(Verdict.NO_DATA, None, unit, 0, 0, (), notes, point, details)
            )
            continue
        observed = 100.0 * good / total
        if units.alternative is not None:
            a_good, a_total = alt.get(w.label, (0, 0))
            if a_total:
                a_obs = 100.0 * a_good / a_total
                notes.append(
                    _alt_slice_note(obj, a_obs, a_total, observed >= obj.slices_passing_percent)
                )
            else:
                notes.append(LatencySays.BASIS_NO_COMPARISON())
        # a stand-in that proves slices pass gives a share below the true one, and vice versa
        share_bound = None
        if point.bound is not None:
            slice_pass_provable = (point.bound is Bound.UPPER) == (
                obj.direction is Direction.AT_MOST
            )
            share_bound = Bound.LOWER if slice_pass_provable else Bound.UPPER
        verdict = decide(observed >= obj.slices_passing_percent, share_bound, Direction.AT_LEAST)
        if term.min_samples is not None and total < term.min_samples:
            verdict = Verdict.NO_DATA
            notes.append(LatencySays.SLICES_BELOW_MIN(n=total, min=term.min_samples))
        if verdict is not Verdict.MET and good < total:
            need.append(w.label)
        results.append(base.result(verdict, observed, unit, good, total, (), notes, point, details))
    if need:
        at = _position(windows)
        wanted = [at[label] for label in need]
        failing = per.filter(per._w.isin(wanted) & per._data & ~per._pass)
        v = t.filter(t._w.isin(wanted) & _answered(t) & t._v.notnull())
        v = v.mutate(_s=v.start_us // (obj.slice_minutes * _US_PER_MINUTE))
        j = v.inner_join(failing.select("_w", "_s", "_bad"), ["_w", "_s"])
        found = examples_by_window(j, ibis.literal(True), "_bad", window="_w")
        results = [_with_examples(r, found.get(at[r.window], ())) for r in results]
    return results


# ---------------------------------------------------------------------------------------------
# Server-side metrics: a second evidence source (rules in metering.metrics)


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the metrics say of one term in one window."""

    verdict: Verdict
    observed: float | None
    unit: str
    good: int
    total: int
    notes: tuple[Message, ...]
    details: dict[str, Any]


def _with_metrics(
    ctx: CheckContext, term: LatencyTerm, windows: list[CalendarWindow], results: list[TermResult]
) -> list[TermResult]:
    """The term's results with the server metrics' verdict combined in, where they cover it."""
    ev = ctx.metrics
    if ev is None:
        return results
    found, _ = server_metrics.cover(term)
    if found is None:
        traces = str(server_metrics.Evidence.TRACES)
        return [dataclasses.replace(r, details={**r.details, "evidence": traces}) for r in results]
    tp = server_metrics.term_points(
        ev, ctx.contract, term, found, windows, ctx.maintenance, ctx.effective_us
    )
    obj = term.objective
    readings = (
        _metric_occurrence(ctx, term, obj, tp, ev)
        if isinstance(obj, OccurrenceObjective)
        else _metric_slices(ctx, term, obj, tp, ev)
    )
    unapplied = server_metrics.unapplied_exclusions(ctx.contract)
    out: list[TermResult] = []
    for r in results:
        m = readings.get(r.window)
        exact = r.measured_at == term.measurement_point.value and not r.bounded
        verdict, evidence, said = server_metrics.combine(
            r.verdict, exact, None if m is None else m.verdict
        )
        details = {**r.details, "evidence": str(evidence)}
        notes = list(r.notes)
        if m is not None:
            details["metrics"] = m.details
            notes.extend(m.notes)
            if unapplied:
                notes.append(server_metrics.MetricsSays.NOT_APPLIED(which=", ".join(unapplied)))
        if said is not None:
            notes.append(said)
        if m is not None and evidence is server_metrics.Evidence.METRICS:
            out.append(
                dataclasses.replace(
                    r,
                    verdict=verdict,
                    observed=m.observed,
                    unit=m.unit,
                    good=m.good,
                    total=m.total,
                    examples=(),
                    notes=tuple(notes),
                    measured_at=found.metric,
                    details=details,
                    gap=_metric_gap(obj, m.observed),
                )
            )
        else:
            out.append(dataclasses.replace(r, verdict=verdict, notes=tuple(notes), details=details))
    return out


def _metric_gap(
    obj: OccurrenceObjective | TimeSliceObjective, observed: float | None
) -> float | None:
    """``_gap`` of a metrics-only figure: none for an unbounded one (a bucket without an edge)."""
    if observed is not None and math.isinf(observed):
        return None
    return _gap(obj, observed)


def _gap(obj: OccurrenceObjective | TimeSliceObjective, observed: float | None) -> float | None:
    """Headroom (positive) or shortfall (negative) against the threshold, in the unit."""
    if observed is None:
        return None
    if isinstance(obj, OccurrenceObjective):
        return (
            obj.threshold - observed
            if obj.direction is Direction.AT_MOST
            else observed - obj.threshold
        )
    return observed - obj.slices_passing_percent


def _aside_notes(aside: Mapping[str, int]) -> tuple[Message, ...]:
    if not aside:
        return ()
    why = [LossSays.REASON(reason=k, n=v) for k, v in sorted(aside.items())]
    return (server_metrics.MetricsSays.SET_ASIDE(n=sum(aside.values()), why=why),)


def _finite(x: float) -> float | None:
    return None if math.isinf(x) else x


def _metric_occurrence(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: OccurrenceObjective,
    tp: server_metrics.TermPoints,
    ev: server_metrics.MetricsEvidence,
) -> dict[str, _Reading]:
    counts = server_metrics.window_counts(tp)
    ranks = {
        w: percentile_rank(n, obj.percentile, obj.method, obj.direction)
        for w, (n, _) in counts.items()
        if n > 0
    }
    bounds = server_metrics.window_rank_bounds(tp, ev, {w: r.ranks for w, r in ranks.items()})
    proven = server_metrics.proven_within(tp, ev, obj)
    out: dict[str, _Reading] = {}
    for w in set(counts) | set(tp.aside):
        n, points = counts.get(w, (0, 0))
        aside = tp.aside.get(w, {})
        details: dict[str, Any] = {
            "metric": tp.cover.metric,
            "relation": str(tp.cover.relation),
            "points": points,
            "requests": n,
            "set_aside": dict(sorted(aside.items())),
        }
        if n == 0:
            out[w] = _Reading(Verdict.NO_DATA, None, "ms", 0, 0, _aside_notes(aside), details)
            continue
        rank = ranks[w]
        b = bounds[w]
        lo, hi = b[rank.ranks[0]]
        if len(rank.ranks) == 2:
            lo2, hi2 = b[rank.ranks[1]]
            f = rank.fraction
            lo, hi = lo + f * (lo2 - lo), (math.inf if math.isinf(hi2) else hi + f * (hi2 - hi))
        lo, hi = server_metrics.widen(lo, hi, tp.cover.relation)
        passes = server_metrics.judge(
            lo, hi, False, obj.direction, obj.threshold, ctx.contract.readings.at_the_limit
        )
        verdict = (
            Verdict.INDETERMINATE if passes is None else Verdict.MET if passes else Verdict.BREACHED
        )
        if term.min_samples is not None and n < term.min_samples:
            verdict = Verdict.NO_DATA
        details.update(
            {"ranks": list(rank.ranks), "lower": lo, "upper": _finite(hi), **rank.details}
        )
        metric = tp.cover.metric
        note = (
            server_metrics.MetricsSays.LOWER_ONLY(metric=metric, n=n, lower=lo)
            if math.isinf(hi)
            else server_metrics.MetricsSays.BOUNDS(metric=metric, n=n, lower=lo, upper=hi)
        )
        at_most = obj.direction is Direction.AT_MOST
        observed = hi if (passes is True) == at_most and not math.isinf(hi) else lo
        good = proven.get(w, 0)
        out[w] = _Reading(verdict, observed, "ms", good, n, (note, *_aside_notes(aside)), details)
    return out


def _metric_slices(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: TimeSliceObjective,
    tp: server_metrics.TermPoints,
    ev: server_metrics.MetricsEvidence,
) -> dict[str, _Reading]:
    per = server_metrics.slice_table(tp, ev, obj)
    judged = server_metrics.slice_judgements(
        per, obj, tp.cover.relation, ctx.contract.readings.at_the_limit
    ).execute()
    straddling = server_metrics.straddling_slices(tp, obj)
    rows = {str(r["_w"]): r for r in judged.to_dict("records")}
    out: dict[str, _Reading] = {}
    for w in set(rows) | set(tp.aside) | set(straddling):
        aside = dict(tp.aside.get(w, {}))
        if straddling.get(w):
            aside[str(server_metrics.Aside.STRADDLES_SLICE)] = straddling[w]
        row = rows.get(w, {})
        total = int(row.get("total") or 0)
        passing = int(row.get("passing") or 0)
        failing = int(row.get("failing") or 0)
        verdict = server_metrics.share_verdict(passing, failing, total, obj.slices_passing_percent)
        if term.min_samples is not None and total < term.min_samples:
            verdict = Verdict.NO_DATA
        notes: list[Message] = []
        details: dict[str, Any] = {
            "metric": tp.cover.metric,
            "relation": str(tp.cover.relation),
            "slices": total,
            "passing_slices": passing,
            "failing_slices": failing,
            "undecided_slices": total - passing - failing,
            "sparse_slices": int(row.get("empty") or 0),
            "set_aside": dict(sorted(aside.items())),
        }
        observed = None
        if total:
            observed = 100.0 * passing / total
            notes.append(
                server_metrics.MetricsSays.SLICE_BOUNDS(
                    metric=tp.cover.metric,
                    total=total,
                    minutes=obj.slice_minutes,
                    passing=passing,
                    failing=failing,
                    unknown=total - passing - failing,
                    low=observed,
                    high=100.0 * (total - failing) / total,
                )
            )
        notes.extend(_aside_notes(aside))
        out[w] = _Reading(verdict, observed, "% of slices", passing, total, tuple(notes), details)
    return out


# ---------------------------------------------------------------------------------------------
# Wording and assembly


@dataclass(frozen=True, slots=True)
class _Base:
    """What every result of one term in one window shares."""

    ctx: CheckContext
    term: LatencyTerm
    units: Units
    window: CalendarWindow
    counts: Counts
    criterion: Message
    #: calls the window could not count (set aside, or no scope field), per window label
    losses: Mapping[str, Losses]

    def common_details(self) -> dict[str, Any]:
        c, noun = self.counts, self.units.noun
        out: dict[str, Any] = {f"ok_{noun}": c.ok, f"failed_{noun}": c.failed}
        lost = self.losses.get(self.window.label)
        if lost is not None:
            out["lost"] = lost.to_dict()
        undated = self.losses.get("")
        if undated is not None and undated.set_aside:
            out["set_aside_undated"] = sum(undated.set_aside.values())
        if c.unknown:
            out[f"unknown_status_{noun}"] = c.unknown
        if self.units.noun == "tasks":
            out["excluded_unit"] = "tasks"
        return out

    def result(
        self,
        verdict: Verdict,
        observed: float | None,
        unit: str,
        good: int,
        total: int,
        examples: tuple[str, ...],
        notes: Iterable[Message],
        point: Point | None,
        details: dict[str, Any],
    ) -> TermResult:
        return TermResult(
            term_id=self.term.id,
            kind=(
                TermKind.TIME_SLICE
                if isinstance(self.term.objective, TimeSliceObjective)
                else TermKind.LATENCY
            ),
            window=self.window.label,
            verdict=verdict,
            observed=observed,
            unit=unit,
            criterion_message=self.criterion,
            good=good,
            total=total,
            examples=examples,
            notes=(*notes, *self._status_notes(), *self._loss_notes()),
            excluded=dict(self.counts.excluded),
            partial_window=self.ctx.partial(self.window),
            measured_at=point.name if point is not None else "",
            details=details,
            gap=_gap(self.term.objective, observed),
            exact=None if point is None else self._exact_bounded(point)[0],
            bounded=None if point is None else self._exact_bounded(point)[1],
        )

    def _exact_bounded(self, point: Point) -> tuple[int, int]:
        """Units counted with their own contracted figure, and with a bound."""
        c = self.counts
        if point.mixed:
            return c.n_p, c.n_m - c.n_p
        if point.bound is not None:
            return 0, c.n_f
        return c.n_p, 0

    def _loss_notes(self) -> tuple[Message, ...]:
        lost = self.losses.get(self.window.label, Losses({}, {}))
        undated = self.losses.get("", Losses({}, {}))
        return lost.notes(sum(undated.set_aside.values()))

    def _status_notes(self) -> tuple[Message, ...]:
        c = self.counts
        if c.unknown:
            return (LatencySays.UNKNOWN_STATUS(n=c.unknown, noun=self.units.noun_for(c.unknown)),)
        return ()

    def unmeasured(self, unit: str) -> TermResult:
        """No point to measure at: no data in the window, or the trace lacks the field."""
        c, noun = self.counts, self.units.noun_message
        details = self.common_details()
        if c.ok == 0:
            if c.units == 0 and not c.excluded:
                why = LatencySays.NO_UNITS(noun=noun)
            else:
                why = LatencySays.NO_ANSWERED(
                    noun=noun, excluded=sum(c.excluded.values()), failed=c.failed
                )
            return self.result(Verdict.NO_DATA, None, unit, 0, 0, (), (why,), None, details)
        missing = self.units.primary.field
        if self.term.measurement_point is MeasurementPoint.TASK_END_TO_END:
            why = LatencySays.NOT_RECORDED_TASKS(field=missing, ok=c.ok)
        else:
            why = LatencySays.NOT_RECORDED(field=missing, ok=c.ok, noun=self.units.noun_for(c.ok))
        return self.result(Verdict.NOT_MEASURABLE, None, unit, 0, 0, (), (why,), None, details)


def _unit(term: LatencyTerm) -> str:
    return (
        "tokens/s" if term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND else "ms"
    )


def _unit_message(term: LatencyTerm) -> Message:
    if term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        return LatencySays.TOKENS_PER_SECOND()
    return LatencySays.MS()


def _basis(term: LatencyTerm) -> Message | None:
    if term.measurement_point is not MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        return None
    basis = term.tokens_per_second_basis
    if basis is TokensPerSecondBasis.AFTER_FIRST_TOKEN:
        return LatencySays.AFTER_FIRST_TOKEN()
    if basis is TokensPerSecondBasis.WHOLE_REQUEST:
        return LatencySays.WHOLE_REQUEST()
    return LatencySays.BASIS_UNSTATED()


def _scope(term: LatencyTerm, units: Units) -> Message:
    tasks = units.noun == "tasks"
    if term.min_samples is None:
        return LatencySays.SCOPE_TASKS() if tasks else LatencySays.SCOPE_CALLS()
    says = LatencySays.SCOPE_TASKS_MIN if tasks else LatencySays.SCOPE_CALLS_MIN
    return says(min=term.min_samples)


def _occurrence_criterion(term: LatencyTerm, obj: OccurrenceObjective, units: Units) -> Message:
    basis = _basis(term)
    point = (
        LatencySays.POINT(point=str(term.measurement_point))
        if basis is None
        else LatencySays.POINT_BASIS(point=str(term.measurement_point), basis=basis)
    )
    method = (
        LatencySays.NEAREST_RANK()
        if obj.method is PercentileMethod.NEAREST_RANK
        else LatencySays.LINEAR()
    )
    common: dict[str, Param] = {
        "threshold": obj.threshold,
        "unit": _unit_message(term),
        "method": method,
        "point": point,
        "scope": _scope(term, units),
    }
    if obj.direction is Direction.AT_MOST:
        return LatencySays.AT_MOST(percentile=obj.percentile, **common)
    return LatencySays.AT_LEAST(
        percentile=100 - obj.percentile,
        share=obj.percentile,
        noun=units.noun_message,
        **common,
    )


def _slice_criterion(term: LatencyTerm, obj: TimeSliceObjective, units: Units) -> Message:
    basis = _basis(term)
    slices = (
        LatencySays.SLICES(minutes=obj.slice_minutes)
        if basis is None
        else LatencySays.SLICES_BASIS(minutes=obj.slice_minutes, basis=basis)
    )
    statistic: Param = {"mean": LatencySays.MEAN(), "min": LatencySays.MIN()}.get(
        obj.statistic, obj.statistic
    )
    says = (
        LatencySays.SLICES_AT_LEAST
        if obj.direction is Direction.AT_LEAST
        else LatencySays.SLICES_AT_MOST
    )
    return says(
        statistic=statistic,
        unit=_unit_message(term),
        threshold=obj.threshold,
        share=obj.slices_passing_percent,
        slices=slices,
        scope=_scope(term, units),
        min=obj.min_calls_per_slice,
    )


def _alt_note(
    obj: OccurrenceObjective, alt: float, n: int, verdict_passes: bool, inclusive: bool
) -> Message:
    alt_passes = _meets(obj.direction, alt, obj.threshold, inclusive)
    says = (
        LatencySays.BASIS_ALTERNATIVE
        if alt_passes == verdict_passes
        else LatencySays.BASIS_ALTERNATIVE_DECIDES
    )
    return says(value=alt, n=n)


def _alt_slice_note(obj: TimeSliceObjective, share: float, n: int, verdict_passes: bool) -> Message:
    alt_passes = share >= obj.slices_passing_percent
    says = (
        LatencySays.BASIS_ALTERNATIVE_SLICES
        if alt_passes == verdict_passes
        else LatencySays.BASIS_ALTERNATIVE_SLICES_DECIDES
    )
    return says(share=share, n=n)


__all__ = [
    "Bound",
    "Counts",
    "LatencySays",
    "PeriodValues",
    "Point",
    "Rank",
    "Units",
    "call_base",
    "check_term",
    "choose_point",
    "decide",
    "latency",
    "percentile_rank",
    "period_values",
    "spanned_slices",
    "term_units",
]
