"""What every result of a latency term in a window shares: the TermResult it is assembled into
(counts, notes on states and losses, exact and bounded units, headroom), and the verdict rule for
a figure read at the contracted point or at a stand-in that bounds it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from slacheck.checks.latency.wording import LatencySays, noun_for, noun_message
from slacheck.contract.criterion import latency_rule
from slacheck.contract.model import (
    Direction,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    TimeSliceObjective,
)
from slacheck.messages import Message
from slacheck.metering.context import CheckContext
from slacheck.metering.units import Bound, Counts, Point, Units
from slacheck.results import Losses
from slacheck.verdict import TermKind, TermResult, Verdict
from slacheck.windows import CalendarWindow


@dataclass(frozen=True, slots=True)
class Base:
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
            gap=gap(self.term.objective, observed),
            exact=None if point is None else self._exact_bounded(point)[0],
            bounded=None if point is None else self._exact_bounded(point)[1],
            rule=latency_rule(self.ctx.contract, self.term).to_dict(),
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
            return (LatencySays.UNKNOWN_STATUS(n=c.unknown, noun=noun_for(self.units, c.unknown)),)
        return ()

    def unmeasured(self, unit: str) -> TermResult:
        """No point to measure at: no data in the window, or the trace lacks the field."""
        c, noun = self.counts, noun_message(self.units)
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
            why = LatencySays.NOT_RECORDED(field=missing, ok=c.ok, noun=noun_for(self.units, c.ok))
        return self.result(Verdict.NOT_MEASURABLE, None, unit, 0, 0, (), (why,), None, details)


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


def gap(obj: OccurrenceObjective | TimeSliceObjective, observed: float | None) -> float | None:
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


def with_examples(r: TermResult, examples: tuple[str, ...]) -> TermResult:
    """``r`` with the ids of units that fail it, when there are any."""
    return dataclasses.replace(r, examples=examples) if examples else r


__all__ = ["Base", "decide", "gap", "with_examples"]
