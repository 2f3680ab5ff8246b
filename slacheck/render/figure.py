"""What a result's observed figure is, beside its criterion: the statistic itself, or a bound on
it, and whether it sits exactly at the threshold, where the contract's ``at_the_limit`` reading
decided the verdict.

A breach proven from server metrics shows the lower edge of a histogram bucket: the statistic is
above it. "1,000 ms" beside "≤ 1,000 ms" reads as met; "> 1,000 ms" says what was proven. A
figure read partly or wholly at another point (a stand-in) bounds the statistic on the
stand-in's side ("≤ 2.35 s"). A figure equal to the threshold is met or breached by the reading
alone; the row says which ("1,000 ms, at the limit (counted as beyond)"). Every row that shows
a latency term's figure (the report's tables and summary, the terminal, check.md, JUnit) words
it here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from slacheck.contract.model import Contract, OccurrenceObjective, TimeSliceObjective
from slacheck.messages import NC_, Message, MessageCode
from slacheck.verdict import TermKind, TermResult, Verdict

__all__ = ["Figure", "FigureSays", "apart", "figure_of", "limit_of"]


class FigureSays(MessageCode):
    """An observed figure that is a bound, or at the limit."""

    ABOVE = NC_("figure.above", "> {value}")
    AT_LEAST = NC_("figure.at_least", "≥ {value}")
    AT_MOST = NC_("figure.at_most", "≤ {value}")
    LIMIT_BEYOND = NC_("figure.at_limit_beyond", "{value}, at the limit (counted as beyond)")
    LIMIT_WITHIN = NC_("figure.at_limit_within", "{value}, at the limit (counted as within)")


_SIGNS = {">": FigureSays.ABOVE, "≥": FigureSays.AT_LEAST, "≤": FigureSays.AT_MOST}


@dataclass(frozen=True, slots=True)
class Figure:
    """A result's observed figure: ``sign`` "" (the statistic itself) or ">", "≥", "≤" (a bound
    on it); ``at_limit`` "within" or "beyond" when it equals the threshold and the contract's
    ``at_the_limit`` reading decided the verdict, else None."""

    value: float | None
    unit: str
    sign: str = ""
    at_limit: str | None = None

    def message(self, value: str | Message) -> str | Message:
        """The figure with ``value`` (already formatted for the reader) as a row shows it."""
        said: str | Message = value
        if self.sign:
            said = _SIGNS[self.sign](value=value)
        if self.at_limit == "beyond":
            return FigureSays.LIMIT_BEYOND(value=said)
        if self.at_limit == "within":
            return FigureSays.LIMIT_WITHIN(value=said)
        return said


def figure_of(r: TermResult, contract: Contract) -> Figure:
    """What ``r.observed`` is, for a latency term with a threshold; any other result's figure
    is the statistic itself."""
    plain = Figure(r.observed, r.unit)
    term = next((t for t in contract.latency if t.id == r.term_id), None)
    if term is None or r.observed is None or not isinstance(term.objective, OccurrenceObjective):
        return plain
    if r.verdict not in (Verdict.MET, Verdict.BREACHED):
        return plain
    obj = term.objective
    metrics = r.details.get("metrics") if r.details.get("evidence") == "metrics" else None
    sign = ""
    if isinstance(metrics, dict) and metrics.get("observed_is") in ("lower_bound", "upper_bound"):
        # a histogram bucket's edge: the statistic lies in (lower, upper]
        sign = ">" if metrics["observed_is"] == "lower_bound" else "≤"
    elif r.bounded and r.details.get("point_bound") in ("upper", "lower"):
        # figures from another point stand in for some or all units: a later point's are
        # upper bounds (the statistic is at most the figure), a lower one's the reverse
        sign = "≤" if r.details["point_bound"] == "upper" else "≥"
    at_limit = None
    if sign != ">" and r.observed == obj.threshold:
        at_limit = "within" if r.verdict is Verdict.MET else "beyond"
    return Figure(r.observed, r.unit, sign, at_limit)


def limit_of(r: TermResult, contract: Contract) -> float | None:
    """The figure ``r.observed`` is judged against, in its unit: a latency term's threshold (an
    occurrence term) or share of passing slices (a time-slice term), availability's target,
    100 % for the region list and residency (every call of known region must keep to them);
    None for other results (their figures are counts)."""
    if r.kind == TermKind.AVAILABILITY:
        return None if contract.availability is None else contract.availability.target_percent
    if r.kind in (TermKind.REGIONS, TermKind.RESIDENCY) and r.unit == "%":
        return 100.0
    if r.kind not in (TermKind.LATENCY, TermKind.TIME_SLICE):
        return None
    term = next((t for t in contract.latency if t.id == r.term_id), None)
    if term is None:
        return None
    if isinstance(term.objective, OccurrenceObjective):
        return term.objective.threshold
    if isinstance(term.objective, TimeSliceObjective):
        return term.objective.slices_passing_percent
    return None


def apart(
    value: float, limit: float | None, show: Callable[[float, int], str], least: int, most: int = 9
) -> str:
    """``value`` as ``show`` writes it with ``least`` decimals, or with the fewest more that
    tell it from ``limit`` when it is not the limit: a figure that is not the threshold never
    reads as the threshold. A p95 of 2,004 ms is "2 s" in seconds to two decimals, beside a
    limit of "2,000 ms (2 s)" and a verdict of breached; it is written "2,004 ms" instead."""
    text = show(value, least)
    if limit is None or value == limit or text != show(limit, least):
        return text
    for digits in range(least + 1, most + 1):
        text = show(value, digits)
        if text != show(limit, digits):
            return text
    return text
