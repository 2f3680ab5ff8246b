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
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.metering.context import CheckContext
from slacheck.metering.derive import model_base, succeeded
from slacheck.metering.fused import Statistic, counted_long, nearest_ranks
from slacheck.metering.peak import (
    MINUTE_US,
    at_peak_expr,
    definition_message,
    minute_expr,
    peak_minutes,
)
from slacheck.metering.rank import bucket
from slacheck.metering.windowed import (
    as_count,
    by_window,
    examples_by_window,
    scoped_calls,
)
from slacheck.verdict import TermKind, TermResult, Verdict
from slacheck.windows import CalendarWindow

# ---------------------------------------------------------------------------------------------
# The check


class PeakSays(MessageCode):
    """What the peak check says: its criterion and notes."""

    CRITERION = NC_("check.peak.criterion", "{policy}; {peak} (UTC minutes, in-scope calls)")
    POLICY_NONE = NC_("check.peak.policy.none", "no degradation policy written")
    POLICY_QUEUE = NC_(
        "check.peak.policy.queue",
        "every peak call queued ≤ {wait} ms, no other model, no cached answer",
    )
    POLICY_SMALLER_MODEL = NC_(
        "check.peak.policy.smaller_model",
        "every peak call answered by the requested model or {fallback}",
    )
    POLICY_CACHE = NC_(
        "check.peak.policy.cache",
        "peak calls answered from the cache or by the requested model, never another model",
    )
    NAME_QUEUE = NC_("check.peak.name.queue", "queue")
    NAME_SMALLER_MODEL = NC_("check.peak.name.smaller_model", "smaller-model")
    NAME_CACHE = NC_("check.peak.name.cache", "cache")
    OBSERVED = NPC_(
        "check.peak.observed",
        "{other} call answered by a model other than the one requested; {cached} answered from a "
        "response cache; {queue}",
        "{other} calls answered by a model other than the one requested; {cached} answered from a "
        "response cache; {queue}",
        count="other",
    )
    QUEUE_WAIT = NPC_(
        "check.peak.queue_wait",
        "queue wait p95 {p95} ms, max {max} ms over {n} call",
        "queue wait p95 {p95} ms, max {max} ms over {n} calls",
    )
    NO_QUEUE_WAIT = NC_("check.peak.no_queue_wait", "no queue wait recorded")
    OFF_PEAK_OTHER_MODEL = NPC_(
        "check.peak.off_peak_other_model",
        "degradation outside peak: {n} off-peak call was answered by a model other than the one "
        "requested",
        "degradation outside peak: {n} off-peak calls were answered by a model other than the one "
        "requested",
    )
    NO_CALLS = NC_("check.peak.no_calls", "no in-scope model calls in the window")
    NO_PEAK_MINUTES = NC_("check.peak.no_peak_minutes", "no peak minutes in the window ({peak})")
    UNWRITTEN = NC_("check.peak.unwritten", "the policy is unwritten; observed at peak: {observed}")
    STALENESS = NC_(
        "check.peak.staleness",
        "cache staleness (max_staleness_seconds) cannot be observed in traces",
    )
    CACHED_AT_PEAK = NPC_(
        "check.peak.cached_at_peak",
        "{n} peak call was answered from a response cache",
        "{n} peak calls were answered from a response cache",
    )
    QUEUE_AT_PEAK = NC_(
        "check.peak.queue_at_peak", "queue wait at peak: p95 {p95} ms, max {max} ms"
    )
    NO_SIGNAL = NC_(
        "check.peak.no_signal",
        "no peak call records {signal}, so the {policy} policy cannot be checked",
    )
    OBSERVED_AT_PEAK = NC_("check.peak.observed_at_peak", "observed at peak: {observed}")


@dataclass(frozen=True, slots=True)
class _Policy:
    name: str  # smaller_model | cache | queue | none
    criterion: Message
    #: the peak call shows whether the policy was kept
    observable: ir.BooleanValue
    #: …and it was kept
    complies: ir.BooleanValue
    worst_first: str | None
    #: the columns a peak call must record for the policy to be checked
    signal: tuple[str, ...]
    #: the policy's name in words (None: no policy)
    title: Message | None = None


