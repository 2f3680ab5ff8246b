"""Tests for the synthetic traffic generator and its writers."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from slacheck.errors import UsageError
from slacheck.trace.generate import MALFORMED_KINDS, TrafficProfile, generate, write
from slacheck.trace.schema import ARROW_SCHEMA

SMALL = TrafficProfile(tasks=200, days=3, seed=7)
#: 2026-07-01 (the default start) is a Wednesday; 8 days cover a weekend
BIG = TrafficProfile(tasks=3000, days=8, seed=11)
#: local hours (Asia/Shanghai) where utilisation reaches peak_rho with the default curve
PEAK_WINDOWS = ((10.0, 11.6), (14.1, 15.9))


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    df: pd.DataFrame = generate(SMALL).to_pandas()
    return df


@pytest.fixture(scope="module")
def big() -> pd.DataFrame:
    df: pd.DataFrame = generate(BIG).to_pandas()
    return df


def _local_hour(start_us: pd.Series) -> pd.Series:
    return (start_us / 3.6e9 + 8) % 24


def _in_peak(hour: pd.Series) -> pd.Series:
    inside = pd.Series(False, index=hour.index)
    for lo, hi in PEAK_WINDOWS:
        inside |= (hour >= lo) & (hour < hi)
    return inside


def _with_task_start(df: pd.DataFrame) -> pd.DataFrame:
    """Each row with its task's start time and local start hour."""
    starts = df[df.kind == "task"].set_index("task_id").start_us.rename("task_start")
    out = df.join(starts, on="task_id")
    out["hour"] = _local_hour(out.task_start)
    return out


# -- determinism and schema ------------------------------------------------------------------


def test_same_profile_gives_the_same_table() -> None:
    a, b = generate(SMALL), generate(SMALL)
    assert a.schema == ARROW_SCHEMA
    assert a.equals(b)


def test_another_seed_gives_another_table() -> None:
    a, b = generate(SMALL), generate(replace(SMALL, seed=8))
    assert not a.column("span_id").equals(b.column("span_id"))
    assert not a.column("start_us").equals(b.column("start_us"))


def test_several_blocks_are_deterministic_and_consistent() -> None:
    # more tasks than one generation block: block boundaries must not show
    profile = TrafficProfile(tasks=20_000, days=2, seed=3)
    a = generate(profile)
    assert a.equals(generate(profile))
    df = a.select(["task_id", "span_id", "kind", "start_us"]).to_pandas()
    tasks = df[df.kind == "task"]
    assert tasks.task_id.is_unique and len(tasks) == 20_000
    assert tasks.start_us.is_monotonic_increasing
    assert not df.duplicated(["task_id", "span_id"]).any()
    assert (df.task_id != df.task_id.shift()).sum() == 20_000  # each task's rows are together


def test_provenance_columns(small: pd.DataFrame) -> None:
    assert (small.source_file == "generated").all()
    assert small.source_ref.tolist() == [f"row {i}" for i in range(1, len(small) + 1)]
    assert small.defect.isna().all()


def test_bad_profile_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="tasks"):
        TrafficProfile(tasks=0)
    with pytest.raises(UsageError, match="timezone"):
        TrafficProfile(timezone="Mars/Olympus")


# -- structure ---------------------------------------------------------------------------------


def test_ids_are_lower_case_hex(small: pd.DataFrame) -> None:
    assert small.task_id.str.fullmatch(r"[0-9a-f]{32}").all()
    assert small.span_id.str.fullmatch(r"[0-9a-f]{16}").all()
    assert not small.duplicated(["task_id", "span_id"]).any()


def test_every_step_span_hangs_off_its_task_root(small: pd.DataFrame) -> None:
    roots = small[small.kind == "task"]
    assert roots.task_id.is_unique and len(roots) == SMALL.tasks
    assert roots.parent_span_id.isna().all()
    assert (roots.name == "agent.run").all() and (roots.operation == "invoke_agent").all()
    root_of = roots.set_index("task_id").span_id
    steps = small[small.kind != "task"]
    assert (steps.parent_span_id.to_numpy() == root_of.loc[steps.task_id].to_numpy()).all()


