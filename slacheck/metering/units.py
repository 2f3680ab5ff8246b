"""A latency term's units and the point each is read at, for the check and the documents alike.

The check counts a window's figures from here and the report's distribution charts read a
period's from here (``period_values``): the same units, states, exclusions and point choice, so
a chart cannot show figures the verdict did not count. Rules:

- units: ok model calls in scope (``server_processing``: ``server_ms``; ``time_to_first_token``:
  ``ttft_ms``; ``full_response``: ``duration_ms``; ``output_tokens_per_second``: tokens/s over
  the whole request or after the first token), or tasks holding an in-scope call
  (``task_end_to_end``: ``task_ms``, windowed by the task's start);
- a unit's state (``UnitState``): a call is answered as ``metering.derive.succeeded`` says
  (``ok``, ``cached`` or no status recorded, the last kept apart as ``unknown``), else failed; a
  task is failed when its root task span records a status other than ok; answered units are
  measured, failed ones counted and left out;
- excluded units (maintenance, long input, downgraded tier, customer error, …) carry their reason
  (``_ex``, ``CheckContext.exclusion_reason``) and are counted by it and left out; a task is
  excluded when any in-scope call of its is, under the first reason (``readings.
  excluded_calls_in_task_terms: remove_call`` keeps it);
- each unit carries the contracted figure (``_p``) and, where one exists, a stand-in (``_f``)
  with its bound: points nest (full response ≥ time to first token, full response ≥ server
  processing, generation speed ≥ whole-request speed), and a task not recorded whole (an
  exported subtree, a span with no end) has its recorded time, a lower bound
  (``derive.lower_bound``); ``_m`` is the contracted figure where the unit has it, else the
  stand-in;
- the point a window is measured at (``choose_point``): the contracted figure when every
  answered unit has it; the stand-in when none has it; otherwise each unit with what it has
  (``_m``, some figures exact and some bounds), so no recorded figure is thrown away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import ibis
import ibis.expr.types as ir
import numpy as np
import numpy.typing as npt

from slacheck.contract.model import (
    ExcludedInTaskTerms,
    LatencyTerm,
    MeasurementPoint,
    TokensPerSecondBasis,
)
from slacheck.metering import derive
from slacheck.metering.context import CheckContext, Exclusion
from slacheck.metering.derive import CallState

#: exclusion reasons in the order ``CheckContext.exclusion_reason`` tries them: a task with
#: calls excluded for several reasons is counted once, under the first
_REASON_ORDER = tuple(str(e) for e in Exclusion)
_NULL_FLOAT = ibis.null().cast("float64")
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


class UnitState(StrEnum):
    """A unit's state (``Units.table._state``)."""

    #: answered (``derive.succeeded``), its status recorded
    OK = "ok"
    #: answered, no status recorded (how OpenTelemetry records success): counted apart, so a
    #: result can say how many
    UNKNOWN = "unknown"
    FAILED = "failed"


#: the states that are measured
ANSWERED: tuple[UnitState, ...] = (UnitState.OK, UnitState.UNKNOWN)


def answered(t: ir.Table) -> ir.BooleanValue:
    """Whether a unit (a row of ``Units.table``) is measured."""
    return t._state.isin([str(s) for s in ANSWERED])


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

    @property
    def mixed(self) -> bool:
        return self.column == "_m"


@dataclass(frozen=True, slots=True)
class Units:
    """What a term counts: one row per unit, the contracted figure and a stand-in."""

    #: task_id, start_us, _ex (exclusion reason), _state (``UnitState``), _p, _f, _a, _m
    table: ir.Table
    noun: str  # "calls" | "tasks"
    primary: Point
    fallback: Point | None
    #: for an unstated tokens/s basis: what the figure after the first token would be (``_a``)
    alternative: str | None = None


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


def call_base(ctx: CheckContext) -> ir.Table:
    """The model calls with what latency terms read, and their exclusion reason.

    ``ctx.calls`` is already a table in the engine, so this stays a cheap projection of it
    rather than a second in-memory copy (which doubled peak memory on 10⁷ spans).
    """
    c = ctx.calls
    return c.select(*_CALL_COLUMNS, _ex=ctx.exclusion_reason(c))


@dataclass(frozen=True, slots=True)
class Figures:
    """A call-level term's figures over a table of calls: the contracted one (``p``), its
    stand-in (``f``, null where the term has none), the other basis's (``a``), and their points."""

    p: ir.FloatingValue
    f: ir.FloatingValue
    a: ir.FloatingValue
    primary: Point
    fallback: Point | None
    alternative: str | None


def call_figures(scoped: ir.Table, term: LatencyTerm) -> Figures:
    """``term``'s figures per call of ``scoped`` (a call-level term: not ``task_end_to_end``)."""
    point = term.measurement_point
    full = Point("full_response", "_p", "duration_ms")
    p, f, a = scoped.duration_ms, _NULL_FLOAT, _NULL_FLOAT
    primary, fallback, alternative = full, None, None
    if point is MeasurementPoint.SERVER_PROCESSING:
        p, f = scoped.server_ms, scoped.duration_ms
        primary = Point(point.value, "_p", "server_ms")
        fallback = Point("full_response", "_f", "duration_ms", Bound.UPPER)
    elif point is MeasurementPoint.TIME_TO_FIRST_TOKEN:
        p, f = scoped.ttft_ms, scoped.duration_ms
        primary = Point(point.value, "_p", "ttft_ms")
        fallback = Point("full_response", "_f", "duration_ms", Bound.UPPER)
    elif point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        basis = term.tokens_per_second_basis
        if basis is TokensPerSecondBasis.AFTER_FIRST_TOKEN:
            p, f = scoped.tps_gen, scoped.tps_whole
            primary = Point(point.value, "_p", "output_tokens, duration_ms, ttft_ms")
            fallback = Point(point.value, "_f", "output_tokens, duration_ms", Bound.LOWER)
        else:
            p = scoped.tps_whole
            primary = Point(point.value, "_p", "output_tokens, duration_ms")
            if basis is None or basis is TokensPerSecondBasis.UNSTATED:
                # an unstated basis is itself a finding: show what the other reading gives
                a, alternative = scoped.tps_gen, "after_first_token"
    cast = "float64"
    return Figures(p.cast(cast), f.cast(cast), a.cast(cast), primary, fallback, alternative)


