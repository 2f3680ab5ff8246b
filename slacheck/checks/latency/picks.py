"""Order statistics and example task ids of every term of a population, from one range scan.

The counting pass says, per term and window, which millisecond bucket holds each wanted rank and
how many values lie below it (``population.Histogram``), and which buckets hold the worst units
(the top or the bottom of the order: enough of them, counted from that end, to name the
examples). One query then reads the units in any of those buckets (a few thousand rows) and
the values at the ranks are picked from them: exact, as a sort of every value would give
them. The examples are the distinct tasks with the worst failing units among those rows: when
the rows hold at least ``MAX_EXAMPLES`` tasks, no task outside them can be worse (each of its
units lies beyond the cut), so the examples are those a query over every unit would name.

Where a bucket holds more rows than ``FETCH_CAP`` (a figure recorded with few distinct
values), or the worst rows hold too few tasks, that term and window is answered by the engine
instead (``rank.order_stats``, ``windowed.examples_by_window``): the same answer, more
queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import reduce

import ibis
import ibis.expr.types as ir
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from slacheck.checks.latency.counting import is_answered, passes_test, within_at_limit
from slacheck.checks.latency.population import Counted, Member, Population
from slacheck.contract.model import Direction
from slacheck.metering.context import CheckContext
from slacheck.metering.rank import BUCKET_CLIP, in_bucket, order_stats
from slacheck.metering.windowed import examples_by_window
from slacheck.verdict import MAX_EXAMPLES

#: failing units read per window to name its examples (the worst first): enough to hold
#: ``MAX_EXAMPLES`` distinct tasks unless a few tasks hold most of the worst units
EXAMPLE_ROWS = 64
#: the most rows one bucket (or one window's worst units) may bring back to be ranked here;
#: beyond it the engine ranks them
FETCH_CAP = 100_000

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]


@dataclass
class Wanted:
    """What one member needs: per window label, the column measured and the 1-based ranks
    (``ranks``; ``alt``: of the alternative figure), and the column whose failing units name the
    window's examples (``examples``)."""

    ranks: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    alt: dict[str, tuple[int, ...]] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)


@dataclass
class Picked:
    """One member's order statistics per window label (``stats``, ``alt``) and the examples of
    the windows named in ``Wanted.examples``."""

    stats: dict[str, dict[int, float]] = field(default_factory=dict)
    alt: dict[str, dict[int, float]] = field(default_factory=dict)
    examples: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Target:
    i: int
    w: int
    column: str
    bucket: int
    below: int
    ranks: tuple[int, ...]
    alt: bool


@dataclass(frozen=True, slots=True)
class _Worst:
    i: int
    w: int
    column: str
    cut: int
    upward: bool


def pick(
    ctx: CheckContext, pop: Population, counted: list[Counted], wanted: list[Wanted]
) -> list[Picked]:
    """Every member's order statistics and examples (see the module's rules)."""
    at = {w.label: i for i, w in enumerate(pop.windows)}
    out = [Picked() for _ in pop.members]
    targets: list[_Target] = []
    worst: list[_Worst] = []
    engine_ranks: list[tuple[int, str, str, tuple[int, ...], bool]] = []
    engine_examples: list[tuple[int, str, str]] = []
    for i, want in enumerate(wanted):
        c = counted[i]
        asked = [(label, col, ranks, False) for label, (col, ranks) in want.ranks.items()]
        asked += [(label, "_a", ranks, True) for label, ranks in want.alt.items()]
        for label, col, ranks, alt in asked:
            h = c.histogram(col)
            per: dict[tuple[int, int], list[int]] = {}
            for k in ranks:
                where = h.where(at[label], k)
                if where is not None:
                    per.setdefault(where, []).append(k)
            if any(h.size(at[label], b) > FETCH_CAP for b, _ in per):
                engine_ranks.append((i, label, col, ranks, alt))
                continue
            for (b, below), ks in per.items():
                targets.append(_Target(i, at[label], col, b, below, tuple(ks), alt))
        m = pop.members[i]
        upward = m.term.objective.direction is Direction.AT_MOST
        for label, col in want.examples.items():
            end = c.histogram(col).beyond(at[label], upward, EXAMPLE_ROWS)
            if end is None:
                continue
            cut, rows = end
            if rows > FETCH_CAP:
                engine_examples.append((i, label, col))
                continue
            worst.append(_Worst(i, at[label], col, cut, upward))
    if targets or worst:
        incomplete = _fetch(ctx, pop, counted, targets, worst, out)
        engine_examples += incomplete
    for i, label, col, ranks, alt in engine_ranks:
        got = _engine_ranks(pop.members[i], at[label], col, ranks)
        (out[i].alt if alt else out[i].stats)[label] = got
    for i, label, col in engine_examples:
        out[i].examples[label] = _engine_examples(ctx, pop.members[i], at[label], col)
    return out