def test_spans_run_one_after_another_inside_their_task(small: pd.DataFrame) -> None:
    df = _with_task_start(small)
    steps = df[df.kind != "task"]
    same_task = steps.task_id.eq(steps.task_id.shift())
    # each span starts after the previous one of its task ended: no overlap, small gaps
    assert (steps.start_us[same_task] >= steps.end_us.shift()[same_task]).all()
    spans = steps.groupby("task_id").agg(first=("start_us", "min"), last=("end_us", "max"))
    roots = df[df.kind == "task"].set_index("task_id")
    assert (roots.start_us < spans["first"].loc[roots.index]).all()
    assert (roots.end_us > spans["last"].loc[roots.index]).all()


def test_durations_are_the_timestamps_difference(small: pd.DataFrame) -> None:
    assert (small.duration_ms == (small.end_us - small.start_us) / 1000.0).all()
    assert (small.duration_ms > 0).all()


def test_model_calls_decompose_into_queue_network_server(small: pd.DataFrame) -> None:
    llm = small[small.kind == "llm"]
    timed = llm[llm.server_ms.notna()]
    assert (timed.duration_ms >= timed.server_ms).all()
    total = timed.queue_ms + timed.network_ms + timed.server_ms
    assert np.allclose(timed.duration_ms, total, rtol=0, atol=1e-6)
    streamed = llm[llm.ttft_ms.notna()]
    assert (streamed.ttft_ms < streamed.duration_ms).all()
    ok = llm[llm.status == "ok"]
    assert 0.7 < ok.ttft_ms.notna().mean() < 0.9
    assert (llm.request_model == SMALL.model).all()
    assert (llm.provider == SMALL.provider).all() and (llm.endpoint == SMALL.endpoint).all()
    assert set(ok.service_tier) <= {"default", "flex"}
    assert (ok.service_tier == "default").mean() > 0.95


def test_other_spans_carry_no_model_fields(small: pd.DataFrame) -> None:
    others = small[small.kind != "llm"]
    for col in ("server_ms", "queue_ms", "request_model", "region", "http_status", "attempt"):
        assert others[col].isna().all(), col
    tools = small[small.kind == "tool"]
    assert (tools.operation == "execute_tool").all()
    assert tools.name.str.startswith("tool.").all()
    assert 40 < tools.duration_ms.median() < 160
    assert (small[small.kind == "retrieval"].operation == "retrieval").all()


def test_steps_per_task_vary(big: pd.DataFrame) -> None:
    llm = big[big.kind == "llm"]
    per_task = llm[llm.attempt == 1].groupby("task_id").size()  # one first attempt per step
    assert per_task.nunique() >= 8
    assert 9 <= per_task.median() <= 13
    assert per_task.max() <= 20
    tools_per_task = big[big.kind == "tool"].groupby("task_id").size()
    assert tools_per_task.nunique() > 5


def test_output_tokens_follow_server_time(big: pd.DataFrame) -> None:
    llm = big[(big.kind == "llm") & (big.status == "ok") & ~big.response_cached.astype(bool)]
    rate = llm.output_tokens / (llm.server_ms / 1000.0)
    assert 25 < rate.median() < 90
    assert np.corrcoef(llm.output_tokens, llm.server_ms)[0, 1] > 0.7
    assert (llm.cached_tokens <= llm.input_tokens).all()
    assert (llm.cached_tokens % 128 == 0).all()


def test_failed_attempts_are_retried(big: pd.DataFrame) -> None:
    llm = big[big.kind == "llm"]
    failed = llm[llm.status != "ok"]
    assert set(failed.status) == {"vendor_error", "throttled", "timeout"}
    codes = {"vendor_error": {500, 503}, "throttled": {429}, "timeout": {504}}
    for status, group in failed.groupby("status"):
        assert set(group.http_status.astype(int)) <= codes[str(status)]
    assert (llm[llm.status == "ok"].http_status == 200).all()
    assert failed.error_type.notna().all() and failed.input_tokens.isna().all()
    # attempt 2 follows a failed attempt 1 of the same task directly
    retries = llm[llm.attempt == 2]
    assert len(retries) > 0
    previous = llm.shift()
    assert (previous.loc[retries.index].attempt == 1).all()
    assert (previous.loc[retries.index].status != "ok").all()
    assert (previous.loc[retries.index].task_id == retries.task_id).all()