def _policy(peak: Peak, c: ir.Table) -> _Policy:
    other, cached = c.other_model, c.cached
    model_known = c.served_model.notnull() & c.requested.notnull()
    deg = peak.degradation
    models = ("response_model", "request_model")
    if deg is None:
        return _Policy(
            "none", PeakSays.POLICY_NONE(), ibis.literal(True), ~other & ~cached, None, ()
        )
    if deg.queue is not None:
        wait = deg.queue.max_wait_ms
        return _Policy(
            "queue",
            PeakSays.POLICY_QUEUE(wait=wait),
            c.queue_ms.notnull() | other | cached,
            (c.queue_ms <= wait).fill_null(True) & ~other & ~cached,
            "queue_ms",
            ("queue_ms",),
            PeakSays.NAME_QUEUE(),
        )
    if deg.smaller_model is not None:
        fallback = model_base(deg.smaller_model.fallback_model)
        return _Policy(
            "smaller_model",
            PeakSays.POLICY_SMALLER_MODEL(fallback=fallback),
            model_known,
            (c.served_model == c.requested) | (c.served_model == fallback),
            None,
            models,
            PeakSays.NAME_SMALLER_MODEL(),
        )
    return _Policy(
        "cache",
        PeakSays.POLICY_CACHE(),
        model_known,
        ~other,
        None,
        models,
        PeakSays.NAME_CACHE(),
    )


def _observed(r: dict[str, Any], q_p95: float | None) -> Message:
    q_known = as_count(r.get("q_known"))
    queue = (
        PeakSays.QUEUE_WAIT(p95=q_p95, max=float(r["q_max"]), n=q_known)
        if q_known
        else PeakSays.NO_QUEUE_WAIT()
    )
    return PeakSays.OBSERVED(
        other=as_count(r.get("peak_other")), cached=as_count(r.get("peak_cached")), queue=queue
    )


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
    notes: list[Message] = []
    off_other = details["other_model_off_peak"]
    if off_other:
        notes.append(PeakSays.OFF_PEAK_OTHER_MODEL(n=off_other))
    definition = definition_message(peak)
    criterion = PeakSays.CRITERION(policy=pol.criterion, peak=definition)

    def result(verdict: Verdict, observed: float | None, lead: Message | None = None) -> TermResult:
        empty = verdict in (Verdict.NO_DATA, Verdict.NOT_MEASURABLE)
        return TermResult(
            term_id="peak",
            kind=TermKind.PEAK,
            window=w.label,
            verdict=verdict,
            observed=observed,
            unit="calls",
            criterion_message=criterion,
            good=0 if verdict is Verdict.NO_DATA else good,
            total=0 if verdict is Verdict.NO_DATA else total,
            examples=() if empty or verdict is Verdict.MET else examples,
            notes=tuple(notes if lead is None else [lead, *notes]),
            partial_window=ctx.partial(w),
            details=details,
        )

    if calls == 0:
        return result(Verdict.NO_DATA, None, PeakSays.NO_CALLS())
    if minutes == 0:
        return result(Verdict.NO_DATA, None, PeakSays.NO_PEAK_MINUTES(peak=definition))
    observed = _observed(r, pct["queue_p95_ms_at_peak"])
    if pol.name == "none":
        lead = PeakSays.UNWRITTEN(observed=observed)
        return result(Verdict.INDETERMINATE, float(total - good), lead)
    if pol.name == "cache":
        notes.append(PeakSays.STALENESS())
    if pol.name == "smaller_model" and details["cached_at_peak"]:
        notes.append(PeakSays.CACHED_AT_PEAK(n=details["cached_at_peak"]))
    if pol.name != "queue" and q_known:
        notes.append(PeakSays.QUEUE_AT_PEAK(p95=pct["queue_p95_ms_at_peak"], max=q_max))
    if total == 0:
        assert pol.title is not None
        lead = PeakSays.NO_SIGNAL(signal=list(pol.signal), policy=pol.title)
        return result(Verdict.NOT_MEASURABLE, None, lead)
    if good < total:
        return result(
            Verdict.BREACHED, float(total - good), PeakSays.OBSERVED_AT_PEAK(observed=observed)
        )
    return result(Verdict.MET, 0.0)


