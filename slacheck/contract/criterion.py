"""Each term's rule as one structured object: the statistic, the comparison at the limit, the
threshold, the population (which calls or tasks, which states, which readings), the window and
its zone, the minimum sample size.

The check evaluates this object and every document says it: the check's criterion
(``TermResult.criterion_message``, JSON's ``rule``), the clause draft, the acceptance criteria
and the report all put the same ``Rule`` into words through the catalogue (``compact`` for a
criterion line, ``prose`` for a clause), so no document can state a rule other than the one
computed. A ``Rule`` is plain data built from the contract alone; nothing here reads a trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from slacheck.contract.model import (
    Contract,
    Direction,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    PercentileMethod,
    Scope,
    TokensPerSecondBasis,
)
from slacheck.contract.readings import (
    AtTheLimit,
    CacheHits,
    ExcludedInTaskTerms,
    ModelScope,
    Readings,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.words import Name

__all__ = [
    "Bound",
    "Comparison",
    "Population",
    "Reading",
    "Rule",
    "RuleSays",
    "compact",
    "denominator",
    "latency_rule",
    "numerator",
    "pass_rule",
    "prose",
    "readings_of",
    "windowed",
]


class Comparison(StrEnum):
    """How a figure is compared with its threshold, with the value exactly at the limit decided
    by ``readings.at_the_limit``: within (≤, ≥) or beyond (<, >)."""

    AT_MOST = "<="
    BELOW = "<"
    AT_LEAST = ">="
    ABOVE = ">"

    @classmethod
    def of(cls, direction: Direction, at_the_limit: AtTheLimit) -> Comparison:
        within = at_the_limit is AtTheLimit.WITHIN
        if direction is Direction.AT_MOST:
            return cls.AT_MOST if within else cls.BELOW
        return cls.AT_LEAST if within else cls.ABOVE

    @property
    def inclusive(self) -> bool:
        """A value exactly at the threshold passes."""
        return self in (Comparison.AT_MOST, Comparison.AT_LEAST)

    @property
    def upward(self) -> bool:
        """Higher is better (an at-least term)."""
        return self in (Comparison.AT_LEAST, Comparison.ABOVE)

    def holds(self, value: float, threshold: float) -> bool:
        """The comparison itself, at full precision."""
        if self is Comparison.AT_MOST:
            return value <= threshold
        if self is Comparison.BELOW:
            return value < threshold
        if self is Comparison.AT_LEAST:
            return value >= threshold
        return value > threshold

    def symbol(self) -> str:
        return {"<=": "≤", "<": "<", ">=": "≥", ">": ">"}[self.value]


class Bound(StrEnum):
    """What a unit without its own figure at the contracted point counts with, unit by unit."""

    NONE = "none"  # only units with the contracted figure count
    UPPER = "upper"  # a later point's figure, an upper bound (TTFT, server time)
    LOWER = "lower"  # a lower bound (whole-request speed; a task not recorded whole)


#: the later point each contracted point falls back to, and which way the bound goes
_BOUNDS = {
    MeasurementPoint.TIME_TO_FIRST_TOKEN: Bound.UPPER,
    MeasurementPoint.SERVER_PROCESSING: Bound.UPPER,
    MeasurementPoint.OUTPUT_TOKENS_PER_SECOND: Bound.LOWER,
    MeasurementPoint.TASK_END_TO_END: Bound.LOWER,
    MeasurementPoint.FULL_RESPONSE: Bound.NONE,
}


@dataclass(frozen=True, slots=True)
class Population:
    """Which units a latency rule counts."""

    units: str  # "calls" | "tasks"
    #: only answered units count (a failed one is availability's); a unit with no recorded
    #: status is answered, as OpenTelemetry records success
    answered_only: bool
    #: which model puts a call in a listed scope; None when the scope lists no model
    model_scope: ModelScope | None
    #: what an excluded call does to its task; None for a call term or a contract with no
    #: exclusion
    excluded_in_task: ExcludedInTaskTerms | None
    #: gateway cache hits: left out or measured
    cache_hits: CacheHits
    #: what a unit without its own figure counts with
    bound: Bound
    min_samples: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "units": self.units,
            "answered_only": self.answered_only,
            "model_scope": None if self.model_scope is None else str(self.model_scope),
            "excluded_in_task": (
                None if self.excluded_in_task is None else str(self.excluded_in_task)
            ),
            "cache_hits": str(self.cache_hits),
            "bound": str(self.bound),
            "min_samples": self.min_samples,
        }


@dataclass(frozen=True, slots=True)
class Rule:
    """One latency term's rule, as the check evaluates it."""

    term: str
    kind: str  # "latency" | "time_slice"
    point: MeasurementPoint
    basis: TokensPerSecondBasis | None  # output speed only
    #: "percentile" for an occurrence term; the slice statistic ("p95", "mean", …) otherwise
    statistic: str
    #: the percentile computed: the contracted one for at-most, counted from the top for
    #: at-least (p90 at least 20 → p10 ≥ 20: 90 % of units at or above); None for slices
    percentile: float | None
    #: an at-least occurrence term: the share of units at or above the threshold it requires
    share: float | None
    method: PercentileMethod | None
    comparison: Comparison
    threshold: float
    unit: str  # "ms" | "tokens/s"
    population: Population
    window: str
    zone: str
    #: a time-slice term: slice length, passing share, fewest units in a counted slice
    slice_minutes: int | None = None
    slices_passing_percent: float | None = None
    min_per_slice: int | None = None

    def passes(self, value: float) -> bool:
        return self.comparison.holds(value, self.threshold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "term": self.term,
            "kind": self.kind,
            "point": str(self.point),
            "basis": None if self.basis is None else str(self.basis),
            "statistic": self.statistic,
            "percentile": self.percentile,
            "share": self.share,
            "method": None if self.method is None else str(self.method),
            "comparison": str(self.comparison),
            "threshold": self.threshold,
            "unit": self.unit,
            "population": self.population.to_dict(),
            "window": self.window,
            "zone": self.zone,
            "slice_minutes": self.slice_minutes,
            "slices_passing_percent": self.slices_passing_percent,
            "min_per_slice": self.min_per_slice,
        }


