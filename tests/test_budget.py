"""The latency budget: the DOMAIN formula, where task time goes in traces, and what-ifs."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from slacheck.budget import (
    PARTS,
    Budget,
    BudgetSays,
    Scenario,
    StepProfile,
    analyse,
    queue_factor,
    queue_wait_ms,
    task_breakdown,
    task_time_ms,
    what_if,
)
from slacheck.cli.whatif import parse_what_if
from slacheck.contract.load import load_contract
from slacheck.errors import UsageError
from slacheck.messages import render
from slacheck.metering import context
from slacheck.metering.context import Metering
from slacheck.render.budget import to_markdown
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.schema import conform
from slacheck.trace.traces import Traces
from tests.langcheck import english_runs

# --- the pure model: DOMAIN.md's worked examples, exactly


def test_twelve_steps_same_region_take_three_seconds() -> None:
    assert task_time_ms(12, StepProfile(model_ms=200, network_ms=0, tool_ms=50)) == 3000.0


def test_model_calls_crossing_a_region_take_five_point_four_seconds() -> None:
    assert task_time_ms(12, StepProfile(model_ms=200, network_ms=200, tool_ms=50)) == 5400.0


def test_tools_crossing_too_take_seven_point_eight_seconds() -> None:
    # each tool call pays the 200 ms round trip as well: 12 × (200 + 200 + 250)
    assert task_time_ms(12, StepProfile(model_ms=200, network_ms=200, tool_ms=250)) == 7800.0


def test_halving_the_steps_halves_the_task() -> None:
    step = StepProfile(model_ms=200, network_ms=0, tool_ms=50)
    assert task_time_ms(6, step) == 1500.0 == task_time_ms(12, step) / 2


def test_twenty_ms_off_each_call_saves_240_ms_over_twelve_steps() -> None:
    fast = task_time_ms(12, StepProfile(model_ms=180, network_ms=0, tool_ms=50))
    assert task_time_ms(12, StepProfile(model_ms=200, network_ms=0, tool_ms=50)) - fast == 240.0


def test_retries_and_first_queue_wait_add_to_the_task() -> None:
    step = StepProfile(model_ms=200, network_ms=0, tool_ms=50)
    assert task_time_ms(12, step, retries=2, first_queue_ms=300) == 3000 + 2 * 250 + 300


def test_queue_wait_of_a_step_counts_in_its_step_time() -> None:
    step = StepProfile(model_ms=200, network_ms=10, tool_ms=50, queue_ms=40)
    assert step.step_ms == 300.0
    assert task_time_ms(2, step, retries=1) == 900.0


@pytest.mark.parametrize(
    ("rho", "factor"), [(0.5, 1.0), (0.7, 2.33), (0.85, 5.67), (0.95, 19.0), (0.0, 0.0)]
)
def test_queue_factor_follows_mm1(rho: float, factor: float) -> None:
    assert round(queue_factor(rho), 2) == factor


def test_fifty_to_eighty_five_percent_moves_the_wait_from_200_ms_to_1_13_s() -> None:
    assert queue_wait_ms(200, 0.5) == 200.0
    assert round(queue_wait_ms(200, 0.85)) == 1133
    assert round(queue_wait_ms(200, 0.85) / 1000, 2) == 1.13


@pytest.mark.parametrize("rho", [-0.1, 1.0, 1.5, math.nan])
def test_queue_factor_rejects_utilisation_outside_zero_to_one(rho: float) -> None:
    with pytest.raises(ValueError, match="utilisation"):
        queue_factor(rho)


def test_negative_inputs_to_the_formula_are_rejected() -> None:
    with pytest.raises(ValueError):
        task_time_ms(-1, StepProfile(1, 1, 1))
    with pytest.raises(ValueError):
        queue_wait_ms(-5, 0.5)


DEMO = Path(__file__).resolve().parents[1] / "slacheck" / "contract" / "starters" / "demo.yaml"

# --- a hand-written canonical table, computed by hand

T0 = 1_782_864_000_000_000  # 2026-07-01T00:00:00Z in µs

# (task, span, parent, kind, start ms, end ms, attempt, status, queue, network, server)
HAND: list[tuple[Any, ...]] = [
    # a: a root task; three serial tools after a1; a5 throttled, retried by a6 after 500 ms
    # backoff; a7/a8 overlap (already parallel); a retrieval; a10 records no split
    ("a", "a0", None, "task", 0, 2000, None, "ok", None, None, None),
    ("a", "a1", "a0", "llm", 10, 360, 1, "ok", 10.0, 40.0, 300.0),
    ("a", "a2", "a0", "tool", 370, 470, None, "ok", None, None, None),
    ("a", "a3", "a0", "tool", 480, 530, None, "ok", None, None, None),
    ("a", "a4", "a0", "tool", 540, 740, None, "ok", None, None, None),
    ("a", "a5", "a0", "llm", 750, 760, 1, "throttled", 0.0, 6.0, 4.0),
    ("a", "a6", "a0", "llm", 1260, 1560, 2, "ok", 0.0, 50.0, 250.0),
    ("a", "a7", "a0", "tool", 1570, 1600, None, "ok", None, None, None),
    ("a", "a8", "a0", "tool", 1570, 1620, None, "ok", None, None, None),
    ("a", "a9", "a0", "retrieval", 1630, 1690, None, "ok", None, None, None),
    ("a", "a10", "a0", "llm", 1700, 1950, 1, "ok", None, None, None),
    # b: no root span but complete, so its time is the envelope (200 ms); two serial tools
    ("b", "b1", None, "llm", 0, 100, 1, "ok", None, 20.0, 80.0),
    ("b", "b2", None, "tool", 110, 140, None, "ok", None, None, None),
    ("b", "b3", None, "tool", 150, 200, None, "ok", None, None, None),
    # c: an orphan span, so no task time: left out
    ("c", "c1", "zz", "tool", 0, 50, None, "ok", None, None, None),
    # d: two concurrent model calls whose parts (160 ms) exceed the task (100 ms)
    ("d", "d0", None, "task", 0, 100, None, "ok", None, None, None),
    ("d", "d1", "d0", "llm", 0, 80, 1, "ok", None, 10.0, 70.0),
    ("d", "d2", "d0", "llm", 10, 90, 1, "ok", None, 10.0, 70.0),
]


def _hand_table(rows: list[tuple[Any, ...]]) -> pa.Table:
    records = [
        {
            "task_id": task,
            "span_id": span,
            "parent_span_id": parent,
            "kind": kind,
            "start_us": T0 + start * 1000,
            "end_us": T0 + end * 1000,
            "duration_ms": float(end - start),
            "attempt": attempt,
            "status": status,
            "queue_ms": q,
            "network_ms": net,
            "server_ms": srv,
            "source_file": "hand.parquet",
            "source_ref": f"row {i + 1}",
        }
        for i, (task, span, parent, kind, start, end, attempt, status, q, net, srv) in enumerate(
            rows
        )
    ]
    return conform(pa.Table.from_pylist(records))


def _ingest_rows(tmp_path: Path, rows: list[tuple[Any, ...]], name: str = "hand") -> Traces:
    path = tmp_path / f"{name}.parquet"
    pq.write_table(_hand_table(rows), path)
    return ingest([path])


@pytest.fixture
def hand(tmp_path: Path) -> Budget:
    return analyse(_ingest_rows(tmp_path, HAND))


def test_hand_table_parts_per_task(tmp_path: Path) -> None:
    df = task_breakdown(_ingest_rows(tmp_path, HAND)).execute().set_index("task_id")
    assert sorted(df.index) == ["a", "b", "d"]
    a, b, d = df.loc["a"], df.loc["b"], df.loc["d"]
    assert a.task_ms == 2000.0
    assert (a.model_ms, a.network_ms, a.queue_ms, a.unsplit_ms) == (300.0, 40.0, 10.0, 250.0)
    assert (a.tool_ms, a.retrieval_ms) == (430.0, 60.0)
    # the throttled attempt (10) + its retry (300) + the backoff between them (500)
    assert (a.retries_ms, a.backoff_ms) == (810.0, 500.0)
    assert (a.gaps_ms, a.excess_ms) == (100.0, 0.0)
    assert (a.steps, a.llm_calls, a.retry_attempts, a.retried_failures) == (3, 4, 1, 1)
    assert (a.span_sum_ms, a.busy_ms) == (1400.0, 1370.0)
    assert (a.serial_tool_steps, a.serial_tool_calls, a.parallel_tool_steps) == (1, 3, 1)
    assert a.tool_saving_ms == 150.0  # 100 + 50 + 200 − 200
    assert b.task_ms == 200.0  # the envelope: no root span
    assert (b.model_ms, b.network_ms, b.queue_ms, b.tool_ms, b.gaps_ms) == (80, 20, 0, 80, 20)
    assert b.tool_saving_ms == 30.0  # 30 + 50 − 50
    assert (d.model_ms, d.network_ms, d.gaps_ms, d.excess_ms) == (140.0, 20.0, 0.0, 60.0)
    assert (d.span_sum_ms, d.busy_ms) == (160.0, 90.0)


def test_hand_table_budget(hand: Budget) -> None:
    assert (hand.tasks, hand.tasks_without_time) == (3, 1)
    assert hand.task_total_ms == 2300.0
    assert hand.task_ms.mean == pytest.approx(2300 / 3)
    assert (hand.task_ms.p50, hand.task_ms.p95) == (200.0, 2000.0)  # nearest rank of 100/200/2000
    totals = {p.name: p.total_ms for p in hand.parts}
    assert totals == {
        "model": 520.0,
        "network": 80.0,
        "queue": 10.0,
        "unsplit": 250.0,
        "tool": 510.0,
        "retrieval": 60.0,
        "retries": 810.0,
        "gaps": 120.0,
    }
    # the parts count task d's concurrent 60 ms twice: shares are of their sum, 2360
    assert (hand.excess_ms, hand.tasks_clamped) == (60.0, 1)
    assert hand.part("model").share == pytest.approx(520 / 2360)
    assert hand.part("tool").per_task_ms == pytest.approx(170.0)
    assert (hand.steps.mean, hand.steps.p50, hand.steps.p95, hand.steps_total) == (2, 2, 3, 6)
    assert (hand.llm_calls, hand.tool_calls, hand.retry_attempts, hand.retried_failures) == (
        7,
        7,
        1,
        1,
    )
    assert (hand.network_calls, hand.unsplit_calls, hand.backoff_ms) == (4, 1, 500.0)
    assert hand.container_spans == 0
    assert (hand.span_sum_ms, hand.busy_ms) == (1740.0, 1640.0)
    assert hand.parallelism == pytest.approx(1740 / 1640)
    assert hand.sum_to_task == pytest.approx(1740 / 2300)
    t = hand.tools
    assert (t.serial_steps, t.serial_tool_calls, t.parallel_steps) == (2, 5, 1)
    assert (t.saving_ms, t.saving_per_task_ms) == (180.0, 60.0)
    texts = [n.text for n in hand.notes]
    assert any("clamped" in n for n in texts)
    assert "1 task left out" in " ".join(texts)  # the singular for one task
    assert any("not split" in n for n in texts)
    codes = {str(n.code) for n in hand.notes}
    assert {"budget.note.clamped", "budget.note.tasks_left_out"} <= codes
    # JSON: each note a message (code, params, English text)
    note = json.loads(json.dumps(hand.to_dict()))["notes"][0]
    assert set(note) == {"code", "params", "text"} and note["text"] == texts[0]


def test_wrapper_spans_do_not_count_their_children_twice(tmp_path: Path) -> None:
    rows = [
        ("e", "e0", None, "task", 0, 300, None, "ok", None, None, None),
        ("e", "e1", "e0", "llm", 0, 250, None, "ok", None, None, None),  # the SDK call
        ("e", "e2", "e1", "llm", 10, 240, None, "ok", None, 30.0, 200.0),  # the HTTP call
        ("e", "e3", "e0", "tool", 260, 290, None, "ok", None, None, None),
    ]
    b = analyse(_ingest_rows(tmp_path, rows, "wrapped"))
    totals = {p.name: p.total_ms for p in b.parts if p.total_ms}
    assert totals == {"model": 200.0, "network": 30.0, "tool": 30.0, "gaps": 40.0}
    assert (b.container_spans, b.llm_calls, b.steps_total, b.unsplit_calls) == (1, 1, 1, 0)
    assert (b.span_sum_ms, b.busy_ms, b.excess_ms) == (260.0, 260.0, 0.0)
    assert any("1 model, tool or retrieval span that wraps" in n.text for n in b.notes)


def test_row_order_changes_nothing(tmp_path: Path, hand: Budget) -> None:
    rows = list(HAND)
    random.Random(3).shuffle(rows)
    assert analyse(_ingest_rows(tmp_path, rows, "shuffled")).to_dict() == hand.to_dict()


def test_hand_table_what_ifs(hand: Budget) -> None:
    steps, step, retries, rest = hand.profile()
    assert steps == 2.0
    assert step == StepProfile(model_ms=770 / 6, network_ms=80 / 6, tool_ms=95.0, queue_ms=10 / 6)
    assert retries * step.step_ms == pytest.approx(270.0)  # 810 ms over 3 tasks
    assert rest == pytest.approx((120 - 60) / 3)  # gaps less the excess, per task
    assert what_if(hand).delta_ms == pytest.approx(0.0)
    assert what_if(hand, parallel_tools=True).delta_ms == pytest.approx(-60.0)
    # measured 80 ms over 4 calls = 20 per call; at 5 ms the 4/3 calls per task save 15 each
    assert what_if(hand, network_ms_per_call=5).delta_ms == pytest.approx(-15 * 4 / 3)


def test_empty_budget_when_no_task_has_a_time(tmp_path: Path) -> None:
    b = analyse(_ingest_rows(tmp_path, [r for r in HAND if r[0] == "c"], "orphans"))
    assert (b.tasks, b.tasks_without_time, b.task_total_ms) == (0, 1, 0.0)
    assert b.task_ms.mean is None and b.steps.p95 is None
    assert all(p.total_ms == 0.0 and p.share == 0.0 for p in b.parts)
    w = what_if(b, steps_factor=0.5)
    assert (w.baseline_ms, w.projected_ms) == (0.0, 0.0)
    assert "no task has a task time" in to_markdown(b, [w])


# --- generated traffic


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    path = tmp_path_factory.mktemp("budget") / "traffic.parquet"
    write(generate(TrafficProfile(tasks=150, days=2, seed=11)), path, "parquet")
    return ingest([path])


@pytest.fixture(scope="module")
def gen_budget(generated: Traces) -> Budget:
    return analyse(generated)


def test_generated_shares_sum_to_one_hundred_percent(gen_budget: Budget) -> None:
    assert gen_budget.tasks == 150
    assert sum(p.share for p in gen_budget.parts) == pytest.approx(1.0)
    assert sum(round(p.share * 100, 1) for p in gen_budget.parts) == pytest.approx(100, abs=0.5)
    assert gen_budget.tasks_clamped == 0 and gen_budget.excess_ms == 0.0
    total = sum(p.total_ms for p in gen_budget.parts)
    assert total == pytest.approx(gen_budget.task_total_ms)


def test_generated_parts_add_up_to_each_task_within_a_millisecond(generated: Traces) -> None:
    df = task_breakdown(generated).execute()
    parts = sum(df[f"{name}_ms"] for name, _ in PARTS)
    assert len(df) == 150
    assert (parts - df["task_ms"]).abs().max() <= 1.0
    assert (df["gaps_ms"] >= 0).all()


def test_generated_measures_what_the_generator_made(gen_budget: Budget) -> None:
    b = gen_budget
    # every model call records server and network time, and no step runs anything in parallel
    assert b.unsplit_calls == 0 and b.part("unsplit").total_ms == 0.0
    assert b.parallelism == pytest.approx(1.0)
    assert b.span_sum_ms == pytest.approx(b.busy_ms)
    assert b.tools.parallel_steps == 0
    # generator: steps 3..20, 40 ms median network, retries only after a failed attempt
    assert b.steps.p50 is not None and 3 <= b.steps.p50 <= 20
    assert 30 < b.part("network").total_ms / b.network_calls < 60
    assert b.retry_attempts == b.retried_failures
    assert b.llm_calls == b.steps_total + b.retry_attempts


def test_generated_serial_tools_give_a_saving(gen_budget: Budget) -> None:
    t = gen_budget.tools
    assert t.serial_steps > 0 and t.serial_tool_calls >= 2 * t.serial_steps
    assert t.saving_ms > 0
    assert t.saving_per_task_ms == pytest.approx(t.saving_ms / gen_budget.tasks)


def test_steps_half_halves_the_per_step_part(gen_budget: Budget) -> None:
    w = what_if(gen_budget, steps_factor=0.5)
    assert w.steps_after == pytest.approx(w.steps_before / 2)
    per_step_before = w.baseline_ms - w.rest_ms
    assert w.projected_ms - w.rest_ms == pytest.approx(per_step_before / 2)


def test_utilisation_fifty_to_eighty_five_multiplies_queue_by_5_67(gen_budget: Budget) -> None:
    w = what_if(gen_budget, utilisation_from=0.5, utilisation_to=0.85)
    assert round(w.step_after.queue_ms / w.step_before.queue_ms, 2) == 5.67
    added = (w.step_after.queue_ms - w.step_before.queue_ms) * w.steps_before
    assert w.delta_ms == pytest.approx(added)
    assert added == pytest.approx(gen_budget.part("queue").per_task_ms * (0.85 / 0.15 - 1))


def test_parallel_tools_removes_the_estimated_saving(gen_budget: Budget) -> None:
    w = what_if(gen_budget, parallel_tools=True)
    assert w.delta_ms == pytest.approx(-gen_budget.tools.saving_per_task_ms)


def test_nearer_region_replaces_mean_network_per_call(gen_budget: Budget) -> None:
    b = gen_budget
    w = what_if(b, network_ms_per_call=20.0)
    mean = b.part("network").total_ms / b.network_calls
    assert w.delta_ms == pytest.approx((20.0 - mean) * b.network_calls / b.tasks)


def test_combined_scenario_applies_each_change(gen_budget: Budget) -> None:
    both = parse_what_if("steps=0.5, parallel-tools").apply(gen_budget)
    tools_only = what_if(gen_budget, parallel_tools=True)
    assert both.projected_ms - both.rest_ms == pytest.approx(
        (tools_only.projected_ms - tools_only.rest_ms) / 2
    )


def test_markdown_and_dicts(gen_budget: Budget) -> None:
    ws = [parse_what_if(s).apply(gen_budget) for s in ("steps=0.5", "utilisation=0.5->0.85")]
    md = to_markdown(gen_budget, ws)
    for heading in ("## Where task time goes", "## Steps", "## Parallelism", "## What if"):
        assert heading in md
    assert "| network round trip |" in md and "**100.0 %**" in md
    assert "| steps × 0.5 |" in md and "| utilisation 50 % → 85 % |" in md
    assert "serial tool calls:" in md
    assert "(s)" not in md and not re.search(r"(?<![\d.,])1 [a-z ]{0,20}?(calls|tasks|steps)\b", md)
    d = json.loads(json.dumps(gen_budget.to_dict()))
    assert d["tasks"] == 150 and [p["name"] for p in d["parts"]] == [n for n, _ in PARTS]
    w = json.loads(json.dumps(ws[1].to_dict()))
    assert w["scenario"]["utilisation_to"] == 0.85 and w["delta_ms"] > 0


# --- parsing what-ifs


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("steps=0.5", Scenario(steps_factor=0.5, spec="steps=0.5")),
        ("parallel-tools", Scenario(parallel_tools=True, spec="parallel-tools")),
        ("network=20", Scenario(network_ms_per_call=20.0, spec="network=20")),
        ("network=20ms", Scenario(network_ms_per_call=20.0, spec="network=20ms")),
        (
            "utilisation=0.85->0.5",
            Scenario(utilisation_from=0.85, utilisation_to=0.5, spec="utilisation=0.85->0.5"),
        ),
        (
            "utilization=0.5→0.85",
            Scenario(utilisation_from=0.5, utilisation_to=0.85, spec="utilization=0.5→0.85"),
        ),
        (
            "steps=0.5,parallel-tools",
            Scenario(steps_factor=0.5, parallel_tools=True, spec="steps=0.5,parallel-tools"),
        ),
    ],
)
def test_parse_what_if(spec: str, expected: Scenario) -> None:
    assert parse_what_if(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty what-if"),
        ("steps=0.5,", "empty what-if"),
        ("faster", "unknown what-if 'faster'"),
        ("steps=half", "steps needs a number"),
        ("steps=0", "steps factor must be a number > 0"),
        ("network=-5", "network needs a number"),
        ("network=", "network needs a number"),
        ("parallel-tools=no", "takes no value"),
        ("utilisation=0.85", "FROM->TO"),
        ("utilisation=85->50", "fraction in [0, 1)"),
        ("utilisation=0->0.5", "utilisation from 0"),
        ("steps=0.5,steps=0.7", "sets steps twice"),
    ],
)
def test_parse_what_if_errors(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_what_if(spec)


def test_what_if_api_checks_its_arguments(hand: Budget) -> None:
    with pytest.raises(UsageError, match="both a from and a to"):
        what_if(hand, utilisation_from=0.5)
    with pytest.raises(UsageError, match="in \\[0, 1\\)"):
        what_if(hand, utilisation_from=0.5, utilisation_to=1.0)


@pytest.mark.spark
@pytest.mark.slow  # full parity on Spark: `make test-all`; CI runs test_evaluate's subset
def test_spark_gives_the_same_budget(generated: Traces, spark_backend: Any) -> None:
    path = Path(generated.sources[0].path)
    on_spark = analyse(ingest([path], backend=spark_backend))
    a, b = analyse(generated).to_dict(), on_spark.to_dict()
    assert _close(a, b), (a, b)


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
    return bool(a == b)


def test_markdown_in_chinese_has_no_english_sentence(gen_budget: Budget, hand: Budget) -> None:
    """Headings, table labels, sentences, scenarios and notes all come from the catalogue."""
    specs = ("steps=0.5", "utilisation=0.5->0.85, network=20", "parallel-tools")
    for b in (gen_budget, hand):
        ws = [parse_what_if(s).apply(b) for s in specs]
        md = to_markdown(b, ws, lang="zh")
        assert "## 任务耗时构成" in md and "## 假设分析" in md and "| 网络往返 |" in md
        assert "**100.0%**" in md and "利用率 50% → 85%" in md
        assert [line for line in md.splitlines() if english_runs(line)] == []
        assert b.notes and all(render(n, "zh") in md for n in b.notes)
        # the English Markdown of the same budget would fail the same check
        assert [line for line in to_markdown(b, ws).splitlines() if english_runs(line)] != []


@pytest.mark.parametrize("n", [1, 2, 7])
def test_budget_counts_agree_with_their_nouns(n: int) -> None:
    """English picks the singular for exactly one, Chinese has one form."""
    en = render(BudgetSays.TASKS_LEFT_OUT(n=n), "en")
    assert en.startswith(f"{n} task left out" if n == 1 else f"{n} tasks left out")
    assert render(BudgetSays.KEEP_TIME(n=n), "en") == (
        f"{n} call without a network figure keeps its time"
        if n == 1
        else f"{n} calls without a network figure keep their time"
    )
    assert render(BudgetSays.TASKS_LEFT_OUT(n=n), "zh").startswith(f"{n} 个任务未纳入")


def test_budget_percentiles_use_the_one_nearest_rank() -> None:
    # p99.9 of 1,000 is rank 999 (a float ceiling of 99.9 / 100 * 1000 gave 1000)
    import ibis
    import pandas as pd

    from slacheck.budget.analysis import _nearest_ranks
    from slacheck.metering.rank import nearest_rank

    n = 1000
    t = ibis.memtable(
        pd.DataFrame(
            {
                "task_ms": [float(v) for v in range(1, n + 1)],
                # a second column in the other order: each is ranked on its own
                "steps": [float(2 * (n - v)) for v in range(n)],
                "task_id": range(n),
            }
        )
    )
    ps = (50.0, 95.0, 99.9, 100.0)
    got = _nearest_ranks(t, n, ps, "task_ms", "steps")
    assert got["task_ms"] == [float(nearest_rank(n, p)) for p in ps]
    assert got["task_ms"][2] == 999.0
    assert got["steps"] == [2.0 * nearest_rank(n, p) for p in ps]


# --- the report's budget reads the metering run's tables

_SPAN = st.tuples(
    st.sampled_from(["p", "q", "r"]),  # task
    st.sampled_from(["s0", "s1", "s2", "s3", "s4", "s5"]),  # span (duplicates set aside)
    st.sampled_from([None, "s0", "s1", "s2", "zz"]),  # parent: roots, wrappers, orphans
    st.sampled_from(["task", "llm", "llm", "tool", "tool", "retrieval"]),
    st.integers(0, 400),  # start ms
    st.integers(0, 300),  # length ms
    st.sampled_from([None, 1, 2]),  # attempt
    st.sampled_from(["ok", "throttled", "vendor_error", "timeout"]),
    st.sampled_from([None, 0.0, 10.0]),  # queue
    st.sampled_from([None, 5.0, 40.0]),  # network
    st.sampled_from([None, 50.0, 200.0]),  # server
)


def _rows_of(spans: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(t, s, p, k, a, a + n, *rest) for t, s, p, k, a, n, *rest in spans]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spans=st.lists(_SPAN, min_size=1, max_size=14))
@example(spans=[(r[0], r[1], r[2], r[3], r[4], r[5] - r[4], *r[6:]) for r in HAND])
def test_budget_on_the_runs_tables_is_the_budget_alone(spans: list[tuple[Any, ...]]) -> None:
    """``analyse(traces, metering)`` reads the run's tasks and calls (as the report does);
    ``analyse(traces)`` derives them: the same budget, figure for figure."""
    with tempfile.TemporaryDirectory() as tmp:
        traces = _ingest_rows(Path(tmp), _rows_of(spans), "drawn")
        alone = analyse(traces).to_dict()
        run = Metering(load_contract(DEMO), traces)
        assert analyse(traces, run).to_dict() == alone


@pytest.mark.parametrize("view", [False, True])
def test_generated_budget_on_the_runs_tables(
    generated: Traces, gen_budget: Budget, view: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the calls as a table (small inputs) and as a view of the input (large ones)
    monkeypatch.setattr(context, "VIEW_FROM_ROWS", 0 if view else 10**12)
    run = Metering(load_contract(DEMO), generated)
    assert run.calls_are_view is view
    # the same figures; sums of floats over rows read in another order may differ in the
    # last digit (as on Spark), counts and notes not at all
    a, b = analyse(generated, run).to_dict(), gen_budget.to_dict()
    assert _close(a, b), (a, b)


# --- the per-task breakdown against a plain-Python reading of its definitions

# starts and lengths on a coarse grid, zero lengths included: spans that tie on their start,
# on their whole interval, model calls and tools that touch
_TIED_SPAN = st.tuples(
    st.sampled_from(["p", "q"]),  # task
    st.sampled_from(["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"]),  # span
    st.sampled_from([None, None, "s0", "s0", "s1", "s4"]),  # parent: roots and wrappers
    st.sampled_from(["llm", "llm", "tool", "tool", "tool", "retrieval"]),
    st.sampled_from([0, 0, 10, 20, 30, 50, 80]),  # start ms
    st.sampled_from([0, 10, 10, 20, 30, 60]),  # length ms
    st.sampled_from([None, 1, 2, 3]),  # attempt
    st.sampled_from(["ok", "ok", "throttled", "vendor_error", "timeout"]),
    st.sampled_from([None, 2.0]),  # queue
    st.sampled_from([None, 3.0]),  # network
    st.sampled_from([None, 5.0]),  # server
)


def _tie(span: str, parent: str | None, kind: str, start: int, length: int) -> tuple[Any, ...]:
    """A span of task p drawn as ``_TIED_SPAN`` draws it: an ok first attempt."""
    return ("p", span, parent, kind, start, length, 1, "ok", None, None, None)


def _union_ms(spans: list[dict[str, Any]]) -> float:
    """The length of the union of the spans' intervals, by merging them in start order."""
    total, lo, hi = 0, None, None
    for s in sorted(spans, key=lambda s: (s["start_us"], s["end_us"])):
        if hi is None or s["start_us"] > hi:
            total += 0 if hi is None or lo is None else hi - lo
            lo, hi = s["start_us"], s["end_us"]
        else:
            hi = max(hi, s["end_us"])
    if hi is not None and lo is not None:
        total += hi - lo
    return total / 1000.0


