"""Which contracted windows the calls cover only in part, in the contract's time zone."""

from __future__ import annotations

from collections.abc import Iterable

from slacheck.contract.model import Window
from slacheck.contract.review import Severity
from slacheck.match.mismatch.core import Code, Mismatch
from slacheck.messages import NC_, NPC_, MessageCode
from slacheck.metering.context import Metering
from slacheck.windows import from_us

__all__ = ["CoverageSaid", "find_window_coverage"]


class CoverageSaid(MessageCode):
    """What the window-coverage finder says."""

    COVERAGE_TITLE = NPC_(
        "mismatch.window_coverage.title",
        "{window}: the traces cover {with_calls} of {days} day",
        "{window}: the traces cover {with_calls} of {days} days",
        count="days",
    )
    COVERAGE_TITLE_EDGES = NC_(
        "mismatch.window_coverage.title_edges",
        "{window}: the calls stop short of the window's start or end",
    )
    COVERAGE_TITLE_CLIPPED = NC_(
        "mismatch.window_coverage.title_clipped",
        "{window}: the contract is in force for part of this window only",
    )
    COVERAGE_DETAIL_EMPTY = NPC_(
        "mismatch.window_coverage.detail_empty",
        "The {kind} window {window} ({zone}) has {days} day and no in-scope call: its verdicts "
        "have no data.",
        "The {kind} window {window} ({zone}) has {days} days and no in-scope call: its verdicts "
        "have no data.",
        count="days",
    )
    COVERAGE_DETAIL = NPC_(
        "mismatch.window_coverage.detail",
        "The {kind} window {window} ({zone}) has {days} day; in-scope calls fall on {with_calls} "
        "of them, between {first} and {last}. A verdict for this window covers part of it and "
        "says so; it cannot settle the window.",
        "The {kind} window {window} ({zone}) has {days} days; in-scope calls fall on {with_calls} "
        "of them, between {first} and {last}. A verdict for this window covers part of it and "
        "says so; it cannot settle the window.",
        count="days",
    )


def find_window_coverage(m: Metering) -> Iterable[Mismatch]:
    """Each contracted window the calls cover only in part (``Metering.coverage``: the same rule
    the verdicts' ``partial_window`` follows), in the contract's time zone."""
    contract = m.contract
    users: dict[Window, list[str]] = {}
    for term in contract.latency:
        users.setdefault(term.window, []).append(term.id)
    if contract.availability is not None:
        users.setdefault(contract.availability.window, []).append("availability")
    zone = contract.zone
    for kind, who in users.items():
        for w in m.windows(kind):
            cov = m.coverage(w)
            if not cov.partial:
                continue
            first = last = "—"
            if cov.first_us is not None and cov.last_us is not None:
                first = f"{from_us(cov.first_us, zone):%Y-%m-%d %H:%M}"
                last = f"{from_us(cov.last_us, zone):%Y-%m-%d %H:%M}"
            yield Mismatch(
                Code.WINDOW_COVERAGE,
                Severity.MEDIUM,
                ", ".join(who),
                (
                    CoverageSaid.COVERAGE_TITLE(
                        window=w.label, with_calls=cov.days_with_calls, days=cov.days
                    )
                    if cov.days_with_calls < cov.days
                    else CoverageSaid.COVERAGE_TITLE_CLIPPED(window=w.label)
                    if cov.clipped
                    else CoverageSaid.COVERAGE_TITLE_EDGES(window=w.label)
                ),
                (
                    CoverageSaid.COVERAGE_DETAIL(
                        kind=str(kind),
                        window=w.label,
                        zone=w.zone,
                        days=cov.days,
                        with_calls=cov.days_with_calls,
                        first=first,
                        last=last,
                    )
                    if cov.days_with_calls
                    else CoverageSaid.COVERAGE_DETAIL_EMPTY(
                        kind=str(kind), window=w.label, zone=w.zone, days=cov.days
                    )
                ),
                {
                    "window": w.label,
                    "window_kind": str(kind),
                    "zone": w.zone,
                    "days": cov.days,
                    "days_with_calls": cov.days_with_calls,
                    "edges_covered": cov.edges_covered,
                    "clipped": cov.clipped,
                    "terms": who,
                },
            )
