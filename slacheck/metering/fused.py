"""Several order statistics per window from one grouped pass and one narrow pass.

A check that states several percentiles (the peak check: call duration at and off peak, queue
wait at peak) counts the values of all of them per window and unit bucket in the grouped pass
it makes anyway (``rank.bucket``), finds every statistic's bucket in one query over those
counts (``rank.nearest_located``, keyed by statistic and window), then reads the calls once
more, keeping only the values of those buckets (and whatever else the caller keeps from the
same scan, such as its examples), and ranks them (``rank.pick``). Exact nearest rank, as
``rank.nearest_rank_by_window`` computes one statistic in two passes of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce

import ibis
import ibis.expr.types as ir

from slacheck.metering.rank import bucket, in_bucket, nearest_located, pick

__all__ = ["Statistic", "counted_long", "keyed", "nearest_ranks", "unkeyed"]

#: between a statistic's name and a window label in the key the rank queries group by
_SEP = "\x1f"


@dataclass(frozen=True, slots=True)
class Statistic:
    """The values of column ``value`` of the calls where boolean column ``where`` holds."""

    where: str
    value: str


def keyed(name: str, window: ir.StringValue) -> ir.StringValue:
    """One grouping key for a name (a statistic, a kind of example) and a window label."""
    return ibis.literal(name + _SEP) + window


def unkeyed(key: object) -> tuple[str, str]:
    """The name and the window label of a key ``keyed`` made."""
    name, _, label = str(key).partition(_SEP)
    return name, label


def counted_long(parts: Mapping[str, ir.Table]) -> ir.Table:
    """Per statistic (by name) its values counted per window (``window``) and bucket (``_b``,
    ``_n``), as one table keyed the way ``nearest_ranks`` reads it (``_win``, ``_b``, ``_n``)."""
    tables = [t.select(_win=keyed(name, t.window), _b=t._b, _n=t._n) for name, t in parts.items()]
    return reduce(lambda a, b: a.union(b), tables)


def nearest_ranks(
    t: ir.Table,
    stats: Mapping[str, Statistic],
    counted: ir.Table,
    percentile: float,
    keep: str | None = None,
    columns: Sequence[str] = (),
) -> tuple[dict[str, dict[str, float]], ir.Table]:
    """The nearest-rank ``percentile`` of every statistic in each window: name → window label →
    value (absent where the statistic has no value in the window).

    ``t``: the calls, with ``window`` and the columns the statistics name; ``counted``: their
    values per statistic, window and bucket (``counted_long``). ``keep``: a boolean column of
    ``t`` whose rows are kept too, with ``columns``, in the table returned beside: the rows of
    the one narrow scan, computed once, for the caller's own small queries (examples)."""
    below, want = nearest_located(counted, percentile)
    hits: list[ir.BooleanValue] = []
    for (key, k), _ in below.items():
        name, label = unkeyed(key)
        s = stats[name]
        hits.append((t.window == label) & t[s.where] & in_bucket(t[s.value], k))
    cond = reduce(lambda a, b: a | b, hits, ibis.literal(False))
    if keep is not None:
        cond = cond | t[keep].fill_null(False)
    wanted = {"window", *columns, *(c for s in stats.values() for c in (s.where, s.value))}
    if keep is not None:
        wanted.add(keep)
    rows = t.filter(cond).select(*sorted(wanted)).cache()
    out: dict[str, dict[str, float]] = {}
    if below:
        v = reduce(
            lambda a, b: a.union(b),
            [
                rows.filter(rows[s.where] & rows[s.value].notnull()).select(
                    _win=keyed(name, rows.window), _val=rows[s.value], _b=bucket(rows[s.value])
                )
                for name, s in stats.items()
            ],
        )
        picked = pick(v, below, want)
        for key, ranks in want.items():
            value = picked.get(key, {}).get(ranks[0])
            if value is not None:
                name, label = unkeyed(key)
                out.setdefault(name, {})[label] = value
    return out, rows
