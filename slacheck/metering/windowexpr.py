"""The calendar windows (``slacheck.windows``) as engine expressions: which window a timestamp
falls in, and whether it falls in a maintenance interval. Binary searches, log₂(n) deep.

``slacheck.windows`` itself is date arithmetic only, with no engine behind it, so the
renderers can read windows without importing one."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.windows import CalendarWindow

__all__ = ["in_intervals_expr", "window_index_expr", "window_label_expr"]


def window_label_expr(ts_us: ir.IntegerValue, windows: Sequence[CalendarWindow]) -> ir.StringValue:
    """The label of the window each timestamp falls in, or null outside them all.

    A binary search over the windows sorted by start, so the expression is log₂(n) deep and
    not n: traces spanning decades (one outlier span) give hundreds of months, and a chain of
    that many cases overflows Python's stack when the engine compiles it.
    """
    return _window_of(ts_us, windows, lambda i: ibis.literal(windows[i].label), "string")


def window_index_expr(ts_us: ir.IntegerValue, windows: Sequence[CalendarWindow]) -> ir.IntegerValue:
    """The position in ``windows`` of the window each timestamp falls in, or null outside them
    all (``window_label_expr`` as a small integer: cheaper to store, group by and compare than
    the label, for a table that holds one row per call)."""
    return _window_of(ts_us, windows, lambda i: ibis.literal(i, "int16"), "int16")


def _window_of(
    ts_us: ir.IntegerValue,
    windows: Sequence[CalendarWindow],
    value: Callable[[int], ir.Value],
    dtype: str,
) -> Any:
    """``value(i)`` for the window ``windows[i]`` each timestamp falls in, else null."""
    none = ibis.null().cast(dtype)
    if not windows:
        return none
    ordered = sorted(range(len(windows)), key=lambda i: windows[i].start_us)
    if any(windows[a].end_us > windows[b].start_us for a, b in itertools.pairwise(ordered)):
        # overlapping windows: the first listed wins, as a flat case list says
        return ibis.cases(
            *[
                ((ts_us >= w.start_us) & (ts_us < w.end_us), value(i))
                for i, w in enumerate(windows)
            ],
            else_=none,
        )

    def search(lo: int, hi: int) -> Any:
        if hi - lo == 1:
            w = windows[ordered[lo]]
            inside = (ts_us >= w.start_us) & (ts_us < w.end_us)
            return ibis.ifelse(inside, value(ordered[lo]), none)
        mid = (lo + hi) // 2
        start = windows[ordered[mid]].start_us
        return ibis.ifelse(ts_us < start, search(lo, mid), search(mid, hi))

    return search(0, len(ordered))


def in_intervals_expr(
    ts_us: ir.IntegerValue, intervals: Sequence[tuple[int, int]]
) -> ir.BooleanValue:
    """Whether a timestamp falls inside any of ``intervals`` (sorted and disjoint, as
    ``maintenance_intervals`` gives them). A binary search, log₂(n) deep: a weekly window over
    decades of traces is thousands of intervals, which a chain of ORs cannot compile."""
    if not intervals:
        return ibis.literal(False)
    ordered = sorted(intervals)
    if any(a[1] > b[0] for a, b in itertools.pairwise(ordered)):
        cond: ir.BooleanValue = ibis.literal(False)
        for s, e in ordered:
            cond |= (ts_us >= s) & (ts_us < e)
        return cond

    def search(lo: int, hi: int) -> ir.BooleanValue:
        if hi - lo == 1:
            s, e = ordered[lo]
            return (ts_us >= s) & (ts_us < e)
        mid = (lo + hi) // 2
        return ibis.ifelse(ts_us < ordered[mid][0], search(lo, mid), search(mid, hi))

    return search(0, len(ordered)).fill_null(False)