def call_state(scoped: ir.Table) -> ir.StringValue:
    """A call's ``UnitState``: answered with or without a recorded status, else failed."""
    return ibis.cases(
        (scoped.state == str(CallState.UNKNOWN), str(UnitState.UNKNOWN)),
        (derive.succeeded(scoped), str(UnitState.OK)),
        else_=str(UnitState.FAILED),
    )


def term_units(ctx: CheckContext, term: LatencyTerm, calls: ir.Table) -> Units:
    """The term's units with the contracted figure (``_p``) and its stand-in (``_f``)."""
    scoped = calls.filter(derive.scoped(calls, ctx.contract, term))
    point = term.measurement_point
    if point is MeasurementPoint.TASK_END_TO_END:
        return task_units(ctx, scoped)
    fig = call_figures(scoped, term)
    table = scoped.select(
        task_id=scoped.task_id,
        start_us=scoped.start_us,
        _ex=scoped._ex,
        _state=call_state(scoped),
        _p=fig.p,
        _f=fig.f,
        _a=fig.a,
    )
    table = table.mutate(_m=ibis.coalesce(table._p, table._f))
    return Units(table, "calls", fig.primary, fig.fallback, fig.alternative)


def task_units(ctx: CheckContext, scoped: ir.Table) -> Units:
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
    # counted as a bound (see choose_point), never as the task's time
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
        _state=ibis.ifelse(j._rfail.fill_null(False), str(UnitState.FAILED), str(UnitState.OK)),
        _p=whole,
        _f=part,
        _a=_NULL_FLOAT,
        _m=j.task_ms.cast("float64"),
    )
    primary = Point(MeasurementPoint.TASK_END_TO_END.value, "_p", "task_ms")
    fallback = Point(MeasurementPoint.TASK_END_TO_END.value, "_f", "task_ms", Bound.LOWER)
    return Units(table, "tasks", primary, fallback)


class How(StrEnum):
    """How a window's point was chosen (``choose_point``)."""

    #: every answered unit has the contracted figure
    CONTRACTED = "contracted"
    #: none has it: every unit with a stand-in counts with it, a bound
    STAND_IN = "stand_in"
    #: some have it: each unit counts with its own contracted figure, else its stand-in's bound
    MIXED = "mixed"
    #: some have it and none has a stand-in: the others are left out
    PARTLY = "partly"
    #: nothing to measure with: no answered unit, or no figure at any point
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Choice:
    """The point a window is measured at (None: nothing to measure it with), and how."""

    point: Point | None
    how: How
    #: answered units with neither the contracted figure nor a stand-in (``STAND_IN``,
    #: ``MIXED``): left out
    left_out: int = 0


def choose_point(units: Units, c: Counts) -> Choice:
    """The point a window is measured at, and how it was chosen (see the module's rules)."""
    if c.ok == 0:
        return Choice(None, How.NONE)
    primary, fallback = units.primary, units.fallback
    if c.n_p == c.ok:
        return Choice(primary, How.CONTRACTED)
    if fallback is not None and c.n_f > 0:
        left_out = c.ok - c.n_m
        if c.n_p == 0:
            return Choice(fallback, How.STAND_IN, left_out)
        mixed = Point(primary.name, "_m", primary.field, fallback.bound)
        return Choice(mixed, How.MIXED, left_out)
    if c.n_p > 0:
        return Choice(primary, How.PARTLY)
    return Choice(None, How.NONE)


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
    window, so a chart cannot show figures the verdict did not count. ``calls``: a
    ``call_base`` to reuse."""
    units = term_units(ctx, term, call_base(ctx) if calls is None else calls)
    t = units.table
    t = t.filter(answered(t) & t._ex.isnull() & (t.start_us >= start_us) & (t.start_us < end_us))
    cols = t.select("_p", "_f", "_m").to_pyarrow()
    ok = cols.num_rows
    counts = Counts(
        units=ok,
        ok=ok,
        n_p=ok - cols.column("_p").null_count,
        n_f=ok - cols.column("_f").null_count,
        n_m=ok - cols.column("_m").null_count,
    )
    point = choose_point(units, counts).point
    if point is None:
        return PeriodValues(np.empty(0, dtype=np.float64), units.primary, None)
    column = cols.column(point.column).drop_null()
    values = np.sort(column.to_numpy(zero_copy_only=False).astype(np.float64))
    bound = "mixed" if point.mixed else None if point.bound is None else str(point.bound)
    return PeriodValues(values, point, bound)


__all__ = [
    "ANSWERED",
    "Bound",
    "Choice",
    "Counts",
    "Figures",
    "How",
    "PeriodValues",
    "Point",
    "UnitState",
    "Units",
    "answered",
    "call_base",
    "call_figures",
    "call_state",
    "choose_point",
    "period_values",
    "task_units",
    "term_units",
]