def test_failed_retry_ends_the_task_with_its_status(big: pd.DataFrame) -> None:
    llm = big[big.kind == "llm"]
    final_failures = llm[(llm.attempt == 2) & (llm.status != "ok")]
    assert len(final_failures) > 0
    roots = big[big.kind == "task"].set_index("task_id")
    # a task root is no model call: the vendor's 5xx that ended it is a failure of no class
    # there (the generator writes vendor_error on model calls only); the others carry over
    carried = final_failures.status.replace({"vendor_error": "unclassified"})
    assert (roots.loc[final_failures.task_id].status.to_numpy() == carried.to_numpy()).all()
    last_llm = llm.groupby("task_id").tail(1)
    assert set(final_failures.index) <= set(last_llm.index)


# -- the load curve ----------------------------------------------------------------------------


def test_more_tasks_start_at_peak_than_at_night(big: pd.DataFrame) -> None:
    hour = _local_hour(big[big.kind == "task"].start_us)
    peak = ((hour >= 10) & (hour < 11.5)).sum() + ((hour >= 14) & (hour < 16)).sum()
    night = ((hour >= 0) & (hour < 6)).sum()
    assert peak > 10 * max(night, 1)
    assert night > 0  # quiet, not dead


def test_weekends_are_quieter(big: pd.DataFrame) -> None:
    local = pd.to_datetime(big[big.kind == "task"].start_us + 8 * 3_600_000_000, unit="us")
    per_day = local.dt.normalize().value_counts().sort_index()
    days = pd.DatetimeIndex(per_day.index)
    counts = per_day.to_numpy()
    # the UTC window cuts the first and last local days short
    whole = (days > days.min()) & (days < days.max())
    weekend = counts[days.day_of_week >= 5]
    weekday = counts[(days.day_of_week < 5) & whole]
    assert len(weekend) == 2
    assert weekend.max() < 0.6 * weekday.min()


def test_queueing_grows_at_peak(big: pd.DataFrame) -> None:
    llm = _with_task_start(big)
    llm = llm[llm.kind == "llm"]
    at_peak = llm[_in_peak(llm.hour)].queue_ms.mean()
    at_night = llm[(llm.hour >= 0) & (llm.hour < 7)].queue_ms.mean()
    assert at_peak > 10 * at_night
    assert at_peak > 500  # ρ ≈ 0.9: several service times


def test_degradation_happens_only_at_peak(big: pd.DataFrame) -> None:
    llm = _with_task_start(big)
    llm = llm[llm.kind == "llm"]
    fallback = llm[llm.response_model == BIG.fallback_model]
    routed = llm[llm.region != BIG.home_region]
    cached = llm[llm.response_cached.astype(bool)]
    for degraded in (fallback, routed, cached):
        assert len(degraded) > 0
        assert _in_peak(degraded.hour).all()
    assert set(routed.region) <= set(BIG.other_regions)
    # cross-region calls pay the extra round trip
    home = llm[(llm.region == BIG.home_region) & llm.network_ms.notna()]
    assert routed.network_ms.median() > home.network_ms.median() + 150
    # and they stay a few per cent of peak traffic
    peak_calls = llm[_in_peak(llm.hour)]
    assert len(fallback) < 0.1 * len(peak_calls)
    assert len(routed) < 0.1 * len(peak_calls)


def test_throttling_concentrates_at_peak(big: pd.DataFrame) -> None:
    llm = _with_task_start(big)
    throttled = llm[llm.status == "throttled"]
    assert len(throttled) > 10
    assert _in_peak(throttled.hour).mean() > 0.8


# -- malformed rows ----------------------------------------------------------------------------


def _bad_masks(df: pd.DataFrame) -> dict[str, pd.Series]:
    return {
        "end_before_start": df.end_us < df.start_us,
        "null_start": df.start_us.isna(),
        "duplicate_span_id": df.duplicated(["task_id", "span_id"]) & df.task_id.notna(),
        "negative_output_tokens": df.output_tokens < 0,
        "null_task_id": df.task_id.isna(),
    }


