"""The one nearest-rank rule: which order statistics are a contract's percentile (``Rank``,
``percentile_rank``), and the one query that fetches order statistics per window."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.contract.base import as_written
from slacheck.contract.model import Direction, PercentileMethod


def exact_percent(percentile: float) -> Fraction:
    """The percentile as written (``95``, ``99.9``), read as a decimal: exact arithmetic on it
    makes 99.9 % of 1,000 exactly 999. Every rank rule reads the percentile through this."""
    return as_written(percentile)


def nearest_rank(n: int, percentile: float) -> int:
    """k = ⌈p·n/100⌉ (at least 1 when n > 0), in exact arithmetic (``exact_percent``)."""
    if n <= 0:
        return 0
    return max(1, math.ceil(exact_percent(percentile) * n / 100))


@dataclass(frozen=True, slots=True)
class Rank:
    """Which order statistics make a percentile: 1-based ranks and the interpolation fraction
    between the two (exact: 0 when there is one)."""

    ranks: tuple[int, ...]
    fraction: Fraction
    details: dict[str, Any]

    def value(self, stats: Mapping[int, float]) -> float:
        lo = stats[self.ranks[0]]
        if len(self.ranks) == 1:
            return lo
        return interpolate(lo, stats[self.ranks[1]], self.fraction)


def interpolate(lo: float, hi: float, at: Fraction) -> float:
    """lo + at × (hi − lo) on the figures as written, rounded once. In doubles each step rounds:
    the median of 487.36 and 1,512.64 ms is 1,000 exactly, but 487.36 + 0.5 × (1512.64 −
    487.36) is 1000.0000000000001, which breaches an at-most 1,000 ms limit read ``within``."""
    if math.isinf(lo) or math.isinf(hi):
        return lo + float(at) * (hi - lo)
    a = as_written(lo)
    return float(a + at * (as_written(hi) - a))


def percentile_rank(
    n: int, percentile: float, method: PercentileMethod, direction: Direction
) -> Rank:
    """The order statistics of the contracted percentile among ``n`` values (exact arithmetic).

    ``at_most``: the p-th percentile. ``at_least``: the same rank counted from the top (the
    (100 − p)-th percentile), so that "p % of units ≥ threshold" holds exactly when it is met.
    """
    p = exact_percent(percentile)
    if method is PercentileMethod.NEAREST_RANK:
        k = nearest_rank(n, percentile)
        rank = k if direction is Direction.AT_MOST else n - k + 1
        return Rank((rank,), Fraction(0), {"k": k, "n": n, "rank": rank, "good_needed": k})
    q = p if direction is Direction.AT_MOST else 100 - p
    h = (n - 1) * q / 100
    lo = math.floor(h)
    frac = h - lo
    ranks = (lo + 1,) if frac == 0 else (lo + 1, lo + 2)
    return Rank(ranks, frac, {"h": float(h), "n": n})


#: bucket keys are clipped to ±this: monotonic still, and never beyond a 64-bit integer
BUCKET_CLIP = 1e15


def order_stats(
    t: ir.Table,
    window: str,
    column: str,
    wanted: Mapping[Any, Iterable[int]],
    counted: ir.Table | None = None,
) -> dict[Any, dict[int, float]]:
    """The values of ``column`` at the given 1-based ranks (ascending, nulls left out) in each
    window (keys in column ``window``: labels or small integers, as ``wanted`` has them): a few
    rows come back. Ties are interchangeable.

    Exact, without sorting every value: the values are counted per window and unit bucket
    (``floor``, monotonic, so every value of a lower bucket is smaller), running totals over
    those few buckets say which bucket holds each wanted rank and how many values lie below
    it, and only the values of those buckets are ranked.

    ``counted``: those counts when the caller has them already (``_win``, ``_b`` = ``bucket``
    of the column, ``_n``), from a query it makes anyway: the values are then read only once."""
    want = {w: sorted({int(r) for r in ranks}) for w, ranks in wanted.items()}
    want = {w: ranks for w, ranks in want.items() if ranks}
    if not want:
        return {}
    keys = sorted(want)
    if counted is not None:
        counted = counted.filter(counted._win.isin(keys))
    v, b = _buckets(t.filter(t[window].isin(keys)), window, column, counted)
    hit = _any(
        (b._win == w) & (b._hi - b._n < k) & (b._hi >= k)
        for w, ranks in want.items()
        for k in ranks
    )
    # (window, bucket) → values below the bucket: a few rows
    below = {(w, int(k)): int(hi - n) for w, k, n, hi in _rows(b.filter(hit))}
    return pick(v, below, want)


def nearest_rank_by_window(
    t: ir.Table, window: str, column: str, percentile: float
) -> dict[Any, float]:
    """The nearest-rank ``percentile`` of ``column`` (nulls left out) in each window, in two
    passes: the values counted per bucket, each window's count and k = ⌈p·n/100⌉ computed
    beside them in the engine (``nearest_located``), then only the bucket holding the k-th
    value ranked (see ``order_stats``). An integer column's bucket is its value: one pass."""
    v, b = _buckets(t, window, column)
    below, want = nearest_located(b.drop("_hi"), percentile)
    if t[column].type().is_integer():
        # floor(v) = v: the bucket holding the k-th value is that value (unless clipped)
        exact = {w: float(k) for w, k in below if abs(k) < BUCKET_CLIP}
        if len(exact) == len(below):
            return exact
    stats = pick(v, below, want)
    return {w: stats[w][ranks[0]] for w, ranks in want.items() if ranks[0] in stats.get(w, {})}


