"""Per-window queries over metered calls: every query groups by the ``window`` label, so a
consumer costs the same number of queries for one month as for a quarter's three."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.metering.context import Metering
from slacheck.metering.derive import scoped
from slacheck.metering.rank import nearest_rank_by_window
from slacheck.metering.windowexpr import window_label_expr
from slacheck.verdict import MAX_EXAMPLES
from slacheck.windows import CalendarWindow

# ---------------------------------------------------------------------------------------------
# Per-window helpers: every query groups by the ``window`` label, so a check costs the same
# number of queries for one month as for a quarter's three.


def scoped_calls(ctx: Metering, windows: Sequence[CalendarWindow]) -> ir.Table:
    """In-scope model calls that start in one of ``windows``, labelled with it (``window``)."""
    c = ctx.calls
    c = c.filter(scoped(c, ctx.contract))
    c = c.mutate(window=window_label_expr(c.start_us, windows))
    return c.filter(c["window"].notnull())


def as_count(value: Any) -> int:
    """An aggregate count from pandas: None/NaN (no rows) is 0."""
    return 0 if value is None or value != value else int(value)


def by_window(t: ir.Table, **aggregates: ir.Value) -> dict[str, dict[str, Any]]:
    """``aggregates`` per window label (windows without rows are absent)."""
    df = t.group_by("window").aggregate(**aggregates).execute()
    return {str(r["window"]): r for r in df.to_dict("records")}


def percentile_by_window(
    t: ir.Table, column: str, percentile: float, where: ir.BooleanValue | None = None
) -> dict[str, float]:
    """The nearest-rank percentile (``rank.nearest_rank``) of a column's non-null values where
    ``where`` holds, per window: two passes, and only the k-th value comes back."""
    v = t if where is None else t.filter(where)
    return nearest_rank_by_window(v, "window", column, percentile)


def examples_by_window(
    t: ir.Table, cond: ir.BooleanValue, worst_first: str | None = None, window: str = "window"
) -> dict[Any, tuple[str, ...]]:
    """A few task ids per window (column ``window``: its labels, or whatever keys it holds)
    where ``cond`` holds: largest ``worst_first`` first, then id; one query for every window.

    The per-window twin of ``context.example_ids``."""
    f = t.filter(cond)
    hits = f.select(_win=f[window], task_id=f.task_id, **_worst(f, worst_first))
    if worst_first is None:
        g = hits.distinct()
        order: list[Any] = [g.task_id]
    else:
        g = hits.group_by(["_win", "task_id"]).aggregate(_w=hits._worst.max())
        order = [ibis.desc(g._w), g.task_id]
    ranked = g.mutate(_i=ibis.row_number().over(ibis.window(group_by=g._win, order_by=order)))
    rows = (
        ranked.filter(ranked._i < MAX_EXAMPLES).order_by(["_win", "_i"]).select("_win", "task_id")
    )
    out: dict[Any, list[str]] = {}
    for r in rows.to_pyarrow().to_pylist():
        out.setdefault(r["_win"], []).append(str(r["task_id"]))
    return {w: tuple(ids) for w, ids in out.items()}


def _worst(t: ir.Table, worst_first: str | None) -> dict[str, ir.Value]:
    return {} if worst_first is None else {"_worst": t[worst_first]}
