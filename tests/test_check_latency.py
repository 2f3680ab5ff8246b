"""The latency check: data-driven cases per behaviour, the percentile arithmetic, and invariants."""

# tests/cases/evaluate/latency_*.yaml hold the behaviour cases: a minimal contract (the identity
# block is filled in when omitted), a handful of canonical trace rows, an optional `period`, and
# the expected result for every (term, window) the check reports. A row gives `start` as an ISO
# string and either `end` or `ms`; `repeat: N` with `every: seconds` expands it into N rows whose
# string fields may use `{i}`. Unlisted row fields are null, except kind (llm) and status (ok).

from __future__ import annotations

import datetime as dt
import io
import math
import random
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from slacheck.checks import CHECKS
from slacheck.checks.latency import Bound, check_term, decide, latency, percentile_rank
from slacheck.contract.criterion import Comparison
from slacheck.contract.load import load_contract_text
from slacheck.contract.model import Contract, Direction, PercentileMethod
from slacheck.messages import render
from slacheck.metering.context import CheckContext
from slacheck.trace import schema
from slacheck.trace.ingest import ingest
from slacheck.verdict import MAX_EXAMPLES, TermResult, Verdict
from slacheck.windows import parse_period
from tests.wording import assert_worded, result_messages

CASES = Path(__file__).resolve().parent / "cases" / "evaluate"
IDENTITY = {
    "id": "T-1",
    "vendor": "Example Cloud",
    "customer": "Example Customer",
    "effective": {"start": "2026-01-01"},
}
_RESULT_KEYS = {
    "term",
    "window",
    "verdict",
    "good",
    "total",
    "observed",
    "unit",
    "measured_at",
    "excluded",
    "examples",
    "notes",
    "notes_contain",
    "details",
    "partial_window",
    "criterion",
}


# ---------------------------------------------------------------------------------------------
# Helpers: contract and trace rows in, results out


def _us(text: str) -> int:
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise ValueError(f"timestamp {text!r} needs a zone (Z or +hh:mm)")
    return int(when.timestamp()) * 1_000_000 + when.microsecond


