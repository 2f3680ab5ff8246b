"""Server-side metrics as a second evidence source: which metric measures which point, which
points count toward which window and slice, and what bounds their buckets put on a statistic.

Rules (the one place they are written):

- ``gen_ai.server.request.duration`` measures ``server_processing`` itself: its buckets bound a
  percentile on both sides (as finely as the buckets are cut);
- ``gen_ai.server.time_to_first_token`` is the server's clock, inside the client's
  ``time_to_first_token`` (request sent → first chunk received): every client figure is at
  least the server's, so the metric bounds the contracted figure from below only — it can prove
  an ``at_most`` term breached, never met (the way a later point proves the reverse);
- ``gen_ai.server.time_per_output_token`` is seconds per token after the first, on the server's
  clock: it is not the contract's tokens per second over either basis, and no bound is claimed;
  client points (``full_response``, ``task_end_to_end``) are left to the traces;
- a series with ``error.type`` counts failed requests: left out, as failed calls are; the
  contract's scope (provider, model, endpoint) is applied to the series' attributes with the
  same rule as to calls; per-call exclusions (long input, tier, customer error) cannot be applied
  to a histogram and are said to be so; a point touching a maintenance window is left out;
- a point counts toward a window (or slice) only when its whole interval lies inside it; one that
  straddles an edge is set aside and counted, never spread;
- the k-th smallest observation lies in the bucket where the cumulative count reaches k: above
  that bucket's lower bound, at most its upper bound. Where points of a group cut their buckets
  differently, the upper bound is the least bound with at least k observations surely at or
  below it, the lower bound the least lower edge with at least k possibly at or below it;
  durations are never negative, so an open first bucket is bounded below by 0;
- a slice's mean is exact when every point carries ``sum``; else bounded by the buckets;
- a statistic passes when its bounds prove it, fails when they prove that, else is unknown.

What the metrics say of a term in a window comes back as figures (``PercentileFigures``,
``SliceFigures``: the bounds, the counts, whether they prove the statistic passing); the
latency check decides the verdict from them and combines it with the traces'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.contract.model import (
    AtTheLimit,
    Contract,
    Direction,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    TimeSliceObjective,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.metering import derive
from slacheck.metering.rank import interpolate, percentile_rank
from slacheck.metering.windowexpr import in_intervals_expr, window_label_expr
from slacheck.trace.otlp_metrics import MetricPoints
from slacheck.windows import CalendarWindow

_US_PER_MINUTE = 60_000_000
_SLICE_PERCENTILES = {"p50": 50, "p90": 90, "p95": 95, "p99": 99}


class Relation(StrEnum):
    """How a metric's figure relates to the contracted one."""

    SAME = "same_point"  # the contracted point itself, bounded by bucket edges
    LOWER = "lower_bound"  # at most the contracted figure (an earlier clock)


@dataclass(frozen=True, slots=True)
class Cover:
    """The metric a term's point reads, and how it relates to the contracted figure."""

    metric: str
    relation: Relation


COVERS: dict[MeasurementPoint, Cover] = {
    MeasurementPoint.SERVER_PROCESSING: Cover("gen_ai.server.request.duration", Relation.SAME),
    MeasurementPoint.TIME_TO_FIRST_TOKEN: Cover(
        "gen_ai.server.time_to_first_token", Relation.LOWER
    ),
}


class Evidence(StrEnum):
    """Where a verdict's figures came from."""

    TRACES = "traces"
    METRICS = "metrics"
    BOTH = "traces_and_metrics"