def _by_hand(spans: list[dict[str, Any]], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """One task's breakdown figures, read from the definitions in ``task_breakdown``'s
    docstring one span at a time."""
    from slacheck.metering.derive import FAILURE_STATES

    work = [s for s in spans if s["kind"] in ("llm", "tool", "retrieval")]
    parents = {s["parent_span_id"] for s in work if s["parent_span_id"] is not None}
    leaves = [s for s in work if s["span_id"] not in parents]
    order = sorted(leaves, key=lambda s: (s["start_us"], s["end_us"], s["kind"]))
    # a tool's step: the latest end of the model calls up to it in that order, when the tool
    # started after it
    steps: dict[int, list[dict[str, Any]]] = {}
    for i, s in enumerate(order):
        ends = [m["end_us"] for m in order[: i + 1] if m["kind"] == "llm"]
        if s["kind"] == "tool" and ends and s["start_us"] >= max(ends):
            steps.setdefault(max(ends), []).append(s)
    serial = parallel = serial_calls = 0
    saving = 0.0
    for group in steps.values():
        if len(group) < 2:
            continue
        g = sorted(group, key=lambda s: (s["start_us"], s["end_us"]))
        if all(b["start_us"] >= a["end_us"] for a, b in itertools.pairwise(g)):
            serial += 1
            serial_calls += len(g)
            saving += sum(s["duration_ms"] for s in g) - max(s["duration_ms"] for s in g)
        else:
            parallel += 1
    failed = {str(s) for s in FAILURE_STATES}
    leaf_calls = sorted(
        (c for c in calls if c["span_id"] not in parents),
        key=lambda c: (c["start_us"], c["span_id"]),
    )
    retries = retried = 0
    backoff = 0.0
    for i, c in enumerate(leaf_calls):
        after = leaf_calls[i + 1]["attempt"] if i + 1 < len(leaf_calls) else None
        if c["attempt"] is not None and c["attempt"] > 1:
            retries += 1
            if i > 0:
                backoff += max((c["start_us"] - leaf_calls[i - 1]["end_us"]) / 1000.0, 0.0)
        # a failed attempt the next call retries, whether or not it was a retry itself: each
        # retry attempt follows one retried failure
        if c["state"] in failed and after is not None and after > 1:
            retried += 1
    tools = [s for s in leaves if s["kind"] == "tool"]
    return {
        "tool_ms": sum(s["duration_ms"] for s in tools),
        "retrieval_ms": sum(s["duration_ms"] for s in leaves if s["kind"] == "retrieval"),
        "tool_calls": len(tools),
        "span_sum_ms": sum(s["duration_ms"] for s in leaves),
        "busy_ms": _union_ms(leaves),
        "container_spans": len(work) - len(leaves),
        "serial_tool_steps": serial,
        "serial_tool_calls": serial_calls,
        "parallel_tool_steps": parallel,
        "tool_saving_ms": saving,
        "llm_calls": len(leaf_calls),
        "retry_attempts": retries,
        "retried_failures": retried,
        "steps": len(leaf_calls) - retries,
        "backoff_ms": backoff,
    }


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spans=st.lists(_TIED_SPAN, min_size=1, max_size=16))
@example(spans=[(r[0], r[1], r[2], r[3], r[4], r[5] - r[4], *r[6:]) for r in HAND])
# a zero-length model call and a zero-length tool at the same instant: the call comes first
# (whatever their ids), so the tool follows it, in one step with the next tool
@example(
    spans=[
        _tie(*x)
        for x in [
            ("c", None, "llm", 0, 40),
            ("b", None, "llm", 50, 0),
            ("a", None, "tool", 50, 0),
            ("d", None, "tool", 50, 10),
        ]
    ]
)
# two tools of a step starting together, one of no length: it ended as the other began
@example(
    spans=[
        _tie(*x)
        for x in [
            ("l", None, "llm", 0, 40),
            ("z", None, "tool", 50, 0),
            ("a", None, "tool", 50, 10),
        ]
    ]
)
# a failed retry, itself retried: a retried failure as much as a failed first attempt is
@example(
    spans=[
        ("p", "a", None, "llm", 0, 10, 1, "timeout", None, None, None),
        ("p", "b", None, "llm", 20, 10, 2, "throttled", None, None, None),
        ("p", "c", None, "llm", 40, 10, 3, "ok", None, None, None),
    ]
)
# wrappers (a model call around a call, tools around tools) form no step of their own
@example(
    spans=[
        _tie(*x)
        for x in [
            ("l0", None, "llm", 0, 10),
            ("l1", "l0", "llm", 1, 8),
            ("t0", None, "tool", 20, 20),
            ("t1", "t0", "tool", 21, 18),
            ("t2", None, "tool", 45, 5),
            ("t3", "t2", "tool", 46, 3),
        ]
    ]
)
def test_breakdown_is_its_definitions_span_by_span(spans: list[tuple[Any, ...]]) -> None:
    """Each task's unions, steps, wrappers and retries as the engine computes them (windows
    over the task's spans) equal the same figures read span by span in Python: intervals
    merged for the union, each tool's step looked up among the model calls before it."""
    from slacheck.metering.derive import calls, tasks

    with tempfile.TemporaryDirectory() as tmp:
        traces = _ingest_rows(Path(tmp), _rows_of(spans), "tied")
        got = task_breakdown(traces).execute().set_index("task_id")
        timed = tasks(traces).execute()
        rows = traces.spans.execute().to_dict("records")
        model_calls = calls(traces).execute().to_dict("records")
    whole = timed[timed.task_ms.notnull() & ~timed.task_source.isin(["subtree", "unended"])]
    assert sorted(got.index) == sorted(whole.task_id)
    for task in got.index:
        want = _by_hand(
            [r for r in rows if r["task_id"] == task],
            [c for c in model_calls if c["task_id"] == task],
        )
        for name, value in want.items():
            assert got.loc[task, name] == pytest.approx(value, abs=1e-9), (task, name)