def _scope(contract: Contract, term: LatencyTerm) -> Scope:
    return term.scope if term.scope is not None else contract.scope


def latency_rule(contract: Contract, term: LatencyTerm) -> Rule:
    """The rule the latency check evaluates for ``term`` under ``contract``'s readings."""
    readings = contract.readings
    obj = term.objective
    tasks = term.measurement_point is MeasurementPoint.TASK_END_TO_END
    ex = contract.exclusions
    has_exclusions = bool(ex.maintenance or ex.max_input_tokens or ex.downgraded_service_tiers)
    speed = term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
    population = Population(
        units="tasks" if tasks else "calls",
        answered_only=True,
        model_scope=readings.model_scope if _scope(contract, term).models else None,
        excluded_in_task=(
            readings.excluded_calls_in_task_terms if tasks and has_exclusions else None
        ),
        cache_hits=readings.cache_hits,
        bound=(
            Bound.NONE
            if speed and term.tokens_per_second_basis is not TokensPerSecondBasis.AFTER_FIRST_TOKEN
            else _BOUNDS[term.measurement_point]
        ),
        min_samples=term.min_samples,
    )
    common: dict[str, Any] = {
        "term": term.id,
        "point": term.measurement_point,
        "basis": (term.tokens_per_second_basis or TokensPerSecondBasis.UNSTATED) if speed else None,
        "comparison": Comparison.of(obj.direction, readings.at_the_limit),
        "threshold": float(obj.threshold),
        "unit": "tokens/s" if speed else "ms",
        "population": population,
        "window": str(term.window),
        "zone": contract.contract.time_zone or "UTC",
    }
    if isinstance(obj, OccurrenceObjective):
        at_least = obj.direction is Direction.AT_LEAST
        return Rule(
            kind="latency",
            statistic="percentile",
            percentile=_tidy(100 - obj.percentile) if at_least else obj.percentile,
            share=obj.percentile if at_least else None,
            method=obj.method,
            **common,
        )
    return Rule(
        kind="time_slice",
        statistic=obj.statistic,
        percentile=None,
        share=None,
        method=None,
        slice_minutes=obj.slice_minutes,
        slices_passing_percent=obj.slices_passing_percent,
        min_per_slice=obj.min_calls_per_slice,
        **common,
    )


