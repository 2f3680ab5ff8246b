"""Windows and samples (SLA503, SLA504): the period a term is judged over, and how few calls may
decide it."""

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import Contract, Window
from slacheck.contract.review.core import Hit, Loc, Severity, rule
from slacheck.messages import NC_, MessageCode

__all__ = ["WindowSays"]


class WindowSays(MessageCode):
    """What the window and sample rules say."""

    SLA503_TITLE = NC_("SLA503.title", "A rolling 30-day window where a calendar month is meant.")
    SLA503_WHY = NC_(
        "SLA503.why",
        "{name} is evaluated over rolling 30 days, but credits are owed per calendar month: in "
        "a 31-day month one day falls outside any single window, and a bad week counts in up "
        "to 30 overlapping windows.",
    )
    SLA503_FIX = NC_("SLA503.fix", "Set {name}'s window to calendar_month.")
    SLA504_TITLE = NC_("SLA504.title", "A term has no minimum sample count.")
    SLA504_WHY = NC_(
        "SLA504.why",
        "{name} has no min_samples: a month with 3 calls could be reported as met, and that "
        "verdict would carry the same weight as one on 100,000.",
    )
    SLA504_FIX = NC_(
        "SLA504.fix",
        "Add min_samples to {name} (e.g. 1,000 calls a month); fewer gives `no data`.",
    )


@rule("SLA503", Severity.MEDIUM, title=WindowSays.SLA503_TITLE)
def rolling_window(contract: Contract) -> Iterator[Hit]:
    """A rolling 30-day window where a calendar month is meant.

    Invoices, credits and reports run per calendar month. A rolling window has no month to
    match: 31-day months leave a day out, and which of the ~30 overlapping windows decides a
    month's credit is unwritten.
    """
    targets: list[tuple[Loc, str, Window]] = [
        (("latency", i, "window"), t.id, t.window) for i, t in enumerate(contract.latency)
    ]
    if contract.availability is not None:
        targets.append((("availability", "window"), "availability", contract.availability.window))
    for loc, name, window in targets:
        if window is not Window.ROLLING_30_DAYS:
            continue
        yield Hit(loc, WindowSays.SLA503_WHY(name=name), WindowSays.SLA503_FIX(name=name))


@rule("SLA504", Severity.MEDIUM, title=WindowSays.SLA504_TITLE)
def min_samples_missing(contract: Contract) -> Iterator[Hit]:
    """A term has no minimum sample count.

    Without `min_samples`, a thin month can be declared met on a handful of calls: p95 of 3
    calls is simply the slowest of them, and one good call makes 100 % availability.
    """
    targets: list[tuple[Loc, str]] = [
        (("latency", i, "min_samples"), t.id)
        for i, t in enumerate(contract.latency)
        if t.min_samples is None
    ]
    avail = contract.availability
    if avail is not None and avail.min_samples is None:
        targets.append((("availability", "min_samples"), "availability"))
    for loc, name in targets:
        yield Hit(loc, WindowSays.SLA504_WHY(name=name), WindowSays.SLA504_FIX(name=name))
