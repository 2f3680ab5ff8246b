"""Fused figures equal the straightforward ones (issue 27).

The peak check computes its counts, three percentiles and its examples from one grouped pass
and one narrow pass (``metering.fused``), the rate-limit check its figures from the calls
grouped per task; here both are compared with a plain computation (sort, pandas) of the same
figures from the same calls, and the fused order statistics with sorting, on DuckDB and Spark.
"""

from __future__ import annotations

import math
import random
import tempfile
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slacheck.checks.peak import peak
from slacheck.checks.ratelimit import rate_limit
from slacheck.contract.model import Window
from slacheck.metering.context import CheckContext
from slacheck.metering.fused import Statistic, counted_long, nearest_ranks
from slacheck.metering.rank import bucket, nearest_rank_by_window
from slacheck.metering.windowed import scoped_calls
from slacheck.verdict import MAX_EXAMPLES, Verdict
from tests.test_check_others import make_contract, write_traces


def _nearest(xs: list[float], percentile: float) -> float | None:
    """The nearest-rank percentile by sorting, k = ceil(p·n/100) in exact decimals."""
    xs = sorted(xs)
    if not xs:
        return None
    k = int((Decimal(repr(percentile)) * len(xs) / 100).to_integral_value(ROUND_CEILING))
    return xs[max(k, 1) - 1]


# ---------------------------------------------------------------------------------------------
# fused order statistics: several statistics, one grouped count and one narrow pass

_VALUES = st.one_of(
    st.none(),
    st.sampled_from([0.0, 1.0, 1.5, 2.0, 1e17, -1e17, -0.5]),
    st.floats(-50, 500, allow_nan=False),
)
_ROW = st.tuples(st.sampled_from("ab"), st.booleans(), st.booleans(), _VALUES, _VALUES)


def _probe(rows: list[tuple[Any, ...]]) -> pa.Table:
    w, f, g, x, y = (list(c) for c in zip(*rows, strict=True)) if rows else ([],) * 5
    return pa.table(
        {
            "window": pa.array(w, pa.string()),
            "f": pa.array(f, pa.bool_()),
            "g": pa.array(g, pa.bool_()),
            "x": pa.array(x, pa.float64()),
            "y": pa.array(y, pa.float64()),
        }
    )


_STATS = {
    "x_f": Statistic("f", "x"),
    "x_not_f": Statistic("nf", "x"),
    "y_g": Statistic("g", "y"),
}


def _fused(t: Any, percentile: float) -> tuple[dict[str, dict[str, float]], set[tuple[Any, ...]]]:
    """The three statistics through ``fused``, counted the way the peak check counts them (one
    grouped pass over the keys, then per statistic), and the rows kept where ``g`` and not
    ``f``."""
    t = t.mutate(nf=~t.f, keep=t.g & ~t.f, i=t.x)
    g = t.group_by(
        ["window", "f", "g", bucket(t.x).name("_bx"), bucket(t.y).name("_by")]
    ).aggregate(n=t.count())
    parts = {
        "x_f": g.filter(g.f).select("window", _b=g._bx, _n=g.n),
        "x_not_f": g.filter(~g.f).select("window", _b=g._bx, _n=g.n),
        "y_g": g.filter(g.g).select("window", _b=g._by, _n=g.n),
    }
    counted = counted_long(
        {
            k: p.filter(p._b.notnull()).group_by(["window", "_b"]).aggregate(_n=p._n.sum())
            for k, p in parts.items()
        }
    )
    got, kept = nearest_ranks(t, _STATS, counted, percentile, keep="keep", columns=["g", "f"])
    rows = kept.filter(kept.keep).to_pyarrow().to_pylist()
    return got, {(r["window"], r["x"], r["y"]) for r in rows}


