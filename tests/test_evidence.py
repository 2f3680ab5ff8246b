"""The evidence layer: each fact's sources read the same by the Python readers and the engine,
on fixtures in the producers' own shapes; expected figures come from the files' own fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import ibis
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from slacheck.engine import Engine, EngineConfig, EngineSession, duckdb_connect
from slacheck.metering.derive import host_key
from slacheck.trace.conventions import table
from slacheck.trace.ingest import detect, ingest
from slacheck.trace.normalise import blank, blank_expr, host_expr, host_of
from slacheck.trace.openai_agents import read_openai_agents
from slacheck.trace.otlp import read_otlp
from slacheck.trace.otlp_engine import read_otlp_lines
from slacheck.trace.schema import COLUMN_NAMES

EVIDENCE = Path(__file__).parent / "data" / "evidence"
OTLP = sorted(p for p in EVIDENCE.glob("*.json") if p.stem != "openai_agents")


def _raw_spans(path: Path) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text())
    return [span for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    return {r["span_id"]: r for r in read_otlp(path).to_pylist()}


def _url_host(value: str) -> str | None:
    """The host by the standard library's URL parser (an independent reading)."""
    host = urlsplit(value if "://" in value else "//" + value).hostname
    return host.rstrip(".") if host else None


def test_endpoint_urls_are_read_as_their_hosts() -> None:
    for path in OTLP:
        rows = _rows(path)
        for span in _raw_spans(path):
            attrs = _attrs(span)
            written = [
                attrs[k]
                for k in ("server.address", "url.full", "gen_ai.openai.api_base", "api_base")
                if k in attrs and attrs[k].lower() not in table().placeholders
            ]
            row = rows[span["spanId"]]
            assert row["endpoint"] == (_url_host(written[0]) if written else None), path.name


def test_a_vendor_host_names_the_provider_a_framework_name_does_not() -> None:
    rows = _rows(EVIDENCE / "semantic_kernel.json")
    by_name = {r["name"]: r for r in rows.values()}
    mini = by_name["chat gpt-4o-mini"]  # provider written as microsoft.agent_framework
    assert (mini["provider"], mini["endpoint"]) == (
        "azure.ai.openai",
        "myresource.openai.azure.com",
    )
    assert "provider=derived:endpoint" in mini["evidence"]
    litellm = next(iter(_rows(EVIDENCE / "litellm.json").values()))  # gen_ai.system = litellm
    assert (litellm["provider"], litellm["endpoint"]) == ("anthropic", "api.anthropic.com")
    local = by_name["chat local"]  # server.address "Unknown", url.full names the host
    assert (local["provider"], local["endpoint"]) == ("openai", "::1")


def test_first_token_times_from_events_and_attributes() -> None:
    for name, source in (
        ("openinference", "First Token Stream Event"),
        ("openllmetry", "llm.content.completion.chunk"),
    ):
        path = EVIDENCE / f"{name}.json"
        rows = _rows(path)
        for span in _raw_spans(path):
            events = [e for e in span.get("events", []) if e["name"] == source]
            if not events:
                continue
            want = (int(events[0]["timeUnixNano"]) - int(span["startTimeUnixNano"])) / 1e6
            row = rows[span["spanId"]]
            assert row["ttft_ms"] == pytest.approx(want)
            assert f"ttft_ms=event:{source}" in row["evidence"]
    span = _raw_spans(EVIDENCE / "openlit.json")[0]
    seconds = _attrs(span)["gen_ai.server.time_to_first_token"]
    assert _rows(EVIDENCE / "openlit.json")[span["spanId"]]["ttft_ms"] == seconds * 1000


def test_usage_objects_and_json_encoded_values() -> None:
    cases = {
        "litellm.json": ("gen_ai.usage", "prompt_tokens", "completion_tokens"),
        "openllmetry.json": ("llm.usage", "input_tokens", "output_tokens"),
        "mlflow.json": ("mlflow.chat.tokenUsage", "input_tokens", "output_tokens"),
        "langfuse_otel.json": ("langfuse.observation.usage_details", "input", "output"),
    }
    for name, (key, inp, out) in cases.items():
        rows = _rows(EVIDENCE / name)
        for span in _raw_spans(EVIDENCE / name):
            attrs = _attrs(span)
            if key not in attrs:
                continue
            usage = json.loads(attrs[key])
            row = rows[span["spanId"]]
            assert (row["input_tokens"], row["output_tokens"]) == (usage[inp], usage[out]), name
            assert row["kind"] == "llm"
    # MLflow writes every value JSON-encoded: the span type and the model read decoded
    rows = _rows(EVIDENCE / "mlflow.json")
    for span in _raw_spans(EVIDENCE / "mlflow.json"):
        attrs = _attrs(span)
        row = rows[span["spanId"]]
        kind = {"CHAT_MODEL": "llm", "TOOL": "tool", "AGENT": "task"}[
            json.loads(attrs["mlflow.spanType"])
        ]
        assert row["kind"] == kind
        if "gen_ai.request.model" in attrs:
            assert row["request_model"] == json.loads(attrs["gen_ai.request.model"])