class MetricsSays(MessageCode):
    """What results and the field check say of server-side metrics (what a result says of the
    two sources' verdicts together is the latency check's, ``checks.latency.server``)."""

    COVERAGE_TITLE = NC_("metering.metrics.coverage_title", "Server metrics: the terms they cover")
    COLUMN_TERM = NC_("metering.metrics.column.term", "term")
    COLUMN_POINT = NC_("metering.metrics.column.point", "measurement point")
    COLUMN_METRIC = NC_("metering.metrics.column.metric", "metric")
    COLUMN_GIVES = NC_("metering.metrics.column.gives", "what the metrics give")
    NOT_SERVER_POINT = NC_(
        "metering.metrics.not_server_point",
        "{point} is measured at the client: server metrics do not bound it; traces only",
    )
    TOKENS_PER_SECOND = NC_(
        "metering.metrics.tokens_per_second",
        "gen_ai.server.time_per_output_token is seconds per token after the first on the "
        "server's clock, not the contract's tokens per second: no bound is claimed",
    )
    STATISTIC = NC_(
        "metering.metrics.statistic",
        "the slice statistic {statistic} cannot be bounded from histogram buckets",
    )
    COVERED_SAME = NPC_(
        "metering.metrics.covered_same",
        "{metric}: bounds on both sides, as fine as its buckets ({points} point in scope)",
        "{metric}: bounds on both sides, as fine as its buckets ({points} points in scope)",
        count="points",
    )
    COVERED_LOWER = NPC_(
        "metering.metrics.covered_lower",
        "{metric}: the server's clock, a lower bound on the contracted figure ({points} point "
        "in scope)",
        "{metric}: the server's clock, a lower bound on the contracted figure ({points} points "
        "in scope)",
        count="points",
    )
    NO_POINTS = NC_(
        "metering.metrics.no_points", "{metric}: no data points in scope in the metrics files"
    )
    BOUNDS = NPC_(
        "metering.metrics.bounds",
        "server metrics ({metric}, {n} request): the statistic lies in ({lower}, {upper}] ms",
        "server metrics ({metric}, {n} requests): the statistic lies in ({lower}, {upper}] ms",
    )
    LOWER_ONLY = NPC_(
        "metering.metrics.lower_only",
        "server metrics ({metric}, {n} request): the server's figure exceeds {lower} ms, so "
        "the contracted figure does too (a lower bound only)",
        "server metrics ({metric}, {n} requests): the server's figure exceeds {lower} ms, so "
        "the contracted figure does too (a lower bound only)",
    )
    SLICE_BOUNDS = NPC_(
        "metering.metrics.slice_bounds",
        "server metrics ({metric}): of {total} {minutes}-minute slice, {passing} pass and "
        "{failing} fail on their bucket bounds, {unknown} cannot be told; the passing share "
        "lies between {low} % and {high} %",
        "server metrics ({metric}): of {total} {minutes}-minute slices, {passing} pass and "
        "{failing} fail on their bucket bounds, {unknown} cannot be told; the passing share "
        "lies between {low} % and {high} %",
        count="total",
    )
    SET_ASIDE = NPC_(
        "metering.metrics.set_aside",
        "server metrics: {n} point left out ({why})",
        "server metrics: {n} points left out ({why})",
    )
    NOT_APPLIED = NC_(
        "metering.metrics.exclusions_not_applied",
        "server metrics cannot apply per-call exclusions ({which}): the histograms count "
        "those requests",
    )


def cover(term: LatencyTerm) -> tuple[Cover | None, Message | None]:
    """The metric that bounds ``term``, or None and why not."""
    point = term.measurement_point
    if point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        return None, MetricsSays.TOKENS_PER_SECOND()
    found = COVERS.get(point)
    if found is None:
        return None, MetricsSays.NOT_SERVER_POINT(point=str(point))
    obj = term.objective
    if isinstance(obj, TimeSliceObjective) and obj.statistic not in (
        *_SLICE_PERCENTILES,
        "mean",
        "min",
    ):
        return None, MetricsSays.STATISTIC(statistic=obj.statistic)
    return found, None


