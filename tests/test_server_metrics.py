"""Server-side OTLP metrics as a second evidence source: the reader, the bucket bounds (computed
by hand from tests/data/otlp_metrics/server_metrics.jsonl, see its PROVENANCE.md), the verdicts
they allow, and the property that the true percentile always lies within them."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import ibis
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slacheck.checks.latency import combine
from slacheck.contract.model import AtTheLimit, Direction, TimeSliceObjective
from slacheck.errors import TraceInputError
from slacheck.evaluation import evaluate
from slacheck.metering import metrics as sm
from slacheck.metering.rank import nearest_rank
from slacheck.trace.ingest import ingest
from slacheck.trace.otlp_metrics import SetAside, read_otlp_metrics
from slacheck.verdict import Verdict
from slacheck.windows import month_window
from tests.test_check_latency import contract_of, trace_table

DATA = Path(__file__).resolve().parent / "data" / "otlp_metrics"
FIXTURE = DATA / "server_metrics.jsonl"
DAY = "2026-07-15T"


def _slice_term(tid: str, point: str, threshold: float, share: float) -> dict[str, Any]:
    return {
        "id": tid,
        "measurement_point": point,
        "objective": {
            "kind": "time_slice",
            "slice_minutes": 5,
            "statistic": "p50",
            "threshold": threshold,
            "direction": "at_most",
            "slices_passing_percent": share,
        },
    }


def _p95_term(tid: str, threshold: float, percentile: float = 95) -> dict[str, Any]:
    return {
        "id": tid,
        "measurement_point": "server_processing",
        "objective": {
            "kind": "occurrence",
            "percentile": percentile,
            "threshold": threshold,
            "method": "nearest_rank",
        },
    }


CONTRACT = {
    "contract": {"time_zone": "UTC"},
    "scope": {"providers": ["openai"], "models": ["gpt-4o"]},
    "latency": [
        # server_processing p50 per 5-minute slice ≤ 400 ms: slices pass, fail, can't tell, pass
        _slice_term("S-met", "server_processing", 400, 50),
        _slice_term("S-indeterminate", "server_processing", 400, 75),
        _slice_term("S-breached", "server_processing", 400, 90),
        # time to first token: the server's clock is a lower bound on the contracted figure
        _slice_term("T-breached", "time_to_first_token", 200, 50),
        _slice_term("T-indeterminate", "time_to_first_token", 200, 30),
        _p95_term("P-met", 3000),
        _p95_term("P-breached", 800),
        _p95_term("P-indeterminate", 2000),
        _p95_term("P99-unbounded", 2900, 99),
        # the traces' full response (3 000 ms, an upper bound on server processing) proves this
        _p95_term("P99-traces", 3000, 99),
    ],
}


def _traces(tmp_path: Path, **fields: Any) -> Any:
    """Model calls at the client only (full response, 3 s each): no server figure, no TTFT,
    unless ``fields`` records one for every call."""
    rows = [
        {
            "start": f"{DAY}12:00:30Z",
            "ms": 3000,
            "repeat": 20,
            "every": 60,
            "task_id": "t{i}",
            "provider": "openai",
            "request_model": "gpt-4o",
            **fields,
        }
    ]
    path = tmp_path / "calls.parquet"
    pq.write_table(trace_table(rows), path)
    return ingest([path])


@pytest.fixture(scope="module")
def points() -> Any:
    return read_otlp_metrics([FIXTURE])


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory, points: Any) -> Any:
    contract = contract_of(CONTRACT)
    return evaluate(
        contract, _traces(tmp_path_factory.mktemp("m")), metrics=sm.MetricsEvidence(points)
    )


# ---------------------------------------------------------------------------------------------
# The reader


def test_reader_keeps_histograms_as_deltas_and_counts_what_it_sets_aside(points: Any) -> None:
    p = points.points.to_pylist()
    ttft = [r for r in p if r["metric"] == "gen_ai.server.time_to_first_token"]
    # cumulative from 12:00: (12:00, 12:05] whole, (12:05, 12:10] the difference; restarted
    # at 12:12: (12:12, 12:15] whole
    minute = 60_000_000
    t0 = 1_784_116_800_000_000  # 2026-07-15T12:00Z
    assert [((r["start_us"] - t0) // minute, (r["end_us"] - t0) // minute) for r in ttft] == [
        (0, 5),
        (5, 10),
        (12, 15),
    ]
    assert [r["count"] for r in ttft] == [10, 6, 4]
    by_point = {}
    for b in points.buckets.to_pylist():
        by_point.setdefault(b["point_id"], []).append((b["hi_ms"], b["n"]))
    second = next(r["point_id"] for r in ttft if r["count"] == 6)
    # [4,4,2,5,1] − [4,4,1,1,0] = [0,0,1,4,1] over bounds 50 100 200 500 ms
    assert by_point[second] == [(200.0, 1), (500.0, 4), (math.inf, 1)]
    assert points.set_aside == {SetAside.EXPONENTIAL: 1}
    assert points.other_metrics == {"gen_ai.client.token.usage": 1}
    duration = [r for r in p if r["metric"] == "gen_ai.server.request.duration"]
    assert len(duration) == 8  # 6 in scope and ok, 1 failed series, 1 other model
    assert {r["error_type"] for r in duration} == {None, "timeout"}


def test_one_document_and_a_list_read_the_same(tmp_path: Path, points: Any) -> None:
    requests = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    as_list = tmp_path / "list.json"
    as_list.write_text(json.dumps(requests))
    got = read_otlp_metrics([as_list])
    assert got.points.drop(["series"]).equals(points.points.drop(["series"]))
    merged = {"resourceMetrics": [rm for r in requests for rm in r["resourceMetrics"]]}
    one = tmp_path / "one.json"
    one.write_text(json.dumps(merged))
    assert read_otlp_metrics([one]).points.num_rows == points.points.num_rows


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"resourceSpans": []}', ""),
        ('{"resourceMetrics": {}}', "resourceMetrics"),
        ('{"resourceMetrics": [{"scopeMetrics": [{"metrics": [3]}]}]}', "metrics[0]"),
        ('{"resourceMetrics": [\n', ":2"),
    ],
)
def test_bad_structure_is_an_error_naming_file_and_field(
    tmp_path: Path, text: str, where: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TraceInputError) as info:
        read_otlp_metrics([path])
    said = " ".join(str(p) for p in info.value.problems)
    assert str(path) in said and where in said


def _point(**over: Any) -> dict[str, Any]:
    p = {
        "startTimeUnixNano": "1784116800000000000",
        "timeUnixNano": "1784117100000000000",
        "count": "3",
        "bucketCounts": ["1", "2"],
        "explicitBounds": [0.5],
    }
    p.update(over)
    return p


@pytest.mark.parametrize(
    ("point", "reason"),
    [
        (_point(bucketCounts=["1"]), SetAside.COUNTS),
        (_point(bucketCounts=["1", "-2"]), SetAside.COUNTS),
        (_point(count="4"), SetAside.COUNT_MISMATCH),
        (_point(explicitBounds=["x"]), SetAside.BOUNDS),
        (_point(explicitBounds=[0.5, 0.5], bucketCounts=["1", "2", "0"]), SetAside.BOUNDS),
        (_point(timeUnixNano="soon"), SetAside.TIME),
        (_point(startTimeUnixNano="1784117200000000000"), SetAside.TIME),
        (_point(startTimeUnixNano="0"), SetAside.NO_START),
        (_point(count=str(2**64), bucketCounts=["1", str(2**64 - 1)]), SetAside.COUNTS),
        (_point(explicitBounds=[1e308]), SetAside.BOUNDS),  # 1e308 s is no duration in ms
        (_point(flags=1), SetAside.NO_VALUE),
        (_point(timeUnixNano="9" * 40), SetAside.TIME),
    ],
)
def test_a_bad_point_is_set_aside_with_its_reason_and_place(
    tmp_path: Path, point: dict[str, Any], reason: str
) -> None:
    doc = {
        "resourceMetrics": [
            {
                "scopeMetrics": [
                    {
                        "metrics": [
                            {
                                "name": "gen_ai.server.request.duration",
                                "unit": "s",
                                "histogram": {"aggregationTemporality": 1, "dataPoints": [point]},
                            }
                        ]
                    }
                ]
            }
        ]
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    got = read_otlp_metrics([path])
    assert got.points.num_rows == 0
    assert got.set_aside == {reason: 1}
    assert "dataPoints[0]" in got.set_aside_at[reason][0]


# ---------------------------------------------------------------------------------------------
# Bounds, by hand


def _slices(points: Any, statistic: str = "p50", metric_point: str = "server_processing") -> Any:
    contract = contract_of(CONTRACT)
    term = next(t for t in contract.latency if t.measurement_point.value == metric_point)
    obj = term.objective
    assert isinstance(obj, TimeSliceObjective)
    obj = obj.model_copy(update={"statistic": statistic})
    ev = sm.MetricsEvidence(points)
    found, _ = sm.cover(term)
    assert found is not None
    july = month_window(2026, 7, contract.zone)
    tp = sm.term_points(ev, contract, term, found, [july], [], (0, None))
    per = sm.slice_table(tp, ev, obj).execute().sort_values("_s")
    return tp, obj, per


def test_per_slice_p50_bounds_are_the_bucket_of_the_nearest_rank(points: Any) -> None:
    tp, obj, per = _slices(points)
    # 12:00 [2,5,2,1,0,0] n=10, k=5 → (100, 250]; 12:05 [0,1,2,6,1,0] k=5 → (500, 1000];
    # 12:10 [0,0,3,3,0,0] n=6, k=3 → (250, 500]; 12:15 two points [3,1,…]+[2,2,1,…] = [5,3,1]
    # n=9, k=5 → (−∞, 100], durations ≥ 0 → (0, 100]
    assert per["_n"].tolist() == [10, 10, 6, 9]
    assert list(zip(per["_lo"], per["_hi"], strict=True)) == [
        (100.0, 250.0),
        (500.0, 1000.0),
        (250.0, 500.0),
        (0.0, 100.0),
    ]
    # the failed series and the straddling replica are left out, and said
    assert tp.aside == {"2026-07": {"failed_requests": 1}}
    assert sm.straddling_slices(tp, obj) == {"2026-07": 1}


def test_slice_mean_is_exact_from_sum_and_min_is_the_first_bucket(points: Any) -> None:
    _, _, per = _slices(points, "mean")
    # sums 2300/10, 8400/10, 2100/6, (350 + 900)/9 ms
    assert per["_lo"].tolist() == pytest.approx([230.0, 840.0, 350.0, 1250 / 9])
    assert per["_exact"].tolist() == [True] * 4
    _, _, per = _slices(points, "min")
    assert list(zip(per["_lo"], per["_hi"], strict=True)) == [
        (0.0, 100.0),
        (100.0, 250.0),
        (250.0, 500.0),
        (0.0, 100.0),
    ]


def _result(evaluation: Any, term: str) -> Any:
    (r,) = [r for r in evaluation.results if r.term_id == term]
    return r


@pytest.mark.parametrize(
    ("term", "verdict", "passing", "failing", "total"),
    [
        # 4 slices: 2 pass (≤ 250, ≤ 100), 1 fails (> 500), 1 cannot tell (250–500):
        # the passing share lies in [50 %, 75 %]
        ("S-met", Verdict.MET, 2, 1, 4),  # 50 % ≥ 50 %
        ("S-indeterminate", Verdict.INDETERMINATE, 2, 1, 4),  # 50 % < 75 % ≤ 75 %
        ("S-breached", Verdict.BREACHED, 2, 1, 4),  # 75 % < 90 %
        # TTFT (server ≤ client): 12:00 (50, 100] → > 50, undecided; 12:05 (200, 500] and
        # 12:10 (12:12–12:15) (200, 500] → > 200: fail. Share in [0 %, 33.3 %]
        ("T-breached", Verdict.BREACHED, 0, 2, 3),
        ("T-indeterminate", Verdict.INDETERMINATE, 0, 2, 3),
    ],
)
def test_slice_verdicts_are_what_the_bounds_allow(
    evaluation: Any, term: str, verdict: Verdict, passing: int, failing: int, total: int
) -> None:
    r = _result(evaluation, term)
    assert r.verdict is verdict, r
    m = r.details["metrics"]
    assert (m["passing_slices"], m["failing_slices"], m["slices"]) == (passing, failing, total)
    # the traces (full response, an upper bound) cannot tell: a definite verdict rests on the
    # metrics; an indeterminate one on both
    if verdict is Verdict.INDETERMINATE:
        assert r.details["evidence"] == "traces_and_metrics"
    else:
        assert r.details["evidence"] == "metrics"
        assert r.measured_at.startswith("gen_ai.server.")


@pytest.mark.parametrize(
    ("term", "verdict", "lower", "upper"),
    [
        # the month: [7, 9, 8, 10, 2, 1] (the straddling replica counts: it lies in July),
        # n = 37; p95 nearest rank k = 36 → cumulative 7 16 24 34 36 → (1000, 2500] ms
        ("P-met", Verdict.MET, 1000.0, 2500.0),
        ("P-breached", Verdict.BREACHED, 1000.0, 2500.0),
        ("P-indeterminate", Verdict.INDETERMINATE, 1000.0, 2500.0),
        # p99: k = 37, the +Inf bucket → bounded below only
        ("P99-unbounded", Verdict.INDETERMINATE, 2500.0, None),
        # the metrics cannot tell; the traces' upper bound proves it met, and that stands
        ("P99-traces", Verdict.MET, 2500.0, None),
    ],
)
def test_window_percentile_bounds(
    evaluation: Any, term: str, verdict: Verdict, lower: float, upper: float | None
) -> None:
    r = _result(evaluation, term)
    m = r.details["metrics"]
    assert (m["requests"], m["lower"], m["upper"]) == (37, lower, upper)
    assert r.verdict is verdict, r


def test_json_records_the_evidence_and_the_metrics_read(evaluation: Any) -> None:
    doc = evaluation.to_dict()
    assert doc["metrics"]["set_aside"] == {"exponential_histogram": 1}
    evidence = {t["id"]: t["details"]["evidence"] for t in doc["terms"]}
    assert evidence["P99-traces"] == "traces"
    # the traces' 3 000 ms prove p95 ≤ 3 000 met too; p95 ≤ 800 only the metrics can decide
    assert evidence["P-met"] == "traces_and_metrics"
    assert evidence["P-breached"] == "metrics"


def test_the_traces_measuring_the_point_stand(tmp_path: Path, points: Any) -> None:
    """server_ms recorded at 300 ms for every call: p95 ≤ 800 is met on the traces; the metrics
    (p95 in (1000, 2500]) disagree, which is said, and the traces' verdict stands."""
    contract = contract_of({**CONTRACT, "latency": [_p95_term("P", 800)]})
    traces = _traces(tmp_path, server_ms=300)
    ev = evaluate(contract, traces, metrics=sm.MetricsEvidence(points))
    (r,) = ev.results
    assert r.verdict is Verdict.MET and r.details["evidence"] == "traces"
    assert any(n.code == "metering.metrics.disagree_kept" for n in r.notes)


