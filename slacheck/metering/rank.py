"""The one nearest-rank rule: which order statistic is a contract's percentile."""

from __future__ import annotations

import math
from fractions import Fraction


def nearest_rank(n: int, percentile: float) -> int:
    """k = ⌈p·n/100⌉ (at least 1 when n > 0), in exact arithmetic: the percentile as written
    (``95``, ``99.9``) is read as a decimal, so 99.9 % of 1,000 is exactly 999."""
    if n <= 0:
        return 0
    p = Fraction(repr(float(percentile)))
    return max(1, math.ceil(p * n / 100))
