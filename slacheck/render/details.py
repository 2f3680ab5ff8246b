"""Typed per-kind figures the documents show beside a verdict, read once from a result's
``details`` (the JSON's ``details`` object, which stays as the checks write it): a template reads
these attributes, never a key of the dict, so a renamed or missing figure fails at the edge,
in one place, not as an empty cell."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slacheck.verdict import TermKind, TermResult

__all__ = ["AvailabilityDetails", "Details", "PeakDetails", "RateLimitDetails", "details_of"]


def _int(value: Any) -> int:
    return 0 if value is None or value != value else int(value)


def _float(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


@dataclass(frozen=True, slots=True)
class AvailabilityDetails:
    """An availability window's credit and the failures it could not classify."""

    credit_percent: float | None  # None: the contract has no credits, or the window no figure
    claim_deadline: str | None  # ISO date, in the contract's zone
    unclassified_calls: int
    undecided_calls: int
    cache_hit_calls: int

    @classmethod
    def of(cls, r: TermResult) -> AvailabilityDetails:
        d = r.details
        return cls(
            _float(d.get("credit_percent")),
            d.get("claim_deadline"),
            _int(d.get("unclassified_calls")),
            _int(d.get("undecided_calls")),
            _int(d.get("cache_hit_calls")),
        )


@dataclass(frozen=True, slots=True)
class PeakDetails:
    """A peak window's minutes and calls at peak, and the p95 at and off peak."""

    peak_minutes: int
    calls_at_peak: int
    p95_ms_at_peak: float | None
    p95_ms_off_peak: float | None

    @classmethod
    def of(cls, r: TermResult) -> PeakDetails:
        d = r.details
        return cls(
            _int(d.get("peak_minutes")),
            _int(d.get("calls_at_peak")),
            _float(d.get("p95_ms_at_peak")),
            _float(d.get("p95_ms_off_peak")),
        )


@dataclass(frozen=True, slots=True)
class RateLimitDetails:
    """A rate-limit window's busiest bucket and its throttled calls."""

    peak_observed: int | float | None  # the busiest bucket's amount (calls, tasks or tokens)
    peak_observed_at: Any  # its start (UTC microseconds), None without traffic
    throttled_calls: int
    throttled_under_limit: int

    @classmethod
    def of(cls, r: TermResult) -> RateLimitDetails:
        d = r.details
        return cls(
            d.get("peak_observed"),
            d.get("peak_observed_at"),
            _int(d.get("throttled_calls")),
            _int(d.get("throttled_under_limit")),
        )


Details = AvailabilityDetails | PeakDetails | RateLimitDetails

_BY_KIND: dict[str, type[AvailabilityDetails] | type[PeakDetails] | type[RateLimitDetails]] = {
    str(TermKind.AVAILABILITY): AvailabilityDetails,
    str(TermKind.PEAK): PeakDetails,
    str(TermKind.RATE_LIMIT): RateLimitDetails,
}


def details_of(r: TermResult) -> Details:
    """The result's figures as its kind's type; a kind without figures here is a usage error
    of the template that asked."""
    kind = _BY_KIND.get(str(r.kind))
    if kind is None:
        raise KeyError(f"no typed details for a {r.kind} result")
    return kind.of(r)
