"""The contract's clock (SLA502, SLA505): the time zone that bounds its months, and maintenance
windows read in it against local business hours."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from slacheck.contract.model import Contract, MaintenanceWindow, WeeklyRecurrence
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.contract.review.wording import quote_minutes
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param

__all__ = ["TimeZoneSays"]

_BUSINESS_START, _BUSINESS_END = 9 * 60, 18 * 60  # 09:00–18:00, minutes after midnight
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


class TimeZoneSays(MessageCode):
    """What the time-zone and maintenance rules say, and how they name the zone."""

    ZONE_UNSTATED = NC_("review.zone.unstated", "UTC, since time_zone is unstated")

    SLA502_TITLE = NC_(
        "SLA502.title",
        "The time zone that bounds months and maintenance windows is unstated.",
    )
    SLA502_WHY = NC_(
        "SLA502.why",
        "No time_zone: months are bounded at UTC midnight. For a team in Asia/Shanghai a month "
        "then starts at 08:00 on the 1st, so up to 8 h of traffic counts in the wrong month.",
    )
    SLA502_WHY_MAINTENANCE = NPC_(
        "SLA502.why.maintenance",
        "No time_zone: months are bounded at UTC midnight. For a team in Asia/Shanghai a month "
        "then starts at 08:00 on the 1st, so up to 8 h of traffic counts in the wrong month, and "
        "the {windows} maintenance window moves with it.",
        "No time_zone: months are bounded at UTC midnight. For a team in Asia/Shanghai a month "
        "then starts at 08:00 on the 1st, so up to 8 h of traffic counts in the wrong month, and "
        "the {windows} maintenance windows move with it.",
        count="windows",
    )
    SLA502_FIX = NC_(
        "SLA502.fix", "Add contract.time_zone (an IANA name such as Asia/Shanghai or UTC)."
    )
    SLA505_TITLE = NC_("SLA505.title", "A maintenance window falls inside business hours.")
    SLA505_WEEKLY = NC_(
        "SLA505.weekly",
        "The weekly window ({days} {start}, {duration} min) spends {overlap} a week",
    )
    SLA505_ONCE = NC_("SLA505.once", "The window {start} to {end} spends {overlap}")
    SLA505_WHY = NC_(
        "SLA505.why",
        "{what} inside business hours (Mon–Fri 09:00–18:00, {zone}); calls then are excluded, "
        "so an outage while your agents are busiest does not count.",
    )
    SLA505_FIX = NC_(
        "SLA505.fix",
        "Move maintenance outside business hours (e.g. Sunday 02:00–04:00 local) or state that "
        "maintenance inside business hours counts as downtime.",
    )


def _zone_name(contract: Contract) -> Param:
    tz = contract.contract.time_zone
    return tz if tz else TimeZoneSays.ZONE_UNSTATED()


@rule("SLA502", Severity.MEDIUM, title=TimeZoneSays.SLA502_TITLE)
def time_zone_unstated(contract: Contract) -> Iterator[Hit]:
    """The time zone that bounds months and maintenance windows is unstated.

    Months, quarters and maintenance windows need a time zone. Unstated, slacheck (and most
    vendors) use UTC; in Asia/Shanghai the month then starts at 08:00 on the 1st, moving up to
    8 h of traffic into the neighbouring month's figures and credits.
    """
    if contract.contract.time_zone is not None:
        return
    windows = len(contract.exclusions.maintenance)
    yield Hit(
        ("contract", "time_zone"),
        TimeZoneSays.SLA502_WHY_MAINTENANCE(windows=windows)
        if windows
        else TimeZoneSays.SLA502_WHY(),
        TimeZoneSays.SLA502_FIX(),
    )


def _weekly_overlap(w: WeeklyRecurrence) -> int:
    """Minutes a week that a weekly window spends in Mon–Fri 09:00–18:00 (local)."""
    start = w.start.hour * 60 + w.start.minute
    week = 7 * 1440
    total = 0
    for day in w.days:
        a = _DAYS.index(day) * 1440 + start
        b = a + w.duration_minutes
        for d in range(5):
            for wrap in (0, week):  # a window late on Sunday runs into Monday
                lo, hi = d * 1440 + _BUSINESS_START + wrap, d * 1440 + _BUSINESS_END + wrap
                total += max(0, min(b, hi) - max(a, lo))
    return total


def _interval_overlap(m: MaintenanceWindow, zone: ZoneInfo) -> int:
    """Minutes of a one-off window inside Mon–Fri 09:00–18:00 in the contract's zone."""
    if m.start is None or m.end is None:  # a weekly window; the model guarantees one form
        return 0

    def local(t: dt.datetime) -> dt.datetime:
        return t.replace(tzinfo=zone) if t.tzinfo is None else t.astimezone(zone)

    start, end = local(m.start), local(m.end)
    total = 0.0
    day = start.date()
    while day <= end.date():
        if day.weekday() < 5:
            lo = dt.datetime.combine(day, dt.time(9), tzinfo=zone)
            hi = dt.datetime.combine(day, dt.time(18), tzinfo=zone)
            total += max(0.0, (min(end, hi) - max(start, lo)).total_seconds() / 60)
        day += dt.timedelta(days=1)
    return round(total)


@rule("SLA505", Severity.MEDIUM, title=TimeZoneSays.SLA505_TITLE)
def maintenance_in_business_hours(contract: Contract) -> Iterator[Hit]:
    """A maintenance window falls inside business hours.

    Calls in a maintenance window are excluded from every term. A window inside 09:00–18:00
    Monday to Friday (in the contract's time zone) excludes the hours when the customer's
    agents are busiest, so an outage then costs the vendor nothing.
    """
    zone = contract.zone
    for i, m in enumerate(contract.exclusions.maintenance):
        what: Message
        if m.weekly is not None:
            w = m.weekly
            minutes = _weekly_overlap(w)
            what = TimeZoneSays.SLA505_WEEKLY(
                days=list(w.days),
                start=f"{w.start:%H:%M}",
                duration=w.duration_minutes,
                overlap=quote_minutes(minutes),
            )
        else:
            minutes = _interval_overlap(m, zone)
            what = TimeZoneSays.SLA505_ONCE(
                start=str(m.start), end=str(m.end), overlap=quote_minutes(minutes)
            )
        if minutes == 0:
            continue
        yield Hit(
            ("exclusions", "maintenance", i),
            TimeZoneSays.SLA505_WHY(what=what, zone=_zone_name(contract)),
            TimeZoneSays.SLA505_FIX(),
        )