def test_malformed_rows_are_added_of_each_promised_kind() -> None:
    clean = generate(SMALL)
    dirty = generate(replace(SMALL, malformed=5))
    assert dirty.schema == ARROW_SCHEMA
    assert dirty.num_rows == clean.num_rows + 5
    masks = _bad_masks(dirty.to_pandas())
    assert set(masks) == set(MALFORMED_KINDS)
    for kind, mask in masks.items():
        assert mask.sum() == 1, kind
    assert sum(mask.sum() for mask in _bad_masks(clean.to_pandas()).values()) == 0
    # the clean rows are untouched: drop the bad ones and the table is the clean one
    bad = np.logical_or.reduce([m.to_numpy() for m in masks.values()])
    kept = dirty.filter(pa.array(~bad)).drop_columns(["source_ref"])
    assert kept.equals(clean.drop_columns(["source_ref"]))
    refs = dirty.column("source_ref").to_pylist()
    assert refs == [f"row {i}" for i in range(1, dirty.num_rows + 1)]


def test_malformed_kinds_cycle() -> None:
    dirty = generate(replace(SMALL, malformed=12)).to_pandas()
    counts = {kind: int(mask.sum()) for kind, mask in _bad_masks(dirty).items()}
    assert counts == {
        "end_before_start": 3,
        "null_start": 3,
        "duplicate_span_id": 2,
        "negative_output_tokens": 2,
        "null_task_id": 2,
    }


# -- writers -----------------------------------------------------------------------------------


def test_parquet_round_trip(tmp_path: Path) -> None:
    table = generate(SMALL)
    path = tmp_path / "traffic.parquet"
    write(table, path, "parquet")
    assert pq.read_table(path).equals(table)


def test_bad_output_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown output format"):
        write(generate(SMALL), tmp_path / "x", "csv")
    with pytest.raises(UsageError, match="cannot write"):
        write(generate(SMALL), tmp_path / "missing" / "x.jsonl", "otlp")


def _attributes(span: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["key"]: a["value"] for a in span["attributes"]}


