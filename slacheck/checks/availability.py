"""Availability: the share of in-scope, non-excluded model calls that did not fail, and credits.

A call fails as the contract's ``availability.failures`` says: a server error (call state
``vendor_error``), a timeout, or a throttled call while traffic was within the contracted rate
limit (see ``checks.ratelimit``; with no rate limit every throttled call counts). Calls the
contract excludes (maintenance, long inputs, downgraded tiers, customer errors, gateway cache
hits) are neither good nor total. The credit is the tier whose [from, to) band holds the
observed availability, capped by ``cap_percent``.

A failure no source classified (``unclassified``) is read as ``readings.unclassified_failures``
says: ``vendor`` counts it as a server error, ``excluded`` leaves it out, and ``bounds`` (the
default) reads it both ways: the observed availability (and the credit) count only the proven
failures, the verdict is met only when the target holds even with every unclassified failure
counted as the vendor's, breached only when it fails without them, else indeterminate.
"""

from __future__ import annotations

from typing import Any

from slacheck.checks.registry import check
from slacheck.contract.model import Availability, CacheHits, Credits, UnclassifiedFailures
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.metering.calls import metered
from slacheck.metering.context import CheckContext
from slacheck.metering.derive import CallState
from slacheck.metering.windowed import as_count, examples_by_window
from slacheck.results import Losses
from slacheck.verdict import TermKind, TermResult, Verdict
from slacheck.windows import CalendarWindow


def tier_credit(credits: Credits, observed: float) -> float:
    """The credit (% of the monthly fee) of the tier whose band holds ``observed``, before any
    cap; 0 when no tier does."""
    pct = 0.0
    for tier in credits.tiers:
        if tier.from_percent <= observed < tier.to_percent:
            pct = tier.credit_percent
    return pct


def credit_for(credits: Credits, observed: float) -> float:
    """The credit (% of the monthly fee) for an availability: its tier's, capped; else 0."""
    pct = tier_credit(credits, observed)
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
    UNCLASSIFIED_BOUNDS = NPC_(
        "check.availability.unclassified_bounds",
        "{n} failed call no source could classify (readings.unclassified_failures: bounds): "
        "availability is {high} % without it and {low} % with it as the vendor's failure",
        "{n} failed calls no source could classify (readings.unclassified_failures: bounds): "
        "availability is {high} % without them and {low} % with them as the vendor's failures",
    )
    UNCLASSIFIED_DECIDES = NC_(
        "check.availability.unclassified_decides",
        "the unclassified failures decide the verdict: classify them (error.type, an HTTP "
        "status, an exception event), or state readings.unclassified_failures",
    )
    UNCLASSIFIED_VENDOR = NPC_(
        "check.availability.unclassified_vendor",
        "{n} failed call no source could classify counts as the vendor's failure "
        "(readings.unclassified_failures: vendor)",
        "{n} failed calls no source could classify count as the vendor's failures "
        "(readings.unclassified_failures: vendor)",
    )
    UNCLASSIFIED_EXCLUDED = NPC_(
        "check.availability.unclassified_excluded",
        "{n} failed call no source could classify is left out "
        "(readings.unclassified_failures: excluded)",
        "{n} failed calls no source could classify are left out "
        "(readings.unclassified_failures: excluded)",
    )
    CACHE_HITS_EXCLUDED = NPC_(
        "check.availability.cache_hits_excluded",
        "{n} call answered from a gateway's response cache, never sent to the vendor, is left "
        "out (readings.cache_hits: excluded)",
        "{n} calls answered from a gateway's response cache, never sent to the vendor, are left "
        "out (readings.cache_hits: excluded)",
    )
    CACHE_HITS_COUNTED = NPC_(
        "check.availability.cache_hits_counted",
        "{n} call answered from a gateway's response cache counts as answered "
        "(readings.cache_hits: counted)",
        "{n} calls answered from a gateway's response cache count as answered "
        "(readings.cache_hits: counted)",
    )
    CREDIT_RANGE = NC_(
        "check.availability.credit_range",
        "credit {low} % on the proven failures; {high} % if the unclassified failures were "
        "the vendor's",
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
    # bounds: the proven reading leaves the undecided calls out; the other counts them failed
    undecided = as_count(r.get("undecided"))
    total_all = total
    total -= undecided
    notes: list[Message] = []
    if spec.failures.throttling_below_limit and ctx.contract.rate_limit is None:
        notes.append(AvailabilitySays.NO_RATE_LIMIT())
    details: dict[str, Any] = {"failed": failed}
    for k in (
        "error_calls",
        "timeout_calls",
        "throttled_calls",
        "unknown_status_calls",
        "unclassified_calls",
        "customer_error_calls",
    ):
        details[k] = as_count(r.get(k))
    details["undecided_calls"] = undecided
    details["unclassified_failures"] = str(ctx.contract.readings.unclassified_failures)
    cache_hits = as_count(excluded.get("cache_hit")) + as_count(r.get("cache_hit_calls"))
    details["cache_hit_calls"] = cache_hits
    if details["unknown_status_calls"]:
        notes.append(AvailabilitySays.UNKNOWN_STATUS(n=details["unknown_status_calls"]))
    reading = ctx.contract.readings.unclassified_failures
    if reading is UnclassifiedFailures.VENDOR and details["unclassified_calls"]:
        notes.append(AvailabilitySays.UNCLASSIFIED_VENDOR(n=details["unclassified_calls"]))
    if reading is UnclassifiedFailures.EXCLUDED and excluded.get("unclassified_failure"):
        notes.append(AvailabilitySays.UNCLASSIFIED_EXCLUDED(n=excluded["unclassified_failure"]))
    if cache_hits:
        counted = ctx.contract.readings.cache_hits is CacheHits.COUNTED
        says = (
            AvailabilitySays.CACHE_HITS_COUNTED if counted else AvailabilitySays.CACHE_HITS_EXCLUDED
        )
        notes.append(says(n=cache_hits))
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

    if total_all == 0:
        return result(Verdict.NO_DATA, None, AvailabilitySays.NO_CALLS())
    if spec.min_samples is not None and total_all < spec.min_samples:
        return result(
            Verdict.NO_DATA, None, AvailabilitySays.BELOW_MIN(n=total_all, min=spec.min_samples)
        )
    if total == 0:  # every counted call is an unclassified failure
        notes.append(AvailabilitySays.UNCLASSIFIED_BOUNDS(n=undecided, high="—", low=0.0))
        return result(Verdict.INDETERMINATE, None, AvailabilitySays.UNCLASSIFIED_DECIDES())
    # One correctly rounded division, so 999 of 1000 reads exactly as the literal 99.9.
    observed = 100.0 * (total - failed) / total
    # with every undecided call counted as the vendor's failure (the same when there are none)
    low = 100.0 * (total - failed) / total_all
    credits = ctx.contract.credits
    if credits is not None:
        details["credit_percent"] = credit_for(credits, observed)
        deadline = ctx.claim_deadline(credits, w)
        details["claim_deadline"] = None if deadline is None else deadline.isoformat()
    if undecided:
        details["observed_with_unclassified_as_failures"] = low
        notes.append(
            AvailabilitySays.UNCLASSIFIED_BOUNDS(
                n=undecided, high=round(observed, 4), low=round(low, 4)
            )
        )
        if credits is not None and credit_for(credits, low) != details["credit_percent"]:
            details["credit_percent_with_unclassified"] = credit_for(credits, low)
            notes.append(
                AvailabilitySays.CREDIT_RANGE(
                    low=details["credit_percent"], high=details["credit_percent_with_unclassified"]
                )
            )
    if low >= spec.target_percent:
        return result(Verdict.MET, observed)
    if observed < spec.target_percent:
        return result(Verdict.BREACHED, observed)
    return result(Verdict.INDETERMINATE, observed, AvailabilitySays.UNCLASSIFIED_DECIDES())


#: the calls counted per state, by the detail that states them
_STATES = {
    "error_calls": CallState.VENDOR_ERROR,
    "timeout_calls": CallState.TIMEOUT,
    "throttled_calls": CallState.THROTTLED,
    "unknown_status_calls": CallState.UNKNOWN,
    "unclassified_calls": CallState.UNCLASSIFIED,
    "customer_error_calls": CallState.CUSTOMER_ERROR,
    "cache_hit_calls": CallState.CACHED,
}


@check("availability")
def availability(ctx: CheckContext) -> list[TermResult]:
    """Per availability window: the share of counted calls that did not fail, and the credit."""
    spec = ctx.contract.availability
    if spec is None:
        return []
    windows = ctx.windows(spec.window)
    # the metered-call table: one reading of excluded, failed and undecided for every consumer;
    # one grouped pass gives every count (by window, exclusion, state, failed, undecided: a few
    # dozen rows), and the examples come from the failed calls alone
    m = metered(ctx, windows)
    g = m.group_by(["window", "excluded", "state", "failed", "undecided"]).aggregate(n=m.count())
    rows: dict[str, dict[str, int]] = {}
    excluded: dict[str, dict[str, int]] = {}
    for r in g.to_pyarrow().to_pylist():
        w, n = str(r["window"]), int(r["n"])
        if r["excluded"] is not None:
            per = excluded.setdefault(w, {})
            per[str(r["excluded"])] = per.get(str(r["excluded"]), 0) + n
            continue
        row = rows.setdefault(w, dict.fromkeys(["total", "failed", "undecided", *_STATES], 0))
        row["total"] += n
        row["failed"] += n if r["failed"] else 0
        row["undecided"] += n if r["undecided"] else 0
        for key, state in _STATES.items():
            row[key] += n if r["state"] == str(state) else 0
    counted = m.filter(m.excluded.isnull())
    failed_somewhere = any(r["failed"] for r in rows.values())
    examples = examples_by_window(counted, counted.failed) if failed_somewhere else {}
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


__all__ = ["AvailabilitySays", "availability", "credit_for", "tier_credit"]
