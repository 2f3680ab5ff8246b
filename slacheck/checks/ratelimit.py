"""Rate limit: traffic per period on the contracted basis, and throttling while under the limit.

Traffic is counted in UTC-aligned buckets of the contract's period (second, minute, hour, day)
over in-scope model calls, on the contracted basis (限流口径):

- ``per_request``: model calls started in the bucket, throttled ones and retries included (the
  vendor's limiter sees every request);
- ``per_task``: tasks (with at least one in-scope call) whose start falls in the bucket;
- ``per_token``: input + output tokens of the calls started in the bucket. A call that was not
  answered (throttled, error, timeout) and records no tokens counts as 0 tokens; an answered
  call without token counts leaves its bucket undecided unless the known tokens already exceed
  the limit.

A bucket is under the limit when its count is at most the limit. A call throttled in a bucket
under the limit is the vendor's breach. A burst allowance is not modelled.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.checks.registry import check
from slacheck.contract.criterion import Comparison
from slacheck.contract.model import Direction, Period, RateLimit, RateLimitBasis, Window
from slacheck.contract.readings import AtTheLimit
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.metering.context import CheckContext
from slacheck.metering.fused import keyed, unkeyed
from slacheck.metering.ratelimit import bucket_amounts, period_us, under_limit_expr
from slacheck.metering.windowed import (
    as_count,
    by_window,
    examples_by_window,
    percentile_by_window,
    scoped_calls,
)
from slacheck.metering.windowexpr import window_label_expr
from slacheck.verdict import TermKind, TermResult, Verdict
from slacheck.windows import CalendarWindow


class RateLimitSays(MessageCode):
    """What the rate-limit check says: its criterion and notes."""

    CRITERION = NC_(
        "check.rate_limit.criterion",
        "no call throttled while traffic was {cmp} {rate} ({basis}, UTC-aligned {period} buckets)",
    )
    RATE = NC_("check.rate_limit.rate", "{amount} {unit}/{period}")
    REQUESTS = NC_("check.rate_limit.unit.requests", "requests")
    TASKS = NC_("check.rate_limit.unit.tasks", "tasks")
    TOKENS = NC_("check.rate_limit.unit.tokens", "tokens")
    SECOND = NC_("check.rate_limit.period.second", "second")
    MINUTE = NC_("check.rate_limit.period.minute", "minute")
    HOUR = NC_("check.rate_limit.period.hour", "hour")
    DAY = NC_("check.rate_limit.period.day", "day")
    REQUESTS_AS_TASKS = NPC_(
        "check.rate_limit.requests_as_tasks",
        "{rate} is {equivalent} at this month's {mean} in-scope model call per task (retries "
        "included)",
        "{rate} is {equivalent} at this month's {mean} in-scope model calls per task (retries "
        "included)",
        count="mean",
    )
    AT_CONTRACT_STEPS = NPC_(
        "check.rate_limit.at_contract_steps",
        "at the contract's {steps} step per task it is {equivalent}",
        "at the contract's {steps} steps per task it is {equivalent}",
        count="steps",
    )
    TASKS_AS_REQUESTS = NPC_(
        "check.rate_limit.tasks_as_requests",
        "{rate} is about {equivalent} at this month's {mean} in-scope model call per task "
        "(retries included)",
        "{rate} is about {equivalent} at this month's {mean} in-scope model calls per task "
        "(retries included)",
        count="mean",
    )
    TOKENS_AS_TASKS = NPC_(
        "check.rate_limit.tokens_as_tasks",
        "{rate} is {equivalent} at this month's {tokens} token per task",
        "{rate} is {equivalent} at this month's {tokens} tokens per task",
        count="tokens",
    )
    BURST = NC_(
        "check.rate_limit.burst",
        "the burst allowance ({burst}) is not modelled: the limit alone is used",
    )
    NO_CALLS = NC_("check.rate_limit.no_calls", "no in-scope model calls in the window")
    NO_TOKENS = NC_(
        "check.rate_limit.no_tokens",
        "no call records token counts, so a per-token limit cannot be metered",
    )
    UNDER_LIMIT = NPC_(
        "check.rate_limit.throttled_under_limit",
        "{n} call was throttled while traffic was within the limit",
        "{n} calls were throttled while traffic was within the limit",
    )
    UNDECIDED = NPC_(
        "check.rate_limit.undecided",
        "{n} throttled call falls in periods whose token count is incomplete, so whether traffic "
        "was within the limit cannot be decided",
        "{n} throttled calls fall in periods whose token count is incomplete, so whether traffic "
        "was within the limit cannot be decided",
    )


_UNIT = {
    RateLimitBasis.PER_REQUEST: RateLimitSays.REQUESTS,
    RateLimitBasis.PER_TASK: RateLimitSays.TASKS,
    RateLimitBasis.PER_TOKEN: RateLimitSays.TOKENS,
}
_PERIOD = {
    Period.SECOND: RateLimitSays.SECOND,
    Period.MINUTE: RateLimitSays.MINUTE,
    Period.HOUR: RateLimitSays.HOUR,
    Period.DAY: RateLimitSays.DAY,
}


def _rate(rl: RateLimit, amount: float, unit: RateLimitSays) -> Message:
    """``amount`` per the contract's period, e.g. 600 requests/minute."""
    return RateLimitSays.RATE(amount=amount, unit=unit(), period=_PERIOD[rl.period]())