def test_a_stream_log_ends_its_call_and_is_no_call() -> None:
    path = EVIDENCE / "logfire.json"
    rows = _rows(path)
    spans = _raw_spans(path)
    log = next(s for s in spans if _attrs(s).get("logfire.span_type") == "log")
    chats = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "chat"]
    assert rows[log["spanId"]]["kind"] == "other"
    assert [r["kind"] for r in rows.values()].count("llm") == len(chats)
    # the call that ended last before the log ends at the log's time
    log_ns = int(log["startTimeUnixNano"])
    before = max(
        (c for c in chats if int(c["endTimeUnixNano"]) <= log_ns),
        key=lambda c: int(c["endTimeUnixNano"]),
    )
    row = rows[before["spanId"]]
    assert row["end_us"] == log_ns // 1000
    assert row["duration_ms"] == (log_ns - int(before["startTimeUnixNano"])) / 1e6
    assert "end_us=stream_log" in row["evidence"]
    for other in chats:
        if other is not before:
            want = (int(other["endTimeUnixNano"]) - int(other["startTimeUnixNano"])) / 1e6
            assert rows[other["spanId"]]["duration_ms"] == want


def test_the_openai_agents_trace_export() -> None:
    path = EVIDENCE / "openai_agents.json"
    assert detect(path) == "openai_agents"
    items = json.loads(path.read_text())["data"]
    spans = [i for i in items if i["object"] == "trace.span"]
    rows = {r["span_id"]: r for r in read_openai_agents(path).to_pylist()}
    assert len(rows) == len(spans)  # the trace object is no span
    kinds = {"agent": "task", "response": "llm", "generation": "llm", "function": "tool"}
    for span in spans:
        row = rows[span["id"]]
        data = span["span_data"]
        assert row["kind"] == kinds[data["type"]]
        assert row["task_id"] == span["trace_id"]
        usage = data.get("usage") or {}
        assert (row["input_tokens"], row["output_tokens"]) == (
            usage.get("input_tokens"),
            usage.get("output_tokens"),
        )
        assert row["request_model"] == data.get("model")
        assert (row["status"] != "ok") == (span["error"] is not None)
    traces = ingest([path])
    assert traces.quality.to_dict()["rows_set_aside"] == 0


def _lines(tmp_path: Path) -> list[Path]:
    """Every OTLP fixture as one line of one JSON-lines file (one slice, one engine query)."""
    lines = tmp_path / "evidence.jsonl"
    lines.write_text("".join(json.dumps(json.loads(p.read_text())) + "\n" for p in OTLP))
    return [lines]


def _parity(paths: list[Path], engine: Engine) -> None:
    with EngineSession(EngineConfig(engine=engine)) as session:
        read = read_otlp_lines(session, paths)
        assert read.to_python == ()
        assert read.spans is not None
        got = read.spans.to_pyarrow()
    want = pa.concat_tables([read_otlp(p) for p in paths])
    order = [("source_file", "ascending"), ("source_ref", "ascending")]
    got, want = got.sort_by(order), want.sort_by(order)
    for name in COLUMN_NAMES:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


def test_engine_reads_every_fact_as_python_does(tmp_path: Path) -> None:
    _parity(_lines(tmp_path), Engine.DUCKDB)


@pytest.mark.slow
def test_spark_reads_every_fact_as_python_does(tmp_path: Path) -> None:
    _parity(_lines(tmp_path), Engine.SPARK)


_URLISH = st.text(alphabet="aAbZ09.-:/@[]?#_ \t", max_size=24)


@settings(max_examples=25, deadline=None)
@given(st.lists(_URLISH, min_size=1, max_size=30))
@example(["Host..", "[::1]:80", "http://u@B:1/x", "[]", "a:b:c", " unknown "])
def test_host_normaliser_is_the_same_in_the_engine(values: list[str]) -> None:
    placeholders = table().placeholders
    t = ibis.memtable({"v": values}, schema={"v": "string"})
    con = duckdb_connect()
    got = con.execute(t.select(h=host_expr(t.v, placeholders)))["h"].tolist()
    got = [None if g is None or g != g else g for g in got]
    assert got == [host_of(v, placeholders) for v in values]