@pytest.mark.parametrize(
    ("trace", "exact", "metrics", "want"),
    [
        (Verdict.INDETERMINATE, False, Verdict.MET, (Verdict.MET, sm.Evidence.METRICS)),
        (Verdict.MET, False, Verdict.MET, (Verdict.MET, sm.Evidence.BOTH)),
        (Verdict.MET, False, Verdict.BREACHED, (Verdict.INDETERMINATE, sm.Evidence.BOTH)),
        (Verdict.BREACHED, True, Verdict.MET, (Verdict.BREACHED, sm.Evidence.TRACES)),
        (Verdict.NOT_MEASURABLE, False, Verdict.INDETERMINATE, (Verdict.INDETERMINATE, "m")),
        (Verdict.MET, False, None, (Verdict.MET, sm.Evidence.TRACES)),
    ],
)
def test_combine(trace: Verdict, exact: bool, metrics: Verdict | None, want: Any) -> None:
    verdict, evidence, _ = combine(trace, exact, metrics)
    assert verdict is want[0]
    assert evidence == (sm.Evidence.METRICS if want[1] == "m" else want[1])


def test_judge_at_the_limit() -> None:
    within, beyond = AtTheLimit.WITHIN, AtTheLimit.BEYOND
    assert sm.judge(250, 500, False, Direction.AT_MOST, 500, within) is True
    assert sm.judge(250, 500, False, Direction.AT_MOST, 500, beyond) is None
    assert sm.judge(500, 1000, False, Direction.AT_MOST, 500, within) is False
    assert sm.judge(500, math.inf, False, Direction.AT_LEAST, 500, within) is True
    assert sm.judge(0, 100, False, Direction.AT_LEAST, 500, within) is False
    assert sm.judge(500, 500, True, Direction.AT_MOST, 500, within) is True
    assert sm.judge(500, 500, True, Direction.AT_MOST, 500, beyond) is False