def _sig(x: float) -> float:
    """Four significant digits: an equivalent is an estimate, not a measurement."""
    return float(f"{x:.4g}")


def _criterion(rl: RateLimit, at_the_limit: AtTheLimit) -> Message:
    # a period exactly at the limit is within it unless readings.at_the_limit says beyond
    # (metering.ratelimit applies the same comparison)
    cmp = Comparison.of(Direction.AT_MOST, at_the_limit).symbol()
    return RateLimitSays.CRITERION(
        cmp=cmp,
        rate=_rate(rl, rl.limit, _UNIT[rl.basis]),
        basis=str(rl.basis),
        period=_PERIOD[rl.period](),
    )


def _busiest(
    g: ir.Table, rl: RateLimit, windows: list[CalendarWindow]
) -> dict[str, tuple[float, str]]:
    """Per window: the most traffic in one bucket starting in it, and when (UTC, ISO)."""
    p = period_us(rl)
    lab = g.mutate(window=window_label_expr(g.bucket * p, windows))
    lab = lab.filter(lab["window"].notnull())
    ranked = lab.mutate(
        _i=ibis.row_number().over(
            ibis.window(group_by=lab["window"], order_by=[ibis.desc(lab.amount), lab.bucket])
        )
    )
    df = ranked.filter(ranked._i == 0).execute()
    out: dict[str, tuple[float, str]] = {}
    for w, amount, bucket in zip(df["window"], df["amount"], df["bucket"], strict=True):
        start = dt.datetime.fromtimestamp(int(bucket) * p // 1_000_000, tz=dt.UTC)
        out[str(w)] = (float(amount), start.isoformat().replace("+00:00", "Z"))
    return out


def _per_task_details(
    rl: RateLimit, r: dict[str, Any], p95: float | None
) -> tuple[dict[str, Any], list[Message]]:
    """Requests (and tokens) per task, and the limit restated per task or per request."""
    tasks = as_count(r.get("tasks"))
    details: dict[str, Any] = {"tasks": tasks}
    notes: list[Message] = []
    if tasks == 0:
        return details, notes
    mean = float(r["mean"])
    details["requests_per_task_mean"] = round(mean, 3)
    details["requests_per_task_p95"] = p95
    limit = _rate(rl, rl.limit, _UNIT[rl.basis])
    if rl.basis is RateLimitBasis.PER_REQUEST:
        eq = rl.limit / mean
        details["tasks_per_period_equivalent"] = round(eq, 3)
        notes.append(
            RateLimitSays.REQUESTS_AS_TASKS(
                rate=limit, equivalent=_rate(rl, _sig(eq), RateLimitSays.TASKS), mean=_sig(mean)
            )
        )
        if rl.steps_per_task is not None:
            at_steps = rl.limit / rl.steps_per_task
            details["tasks_per_period_at_contract_steps"] = round(at_steps, 3)
            notes.append(
                RateLimitSays.AT_CONTRACT_STEPS(
                    steps=rl.steps_per_task,
                    equivalent=_rate(rl, _sig(at_steps), RateLimitSays.TASKS),
                )
            )
    elif rl.basis is RateLimitBasis.PER_TASK:
        eq = rl.limit * mean
        details["requests_per_period_equivalent"] = round(eq, 3)
        notes.append(
            RateLimitSays.TASKS_AS_REQUESTS(
                rate=limit, equivalent=_rate(rl, _sig(eq), RateLimitSays.REQUESTS), mean=_sig(mean)
            )
        )
    else:
        tok = float(r["tok"])
        details["tokens_per_task_mean"] = round(tok, 3)
        if tok > 0:
            eq = rl.limit / tok
            details["tasks_per_period_equivalent"] = round(eq, 3)
            notes.append(
                RateLimitSays.TOKENS_AS_TASKS(
                    rate=limit,
                    equivalent=_rate(rl, _sig(eq), RateLimitSays.TASKS),
                    tokens=_sig(tok),
                )
            )
    return details, notes


def _window_result(
    ctx: CheckContext,
    rl: RateLimit,
    w: CalendarWindow,
    r: dict[str, Any],
    busiest: tuple[float, str] | None,
    per_task: tuple[dict[str, Any], list[Message]],
    examples: dict[str, tuple[str, ...]],
) -> TermResult:
    calls, throttled = as_count(r.get("calls")), as_count(r.get("throttled"))
    under, undecided = as_count(r.get("under")), as_count(r.get("undecided"))
    details: dict[str, Any] = {
        "basis": str(rl.basis),
        "limit": rl.limit,
        "period": str(rl.period),
        "peak_observed": busiest[0] if busiest else None,
        "peak_observed_at": busiest[1] if busiest else None,
        "throttled_calls": throttled,
        "throttled_under_limit": under,
        "throttled_undecided": undecided,
        **per_task[0],
    }
    notes = list(per_task[1])
    if rl.burst is not None:
        notes.append(RateLimitSays.BURST(burst=rl.burst))

    def result(
        verdict: Verdict, observed: float | None, lead: Message | None, ex: tuple[str, ...] = ()
    ) -> TermResult:
        return TermResult(
            term_id="rate_limit",
            kind=TermKind.RATE_LIMIT,
            window=w.label,
            verdict=verdict,
            observed=observed,
            unit="calls",
            criterion_message=_criterion(rl, ctx.contract.readings.at_the_limit),
            good=calls - under,
            total=calls,
            examples=ex,
            notes=tuple(notes if lead is None else [lead, *notes]),
            partial_window=ctx.partial(w),
            details=details,
        )

    if calls == 0:
        return result(Verdict.NO_DATA, None, RateLimitSays.NO_CALLS())
    if rl.basis is RateLimitBasis.PER_TOKEN and as_count(r.get("tokens_known")) == 0:
        return result(Verdict.NOT_MEASURABLE, None, RateLimitSays.NO_TOKENS())
    if under:
        lead = RateLimitSays.UNDER_LIMIT(n=under)
        return result(Verdict.BREACHED, float(under), lead, examples.get("under", ()))
    if undecided:
        lead = RateLimitSays.UNDECIDED(n=undecided)
        return result(Verdict.INDETERMINATE, 0.0, lead, examples.get("undecided", ()))
    return result(Verdict.MET, 0.0, None)


def _examples(per: ir.Table) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per kind (``under``, ``undecided``) and window: the first task ids (by id) with a call
    of that kind, from the calls counted per task; one query for both kinds."""
    kinds = [
        per.filter(per[kind] > 0).select(_k=keyed(kind, per.window), task_id=per.task_id)
        for kind in ("under", "undecided")
    ]
    both = kinds[0].union(kinds[1])
    out: dict[str, dict[str, tuple[str, ...]]] = {"under": {}, "undecided": {}}
    for key, ids in examples_by_window(both, ibis.literal(True), window="_k").items():
        kind, label = unkeyed(key)
        out[kind][label] = ids
    return out


@check("rate_limit")
def rate_limit(ctx: CheckContext) -> list[TermResult]:
    """Per month: peak traffic on the contracted basis and throttling within the limit."""
    rl = ctx.contract.rate_limit
    if rl is None:
        return []
    windows = ctx.windows(Window.CALENDAR_MONTH)
    c = scoped_calls(ctx, windows)
    m = c.mutate(under=under_limit_expr(ctx, c), thr=c.status == "throttled")
    thr = m.thr.fill_null(False)
    tokens = m.input_tokens.fill_null(0) + m.output_tokens.fill_null(0)
    # one grouped pass: the calls per window and task, whence every count, the requests per
    # task and their p95, and the examples (the tasks with a call of each kind, by id)
    per = (
        m.group_by(["window", "task_id"])
        .aggregate(
            n=m.count(),
            tokens=tokens.sum(),
            throttled=thr.sum(),
            under=(thr & m.under.fill_null(False)).sum(),
            undecided=(thr & m.under.isnull()).sum(),
            tokens_known=(m.input_tokens.notnull() | m.output_tokens.notnull()).sum(),
        )
        .cache()
    )
    rows = by_window(
        per,
        calls=per.n.sum(),
        throttled=per.throttled.sum(),
        under=per.under.sum(),
        undecided=per.undecided.sum(),
        tokens_known=per.tokens_known.sum(),
        tasks=per.count(),
        mean=per.n.mean(),
        tok=per.tokens.mean(),
    )
    p95 = percentile_by_window(per, "n", 95)
    busiest = _busiest(bucket_amounts(ctx, rl), rl, windows)
    examples = _examples(per)
    return [
        _window_result(
            ctx,
            rl,
            w,
            rows.get(w.label, {}),
            busiest.get(w.label),
            _per_task_details(rl, rows.get(w.label, {}), p95.get(w.label)),
            {k: v.get(w.label, ()) for k, v in examples.items()},
        )
        for w in windows
    ]


__all__ = ["RateLimitSays", "rate_limit"]