@dataclass(frozen=True)
class MetricsEvidence:
    """Histogram points as engine tables, read once per run."""

    data: MetricPoints

    @cached_property
    def points(self) -> ir.Table:
        p = ibis.memtable(self.data.points)
        return p.mutate(
            requested=derive.model_base_expr(p.request_model),
            served_model=derive.model_base_expr(p.response_model),
            model=derive.model_base_expr(ibis.coalesce(p.response_model, p.request_model)),
            provider_key=derive.provider_key_expr(p.provider),  # as ``derive.calls`` keys it
            span_id=p.series,  # ``derive.in_scope`` wants a non-null column
        )

    @cached_property
    def buckets(self) -> ir.Table:
        return ibis.memtable(self.data.buckets)


class Aside(StrEnum):
    """Why a point in a window's span is not counted toward it."""

    FAILED = "failed_requests"
    MAINTENANCE = "maintenance"
    STRADDLES = "straddles_window_edge"
    STRADDLES_SLICE = "straddles_slice_edge"
    OUTSIDE_EFFECTIVE = "outside_effective_period"


@dataclass(frozen=True)
class TermPoints:
    """A term's points in its windows: ``kept`` (``_w`` the window label) and what was left out."""

    cover: Cover
    kept: ir.Table
    aside: dict[str, dict[str, int]]  # window label → reason → points
    in_scope: int


def term_points(
    ev: MetricsEvidence,
    contract: Contract,
    term: LatencyTerm,
    found: Cover,
    windows: list[CalendarWindow],
    maintenance: list[tuple[int, int]],
    effective: tuple[int, int | None],
) -> TermPoints:
    """The points of ``found.metric`` in the term's scope, each in the window holding it whole."""
    p = ev.points
    p = p.filter((p.metric == found.metric) & derive.scoped(p, contract, term))
    last = ibis.greatest(p.end_us - 1, p.start_us)
    w_start = window_label_expr(p.start_us, windows)
    w_end = window_label_expr(last, windows)
    lo, hi = effective
    outside = (p.start_us < lo) if hi is None else ((p.start_us < lo) | (last >= hi))
    reason = ibis.cases(
        (outside, str(Aside.OUTSIDE_EFFECTIVE)),
        (w_start.isnull() | w_end.isnull() | (w_start != w_end), str(Aside.STRADDLES)),
        (p.error_type.notnull(), str(Aside.FAILED)),
        (
            in_intervals_expr(p.start_us, maintenance) | in_intervals_expr(last, maintenance)
            if maintenance
            else ibis.literal(False),
            str(Aside.MAINTENANCE),
        ),
        else_=ibis.null().cast("string"),
    )
    t = p.mutate(_w=ibis.coalesce(w_start, w_end), _why=reason)
    t = t.filter(t._w.notnull())
    counted = t.group_by(["_w", "_why"]).aggregate(n=t.count()).execute()
    aside: dict[str, dict[str, int]] = {}
    in_scope = 0
    for label, why, n in zip(counted["_w"], counted["_why"], counted["n"], strict=True):
        in_scope += int(n)
        if why is not None and why == why:
            aside.setdefault(str(label), {})[str(why)] = int(n)
    kept = t.filter(t._why.isnull()).drop("_why")
    return TermPoints(found, kept, aside, in_scope)


def rank_bounds(buckets: ir.Table, keys: list[str], ranks: ir.Table) -> ir.Table:
    """Bounds on the k-th smallest observation per group: ``keys``, ``_k``, ``_lo``, ``_hi``.

    ``buckets``: ``keys``, ``lo_ms``, ``hi_ms``, ``n`` (several points' buckets, cut alike or
    not); ``ranks``: ``keys`` and ``_k`` (1-based). The value lies in (``_lo``, ``_hi``].
    """

    def least_reaching(edge: str) -> ir.Table:
        g = buckets.group_by([*keys, edge]).aggregate(_c=buckets.n.sum())
        g = g.mutate(_cum=g._c.sum().over(ibis.cumulative_window(group_by=keys, order_by=g[edge])))
        j = g.inner_join(ranks, keys)
        j = j.filter(j._cum >= j._k)
        return j.group_by([*keys, "_k"]).aggregate(_e=j[edge].min())

    upper = least_reaching("hi_ms").rename(_hi="_e")
    lower = least_reaching("lo_ms").rename(_lo="_e")
    out = upper.inner_join(lower, [*keys, "_k"])
    return out.select(*keys, "_k", _lo=ibis.greatest(out._lo, 0.0), _hi=out._hi)