def nearest_located(
    counted: ir.Table, percentile: float
) -> tuple[dict[tuple[Any, int], int], dict[Any, list[int]]]:
    """Where the nearest-rank ``percentile`` of each window lies, from its values counted per
    window and bucket (``_win``, ``_b``, ``_n``), in one query over those counts: each
    window's count and k = ⌈p·n/100⌉ are computed beside them in the engine (``nearest_rank``
    in integers: ⌈a/b⌉ = ⌊(a + b − 1)/b⌋). Returns what ``pick`` takes: (window, bucket) →
    values below it, and window → [k]."""
    p = exact_percent(percentile)
    num, den = p.numerator, p.denominator * 100
    b = _running(counted.select("_win", "_b", "_n"))
    n = b._n.sum().over(ibis.window(group_by=b._win))
    b = b.mutate(_k=ibis.greatest((n * num + (den - 1)) // den, 1))
    hits = b.filter((b._hi - b._n < b._k) & (b._hi >= b._k))
    below: dict[tuple[Any, int], int] = {}
    want: dict[Any, list[int]] = {}
    for w, k, cnt, hi, rank in _rows(hits.select("_win", "_b", "_n", "_hi", "_k")):
        below[(w, int(k))] = int(hi - cnt)
        want[w] = [int(rank)]
    return below, want


def bucket(v: ir.FloatingValue) -> ir.IntegerValue:
    """A value's bucket: its floor, clipped to ±``BUCKET_CLIP`` (monotonic in the value); null
    for null (the engines' ``least`` and ``greatest`` skip a null argument)."""
    clipped = ibis.greatest(ibis.least(v, BUCKET_CLIP), -BUCKET_CLIP).floor()
    return ibis.ifelse(v.notnull(), clipped, ibis.null().cast(clipped.type()))


def _buckets(
    t: ir.Table, window: str, column: str, counted: ir.Table | None = None
) -> tuple[ir.Table, ir.Table]:
    """The non-null values (``_win``, ``_val``, bucket ``_b``) and their counts per window and
    bucket (``_n``; ``counted`` when given) with the running total up to each bucket (``_hi``)."""
    v = t.filter(t[column].notnull())
    v = v.select(_win=v[window], _val=v[column], _b=bucket(v[column]))
    if counted is None:
        b = v.group_by(["_win", "_b"]).aggregate(_n=v.count())
    else:
        b = counted.select("_win", "_b", "_n")
    return v, _running(b)


def _running(b: ir.Table) -> ir.Table:
    """Counts per window and bucket with the running total up to each bucket (``_hi``)."""
    return b.mutate(_hi=b._n.sum().over(ibis.cumulative_window(group_by=b._win, order_by=b._b)))


def pick(
    v: ir.Table, below: Mapping[tuple[Any, int], int], want: Mapping[Any, Iterable[int]]
) -> dict[Any, dict[int, float]]:
    """The values at the wanted ranks, ranking only the buckets in ``below`` ((window, bucket)
    → values below it, as ``nearest_located`` gives it) among the values ``v`` (``_win``,
    ``_val``, ``_b``): ``v`` may be narrowed to anything that holds all values of those
    buckets."""
    if not below:
        return {}
    # the range from the lowest bucket to the highest first: a plain range the engine applies
    # in its scan, leaving the per-window buckets to the few rows inside it
    keys = [k for _, k in below]
    inside = v.filter(
        _in_buckets(v._val, min(keys), max(keys)),
        _any((v._win == w) & _in_buckets(v._val, k, k) for w, k in below),
    )
    rn = ibis.row_number().over(
        ibis.window(group_by=[inside._win, inside._b], order_by=inside._val)
    )
    ranked = inside.mutate(_rn=rn + 1)
    picks = [
        (ranked._win == w) & (ranked._b == k) & (ranked._rn == rank - lo)
        for (w, k), lo in below.items()
        for rank in want[w]
        if rank - lo > 0
    ]
    out: dict[Any, dict[int, float]] = {}
    for w, k, n, val in _rows(ranked.filter(_any(picks)).select("_win", "_b", "_rn", "_val")):
        out.setdefault(w, {})[below[(w, int(k))] + int(n)] = float(val)
    return out


def in_bucket(v: ir.FloatingValue, k: int) -> ir.BooleanValue:
    """Whether ``v`` falls in bucket ``k`` (``bucket``), as a range of values."""
    return _in_buckets(v, k, k)


def _in_buckets(v: ir.FloatingValue, lo: int, hi: int) -> ir.BooleanValue:
    """Whether ``v`` falls in buckets ``lo`` to ``hi`` (see ``_buckets``), as a range of values:
    cheaper per row than the bucket's expression."""
    conds = [v.notnull()]
    if lo > -BUCKET_CLIP:
        conds.append(v >= lo)
    if hi < BUCKET_CLIP:
        conds.append(v < hi + 1)
    return reduce(lambda a, b: a & b, conds)


def _any(conds: Iterable[ir.BooleanValue]) -> ir.BooleanValue:
    return reduce(lambda a, b: a | b, conds, ibis.literal(False))


def _rows(t: ir.Table) -> list[tuple[Any, ...]]:
    """A small result as Python tuples (through Arrow: no pandas)."""
    table = t.to_pyarrow()
    return list(zip(*(c.to_pylist() for c in table.columns), strict=True))
