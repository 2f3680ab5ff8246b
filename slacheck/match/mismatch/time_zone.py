"""Calls whose calendar month in the contract's time zone differs from their month in UTC."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from zoneinfo import ZoneInfo

import ibis.expr.types as ir

from slacheck.contract.model import Contract
from slacheck.contract.review import Severity
from slacheck.match.mismatch.core import Code, Mismatch, Range, aggregate_row, as_int
from slacheck.messages import NPC_, MessageCode
from slacheck.metering.derive import scoped
from slacheck.metering.windowexpr import in_intervals_expr
from slacheck.windows import from_us, month_window

__all__ = ["ZoneSaid", "find_time_zone"]


class ZoneSaid(MessageCode):
    """What the time-zone finder says."""

    ZONE_TITLE = NPC_(
        "mismatch.time_zone_month.title",
        "{moved} call falls in a different calendar month in {zone} than in UTC",
        "{moved} calls fall in a different calendar month in {zone} than in UTC",
        count="moved",
    )
    ZONE_DETAIL = NPC_(
        "mismatch.time_zone_month.detail",
        "The contract bounds its months in {zone} (UTC{offset}); {moved} of {calls} in-scope call "
        "lies between a month's UTC midnight and its local midnight. A monthly figure computed in "
        "UTC would put it in the wrong month.",
        "The contract bounds its months in {zone} (UTC{offset}); {moved} of {calls} in-scope "
        "calls lie between a month's UTC midnight and its local midnight. A monthly figure "
        "computed in UTC would put them in the wrong month.",
        count="calls",
    )


def find_time_zone(contract: Contract, c: ir.Table, rng: Range) -> Iterable[Mismatch]:
    """Calls whose calendar month in the contract's zone differs from their month in UTC."""
    zone = contract.zone
    if zone.key in ("UTC", "Etc/UTC", "Etc/UCT", "UCT", "Zulu", "Etc/Zulu"):
        return
    if rng is None:
        return
    lo, hi = rng
    utc = ZoneInfo("UTC")
    first, last = from_us(lo, utc), from_us(hi, utc)
    # every month start near the data: between the local and the UTC midnight of the 1st, a call
    # belongs to one month in the contract's zone and to the other in UTC
    y, m = (first.year - 1, 12) if first.month == 1 else (first.year, first.month - 1)
    intervals: list[tuple[int, int]] = []
    boundaries: list[str] = []
    while (y, m) <= (last.year + (last.month == 12), last.month % 12 + 1):
        local, plain = month_window(y, m, zone).start_us, month_window(y, m, utc).start_us
        if local != plain:
            intervals.append((min(local, plain), max(local, plain)))
            boundaries.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    if not intervals:
        return
    x = c.filter(scoped(c, contract))
    r = aggregate_row(x, n=x.count(), moved=in_intervals_expr(x.start_us, intervals).sum())
    moved = as_int(r["moved"])
    if not moved:
        return
    offset = from_us(lo, zone).utcoffset()
    yield Mismatch(
        Code.TIME_ZONE_MONTH,
        Severity.MEDIUM,
        None,
        ZoneSaid.ZONE_TITLE(moved=moved, zone=zone.key),
        ZoneSaid.ZONE_DETAIL(
            zone=zone.key, offset=_offset_text(offset), moved=moved, calls=as_int(r["n"])
        ),
        {"zone": zone.key, "calls": as_int(r["n"]), "moved": moved, "month_starts": boundaries},
    )


def _offset_text(offset: Any) -> str:
    if offset is None:
        return ""
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "−"
    h, mm = divmod(abs(minutes), 60)
    return f"{sign}{h:02d}:{mm:02d}"