def _tidy(x: float) -> float:
    """100 − 99.9 as 0.1, not 0.09999999999999432 (percentiles have at most a few decimals)."""
    return round(x, 9)


# ---------------------------------------------------------------------------------------------
# Words


class RuleSays(MessageCode):
    """A rule in words: a criterion line (``compact``) and a clause sentence (``prose``)."""

    # compact: the check's criterion, the report's and the terminal's
    COMPACT_PERCENTILE = NC_(
        "rule.compact.percentile",
        "p{percentile} of {point} {cmp} {threshold} {unit} ({method}), {population}",
    )
    COMPACT_PERCENTILE_FROM_TOP = NC_(
        "rule.compact.percentile_from_top",
        "p{percentile} of {point} {cmp} {threshold} {unit} ({method}; {share} % of {units} "
        "{at_or}), {population}",
    )
    COMPACT_SLICES = NC_(
        "rule.compact.slices",
        "{statistic} of {point} {cmp} {threshold} {unit} in ≥ {share} % of {slices}, {population}, "
        "≥ {min} per slice",
    )
    AT_OR_ABOVE = NC_("rule.at_or_above", "at or above")
    ABOVE = NC_("rule.above", "above")
    # prose: the clause draft's and the acceptance criteria's sentence
    PROSE_PERCENTILE = NC_(
        "rule.prose.percentile",
        "in each {window} ({zone}), the p{percentile} ({method}) of the {point} of {population} "
        "{cmp} {threshold} {unit}",
    )
    PROSE_PERCENTILE_FROM_TOP = NC_(
        "rule.prose.percentile_from_top",
        "in each {window} ({zone}), for at least {share} % of {population}, the {point} {cmp} "
        "{threshold} {unit} (their p{percentile}, {method}, {cmp} {threshold} {unit})",
    )
    PROSE_SLICES = NC_(
        "rule.prose.slices",
        "in each {window} ({zone}), in at least {share} % of the {minutes}-minute slices with at "
        "least {min} {units}, the slice {statistic} of the {point} of {population} {cmp} "
        "{threshold} {unit}",
    )
    # the comparison at the limit
    CMP_AT_MOST = NC_("rule.cmp.at_most", "is at most")
    CMP_BELOW = NC_("rule.cmp.below", "is below")
    CMP_AT_LEAST = NC_("rule.cmp.at_least", "is at least")
    CMP_ABOVE = NC_("rule.cmp.above", "is above")
    # the population
    CALLS = NC_("rule.population.calls", "answered calls in scope")
    TASKS = NC_("rule.population.tasks", "answered tasks with ≥ 1 in-scope call")
    CALLS_PROSE = NC_("rule.population.calls_prose", "the answered calls in scope")
    TASKS_PROSE = NC_(
        "rule.population.tasks_prose", "the answered agent tasks with at least one in-scope call"
    )
    MIN = NPC_("rule.population.min", "≥ {n} call", "≥ {n} calls")
    MIN_TASKS = NPC_("rule.population.min_tasks", "≥ {n} task", "≥ {n} tasks")
    MIN_SLICES = NPC_(
        "rule.population.min_slices", "≥ {n} slice with data", "≥ {n} slices with data"
    )
    MODEL_REQUESTED = NC_("rule.population.model_requested", "in scope by the model requested")
    MODEL_SERVED = NC_("rule.population.model_served", "in scope by the model served")
    MODEL_EITHER = NC_(
        "rule.population.model_either", "in scope by the model requested or the model served"
    )
    REMOVE_TASK = NC_(
        "rule.population.remove_task", "a task with an excluded call is left out whole"
    )
    REMOVE_CALL = NC_(
        "rule.population.remove_call",
        "a task with an excluded call stays, its time including that call",
    )
    CACHE_COUNTED = NC_(
        "rule.population.cache_counted", "gateway cache hits measured as answered calls"
    )
    UPPER_BOUND = NC_(
        "rule.population.upper_bound",
        "a call without its own {point} counts, call by call, with its full response time, an "
        "upper bound",
    )
    LOWER_BOUND_SPEED = NC_(
        "rule.population.lower_bound_speed",
        "a call without a time to first token counts, call by call, with its speed over the "
        "whole request, a lower bound",
    )
    LOWER_BOUND_TASK = NC_(
        "rule.population.lower_bound_task",
        "a task not recorded whole counts with the time recorded, a lower bound",
    )
    WITH = NC_("rule.population.with", "{population} ({qualifiers:semi})")
    SLICES = NC_("rule.slices", "{minutes}-minute slices")
    MEAN = NC_("rule.statistic.mean", "mean")
    MINIMUM = NC_("rule.statistic.min", "minimum")
    MS = NC_("rule.unit.ms", "ms")
    TOKENS_PER_SECOND = NC_("rule.unit.tokens_per_second", "tokens/s")
    UNIT_CALLS = NC_("rule.units.calls", "calls")
    UNIT_TASKS = NC_("rule.units.tasks", "tasks")
    POINT_BASIS = NC_("rule.point_basis", "{point} {basis}")
    AFTER_FIRST_TOKEN = NC_("rule.basis.after_first_token", "after the first token")
    WHOLE_REQUEST = NC_("rule.basis.whole_request", "over the whole request")
    BASIS_UNSTATED = NC_("rule.basis.unstated", "over the whole request (basis unstated)")
    PER_WINDOW = NC_("rule.per_window", "{rule}, per {window} ({zone})")
    # the acceptance criteria's rows: what is counted, out of what, and when the rule holds
    NUMERATOR = NC_(
        "rule.numerator", "the {units} of the denominator whose {point} {cmp} {threshold} {unit}"
    )
    NUMERATOR_SLICES = NC_(
        "rule.numerator_slices",
        "the slices of the denominator whose {statistic} of the {point} {cmp} {threshold} {unit}",
    )
    DENOMINATOR = NC_("rule.denominator", "{population}, in the window")
    DENOMINATOR_SLICES = NC_(
        "rule.denominator_slices",
        "the {minutes}-minute slices of the window (aligned to UTC) with at least {min} of "
        "{population}; a slice with fewer is left out as empty",
    )
    PASS_NEAREST = NC_(
        "rule.pass.nearest_rank",
        "holds when at least ⌈{percentile} × n / 100⌉ of the n {units} are in the numerator: the "
        "nearest-rank p{percentile} {cmp} {threshold} {unit}",
    )
    PASS_NEAREST_FROM_TOP = NC_(
        "rule.pass.nearest_rank_from_top",
        "holds when at least ⌈{share} × n / 100⌉ of the n {units} are in the numerator: their "
        "nearest-rank p{percentile}, counted from the bottom, {cmp} {threshold} {unit}",
    )
    PASS_LINEAR = NC_(
        "rule.pass.linear",
        "holds when the value interpolated linearly at the 0-based rank (n − 1) × {percentile} / "
        "100 of the n {units} {cmp} {threshold} {unit}",
    )
    PASS_SLICES = NC_(
        "rule.pass.slices",
        "holds when at least {share} % of the slices in the denominator are in the numerator",
    )


