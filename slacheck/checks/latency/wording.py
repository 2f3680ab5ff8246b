"""What the latency check says: its messages, each term's criterion, the counted nouns, and the
notes on the point a window was measured at and on an unstated tokens-per-second basis."""

from __future__ import annotations

from slacheck.contract.model import (
    Direction,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    PercentileMethod,
    TimeSliceObjective,
    TokensPerSecondBasis,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.metering.units import Choice, Counts, How, Units


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


def noun_for(units: Units, n: int) -> Message:
    """The counted noun in the form that agrees with ``n`` ("1 call", "2 calls")."""
    return LatencySays.TASKS(n=n) if units.noun == "tasks" else LatencySays.CALLS(n=n)


def noun_message(units: Units) -> Message:
    """The counted noun in the plural ("calls", "tasks")."""
    return noun_for(units, 2)


#: what a stand-in is, said when a window counts with it alone
_STAND_IN_NOTES = {
    MeasurementPoint.SERVER_PROCESSING: LatencySays.LATER_SERVER,
    MeasurementPoint.TIME_TO_FIRST_TOKEN: LatencySays.LATER_TTFT,
    MeasurementPoint.OUTPUT_TOKENS_PER_SECOND: LatencySays.WHOLE_FOR_GENERATION,
    MeasurementPoint.TASK_END_TO_END: LatencySays.SUBTREE,
}


def point_notes(term: LatencyTerm, units: Units, c: Counts, choice: Choice) -> tuple[Message, ...]:
    """Why a window is measured at the point ``choose_point`` chose: nothing at the contracted
    point; a bound from the stand-in, or from each unit's own figure else its stand-in's; the
    units left out."""
    primary, fallback = units.primary, units.fallback
    left_out = choice.left_out
    tail = (LatencySays.NEITHER(n=left_out, noun=noun_for(units, left_out)),) if left_out else ()
    if choice.how is How.STAND_IN:
        said = _STAND_IN_NOTES.get(term.measurement_point)
        return (*((said(),) if said is not None else ()), *tail)
    if choice.how is How.MIXED and fallback is not None:
        note = (
            LatencySays.MIXED_SUBTREE(field=primary.field, n=c.n_p, ok=c.ok)
            if units.noun == "tasks"
            else LatencySays.MIXED(
                field=primary.field,
                n=c.n_p,
                ok=c.ok,
                noun=noun_for(units, c.ok),
                fallback=fallback.field,
                point=fallback.name,
            )
        )
        return (note, *tail)
    if choice.how is How.PARTLY:
        return (
            LatencySays.PARTLY_RECORDED(
                field=primary.field, n=c.n_p, ok=c.ok, noun=noun_for(units, c.ok)
            ),
        )
    return ()


def unit_name(term: LatencyTerm) -> str:
    """The figure's unit as results carry it."""
    return (
        "tokens/s" if term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND else "ms"
    )


def unit_message(term: LatencyTerm) -> Message:
    """The figure's unit, worded."""
    if term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        return LatencySays.TOKENS_PER_SECOND()
    return LatencySays.MS()


def basis_message(term: LatencyTerm) -> Message | None:
    """A tokens-per-second term's basis, worded; None for any other point."""
    if term.measurement_point is not MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        return None
    basis = term.tokens_per_second_basis
    if basis is TokensPerSecondBasis.AFTER_FIRST_TOKEN:
        return LatencySays.AFTER_FIRST_TOKEN()
    if basis is TokensPerSecondBasis.WHOLE_REQUEST:
        return LatencySays.WHOLE_REQUEST()
    return LatencySays.BASIS_UNSTATED()


def scope_message(term: LatencyTerm, units: Units) -> Message:
    """What the term counts, with its minimum."""
    tasks = units.noun == "tasks"
    if term.min_samples is None:
        return LatencySays.SCOPE_TASKS() if tasks else LatencySays.SCOPE_CALLS()
    says = LatencySays.SCOPE_TASKS_MIN if tasks else LatencySays.SCOPE_CALLS_MIN
    return says(min=term.min_samples)


def occurrence_criterion(term: LatencyTerm, obj: OccurrenceObjective, units: Units) -> Message:
    """An occurrence term's criterion: percentile, threshold, method, point and scope."""
    basis = basis_message(term)
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
        "unit": unit_message(term),
        "method": method,
        "point": point,
        "scope": scope_message(term, units),
    }
    if obj.direction is Direction.AT_MOST:
        return LatencySays.AT_MOST(percentile=obj.percentile, **common)
    return LatencySays.AT_LEAST(
        percentile=100 - obj.percentile,
        share=obj.percentile,
        noun=noun_message(units),
        **common,
    )


def slice_criterion(term: LatencyTerm, obj: TimeSliceObjective, units: Units) -> Message:
    """A time-slice term's criterion: statistic, threshold, passing share and slices."""
    basis = basis_message(term)
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
        unit=unit_message(term),
        threshold=obj.threshold,
        share=obj.slices_passing_percent,
        slices=slices,
        scope=scope_message(term, units),
        min=obj.min_calls_per_slice,
    )


def alt_note(alt: float, n: int, decides: bool) -> Message:
    """An unstated basis: the figure after the first token (``decides``: it would turn the
    verdict)."""
    says = LatencySays.BASIS_ALTERNATIVE_DECIDES if decides else LatencySays.BASIS_ALTERNATIVE
    return says(value=alt, n=n)


def alt_slice_note(share: float, n: int, decides: bool) -> Message:
    """An unstated basis: the passing share of slices after the first token (``decides``: it
    would turn the verdict)."""
    says = (
        LatencySays.BASIS_ALTERNATIVE_SLICES_DECIDES
        if decides
        else LatencySays.BASIS_ALTERNATIVE_SLICES
    )
    return says(share=share, n=n)


__all__ = [
    "LatencySays",
    "alt_note",
    "alt_slice_note",
    "basis_message",
    "noun_for",
    "noun_message",
    "occurrence_criterion",
    "point_notes",
    "scope_message",
    "slice_criterion",
    "unit_message",
    "unit_name",
]