def window_buckets(tp: TermPoints, ev: MetricsEvidence) -> ir.Table:
    """Every kept point's buckets, with its window (``_w``)."""
    kept = tp.kept.select("point_id", "_w")
    return ev.buckets.inner_join(kept, "point_id").select("_w", "lo_ms", "hi_ms", "n")


def window_counts(tp: TermPoints) -> dict[str, tuple[int, int]]:
    """Per window: requests (observations) and points counted."""
    k = tp.kept
    agg = k.group_by("_w").aggregate(n=k["count"].sum(), points=k.count()).execute()
    return {
        str(w): (int(n or 0), int(p))
        for w, n, p in zip(agg["_w"], agg["n"], agg["points"], strict=True)
    }


def window_rank_bounds(
    tp: TermPoints, ev: MetricsEvidence, wanted: Mapping[str, tuple[int, ...]]
) -> dict[str, dict[int, tuple[float, float]]]:
    """Per window: each wanted 1-based rank's (lower, upper] bounds."""
    rows = [{"_w": w, "_k": k} for w, ks in wanted.items() for k in ks]
    if not rows:
        return {}
    ranks = ibis.memtable(rows, schema={"_w": "string", "_k": "int64"})
    got = rank_bounds(window_buckets(tp, ev), ["_w"], ranks).execute()
    out: dict[str, dict[int, tuple[float, float]]] = {}
    for w, k, lo, hi in zip(got["_w"], got["_k"], got["_lo"], got["_hi"], strict=True):
        out.setdefault(str(w), {})[int(k)] = (float(lo), float(hi))
    return out


def proven_within(tp: TermPoints, ev: MetricsEvidence, obj: OccurrenceObjective) -> dict[str, int]:
    """Per window: requests whose bucket proves them within the threshold (a lower bound
    proves none within an ``at_most`` threshold)."""
    b = window_buckets(tp, ev)
    t = obj.threshold
    if obj.direction is Direction.AT_LEAST:
        sure = b.lo_ms >= t
    elif tp.cover.relation is Relation.SAME:
        sure = b.hi_ms <= t
    else:
        return {}
    agg = b.group_by("_w").aggregate(good=ibis.ifelse(sure, b.n, 0).sum()).execute()
    return {str(w): int(g or 0) for w, g in zip(agg["_w"], agg["good"], strict=True)}