_CMP = {
    Comparison.AT_MOST: RuleSays.CMP_AT_MOST,
    Comparison.BELOW: RuleSays.CMP_BELOW,
    Comparison.AT_LEAST: RuleSays.CMP_AT_LEAST,
    Comparison.ABOVE: RuleSays.CMP_ABOVE,
}
_POINT = {
    MeasurementPoint.SERVER_PROCESSING: Name.POINT_SERVER_PROCESSING,
    MeasurementPoint.TIME_TO_FIRST_TOKEN: Name.POINT_TIME_TO_FIRST_TOKEN,
    MeasurementPoint.FULL_RESPONSE: Name.POINT_FULL_RESPONSE,
    MeasurementPoint.TASK_END_TO_END: Name.POINT_TASK_END_TO_END,
    MeasurementPoint.OUTPUT_TOKENS_PER_SECOND: Name.POINT_OUTPUT_TOKENS_PER_SECOND,
}
_BASIS = {
    TokensPerSecondBasis.WHOLE_REQUEST: RuleSays.WHOLE_REQUEST,
    TokensPerSecondBasis.AFTER_FIRST_TOKEN: RuleSays.AFTER_FIRST_TOKEN,
    TokensPerSecondBasis.UNSTATED: RuleSays.BASIS_UNSTATED,
}
_WINDOW = {
    "calendar_month": Name.WINDOW_CALENDAR_MONTH,
    "calendar_quarter": Name.WINDOW_CALENDAR_QUARTER,
    "rolling_30_days": Name.WINDOW_ROLLING_30_DAYS,
}
_METHOD = {
    PercentileMethod.NEAREST_RANK: Name.METHOD_NEAREST_RANK,
    PercentileMethod.LINEAR: Name.METHOD_LINEAR,
}
_MODEL = {
    ModelScope.REQUESTED: RuleSays.MODEL_REQUESTED,
    ModelScope.SERVED: RuleSays.MODEL_SERVED,
    ModelScope.EITHER: RuleSays.MODEL_EITHER,
}


