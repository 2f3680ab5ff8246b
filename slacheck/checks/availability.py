"""Availability: the share of in-scope, non-excluded model calls that did not fail, and credits.

A call fails as the contract's ``availability.failures`` says: a server error (status ``error``
with HTTP ≥ 500, or no HTTP status recorded), a timeout, or a throttled call while traffic was
within the contracted rate limit (see ``checks.ratelimit``; with no rate limit every throttled
call counts). Calls the contract excludes (maintenance, long inputs, downgraded tiers, customer
errors) are neither good nor total. The credit is the tier whose [from, to) band holds the
observed availability, capped by ``cap_percent``.
"""

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.checks.registry import check
from slacheck.contract.model import Availability, Credits
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.metering.context import CheckContext, Losses
from slacheck.metering.ratelimit import under_limit_expr
from slacheck.metering.windowed import (
    as_count,
    by_window,
    examples_by_window,
    scoped_calls,
)
from slacheck.verdict import TermKind, TermResult, Verdict
from slacheck.windows import CalendarWindow


def failed_expr(ctx: CheckContext, c: ir.Table) -> ir.BooleanValue:
    """Per call: it counts as failed under the contract's failure definition."""
    spec = ctx.contract.availability
    assert spec is not None
    f = spec.failures
    failed: ir.BooleanValue = ibis.literal(False)
    if f.server_errors:
        failed |= (c.status == "error") & ((c.http_status >= 500) | c.http_status.isnull())
    if f.timeouts:
        failed |= c.status == "timeout"
    if f.throttling_below_limit:
        failed |= (c.status == "throttled") & under_limit_expr(ctx, c).fill_null(False)
    return failed.fill_null(False)


def credit_for(credits: Credits, observed: float) -> float:
    """The credit (% of the monthly fee) for an availability: its tier's, capped; else 0."""
    pct = 0.0
    for tier in credits.tiers:
        if tier.from_percent <= observed < tier.to_percent:
            pct = tier.credit_percent
    if credits.cap_percent is not None:
        pct = min(pct, credits.cap_percent)
    return pct


class AvailabilitySays(MessageCode):
    """What the availability check says: its criterion and notes."""

    CRITERION = NC_(
        "check.availability.criterion",
        "availability ≥ {target} % of in-scope calls; failed: {failures}",
    )
    CRITERION_MIN = NPC_(
        "check.availability.criterion_min",
        "availability ≥ {target} % of in-scope calls; failed: {failures}; ≥ {min} call",
        "availability ≥ {target} % of in-scope calls; failed: {failures}; ≥ {min} calls",
        count="min",
    )
    SERVER_ERRORS = NC_("check.availability.failure.server_errors", "server errors (5xx)")
    TIMEOUTS = NC_("check.availability.failure.timeouts", "timeouts")
    THROTTLING = NC_("check.availability.failure.throttling", "throttling within the rate limit")
    NOTHING = NC_("check.availability.failure.nothing", "nothing")
    NO_RATE_LIMIT = NC_(
        "check.availability.no_rate_limit",
        "the contract has no rate limit, so every throttled call counts as failed",
    )
    UNKNOWN_STATUS = NPC_(
        "check.availability.unknown_status",
        "{n} call without a recorded status counts as not failed (no status is how OpenTelemetry "
        "records success)",
        "{n} calls without a recorded status count as not failed (no status is how OpenTelemetry "
        "records success)",
    )
    NO_CALLS = NC_(
        "check.availability.no_calls", "no in-scope, non-excluded model calls in the window"
    )
    BELOW_MIN = NPC_(
        "check.availability.below_min",
        "{n} call, fewer than the minimum of {min}",
        "{n} calls, fewer than the minimum of {min}",
    )


def _criterion(spec: Availability) -> Message:
    f = spec.failures
    kinds: list[Param] = [
        says()
        for says, on in (
            (AvailabilitySays.SERVER_ERRORS, f.server_errors),
            (AvailabilitySays.TIMEOUTS, f.timeouts),
            (AvailabilitySays.THROTTLING, f.throttling_below_limit),
        )
        if on
    ] or [AvailabilitySays.NOTHING()]
    if spec.min_samples is not None:
        return AvailabilitySays.CRITERION_MIN(
            target=spec.target_percent, failures=kinds, min=spec.min_samples
        )
    return AvailabilitySays.CRITERION(target=spec.target_percent, failures=kinds)