def _truth(rows: list[tuple[Any, ...]], percentile: float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, pick in (
        ("x_f", lambda r: r[3] if r[1] else None),
        ("x_not_f", lambda r: r[3] if not r[1] else None),
        ("y_g", lambda r: r[4] if r[2] else None),
    ):
        for w in "ab":
            v = _nearest([x for r in rows if r[0] == w and (x := pick(r)) is not None], percentile)
            if v is not None:
                out.setdefault(name, {})[w] = v
    return out


def _kept_truth(rows: list[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    return {(r[0], r[3], r[4]) for r in rows if r[2] and not r[1]}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(_ROW, max_size=60),
    percentile=st.sampled_from([1.0, 50.0, 95.0, 99.9, 100.0, 33.333]),
)
def test_fused_nearest_ranks_are_the_sorted_values(
    rows: list[tuple[Any, ...]], percentile: float
) -> None:
    import ibis

    got, kept = _fused(ibis.memtable(_probe(rows)), percentile)
    assert got == _truth(rows, percentile)
    assert kept == _kept_truth(rows)


@pytest.mark.spark
def test_fused_nearest_ranks_on_spark_are_the_sorted_values(spark_backend: Any) -> None:
    rng = random.Random(5)
    values = [None, 1e17, -1e17, 2.0, 2.5]
    rows = [
        (
            rng.choice("ab"),
            rng.random() < 0.3,
            rng.random() < 0.5,
            rng.choice([*values, rng.uniform(-5, 300)]),
            rng.choice([*values, float(rng.randint(0, 9))]),
        )
        for _ in range(300)
    ]
    t = spark_backend.create_table("slacheck_fused_probe", _probe(rows).to_pandas(), overwrite=True)
    for percentile in (50.0, 95.0, 99.9):
        got, kept = _fused(t, percentile)
        assert got == _truth(rows, percentile)
        assert kept == _kept_truth(rows)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(
        st.tuples(
            st.sampled_from("ab"),
            st.one_of(
                st.none(),
                st.integers(-20, 40),
                st.sampled_from([10**15, 3 * 10**15, -(10**15), -(4 * 10**15)]),
            ),
        ),
        max_size=50,
    ),
    percentile=st.sampled_from([1.0, 50.0, 95.0, 100.0]),
)
def test_an_integer_columns_nearest_rank_is_the_sorted_value(
    data: list[tuple[str, int | None]], percentile: float
) -> None:
    """An integer's bucket is itself (one query), unless clipped (then ranked as any value)."""
    import ibis

    t = ibis.memtable(
        pa.table({"w": [w for w, _ in data], "n": pa.array([n for _, n in data], pa.int64())})
    )
    want = {}
    for w in "ab":
        v = _nearest([n for x, n in data if x == w and n is not None], percentile)
        if v is not None:
            want[w] = float(v)
    assert nearest_rank_by_window(t, "w", "n", percentile) == want


# ---------------------------------------------------------------------------------------------
# the peak and rate-limit checks against pandas on the same calls

CONTRACT = {
    "peak": {
        "definition": {"kind": "request_rate", "requests_per_minute": 2},
        "degradation": {"queue": {"max_wait_ms": 500}},
    },
    "rate_limit": {"basis": "per_request", "limit": 3, "period": "minute"},
}
_CALL = st.fixed_dictionaries(
    {
        "task_id": st.sampled_from(["t1", "t2", "t3", "t4", "t5", "t6", "t7"]),
        "minute": st.integers(0, 5),
        "second": st.integers(0, 59),
        "status": st.sampled_from(["ok", "ok", "error", "throttled", "timeout", None]),
        "response_model": st.sampled_from([None, "gpt-4o", "gpt-4o-mini"]),
        "queue_ms": st.sampled_from([None, 10.0, 400.0, 500.0, 900.0, 2500.5]),
        "duration_ms": st.sampled_from([600.0, 700.25, 2600.0, 3000.0, 1e6]),
        "response_cached": st.sampled_from([None, False, True]),
    }
)


def _rows(drawn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    edge = 1785542280_000_000  # 2026-07-31T23:58:00Z: the drawn minutes cross a month edge
    for i, d in enumerate(drawn):
        start = edge + (d["minute"] * 60 + d["second"]) * 1_000_000
        out.append(
            {
                "task_id": d["task_id"],
                "span_id": f"s{i}",
                "kind": "llm",
                "start_us": start,
                "end_us": start + round(d["duration_ms"] * 1000),
                "duration_ms": d["duration_ms"],
                "status": d["status"],
                "request_model": "gpt-4o",
                "response_model": d["response_model"],
                "provider": "openai",
                "queue_ms": d["queue_ms"],
                "response_cached": d["response_cached"],
            }
        )
    return out


def _calls(ctx: CheckContext) -> pd.DataFrame:
    """The in-scope calls of the month windows with what the checks derive per call, as read
    by the engine (the derivation is not what is compared here)."""
    c = scoped_calls(ctx, ctx.windows(Window.CALENDAR_MONTH))
    return c.select(
        "window", "task_id", "start_us", "duration_ms", "queue_ms", "state", "status",
        "served_model", "requested", "response_cached",
    ).to_pandas()  # fmt: skip


def _peak_truth(df: pd.DataFrame) -> dict[str, tuple[dict[str, Any], tuple[str, ...]]]:
    df = df.assign(minute=df.start_us // 60_000_000)
    per_minute = df.groupby("minute").size()
    df["ap"] = df.minute.isin(per_minute[per_minute > 2].index)
    df["other"] = df.served_model.notna() & df.requested.notna() & (df.served_model != df.requested)
    df["cached"] = df.response_cached.fillna(False).astype(bool)
    df["ok"] = df.state.isin(["ok", "cached", "unknown"])
    known = df.queue_ms.notna()
    obs = known | df.other | df.cached
    complies = (~known | (df.queue_ms <= 500)) & ~df.other & ~df.cached
    out = {}
    for w, g in df.groupby("window"):
        ap, gk, go, gc = g.ap, known[g.index], obs[g.index], complies[g.index]
        at = g[ap]

        def p95(s: pd.Series) -> float | None:
            return _nearest([float(x) for x in s.dropna()], 95)

        bad = at[(go & ~gc)[ap]]
        worst = bad.groupby("task_id").queue_ms.max().reset_index()
        worst = worst.sort_values(
            ["queue_ms", "task_id"], ascending=[False, True], na_position="last"
        )
        q_known = int((ap & gk).sum())
        details = {
            "calls": len(g),
            "peak_minutes": int(at.minute.nunique()),
            "calls_at_peak": int(ap.sum()),
            "p95_ms_at_peak": p95(at[at.ok].duration_ms),
            "p95_ms_off_peak": p95(g[~ap & g.ok].duration_ms),
            "other_model_at_peak": int((ap & g.other).sum()),
            "other_model_off_peak": int((~ap & g.other).sum()),
            "cached_at_peak": int((ap & g.cached).sum()),
            "cached_off_peak": int((~ap & g.cached).sum()),
            "queue_recorded_at_peak": q_known,
            "queue_p95_ms_at_peak": p95(at.queue_ms),
            "queue_max_ms_at_peak": float(at.queue_ms.max()) if q_known else None,
        }
        out[str(w)] = (details, tuple(worst.task_id[:MAX_EXAMPLES]))
    return out


def _rate_truth(df: pd.DataFrame) -> dict[str, tuple[dict[str, Any], tuple[str, ...]]]:
    per_minute = df.groupby(df.start_us // 60_000_000).size()
    over = set(per_minute[per_minute > 3].index)
    thr = df.status == "throttled"
    under = thr & ~(df.start_us // 60_000_000).isin(over)
    out = {}
    for w, g in df.groupby("window"):
        tasks = g.groupby("task_id").size()
        ex = sorted(set(g.task_id[under[g.index]]))[:MAX_EXAMPLES]
        details = {
            "throttled_calls": int(thr[g.index].sum()),
            "throttled_under_limit": int(under[g.index].sum()),
            "throttled_undecided": 0,
            "tasks": len(tasks),
            "requests_per_task_mean": round(float(tasks.mean()), 3),
            "requests_per_task_p95": float(_nearest([float(n) for n in tasks], 95) or 0),
        }
        out[str(w)] = (details, tuple(ex))
    return out


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(drawn=st.lists(_CALL, min_size=1, max_size=40))
def test_peak_and_rate_limit_figures_are_a_plain_computations(
    drawn: list[dict[str, Any]],
) -> None:
    contract = make_contract(CONTRACT, "UTC")
    with tempfile.TemporaryDirectory() as folder:
        ctx = CheckContext(contract, write_traces(_rows(drawn), Path(folder)))
        df = _calls(ctx)
        for results, truth in ((peak(ctx), _peak_truth(df)), (rate_limit(ctx), _rate_truth(df))):
            for r in results:
                if r.verdict is Verdict.NO_DATA and r.window not in truth:
                    continue
                details, examples = truth[r.window]
                for k, v in details.items():
                    got = r.details[k]
                    assert got == v or (
                        isinstance(v, float) and math.isclose(got, v, rel_tol=1e-12)
                    ), (r.term_id, r.window, k, got, v)
                if r.verdict in (Verdict.BREACHED, Verdict.INDETERMINATE):
                    assert r.examples == examples, (r.term_id, r.window)
