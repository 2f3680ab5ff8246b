"""JSON trace readers (OTLP, Langfuse, LangSmith) and format detection, on real samples."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from slacheck.errors import Reason, TraceInputError
from slacheck.trace.detect import detect_format
from slacheck.trace.langfuse import read_langfuse
from slacheck.trace.langsmith import read_langsmith
from slacheck.trace.otlp import read_otlp
from slacheck.trace.records import tasks_at_roots
from slacheck.trace.schema import ARROW_SCHEMA

DATA = Path(__file__).parent / "data" / "readers"
SUFFIX = {"langfuse": ".trace.json", "langsmith": ".json", "otlp": ".json"}
REF = {
    "langfuse": "observations[{0}]",
    "langsmith": "post[{0}]+patch[{0}]",
    "otlp": "resourceSpans[0].scopeSpans[0].spans[{0}]",
}
READERS: dict[str, Callable[[Path], pa.Table]] = {
    "otlp": read_otlp,
    "langfuse": read_langfuse,
    "langsmith": read_langsmith,
}

# Pinned once from the files and checked by hand for a few (e.g. agno observations[1]:
# 14:01:34.290 → 14:01:39.089 = 4799 ms; beeai observations[7]: 13:56:57.475 → 13:57:11.334
# = 13859 ms, its `latency` 13.859 s). The folder is the format. Per file: spans, tasks
# (distinct task ids), kinds (task, llm, tool, retrieval, other), and the duration of the span
# at index i (observations[i], post[i] with its patch, spans[i]).
# A Langfuse root observation whose parent is not in the file (csharp-agent) is the task.
# The span's own convention beats Langfuse's type: OpenInference TOOL spans that Langfuse calls
# SPAN are tools (agno, beeai), and the Vercel AI SDK's ai.generateText wrapper, a GENERATION to
# Langfuse, is the task around its one ai.generateText.doGenerate call.
SAMPLES: list[tuple[str, int, int, tuple[int, int, int, int, int], int, float]] = [
    ("langfuse/agno-2025-06-11", 6, 1, (1, 4, 1, 0, 0), 1, 4799.0),
    ("langfuse/autogen-2025-06-06", 2, 1, (1, 1, 0, 0, 0), 1, 628.0),
    ("langfuse/beeai-2025-08-01", 29, 1, (1, 5, 3, 0, 20), 7, 13859.0),
    ("langfuse/claude-agent-2025-12-22", 7, 1, (1, 4, 2, 0, 0), 0, 3733.0),
    ("langfuse/crewai-2025-07-11", 6, 1, (1, 1, 0, 0, 4), 0, 3694.0),
    ("langfuse/csharp-agent-with-gemini-2026-03-09", 8, 1, (1, 3, 2, 0, 2), 0, 3398.0),
    ("langfuse/google-adk-2025-08-28", 5, 1, (1, 2, 1, 0, 1), 0, 924.0),
    ("langfuse/google-gemini-2025-08-01", 1, 1, (0, 1, 0, 0, 0), 0, 12032.0),
    ("langfuse/koog-2025-08-26", 11, 1, (1, 2, 0, 0, 8), 3, 1942.0),
    ("langfuse/langgraph-js-2025-10-30", 20, 1, (1, 2, 0, 0, 17), 0, 3230.0),
    ("langfuse/langgraph-python-2025-08-22", 9, 1, (1, 2, 0, 0, 6), 1, 848.0),
    ("langfuse/llamaindex-2025-06-05", 2, 1, (1, 1, 0, 0, 0), 1, 2776.0),
    ("langfuse/microsoft-agent-2025-12-17", 4, 1, (1, 2, 1, 0, 0), 1, 3289.0),
    ("langfuse/openai-agents-2025-09-30", 5, 1, (1, 2, 1, 0, 1), 2, 1150.0),
    ("langfuse/pydantic-ai-2025-06-06", 3, 1, (1, 1, 0, 0, 1), 0, 4794.0),
    ("langfuse/pydantic-ai-tools-2025-06-06", 3, 1, (1, 1, 0, 0, 1), 2, 4794.0),
    ("langfuse/pydantic-ai-tools-2025-12-04", 12, 1, (1, 4, 3, 0, 4), 2, 1707.0),
    ("langfuse/pydantic-ai-with-gemini-2025-12-24", 1, 1, (0, 1, 0, 0, 0), 0, 1820.0),
    ("langfuse/vercel-aisdk-2025-11-17", 3, 1, (1, 1, 1, 0, 0), 0, 3045.0),
    ("langfuse/vertex-ai-2025-08-01", 1, 1, (0, 1, 0, 0, 0), 0, 10722.0),
    ("langsmith/langsmith_py_wrap_openai_", 1, 1, (0, 1, 0, 0, 0), 0, 1118.333),
    ("langsmith/langsmith_py_wrap_openai_reasoning", 1, 1, (0, 1, 0, 0, 0), 0, 15138.093),
    ("langsmith/langsmith_py_wrap_openai_stream", 1, 1, (0, 1, 0, 0, 0), 0, 1328.441),
    ("langsmith/langsmith_py_wrap_openai_stream_no_usage", 1, 1, (0, 1, 0, 0, 0), 0, 927.004),
    ("otlp/opentelemetry-proto-example-trace", 1, 1, (1, 0, 0, 0, 0), 0, 1000.0),
]

KINDS = ("task", "llm", "tool", "retrieval", "other")


@pytest.fixture(scope="session")
def real() -> Path:
    """The real samples (tests/data/real); missing samples fail the tests, never skip them."""
    path = Path(__file__).parent / "data" / "real"
    assert path.is_dir(), f"real trace samples not found at {path}"
    return path


def _rows(table: pa.Table, ref: str) -> dict[str, Any]:
    rows = [r for r in table.to_pylist() if r["source_ref"] == ref]
    assert len(rows) == 1, ref
    row: dict[str, Any] = rows[0]
    return row


def _problem(info: pytest.ExceptionInfo[TraceInputError]) -> Any:
    assert len(info.value.problems) == 1, info.value.problems
    return info.value.problems[0]


def _sample(real: Path, name: str) -> Path:
    fmt = name.split("/")[0]
    return real / f"{name}{SUFFIX[fmt]}"


def test_every_sample_is_pinned(real: Path) -> None:
    on_disk = set(real.glob("*/*.json"))
    assert on_disk == {_sample(real, s[0]) for s in SAMPLES}


@pytest.mark.parametrize(
    ("name", "spans", "tasks", "kinds", "index", "duration_ms"),
    SAMPLES,
    ids=[s[0] for s in SAMPLES],
)
def test_real_sample(
    real: Path,
    name: str,
    spans: int,
    tasks: int,
    kinds: tuple[int, ...],
    index: int,
    duration_ms: float,
) -> None:
    path = _sample(real, name)
    fmt = name.split("/")[0]
    assert detect_format(path) == fmt
    table = READERS[fmt](path)
    assert table.schema == ARROW_SCHEMA
    assert table.num_rows == spans
    assert len(set(table.column("task_id").to_pylist())) == tasks
    counted = Counter(table.column("kind").to_pylist())
    assert tuple(counted.get(k, 0) for k in KINDS) == kinds
    assert sum(counted.values()) == spans  # no kind outside the five
    assert _rows(table, REF[fmt].format(index))["duration_ms"] == pytest.approx(duration_ms)
    assert set(table.column("source_file").to_pylist()) == {str(path)}
    assert table.column("defect").null_count == spans
    assert table.column("start_us").null_count == 0
    assert table.column("end_us").null_count == 0


def test_langfuse_duration_is_recomputed_not_latency(real: Path) -> None:
    # latency is seconds in this export and milliseconds in pydantic-ai-tools-2025-12-04
    for name, unit in (("beeai-2025-08-01", 1000.0), ("pydantic-ai-tools-2025-12-04", 1.0)):
        path = real / "langfuse" / f"{name}.trace.json"
        latency = [o["latency"] * unit for o in json.loads(path.read_text())["observations"]]
        table = read_langfuse(path)
        assert table.column("duration_ms").to_pylist() == pytest.approx(latency)


def test_vertex_generation_keeps_resource_path_model(real: Path) -> None:
    row = read_langfuse(real / "langfuse/vertex-ai-2025-08-01.trace.json").to_pylist()[0]
    assert row["request_model"] == (
        "projects/vertex-ai-integration-467711/locations/europe-central2/"
        "publishers/google/models/gemini-2.5-flash"
    )
    assert row["region"] is None  # derived later from the path, not here
    assert (row["kind"], row["duration_ms"]) == ("llm", 10722.0)
    assert (row["input_tokens"], row["output_tokens"]) == (5, 845)
    assert row["task_id"] == "0298935e31d66d7de9487cac935d7d99"
    assert row["start_us"] == 1754051461518000


def test_langfuse_metadata_attributes(real: Path) -> None:
    table = read_langfuse(real / "langfuse/microsoft-agent-2025-12-17.trace.json")
    chat = _rows(table, "observations[1]")
    assert chat["request_model"] == "gpt-5-mini"  # gen_ai.request.model, not Langfuse's model
    assert chat["response_model"] == "gpt-5-mini-2025-08-07"
    assert (chat["provider"], chat["operation"]) == ("openai", "chat")
    assert (chat["input_tokens"], chat["output_tokens"]) == (77, 86)
    agent = _rows(table, "observations[0]")
    assert (agent["kind"], agent["operation"], agent["parent_span_id"]) == (
        "task",
        "invoke_agent",
        None,
    )
    # agent spans repeat their children's sums in gen_ai.usage.*; only usageDetails counts
    pydantic = read_langfuse(real / "langfuse/pydantic-ai-2025-06-06.trace.json")
    assert _rows(pydantic, "observations[1]")["input_tokens"] is None
    graph = read_langfuse(real / "langfuse/langgraph-python-2025-08-22.trace.json")
    assert _rows(graph, "observations[1]")["provider"] == "openai"  # ls_provider in metadata
    assert _rows(graph, "observations[1]")["cached_tokens"] == 0  # input_cache_read


def test_no_langfuse_sample_has_ttft(real: Path) -> None:
    for path in sorted((real / "langfuse").glob("*.json")):
        assert read_langfuse(path).column("ttft_ms").null_count == len(
            json.loads(path.read_text())["observations"]
        )


def test_langsmith_ttft_from_new_token_events(real: Path) -> None:
    def one(name: str) -> dict[str, Any]:
        rows: list[dict[str, Any]] = read_langsmith(real / "langsmith" / name).to_pylist()
        assert len(rows) == 1
        return rows[0]

    # start 20:58:20.695375, first new_token 20:58:21.933794
    assert one("langsmith_py_wrap_openai_stream.json")["ttft_ms"] == pytest.approx(1238.419)
    assert one("langsmith_py_wrap_openai_stream_no_usage.json")["ttft_ms"] == pytest.approx(789.78)
    assert one("langsmith_py_wrap_openai_.json")["ttft_ms"] is None
    assert one("langsmith_py_wrap_openai_reasoning.json")["ttft_ms"] is None
    run = one("langsmith_py_wrap_openai_reasoning.json")
    assert run["request_model"] == "o1-mini"
    assert run["response_model"] == "o1-mini-2024-09-12"
    assert (run["provider"], run["operation"], run["status"]) == ("openai", "chat", "ok")
    assert (run["input_tokens"], run["output_tokens"], run["cached_tokens"]) == (43, 2497, 0)
    assert run["parent_span_id"] is None
    assert one("langsmith_py_wrap_openai_stream_no_usage.json")["output_tokens"] is None


def test_otlp_canonical_example(real: Path) -> None:
    rows = read_otlp(real / "otlp/opentelemetry-proto-example-trace.json").to_pylist()
    assert len(rows) == 1
    row = rows[0]
    assert row["task_id"] == "5b8efff798038103d269b633813fc60c"
    assert (row["span_id"], row["parent_span_id"]) == ("eee19b7ec3c1b174", "eee19b7ec3c1b173")
    assert (row["start_us"], row["end_us"]) == (1544712660000000, 1544712661000000)
    assert row["duration_ms"] == 1000.0
    assert (row["name"], row["kind"], row["status"]) == ("I'm a server span", "task", "ok")


def test_otlp_genai_attributes() -> None:
    path = DATA / "otlp_genai.json"
    table = read_otlp(path)
    assert table.num_rows == 7
    at = "resourceSpans[0].scopeSpans[0].spans[{}]".format
    root = _rows(table, at(0))
    assert (root["kind"], root["operation"], root["parent_span_id"]) == (
        "task",
        "invoke_agent",
        None,
    )
    assert root["task_id"] == "0af7651916cd43dd8448eb211c80319c"
    assert root["span_id"] == "b7ad6b7169203331"
    assert root["duration_ms"] == 3500.0

    chat = _rows(table, at(1))
    assert chat == {
        **chat,
        "kind": "llm",
        "operation": "chat",
        "parent_span_id": "b7ad6b7169203331",
        "duration_ms": 1250.0,
        "ttft_ms": 250.0,
        "server_ms": 180.0,
        "queue_ms": 12.5,
        "network_ms": 40.0,
        "provider": "openai",
        "request_model": "gpt-4o",
        "response_model": "gpt-4o-2024-08-06",
        "input_tokens": 120,
        "output_tokens": 42,
        "cached_tokens": 100,
        "endpoint": "api.openai.com",
        "region": "eu-west-1",  # from the resource
        "service_tier": "default",
        "http_status": 200,
        "attempt": 2,
        "response_cached": False,
        "status": "ok",
        "error_type": None,
        "defect": None,
    }

    old = _rows(table, at(2))  # deprecated attribute names, nanos as JSON numbers
    assert (old["provider"], old["input_tokens"], old["output_tokens"]) == ("openai", 10, 5)
    assert old["service_tier"] == "scale"
    assert old["region"] == "us-east-1"  # the span's attribute wins over the resource's
    assert (old["kind"], old["duration_ms"], old["ttft_ms"]) == ("llm", 250.0, None)

    statuses = {
        r["source_ref"]: (r["kind"], r["status"], r["error_type"]) for r in table.to_pylist()
    }
    assert statuses[at(3)] == ("llm", "throttled", "429")
    assert statuses[at(4)] == ("tool", "timeout", "TimeoutError")
    assert statuses[at(5)] == ("retrieval", "unclassified", "index unavailable")
    assert statuses[at(6)] == ("llm", "vendor_error", None)  # http 503
    assert _rows(table, at(6))["http_status"] == 503


def test_otlp_json_lines_and_base64_ids() -> None:
    table = read_otlp(DATA / "otlp_genai.jsonl")
    workflow = _rows(table, "line 1: resourceSpans[0].scopeSpans[0].spans[0]")
    call = _rows(table, "line 2: resourceSpans[0].scopeSpans[0].spans[0]")
    assert (workflow["kind"], workflow["duration_ms"]) == ("task", 2000.0)
    assert call["task_id"] == workflow["task_id"] == "5b8efff798038103d269b633813fc60c"
    assert (call["span_id"], call["parent_span_id"]) == ("eee19b7ec3c1b175", workflow["span_id"])
    assert (call["kind"], call["operation"], call["duration_ms"]) == (
        "llm",
        "generate_content",
        750.0,
    )
    assert (call["provider"], call["input_tokens"], call["output_tokens"]) == (
        "gcp.vertex_ai",
        33,
        7,
    )
    assert (call["status"], call["http_status"], call["region"]) == ("timeout", 504, "europe-west4")
    assert (call["server_ms"], call["defect"]) == (None, "unparseable_number:server_ms")


# -- Langfuse and LangSmith shapes ---------------------------------------------------------------


def _observation(i: int, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": f"obs{i}",
        "traceId": "T1",
        "type": "GENERATION",
        "name": f"call {i}",
        "startTime": "2025-01-01T00:00:00.000Z",
        "endTime": "2025-01-01T00:00:01.500Z",
        "parentObservationId": "root",
        "level": "DEFAULT",
        "model": "gpt-4o",
        "usageDetails": {"input": 10, "output": 20},
        "latency": 1.5,
    }
    return {**base, **over}


def _write(tmp_path: Path, name: str, value: Any, lines: bool = False) -> Path:
    path = tmp_path / name
    if lines:
        path.write_text("".join(json.dumps(v) + "\n" for v in value))
    else:
        path.write_text(json.dumps(value, indent=2))
    return path


def test_langfuse_shapes(tmp_path: Path) -> None:
    root = _observation(0, id="root", type="AGENT", parentObservationId=None, usageDetails={})
    obs = [root, _observation(1), _observation(2, type="TOOL")]
    shapes = {
        "list.json": (obs, False, "[1]"),
        "page.json": ({"data": obs, "meta": {"page": 1}}, False, "data[1]"),
        "obs.jsonl": (obs, True, "line 2"),
        "lines.json": (obs, True, "line 2"),  # JSON lines under a .json name
        "trace.json": ({"trace": {"id": "T1"}, "observations": obs}, False, "observations[1]"),
    }
    for name, (value, lines, ref) in shapes.items():
        path = _write(tmp_path, name, value, lines)
        assert detect_format(path) == "langfuse", name
        table = read_langfuse(path)
        assert table.column("kind").to_pylist() == ["task", "llm", "tool"], name
        assert table.column("task_id").to_pylist() == ["t1"] * 3  # ids lower-cased
        row = _rows(table, ref)
        assert (row["duration_ms"], row["input_tokens"], row["output_tokens"]) == (1500.0, 10, 20)


def test_langfuse_ttft_error_embedding_and_cached(tmp_path: Path) -> None:
    obs = [
        _observation(
            0,
            completionStartTime="2025-01-01T00:00:00.350Z",
            usageDetails={"prompt_tokens": 7, "completion_tokens": 3, "cache_read_input_tokens": 4},
        ),
        _observation(1, level="ERROR", statusMessage="Rate limit exceeded for gpt-4o"),
        _observation(2, level="ERROR", statusMessage="x" * 300),
        _observation(3, type="EMBEDDING", usageDetails={"input": 9}),
        _observation(4, type="RETRIEVER", level="WARNING", statusMessage="slow index"),
    ]
    table = read_langfuse(_write(tmp_path, "obs.json", obs))
    rows = table.to_pylist()
    assert rows[0]["ttft_ms"] == 350.0
    assert (rows[0]["input_tokens"], rows[0]["output_tokens"], rows[0]["cached_tokens"]) == (
        7,
        3,
        4,
    )
    assert (rows[1]["status"], rows[1]["error_type"]) == (
        "throttled",
        "Rate limit exceeded for gpt-4o",
    )
    assert (rows[2]["status"], rows[2]["error_type"]) == (
        "unclassified",
        None,
    )  # too long to be a type
    assert (rows[3]["kind"], rows[3]["operation"], rows[3]["output_tokens"]) == (
        "llm",
        "embeddings",
        None,
    )
    assert (rows[4]["kind"], rows[4]["status"], rows[4]["error_type"]) == ("retrieval", "ok", None)


def test_langfuse_bad_timestamps_and_numbers(tmp_path: Path) -> None:
    obs = [
        _observation(0, startTime="yesterday at noon"),
        _observation(1, endTime=None),
        _observation(2, usageDetails={"input": "lots", "output": -5}),
        _observation(3, usageDetails={"input": 2.5, "output": 12.0}),
        _observation(4, startTime=1735689600, completionStartTime="soon"),
    ]
    path = _write(tmp_path, "obs.json", obs)
    rows = read_langfuse(path).to_pylist()
    assert len(rows) == 5  # rows with defects are still emitted
    assert rows[0]["defect"] == "unparseable_timestamp:start_us"
    assert (rows[0]["start_us"], rows[0]["duration_ms"], rows[0]["end_us"]) == (
        None,
        None,
        1735689601500000,
    )
    # missing is not unparseable: the quality stage calls it missing_timestamp
    assert (rows[1]["end_us"], rows[1]["duration_ms"], rows[1]["defect"]) == (None, None, None)
    assert rows[2]["defect"] == "unparseable_number:input_tokens"
    assert (rows[2]["input_tokens"], rows[2]["output_tokens"]) == (None, -5)  # negative kept
    assert (rows[3]["input_tokens"], rows[3]["output_tokens"]) == (None, 12)
    assert rows[3]["defect"] == "unparseable_number:input_tokens"
    assert rows[4]["defect"] == "unparseable_timestamp:start_us;unparseable_timestamp:ttft_ms"
    assert {r["source_file"] for r in rows} == {str(path)}
    assert [r["source_ref"] for r in rows] == [f"[{i}]" for i in range(5)]


def test_tasks_settled_again_across_files(tmp_path: Path) -> None:
    # a trace split over two files: the agent span in the second file is the task only there
    first = read_langfuse(
        _write(
            tmp_path, "a.json", [_observation(0, id="root", type="SPAN", parentObservationId=None)]
        )
    )
    second = read_langfuse(
        _write(
            tmp_path,
            "b.json",
            [
                _observation(1, id="agent", type="AGENT"),
                _observation(2, parentObservationId="agent"),
            ],
        )
    )
    assert second.column("kind").to_pylist() == ["task", "llm"]
    both = tasks_at_roots(pa.concat_tables([first, second]))
    assert both.column("kind").to_pylist() == ["task", "other", "llm"]
    assert tasks_at_roots(both).equals(both)
    assert both.schema == ARROW_SCHEMA


def _run(run_id: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": run_id,
        "trace_id": "R0",
        "parent_run_id": "R0",
        "name": run_id,
        "run_type": "llm",
        "start_time": "2024-10-11T20:58:23.000000",
        "end_time": "2024-10-11T20:58:24.250000",
    }
    return {**base, **over}


def test_langsmith_shapes_and_fields(tmp_path: Path) -> None:
    runs = [
        _run("R0", parent_run_id=None, run_type="chain"),
        _run(
            "R1",
            first_token_time="2024-10-11T20:58:23.400000",
            events=json.dumps([{"name": "new_token", "time": "2024-10-11T20:58:23.900000"}]),
            extra=json.dumps({"metadata": {"ls_provider": "anthropic", "ls_model_name": "claude"}}),
            outputs=json.dumps(
                {
                    "usage": {
                        "prompt_tokens": 11,
                        "completion_tokens": 4,
                        "prompt_tokens_details": {"cached_tokens": 8},
                    },
                    "service_tier": "priority",
                    "model": "claude-x",
                }
            ),
        ),
        _run("R2", run_type="tool", error="RateLimitError('Error code: 429')"),
        _run("R3", run_type="retriever", error="ReadTimeout: read timed out"),
        _run("R4", run_type="prompt", prompt_tokens="many", error="boom"),
        _run("R5", run_type="embedding", trace_id=None, dotted_order="20241011T205823000000ZR0.X"),
    ]
    for name, value, lines in (
        ("runs.json", runs, False),
        ("runs.jsonl", runs, True),
        ("page.json", {"runs": runs}, False),
    ):
        path = _write(tmp_path, name, value, lines)
        assert detect_format(path) == "langsmith", name
        rows = read_langsmith(path).to_pylist()
        got = [(r["kind"], r["status"], r["error_type"]) for r in rows]
        assert got == [
            ("task", "ok", None),
            ("llm", "ok", None),
            ("tool", "throttled", "RateLimitError"),
            ("retrieval", "timeout", "ReadTimeout"),
            ("other", "unclassified", "boom"),
            ("llm", "ok", None),
        ], name
        llm = rows[1]
        assert llm["ttft_ms"] == 400.0  # first_token_time beats the events
        assert (llm["provider"], llm["request_model"], llm["response_model"]) == (
            "anthropic",
            "claude",
            "claude-x",
        )
        assert (llm["input_tokens"], llm["output_tokens"], llm["cached_tokens"]) == (11, 4, 8)
        assert (llm["service_tier"], llm["duration_ms"]) == ("priority", 1250.0)
        assert rows[4]["defect"] == "unparseable_number:input_tokens"
        assert (rows[5]["task_id"], rows[5]["operation"]) == ("r0", "embeddings")


def test_langsmith_post_patch_merge_and_child_runs(tmp_path: Path) -> None:
    post = [_run("A", parent_run_id=None, run_type="chain", end_time=None), _run("B")]
    patch = [
        {"id": "A", "end_time": "2024-10-11T20:58:25.000000", "parent_run_id": None},
        {"id": "C", "trace_id": "R0", "end_time": "2024-10-11T20:58:25.000000"},
    ]
    path = _write(tmp_path, "ingest.json", {"post": post, "patch": patch})
    rows = read_langsmith(path).to_pylist()
    assert [r["source_ref"] for r in rows] == ["post[0]+patch[0]", "post[1]", "patch[1]"]
    assert rows[0]["duration_ms"] == 2000.0  # the patch's end_time on the post's run
    assert (rows[2]["start_us"], rows[2]["end_us"]) == (None, 1728680305000000)

    nested = [
        _run("P", parent_run_id=None, run_type="chain", child_runs=[_run("Q", parent_run_id="P")])
    ]
    rows = read_langsmith(_write(tmp_path, "nested.json", nested)).to_pylist()
    assert [(r["source_ref"], r["kind"]) for r in rows] == [
        ("[0]", "task"),
        ("[0].child_runs[0]", "llm"),
    ]


# -- malformed input -----------------------------------------------------------------------------


@pytest.mark.parametrize("reader", [read_otlp, read_langfuse, read_langsmith])
def test_invalid_json_names_file_and_line(
    tmp_path: Path, reader: Callable[[Path], pa.Table]
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "observations": [\n    {"id": "a",}\n  ]\n}\n')
    with pytest.raises(TraceInputError) as info:
        reader(path)
    p = _problem(info)
    assert (p.code, p.file, p.line, p.column) == (Reason.MALFORMED_TRACE, str(path), 3, 16)
    assert "broken.json:3:16" in str(info.value)


def test_json_document_with_trailing_junk(tmp_path: Path) -> None:
    path = tmp_path / "junk.json"
    path.write_text(json.dumps([_observation(0)], indent=2) + "\n]\n")
    with pytest.raises(TraceInputError) as info:
        read_langfuse(path)
    p = _problem(info)
    assert (p.code, p.line, p.column) == (
        Reason.MALFORMED_TRACE,
        len(path.read_text().splitlines()),
        1,
    )


def test_invalid_json_lines_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "obs.jsonl"
    good = json.dumps(_observation(0))
    path.write_text(f"{good}\n\n{good}\n{{not json\n{good}\n")
    with pytest.raises(TraceInputError) as info:
        read_langfuse(path)
    p = _problem(info)
    assert (p.code, p.file, p.line) == (Reason.MALFORMED_TRACE, str(path), 4)


def test_unknown_json_shape(tmp_path: Path) -> None:
    path = _write(tmp_path, "what.json", {"hello": [{"world": 1}]})
    with pytest.raises(TraceInputError) as info:
        detect_format(path)
    p = _problem(info)
    assert (p.code, p.file) == (Reason.UNKNOWN_FORMAT, str(path))
    assert "resourceSpans" in p.fix and "{post, patch}" in p.fix
    assert "resourceSpans" not in p.message  # the formats are listed once, as the fix
    for reader in READERS.values():
        with pytest.raises(TraceInputError) as info:
            reader(path)
        assert _problem(info).code == Reason.UNKNOWN_FORMAT


def test_wrong_reader_for_the_format(real: Path) -> None:
    with pytest.raises(TraceInputError) as info:
        read_otlp(real / "langsmith/langsmith_py_wrap_openai_.json")
    assert _problem(info).code == Reason.UNKNOWN_FORMAT
    with pytest.raises(TraceInputError) as info:
        read_langfuse(real / "otlp/opentelemetry-proto-example-trace.json")
    assert _problem(info).code == Reason.UNKNOWN_FORMAT


def test_wrong_structure_inside_a_known_shape(tmp_path: Path) -> None:
    path = _write(tmp_path, "otlp.json", {"resourceSpans": [{"scopeSpans": [{"spans": {"x": 1}}]}]})
    with pytest.raises(TraceInputError) as info:
        read_otlp(path)
    p = _problem(info)
    assert (p.code, p.field) == (Reason.MALFORMED_TRACE, "resourceSpans[0].scopeSpans[0].spans")
    path = _write(tmp_path, "obs.json", [_observation(0), 42])
    with pytest.raises(TraceInputError) as info:
        read_langfuse(path)
    assert (_problem(info).code, _problem(info).field) == (Reason.MALFORMED_TRACE, "[1]")


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    for call in (detect_format, *READERS.values()):
        with pytest.raises(TraceInputError) as info:
            call(missing)
        assert (_problem(info).code, _problem(info).file) == (Reason.FILE_NOT_FOUND, str(missing))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{\n"name": "caf\xe9"}\n')
    with pytest.raises(TraceInputError) as info:
        read_langfuse(latin)
    assert (_problem(info).code, _problem(info).line) == (Reason.NOT_UTF8, 2)


# -- detection -----------------------------------------------------------------------------------


def test_detect_tables(tmp_path: Path) -> None:
    csv = tmp_path / "calls.csv"
    csv.write_text("task_id,span_id,start\nt1,s1,2025-01-01T00:00:00Z\n")
    assert detect_format(csv) == "table"
    parquet = tmp_path / "calls.parquet"
    pq.write_table(pa.table({"task_id": ["t1"], "latency_ms": [12.5]}), parquet)
    assert detect_format(parquet) == "table"
    rows = _write(tmp_path, "gateway.jsonl", [{"req": 1, "ms": 3}, {"req": 2, "ms": 4}], lines=True)
    assert detect_format(rows) == "table"
    one = _write(tmp_path, "one.jsonl", [{"req": 1}], lines=True)
    assert detect_format(one) == "table"


def test_detect_json_lines_of_each_format(tmp_path: Path) -> None:
    assert detect_format(DATA / "otlp_genai.jsonl") == "otlp"
    assert detect_format(DATA / "otlp_genai.json") == "otlp"
    otlp = json.loads((DATA / "otlp_genai.json").read_text())
    assert detect_format(_write(tmp_path, "list.json", [otlp, otlp])) == "otlp"
    assert read_otlp(tmp_path / "list.json").num_rows == 14
    assert detect_format(_write(tmp_path, "o.jsonl", [_observation(0)], lines=True)) == "langfuse"
    assert detect_format(_write(tmp_path, "r.ndjson", [_run("A")] * 2, lines=True)) == "langsmith"


def test_detect_looks_past_a_large_trace_object(tmp_path: Path) -> None:
    # the trace download puts the trace (with its input) before "observations"
    trace: dict[str, Any] = {"id": "T1", "input": "x" * 300_000, "observations": ["nested"]}
    doc = {"trace": trace, "observations": [_observation(0)]}
    path = _write(tmp_path, "big.json", doc)
    assert detect_format(path) == "langfuse"
    assert read_langfuse(path).num_rows == 1
    page = _write(tmp_path, "runs.json", {"cursors": {"next": "x" * 100_000}, "runs": [_run("A")]})
    assert detect_format(page) == "langsmith"
    # past the largest window (16 MB) the top-level "trace" key decides; the reader checks
    trace["input"] = "x" * (17 << 20)
    assert detect_format(_write(tmp_path, "huge.json", doc)) == "langfuse"


@pytest.mark.parametrize(
    ("text", "name"),
    [("", "empty.json"), ("   \n", "blank.json"), ("[]", "empty-list.json"), ("42", "number.json"),
     ('{"data": [{"x": 1}]}', "page.json")],
)  # fmt: skip
def test_detect_unknown(tmp_path: Path, text: str, name: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(TraceInputError) as info:
        detect_format(path)
    assert _problem(info).code == Reason.UNKNOWN_FORMAT


def test_no_test_reads_outside_the_repository() -> None:
    # CI runs a fresh clone: every file a test reads is under tests/data, never ../shared
    outside = re.compile(r"""\.\./shared|["']shared["']|shared/samples""")
    here = Path(__file__).parent
    offenders = [
        str(p.relative_to(here))
        for p in sorted(here.rglob("*.py"))
        if p.name != Path(__file__).name and outside.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
