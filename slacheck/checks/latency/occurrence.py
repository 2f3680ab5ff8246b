"""Occurrence objectives: a percentile of the window's figures against the threshold, in exact
order statistics (nearest rank: the k-th smallest value with k = ceil(p·n/100); linear:
interpolation at the 0-based rank (n−1)·p/100). An ``at_least`` objective reads the same rank
counted from the top, so it is met exactly when at least ceil(p·n/100) values reach the
threshold. Figures that are bounds (a stand-in, or some units' own figures and others' bounds)
prove one side of the verdict only."""

from __future__ import annotations

from collections.abc import Mapping

from slacheck.checks.latency.assembly import Base, decide, with_examples
from slacheck.checks.latency.counting import meets, within_at_limit
from slacheck.checks.latency.picks import Picked
from slacheck.checks.latency.wording import (
    LatencySays,
    alt_note,
    noun_for,
    occurrence_criterion,
    unit_name,
)
from slacheck.contract.model import (
    Direction,
    LatencyTerm,
    OccurrenceObjective,
    PercentileMethod,
)
from slacheck.messages import Message
from slacheck.metering.context import CheckContext
from slacheck.metering.rank import Rank, percentile_rank
from slacheck.metering.units import Bound, Counts, Point, Units
from slacheck.verdict import TermResult, Verdict
from slacheck.windows import CalendarWindow


def occurrence_ranks(
    units: Units,
    obj: OccurrenceObjective,
    windows: list[CalendarWindow],
    counts: Mapping[str, Counts],
    chosen: Mapping[str, tuple[Point | None, tuple[Message, ...]]],
) -> tuple[dict[str, Rank], dict[str, Rank]]:
    """Per window label: the order statistics of the percentile at the window's point, and of
    the alternative figure where the term states one."""
    ranks: dict[str, Rank] = {}
    alt_ranks: dict[str, Rank] = {}
    for w in windows:
        point, _ = chosen[w.label]
        c = counts.get(w.label, Counts())
        if point is not None:
            ranks[w.label] = percentile_rank(
                c.n(point.column), obj.percentile, obj.method, obj.direction
            )
        if units.alternative is not None and c.n_a > 0:
            alt_ranks[w.label] = percentile_rank(c.n_a, obj.percentile, obj.method, obj.direction)
    return ranks, alt_ranks


def occurrence(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: OccurrenceObjective,
    units: Units,
    windows: list[CalendarWindow],
    counts: Mapping[str, Counts],
    chosen: Mapping[str, tuple[Point | None, tuple[Message, ...]]],
    picked: Picked,
) -> list[TermResult]:
    """The term's result in each window. ``chosen``: each window's point and the notes on it;
    ``picked``: the order statistics at ``occurrence_ranks`` and the examples of every window
    with units beyond the threshold (``picks.pick``)."""
    inclusive = within_at_limit(ctx)
    losses = ctx.losses(windows)
    ranks, alt_ranks = occurrence_ranks(units, obj, windows, counts, chosen)
    stats, alt_stats = picked.stats, picked.alt
    unit = unit_name(term)
    results: list[TermResult] = []
    for w in windows:
        c = counts.get(w.label, Counts())
        point, point_notes = chosen[w.label]
        base = Base(ctx, term, units, w, c, occurrence_criterion(ctx.contract, term), losses)
        if point is None:
            results.append(base.unmeasured(unit))
            continue
        rank = ranks[w.label]
        observed = rank.value(stats[w.label])
        n, good = c.n(point.column), c.good(point.column)
        notes: list[Message] = list(point_notes)
        if w.label in alt_ranks:
            alt = alt_ranks[w.label].value(alt_stats[w.label])
            met_here = meets(obj.direction, observed, obj.threshold, inclusive)
            alt_passes = meets(obj.direction, alt, obj.threshold, inclusive)
            notes.append(alt_note(alt, c.n_a, alt_passes != met_here))
        elif units.alternative is not None:
            notes.append(LatencySays.BASIS_NO_COMPARISON())
        passes = meets(obj.direction, observed, obj.threshold, inclusive)
        if point.mixed and obj.method is PercentileMethod.NEAREST_RANK:
            verdict = mixed_verdict(point, obj.direction, n, good, c, rank.details["k"])
        else:
            verdict = decide(passes, point.bound, obj.direction)
        if term.min_samples is not None and n < term.min_samples:
            verdict = Verdict.NO_DATA
            notes.append(LatencySays.BELOW_MIN(n=n, noun=noun_for(units, n), min=term.min_samples))
        details = {
            **rank.details,
            "method": obj.method.value,
            "direction": obj.direction.value,
            "point_used": point.name,
            # a stand-in's side ("upper": each figure ≥ the contracted one), so a document can
            # say which way the observed figure bounds the statistic
            "point_bound": None if point.bound is None else str(point.bound),
            **base.common_details(),
        }
        r = base.result(verdict, observed, unit, good, n, (), notes, point, details)
        if verdict is not Verdict.MET and good < n:  # the offending units are shown
            r = with_examples(r, picked.examples.get(w.label, ()))
        results.append(r)
    return results


def mixed_verdict(
    point: Point, direction: Direction, n: int, good: int, c: Counts, k: int
) -> Verdict:
    """Nearest rank over per-unit figures, some exact and some bounds (DOMAIN.md's rule).

    With n units and k = ⌈p·n/100⌉: met when the units proven within the threshold number at
    least k; breached when those proven beyond it number more than n − k; else indeterminate.
    A bound proves one side only: a later point's figure (``upper``) proves an at-most value
    within, never beyond; so ``good`` (units whose figure passes) is what is proven on the
    provable side, and the exact figures alone on the other.
    """
    provable_pass = (point.bound is Bound.UPPER) == (direction is Direction.AT_MOST)
    exact_pass, exact_fail = c.good_p, c.n_p - c.good_p
    if provable_pass:
        if good >= k:
            return Verdict.MET
        return Verdict.BREACHED if exact_fail > n - k else Verdict.INDETERMINATE
    if n - good > n - k:
        return Verdict.BREACHED
    return Verdict.MET if exact_pass >= k else Verdict.INDETERMINATE


__all__ = ["mixed_verdict", "occurrence", "occurrence_ranks"]