def test_sum_ms_over_many_rows_and_threads_is_the_exact_sum() -> None:
    # a double sum rounds at each addition, and the engine's threads add in an order of their
    # own: over 600,000 figures DuckDB's sum is 30018144064.26812 ms where the exact total is
    # 30018144064.268, and the budget's JSON changed from run to run on the same trace.
    # sum_ms (the budget's and the task-time finder's sums) gives the exact figure
    from slacheck.engine import duckdb_connect
    from slacheck.metering.derive import sum_ms

    rnd = random.Random(3)
    us = [rnd.randrange(0, 10**8) for _ in range(600_000)]
    con = duckdb_connect()
    con.raw_sql("SET threads = 4")
    t = con.create_table("v", pa.table({"us": pa.array(us, pa.int64())}))
    t = t.mutate(ms=t.us / 1000.0)
    for _ in range(3):
        (got,) = t.aggregate(s=sum_ms(t.ms)).to_pyarrow().column("s").to_pylist()
        assert got == sum(us) / 1000


_MS = st.one_of(
    st.floats(0, 1e7, allow_nan=False),
    st.integers(0, 10**9).map(lambda us: us / 1000),
    st.sampled_from([0.0005, 0.0015, 2.5e-4, 1e-9, 123456.7894999]),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_MS, max_size=40), st.randoms(use_true_random=False))
@example([0.1, 0.2, 0.3, 1e7 + 0.0005], random.Random(0))
def test_sum_ms_is_each_value_to_the_microsecond_added_exactly(
    values: list[float], rnd: random.Random
) -> None:
    from slacheck.engine import duckdb_connect
    from slacheck.metering.derive import sum_ms

    def half_away(x: float) -> int:  # the engines' ROUND
        return int(math.copysign(math.floor(abs(x) + 0.5), x))

    want = sum(half_away(v * 1000.0) for v in values) / 1000.0 if values else None
    shuffled = values[:]
    rnd.shuffle(shuffled)
    con = duckdb_connect()
    for order in (values, shuffled):
        t = con.create_table("v", pa.table({"v": pa.array(order, pa.float64())}), overwrite=True)
        (got,) = t.aggregate(s=sum_ms(t.v)).to_pyarrow().column("s").to_pylist()
        assert got == want
