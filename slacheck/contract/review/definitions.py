"""Definitions counsel would exploit (SLA701–SLA707): a timeout with no duration, no channel for
notices and claims, no word on sole remedy or precedence, undecided verdicts with no meaning for
the parties, a peak known only after the month while a clause acts at peak, and a rate-limit
period the check counts in UTC while the contract's clock is another zone's."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from slacheck.contract.model import BusiestMinutesPeak, Contract, Period, RoutingPermission
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.contract.review.wording import num
from slacheck.messages import NC_, MessageCode

__all__ = ["DefinitionSays"]


class DefinitionSays(MessageCode):
    """What the definition rules say."""

    SLA701_TITLE = NC_("SLA701.title", "A timeout is a failure, but no timeout duration is stated.")
    SLA701_WHY = NC_(
        "SLA701.why",
        "Timeouts count as failed calls, and the check counts a call as a timeout when its trace "
        "records one; the contract never says how long the client waits. The Vendor can argue "
        "that a client giving up after a few seconds abandoned a call that was still on time.",
    )
    SLA701_FIX = NC_(
        "SLA701.fix",
        "State the client timeout: availability.failures.timeout_ms (e.g. 60000), the duration "
        "the Customer's client waits for a complete response.",
    )
    SLA702_TITLE = NC_("SLA702.title", "No channel for notices and claims is stated.")
    SLA702_WHY = NC_(
        "SLA702.why",
        "The contract does not say how notices are given or where a claim for a credit is "
        "sent: a claim can be disputed as never received, and a routing notice as never given.",
    )
    SLA702_FIX = NC_(
        "SLA702.fix",
        "Add notices.channel (e.g. by email to named addresses) and, if claims go elsewhere, "
        "notices.claims.",
    )
    SLA703_TITLE = NC_("SLA703.title", "Whether service credits are the sole remedy is not stated.")
    SLA703_WHY = NC_(
        "SLA703.why",
        "Service credits are written, but not whether they are the Customer's sole and "
        "exclusive remedy: the Vendor will read them as the only remedy, the Customer as a "
        "minimum, and the text decides nothing.",
    )
    SLA703_FIX = NC_(
        "SLA703.fix",
        "State credits.sole_remedy: true (credits are the only remedy) or false (other rights "
        "and remedies stay intact).",
    )
    SLA704_TITLE = NC_("SLA704.title", "No order of precedence is stated.")
    SLA704_WHY = NC_(
        "SLA704.why",
        "The service level clauses sit beside a master agreement and order forms; when they "
        "conflict (a cap on liability, a different availability figure), the contract does not "
        "say which prevails.",
    )
    SLA704_FIX = NC_(
        "SLA704.fix",
        "List the documents in precedence, the one that prevails first (e.g. these service "
        "level clauses, the master services agreement, the order form).",
    )
    SLA705_TITLE = NC_(
        "SLA705.title",
        "What an indeterminate or no-data verdict means for the parties is not stated.",
    )
    SLA705_INDETERMINATE = NC_(
        "SLA705.why.indeterminate",
        "A window can be indeterminate (the evidence bounds the figure on both sides of the "
        "threshold), and the contract does not say whether that counts as met, as breached, or "
        "goes to a joint review: each party will read it its own way.",
    )
    SLA705_NO_DATA = NC_(
        "SLA705.why.no_data",
        "A window can have no data (nothing in scope, or fewer units than the minimum sample), "
        "and the contract does not say whether that counts as met, as breached, or is not "
        "assessed: a month without traffic, or without traces, then settles nothing.",
    )
    SLA705_FIX_INDETERMINATE = NC_(
        "SLA705.fix.indeterminate", "State verdicts.indeterminate: met, breached or review."
    )
    SLA705_FIX_NO_DATA = NC_(
        "SLA705.fix.no_data", "State verdicts.no_data: met, breached or not_assessed."
    )
    SLA706_TITLE = NC_(
        "SLA706.title", "Peak is known only after the month, yet a clause acts at peak."
    )
    SLA706_WHY_ROUTING = NC_(
        "SLA706.why.routing",
        "Peak is the busiest {percent} % of each month's minutes: which minutes those are is "
        "known only once the month has ended. Routing may go to the failover regions at peak "
        "only, so no one can tell during a minute whether failing over is allowed.",
    )
    SLA706_WHY_DEGRADATION = NC_(
        "SLA706.why.degradation",
        "Peak is the busiest {percent} % of each month's minutes: which minutes those are is "
        "known only once the month has ended. The Vendor may degrade the service at peak, so "
        "no one can tell during a minute whether degrading is allowed.",
    )
    SLA706_FIX = NC_(
        "SLA706.fix",
        "Define peak ex ante: peak.definition kind request_rate (requests per minute) or "
        "utilisation (a share of the contracted capacity), which a minute meets as it runs.",
    )
    SLA707_TITLE = NC_(
        "SLA707.title",
        "The rate-limit period is counted in UTC, not in the contract's time zone.",
    )
    SLA707_HOUR = NC_("SLA707.period.hour", "hour")
    SLA707_DAY = NC_("SLA707.period.day", "day")
    SLA707_WHY = NC_(
        "SLA707.why",
        "The rate limit is per {period}, and the check counts each {period} from its UTC "
        "boundary; in {zone} (UTC{offset}) those boundaries fall elsewhere on the local clock, "
        "so the Customer's own count of a {period} will not match the Vendor's.",
    )
    SLA707_FIX = NC_(
        "SLA707.fix",
        "State the rate limit per minute or per second, whose boundaries are the same in every "
        "zone, or agree in writing that its {period} runs in UTC.",
    )


@rule("SLA701", Severity.MEDIUM, title=DefinitionSays.SLA701_TITLE)
def timeout_without_duration(contract: Contract) -> Iterator[Hit]:
    """A timeout is a failure, but no timeout duration is stated.

    A timeout counts against the Vendor, and a trace records a timeout whenever the client gave
    up. Without the agreed client timeout the Vendor can argue that a call abandoned early was
    the Customer's own impatience, not a failure of the service.
    """
    a = contract.availability
    if a is None or not a.failures.timeouts or a.failures.timeout_ms is not None:
        return
    yield Hit(
        ("availability", "failures", "timeout_ms"),
        DefinitionSays.SLA701_WHY(),
        DefinitionSays.SLA701_FIX(),
    )


@rule("SLA702", Severity.MEDIUM, title=DefinitionSays.SLA702_TITLE)
def notices_unstated(contract: Contract) -> Iterator[Hit]:
    """No channel for notices and claims is stated.

    A claim or a notice counts only when it reaches the other party the agreed way. With no
    channel written, a claim made in time can be disputed as never received, and a routing
    notice as never given.
    """
    if contract.notices is not None:
        return
    yield Hit(("notices",), DefinitionSays.SLA702_WHY(), DefinitionSays.SLA702_FIX())


@rule("SLA703", Severity.MEDIUM, title=DefinitionSays.SLA703_TITLE)
def sole_remedy_unstated(contract: Contract) -> Iterator[Hit]:
    """Whether service credits are the sole remedy is not stated.

    Vendors' standard terms make service credits the sole and exclusive remedy; a customer's
    counsel reads silence as leaving damages open. The clause should say which, or the first
    claim becomes an argument about the text rather than the figures.
    """
    cr = contract.credits
    if cr is None or cr.sole_remedy is not None:
        return
    yield Hit(("credits", "sole_remedy"), DefinitionSays.SLA703_WHY(), DefinitionSays.SLA703_FIX())


@rule("SLA704", Severity.LOW, title=DefinitionSays.SLA704_TITLE)
def precedence_unstated(contract: Contract) -> Iterator[Hit]:
    """No order of precedence is stated.

    Service level clauses are one document among several (a master agreement, order forms,
    the vendor's online terms). When they conflict, an order of precedence decides; without
    one, each party cites the document that favours it.
    """
    if contract.precedence:
        return
    yield Hit(("precedence",), DefinitionSays.SLA704_WHY(), DefinitionSays.SLA704_FIX())


@rule("SLA705", Severity.MEDIUM, title=DefinitionSays.SLA705_TITLE)
def undecided_verdicts_unstated(contract: Contract) -> Iterator[Hit]:
    """What an indeterminate or no-data verdict means for the parties is not stated.

    The check reports a window it cannot decide as indeterminate, and one with too little in
    scope as no data. Neither is met or breached by itself: the contract must say whether the
    Vendor owes a credit then, or both parties will claim the reading that suits them.
    """
    v = contract.verdicts
    if v is None or v.indeterminate is None:
        yield Hit(
            ("verdicts", "indeterminate"),
            DefinitionSays.SLA705_INDETERMINATE(),
            DefinitionSays.SLA705_FIX_INDETERMINATE(),
        )
    if v is None or v.no_data is None:
        yield Hit(
            ("verdicts", "no_data"),
            DefinitionSays.SLA705_NO_DATA(),
            DefinitionSays.SLA705_FIX_NO_DATA(),
        )


@rule("SLA706", Severity.MEDIUM, title=DefinitionSays.SLA706_TITLE)
def peak_known_after_the_month(contract: Contract) -> Iterator[Hit]:
    """Peak is known only after the month, yet a clause acts at peak.

    The busiest N % of a month's minutes are known only once the month is over. A clause that
    lets the Vendor do something at peak (fail over to another region, degrade the service)
    then cannot be obeyed, or checked, while it matters; every such act is judged afterwards.
    """
    peak = contract.peak
    if peak is None or not isinstance(peak.definition, BusiestMinutesPeak):
        return
    percent = num(peak.definition.percent)
    routing = contract.routing
    if routing is not None and routing.cross_region is RoutingPermission.PEAK_ONLY:
        why = DefinitionSays.SLA706_WHY_ROUTING(percent=percent)
    elif peak.degradation is not None:
        why = DefinitionSays.SLA706_WHY_DEGRADATION(percent=percent)
    else:
        return
    yield Hit(("peak", "definition"), why, DefinitionSays.SLA706_FIX())


def _misaligned_offset(contract: Contract, period: Period) -> dt.timedelta | None:
    """The zone's UTC offset when it moves the period's boundaries, else None."""
    zone = ZoneInfo(contract.contract.time_zone or "UTC")
    start = contract.contract.effective.start
    for day in (start, start + dt.timedelta(days=182)):
        offset = dt.datetime(day.year, day.month, day.day, 12, tzinfo=zone).utcoffset()
        if offset is not None and offset.total_seconds() % period.seconds:
            return offset
    return None


def _offset_text(offset: dt.timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "−"
    h, m = divmod(abs(minutes), 60)
    return f"{sign}{h:02d}:{m:02d}"


@rule("SLA707", Severity.LOW, title=DefinitionSays.SLA707_TITLE)
def rate_limit_period_in_utc(contract: Contract) -> Iterator[Hit]:
    """The rate-limit period is counted in UTC, not in the contract's time zone.

    The check counts a rate limit in periods aligned to UTC. Minutes and seconds fall on the
    same boundaries in every zone; an hour or a day does not where the zone's offset is not a
    whole number of them, so a per-day limit read on the local clock counts other calls.
    """
    rl = contract.rate_limit
    if rl is None or rl.period not in (Period.HOUR, Period.DAY):
        return
    offset = _misaligned_offset(contract, rl.period)
    if offset is None:
        return
    period = (
        DefinitionSays.SLA707_HOUR if rl.period is Period.HOUR else DefinitionSays.SLA707_DAY
    )()
    yield Hit(
        ("rate_limit", "period"),
        DefinitionSays.SLA707_WHY(
            period=period, zone=str(contract.contract.time_zone), offset=_offset_text(offset)
        ),
        DefinitionSays.SLA707_FIX(period=period),
    )
