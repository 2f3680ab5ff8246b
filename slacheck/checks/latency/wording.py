"""What the latency check says: its messages, each term's criterion, the counted nouns, and the
notes on the point a window was measured at and on an unstated tokens-per-second basis."""

from __future__ import annotations

from slacheck.contract.criterion import compact, latency_rule
from slacheck.contract.model import (
    Contract,
    LatencyTerm,
    MeasurementPoint,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.metering.units import Choice, Counts, How, Units


class LatencySays(MessageCode):
    """What the latency check says: its criteria and notes."""

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


def occurrence_criterion(contract: Contract, term: LatencyTerm) -> Message:
    """An occurrence term's criterion: its rule (``contract.criterion``) as a criterion line, the
    words every document uses for the same rule."""
    return compact(latency_rule(contract, term))


def slice_criterion(contract: Contract, term: LatencyTerm) -> Message:
    """A time-slice term's criterion: its rule as a criterion line."""
    return compact(latency_rule(contract, term))


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
    "noun_for",
    "noun_message",
    "occurrence_criterion",
    "point_notes",
    "slice_criterion",
    "unit_name",
]
