"""Server-side metrics, a second evidence source (rules in ``metering.metrics``): what they say
of a term in a window, combined with the traces' verdict into the result's."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slacheck.checks.latency.assembly import gap
from slacheck.contract.model import (
    Direction,
    LatencyTerm,
    OccurrenceObjective,
    TimeSliceObjective,
)
from slacheck.messages import Message
from slacheck.metering import metrics as server_metrics
from slacheck.metering.context import CheckContext, LossSays
from slacheck.metering.rank import percentile_rank
from slacheck.verdict import TermResult, Verdict
from slacheck.windows import CalendarWindow


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the metrics say of one term in one window."""

    verdict: Verdict
    observed: float | None
    unit: str
    good: int
    total: int
    notes: tuple[Message, ...]
    details: dict[str, Any]


def with_metrics(
    ctx: CheckContext, term: LatencyTerm, windows: list[CalendarWindow], results: list[TermResult]
) -> list[TermResult]:
    """The term's results with the server metrics' verdict combined in, where they cover it."""
    ev = ctx.metrics
    if ev is None:
        return results
    found, _ = server_metrics.cover(term)
    if found is None:
        traces = str(server_metrics.Evidence.TRACES)
        return [dataclasses.replace(r, details={**r.details, "evidence": traces}) for r in results]
    tp = server_metrics.term_points(
        ev, ctx.contract, term, found, windows, ctx.maintenance, ctx.effective_us
    )
    obj = term.objective
    readings = (
        _metric_occurrence(ctx, term, obj, tp, ev)
        if isinstance(obj, OccurrenceObjective)
        else _metric_slices(ctx, term, obj, tp, ev)
    )
    unapplied = server_metrics.unapplied_exclusions(ctx.contract)
    out: list[TermResult] = []
    for r in results:
        m = readings.get(r.window)
        exact = r.measured_at == term.measurement_point.value and not r.bounded
        verdict, evidence, said = server_metrics.combine(
            r.verdict, exact, None if m is None else m.verdict
        )
        details = {**r.details, "evidence": str(evidence)}
        notes = list(r.notes)
        if m is not None:
            details["metrics"] = m.details
            notes.extend(m.notes)
            if unapplied:
                notes.append(server_metrics.MetricsSays.NOT_APPLIED(which=", ".join(unapplied)))
        if said is not None:
            notes.append(said)
        if m is not None and evidence is server_metrics.Evidence.METRICS:
            out.append(
                dataclasses.replace(
                    r,
                    verdict=verdict,
                    observed=m.observed,
                    unit=m.unit,
                    good=m.good,
                    total=m.total,
                    examples=(),
                    notes=tuple(notes),
                    measured_at=found.metric,
                    details=details,
                    gap=_metric_gap(obj, m.observed),
                )
            )
        else:
            out.append(dataclasses.replace(r, verdict=verdict, notes=tuple(notes), details=details))
    return out


def _metric_gap(
    obj: OccurrenceObjective | TimeSliceObjective, observed: float | None
) -> float | None:
    """``gap`` of a metrics-only figure: none for an unbounded one (a bucket without an edge)."""
    if observed is not None and math.isinf(observed):
        return None
    return gap(obj, observed)


def _aside_notes(aside: Mapping[str, int]) -> tuple[Message, ...]:
    if not aside:
        return ()
    why = [LossSays.REASON(reason=k, n=v) for k, v in sorted(aside.items())]
    return (server_metrics.MetricsSays.SET_ASIDE(n=sum(aside.values()), why=why),)


def _finite(x: float) -> float | None:
    return None if math.isinf(x) else x