def _unit(rule: Rule) -> Message:
    return RuleSays.TOKENS_PER_SECOND() if rule.unit == "tokens/s" else RuleSays.MS()


def _statistic(rule: Rule) -> Param:
    if rule.statistic == "mean":
        return RuleSays.MEAN()
    if rule.statistic == "min":
        return RuleSays.MINIMUM()
    return rule.statistic


def _point(rule: Rule, *, with_basis: bool = True) -> Message:
    point = _POINT[rule.point]()
    if rule.basis is None or not with_basis:
        return point
    return RuleSays.POINT_BASIS(point=point, basis=_BASIS[rule.basis]())


def _qualifiers(rule: Rule, *, prose: bool) -> list[Message]:
    """What narrows or widens the population, as the readings and the point decide."""
    p = rule.population
    out: list[Message] = []
    if p.model_scope is not None:
        out.append(_MODEL[p.model_scope]())
    if p.excluded_in_task is ExcludedInTaskTerms.REMOVE_TASK:
        out.append(RuleSays.REMOVE_TASK())
    elif p.excluded_in_task is ExcludedInTaskTerms.REMOVE_CALL:
        out.append(RuleSays.REMOVE_CALL())
    if p.cache_hits is CacheHits.COUNTED and p.units == "calls":
        out.append(RuleSays.CACHE_COUNTED())
    if prose:
        if p.bound is Bound.UPPER:
            out.append(RuleSays.UPPER_BOUND(point=_POINT[rule.point]()))
        elif p.bound is Bound.LOWER:
            out.append(
                RuleSays.LOWER_BOUND_TASK() if p.units == "tasks" else RuleSays.LOWER_BOUND_SPEED()
            )
    elif p.min_samples is not None:
        if rule.kind == "time_slice":  # the check counts the slices with data
            out.append(RuleSays.MIN_SLICES(n=p.min_samples))
        else:
            says = RuleSays.MIN_TASKS if p.units == "tasks" else RuleSays.MIN
            out.append(says(n=p.min_samples))
    return out


def _population(rule: Rule, *, prose: bool) -> Message:
    tasks = rule.population.units == "tasks"
    if prose:
        base = RuleSays.TASKS_PROSE() if tasks else RuleSays.CALLS_PROSE()
    else:
        base = RuleSays.TASKS() if tasks else RuleSays.CALLS()
    qualifiers = _qualifiers(rule, prose=prose)
    if not qualifiers:
        return base
    return RuleSays.WITH(population=base, qualifiers=qualifiers)


def _units(rule: Rule) -> Message:
    return RuleSays.UNIT_TASKS() if rule.population.units == "tasks" else RuleSays.UNIT_CALLS()


def compact(rule: Rule) -> Message:
    """The rule as a criterion line: "p95 ≤ 500 ms (nearest rank) at …, answered calls in scope"."""
    cmp = rule.comparison.symbol()
    if rule.kind == "time_slice":
        return RuleSays.COMPACT_SLICES(
            statistic=_statistic(rule),
            point=_point(rule),
            unit=_unit(rule),
            cmp=cmp,
            threshold=rule.threshold,
            share=rule.slices_passing_percent,
            slices=RuleSays.SLICES(minutes=rule.slice_minutes),
            population=_population(rule, prose=False),
            min=rule.min_per_slice,
        )
    assert rule.method is not None
    common: dict[str, Param] = {
        "percentile": rule.percentile,
        "cmp": cmp,
        "threshold": rule.threshold,
        "unit": _unit(rule),
        "method": _METHOD[rule.method](),
        "point": _point(rule),
        "population": _population(rule, prose=False),
    }
    if rule.share is None:
        return RuleSays.COMPACT_PERCENTILE(**common)
    at_or = RuleSays.AT_OR_ABOVE() if rule.comparison.inclusive else RuleSays.ABOVE()
    return RuleSays.COMPACT_PERCENTILE_FROM_TOP(
        share=rule.share, units=_units(rule), at_or=at_or, **common
    )


