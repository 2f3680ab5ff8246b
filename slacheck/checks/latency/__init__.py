"""The latency check: each latency term per window, at its point or bounded by a later one.

What a term measures — its units (calls or tasks), their states and exclusions, each unit's
figure at the contracted point and the stand-in that bounds it, and the point a window is
measured at — is ``metering.units``, which the report's charts read too. Here the check counts
and decides:

- excluded units are counted by reason and left out; failed calls (and tasks whose root span
  failed) are counted and left out (``counting``);
- occurrence objectives use exact order statistics, and an ``at_least`` objective reads the same
  rank counted from the top (``occurrence``);
- when the contracted figure is missing, a stand-in (a later point of the clock, the whole
  request's speed, a task's recorded time) can still prove one side of the verdict; the other
  side is ``indeterminate`` (``assembly.decide``, ``occurrence.mixed_verdict``);
- time-slice objectives compute the statistic per UTC-aligned slice and count passing slices
  (``slices``);
- server metrics, where they cover the term, give a second verdict from their figures, combined
  with the traces' (``server``); the results' wording is ``wording``.
"""

from __future__ import annotations

import ibis.expr.types as ir

from slacheck.checks.latency.assembly import decide
from slacheck.checks.latency.counting import by_window
from slacheck.checks.latency.occurrence import occurrence, occurrence_ranks
from slacheck.checks.latency.picks import Wanted, pick
from slacheck.checks.latency.population import build, count, population_key
from slacheck.checks.latency.server import combine, share_verdict, with_metrics
from slacheck.checks.latency.slices import spanned_slices, time_slices
from slacheck.checks.latency.wording import LatencySays, point_notes
from slacheck.checks.registry import check
from slacheck.contract.model import LatencyTerm, OccurrenceObjective
from slacheck.messages import Message
from slacheck.metering.context import CheckContext
from slacheck.metering.rank import Rank, percentile_rank
from slacheck.metering.units import (
    Bound,
    Counts,
    PeriodValues,
    Point,
    Units,
    call_base,
    choose_point,
    period_values,
    term_units,
)
from slacheck.verdict import TermResult


@check("latency")
def latency(ctx: CheckContext) -> list[TermResult]:
    """Every latency term in every window: one TermResult each, in the contract's order. Terms
    that count the same units in the same windows are counted together (``population``)."""
    terms = ctx.contract.latency
    if not terms:
        return []
    calls = call_base(ctx)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, term in enumerate(terms):
        if ctx.windows(term.window):
            groups.setdefault(population_key(ctx, term), []).append(i)
    done: dict[int, list[TermResult]] = {}
    for members in groups.values():
        got = check_terms(ctx, [terms[i] for i in members], calls)
        done.update(zip(members, got, strict=True))
    return [r for i in range(len(terms)) for r in done.get(i, [])]


def check_term(
    ctx: CheckContext, term: LatencyTerm, calls: ir.Table | None = None
) -> list[TermResult]:
    """One latency term in each of its windows; ``calls``: a ``call_base`` to reuse."""
    if not ctx.windows(term.window):
        return []
    return check_terms(ctx, [term], call_base(ctx) if calls is None else calls)[0]


def check_terms(
    ctx: CheckContext, terms: list[LatencyTerm], calls: ir.Table
) -> list[list[TermResult]]:
    """Terms of one population (equal ``population_key``) in each of their windows: counted in
    one grouped pass, their order statistics and examples read in one range scan."""
    windows = ctx.windows(terms[0].window)
    pop = build(ctx, terms, calls, windows)
    counted = count(ctx, pop)
    chosen_all: list[dict[str, tuple[Point | None, tuple[Message, ...]]]] = []
    wanted: list[Wanted] = []
    for m, c in zip(pop.members, counted, strict=True):
        chosen: dict[str, tuple[Point | None, tuple[Message, ...]]] = {}
        for w in windows:
            cw = c.counts.get(w.label, Counts())
            choice = choose_point(m.units, cw)
            chosen[w.label] = (choice.point, point_notes(m.term, m.units, cw, choice))
        chosen_all.append(chosen)
        want = Wanted()
        obj = m.term.objective
        if isinstance(obj, OccurrenceObjective):
            ranks, alt = occurrence_ranks(m.units, obj, windows, c.counts, chosen)
            for label, r in ranks.items():
                point = chosen[label][0]
                assert point is not None
                want.ranks[label] = (point.column, r.ranks)
                cw = c.counts.get(label, Counts())
                if cw.good(point.column) < cw.n(point.column):
                    want.examples[label] = point.column
            want.alt = {label: r.ranks for label, r in alt.items()}
        wanted.append(want)
    picked = pick(ctx, pop, counted, wanted)
    out: list[list[TermResult]] = []
    for m, c, chosen, p in zip(pop.members, counted, chosen_all, picked, strict=True):
        term, obj = m.term, m.term.objective
        if isinstance(obj, OccurrenceObjective):
            results = occurrence(ctx, term, obj, m.units, windows, c.counts, chosen, p)
        else:
            t = m.units.table
            t = t.filter(t._ex.isnull())  # excluded units are counted and nowhere else
            points = {label: pt.column for label, (pt, _) in chosen.items() if pt is not None}
            t = t.mutate(_v=by_window(t, points, windows))
            results = time_slices(ctx, term, obj, m.units, t, windows, c.counts, chosen)
        out.append(with_metrics(ctx, term, windows, results))
    return out


__all__ = [
    "Bound",
    "Counts",
    "LatencySays",
    "PeriodValues",
    "Point",
    "Rank",
    "Units",
    "call_base",
    "check_term",
    "check_terms",
    "choose_point",
    "combine",
    "decide",
    "latency",
    "percentile_rank",
    "period_values",
    "share_verdict",
    "spanned_slices",
    "term_units",
]
