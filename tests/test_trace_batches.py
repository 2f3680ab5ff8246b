"""LangSmith run-ingest batches as JSON lines, and LiteLLM StandardLoggingPayload lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slacheck.errors import TraceInputError
from slacheck.trace.detect import detect_format
from slacheck.trace.langsmith import read_langsmith
from slacheck.trace.langsmith_batch import merge_batches
from slacheck.trace.litellm_log import read_litellm

T0 = "2026-12-03T06:10:19.250000Z"
#: T0 + 1.5 s, in epoch milliseconds (LangSmith JS writes end_time so)
T0_PLUS_1500_MS = 1796278220750


def _lines(tmp_path: Path, name: str, records: list[Any]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _post(run_id: str, **over: Any) -> dict[str, Any]:
    run: dict[str, Any] = {
        "id": run_id,
        "trace_id": "root",
        "parent_run_id": "root",
        "name": "ChatOpenAI",
        "run_type": "llm",
        "start_time": T0,
        "extra": {"metadata": {"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"}},
    }
    return {**run, **over}


def _by_id(path: Path) -> dict[str, dict[str, Any]]:
    return {r["span_id"]: r for r in read_langsmith(path).to_pylist()}


def test_post_and_patch_on_different_lines_are_one_run(tmp_path: Path) -> None:
    root = {"id": "root", "trace_id": "root", "name": "task", "run_type": "chain"}
    lines = [
        {"post": [{**root, "start_time": T0}, _post("a")]},
        {"patch": [{"id": "a", "end_time": "2026-12-03T06:10:20.000000Z", "error": None}]},
        # a later patch wins for what it sets; its nulls set nothing
        {
            "patch": [
                {"id": "a", "end_time": "2026-12-03T06:10:20.500000Z", "outputs": None},
                {**root, "end_time": "2026-12-03T06:10:21.000000Z"},
            ]
        },
    ]
    path = _lines(tmp_path, "batches.jsonl", lines)
    assert detect_format(path) == "langsmith"
    rows = _by_id(path)
    assert set(rows) == {"root", "a"}
    call = rows["a"]
    assert call["duration_ms"] == pytest.approx(1250.0)
    assert call["provider"] == "openai"
    assert call["status"] == "ok"
    assert call["source_ref"] == "line 1 post[1]+line 2 patch[0]+line 3 patch[0]"
    assert rows["root"]["duration_ms"] == pytest.approx(1750.0)


def test_a_patch_without_its_post_is_read_as_it_is(tmp_path: Path) -> None:
    patch = _post("late", end_time="2026-12-03T06:10:20.000000Z", error="Error: 500 boom")
    path = _lines(tmp_path, "patch.jsonl", [{"post": [], "patch": [patch]}])
    (row,) = read_langsmith(path).to_pylist()
    assert row["span_id"] == "late"
    assert row["duration_ms"] == pytest.approx(750.0)
    assert row["status"] != "ok"


def test_a_post_without_a_patch_is_a_call_with_no_end(tmp_path: Path) -> None:
    path = _lines(tmp_path, "post.jsonl", [{"post": [_post("open")]}, {"post": [_post("done")]}])
    rows = _by_id(path)
    assert rows["open"]["start_us"] is not None
    assert rows["open"]["end_us"] is None
    assert rows["open"]["duration_ms"] is None
    assert rows["done"]["end_us"] is None


def test_timestamps_of_mixed_types_by_their_json_type(tmp_path: Path) -> None:
    """LangSmith JS: an ISO start, an epoch-millisecond end, an ISO first-token event; the JS
    patch names its run only by dotted_order."""
    post = _post("js", dotted_order="20261203T061019250000Zroot.20261203T061019250000Zjs")
    patch = {
        "dotted_order": post["dotted_order"],
        "trace_id": "root",
        "end_time": T0_PLUS_1500_MS,
        "events": [
            {"name": "start", "time": T0},
            {"name": "new_token", "time": "2026-12-03T06:10:19.450000Z"},
            {"name": "new_token", "time": "2026-12-03T06:10:19.600000Z"},
        ],
    }
    del post["id"]
    path = _lines(tmp_path, "js.jsonl", [{"post": [post]}, {"patch": [patch]}])
    (row,) = read_langsmith(path).to_pylist()
    assert row["span_id"] == "js"
    assert row["duration_ms"] == pytest.approx(1500.0)
    assert row["ttft_ms"] == pytest.approx(200.0)


_FIELD = st.sampled_from(["name", "start_time", "end_time", "error", "outputs"])
_UPDATE = st.tuples(
    st.sampled_from(["r1", "r2", "r3"]),
    st.sampled_from(["post", "patch"]),
    st.dictionaries(_FIELD, st.one_of(st.none(), st.integers(0, 9))),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_UPDATE, max_size=4), max_size=5))
def test_merge_is_every_update_in_file_order(lines: list[list[Any]]) -> None:
    """Per run id, the merged run is its posts and patches applied in the order written, post
    before patch within a body, a null setting nothing; one run per id, in first-seen order."""
    bodies: list[tuple[str, object]] = []
    expected: dict[str, dict[str, Any]] = {}
    for n, updates in enumerate(lines, 1):
        body: dict[str, list[dict[str, Any]]] = {"post": [], "patch": []}
        for run_id, key, fields in updates:
            body[key].append({"id": run_id, **fields})
        for key in ("post", "patch"):
            for run in body[key]:
                merged = expected.setdefault(run["id"], {})
                merged.update({k: v for k, v in run.items() if v is not None})
        bodies.append((f"line {n}", body))
    got = merge_batches(Path("x.jsonl"), bodies, lambda r: r.get("id"), problems := [])
    assert problems == []
    assert [run for _, run in got] == list(expected.values())


# -- LiteLLM --------------------------------------------------------------------------------


def _payload(call: str, **over: Any) -> dict[str, Any]:
    p: dict[str, Any] = {
        "id": f"chatcmpl-{call}",
        "litellm_call_id": f"call-{call}",
        "trace_id": f"trace-{call}",
        "call_type": "acompletion",
        "stream": False,
        "status": "success",
        "custom_llm_provider": "openai",
        "startTime": 1796278134.5,
        "endTime": 1796278135.25,
        "completionStartTime": 1796278135.25,
        "model": "gpt-4o-mini",
        "model_group": "",
        "api_base": "https://api.openai.com:443/v1",
        "prompt_tokens": 12,
        "completion_tokens": 5,
        "cache_hit": None,
        "metadata": {},
        "response": {"model": "gpt-4o-mini-2024-07-18"},
        "error_information": {"error_code": "", "error_class": "", "llm_provider": ""},
    }
    return {**p, **over}


def test_litellm_payloads(tmp_path: Path) -> None:
    failed = _payload(
        "404",
        status="failure",
        prompt_tokens=0,
        completion_tokens=0,
        response=None,
        error_information={
            "error_code": "404",
            "error_class": "NotFoundError",
            "llm_provider": "openai",
            "error_message": "litellm.NotFoundError: The model does not exist",
        },
    )
    cached = _payload("hit", cache_hit=True, startTime=1796278136.0, endTime=1796278136.012)
    no_trace = _payload("solo", trace_id=None)
    streamed = _payload("stream", stream=True, completionStartTime=1796278134.625)
    path = _lines(tmp_path, "litellm.jsonl", [_payload("ok"), streamed, failed, cached, no_trace])
    assert detect_format(path) == "litellm"
    rows = {r["span_id"]: r for r in read_litellm(path).to_pylist()}
    ok = rows["call-ok"]
    assert (ok["kind"], ok["task_id"], ok["operation"]) == ("llm", "trace-ok", "chat")
    assert ok["duration_ms"] == pytest.approx(750.0)
    # not streamed: LiteLLM writes completionStartTime = endTime, the whole answer at once
    assert ok["ttft_ms"] == pytest.approx(750.0)
    assert rows["call-stream"]["ttft_ms"] == pytest.approx(125.0)
    assert (ok["provider"], ok["endpoint"]) == ("openai", "api.openai.com")
    assert (ok["request_model"], ok["response_model"]) == ("gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert (ok["input_tokens"], ok["output_tokens"], ok["status"]) == (12, 5, "ok")
    bad = rows["call-404"]
    assert (bad["http_status"], bad["error_type"]) == (404, "NotFoundError")
    assert bad["status"] != "ok"
    assert (bad["input_tokens"], bad["output_tokens"], bad["ttft_ms"]) == (None, None, None)
    assert rows["call-hit"]["response_cached"] is True
    assert ok["response_cached"] is False
    assert rows["call-solo"]["task_id"] == "call-solo"


def test_litellm_timestamps_are_epoch_seconds_never_guessed(tmp_path: Path) -> None:
    """A start written as text is not read as an ISO time: the row carries a defect."""
    path = _lines(tmp_path, "t.jsonl", [_payload("a", startTime="2026-12-03T06:10:19Z")])
    (row,) = read_litellm(path).to_pylist()
    assert row["start_us"] is None
    assert "unparseable_timestamp:start_us" in (row["defect"] or "")


def test_spend_logs_rows_are_not_payloads(tmp_path: Path) -> None:
    row = {**_payload("x"), "request_id": "x"}
    path = _lines(tmp_path, "spend.jsonl", [row, row])
    assert detect_format(path) == "table"
    with pytest.raises(TraceInputError):
        read_litellm(path)