def numerator(rule: Rule) -> Message:
    """What the rule counts as passing: units (or slices) on the right side of the limit."""
    common: dict[str, Param] = {
        "point": _point(rule, with_basis=False),
        "cmp": _CMP[rule.comparison](),
        "threshold": rule.threshold,
        "unit": _unit(rule),
    }
    if rule.kind == "time_slice":
        return RuleSays.NUMERATOR_SLICES(statistic=_statistic(rule), **common)
    return RuleSays.NUMERATOR(units=_units(rule), **common)


def denominator(rule: Rule) -> Message:
    """What the rule counts out of: the population in the window (or its slices)."""
    population = _population(rule, prose=True)
    if rule.kind == "time_slice":
        return RuleSays.DENOMINATOR_SLICES(
            minutes=rule.slice_minutes, min=rule.min_per_slice, population=population
        )
    return RuleSays.DENOMINATOR(population=population)


def pass_rule(rule: Rule) -> Message:
    """When the rule holds, in the arithmetic the check applies (``metering.rank``)."""
    common: dict[str, Param] = {
        "cmp": _CMP[rule.comparison](),
        "threshold": rule.threshold,
        "unit": _unit(rule),
    }
    if rule.kind == "time_slice":
        return RuleSays.PASS_SLICES(share=rule.slices_passing_percent)
    if rule.method is PercentileMethod.LINEAR:
        return RuleSays.PASS_LINEAR(percentile=rule.percentile, units=_units(rule), **common)
    if rule.share is None:
        return RuleSays.PASS_NEAREST(percentile=rule.percentile, units=_units(rule), **common)
    return RuleSays.PASS_NEAREST_FROM_TOP(
        share=rule.share, percentile=rule.percentile, units=_units(rule), **common
    )


def windowed(rule: Rule) -> Message:
    """The criterion line with its window and zone, as a document lists a term's criterion."""
    return RuleSays.PER_WINDOW(rule=compact(rule), window=_WINDOW[rule.window](), zone=rule.zone)


def prose(rule: Rule) -> Message:
    """The rule as a clause states it: the window and its zone, the statistic, the population
    with its readings and bounds, the comparison at the limit, the threshold. (A clause states
    the minimum sample size and the tokens-per-second basis in sentences of their own.)"""
    common: dict[str, Param] = {
        "point": _point(rule, with_basis=False),
        "population": _population(rule, prose=True),
        "cmp": _CMP[rule.comparison](),
        "threshold": rule.threshold,
        "unit": _unit(rule),
        "window": _WINDOW[rule.window](),
        "zone": rule.zone,
    }
    if rule.kind == "time_slice":
        return RuleSays.PROSE_SLICES(
            share=rule.slices_passing_percent,
            minutes=rule.slice_minutes,
            min=rule.min_per_slice,
            units=_units(rule),
            statistic=_statistic(rule),
            **common,
        )
    assert rule.method is not None
    method = _METHOD[rule.method]()
    if rule.share is None:
        return RuleSays.PROSE_PERCENTILE(percentile=rule.percentile, method=method, **common)
    return RuleSays.PROSE_PERCENTILE_FROM_TOP(
        share=rule.share, percentile=rule.percentile, method=method, **common
    )


# ---------------------------------------------------------------------------------------------
# The readings, stated or default, each with what it changes