# ---------------------------------------------------------------------------------------------
# The property: the true percentile lies within the bounds of its bucketing


_bounds = st.lists(
    st.floats(min_value=0.5, max_value=5000, allow_nan=False), min_size=1, max_size=12, unique=True
).map(sorted)


@settings(max_examples=60, deadline=None)
@given(
    layouts=st.lists(_bounds, min_size=1, max_size=3),
    samples=st.lists(
        st.lists(st.floats(min_value=0, max_value=6000, allow_nan=False), min_size=1, max_size=40),
        min_size=1,
        max_size=3,
    ),
    percentile=st.floats(min_value=0.5, max_value=99.5),
)
def test_true_percentile_lies_within_bucket_bounds(
    layouts: list[list[float]], samples: list[list[float]], percentile: float
) -> None:
    """Points cut alike or not: the k-th smallest of all samples is in (lower, upper]."""
    rows = []
    values: list[float] = []
    for i, xs in enumerate(samples):
        bounds = layouts[i % len(layouts)]
        edges = [-math.inf, *bounds, math.inf]
        for x in xs:
            j = next(j for j in range(1, len(edges)) if x <= edges[j])  # (edges[j-1], edges[j]]
            rows.append({"g": "w", "lo_ms": edges[j - 1], "hi_ms": edges[j], "n": 1})
        values.extend(xs)
    k = nearest_rank(len(values), percentile)
    buckets = ibis.memtable(pa.Table.from_pylist(rows))
    ranks = ibis.memtable({"g": ["w"], "_k": [k]})
    got = sm.rank_bounds(buckets, ["g"], ranks).execute()
    lo, hi = float(got["_lo"].iloc[0]), float(got["_hi"].iloc[0])
    true = sorted(values)[k - 1]
    assert lo <= true <= hi
    assert lo < true or lo == 0.0  # open below, except the first bucket's floor at 0
    # and the bounds are tight for one layout: they are the bucket's edges
    if len(samples) == 1 or len(layouts) == 1:
        edges = [-math.inf, *layouts[0], math.inf]
        j = next(j for j in range(1, len(edges)) if true <= edges[j])
        assert (lo, hi) == (max(edges[j - 1], 0.0), edges[j])


