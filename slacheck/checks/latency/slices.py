"""Time-slice objectives: the statistic per UTC-aligned slice of the window, and the share of
slices with enough data that pass it against the share the contract requires."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir

from slacheck.checks.latency.assembly import Base, decide, with_examples
from slacheck.checks.latency.counting import (
    is_answered,
    passes_test,
    position,
    within_at_limit,
)
from slacheck.checks.latency.wording import (
    LatencySays,
    alt_slice_note,
    noun_for,
    noun_message,
    slice_criterion,
)
from slacheck.contract.model import Direction, LatencyTerm, TimeSliceObjective
from slacheck.messages import Message
from slacheck.metering.context import CheckContext
from slacheck.metering.derive import exact_sum, exact_total
from slacheck.metering.units import Bound, Counts, Point, Units
from slacheck.metering.windowed import examples_by_window
from slacheck.verdict import TermResult, Verdict
from slacheck.windows import CalendarWindow

_SLICE_PERCENTILES = {"p50": 50, "p90": 90, "p95": 95, "p99": 99}
_US_PER_MINUTE = 60_000_000


def _slice_table(t: ir.Table, column: str, obj: TimeSliceObjective, inclusive: bool) -> ir.Table:
    """One row per (window, slice) with data: value count ``_n`` and the statistic ``_stat``."""
    v = t.filter(is_answered(t) & t[column].notnull())
    v = v.mutate(_s=v.start_us // (obj.slice_minutes * _US_PER_MINUTE), _x=v[column])
    passes = passes_test(obj.direction, obj.threshold, inclusive)
    if obj.statistic in _SLICE_PERCENTILES:
        q = _SLICE_PERCENTILES[obj.statistic]
        part = ibis.window(group_by=[v._w, v._s], order_by=v._x)
        r = v.mutate(
            _rn=ibis.row_number().over(part) + 1,
            _n=v._x.count().over(ibis.window(group_by=[v._w, v._s])),
        )
        # nearest rank in integers: ceil(q·n/100)
        per = r.filter(r._rn == (r._n * q + 99) // 100).select("_w", "_s", "_n", _stat=r._x)
        passed = passes(per._stat)
    elif obj.statistic == "mean":
        # the mean's test in exact decimals, Σ against threshold × n: a mean of doubles rounds
        # (35.3, 40.4 and 44.3 tokens/s average 39.99999999999999), so a slice exactly at the
        # limit failed a contract that lets the limit pass
        per = v.group_by(["_w", "_s"]).aggregate(
            _n=v.count(), _stat=v._x.mean(), _sum=exact_sum(v._x)
        )
        passed = passes_test(obj.direction, exact_total(obj.threshold, per._n), inclusive)(per._sum)
    else:
        per = v.group_by(["_w", "_s"]).aggregate(_n=v.count(), _stat=v._x.min())
        passed = passes(per._stat)
    return per.mutate(
        _data=per._n >= obj.min_calls_per_slice,
        _pass=passed,
        _bad=per._stat - obj.threshold
        if obj.direction is Direction.AT_MOST
        else obj.threshold - per._stat,
    )


def _slice_counts(per: ir.Table, windows: list[CalendarWindow]) -> dict[str, tuple[int, int]]:
    """Per window label: slices passing and slices with data."""
    agg = per.group_by("_w").aggregate(total=per._data.sum(), good=(per._data & per._pass).sum())
    return {
        windows[int(r["_w"])].label: (int(r["good"] or 0), int(r["total"] or 0))
        for r in agg.to_pyarrow().to_pylist()
    }


def spanned_slices(ctx: CheckContext, w: CalendarWindow, slice_minutes: int) -> int:
    """Slices the window spans: all of it, or (a partial window) the part the traces cover."""
    lo, hi = w.start_us, w.end_us
    if ctx.partial(w):
        data_lo, data_hi = ctx.data_range
        lo = max(lo, data_lo if data_lo is not None else hi)
        hi = min(hi, data_hi if data_hi is not None else lo)
    if hi <= lo:
        return 0
    size = slice_minutes * _US_PER_MINUTE
    return (hi - 1) // size - lo // size + 1


def time_slices(
    ctx: CheckContext,
    term: LatencyTerm,
    obj: TimeSliceObjective,
    units: Units,
    t: ir.Table,
    windows: list[CalendarWindow],
    counts: dict[str, Counts],
    chosen: dict[str, tuple[Point | None, tuple[Message, ...]]],
) -> list[TermResult]:
    """The term's result in each window. ``chosen``: each window's point and the notes on it."""
    losses = ctx.losses(windows)
    inclusive = within_at_limit(ctx)
    per = _slice_table(t, "_v", obj, inclusive)
    slices = _slice_counts(per, windows)
    alt = (
        _slice_counts(_slice_table(t, "_a", obj, inclusive), windows)
        if units.alternative is not None
        else {}
    )
    unit = "% of slices"
    results: list[TermResult] = []
    need: list[str] = []  # the windows whose failing slices' units are shown
    for w in windows:
        c = counts.get(w.label, Counts())
        point, point_notes = chosen[w.label]
        base = Base(ctx, term, units, w, c, slice_criterion(ctx.contract, term), losses)
        if point is None:
            results.append(base.unmeasured(unit))
            continue
        good, total = slices.get(w.label, (0, 0))
        spanned = spanned_slices(ctx, w, obj.slice_minutes)
        empty = max(0, spanned - total)
        details = {
            "slice_minutes": obj.slice_minutes,
            "statistic": obj.statistic,
            "slices_spanned": spanned,
            "empty_slices": empty,
            "failing_slices": total - good,
            "values": c.n(point.column),
            "point_used": point.name,
            **base.common_details(),
        }
        notes: list[Message] = list(point_notes)
        noun = noun_message(units)
        if empty:
            minutes = obj.slice_minutes
            notes.append(
                LatencySays.EMPTY_SLICES(empty=empty, spanned=spanned, minutes=minutes, noun=noun)
                if obj.min_calls_per_slice == 1
                else LatencySays.SPARSE_SLICES(
                    empty=empty,
                    spanned=spanned,
                    minutes=minutes,
                    min=obj.min_calls_per_slice,
                    noun=noun_for(units, obj.min_calls_per_slice),
                )
            )
        if total == 0:
            notes.append(
                LatencySays.NO_SLICE(
                    min=obj.min_calls_per_slice, noun=noun_for(units, obj.min_calls_per_slice)
                )
            )
            results.append(
                base.result(Verdict.NO_DATA, None, unit, 0, 0, (), notes, point, details)
            )
            continue
        observed = 100.0 * good / total
        if units.alternative is not None:
            a_good, a_total = alt.get(w.label, (0, 0))
            if a_total:
                a_obs = 100.0 * a_good / a_total
                met_here = observed >= obj.slices_passing_percent
                alt_passes = a_obs >= obj.slices_passing_percent
                notes.append(alt_slice_note(a_obs, a_total, alt_passes != met_here))
            else:
                notes.append(LatencySays.BASIS_NO_COMPARISON())
        # a stand-in that proves slices pass gives a share below the true one, and vice versa
        share_bound = None
        if point.bound is not None:
            slice_pass_provable = (point.bound is Bound.UPPER) == (
                obj.direction is Direction.AT_MOST
            )
            share_bound = Bound.LOWER if slice_pass_provable else Bound.UPPER
        verdict = decide(observed >= obj.slices_passing_percent, share_bound, Direction.AT_LEAST)
        if term.min_samples is not None and total < term.min_samples:
            verdict = Verdict.NO_DATA
            notes.append(LatencySays.SLICES_BELOW_MIN(n=total, min=term.min_samples))
        if verdict is not Verdict.MET and good < total:
            need.append(w.label)
        results.append(base.result(verdict, observed, unit, good, total, (), notes, point, details))
    if need:
        at = position(windows)
        wanted = [at[label] for label in need]
        failing = per.filter(per._w.isin(wanted) & per._data & ~per._pass)
        v = t.filter(t._w.isin(wanted) & is_answered(t) & t._v.notnull())
        v = v.mutate(_s=v.start_us // (obj.slice_minutes * _US_PER_MINUTE))
        j = v.inner_join(failing.select("_w", "_s", "_bad"), ["_w", "_s"])
        found = examples_by_window(j, ibis.literal(True), "_bad", window="_w")
        results = [with_examples(r, found.get(at[r.window], ())) for r in results]
    return results


__all__ = ["spanned_slices", "time_slices"]