def _window_result(
    ctx: CheckContext,
    spec: Availability,
    w: CalendarWindow,
    r: dict[str, Any],
    excluded: dict[str, int],
    examples: tuple[str, ...],
    losses: dict[str, Losses],
) -> TermResult:
    total, failed = as_count(r.get("total")), as_count(r.get("failed"))
    notes: list[Message] = []
    if spec.failures.throttling_below_limit and ctx.contract.rate_limit is None:
        notes.append(AvailabilitySays.NO_RATE_LIMIT())
    details: dict[str, Any] = {"failed": failed}
    for k in ("error_calls", "timeout_calls", "throttled_calls", "unknown_status_calls"):
        details[k] = as_count(r.get(k))
    if details["unknown_status_calls"]:
        notes.append(AvailabilitySays.UNKNOWN_STATUS(n=details["unknown_status_calls"]))
    lost = losses.get(w.label, Losses({}, {}))
    undated = sum(losses.get("", Losses({}, {})).set_aside.values())
    notes.extend(lost.notes(undated))
    if lost.any:
        details["lost"] = lost.to_dict()

    def result(verdict: Verdict, observed: float | None, lead: Message | None = None) -> TermResult:
        return TermResult(
            term_id="availability",
            kind=TermKind.AVAILABILITY,
            window=w.label,
            verdict=verdict,
            observed=observed,
            unit="%",
            criterion_message=_criterion(spec),
            good=total - failed,
            total=total,
            examples=examples,
            notes=tuple(notes if lead is None else [lead, *notes]),
            excluded=excluded,
            partial_window=ctx.partial(w),
            details=details,
            gap=None if observed is None else observed - spec.target_percent,
        )

    if total == 0:
        return result(Verdict.NO_DATA, None, AvailabilitySays.NO_CALLS())
    if spec.min_samples is not None and total < spec.min_samples:
        return result(
            Verdict.NO_DATA, None, AvailabilitySays.BELOW_MIN(n=total, min=spec.min_samples)
        )
    # One correctly rounded division, so 999 of 1000 reads exactly as the literal 99.9.
    observed = 100.0 * (total - failed) / total
    credits = ctx.contract.credits
    if credits is not None:
        details["credit_percent"] = credit_for(credits, observed)
        deadline = ctx.claim_deadline(credits, w)
        details["claim_deadline"] = None if deadline is None else deadline.isoformat()
    verdict = Verdict.MET if observed >= spec.target_percent else Verdict.BREACHED
    return result(verdict, observed)


@check("availability")
def availability(ctx: CheckContext) -> list[TermResult]:
    """Per availability window: the share of counted calls that did not fail, and the credit."""
    spec = ctx.contract.availability
    if spec is None:
        return []
    windows = ctx.windows(spec.window)
    c = scoped_calls(ctx, windows)
    m = c.mutate(excluded=ctx.exclusion_reason(c), failed=failed_expr(ctx, c))
    counted = m.filter(m.excluded.isnull())
    rows = by_window(
        counted,
        total=counted.count(),
        failed=counted.failed.sum(),
        error_calls=(counted.status == "error").sum(),
        timeout_calls=(counted.status == "timeout").sum(),
        throttled_calls=(counted.status == "throttled").sum(),
        unknown_status_calls=counted.status.isnull().sum(),
    )
    ex = m.filter(m.excluded.notnull())
    ex_df = ex.group_by(["window", "excluded"]).aggregate(n=ex.count()).execute()
    excluded: dict[str, dict[str, int]] = {}
    for w, reason, n in zip(ex_df["window"], ex_df["excluded"], ex_df["n"], strict=True):
        excluded.setdefault(str(w), {})[str(reason)] = int(n)
    examples = examples_by_window(counted, counted.failed)
    losses = ctx.losses(windows)
    return [
        _window_result(
            ctx,
            spec,
            w,
            rows.get(w.label, {}),
            excluded.get(w.label, {}),
            examples.get(w.label, ()),
            losses,
        )
        for w in windows
    ]


__all__ = ["AvailabilitySays", "availability", "credit_for", "failed_expr"]