# ---------------------------------------------------------------------------------------------
# The command line


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slacheck", *args], capture_output=True, text=True, check=False
    )


def _contract_file(tmp_path: Path) -> Path:
    from ruamel.yaml import YAML

    doc = dict(CONTRACT)
    doc["contract"] = {
        "id": "T-1",
        "vendor": "Example Cloud",
        "customer": "Example Customer",
        "effective": {"start": "2026-01-01"},
        "time_zone": "UTC",
    }
    doc["latency"] = [
        *CONTRACT["latency"][:2],
        {**_p95_term("F", 800), "measurement_point": "full_response"},
        {
            **_p95_term("G", 10),
            "measurement_point": "output_tokens_per_second",
            "tokens_per_second_basis": "after_first_token",
        },
    ]
    path = tmp_path / "c.yaml"
    with path.open("w") as fh:
        YAML(typ="safe").dump(doc, fh)
    return path


def test_cli_check_and_fields_with_metrics(tmp_path: Path) -> None:
    contract = _contract_file(tmp_path)
    traces = tmp_path / "calls.parquet"
    pq.write_table(
        trace_table(
            [
                {
                    "start": f"{DAY}12:00:30Z",
                    "ms": 3000,
                    "repeat": 20,
                    "every": 60,
                    "task_id": "t{i}",
                    "provider": "openai",
                    "request_model": "gpt-4o",
                }
            ]
        ),
        traces,
    )
    got = _cli("check", str(contract), str(traces), "--metrics", str(FIXTURE), "--format", "json")
    assert got.returncode == 1, got.stderr
    doc = json.loads(got.stdout)
    evidence = {t["id"]: t["details"]["evidence"] for t in doc["terms"]}
    assert evidence == {
        "S-met": "metrics",
        "S-indeterminate": "traces_and_metrics",
        "F": "traces",
        "G": "traces",
    }
    fields = _cli(
        "fields", str(contract), str(traces), "--metrics", str(FIXTURE), "--format", "json"
    )
    rows = {r["term"]: r for r in json.loads(fields.stdout)["metrics"]["terms"]}
    # 6 answered points (the straddling replica included) and the failed series; not claude-x
    assert rows["S-met"]["covered"] and rows["S-met"]["points_in_scope"] == 7
    assert not rows["F"]["covered"] and not rows["G"]["covered"]
    assert "time_per_output_token" in rows["G"]["message"]["text"]
    table = _cli("fields", str(contract), str(traces), "--metrics", str(FIXTURE))
    assert "gen_ai.server.request.duration" in table.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceMetrics": 3}')
    refused = _cli("check", str(contract), str(traces), "--metrics", str(bad))
    assert refused.returncode == 2
    assert "bad.json" in refused.stderr and "resourceMetrics" in refused.stderr
    assert "Traceback" not in refused.stderr