def test_otlp_writer_shape(tmp_path: Path) -> None:
    table = generate(replace(SMALL, malformed=5))
    path = tmp_path / "traffic.jsonl"
    write(table, path, "otlp")
    lines = path.read_text().splitlines()
    spans = []
    for line in lines:
        doc = json.loads(line)
        assert list(doc) == ["resourceSpans"]
        (scope_spans,) = doc["resourceSpans"][0]["scopeSpans"]
        assert 0 < len(scope_spans["spans"]) <= 1000
        spans += scope_spans["spans"]
    assert len(lines) == -(-len(spans) // 1000)
    assert len(spans) == table.num_rows - 1  # the row with no task id is skipped
    llm = next(s for s in spans if _attributes(s)["gen_ai.operation.name"]["stringValue"] == "chat")
    attrs = _attributes(llm)
    assert llm["kind"] == 3
    assert re.fullmatch(r"\d+000", llm["startTimeUnixNano"])
    assert attrs["gen_ai.usage.input_tokens"]["intValue"].isdigit()
    assert attrs["http.response.status_code"] == {"intValue": "200"}
    header = attrs["http.response.header.openai-processing-ms"]["arrayValue"]["values"]
    assert header[0]["stringValue"].isdigit()
    for key in ("gen_ai.provider.name", "gen_ai.request.model", "server.address", "cloud.region"):
        assert "stringValue" in attrs[key]
    assert "doubleValue" in attrs["slacheck.queue_ms"]
    failed = [s for s in spans if s["status"].get("code") == 2]
    assert failed and all("error.type" in _attributes(s) for s in failed)
    tools = [s for s in spans if s["name"].startswith("tool.")]
    assert tools and all(s["kind"] == 1 for s in tools)


def test_langfuse_writer_shape(tmp_path: Path) -> None:
    table = generate(replace(SMALL, malformed=5))
    path = tmp_path / "traffic.json"
    write(table, path, "langfuse")
    observations = json.loads(path.read_text())
    assert isinstance(observations, list)
    assert len(observations) == table.num_rows - 1
    stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
    types = {o["type"] for o in observations}
    assert types == {"AGENT", "GENERATION", "TOOL", "RETRIEVER"}
    for o in observations:
        assert {"id", "traceId", "parentObservationId", "type", "name", "startTime"} <= o.keys()
        assert {"endTime", "completionStartTime", "model", "usageDetails", "level"} <= o.keys()
        assert {"statusMessage", "metadata"} <= o.keys()
        assert o["endTime"] is None or stamp.fullmatch(o["endTime"])
        assert (o["level"] == "ERROR") == (o["statusMessage"] is not None)
    generation = next(o for o in observations if o["type"] == "GENERATION" and o["usageDetails"])
    assert set(generation["usageDetails"]) == {"input", "output", "cache_read_input_tokens"}
    assert sum(o["startTime"] is None for o in observations) == 1


# -- round trips through the project's readers ------------------------------------------------

EXACT = (
    "task_id",
    "span_id",
    "parent_span_id",
    "kind",
    "name",
    "operation",
    "request_model",
    "response_model",
    "status",
    "error_type",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
)
OTLP_EXACT = (
    *EXACT,
    "start_us",
    "end_us",
    "duration_ms",
    "provider",
    "endpoint",
    "region",
    "http_status",
    "attempt",
    "service_tier",
    "response_cached",
)
MS = ("ttft_ms", "server_ms", "queue_ms", "network_ms")


def _by_span(table: pa.Table) -> pd.DataFrame:
    df: pd.DataFrame = table.to_pandas()
    return df.set_index(["task_id", "span_id"], drop=False).sort_index()


def test_otlp_round_trip(tmp_path: Path) -> None:
    otlp = pytest.importorskip("slacheck.trace.otlp")
    table = generate(SMALL)
    path = tmp_path / "traffic.jsonl"
    write(table, path, "otlp")
    back = otlp.read_otlp(path)
    assert back.schema == ARROW_SCHEMA
    assert back.num_rows == table.num_rows
    want, got = _by_span(table), _by_span(back)
    for col in OTLP_EXACT:
        pd.testing.assert_series_equal(got[col], want[col], check_dtype=False, obj=col)
    for col in MS:
        pd.testing.assert_series_equal(got[col].round(3), want[col].round(3), obj=col)
    assert got.defect.isna().all()


def test_langfuse_round_trip(tmp_path: Path) -> None:
    langfuse = pytest.importorskip("slacheck.trace.langfuse")
    table = generate(SMALL)
    path = tmp_path / "traffic.json"
    write(table, path, "langfuse")
    back = langfuse.read_langfuse(path)
    assert back.schema == ARROW_SCHEMA
    assert back.num_rows == table.num_rows
    want, got = _by_span(table), _by_span(back)
    for col in EXACT:
        pd.testing.assert_series_equal(got[col], want[col], check_dtype=False, obj=col)
    # millisecond timestamps: within 1 ms
    for col in ("start_us", "end_us"):
        assert ((want[col] - got[col]).abs() < 1000).all(), col
    assert ((want.duration_ms - got.duration_ms).abs() < 1.0).all()
    assert (got.ttft_ms.isna() == want.ttft_ms.isna()).all()
    assert ((want.ttft_ms - got.ttft_ms).abs().dropna() < 1.0).all()
    # what Langfuse has no field for is lost, not invented
    lost = ("server_ms", "queue_ms", "network_ms", "region", "endpoint", "attempt")
    for col in (*lost, "http_status", "service_tier", "response_cached"):
        assert got[col].isna().all(), col


def test_malformed_rows_survive_the_otlp_round_trip(tmp_path: Path) -> None:
    otlp = pytest.importorskip("slacheck.trace.otlp")
    path = tmp_path / "traffic.jsonl"
    write(generate(replace(SMALL, malformed=5)), path, "otlp")
    back = otlp.read_otlp(path).to_pandas()
    masks = _bad_masks(back)
    assert {kind: int(m.sum()) for kind, m in masks.items()} == {
        "end_before_start": 1,
        "null_start": 1,
        "duplicate_span_id": 1,
        "negative_output_tokens": 1,
        "null_task_id": 0,  # not representable in OTLP: skipped by the writer
    }
    assert int(pc.sum(pc.is_null(pa.array(back.start_us))).as_py()) == 1
