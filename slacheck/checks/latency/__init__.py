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
from slacheck.checks.latency.counting import (
    by_window,
    compact,
    count_units,
    passes_test,
    within_at_limit,
)
from slacheck.checks.latency.occurrence import occurrence
from slacheck.checks.latency.server import combine, share_verdict, with_metrics
from slacheck.checks.latency.slices import spanned_slices, time_slices
from slacheck.checks.latency.wording import LatencySays, point_notes
from slacheck.checks.registry import check
from slacheck.contract.model import (
    Direction,
    LatencyTerm,
    OccurrenceObjective,
    TimeSliceObjective,
)
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
    """Every latency term in every window: one TermResult each."""
    results: list[TermResult] = []
    calls = call_base(ctx) if ctx.contract.latency else None
    for term in ctx.contract.latency:
        results.extend(check_term(ctx, term, calls))
    return results


def check_term(
    ctx: CheckContext, term: LatencyTerm, calls: ir.Table | None = None
) -> list[TermResult]:
    """One latency term in each of its windows; ``calls``: a ``call_base`` to reuse."""
    windows = ctx.windows(term.window)
    if not windows:
        return []
    units = term_units(ctx, term, call_base(ctx) if calls is None else calls)
    threshold, direction = term.objective.threshold, term.objective.direction
    passes = passes_test(direction, threshold, within_at_limit(ctx))
    # a time slice's examples are any of its units; an occurrence's, units beyond the threshold
    t = compact(units, windows, None if isinstance(term.objective, TimeSliceObjective) else passes)
    counts, counted = count_units(t, units, passes, windows)
    chosen: dict[str, tuple[Point | None, tuple[Message, ...]]] = {}
    for w in windows:
        c = counts.get(w.label, Counts())
        choice = choose_point(units, c)
        chosen[w.label] = (choice.point, point_notes(term, units, c, choice))
    if any(p is not None and p.column != "_p" for p, _ in chosen.values()):
        counted = None  # a window measured at another figure: its values are counted anew
    t = t.filter(t._ex.isnull())  # excluded units are counted above and nowhere else
    t = t.mutate(
        _v=by_window(
            t, {label: p.column for label, (p, _) in chosen.items() if p is not None}, windows
        )
    )
    t = t.mutate(_worst=t._v if direction is Direction.AT_MOST else -t._v)
    if isinstance(term.objective, OccurrenceObjective):
        results = occurrence(ctx, term, term.objective, units, t, windows, counts, chosen, counted)
    else:
        results = time_slices(ctx, term, term.objective, units, t, windows, counts, chosen)
    return with_metrics(ctx, term, windows, results)


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