class ReadingSays(MessageCode):
    """Each reading's value and what it changes in the verdicts."""

    AT_THE_LIMIT_WITHIN = NC_(
        "reading.at_the_limit.within",
        "A value exactly at a latency threshold or at the rate limit is within it: ≤ for an "
        "upper limit, ≥ for a lower one.",
    )
    AT_THE_LIMIT_BEYOND = NC_(
        "reading.at_the_limit.beyond",
        "A value exactly at a latency threshold or at the rate limit is beyond it: a latency "
        "figure must be below an upper limit (<) or above a lower one (>), and traffic exactly "
        "at the rate limit is over it.",
    )
    MODEL_SCOPE_REQUESTED = NC_(
        "reading.model_scope.requested",
        "A call is in the scope of the listed models by the model it requested; a call "
        "answered by a fallback model stays in scope.",
    )
    MODEL_SCOPE_SERVED = NC_(
        "reading.model_scope.served",
        "A call is in the scope of the listed models by the model that served it; a call "
        "answered by an unlisted fallback model is out of scope.",
    )
    MODEL_SCOPE_EITHER = NC_(
        "reading.model_scope.either",
        "A call is in the scope of the listed models when either the model requested or the "
        "model served is listed.",
    )
    REMOVE_TASK = NC_(
        "reading.excluded_calls_in_task_terms.remove_task",
        "An agent task with an excluded call is left out of the task-level terms whole.",
    )
    REMOVE_CALL = NC_(
        "reading.excluded_calls_in_task_terms.remove_call",
        "An agent task with an excluded call stays in the task-level terms; its time still "
        "includes that call.",
    )
    STARTED = NC_(
        "reading.per_task_rate_counts.started",
        "A per-task rate limit counts the agent tasks started in each period.",
    )
    ACTIVE = NC_(
        "reading.per_task_rate_counts.active",
        "A per-task rate limit counts the agent tasks active in each period, from the period a "
        "task starts in to the one it ends in.",
    )
    UNCLASSIFIED_BOUNDS = NC_(
        "reading.unclassified_failures.bounds",
        "A failed call whose records do not say whose failure it was is counted both as the "
        "vendor's failure and as excluded; where the two disagree the verdict is indeterminate.",
    )
    UNCLASSIFIED_VENDOR = NC_(
        "reading.unclassified_failures.vendor",
        "A failed call whose records do not say whose failure it was counts as the vendor's "
        "failure.",
    )
    UNCLASSIFIED_EXCLUDED = NC_(
        "reading.unclassified_failures.excluded",
        "A failed call whose records do not say whose failure it was is excluded.",
    )
    CACHE_EXCLUDED = NC_(
        "reading.cache_hits.excluded",
        "A call a gateway answered from its own cache, never sent to the vendor, is left out of "
        "the latency and availability terms.",
    )
    CACHE_COUNTED = NC_(
        "reading.cache_hits.counted",
        "A call a gateway answered from its own cache is measured as an answered call.",
    )


_READING_WORDS: dict[tuple[str, str], ReadingSays] = {
    ("at_the_limit", "within"): ReadingSays.AT_THE_LIMIT_WITHIN,
    ("at_the_limit", "beyond"): ReadingSays.AT_THE_LIMIT_BEYOND,
    ("model_scope", "requested"): ReadingSays.MODEL_SCOPE_REQUESTED,
    ("model_scope", "served"): ReadingSays.MODEL_SCOPE_SERVED,
    ("model_scope", "either"): ReadingSays.MODEL_SCOPE_EITHER,
    ("excluded_calls_in_task_terms", "remove_task"): ReadingSays.REMOVE_TASK,
    ("excluded_calls_in_task_terms", "remove_call"): ReadingSays.REMOVE_CALL,
    ("per_task_rate_counts", "started"): ReadingSays.STARTED,
    ("per_task_rate_counts", "active"): ReadingSays.ACTIVE,
    ("unclassified_failures", "bounds"): ReadingSays.UNCLASSIFIED_BOUNDS,
    ("unclassified_failures", "vendor"): ReadingSays.UNCLASSIFIED_VENDOR,
    ("unclassified_failures", "excluded"): ReadingSays.UNCLASSIFIED_EXCLUDED,
    ("cache_hits", "excluded"): ReadingSays.CACHE_EXCLUDED,
    ("cache_hits", "counted"): ReadingSays.CACHE_COUNTED,
}


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading as a document states it: its name, value, whether the contract states it
    (else the default applies), and what it changes."""

    name: str
    value: str
    stated: bool
    effect: Message

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "stated": self.stated}


def readings_of(readings: Readings) -> Sequence[Reading]:
    """Every reading, stated or default, in the model's order."""
    stated = readings.model_fields_set
    out: list[Reading] = []
    for name in type(readings).model_fields:
        value = str(getattr(readings, name))
        out.append(Reading(name, value, name in stated, _READING_WORDS[(name, value)]()))
    return out
