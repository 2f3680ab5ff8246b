"""Server-side metrics, a second evidence source: the verdict their figures give a term in a
window (``metering.metrics`` says what the histograms bound), and that verdict combined with the
traces' into the result's."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slacheck.checks.latency.assembly import gap
from slacheck.contract.model import LatencyTerm, OccurrenceObjective, TimeSliceObjective
from slacheck.messages import NC_, Message, MessageCode
from slacheck.metering import metrics as server_metrics
from slacheck.metering.context import CheckContext
from slacheck.metering.metrics import Evidence
from slacheck.results import LossSays
from slacheck.verdict import TermResult, Verdict
from slacheck.windows import CalendarWindow


class CombinedSays(MessageCode):
    """What a result says of the traces' and the metrics' verdicts taken together (the codes
    are those of ``metering.metrics``, where these rules were written first)."""

    MET = NC_("metering.metrics.verdict.met", "met")
    BREACHED = NC_("metering.metrics.verdict.breached", "breached")
    INDETERMINATE = NC_("metering.metrics.verdict.indeterminate", "indeterminate")
    NOT_MEASURABLE = NC_("metering.metrics.verdict.not_measurable", "not measurable")
    NO_DATA = NC_("metering.metrics.verdict.no_data", "no data")
    DECIDED = NC_(
        "metering.metrics.decided",
        "verdict from server metrics: the traces alone give {trace}",
    )
    AGREE = NC_(
        "metering.metrics.agree", "server metrics give the same verdict as the traces ({verdict})"
    )
    DISAGREE = NC_(
        "metering.metrics.disagree",
        "the traces give {trace} and the server metrics {metrics}: the two sources disagree, "
        "so the verdict is indeterminate",
    )
    DISAGREE_KEPT = NC_(
        "metering.metrics.disagree_kept",
        "server metrics give {metrics}; the traces measure the contracted point itself and "
        "give {trace}, which stands",
    )


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the metrics say of one term in one window, decided."""

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
        traces = str(Evidence.TRACES)
        return [dataclasses.replace(r, details={**r.details, "evidence": traces}) for r in results]
    tp = server_metrics.term_points(
        ev, ctx.contract, term, found, windows, ctx.maintenance, ctx.effective_us
    )
    obj = term.objective
    at_the_limit = ctx.contract.readings.at_the_limit
    readings = (
        _percentile_readings(term, server_metrics.percentile_figures(tp, ev, obj, at_the_limit))
        if isinstance(obj, OccurrenceObjective)
        else _slice_readings(term, obj, server_metrics.slice_figures(tp, ev, obj, at_the_limit))
    )
    unapplied = server_metrics.unapplied_exclusions(ctx.contract)
    out: list[TermResult] = []
    for r in results:
        m = readings.get(r.window)
        exact = r.measured_at == term.measurement_point.value and not r.bounded
        verdict, evidence, said = combine(r.verdict, exact, None if m is None else m.verdict)
        details = {**r.details, "evidence": str(evidence)}
        notes = list(r.notes)
        if m is not None:
            details["metrics"] = m.details
            notes.extend(m.notes)
            if unapplied:
                notes.append(server_metrics.MetricsSays.NOT_APPLIED(which=", ".join(unapplied)))
        if said is not None:
            notes.append(said)
        if m is not None and evidence is Evidence.METRICS:
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


def _percentile_readings(
    term: LatencyTerm, figures: Mapping[str, server_metrics.PercentileFigures]
) -> dict[str, _Reading]:
    """Per window: met or breached where the percentile's bounds prove it, else indeterminate;
    no data without requests, or fewer than the term's minimum."""
    out: dict[str, _Reading] = {}
    for w, f in figures.items():
        notes = (*f.notes, *_aside_notes(f.aside))
        if f.requests == 0:
            out[w] = _Reading(Verdict.NO_DATA, None, "ms", 0, 0, notes, f.details)
            continue
        verdict = (
            Verdict.INDETERMINATE
            if f.passes is None
            else Verdict.MET
            if f.passes
            else Verdict.BREACHED
        )
        if term.min_samples is not None and f.requests < term.min_samples:
            verdict = Verdict.NO_DATA
        out[w] = _Reading(verdict, f.observed, "ms", f.good, f.requests, notes, f.details)
    return out


def _slice_readings(
    term: LatencyTerm,
    obj: TimeSliceObjective,
    figures: Mapping[str, server_metrics.SliceFigures],
) -> dict[str, _Reading]:
    """Per window: the share of slices proven passing against the required share
    (``share_verdict``); no data with fewer slices than the term's minimum."""
    out: dict[str, _Reading] = {}
    for w, f in figures.items():
        verdict = share_verdict(f.passing, f.failing, f.slices, obj.slices_passing_percent)
        if term.min_samples is not None and f.slices < term.min_samples:
            verdict = Verdict.NO_DATA
        notes = (*f.notes, *_aside_notes(f.aside))
        out[w] = _Reading(verdict, f.observed, "% of slices", f.passing, f.slices, notes, f.details)
    return out


def share_verdict(passing: int, failing: int, total: int, required: float) -> Verdict:
    """Met when the proven-passing share reaches ``required`` %, breached when even counting
    every undecided slice as passing it falls short, else indeterminate."""
    if total == 0:
        return Verdict.NO_DATA
    if 100.0 * passing / total >= required:
        return Verdict.MET
    if 100.0 * (total - failing) / total < required:
        return Verdict.BREACHED
    return Verdict.INDETERMINATE


_DEFINITE = (Verdict.MET, Verdict.BREACHED)


def _said(v: Verdict) -> Message:
    """A verdict's name as a message (worded in the reader's language)."""
    return {
        Verdict.MET: CombinedSays.MET,
        Verdict.BREACHED: CombinedSays.BREACHED,
        Verdict.INDETERMINATE: CombinedSays.INDETERMINATE,
        Verdict.NOT_MEASURABLE: CombinedSays.NOT_MEASURABLE,
    }.get(v, CombinedSays.NO_DATA)()


def combine(
    trace: Verdict, trace_exact: bool, metrics: Verdict | None
) -> tuple[Verdict, Evidence, Message | None]:
    """One verdict from the traces' and the metrics', which source it rests on, and why.

    Traces measuring the contracted point itself stand; otherwise a definite verdict from
    either source decides, two definite verdicts that differ make it indeterminate, and
    metrics fill in where the traces measure nothing.
    """
    if metrics is None or metrics is Verdict.NO_DATA:
        return trace, Evidence.TRACES, None
    if trace_exact and trace in _DEFINITE:
        if metrics in _DEFINITE and metrics is not trace:
            note = CombinedSays.DISAGREE_KEPT(trace=_said(trace), metrics=_said(metrics))
            return trace, Evidence.TRACES, note
        return trace, Evidence.TRACES, None
    if trace in _DEFINITE and metrics in _DEFINITE:
        if trace is metrics:
            return trace, Evidence.BOTH, CombinedSays.AGREE(verdict=_said(trace))
        note = CombinedSays.DISAGREE(trace=_said(trace), metrics=_said(metrics))
        return Verdict.INDETERMINATE, Evidence.BOTH, note
    if trace in _DEFINITE:
        return trace, Evidence.TRACES, None
    if metrics in _DEFINITE:
        return metrics, Evidence.METRICS, CombinedSays.DECIDED(trace=_said(trace))
    if trace is Verdict.INDETERMINATE:
        return trace, Evidence.BOTH, None
    return metrics, Evidence.METRICS, CombinedSays.DECIDED(trace=_said(trace))


__all__ = ["CombinedSays", "combine", "share_verdict", "with_metrics"]
