"""Peak minutes: the one definition every consumer (the peak, regions and routing checks, the
field check, the documents) reads.

A peak minute is a UTC-aligned minute (``floor(start_us / 60 s)``) of in-scope model calls that
meets the contract's definition: more calls than ``requests_per_minute`` (request_rate), calls
above ``percent`` % of the contracted capacity (utilisation), or one of the busiest ``percent`` %
of the minutes *with traffic* in each calendar month of the contract's zone, ties broken by the
earlier minute, rounded up so a month with traffic always has a peak minute (busiest_minutes).
"""

from __future__ import annotations

import math

import ibis
import ibis.expr.types as ir

from slacheck.contract.base import as_written
from slacheck.contract.model import (
    BusiestMinutesPeak,
    Peak,
    RequestRatePeak,
    UtilisationPeak,
    Window,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.metering.context import Metering
from slacheck.metering.derive import scoped
from slacheck.metering.rank import exact_percent
from slacheck.metering.windowexpr import window_label_expr

MINUTE_US = 60_000_000


def minute_expr(ts_us: ir.IntegerValue) -> ir.IntegerValue:
    """The UTC-aligned minute a timestamp falls in (minutes since the Unix epoch)."""
    return ts_us // MINUTE_US


def minute_counts(ctx: Metering) -> ir.Table:
    """In-scope model calls per minute with traffic: ``minute``, ``calls``, ``window`` (month).

    Only minutes inside a month window (so inside the effective period) can be peak."""
    c = ctx.calls
    c = c.filter(scoped(c, ctx.contract))
    m = c.mutate(minute=minute_expr(c.start_us))
    g = m.group_by("minute").aggregate(calls=m.count())
    g = g.mutate(window=window_label_expr(g.minute * MINUTE_US, ctx.windows(Window.CALENDAR_MONTH)))
    return g.filter(g["window"].notnull())


def peak_minutes(ctx: Metering) -> ir.Table | None:
    """The peak minutes (``minute``, ``calls``, ``window``), or None without a peak definition."""
    peak = ctx.contract.peak
    if peak is None:
        return None
    return ctx.kept("peak_minutes", lambda: _peak_minutes(ctx, peak))


def _peak_minutes(ctx: Metering, peak: Peak) -> ir.Table:
    g = minute_counts(ctx)
    d = peak.definition
    if isinstance(d, RequestRatePeak):
        return g.filter(g.calls > d.requests_per_minute)
    if isinstance(d, UtilisationPeak):
        # calls / capacity > percent / 100, multiplied out so 85 of 100 is not above 85 %
        return g.filter(g.calls * 100 > utilisation_bound(d))
    ranked = g.mutate(
        _rank=ibis.row_number().over(
            ibis.window(group_by=g["window"], order_by=[ibis.desc(g.calls), g.minute])
        ),
        _n=g.calls.count().over(ibis.window(group_by=g["window"])),
    )
    # ⌈n × percent / 100⌉ in integers, the percent read as written (10 % of 30 minutes is 3)
    share = exact_percent(d.percent) / 100
    keep = (ranked._n * share.numerator + share.denominator - 1) // share.denominator
    return ranked.filter(ranked._rank < keep).drop("_rank", "_n")


def utilisation_bound(d: UtilisationPeak) -> int:
    """The most calls × 100 a minute may hold and not be above ``percent`` % of the capacity:
    ⌊percent × capacity⌋ in exact arithmetic on the figures as written, so a minute exactly at
    the share is not above it. The product of the doubles rounds: 4.6 % of 1,500 calls/min is
    69 calls, but 4.6 × 1500 is 6899.999999999999, under 69 × 100."""
    return math.floor(as_written(d.percent) * as_written(d.capacity_requests_per_minute))


def at_peak_expr(ctx: Metering, calls: ir.Table) -> ir.BooleanValue:
    """Per call of ``calls``: it started in a peak minute (always False without a definition)."""
    pm = peak_minutes(ctx)
    if pm is None:
        return ibis.literal(False)
    return minute_expr(calls.start_us).isin(pm.minute)


class PeakDefinitionSays(MessageCode):
    """The peak definition in words (criteria and notes of the checks that read peak)."""

    REQUEST_RATE = NPC_(
        "metering.peak.request_rate",
        "peak: minutes with > {rate} call",
        "peak: minutes with > {rate} calls",
        count="rate",
    )
    UTILISATION = NC_(
        "metering.peak.utilisation", "peak: minutes above {percent} % of {capacity} calls/min"
    )
    BUSIEST = NC_(
        "metering.peak.busiest",
        "peak: the busiest {percent} % of minutes with traffic in the month",
    )


def definition_message(peak: Peak) -> Message:
    """The contract's peak definition, as a message."""
    d = peak.definition
    if isinstance(d, RequestRatePeak):
        return PeakDefinitionSays.REQUEST_RATE(rate=d.requests_per_minute)
    if isinstance(d, UtilisationPeak):
        return PeakDefinitionSays.UTILISATION(
            percent=d.percent, capacity=d.capacity_requests_per_minute
        )
    assert isinstance(d, BusiestMinutesPeak)
    return PeakDefinitionSays.BUSIEST(percent=d.percent)
