"""Verdicts and the frozen result of checking one term in one window."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from slacheck.messages import Message


class Verdict(StrEnum):
    """met | breached | indeterminate | not_measurable | no_data (see DOMAIN.md)."""

    MET = "met"
    BREACHED = "breached"
    #: measured at a different point, or a one-sided bound that cannot decide
    INDETERMINATE = "indeterminate"
    #: the trace lacks the field and it cannot be derived
    NOT_MEASURABLE = "not_measurable"
    #: nothing (or too little: below the minimum sample size) in scope in the window
    NO_DATA = "no_data"

    @property
    def ok(self) -> bool:
        return self is Verdict.MET


class TermKind(StrEnum):
    """What kind of term a result is for."""

    LATENCY = "latency"
    TIME_SLICE = "time_slice"
    REGIONS = "regions"
    ROUTING = "routing"
    RESIDENCY = "residency"
    PEAK = "peak"
    RATE_LIMIT = "rate_limit"
    AVAILABILITY = "availability"


#: Most examples a result carries (offending task ids, or sample ids for a met term).
MAX_EXAMPLES = 5


@dataclass(frozen=True, slots=True)
class TermResult:
    """One contract term in one calendar window: what was promised, measured, and how."""

    term_id: str  # e.g. "L1", "availability", "regions"
    kind: TermKind
    window: str  # "2026-07", "2026-Q3", "2026-07-01/30d"
    verdict: Verdict
    observed: float | None  # e.g. p95 = 412.0 (ms); availability 99.95 (%)
    unit: str  # "ms", "tokens/s", "%", "slices %", "calls", …
    #: what was promised, as the check reads it: words only when rendered (``criterion``: English)
    criterion_message: Message  # e.g. "p95 ≤ 500 ms (nearest rank) at full_response, …"
    good: int  # numerator
    total: int  # denominator
    examples: tuple[str, ...] = ()  # offending task ids (or none when met)
    #: what a reader should know about the figure: codes with parameters, worded at the edge
    notes: tuple[Message, ...] = ()
    excluded: dict[str, int] = field(default_factory=dict)  # reason → calls excluded
    partial_window: bool = False  # the traces cover only part of the window
    measured_at: str = ""  # the measurement point the figure was taken at
    details: dict[str, Any] = field(default_factory=dict)
    #: how far ``observed`` is from the threshold, in its unit: positive within (headroom),
    #: negative beyond (shortfall); None where the term has no single threshold
    gap: float | None = None
    #: units counted with their own figure at the contracted point, and with a bound from
    #: another point (nested points); None where no bound can arise
    exact: int | None = None
    bounded: int | None = None
    #: how much of the window the calls cover (``metering.Coverage.to_dict``)
    coverage: dict[str, Any] | None = None
    #: the rule the check evaluated (``contract.criterion.Rule.to_dict``): statistic,
    #: comparison at the limit, threshold, population, window and zone; None for a term kind
    #: whose rule has no threshold
    rule: dict[str, Any] | None = None

    @property
    def criterion(self) -> str:
        """The criterion in English (JSON's ``criterion``, JUnit and the English terminal)."""
        return self.criterion_message.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.term_id,
            "kind": self.kind,
            "window": self.window,
            "verdict": str(self.verdict),
            "observed": self.observed,
            "unit": self.unit,
            "criterion": self.criterion,
            "criterion_message": self.criterion_message.to_dict(),
            "good": self.good,
            "total": self.total,
            "examples": list(self.examples),
            "notes": [n.to_dict() for n in self.notes],
            "excluded": dict(sorted(self.excluded.items())),
            "partial_window": self.partial_window,
            "measured_at": self.measured_at,
            "gap": self.gap,
            "exact": self.exact,
            "bounded": self.bounded,
            "coverage": self.coverage,
            "rule": self.rule,
            "details": self.details,
        }