def _fetch(
    ctx: CheckContext,
    pop: Population,
    counted: list[Counted],
    targets: list[_Target],
    worst: list[_Worst],
    out: list[Picked],
) -> list[tuple[int, str, str]]:
    """One query for every target bucket and every window's worst units; fills ``out`` and
    returns the (member, label, column) whose worst rows held too few tasks."""
    t = pop.table
    inclusive = within_at_limit(ctx)
    kept = is_answered(t) & t._ex.isnull()
    conds: list[ir.BooleanValue] = []
    for g in targets:
        v = pop.members[g.i].value(t, g.column)
        conds.append((t._w == g.w) & in_bucket(v, g.bucket))
    for x in worst:
        m = pop.members[x.i]
        v = m.value(t, x.column)
        obj = m.term.objective
        beyond = ~passes_test(obj.direction, obj.threshold, inclusive)(v)
        conds.append((t._w == x.w) & v.notnull() & beyond & _past(v, x.cut, x.upward))
    columns = sorted(
        {pop.members[g.i].column(n) for g in targets for n in _raw(g.column)}
        | {pop.members[x.i].column(n) for x in worst for n in _raw(x.column)}
    )
    rows = t.filter(kept & reduce(lambda a, b: a | b, conds))
    got = rows.select("task_id", "_w", *columns).to_pyarrow()
    win = got["_w"].to_numpy(zero_copy_only=False)
    labels = [w.label for w in pop.windows]
    for g in targets:
        v, ok = _values(got, pop.members[g.i], g.column)
        vals = np.sort(v[(win == g.w) & ok & _in_bucket_np(v, g.bucket)])
        stats = (out[g.i].alt if g.alt else out[g.i].stats).setdefault(labels[g.w], {})
        for k in g.ranks:
            stats[k] = float(vals[k - g.below - 1])
    incomplete: list[tuple[int, str, str]] = []
    ids = got["task_id"]
    for x in worst:
        m = pop.members[x.i]
        obj = m.term.objective
        v, ok = _values(got, m, x.column)
        passes = v <= obj.threshold if inclusive else v < obj.threshold
        if obj.direction is Direction.AT_LEAST:
            passes = v >= obj.threshold if inclusive else v > obj.threshold
        sel = (win == x.w) & ok & ~passes & _past_np(v, x.cut, x.upward)
        found = _worst_tasks(ids.filter(pa.array(sel)), v[sel] if x.upward else -v[sel])
        c = counted[x.i].counts.get(labels[x.w])
        failing = 0 if c is None else c.n(x.column) - c.good(x.column)
        if len(found) >= MAX_EXAMPLES or int(sel.sum()) == failing:
            out[x.i].examples[labels[x.w]] = found
        else:
            incomplete.append((x.i, labels[x.w], x.column))
    return incomplete


def _raw(column: str) -> tuple[str, ...]:
    """The member's columns a figure is read from (``_m``: the contracted one, else the
    stand-in)."""
    return ("_p", "_f") if column == "_m" else (column,)


def _values(got: pa.Table, m: Member, column: str) -> tuple[Floats, Flags]:
    """A member's figure on the fetched rows: values (NaN where null) and where present."""

    def col(name: str) -> tuple[Floats, Flags]:
        a = got[m.column(name)]
        ok = a.is_valid().to_numpy(zero_copy_only=False)
        return a.fill_null(np.nan).to_numpy(zero_copy_only=False).astype(np.float64), ok

    if column != "_m" or m.f is None:
        return col("_p" if column == "_m" else column)
    p, has_p = col("_p")
    f, has_f = col("_f")
    return np.where(has_p, p, f), has_p | has_f


def _worst_tasks(ids: pa.ChunkedArray, worst: Floats) -> tuple[str, ...]:
    """Up to ``MAX_EXAMPLES`` distinct task ids, by their largest ``worst`` then by id."""
    if not len(worst):
        return ()
    per = (
        pa.table({"task_id": ids, "_worst": worst})
        .group_by("task_id")
        .aggregate([("_worst", "max")])
    )
    top = per.sort_by([("_worst_max", "descending"), ("task_id", "ascending")])
    return tuple(str(x) for x in top["task_id"].to_pylist()[:MAX_EXAMPLES])


def _in_bucket_np(v: Floats, b: int) -> Flags:
    cond = ~np.isnan(v)
    if b > -BUCKET_CLIP:
        cond &= v >= b
    if b < BUCKET_CLIP:
        cond &= v < b + 1
    return cond


def _past(v: ir.FloatingValue, cut: int, upward: bool) -> ir.BooleanValue:
    """Whether ``v`` lies in bucket ``cut`` or beyond it, towards the top (``upward``) or the
    bottom."""
    if upward:
        return v >= cut if cut > -BUCKET_CLIP else ibis.literal(True)
    return v < cut + 1 if cut < BUCKET_CLIP else ibis.literal(True)


def _past_np(v: Floats, cut: int, upward: bool) -> Flags:
    if upward:
        return v >= cut if cut > -BUCKET_CLIP else np.ones(len(v), dtype=bool)
    return v < cut + 1 if cut < BUCKET_CLIP else np.ones(len(v), dtype=bool)


def _engine_ranks(m: Member, w: int, column: str, ranks: tuple[int, ...]) -> dict[int, float]:
    t = m.units.table
    t = t.filter(is_answered(t) & t._ex.isnull())
    return order_stats(t, "_w", column, {w: ranks}).get(w, {})


def _engine_examples(ctx: CheckContext, m: Member, w: int, column: str) -> tuple[str, ...]:
    t = m.units.table
    obj = m.term.objective
    v = t[column]
    t = t.mutate(_worst=v if obj.direction is Direction.AT_MOST else -v)
    offending = (
        (t._w == w)
        & is_answered(t)
        & t._ex.isnull()
        & t[column].notnull()
        & ~passes_test(obj.direction, obj.threshold, within_at_limit(ctx))(t[column])
    )
    return examples_by_window(t, offending, "_worst", window="_w").get(w, ())


__all__ = ["EXAMPLE_ROWS", "FETCH_CAP", "Picked", "Wanted", "pick"]