def _doc(points: list[dict[str, Any]], temporality: int) -> dict[str, Any]:
    histogram = {"aggregationTemporality": temporality, "dataPoints": points}
    metric = {"name": "gen_ai.server.request.duration", "unit": "s", "histogram": histogram}
    return {"resourceMetrics": [{"scopeMetrics": [{"metrics": [metric]}]}]}


@settings(max_examples=40, deadline=None)
@given(
    deltas=st.lists(st.lists(st.integers(0, 50), min_size=3, max_size=3), min_size=1, max_size=8),
    restart_at=st.integers(0, 8),
    as_text=st.booleans(),
)
def test_cumulative_points_difference_to_the_deltas(
    tmp_path_factory: pytest.TempPathFactory,
    deltas: list[list[int]],
    restart_at: int,
    as_text: bool,
) -> None:
    """A cumulative series (restarted once, with a new start time) reads as the deltas it
    accumulated, interval by interval; counts as strings or numbers alike."""
    t0, step = 1_784_116_800 * 10**9, 60 * 10**9
    points, running, start = [], [0, 0, 0], t0
    for i, d in enumerate(deltas):
        if i == restart_at and i > 0:
            running, start = [0, 0, 0], t0 + i * step  # the process restarted at this minute
        running = [a + b for a, b in zip(running, d, strict=True)]
        points.append(
            {
                "startTimeUnixNano": str(start),
                "timeUnixNano": str(t0 + (i + 1) * step),
                "count": str(sum(running)) if as_text else sum(running),
                "bucketCounts": [str(c) for c in running] if as_text else list(running),
                "explicitBounds": [0.1, 1.0],
            }
        )
    path = tmp_path_factory.mktemp("cum") / "m.json"
    path.write_text(json.dumps(_doc(points, 2)))
    got = read_otlp_metrics([path])
    rows = got.points.to_pylist()
    assert [(r["start_us"], r["end_us"]) for r in rows] == [
        ((t0 + i * step) // 1000, (t0 + (i + 1) * step) // 1000) for i in range(len(deltas))
    ]
    assert [r["count"] for r in rows] == [sum(d) for d in deltas]
    per_point: dict[int, dict[float, int]] = {}
    for b in got.buckets.to_pylist():
        per_point.setdefault(b["point_id"], {})[b["hi_ms"]] = b["n"]
    for r, d in zip(rows, deltas, strict=True):
        want = {hi: n for hi, n in zip((100.0, 1000.0, math.inf), d, strict=True) if n}
        assert per_point.get(r["point_id"], {}) == want


def test_metrics_decide_with_their_own_counts(evaluation: Any) -> None:
    """p95 ≤ 800 decided by the metrics: of 37 requests, those in buckets at or below 500 ms
    (7 + 9 + 8 = 24) are proven within; the figure shown is the lower bound, 1 000 ms."""
    r = _result(evaluation, "P-breached")
    assert (r.good, r.total, r.observed, r.unit) == (24, 37, 1000.0, "ms")
    assert r.measured_at == "gen_ai.server.request.duration"
    assert r.gap == -200.0 and r.examples == ()


@pytest.mark.parametrize(
    ("relation", "limit", "want"),
    [
        # an exact mean of 200 against ≤ 200: within at the limit, beyond when the limit is out
        (sm.Relation.SAME, AtTheLimit.WITHIN, (1, 0)),
        (sm.Relation.SAME, AtTheLimit.BEYOND, (0, 1)),
        # the server's exact 200 under the client's figure (≥ 200): cannot tell when the limit
        # is within; proven beyond when it is not
        (sm.Relation.LOWER, AtTheLimit.WITHIN, (0, 0)),
        (sm.Relation.LOWER, AtTheLimit.BEYOND, (0, 1)),
    ],
)
def test_an_exact_slice_figure_at_the_limit(
    relation: sm.Relation, limit: AtTheLimit, want: tuple[int, int]
) -> None:
    per = ibis.memtable(
        {
            "_w": ["w"],
            "_s": [0],
            "_n": [5],
            "_lo": [200.0],
            "_hi": [200.0],
            "_exact": [True],
            "_at": [0],
        }
    )
    obj = TimeSliceObjective(
        slice_minutes=5,
        statistic="mean",
        threshold=200,
        direction=Direction.AT_MOST,
        slices_passing_percent=50,
    )
    got = sm.slice_judgements(per, obj, relation, limit).execute().iloc[0]
    assert (int(got["passing"]), int(got["failing"])) == want


def test_metrics_given_as_traces_are_said_to_be_metrics(tmp_path: Path) -> None:
    contract = _contract_file(tmp_path)
    for path in (FIXTURE, tmp_path / "one.json"):
        if path != FIXTURE:
            path.write_text(json.dumps(json.loads(FIXTURE.read_text().splitlines()[0])))
        got = _cli("check", str(contract), str(path))
        assert got.returncode == 2
        assert "OTLP metrics export" in got.stderr and "--metrics" in got.stderr
    missing = _cli("check", str(contract), str(FIXTURE), "--metrics", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "no such metrics file" in missing.stderr


@pytest.mark.parametrize(
    "sums_s",
    [
        # 37.9 + 61.9 + 20.2 ms = 120 ms over 3 requests: a mean of exactly 40 ms, which the
        # sum of the doubles 37.9, 61.900000000000006 and 20.2 makes 40.00000000000001
        (0.0379, 0.0619, 0.0202),
        # 36 + 54.7 + 29.3 ms: exactly 40 ms again, 39.99999999999999 in doubles
        (0.036, 0.0547, 0.0293),
    ],
)
@pytest.mark.parametrize(
    ("limit", "want"), [(AtTheLimit.WITHIN, (1, 0)), (AtTheLimit.BEYOND, (0, 1))]
)
def test_a_slice_mean_exactly_at_the_limit_is_read_as_the_contract_says(
    tmp_path: Path, sums_s: tuple[float, ...], limit: AtTheLimit, want: tuple[int, int]
) -> None:
    """Three one-request points in one 5-minute slice whose server sums (in seconds, as OTLP
    gives them) average exactly the limit: the slice passes when the limit is within, fails
    when it is not, whichever way the sum of doubles rounds."""
    t0 = 1_784_116_800 * 10**9  # 2026-07-15 12:00 UTC
    points = [
        {
            "startTimeUnixNano": str(t0 + i * 60 * 10**9),
            "timeUnixNano": str(t0 + (i + 1) * 60 * 10**9),
            "attributes": [
                {"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}},
                {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            ],
            "count": "1",
            "sum": s,
            "bucketCounts": ["1", "0"],
            "explicitBounds": [1.0],
        }
        for i, s in enumerate(sums_s)
    ]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_doc(points, 1)))
    contract = contract_of(CONTRACT)
    term = next(t for t in contract.latency if t.id == "S-met")
    assert isinstance(term.objective, TimeSliceObjective)
    obj = term.objective.model_copy(update={"statistic": "mean", "threshold": 40})
    ev = sm.MetricsEvidence(read_otlp_metrics([path]))
    found, _ = sm.cover(term)
    assert found is not None
    july = month_window(2026, 7, contract.zone)
    tp = sm.term_points(ev, contract, term, found, [july], [], (0, None))
    got = sm.slice_figures(tp, ev, obj, limit)["2026-07"].details
    assert (got["slices"], got["passing_slices"], got["failing_slices"]) == (1, *want)