def _metric_occurrence(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: OccurrenceObjective,
    tp: server_metrics.TermPoints,
    ev: server_metrics.MetricsEvidence,
) -> dict[str, _Reading]:
    counts = server_metrics.window_counts(tp)
    ranks = {
        w: percentile_rank(n, obj.percentile, obj.method, obj.direction)
        for w, (n, _) in counts.items()
        if n > 0
    }
    bounds = server_metrics.window_rank_bounds(tp, ev, {w: r.ranks for w, r in ranks.items()})
    proven = server_metrics.proven_within(tp, ev, obj)
    out: dict[str, _Reading] = {}
    for w in set(counts) | set(tp.aside):
        n, points = counts.get(w, (0, 0))
        aside = tp.aside.get(w, {})
        details: dict[str, Any] = {
            "metric": tp.cover.metric,
            "relation": str(tp.cover.relation),
            "points": points,
            "requests": n,
            "set_aside": dict(sorted(aside.items())),
        }
        if n == 0:
            out[w] = _Reading(Verdict.NO_DATA, None, "ms", 0, 0, _aside_notes(aside), details)
            continue
        rank = ranks[w]
        b = bounds[w]
        lo, hi = b[rank.ranks[0]]
        if len(rank.ranks) == 2:
            lo2, hi2 = b[rank.ranks[1]]
            f = rank.fraction
            lo, hi = lo + f * (lo2 - lo), (math.inf if math.isinf(hi2) else hi + f * (hi2 - hi))
        lo, hi = server_metrics.widen(lo, hi, tp.cover.relation)
        passes = server_metrics.judge(
            lo, hi, False, obj.direction, obj.threshold, ctx.contract.readings.at_the_limit
        )
        verdict = (
            Verdict.INDETERMINATE if passes is None else Verdict.MET if passes else Verdict.BREACHED
        )
        if term.min_samples is not None and n < term.min_samples:
            verdict = Verdict.NO_DATA
        details.update(
            {"ranks": list(rank.ranks), "lower": lo, "upper": _finite(hi), **rank.details}
        )
        metric = tp.cover.metric
        note = (
            server_metrics.MetricsSays.LOWER_ONLY(metric=metric, n=n, lower=lo)
            if math.isinf(hi)
            else server_metrics.MetricsSays.BOUNDS(metric=metric, n=n, lower=lo, upper=hi)
        )
        at_most = obj.direction is Direction.AT_MOST
        observed = hi if (passes is True) == at_most and not math.isinf(hi) else lo
        good = proven.get(w, 0)
        out[w] = _Reading(verdict, observed, "ms", good, n, (note, *_aside_notes(aside)), details)
    return out


def _metric_slices(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: TimeSliceObjective,
    tp: server_metrics.TermPoints,
    ev: server_metrics.MetricsEvidence,
) -> dict[str, _Reading]:
    per = server_metrics.slice_table(tp, ev, obj)
    judged = server_metrics.slice_judgements(
        per, obj, tp.cover.relation, ctx.contract.readings.at_the_limit
    ).execute()
    straddling = server_metrics.straddling_slices(tp, obj)
    rows = {str(r["_w"]): r for r in judged.to_dict("records")}
    out: dict[str, _Reading] = {}
    for w in set(rows) | set(tp.aside) | set(straddling):
        aside = dict(tp.aside.get(w, {}))
        if straddling.get(w):
            aside[str(server_metrics.Aside.STRADDLES_SLICE)] = straddling[w]
        row = rows.get(w, {})
        total = int(row.get("total") or 0)
        passing = int(row.get("passing") or 0)
        failing = int(row.get("failing") or 0)
        verdict = server_metrics.share_verdict(passing, failing, total, obj.slices_passing_percent)
        if term.min_samples is not None and total < term.min_samples:
            verdict = Verdict.NO_DATA
        notes: list[Message] = []
        details: dict[str, Any] = {
            "metric": tp.cover.metric,
            "relation": str(tp.cover.relation),
            "slices": total,
            "passing_slices": passing,
            "failing_slices": failing,
            "undecided_slices": total - passing - failing,
            "sparse_slices": int(row.get("empty") or 0),
            "set_aside": dict(sorted(aside.items())),
        }
        observed = None
        if total:
            observed = 100.0 * passing / total
            notes.append(
                server_metrics.MetricsSays.SLICE_BOUNDS(
                    metric=tp.cover.metric,
                    total=total,
                    minutes=obj.slice_minutes,
                    passing=passing,
                    failing=failing,
                    unknown=total - passing - failing,
                    low=observed,
                    high=100.0 * (total - failing) / total,
                )
            )
        notes.extend(_aside_notes(aside))
        out[w] = _Reading(verdict, observed, "% of slices", passing, total, tuple(notes), details)
    return out


__all__ = ["with_metrics"]
