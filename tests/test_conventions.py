"""The conventions table, and one fixture per SDK read through it, checked against hand sums."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slacheck.trace import conventions
from slacheck.trace.conventions import FieldRule, KindRule, classify, read_fields
from slacheck.trace.ingest import ingest
from slacheck.trace.langsmith import read_langsmith
from slacheck.trace.otlp import read_otlp
from slacheck.trace.schema import Kind

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]

# 2025-01-01T00:00:00Z in µs: every written fixture starts there
T0_US = 1_735_689_600_000_000

#: per convention: fixture, span name (first of that name), and what the span must read as.
#: Durations and TTFTs are the fixture's millisecond offsets subtracted by hand.
CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    (
        "otel_genai",
        "readers/otlp_genai.json",
        "chat gpt-4o",
        # 10:00:00.250 → 10:00:01.500; time_to_first_chunk 0.25 s
        {
            "kind": "llm",
            "operation": "chat",
            "provider": "openai",
            "request_model": "gpt-4o",
            "response_model": "gpt-4o-2024-08-06",
            "input_tokens": 120,
            "output_tokens": 42,
            "cached_tokens": 100,
            "ttft_ms": 250.0,
            "duration_ms": 1250.0,
            "task_id": "0af7651916cd43dd8448eb211c80319c",
        },
    ),
    (
        "otel_genai (deprecated names)",
        "readers/otlp_genai.json",
        "text_completion gpt-3.5-turbo-instruct",
        {
            "kind": "llm",
            "provider": "openai",
            "input_tokens": 10,
            "output_tokens": 5,
            "ttft_ms": None,
        },
    ),
    (
        "vercel_ai",
        "vercel_ai/stream_generate_embed.json",
        "ai.streamText.doStream",
        # 100 ms → 2300 ms; ai.response.msToFirstChunk 412.5 (ms, not s)
        {
            "kind": "llm",
            "operation": "chat",
            "provider": "openai.chat",
            "request_model": "gpt-4o-mini",
            "response_model": "gpt-4o-mini-2024-07-18",
            "input_tokens": 50,
            "output_tokens": 120,
            "ttft_ms": 412.5,
            "duration_ms": 2200.0,
            "task_id": "4bf92f3577b34da6a3ce929d0e0e4736",
            "start_us": T0_US + 100_000,
        },
    ),
    (
        "vercel_ai (wrapper)",
        "vercel_ai/stream_generate_embed.json",
        "ai.streamText",
        {"kind": "task", "duration_ms": 2400.0, "parent_span_id": None},
    ),
    (
        "vercel_ai (AI SDK 4 names)",
        "vercel_ai/stream_generate_embed.json",
        "ai.generateText.doGenerate",
        {"kind": "llm", "input_tokens": 30, "output_tokens": 70, "duration_ms": 1480.0},
    ),
    (
        "vercel_ai (embedding)",
        "vercel_ai/stream_generate_embed.json",
        "ai.embed.doEmbed",
        {
            "kind": "llm",
            "operation": "embeddings",
            "provider": "openai.embedding",
            "request_model": "text-embedding-3-small",
            "input_tokens": 8,
            "duration_ms": 290.0,
        },
    ),
    (
        "vercel_ai (tool)",
        "vercel_ai/stream_generate_embed.json",
        "ai.toolCall",
        {"kind": "tool", "duration_ms": 80.0},
    ),
    (
        "openinference",
        "openinference/agent_llm_tool_retriever.json",
        "ChatCompletion",
        # 200 → 1700 ms; OpenInference writes no TTFT
        {
            "kind": "llm",
            "provider": "openai",
            "request_model": "gpt-4o-2024-08-06",
            "input_tokens": 200,
            "output_tokens": 35,
            "cached_tokens": 128,
            "ttft_ms": None,
            "duration_ms": 1500.0,
            "task_id": "0af7651916cd43dd8448eb211c80319d",
        },
    ),
    (
        "openinference (agent)",
        "openinference/agent_llm_tool_retriever.json",
        "agent",
        {"kind": "task", "duration_ms": 3000.0},
    ),
    (
        "openinference (embedding)",
        "openinference/agent_llm_tool_retriever.json",
        "CreateEmbeddings",
        {"kind": "llm", "operation": "embeddings", "input_tokens": 12, "duration_ms": 90.0},
    ),
    (
        "openllmetry",
        "openllmetry/workflow_chat_embedding.json",
        "openai.chat",
        # 100 → 1400 ms
        {
            "kind": "llm",
            "operation": "chat",
            "provider": "OpenAI",
            "request_model": "gpt-3.5-turbo",
            "response_model": "gpt-3.5-turbo-0125",
            "input_tokens": 15,
            "output_tokens": 22,
            "ttft_ms": None,
            "duration_ms": 1300.0,
            "task_id": "1af7651916cd43dd8448eb211c80319e",
        },
    ),
    (
        "openllmetry (workflow)",
        "openllmetry/workflow_chat_embedding.json",
        "joke_workflow.workflow",
        {"kind": "task", "duration_ms": 2500.0},
    ),
    (
        "openllmetry (0.x names)",
        "openllmetry/workflow_chat_embedding.json",
        "openai.chat@b000000000000007",
        {
            "kind": "llm",
            "provider": "OpenAI",
            "request_model": "gpt-3.5-turbo",
            "response_model": "gpt-3.5-turbo-0613",
            "input_tokens": 9,
            "output_tokens": 12,
            "duration_ms": 800.0,
        },
    ),
    (
        "langfuse_otel",
        "langfuse_otel/generation.json",
        "generate-answer",
        # start 100 ms, completion_start_time 650 ms → 550 ms; 100 → 1700 ms
        {
            "kind": "llm",
            "provider": "anthropic",
            "request_model": "claude-sonnet-4-5",
            "input_tokens": 80,
            "output_tokens": 40,
            "ttft_ms": 550.0,
            "duration_ms": 1600.0,
            "task_id": "2af7651916cd43dd8448eb211c803110",
        },
    ),
    (
        "langsmith_otel",
        "langsmith_otel/chain_llm.json",
        "ChatOpenAI",
        # 20 → 1180 ms; time_to_first_chunk 0.31 s
        {
            "kind": "llm",
            "provider": "openai",
            "request_model": "gpt-4o-mini",
            "input_tokens": 9,
            "output_tokens": 11,
            "ttft_ms": 310.0,
            "duration_ms": 1160.0,
            "task_id": "3af7651916cd43dd8448eb211c803111",
        },
    ),
    # the fixtures of tests/data/evidence (offsets from 2025-01-01T00:00:00Z, in ms)
    (
        "openlit",
        "evidence/openlit.json",
        "chat gpt-4o",
        # 0 → 1500; gen_ai.server.time_to_first_token 0.375 s
        {"kind": "llm", "provider": "openai", "endpoint": "api.openai.com", "ttft_ms": 375.0},
    ),
    (
        "logfire",
        "evidence/logfire.json",
        "Chat Completion with {request_data[model]!r}",
        # 100 → 400, its stream's log at 2450 ends it: 2350 ms
        {"kind": "llm", "duration_ms": 2350.0, "end_us": T0_US + 2_450_000},
    ),
    (
        "semantic_kernel",
        "evidence/semantic_kernel.json",
        "chat.completions gpt-4o",
        # 100 → 1300; server.address https://api.openai.com/v1/
        {"kind": "llm", "endpoint": "api.openai.com", "duration_ms": 1200.0},
    ),
    (
        "mlflow",
        "evidence/mlflow.json",
        "Completions",
        # "\"CHAT_MODEL\"", "\"gpt-4o-mini\"", mlflow.chat.tokenUsage {14, 3}
        {"kind": "llm", "request_model": "gpt-4o-mini", "input_tokens": 14, "output_tokens": 3},
    ),
    (
        "laminar",
        "evidence/laminar.json",
        "openai.chat",
        {"kind": "llm", "provider": "openai", "duration_ms": 850.0},
    ),
    (
        "litellm",
        "evidence/litellm.json",
        "litellm_request",
        # gen_ai.system litellm is no vendor; api_base https://api.anthropic.com./v1/messages
        {
            "kind": "llm",
            "provider": "anthropic",
            "endpoint": "api.anthropic.com",
            "cached_tokens": 8,
        },
    ),
]


def _span(path: Path, name: str) -> dict[str, Any]:
    name, _, span_id = name.partition("@")
    rows = [
        r
        for r in read_otlp(path).to_pylist()
        if r["name"] == name and (not span_id or r["span_id"] == span_id)
    ]
    assert rows, name
    row: dict[str, Any] = rows[0]
    return row


@pytest.mark.parametrize(
    ("convention", "fixture", "name", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_convention_fixture(
    convention: str, fixture: str, name: str, expected: dict[str, Any]
) -> None:
    row = _span(DATA / fixture, name)
    assert {k: row[k] for k in expected} == expected
    assert row["defect"] is None


def test_each_otlp_convention_has_a_fixture_case() -> None:
    otlp = {n for n, c in conventions.table().conventions.items() if c.format == "otlp"}
    tested = {c[0].split(" ")[0] for c in CASES}
    assert otlp - tested == {"slacheck"}  # slacheck.* attributes: tests/test_readers_json.py


def test_kinds_per_fixture() -> None:
    def kinds(fixture: str) -> list[str]:
        return read_otlp(DATA / fixture).column("kind").to_pylist()

    assert kinds("vercel_ai/stream_generate_embed.json") == [
        "task", "llm", "tool", "task", "llm", "task", "llm",
    ]  # fmt: skip
    assert kinds("openinference/agent_llm_tool_retriever.json") == [
        "task", "llm", "tool", "retrieval", "llm", "llm",
    ]  # fmt: skip
    assert kinds("openllmetry/workflow_chat_embedding.json") == [
        "task", "other", "llm", "tool", "llm", "llm", "llm",
    ]  # fmt: skip
    # the failed OpenInference call: a rate limit, from the status message
    failed = _span(
        DATA / "openinference/agent_llm_tool_retriever.json", "ChatCompletion@a000000000000006"
    )
    assert (failed["status"], failed["error_type"]) == ("throttled", "RateLimitError")


# -- LangSmith JS SDK ---------------------------------------------------------------------------

#: end_time − start_time of each payload, epoch milliseconds subtracted by hand
LANGSMITH_JS = [
    ("default", 1728803138285 - 1728803137170, "gpt-4o-mini", "gpt-4o-mini-2024-07-18", 9, 9),
    ("reasoning", 1728803148730 - 1728803138291, "o1-mini", "o1-mini-2024-09-12", 43, 1901),
    ("stream", 1728803136663 - 1728803135809, "gpt-4o-mini", "gpt-4o-mini-2024-07-18", 9, 9),
    (
        "stream_no_usage",
        1728803137165 - 1728803136672,
        "gpt-4o-mini",
        "gpt-4o-mini-2024-07-18",
        None,
        None,
    ),
]


@pytest.mark.parametrize(("name", "duration_ms", "model", "served", "inp", "out"), LANGSMITH_JS)
def test_langsmith_js_payload_is_one_llm_run(
    name: str, duration_ms: int, model: str, served: str, inp: int | None, out: int | None
) -> None:
    path = DATA / "langsmith_js" / f"langsmith_js_wrap_openai_{name}.json"
    rows = read_langsmith(path).to_pylist()
    assert len(rows) == 1
    run = rows[0]
    assert run["source_ref"] == "post[0]+patch[0]"  # the id-less patch found its post
    assert (run["kind"], run["operation"], run["provider"]) == ("llm", "chat", "openai")
    assert run["duration_ms"] == duration_ms
    assert (run["request_model"], run["response_model"]) == (model, served)
    assert (run["input_tokens"], run["output_tokens"]) == (inp, out)
    assert run["task_id"] == run["span_id"]
    assert run["ttft_ms"] is None  # the JS SDK records no new_token events
    assert run["defect"] is None


def test_langsmith_patch_without_a_post_is_named_by_dotted_order(tmp_path: Path) -> None:
    path = tmp_path / "patch.json"
    path.write_text(
        '{"patch": [{"run_type": "tool", "name": "t", "start_time": 1000, "end_time": 1250,'
        ' "trace_id": "root-1", "parent_run_id": "root-1",'
        ' "dotted_order": "20241013T070537170001Zroot-1.20241013T070537171001Zchild-2"}]}'
    )
    (run,) = read_langsmith(path).to_pylist()
    assert (run["span_id"], run["task_id"], run["kind"]) == ("child-2", "root-1", "tool")
    assert (run["start_us"], run["duration_ms"]) == (1_000_000, 250.0)


# -- every fixture: rows read = rows used + rows set aside --------------------------------------

FIXTURES = sorted(
    p.relative_to(DATA).as_posix()
    for p in DATA.rglob("*")
    if p.suffix in (".json", ".jsonl") and p.is_file() and "otlp_metrics" not in p.parts
)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_rows_read_are_used_or_set_aside(fixture: str) -> None:
    traces = ingest([DATA / fixture])
    q = traces.quality
    assert q.rows_read > 0
    assert q.rows_read == q.rows_used + q.rows_set_aside
    assert q.rows_read == sum(s.rows for s in traces.sources)


# -- the table itself ---------------------------------------------------------------------------


def test_every_duration_row_states_its_unit() -> None:
    for row in conventions.table().fields:
        if row.field in ("ttft_ms", "server_ms", "queue_ms", "network_ms"):
            assert row.unit in ("s", "ms", "us", "ns", "timestamp"), row


def test_a_bad_row_is_refused() -> None:
    with pytest.raises(ValueError, match="give its unit"):
        FieldRule(convention="x", attribute="x.ttft", field="ttft_ms")
    with pytest.raises(ValueError, match="not a canonical column"):
        FieldRule(convention="x", attribute="x.kind", field="kind")


@given(
    value=st.floats(min_value=0, max_value=1e6, allow_nan=False),
    unit=st.sampled_from(["s", "ms", "us", "ns"]),
)
def test_units_convert_to_milliseconds(value: float, unit: str) -> None:
    factor = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 0.000001}[unit]
    rule = FieldRule.model_validate(
        {"convention": "x", "attribute": "x.first", "field": "ttft_ms", "unit": unit}
    )
    defects: list[str] = []
    reading = read_fields({"x.first": value}, [rule], defects)
    assert reading.fields["ttft_ms"] == pytest.approx(value * factor)
    assert defects == []


@given(st.lists(st.sampled_from(["chat", "execute_tool", "retrieval", "other"]), min_size=1))
def test_the_first_matching_row_decides(values: list[str]) -> None:
    rules = [
        KindRule(convention="x", attribute=f"a{i}", value=v, kind=Kind.LLM if i == 0 else Kind.TOOL)
        for i, v in enumerate(values)
    ]
    attributes = {f"a{i}": v.upper() for i, v in enumerate(values)}  # values compare without case
    assert classify(attributes, rules) == (Kind.LLM, None)


def test_readme_documents_the_conventions_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- trace-conventions:start -->") + len(
        "<!-- trace-conventions:start -->"
    )
    end = readme.index("<!-- trace-conventions:end -->")
    assert readme[start:end].strip() == conventions.reference_markdown().strip(), (
        "README conventions table drifted: run `make docs`"
    )


# -- the JSON twin of the table ------------------------------------------------------------------


def _yaml_data(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(text)


def test_the_shipped_twin_is_the_yaml_s_data_and_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """``conventions.json`` was written from the very bytes of ``conventions.yaml`` (else every
    process parses the YAML again, 0.15–0.3 s), holds exactly what parsing them gives, and is
    what ``parsed`` reads: with no YAML parser at hand it still gives the data."""
    import hashlib
    import json

    folder = ROOT / "slacheck" / "trace"
    text = (folder / conventions.SOURCE).read_text("utf-8")
    twin = json.loads((folder / conventions.TWIN).read_text("utf-8"))
    assert twin["source_sha256"] == hashlib.sha256(text.encode()).hexdigest(), (
        "conventions.json is stale: run make docs"
    )
    data = _yaml_data(text)
    assert twin["data"] == data
    assert conventions.table() == conventions.Table.model_validate(data)

    def no_parser(**_: Any) -> Any:
        raise AssertionError("the YAML was parsed although the twin holds its data")

    monkeypatch.setattr(conventions, "YAML", no_parser)
    assert conventions.parsed(text) == data


def test_an_edited_yaml_is_parsed_not_read_from_a_stale_twin() -> None:
    """A rule edited in the YAML after the twin was written takes effect: the twin's hash no
    longer matches, so the edited text is parsed."""
    text = (ROOT / "slacheck" / "trace" / conventions.SOURCE).read_text("utf-8")
    data = _yaml_data(text)
    edited = text.replace("frameworks: [", "frameworks: [a-framework-added-here, ", 1)
    assert edited != text, "the edit must change the text"
    got = conventions.parsed(edited)
    assert "a-framework-added-here" in got["frameworks"]
    assert got == _yaml_data(edited) != data


def test_a_twin_json_cannot_give_back_is_refused(tmp_path: Path) -> None:
    """Keys that are not strings, or dates, do not survive JSON: no twin is written for them."""
    import json

    (tmp_path / conventions.SOURCE).write_text("codes: {404: customer_error}\n", "utf-8")
    with pytest.raises(ValueError, match="JSON cannot give back"):
        conventions.write_twin(tmp_path)
    assert not (tmp_path / conventions.TWIN).exists()
    (tmp_path / conventions.SOURCE).write_text("frameworks: [langchain]\n", "utf-8")
    out = conventions.write_twin(tmp_path)
    assert json.loads(out.read_text("utf-8"))["data"] == {"frameworks": ["langchain"]}
