"""Calendar windows and maintenance intervals in the contract's time zone, as UTC microseconds."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from slacheck.contract.model import YEARS, Exclusions, Window
from slacheck.errors import UsageError

_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

#: A window whose first or last call is within this of its edge counts as covered: traces
#: rarely start on the dot, and an agent service is often quiet for hours at night.
COVER_SLACK_US = 3 * 3_600_000_000


@dataclass(frozen=True, slots=True)
class CalendarWindow:
    """[start_us, end_us) in UTC microseconds; ``label`` as users write it (2026-07, 2026-Q3)."""

    label: str
    start_us: int
    end_us: int
    zone: str
    #: the contract's effective period cuts this window: it is counted over less than its label
    clipped: bool = False


def to_us(when: dt.datetime) -> int:
    return int(when.timestamp()) * 1_000_000 + when.microsecond


def from_us(us: int, zone: ZoneInfo) -> dt.datetime:
    return dt.datetime.fromtimestamp(us // 1_000_000, tz=zone).replace(microsecond=us % 1_000_000)


def local_midnight(day: dt.date, zone: ZoneInfo) -> int:
    return to_us(dt.datetime(day.year, day.month, day.day, tzinfo=zone))


def month_window(year: int, month: int, zone: ZoneInfo) -> CalendarWindow:
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return CalendarWindow(
        f"{year:04d}-{month:02d}",
        local_midnight(dt.date(year, month, 1), zone),
        local_midnight(nxt, zone),
        str(zone),
    )


def quarter_window(year: int, quarter: int, zone: ZoneInfo) -> CalendarWindow:
    first = dt.date(year, 3 * quarter - 2, 1)
    nxt = dt.date(year + (quarter == 4), (3 * quarter) % 12 + 1, 1)
    return CalendarWindow(
        f"{year:04d}-Q{quarter}",
        local_midnight(first, zone),
        local_midnight(nxt, zone),
        str(zone),
    )


#: Years a period may name: those a contract may be dated in (``contract.model.YEARS``).
_PERIOD_YEARS = YEARS


def parse_period(text: str, zone: ZoneInfo) -> CalendarWindow:
    """`2026-07` (a month) or `2026-Q3` (a quarter), bounded in ``zone``."""
    year = re.match(r"\s*(\d{4})-", text)
    if year and not _PERIOD_YEARS[0] <= int(year.group(1)) <= _PERIOD_YEARS[1]:
        raise UsageError(
            f"period {text!r} is outside the years {_PERIOD_YEARS[0]}–{_PERIOD_YEARS[1]}"
        )
    m = re.fullmatch(r"(\d{4})-(\d{2})", text.strip())
    if m and 1 <= int(m.group(2)) <= 12:
        return month_window(int(m.group(1)), int(m.group(2)), zone)
    q = re.fullmatch(r"(\d{4})-[Qq]([1-4])", text.strip())
    if q:
        return quarter_window(int(q.group(1)), int(q.group(2)), zone)
    raise UsageError(f"period {text!r} is neither a month like 2026-07 nor a quarter like 2026-Q3")


def windows_for(
    kind: Window,
    zone: ZoneInfo,
    start_us: int,
    end_us: int,
    *,
    anchor: dt.date | None = None,
) -> list[CalendarWindow]:
    """The windows of ``kind`` that overlap [start_us, end_us).

    Rolling 30-day windows are laid end to end from ``anchor`` (the contract's effective start).
    """
    if end_us <= start_us:
        end_us = start_us + 1
    first = from_us(start_us, zone).date()
    last = from_us(end_us - 1, zone).date()
    out: list[CalendarWindow] = []
    if kind is Window.CALENDAR_MONTH:
        y, m = first.year, first.month
        while (y, m) <= (last.year, last.month):
            out.append(month_window(y, m, zone))
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    elif kind is Window.CALENDAR_QUARTER:
        y, q = first.year, (first.month - 1) // 3 + 1
        while (y, q) <= (last.year, (last.month - 1) // 3 + 1):
            out.append(quarter_window(y, q, zone))
            y, q = (y + 1, 1) if q == 4 else (y, q + 1)
    else:
        base = anchor or first
        offset = (first - base).days // 30
        day = base + dt.timedelta(days=30 * offset)
        while day <= last:
            nxt = day + dt.timedelta(days=30)
            out.append(
                CalendarWindow(
                    f"{day.isoformat()}/30d",
                    local_midnight(day, zone),
                    local_midnight(nxt, zone),
                    str(zone),
                )
            )
            day = nxt
    return out


def split(period: CalendarWindow, kind: Window, zone: ZoneInfo) -> list[CalendarWindow]:
    """The term's windows inside a requested period (a quarter holds three months)."""
    if kind is Window.CALENDAR_QUARTER and period.label.count("Q"):
        return [period]
    if kind is Window.CALENDAR_MONTH:
        return windows_for(kind, zone, period.start_us, period.end_us)
    return windows_for(kind, zone, period.start_us, period.end_us)


def maintenance_intervals(
    exclusions: Exclusions, zone: ZoneInfo, start_us: int, end_us: int
) -> list[tuple[int, int]]:
    """Every maintenance interval overlapping [start_us, end_us), in UTC µs, merged and sorted."""
    spans: list[tuple[int, int]] = []
    for w in exclusions.maintenance:
        if w.start is not None and w.end is not None:
            first = w.start if w.start.tzinfo else w.start.replace(tzinfo=zone)
            last_at = w.end if w.end.tzinfo else w.end.replace(tzinfo=zone)
            spans.append((to_us(first), to_us(last_at)))
        elif w.weekly is not None:
            day = from_us(start_us, zone).date() - dt.timedelta(days=1)
            last = from_us(end_us, zone).date() + dt.timedelta(days=1)
            wanted = {_DAYS.index(d) for d in w.weekly.days}
            while day <= last:
                if day.weekday() in wanted:
                    local = dt.datetime.combine(day, w.weekly.start, tzinfo=zone)
                    at = to_us(local)
                    spans.append((at, at + w.weekly.duration_minutes * 60_000_000))
                day += dt.timedelta(days=1)
    spans = sorted(x for x in spans if x[1] > start_us and x[0] < end_us)
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged
