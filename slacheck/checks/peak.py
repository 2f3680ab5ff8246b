"""Peak: which minutes were peak, and whether the vendor degraded at peak as the contract says.

A peak minute is a UTC-aligned minute (``floor(start_us / 60 s)``) of in-scope model calls that
meets the contract's definition: more calls than ``requests_per_minute`` (request_rate), calls
above ``percent`` % of the contracted capacity (utilisation), or one of the busiest ``percent`` %
of the minutes with traffic in the calendar month, ties broken by the earlier minute, rounded up
so a month with traffic always has a peak minute (busiest_minutes).

What happened at peak is read from the calls themselves: a model other than the one requested
answered (``response_model`` ≠ ``request_model``, dated snapshots ignored), the answer came from
a response cache (``response_cached``), or the call waited in a queue (``queue_ms``). Whether
that degradation matches the written policy is the verdict; with no policy written it cannot be
judged, only reported.

Peak minutes come from ``metering.peak`` (the one definition); the per-window queries from
``metering.windowed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.checks.registry import check
from slacheck.contract.model import (
    Peak,
    Window,
)
from slacheck.metering.context import CheckContext
from slacheck.metering.derive import model_base, succeeded
from slacheck.metering.peak import at_peak_expr, definition_text, minute_expr
from slacheck.metering.windowed import (
    as_count,
    by_window,
    examples_by_window,
    materialise,
    percentile_by_window,
    scoped_calls,
)
from slacheck.verdict import TermResult, Verdict
from slacheck.windows import CalendarWindow

# ---------------------------------------------------------------------------------------------
# The check


@dataclass(frozen=True, slots=True)
class _Policy:
    name: str  # smaller_model | cache | queue | none
    criterion: str
    #: the peak call shows whether the policy was kept
    observable: ir.BooleanValue
    #: …and it was kept
    complies: ir.BooleanValue
    worst_first: str | None
    #: the columns a peak call must record for the policy to be checked
    signal: str


def _policy(peak: Peak, c: ir.Table) -> _Policy:
    other, cached = c.other_model, c.cached
    model_known = c.served_model.notnull() & c.requested.notnull()
    deg = peak.degradation
    models = "response_model and request_model"
    if deg is None:
        return _Policy(
            "none", "no degradation policy written", ibis.literal(True), ~other & ~cached, None, ""
        )
    if deg.queue is not None:
        wait = deg.queue.max_wait_ms
        return _Policy(
            "queue",
            f"every peak call queued ≤ {wait:g} ms, no other model, no cached answer",
            c.queue_ms.notnull() | other | cached,
            (c.queue_ms <= wait).fill_null(True) & ~other & ~cached,
            "queue_ms",
            "queue_ms",
        )
    if deg.smaller_model is not None:
        fallback = model_base(deg.smaller_model.fallback_model)
        return _Policy(
            "smaller_model",
            f"every peak call answered by the requested model or {fallback}",
            model_known,
            (c.served_model == c.requested) | (c.served_model == fallback),
            None,
            models,
        )
    return _Policy(
        "cache",
        "peak calls answered from the cache or by the requested model, never another model",
        model_known,
        ~other,
        None,
        models,
    )


def _observed_text(r: dict[str, Any], q_p95: float | None) -> str:
    parts = [
        f"{as_count(r.get('peak_other'))} calls answered by a model other than the one requested",
        f"{as_count(r.get('peak_cached'))} answered from a response cache",
    ]
    q_known = as_count(r.get("q_known"))
    if q_known:
        parts.append(
            f"queue wait p95 {q_p95:g} ms, max {float(r['q_max']):g} ms over {q_known} calls"
        )
    else:
        parts.append("no queue wait recorded")
    return "; ".join(parts)


def _window_result(
    ctx: CheckContext,
    peak: Peak,
    pol: _Policy,
    w: CalendarWindow,
    r: dict[str, Any],
    pct: dict[str, float | None],
    examples: tuple[str, ...],
) -> TermResult:
    calls, minutes = as_count(r.get("calls")), as_count(r.get("peak_minutes"))
    total, good = as_count(r.get("total")), as_count(r.get("good"))
    q_known = as_count(r.get("q_known"))
    q_max = float(r["q_max"]) if q_known else None
    details: dict[str, Any] = {
        "policy": pol.name,
        "calls": calls,
        "peak_minutes": minutes,
        "calls_at_peak": as_count(r.get("peak_calls")),
        "p95_ms_at_peak": pct["p95_ms_at_peak"],
        "p95_ms_off_peak": pct["p95_ms_off_peak"],
        "other_model_at_peak": as_count(r.get("peak_other")),
        "other_model_off_peak": as_count(r.get("off_other")),
        "cached_at_peak": as_count(r.get("peak_cached")),
        "cached_off_peak": as_count(r.get("off_cached")),
        "queue_recorded_at_peak": q_known,
        "queue_p95_ms_at_peak": pct["queue_p95_ms_at_peak"],
        "queue_max_ms_at_peak": q_max,
    }
    notes: list[str] = []
    off_other = details["other_model_off_peak"]
    if off_other:
        notes.append(
            f"degradation outside peak: {off_other} off-peak calls were answered by a model "
            "other than the one requested"
        )

    def result(verdict: Verdict, observed: float | None, lead: str | None = None) -> TermResult:
        empty = verdict in (Verdict.NO_DATA, Verdict.NOT_MEASURABLE)
        return TermResult(
            term_id="peak",
            kind="peak",
            window=w.label,
            verdict=verdict,
            observed=observed,
            unit="calls",
            criterion=f"{pol.criterion}; {definition_text(peak)} (UTC minutes, in-scope calls)",
            good=0 if verdict is Verdict.NO_DATA else good,
            total=0 if verdict is Verdict.NO_DATA else total,
            examples=() if empty or verdict is Verdict.MET else examples,
            notes=tuple(notes if lead is None else [lead, *notes]),
            partial_window=ctx.partial(w),
            details=details,
        )

    if calls == 0:
        return result(Verdict.NO_DATA, None, "no in-scope model calls in the window")
    if minutes == 0:
        return result(
            Verdict.NO_DATA, None, f"no peak minutes in the window ({definition_text(peak)})"
        )
    observed = _observed_text(r, pct["queue_p95_ms_at_peak"])
    if pol.name == "none":
        lead = f"the policy is unwritten; observed at peak: {observed}"
        return result(Verdict.INDETERMINATE, float(total - good), lead)
    if pol.name == "cache":
        notes.append("cache staleness (max_staleness_seconds) cannot be observed in traces")
    if pol.name == "smaller_model" and details["cached_at_peak"]:
        notes.append(f"{details['cached_at_peak']} peak calls were answered from a response cache")
    if pol.name != "queue" and q_known:
        notes.append(
            f"queue wait at peak: p95 {pct['queue_p95_ms_at_peak']:g} ms, max {q_max:g} ms"
        )
    if total == 0:
        lead = f"no peak call records {pol.signal}, so the {pol.name} policy cannot be checked"
        return result(Verdict.NOT_MEASURABLE, None, lead)
    if good < total:
        return result(Verdict.BREACHED, float(total - good), f"observed at peak: {observed}")
    return result(Verdict.MET, 0.0)


@check("peak")
def peak(ctx: CheckContext) -> list[TermResult]:
    """Peak minutes per month, what degraded at peak, and whether that matches the policy."""
    spec = ctx.contract.peak
    if spec is None:
        return []
    windows = ctx.windows(Window.CALENDAR_MONTH)
    c = scoped_calls(ctx, windows)
    c = c.mutate(
        minute=minute_expr(c.start_us),
        at_peak=at_peak_expr(ctx, c),
        other_model=(
            c.served_model.notnull() & c.requested.notnull() & (c.served_model != c.requested)
        ).fill_null(False),
        cached=c.response_cached.fill_null(False),
    )
    m = materialise(ctx, c)
    pol = _policy(spec, m)
    ap = m.at_peak
    rows = by_window(
        m,
        calls=m.count(),
        peak_calls=ap.sum(),
        peak_minutes=ap.ifelse(m.minute, None).nunique(),
        peak_other=(ap & m.other_model).sum(),
        off_other=(~ap & m.other_model).sum(),
        peak_cached=(ap & m.cached).sum(),
        off_cached=(~ap & m.cached).sum(),
        q_known=(ap & m.queue_ms.notnull()).sum(),
        q_max=ap.ifelse(m.queue_ms, None).max(),
        total=(ap & pol.observable).sum(),
        good=(ap & pol.observable & pol.complies).sum(),
    )
    ok = succeeded(m)  # as the latency meters count: status ok, or none recorded
    pcts = {
        "p95_ms_at_peak": percentile_by_window(m, "duration_ms", 95, ap & ok),
        "p95_ms_off_peak": percentile_by_window(m, "duration_ms", 95, ~ap & ok),
        "queue_p95_ms_at_peak": percentile_by_window(m, "queue_ms", 95, ap),
    }
    examples = examples_by_window(m, ap & pol.observable & ~pol.complies, pol.worst_first)
    return [
        _window_result(
            ctx,
            spec,
            pol,
            w,
            rows.get(w.label, {}),
            {k: v.get(w.label) for k, v in pcts.items()},
            examples.get(w.label, ()),
        )
        for w in windows
    ]


__all__ = ["peak"]
