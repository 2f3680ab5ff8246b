"""The bench's hand-written SQL baseline for the whole demo contract (``bench/baseline.py``) and
slacheck agree on a small generated trace, figure by figure, so the baseline the bench compares
with cannot drift from what the checks count."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bench.baseline import KINDS, compare, figures, slacheck_figures
from slacheck.contract.load import load_contract
from slacheck.evaluation import evaluate
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest

DEMO = Path(__file__).resolve().parents[1] / "slacheck/contract/starters/demo.yaml"


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    """The baseline's figures and slacheck's on one trace: about 60 k spans over 40 days, which
    gives every term kind figures in two months (peak minutes, routing events, throttling,
    maintenance and cache-hit exclusions, failed tasks)."""
    path = tmp_path_factory.mktemp("bench") / "traffic.parquet"
    write(generate(TrafficProfile(tasks=2500, days=40, seed=7)), path, "parquet")
    traces = ingest([str(path)])
    ev = evaluate(load_contract(DEMO), traces)
    mine = slacheck_figures([r.to_dict() for r in ev.results], traces.quality.to_dict())
    con = duckdb.connect()
    try:
        sql = figures(con, f"'{path}'")
    finally:
        con.close()
    return sql, mine


def test_the_baseline_counts_what_slacheck_counts(
    both: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    sql, mine = both
    assert set(sql) == set(mine) == {"ingestion", *KINDS}
    assert compare(sql, mine) == []


def test_the_trace_exercises_every_figure(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Not a comparison of zeros: the figures a term kind turns on are there."""
    sql, _ = both
    assert len(sql["availability"]) >= 2
    lat = sql["latency"]
    assert set(lat) == {"L1-task-p95", "L2-ttft-p95", "L3-server-p99", "L4-tps"}
    for w in sql["availability"]:
        assert lat["L1-task-p95"][w]["failed"] > 0
        assert lat["L2-ttft-p95"][w]["exact"] < lat["L2-ttft-p95"][w]["total"]  # a stand-in
        assert "cache_hit" in lat["L2-ttft-p95"][w]["excluded"]
        assert lat["L4-tps"][w]["total"] > 0
        r, p = sql["regions"][w], sql["peak"][w]
        assert r["routed_at_peak"] > 0 and r["disallowed"] > 0 and r["outside"]
        assert p["peak_minutes"] > 0 and 0 < p["good"] < p["total"] and p["other_at_peak"] > 0
        assert sql["rate_limit"][w]["throttled"] > 0
        a = sql["availability"][w]
        assert a["failed"] > 0 and a["timeout_calls"] > 0
    # Sunday 02:00-04:00 is quiet: some month has a call in it
    assert any("maintenance" in w["excluded"] for w in lat["L2-ttft-p95"].values())


def test_a_changed_figure_is_a_difference(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    sql, mine = both
    w = min(mine["peak"])
    other = copy.deepcopy(mine)
    other["peak"][w]["good"] += 1
    other["latency"]["L2-ttft-p95"][w]["excluded"]["maintenance"] += 1
    other["ingestion"]["orphans"] = 1
    assert compare(sql, other) == [
        "/ingestion/orphans: hand SQL 0, slacheck 1",
        f"/latency/L2-ttft-p95/{w}/excluded: hand SQL "
        f"{sql['latency']['L2-ttft-p95'][w]['excluded']!r}, slacheck "
        f"{other['latency']['L2-ttft-p95'][w]['excluded']!r}",
        f"/peak/{w}/good: hand SQL {sql['peak'][w]['good']}, slacheck {other['peak'][w]['good']}",
    ]


@pytest.mark.parametrize(
    ("cpus", "median"),
    [([3.0], 3.0), ([5.0, 1.0, 3.0], 3.0), ([4.0, 2.0], 2.0), ([9.0, 7.0, 8.0, 1.0, 2.0], 7.0)],
)
def test_a_repeated_step_reports_its_median_run(cpus: list[float], median: float) -> None:
    """``SLACHECK_BENCH_REPEAT``: the run reported is the one of median CPU (the lower middle
    of an even count), whole, with the lowest and highest CPU of all the runs."""
    from bench.demo import median_run

    runs = [{"cpu_seconds": c, "seconds": c / 2, "tag": i} for i, c in enumerate(cpus)]
    got = median_run(runs)
    assert got["cpu_seconds"] == median
    assert got["seconds"] == median / 2 and got["tag"] == cpus.index(median)
    assert got["spread"] == (min(cpus), max(cpus)) and got["runs"] == len(cpus)