_BLANKISH = st.text(alphabet=" \t\n\r\x0b\x0c\x01\x1c\u00a0\u2028!vfa", max_size=6)


@settings(max_examples=40, deadline=None)
@given(st.lists(_BLANKISH, max_size=40))
@example(["", " ", "!", "\x01", "\x01 ", " !", "\u00a0"])
def test_blank_is_the_same_in_the_engine(values: list[str]) -> None:
    t = ibis.memtable({"v": values}, schema={"v": "string"})
    got = duckdb_connect().execute(t.select(b=blank_expr(t.v)))["b"].tolist()
    assert [bool(g) for g in got] == [blank(v) for v in values]


@pytest.mark.parametrize(
    ("written", "host"),
    [
        ("https://API.OpenAI.com/v1/", "api.openai.com"),
        ("http://localhost:8080/v1/", "localhost"),
        ("http://user:pw@example.com.:443/x?y#z", "example.com"),
        ("[2001:db8::1]:4000", "2001:db8::1"),
        ("api.anthropic.com", "api.anthropic.com"),
        ("Unknown", None),
        ("", None),
    ],
)
def test_host_of(written: str, host: str | None) -> None:
    assert host_of(written, table().placeholders) == host
    if host is not None:
        assert _url_host(written) == host  # the standard library reads the same host
        assert host_key(written) == host  # and a contract's scope compares that key


def test_inspect_names_each_facts_source_and_what_lacks_it() -> None:
    from slacheck.trace.inspect import summarize

    paths = [EVIDENCE / "semantic_kernel.json", EVIDENCE / "logfire.json"]
    summary = summarize(ingest(paths))
    facts = {f.field: f for f in summary.facts}
    calls = [
        (span, _attrs(span))
        for p in paths
        for span in _raw_spans(p)
        if _attrs(span).get("gen_ai.operation.name", "").startswith("chat")
        and _attrs(span).get("logfire.span_type") != "log"
    ]
    assert facts["provider"].spans == len(calls)
    derived = [a for _, a in calls if a.get("gen_ai.provider.name") == "microsoft.agent_framework"]
    assert dict(facts["provider"].sources)["derived:endpoint"] == len(derived)
    no_host = [a for _, a in calls if not any(k in a for k in ("server.address", "url.full"))]
    assert facts["endpoint"].missing == len(no_host)
    assert dict(facts["end_us"].sources)["stream_log"] == 1
    assert facts["ttft_ms"].missing == len(calls)
    assert summary.to_dict()["facts"]["provider"]["missing"] == 0


def test_a_first_token_after_the_spans_end_extends_it() -> None:
    path = EVIDENCE / "openinference.json"
    rows = _rows(path)
    for span in _raw_spans(path):
        first = min(int(e["timeUnixNano"]) for e in span["events"])
        end = max(int(span["endTimeUnixNano"]), first)
        row = rows[span["spanId"]]
        assert row["end_us"] == end // 1000
        assert row["duration_ms"] == (end - int(span["startTimeUnixNano"])) / 1e6
        assert ("end_us=first_token" in row["evidence"]) == (first > int(span["endTimeUnixNano"]))


def test_exporter_batches_as_json_lines(tmp_path: Path) -> None:
    from slacheck.trace.langsmith import read_langsmith

    agents = tmp_path / "agents.jsonl"
    items = json.loads((EVIDENCE / "openai_agents.json").read_text())["data"]
    agents.write_text(
        json.dumps({"data": items[:2]}) + "\n" + json.dumps({"data": items[2:]}) + "\n"
    )
    assert detect(agents) == "openai_agents"
    keep = ["span_id", "kind", "start_us", "end_us", "input_tokens", "status"]
    one = read_openai_agents(EVIDENCE / "openai_agents.json").select(keep)
    assert read_openai_agents(agents).select(keep).equals(one)
    # LangSmith's /runs/batch bodies, a run's post and its patch in different lines
    doc = Path(__file__).parent / "data" / "real" / "langsmith" / "langsmith_py_wrap_openai_.json"
    payload = json.loads(doc.read_text())
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        json.dumps({"post": payload.get("post", [])})
        + "\n"
        + json.dumps({"patch": payload.get("patch", [])})
        + "\n"
    )
    assert detect(runs) == "langsmith"
    keep = ["span_id", "kind", "start_us", "end_us", "input_tokens", "ttft_ms"]
    assert read_langsmith(runs).select(keep).equals(read_langsmith(doc).select(keep))