@check("peak")
def peak(ctx: CheckContext) -> list[TermResult]:
    """Peak minutes per month, what degraded at peak, and whether that matches the policy.

    Two reads of the calls besides the peak minutes': one grouped pass (``_grouped``) gives
    every count and the three percentiles' values counted per bucket, and one narrow pass
    keeps the values of the buckets holding them and the calls that can be examples
    (``fused.nearest_ranks``)."""
    spec = ctx.contract.peak
    if spec is None:
        return []
    windows = ctx.windows(Window.CALENDAR_MONTH)
    c = scoped_calls(ctx, windows)
    m = c.mutate(
        minute=minute_expr(c.start_us),
        at_peak=at_peak_expr(ctx, c),
        other_model=(
            c.served_model.notnull() & c.requested.notnull() & (c.served_model != c.requested)
        ).fill_null(False),
        cached=c.response_cached.fill_null(False),
    )
    pol = _policy(spec, m)
    ap = m.at_peak
    ok = succeeded(m)  # as the latency meters count: status ok, or none recorded
    m = m.mutate(
        _ok=ok,
        _at_ok=ap & ok,
        _off_ok=~ap & ok,
        _obs=pol.observable,
        _good=pol.observable & pol.complies,
        _ex=ap & pol.observable & ~pol.complies,
    )
    g = _grouped(m)
    rows = _counts(ctx, g, m, windows)
    parts = {
        "p95_ms_at_peak": g.filter(g.at_peak & g._ok).select("window", _b=g._bd, _n=g.n),
        "p95_ms_off_peak": g.filter(~g.at_peak & g._ok).select("window", _b=g._bd, _n=g.n),
        "queue_p95_ms_at_peak": g.filter(g.at_peak).select("window", _b=g._bq, _n=g.n),
    }
    counted = counted_long(
        {
            k: t.filter(t._b.notnull()).group_by(["window", "_b"]).aggregate(_n=t._n.sum())
            for k, t in parts.items()
        }
    )
    pcts, kept = nearest_ranks(
        m,
        {
            "p95_ms_at_peak": Statistic("_at_ok", "duration_ms"),
            "p95_ms_off_peak": Statistic("_off_ok", "duration_ms"),
            "queue_p95_ms_at_peak": Statistic("at_peak", "queue_ms"),
        },
        counted,
        95,
        keep="_ex",
        columns=["task_id"],
    )
    examples = examples_by_window(kept, kept._ex, pol.worst_first)
    return [
        _window_result(
            ctx,
            spec,
            pol,
            w,
            rows.get(w.label, {}),
            {k: pcts.get(k, {}).get(w.label) for k in parts},
            examples.get(w.label, ()),
        )
        for w in windows
    ]


def _grouped(m: ir.Table) -> ir.Table:
    """The calls counted per window, at peak or not, answered or not, and bucket of duration
    and (at peak) of queue wait (``rank.bucket``), with what the counts need summed per group:
    a few rows per window and millisecond, computed once."""
    ap = m.at_peak
    keys = [
        m.window,
        ap,
        m._ok,
        bucket(m.duration_ms).name("_bd"),
        ap.ifelse(bucket(m.queue_ms), ibis.null().cast("int64")).name("_bq"),
    ]
    g = m.group_by(keys).aggregate(
        n=m.count(),
        other=m.other_model.sum(),
        cached=m.cached.sum(),
        q_max=m.queue_ms.max(),
        total=m._obs.sum(),
        good=m._good.sum(),
    )
    return g.cache()


def _counts(
    ctx: CheckContext, g: ir.Table, m: ir.Table, windows: list[CalendarWindow]
) -> dict[str, dict[str, Any]]:
    """Per window: the calls, at peak and off, what degraded, the queue wait recorded at peak,
    the policy's total and good, and the peak minutes with calls in it (from the peak minutes
    themselves where every window edge is a minute edge, as in every zone since 1972)."""
    ap = g.at_peak
    sums = g.group_by("window").aggregate(
        calls=g.n.sum(),
        peak_calls=g.n.sum(where=ap),
        peak_other=g.other.sum(where=ap),
        off_other=g.other.sum(where=~ap),
        peak_cached=g.cached.sum(where=ap),
        off_cached=g.cached.sum(where=~ap),
        q_known=g.n.sum(where=ap & g._bq.notnull()),
        q_max=g.q_max.max(where=ap),
        total=g.total.sum(where=ap),
        good=g.good.sum(where=ap),
    )
    pm = peak_minutes(ctx)
    if pm is not None and all(
        w.start_us % MINUTE_US == 0 and w.end_us % MINUTE_US == 0 for w in windows
    ):
        per = pm.group_by(_pw=pm.window).aggregate(peak_minutes=pm.count())
        sums = sums.left_join(per, sums.window == per._pw).drop("_pw")
        return {str(r["window"]): r for r in sums.execute().to_dict("records")}
    rows = {str(r["window"]): r for r in sums.execute().to_dict("records")}
    minutes = by_window(m, peak_minutes=m.at_peak.ifelse(m.minute, None).nunique())
    for w, r in rows.items():
        r["peak_minutes"] = minutes.get(w, {}).get("peak_minutes")
    return rows


__all__ = ["PeakSays", "peak"]
