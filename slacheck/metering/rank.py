"""The one nearest-rank rule: which order statistic is a contract's percentile, and the one
query that fetches order statistics per window."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import reduce

import ibis
import ibis.expr.types as ir


def nearest_rank(n: int, percentile: float) -> int:
    """k = ⌈p·n/100⌉ (at least 1 when n > 0), in exact arithmetic: the percentile as written
    (``95``, ``99.9``) is read as a decimal, so 99.9 % of 1,000 is exactly 999."""
    if n <= 0:
        return 0
    p = Fraction(repr(float(percentile)))
    return max(1, math.ceil(p * n / 100))


def order_stats(
    t: ir.Table, window: str, column: str, wanted: Mapping[str, Iterable[int]]
) -> dict[str, dict[int, float]]:
    """The values of ``column`` at the given 1-based ranks (ascending, nulls left out) in each
    window (labels in column ``window``): a few rows come back. Ties are interchangeable."""
    if not wanted:
        return {}
    v = t.filter(t[column].notnull())
    rn = ibis.row_number().over(ibis.window(group_by=v[window], order_by=v[column])) + 1
    r = v.select(_win=v[window], _val=v[column], _rn=rn)
    cond = reduce(
        lambda a, b: a | b,
        [(r._win == label) & r._rn.isin(sorted(set(ranks))) for label, ranks in wanted.items()],
    )
    df = r.filter(cond).execute()
    out: dict[str, dict[int, float]] = {}
    for label, n, val in zip(df["_win"], df["_rn"], df["_val"], strict=True):
        out.setdefault(str(label), {})[int(n)] = float(val)
    return out