def _expand(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for row in rows:
        n, every = int(row.get("repeat", 1)), float(row.get("every", 0))
        for i in range(n):
            r = {k: v for k, v in row.items() if k not in ("repeat", "every")}
            r = {k: v.format(i=i) if isinstance(v, str) else v for k, v in r.items()}
            start = _us(str(r.pop("start"))) + round(i * every * 1_000_000)
            end = _us(str(r.pop("end"))) if "end" in r else start + round(float(r.pop("ms")) * 1000)
            out.append({**r, "start_us": start, "end_us": end})
    return out


def trace_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Canonical rows (dicts) → a conformed canonical table; span ids default to s<n>."""
    expanded = _expand(rows)
    unknown = {k for r in expanded for k in r} - set(schema.COLUMN_NAMES)
    if unknown:
        raise ValueError(f"not canonical columns: {sorted(unknown)}")
    cols: dict[str, list[Any]] = {name: [] for name in schema.COLUMN_NAMES}
    for n, r in enumerate(expanded):
        r = {"kind": "llm", "status": "ok", "span_id": f"s{n}", **r}
        r.setdefault("duration_ms", (r["end_us"] - r["start_us"]) / 1000.0)
        r.setdefault("source_ref", f"row {n + 1}")
        for name in schema.COLUMN_NAMES:
            cols[name].append(r.get(name))
    return schema.conform(pa.table(cols, schema=schema.ARROW_SCHEMA))


def contract_of(data: dict[str, Any] | None, where: str = "<case>") -> Contract:
    """Through the real loader (YAML text in), so a bad case names its file and field."""
    doc = dict(data or {})
    doc["contract"] = {**IDENTITY, **doc.get("contract", {})}
    buf = io.StringIO()
    YAML(typ="safe").dump(doc, buf)
    return load_contract_text(buf.getvalue(), where)


def run(
    contract: Contract, table: pa.Table, tmp_path: Path, period: str | None = None, name: str = "t"
) -> list[TermResult]:
    path = tmp_path / f"{name}.parquet"
    pq.write_table(table, path)
    traces = ingest([path])
    window = parse_period(period, contract.zone) if period else None
    return latency(CheckContext(contract, traces, period=window))


# ---------------------------------------------------------------------------------------------
# Data-driven cases


def _case_files() -> list[Path]:
    return sorted(CASES.glob("latency_*.yaml"))


def _cases() -> Iterator[Any]:
    for path in _case_files():
        doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{path.stem}-{case['name']}")


def _check(got: TermResult, want: dict[str, Any]) -> None:
    assert set(want) <= _RESULT_KEYS, f"unknown expectation keys {set(want) - _RESULT_KEYS}"
    assert str(got.verdict) == want["verdict"], got
    for key in ("good", "total", "unit", "measured_at", "partial_window", "criterion"):
        if key in want:
            assert getattr(got, key) == want[key], f"{key}: {getattr(got, key)!r} ({got})"
    if "observed" in want:
        if want["observed"] is None:
            assert got.observed is None
        else:
            assert got.observed == pytest.approx(want["observed"], rel=1e-9), got
    if "excluded" in want:
        assert got.excluded == want["excluded"]
    if "examples" in want:
        assert list(got.examples) == want["examples"]
    if "notes" in want:
        assert [n.text for n in got.notes] == want["notes"]
    # notes are messages: a case matches on their English rendering
    texts = [n.text for n in got.notes]
    for text in want.get("notes_contain", []):
        assert any(text in note for note in texts), f"{text!r} not in {texts}"
    for key, value in (want.get("details") or {}).items():
        assert got.details.get(key) == value, f"details[{key}] = {got.details.get(key)!r}"


@pytest.mark.parametrize("case", list(_cases()))
def test_case(case: dict[str, Any], tmp_path: Path) -> None:
    contract = contract_of(case["contract"], case["name"])
    results = run(contract, trace_table(case["rows"]), tmp_path, case.get("period"))
    assert_worded(result_messages(results))  # in both languages, as its readers get them
    got = {(r.term_id, r.window): r for r in results}
    want = {(str(w["term"]), str(w["window"])): w for w in case["expect"]}
    assert sorted(got) == sorted(want), "the (term, window) results differ from the expected ones"
    for key, expectation in want.items():
        _check(got[key], expectation)
        _assert_consistent(got[key], contract)


def test_there_are_cases_for_every_verdict() -> None:
    seen: set[str] = set()
    for param in _cases():
        seen |= {str(w["verdict"]) for w in param.values[0]["expect"]}
    assert seen == {str(v) for v in Verdict}


def _assert_consistent(r: TermResult, contract: Contract) -> None:
    """The invariants every result keeps: good ≤ total; the verdict agrees with the figure."""
    assert 0 <= r.good <= r.total
    assert len(r.examples) <= MAX_EXAMPLES
    term = next(t for t in contract.latency if t.id == r.term_id)
    obj = term.objective
    if r.verdict in (Verdict.MET, Verdict.BREACHED):
        assert r.observed is not None
        if obj.kind == "occurrence":
            # the contract's reading of a figure exactly at the limit decides there
            reading = contract.readings.at_the_limit
            ok = Comparison.of(obj.direction, reading).holds(r.observed, obj.threshold)
            assert ok == (r.verdict is Verdict.MET), r
            if obj.method is PercentileMethod.NEAREST_RANK and r.measured_at:
                assert (r.good >= r.details["k"]) == ok, r
        else:
            assert (r.observed >= obj.slices_passing_percent) == (r.verdict is Verdict.MET), r
    if r.verdict is Verdict.MET:
        assert r.examples == ()


# ---------------------------------------------------------------------------------------------
# The arithmetic


def test_registered() -> None:
    assert CHECKS["latency"] is latency


@pytest.mark.parametrize(
    ("n", "p", "rank", "k"),
    [(20, 95, 19, 19), (10, 95, 10, 10), (100, 99, 99, 99), (1, 50, 1, 1), (7, 99.9, 7, 7)],
)
def test_nearest_rank_at_most(n: int, p: float, rank: int, k: int) -> None:
    r = percentile_rank(n, p, PercentileMethod.NEAREST_RANK, Direction.AT_MOST)
    assert r.ranks == (rank,)
    assert r.details["k"] == k


def test_nearest_rank_at_least_counts_from_the_top() -> None:
    # 99 % of 100 values ≥ threshold: the 99th largest (rank 2) must reach it, one may fall short
    r = percentile_rank(100, 99, PercentileMethod.NEAREST_RANK, Direction.AT_LEAST)
    assert r.ranks == (2,)
    assert r.details["good_needed"] == 99


def test_linear_interpolates_between_order_statistics() -> None:
    r = percentile_rank(5, 90, PercentileMethod.LINEAR, Direction.AT_MOST)
    assert r.ranks == (4, 5)
    assert r.value({4: 400.0, 5: 1000.0}) == pytest.approx(760.0)
    exact = percentile_rank(5, 50, PercentileMethod.LINEAR, Direction.AT_MOST)
    assert exact.ranks == (3,)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(2, 2000),
    percentile=st.sampled_from([50, 75, 90, 95, 99, 99.9, 33.3]),
    lo_us=st.integers(0, 10**9),
    gap_us=st.integers(0, 10**9),
    direction=st.sampled_from(list(Direction)),
)
def test_linear_is_the_exact_interpolation_rounded_once(
    n: int, percentile: float, lo_us: int, gap_us: int, direction: Direction
) -> None:
    """Figures in ms to the µs (as the trace gives them): the interpolated percentile is the
    double nearest the exact value, so one exactly at a limit is the limit itself."""
    from fractions import Fraction

    r = percentile_rank(n, percentile, PercentileMethod.LINEAR, direction)
    lo, hi = Fraction(lo_us, 1000), Fraction(lo_us + gap_us, 1000)
    stats = {r.ranks[0]: float(lo)}
    if len(r.ranks) == 2:
        stats[r.ranks[1]] = float(hi)
    q = (
        Fraction(str(percentile))
        if direction is Direction.AT_MOST
        else 100 - Fraction(str(percentile))
    )
    h = (n - 1) * q / 100
    exact = lo + (h - int(h)) * (hi - lo)
    assert r.value(stats) == float(exact)


@pytest.mark.parametrize(
    ("passes", "bound", "direction", "verdict"),
    [
        (True, None, Direction.AT_MOST, Verdict.MET),
        (False, None, Direction.AT_MOST, Verdict.BREACHED),
        (True, Bound.UPPER, Direction.AT_MOST, Verdict.MET),
        (False, Bound.UPPER, Direction.AT_MOST, Verdict.INDETERMINATE),
        (True, Bound.LOWER, Direction.AT_LEAST, Verdict.MET),
        (False, Bound.LOWER, Direction.AT_LEAST, Verdict.INDETERMINATE),
        (False, Bound.UPPER, Direction.AT_LEAST, Verdict.BREACHED),
        (True, Bound.UPPER, Direction.AT_LEAST, Verdict.INDETERMINATE),
    ],
)
def test_a_bound_proves_one_side_only(
    passes: bool, bound: Bound | None, direction: Direction, verdict: Verdict
) -> None:
    assert decide(passes, bound, direction) is verdict


def test_criterion_text(tmp_path: Path) -> None:
    contract = contract_of(
        {
            "latency": [
                {
                    "id": "L1",
                    "measurement_point": "full_response",
                    "min_samples": 1000,
                    "objective": {"kind": "occurrence", "percentile": 95, "threshold": 500},
                },
                {
                    "id": "T1",
                    "measurement_point": "output_tokens_per_second",
                    "tokens_per_second_basis": "after_first_token",
                    "objective": {
                        "kind": "time_slice",
                        "slice_minutes": 5,
                        "threshold": 50,
                        "slices_passing_percent": 99,
                    },
                },
            ]
        }
    )
    rows = [{"task_id": "a", "start": "2026-07-01T00:00:00Z", "ms": 100, "output_tokens": 10}]
    by_id = {r.term_id: r for r in run(contract, trace_table(rows), tmp_path)}
    assert by_id["L1"].criterion == (
        "p95 of full response time ≤ 500 ms (nearest rank), answered calls in scope (≥ 1,000 calls)"
    )
    # the same criterion in Chinese, from the catalogue, numbers in the locale's form
    assert render(by_id["L1"].criterion_message, "zh") == (
        "完整响应时间的 p95 ≤ 500 毫秒（最近秩法），统计对象：范围内已应答的调用"
        "（至少 1,000 次调用）"
    )
    assert by_id["T1"].criterion.startswith(
        "p50 of output speed (tokens per second) after the first token ≥ 50 tokens/s in ≥ 99 % of "
        "5-minute slices"
    )


def test_no_traces_in_period_gives_no_data_for_each_month(tmp_path: Path) -> None:
    contract = contract_of(
        {
            "latency": [
                {
                    "id": "L1",
                    "measurement_point": "full_response",
                    "objective": {"kind": "occurrence", "percentile": 95, "threshold": 500},
                }
            ]
        }
    )
    rows = [{"task_id": "a", "start": "2026-01-10T00:00:00Z", "ms": 100}]
    results = run(contract, trace_table(rows), tmp_path, period="2026-Q3")
    assert [r.window for r in results] == ["2026-07", "2026-08", "2026-09"]
    assert {r.verdict for r in results} == {Verdict.NO_DATA}
    assert all(r.total == 0 and r.observed is None for r in results)


# ---------------------------------------------------------------------------------------------
# Properties


def _reference(
    values: list[float], p: float, method: PercentileMethod, direction: Direction
) -> float:
    """An independent percentile: sorted list, exact rank arithmetic."""
    v = sorted(values) if direction is Direction.AT_MOST else sorted(values, reverse=True)
    n = len(v)
    q = Fraction(repr(p))
    if method is PercentileMethod.NEAREST_RANK:
        return v[math.ceil(q * n / 100) - 1]
    h = (n - 1) * q / 100
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    return v[lo] + float(h - lo) * (v[hi] - v[lo])


_PERCENTILES = st.sampled_from([50.0, 90.0, 95.0, 99.0, 99.9, 75.5])
_VARIANTS = [(m, d) for m in PercentileMethod for d in Direction]


def _run_both_orders(
    contract: Contract, rows: list[dict[str, Any]], seed: int, tmp: Path
) -> list[TermResult]:
    """Results for the rows as given; asserts a shuffled copy gives exactly the same ones."""
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    a = run(contract, trace_table(rows), tmp, name="a")
    b = run(contract, trace_table(shuffled), tmp, name="b")
    assert [r.to_dict() for r in a] == [r.to_dict() for r in b]
    return a


@settings(max_examples=10, deadline=None)
@given(
    values=st.lists(st.integers(min_value=1, max_value=3000), min_size=1, max_size=25),
    p=_PERCENTILES,
    threshold=st.integers(min_value=1, max_value=3000),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_occurrence_properties(
    tmp_path_factory: pytest.TempPathFactory, values: list[int], p: float, threshold: int, seed: int
) -> None:
    """Every method and direction on the same values: exact percentile, invariants, order-free."""
    terms = [
        {
            "id": f"{m.value}-{d.value}",
            "measurement_point": "full_response",
            "objective": {
                "kind": "occurrence",
                "percentile": p,
                "threshold": threshold,
                "method": m.value,
                "direction": d.value,
            },
        }
        for m, d in _VARIANTS
    ]
    contract = contract_of({"latency": terms})
    rows = [
        {"task_id": f"t{i:02d}", "start": f"2026-07-01T00:{i:02d}:00Z", "ms": ms}
        for i, ms in enumerate(values)
    ]
    results = _run_both_orders(contract, rows, seed, tmp_path_factory.mktemp("prop"))
    assert len(results) == len(_VARIANTS)
    for r, (method, direction) in zip(results, _VARIANTS, strict=True):
        _assert_consistent(r, contract)
        assert r.total == len(values)
        ref = _reference([float(v) for v in values], p, method, direction)
        assert r.observed == pytest.approx(ref)
        at_most = direction is Direction.AT_MOST
        assert r.good == sum(v <= threshold if at_most else v >= threshold for v in values)
        assert r.verdict in (Verdict.MET, Verdict.BREACHED)


_STATISTICS = ["p50", "p90", "mean", "min"]


@settings(max_examples=6, deadline=None)
@given(
    speeds=st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=30),
    minutes=st.sampled_from([1, 5, 7]),
    share=st.sampled_from([50.0, 90.0, 99.0, 100.0]),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_time_slice_properties(
    tmp_path_factory: pytest.TempPathFactory,
    speeds: list[int],
    minutes: int,
    share: float,
    seed: int,
) -> None:
    terms = [
        {
            "id": statistic,
            "measurement_point": "output_tokens_per_second",
            "tokens_per_second_basis": "whole_request",
            "objective": {
                "kind": "time_slice",
                "slice_minutes": minutes,
                "statistic": statistic,
                "threshold": 50,
                "slices_passing_percent": share,
            },
        }
        for statistic in _STATISTICS
    ]
    contract = contract_of({"latency": terms})
    # one call every 2 minutes, 1 s long, so tokens/s equals output_tokens
    start = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
    rows = [
        {
            "task_id": f"t{i:02d}",
            "start": (start + dt.timedelta(minutes=2 * i)).isoformat(),
            "ms": 1000,
            "output_tokens": s,
        }
        for i, s in enumerate(speeds)
    ]
    results = _run_both_orders(contract, rows, seed, tmp_path_factory.mktemp("slices"))
    # the reference: group by UTC-aligned slice, statistic per slice
    size = minutes * 60
    base = int(start.timestamp())
    slices: dict[int, list[int]] = {}
    for i, s in enumerate(speeds):
        slices.setdefault((base + 120 * i) // size, []).append(s)
    last = base + 120 * (len(speeds) - 1) + 1
    for r, statistic in zip(results, _STATISTICS, strict=True):
        _assert_consistent(r, contract)
        stats = [_slice_statistic(sorted(v), statistic) for v in slices.values()]
        assert r.total == len(slices)
        assert r.good == sum(x >= 50 for x in stats)
        assert r.details["slices_spanned"] == last // size - base // size + 1
        assert r.details["empty_slices"] + r.total == r.details["slices_spanned"]


def _slice_statistic(v: list[int], statistic: str) -> float:
    if statistic == "mean":
        return sum(v) / len(v)
    if statistic == "min":
        return float(v[0])
    q = int(statistic[1:])
    return float(v[math.ceil(q * len(v) / 100) - 1])


def test_task_units_follow_the_task_not_its_calls(tmp_path: Path) -> None:
    """A task is windowed by its start, even when a later call crosses into the next month."""
    contract = contract_of(
        {
            "latency": [
                {
                    "id": "E1",
                    "measurement_point": "task_end_to_end",
                    "objective": {"kind": "occurrence", "percentile": 50, "threshold": 10_000},
                }
            ]
        }
    )
    rows = [
        {
            "task_id": "a",
            "span_id": "root",
            "kind": "task",
            "start": "2026-07-31T23:59:58Z",
            "ms": 5000,
        },
        {
            "task_id": "a",
            "span_id": "c1",
            "parent_span_id": "root",
            "start": "2026-08-01T00:00:01Z",
            "ms": 1000,
        },
    ]
    results = run(contract, trace_table(rows), tmp_path)
    by_window = {r.window: r for r in results}
    assert by_window["2026-07"].total == 1
    assert by_window["2026-07"].observed == pytest.approx(5000.0)
    assert by_window["2026-08"].verdict is Verdict.NO_DATA


def test_check_term_alone(tmp_path: Path) -> None:
    contract = contract_of(
        {
            "latency": [
                {
                    "id": "L1",
                    "measurement_point": "full_response",
                    "objective": {"kind": "occurrence", "percentile": 50, "threshold": 500},
                }
            ]
        }
    )
    path = tmp_path / "x.parquet"
    rows = [{"task_id": "a", "start": "2026-07-01T00:00:00Z", "ms": 100}]
    pq.write_table(trace_table(rows), path)
    ctx = CheckContext(contract, ingest([path]))
    (r,) = check_term(ctx, contract.latency[0])
    assert (r.verdict, r.good, r.total, r.observed) == (Verdict.MET, 1, 1, 100.0)


@pytest.mark.spark
@pytest.mark.slow  # full parity on Spark: `make test-all`; CI runs test_evaluate's subset
def test_spark_gives_the_same_results(tmp_path: Path, spark_backend: Any) -> None:
    """Every case file's first case, on PySpark: the same results as on DuckDB."""
    for path in _case_files():
        doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        case = doc["cases"][0]
        contract = contract_of(case["contract"], case["name"])
        parquet = tmp_path / f"{path.stem}.parquet"
        pq.write_table(trace_table(case["rows"]), parquet)
        window = parse_period(case["period"], contract.zone) if case.get("period") else None
        on_duckdb = latency(CheckContext(contract, ingest([parquet]), period=window))
        on_spark = latency(
            CheckContext(contract, ingest([parquet], backend=spark_backend), period=window)
        )
        assert [r.to_dict() for r in on_spark] == [r.to_dict() for r in on_duckdb], path.stem


# ---------------------------------------------------------------------------------------------
# Terms counted together (one population, one grouped pass, one range scan) give what each term
# counted alone gives, and what the engine ranks and names when nothing is picked from fetched rows


_FUSED_TERMS = [
    {
        "id": "ttft",
        "measurement_point": "time_to_first_token",
        "objective": {"kind": "occurrence", "percentile": 90, "threshold": 300},
    },
    {
        "id": "full-at-least",
        "measurement_point": "full_response",
        "objective": {
            "kind": "occurrence",
            "percentile": 50,
            "threshold": 800,
            "direction": "at_least",
        },
    },
    {
        "id": "server-linear",
        "measurement_point": "server_processing",
        "objective": {"kind": "occurrence", "percentile": 99, "threshold": 900, "method": "linear"},
    },
    {
        "id": "tps-unstated",
        "measurement_point": "output_tokens_per_second",
        "objective": {"kind": "occurrence", "percentile": 50, "threshold": 20},
    },
    {
        "id": "tps-slices",
        "measurement_point": "output_tokens_per_second",
        "tokens_per_second_basis": "after_first_token",
        "objective": {
            "kind": "time_slice",
            "slice_minutes": 60,
            "statistic": "p50",
            "threshold": 20,
            "slices_passing_percent": 90,
        },
    },
    {
        "id": "task",
        "measurement_point": "task_end_to_end",
        "objective": {"kind": "occurrence", "percentile": 95, "threshold": 1500},
    },
]


@settings(max_examples=8, deadline=None)
@given(
    calls=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=5),  # task
            st.integers(min_value=0, max_value=60 * 24 * 50),  # minute from 1 July
            st.floats(min_value=1, max_value=2000, allow_nan=False),  # duration
            st.one_of(st.none(), st.floats(min_value=0.5, max_value=1.0)),  # ttft share
            st.one_of(st.none(), st.sampled_from([100.0, 400.0, 850.0, 899.0, 900.0])),  # server
            st.integers(min_value=1, max_value=60),  # output tokens
            st.sampled_from(["ok", "ok", "ok", "vendor_error", None]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_terms_counted_together_equal_each_term_alone_and_the_engines_ranks(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[Any, ...]]
) -> None:
    from unittest import mock

    from slacheck.checks.latency import picks

    contract = contract_of({"latency": _FUSED_TERMS})
    base = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
    rows = [
        {
            "task_id": f"t{task}",
            "start": (base + dt.timedelta(minutes=minute)).isoformat(),
            "ms": ms,
            "ttft_ms": None if share is None else round(ms * share, 3),
            "server_ms": None if server is None else min(server, ms),
            "output_tokens": tokens,
            "status": status,
        }
        for task, minute, ms, share, server, tokens, status in calls
    ]
    path = tmp_path_factory.mktemp("fused") / "t.parquet"
    pq.write_table(trace_table(rows), path)
    ctx = CheckContext(contract, ingest([path]))
    together = [r.to_dict() for r in latency(ctx)]
    alone = [r.to_dict() for term in contract.latency for r in check_term(ctx, term)]
    assert together == alone
    # nothing picked from fetched rows: every rank and example list from the engine's queries
    with mock.patch.object(picks, "FETCH_CAP", -1):
        assert [r.to_dict() for r in latency(ctx)] == together
    # the worst rows hold one unit per window: the examples are completed by the engine
    with mock.patch.object(picks, "EXAMPLE_ROWS", 1):
        assert [r.to_dict() for r in latency(ctx)] == together


@pytest.mark.parametrize(
    ("point", "figures", "threshold"),
    [
        # tokens/s (tokens over 10 s): 35.3, 40.4 and 44.3 average 40 exactly; as doubles
        # 39.99999999999999, below an at-least limit of 40
        ("output_tokens_per_second", [353, 404, 443], 40),
        # milliseconds: 36.1 … 48.6 average 40 exactly; as doubles 40.00000000000001, above
        # an at-most limit of 40
        ("full_response", [36.1, 41.2, 38.4, 35.7, 48.6], 40),
    ],
)
@pytest.mark.parametrize("reading", ["within", "beyond"])
def test_a_slice_mean_exactly_at_the_limit_is_read_as_the_contract_says(
    tmp_path: Path, point: str, figures: list[float], threshold: int, reading: str
) -> None:
    term: dict[str, Any] = {
        "id": "M",
        "measurement_point": point,
        "objective": {
            "kind": "time_slice",
            "slice_minutes": 5,
            "statistic": "mean",
            "threshold": threshold,
            "slices_passing_percent": 100,
            "min_calls_per_slice": 1,
        },
    }
    if point == "output_tokens_per_second":
        term["tokens_per_second_basis"] = "whole_request"
    contract = contract_of({"latency": [term], "readings": {"at_the_limit": reading}})
    start = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
    rows = [
        {
            "task_id": f"t{i}",
            "start": (start + dt.timedelta(seconds=i)).isoformat(),
            **(
                {"ms": 10_000, "output_tokens": f}
                if point == "output_tokens_per_second"
                else {"ms": f}
            ),
        }
        for i, f in enumerate(figures)
    ]
    (r,) = run(contract, trace_table(rows), tmp_path)
    assert r.total == 1
    assert r.good == (1 if reading == "within" else 0), r.to_dict()


@pytest.mark.parametrize(("tokens", "ms", "limit"), [(7, 280, 25), (7, 140, 50), (14, 280, 50)])
def test_a_call_exactly_at_a_speed_limit_reaches_it(
    tmp_path: Path, tokens: int, ms: int, limit: int
) -> None:
    # 7 tokens in 280 ms is 25 tokens/s exactly; as tokens / (ms / 1000) it computed as
    # 24.999999999999996, so a call at an at-least limit read `within` failed it
    term = {
        "id": "S",
        "measurement_point": "output_tokens_per_second",
        "tokens_per_second_basis": "whole_request",
        "objective": {"kind": "occurrence", "percentile": 50, "threshold": limit},
    }
    contract = contract_of({"latency": [term]})
    start = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
    rows = [
        {
            "task_id": f"t{i}",
            "start": (start + dt.timedelta(minutes=i)).isoformat(),
            "ms": ms,
            "output_tokens": tokens,
        }
        for i in range(3)
    ]
    (r,) = run(contract, trace_table(rows), tmp_path)
    assert r.observed == limit and r.good == 3, r.to_dict()