def slice_table(tp: TermPoints, ev: MetricsEvidence, obj: TimeSliceObjective) -> ir.Table:
    """One row per (window, slice) holding kept points whole: ``_n`` requests, ``_lo``, ``_hi``,
    ``_exact`` (the statistic is known, not bounded) and, when exact, ``_at``: the sign of the
    statistic minus the threshold in exact decimals (a mean of the points' sums in doubles
    rounds: sums of 66.8, 38.9 and 14.3 ms average 39.99999999999999, not 40)."""
    size = obj.slice_minutes * _US_PER_MINUTE
    k = tp.kept
    last = ibis.greatest(k.end_us - 1, k.start_us)
    k = k.mutate(_s=k.start_us // size, _s2=last // size)
    k = k.filter(k._s == k._s2)
    per = k.group_by(["_w", "_s"]).aggregate(
        _n=k["count"].sum(),
        _sum=k.sum_ms.sum(),
        _dsum=derive.exact_sum(k.sum_ms),
        _nosum=k.sum_ms.isnull().sum(),
    )
    b = ev.buckets.inner_join(k.select("point_id", "_w", "_s"), "point_id")
    if obj.statistic == "mean":
        g = b.group_by(["_w", "_s"]).aggregate(
            _blo=(b.n * ibis.greatest(b.lo_ms, 0.0)).sum(), _bhi=(b.n * b.hi_ms).sum()
        )
        j = per.inner_join(g, ["_w", "_s"])
        exact = j._nosum == 0
        mean = j._sum / j._n
        limit = derive.exact_total(obj.threshold, j._n)
        return j.select(
            "_w",
            "_s",
            "_n",
            _lo=ibis.ifelse(exact, mean, j._blo / j._n),
            _hi=ibis.ifelse(exact, mean, j._bhi / j._n),
            _exact=exact,
            _at=ibis.ifelse(
                exact, ibis.cases((j._dsum > limit, 1), (j._dsum < limit, -1), else_=0), None
            ).cast("int8"),
        )
    if obj.statistic == "min":
        ranks = per.select("_w", "_s", _k=ibis.literal(1, "int64"))
    else:
        q = _SLICE_PERCENTILES[obj.statistic]
        ranks = per.select("_w", "_s", _k=(per._n * q + 99) // 100)  # nearest rank: ⌈q·n/100⌉
    rb = rank_bounds(b.select("_w", "_s", "lo_ms", "hi_ms", "n"), ["_w", "_s"], ranks)
    j = per.inner_join(rb, ["_w", "_s"])
    return j.select(
        "_w", "_s", "_n", "_lo", "_hi", _exact=ibis.literal(False), _at=ibis.null("int8")
    )


def straddling_slices(tp: TermPoints, obj: TimeSliceObjective) -> dict[str, int]:
    """Per window: kept points set aside because they straddle a slice edge."""
    size = obj.slice_minutes * _US_PER_MINUTE
    k = tp.kept
    last = ibis.greatest(k.end_us - 1, k.start_us)
    bad = k.filter(k.start_us // size != last // size)
    agg = bad.group_by("_w").aggregate(n=bad.count()).execute()
    return {str(w): int(n) for w, n in zip(agg["_w"], agg["n"], strict=True)}


def widen(lo: float, hi: float, relation: Relation) -> tuple[float, float]:
    """Bounds on the metric's figure → bounds on the contracted figure."""
    if relation is Relation.LOWER:
        return lo, math.inf
    return lo, hi


def judge(
    lo: float,
    hi: float,
    exact: bool,
    direction: Direction,
    threshold: float,
    at_the_limit: AtTheLimit,
) -> bool | None:
    """Whether a statistic in (lo, hi] (``exact``: equal to hi) passes: True, False, or None
    when its bounds cannot tell."""
    inclusive = at_the_limit is AtTheLimit.WITHIN
    if exact:
        if direction is Direction.AT_MOST:
            return hi <= threshold if inclusive else hi < threshold
        return hi >= threshold if inclusive else hi > threshold
    if direction is Direction.AT_MOST:
        if hi <= threshold if inclusive else hi < threshold:
            return True
        return False if lo >= threshold else None
    if lo >= threshold:
        return True
    return False if (hi < threshold if inclusive else hi <= threshold) else None


def slice_judgements(
    per: ir.Table, obj: TimeSliceObjective, relation: Relation, at_the_limit: AtTheLimit
) -> ir.Table:
    """Per window: slices with data, and those proven passing and proven failing."""
    hi = per._hi if relation is Relation.SAME else ibis.literal(math.inf)
    lo, t = per._lo, obj.threshold
    inclusive = at_the_limit is AtTheLimit.WITHIN
    # an exact figure is tested by its sign against the limit (``_at``, from exact decimals);
    # under a lower-bound relation the contracted figure is ≥ it (not >), so the limit itself
    # decides as the contract reads it
    at = per._at
    if obj.direction is Direction.AT_MOST:
        exact_pass = (at <= 0 if inclusive else at < 0).fill_null(False)
        bounded_pass = hi <= t if inclusive else hi < t
        bounded_fail = ibis.ifelse(per._exact, ~exact_pass, lo >= t)
    else:
        exact_pass = (at >= 0 if inclusive else at > 0).fill_null(False)
        bounded_pass = ibis.ifelse(per._exact, exact_pass, lo >= t)
        bounded_fail = hi < t if inclusive else hi <= t
    exact = per._exact & (relation is Relation.SAME)
    passes = ibis.ifelse(exact, exact_pass, bounded_pass)
    fails = ibis.ifelse(exact, ~exact_pass, bounded_fail)
    data = per._n >= obj.min_calls_per_slice
    return per.group_by("_w").aggregate(
        total=data.sum(),
        passing=(data & passes).sum(),
        failing=(data & fails).sum(),
        empty=(~data).sum(),
    )


@dataclass(frozen=True, slots=True)
class PercentileFigures:
    """What the metrics say of an occurrence term in one window: the requests counted, the
    statistic's bounds, and whether those prove it passing."""

    requests: int
    #: the bound that decides (the upper when it proves an ``at_most`` term met, …); None
    #: without requests
    observed: float | None
    #: the statistic proven within the threshold (True), beyond it (False), or neither (None,
    #: also without requests)
    passes: bool | None
    #: requests whose bucket proves them within the threshold
    good: int
    notes: tuple[Message, ...]
    #: points left out, by reason (``Aside``)
    aside: dict[str, int]
    details: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SliceFigures:
    """What the metrics say of a time-slice term in one window: slices with data, and those
    their bounds prove passing and failing."""

    slices: int
    passing: int
    failing: int
    #: the proven-passing share (%); None without slices
    observed: float | None
    notes: tuple[Message, ...]
    #: points left out, by reason (``Aside``)
    aside: dict[str, int]
    details: dict[str, Any]


def _finite(x: float) -> float | None:
    return None if math.isinf(x) else x


def percentile_figures(
    tp: TermPoints, ev: MetricsEvidence, obj: OccurrenceObjective, at_the_limit: AtTheLimit
) -> dict[str, PercentileFigures]:
    """Per window label: the bounds the kept points' buckets put on the contracted percentile."""
    counts = window_counts(tp)
    ranks = {
        w: percentile_rank(n, obj.percentile, obj.method, obj.direction)
        for w, (n, _) in counts.items()
        if n > 0
    }
    bounds = window_rank_bounds(tp, ev, {w: r.ranks for w, r in ranks.items()})
    proven = proven_within(tp, ev, obj)
    out: dict[str, PercentileFigures] = {}
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
            out[w] = PercentileFigures(0, None, None, 0, (), aside, details)
            continue
        rank = ranks[w]
        b = bounds[w]
        lo, hi = b[rank.ranks[0]]
        if len(rank.ranks) == 2:
            lo2, hi2 = b[rank.ranks[1]]
            f = rank.fraction
            lo, hi = (
                interpolate(lo, lo2, f),
                (math.inf if math.isinf(hi) or math.isinf(hi2) else interpolate(hi, hi2, f)),
            )
        lo, hi = widen(lo, hi, tp.cover.relation)
        passes = judge(lo, hi, False, obj.direction, obj.threshold, at_the_limit)
        details.update(
            {"ranks": list(rank.ranks), "lower": lo, "upper": _finite(hi), **rank.details}
        )
        metric = tp.cover.metric
        note = (
            MetricsSays.LOWER_ONLY(metric=metric, n=n, lower=lo)
            if math.isinf(hi)
            else MetricsSays.BOUNDS(metric=metric, n=n, lower=lo, upper=hi)
        )
        at_most = obj.direction is Direction.AT_MOST
        observed = hi if (passes is True) == at_most and not math.isinf(hi) else lo
        # the figure shown is a bound, never the statistic itself: the statistic lies in
        # (lower, upper], so above a lower bound, at or below an upper one
        details["observed_is"] = "upper_bound" if observed == hi else "lower_bound"
        good = proven.get(w, 0)
        out[w] = PercentileFigures(n, observed, passes, good, (note,), aside, details)
    return out


def slice_figures(
    tp: TermPoints, ev: MetricsEvidence, obj: TimeSliceObjective, at_the_limit: AtTheLimit
) -> dict[str, SliceFigures]:
    """Per window label: the slices the kept points hold whole, and which their bounds decide."""
    per = slice_table(tp, ev, obj)
    judged = slice_judgements(per, obj, tp.cover.relation, at_the_limit).execute()
    straddling = straddling_slices(tp, obj)
    rows = {str(r["_w"]): r for r in judged.to_dict("records")}
    out: dict[str, SliceFigures] = {}
    for w in set(rows) | set(tp.aside) | set(straddling):
        aside = dict(tp.aside.get(w, {}))
        if straddling.get(w):
            aside[str(Aside.STRADDLES_SLICE)] = straddling[w]
        row = rows.get(w, {})
        total = int(row.get("total") or 0)
        passing = int(row.get("passing") or 0)
        failing = int(row.get("failing") or 0)
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
        notes: tuple[Message, ...] = ()
        if total:
            observed = 100.0 * passing / total
            notes = (
                MetricsSays.SLICE_BOUNDS(
                    metric=tp.cover.metric,
                    total=total,
                    minutes=obj.slice_minutes,
                    passing=passing,
                    failing=failing,
                    unknown=total - passing - failing,
                    low=observed,
                    high=100.0 * (total - failing) / total,
                ),
            )
        out[w] = SliceFigures(total, passing, failing, observed, notes, aside, details)
    return out


def unapplied_exclusions(contract: Contract) -> list[str]:
    """Per-call exclusions the contract states that a histogram cannot apply."""
    ex = contract.exclusions
    out = []
    if ex.max_input_tokens is not None:
        out.append("long_input")
    if ex.downgraded_service_tiers:
        out.append("downgraded_tier")
    if ex.customer_errors:
        out.append("customer_error")
    return out


def coverage_rows(contract: Contract, ev: MetricsEvidence) -> list[dict[str, Any]]:
    """Per latency term: whether the metrics cover it, with which metric and how."""
    rows: list[dict[str, Any]] = []
    for term in contract.latency:
        found, why = cover(term)
        row: dict[str, Any] = {
            "term": term.id,
            "point": str(term.measurement_point),
            "metric": None if found is None else found.metric,
            "relation": None if found is None else str(found.relation),
            "points_in_scope": 0,
        }
        if found is None:
            row["covered"] = False
            row["message"] = why
        else:
            p = ev.points
            n = int(
                p.filter((p.metric == found.metric) & derive.scoped(p, contract, term))
                .count()
                .execute()
            )
            row["points_in_scope"] = n
            row["covered"] = n > 0
            said = (
                MetricsSays.COVERED_SAME
                if found.relation is Relation.SAME
                else MetricsSays.COVERED_LOWER
            )
            row["message"] = (
                said(metric=found.metric, points=n)
                if n
                else MetricsSays.NO_POINTS(metric=found.metric)
            )
        rows.append(row)
    return rows


__all__ = [
    "COVERS",
    "Aside",
    "Cover",
    "Evidence",
    "MetricsEvidence",
    "MetricsSays",
    "PercentileFigures",
    "Relation",
    "SliceFigures",
    "TermPoints",
    "cover",
    "coverage_rows",
    "judge",
    "percentile_figures",
    "rank_bounds",
    "slice_figures",
    "slice_judgements",
    "slice_table",
    "straddling_slices",
    "term_points",
    "unapplied_exclusions",
    "widen",
    "window_counts",
    "window_rank_bounds",
]
