"""The rate-limit reading: what a period's traffic amounts to on the contract's basis, and whether
a call's period was within the limit. Read by the rate-limit and availability checks alike (a
throttled call within the limit is the vendor's failure).

Periods are UTC-aligned buckets of the contract's period; a per-task limit counts the tasks
started in a period, or active in it, as ``readings.per_task_rate_counts`` says; a period at the
limit is within it unless ``readings.at_the_limit`` says ``beyond``.
"""

from __future__ import annotations

import ibis
import ibis.expr.types as ir

from slacheck.contract.criterion import Comparison
from slacheck.contract.model import Direction, RateLimit, RateLimitBasis, TaskRateCount
from slacheck.metering.context import Metering
from slacheck.metering.derive import scoped


def period_us(rl: RateLimit) -> int:
    return rl.period.seconds * 1_000_000


def bucket_expr(ts_us: ir.IntegerValue, rl: RateLimit) -> ir.IntegerValue:
    """The UTC-aligned bucket of the contract's period that a timestamp falls in."""
    return ts_us // period_us(rl)


def _scoped(ctx: Metering) -> ir.Table:
    c = ctx.calls
    return c.filter(scoped(c, ctx.contract))


def bucket_amounts(ctx: Metering, rl: RateLimit) -> ir.Table:
    """Per bucket with traffic: ``bucket``, ``amount`` on the basis, ``unknown`` (calls whose
    tokens are missing; always 0 unless per_token). Computed once per run and limit."""
    return ctx.kept(f"bucket_amounts:{rl!r}", lambda: _bucket_amounts(ctx, rl))


def _bucket_amounts(ctx: Metering, rl: RateLimit) -> ir.Table:
    c = _scoped(ctx)
    if rl.basis is RateLimitBasis.PER_TASK:
        t = ctx.tasks
        t = t.filter(t.task_id.isin(c.task_id))
        first = bucket_expr(t.start_us, rl)
        if ctx.contract.readings.per_task_rate_counts is TaskRateCount.ACTIVE:
            # a task counts in every period from the one it starts in to the one it ends in
            last = bucket_expr(ibis.coalesce(t.last_end_us, t.start_us), rl)
            b = t.mutate(bucket=ibis.range(first, last + 1).unnest())
        else:
            b = t.mutate(bucket=first)
        return b.group_by("bucket").aggregate(amount=b.count(), unknown=ibis.literal(0))
    b = c.mutate(bucket=bucket_expr(c.start_us, rl))
    if rl.basis is RateLimitBasis.PER_REQUEST:
        return b.group_by("bucket").aggregate(amount=b.count(), unknown=ibis.literal(0))
    tokens = b.input_tokens.fill_null(0) + b.output_tokens.fill_null(0)
    missing = (b.status == "ok").fill_null(True) & (
        b.input_tokens.isnull() | b.output_tokens.isnull()
    )
    return b.group_by("bucket").aggregate(amount=tokens.sum(), unknown=missing.sum())


def under_limit_expr(ctx: Metering, calls: ir.Table) -> ir.BooleanValue:
    """Per call of ``calls``: its bucket's count was within the contracted limit.

    Null when that cannot be decided (per_token with answered calls lacking token counts).
    Always True when the contract has no rate limit: every throttled call was then under it.
    Counts come from all in-scope calls, whatever ``calls`` was filtered to, so a bucket that
    straddles a month edge is counted whole.
    """
    rl = ctx.contract.rate_limit
    if rl is None:
        return ibis.literal(True)
    g = bucket_amounts(ctx, rl)
    b = bucket_expr(calls.start_us, rl)
    # the comparison the rate-limit criterion names: traffic at the limit is within it unless
    # readings.at_the_limit says beyond
    within = Comparison.of(Direction.AT_MOST, ctx.contract.readings.at_the_limit).inclusive
    is_over = g.amount > rl.limit if within else g.amount >= rl.limit
    over = g.filter(is_over).bucket
    undecided = g.filter(~is_over & (g.unknown > 0)).bucket
    return ibis.cases(
        (b.isin(over), ibis.literal(False)),
        (b.isin(undecided), ibis.null().cast("boolean")),
        else_=ibis.literal(True),
    )
