"""Bulk exports in their tools' own layouts (tests/data/exports, see PROVENANCE.md) read through
the built-in mappings, detected and with ``--mapping``: every fact per call, held to figures
computed here from the file's own columns, and decided verdicts on a scoped contract."""

from __future__ import annotations

import csv
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.errors import TraceInputError
from slacheck.trace.ingest import ingest
from slacheck.trace.normalise import host_expr, host_of
from slacheck.trace.tabular import Mapping, load_mapping

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "exports"
MAPPINGS = ROOT / "slacheck" / "trace" / "mappings"
runner = CliRunner()


# -- what the files say, read here without slacheck -----------------------------------------


def _ts(text: object) -> float | None:
    """A timestamp as written (ISO text, maybe JSON-quoted, or a datetime) → epoch ms."""
    if text in (None, ""):
        return None
    if isinstance(text, datetime):
        value = text
    else:
        raw = str(text).strip().strip('"')
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    if value.tzinfo is None:  # naive timestamps are UTC
        value = value.replace(tzinfo=UTC)
    return value.timestamp() * 1000


def _host(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url if "//" in url else "//" + url)
    return parts.hostname


def _gap(a: object, b: object) -> float | None:
    start, end = _ts(a), _ts(b)
    return None if start is None or end is None else round(end - start, 3)


def _json(text: object) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    return json.loads(text) if text else {}


def langfuse_expected(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for r in rows:
        if r["type"] != "GENERATION":
            continue
        attrs = _json(r["metadata"]).get("attributes", {})
        usage = _json(r["usageDetails"])
        code = attrs.get("http.response.status_code")
        out[r["id"]] = {
            "ttft_ms": _gap(r["startTime"], r["completionStartTime"]),
            "duration_ms": _gap(r["startTime"], r["endTime"]),
            "provider": attrs.get("gen_ai.system"),
            "endpoint": _host(attrs.get("server.address")),
            "request_model": r["model"],
            "response_model": attrs.get("gen_ai.response.model"),
            "input_tokens": usage.get("input"),
            "output_tokens": usage.get("output"),
            "failed": r["level"] == "ERROR",
            "http_status": None if code in (None, "") else int(code),
            "error_type": attrs.get("error.type"),
        }
    return out


def langsmith_expected(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for r in pq.read_table(path).to_pylist():
        if r["run_type"] != "llm":
            continue
        extra = _json(r["extra"])
        out[r["id"]] = {
            "ttft_ms": _gap(r["start_time"], r["first_token_time"]),
            "duration_ms": _gap(r["start_time"], r["end_time"]),
            "provider": extra["metadata"]["ls_provider"],
            "endpoint": _host(extra["invocation_params"]["base_url"]),
            "request_model": extra["metadata"]["ls_model_name"],
            "input_tokens": r["prompt_tokens"],
            "output_tokens": r["completion_tokens"],
            "failed": r["status"] == "error",
            "error_type": r["error"].split("(")[0] if r["error"] else None,
        }
    return out


def litellm_expected(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for r in rows:
        info = _json(r["metadata"]).get("error_information", {})
        out[r["request_id"]] = {
            "ttft_ms": _gap(r["startTime"], r["completionStartTime"]),
            "duration_ms": _gap(r["startTime"], r["endTime"]),
            "provider": r["custom_llm_provider"],
            "endpoint": _host(r["api_base"]),
            "request_model": r["model_group"],
            "input_tokens": int(r["prompt_tokens"]),
            "output_tokens": int(r["completion_tokens"]),
            "response_cached": str(r["cache_hit"]) == "True",
            "failed": r["status"] == "failure",
            "http_status": int(info["error_code"]) if info.get("error_code") else None,
            "error_type": info.get("error_class"),
        }
    return out


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _jsonl_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


CASES = {
    "langfuse-csv": (
        DATA / "langfuse_observations.csv",
        "langfuse_export.yaml",
        "langfuse-export",
        lambda p: langfuse_expected(_csv_rows(p)),
    ),
    "langfuse-jsonl": (
        DATA / "langfuse_observations.jsonl",
        "langfuse_export.yaml",
        None,  # detected as Langfuse JSON lines: the Python reader's
        lambda p: langfuse_expected(_jsonl_rows(p)),
    ),
    "langsmith-parquet": (
        DATA / "langsmith_runs.parquet",
        "langsmith_runs.yaml",
        "langsmith-runs",
        langsmith_expected,
    ),
    "litellm-csv": (
        DATA / "litellm_spendlogs.csv",
        "litellm_spendlogs.yaml",
        "litellm-spendlogs",
        lambda p: litellm_expected(_csv_rows(p)),
    ),
    "litellm-parquet": (
        DATA / "litellm_spendlogs.parquet",
        "litellm_spendlogs.yaml",
        "litellm-spendlogs",
        lambda p: litellm_expected(pq.read_table(p).to_pylist()),
    ),
}


def _calls(traces: Any) -> dict[str, dict[str, Any]]:
    df = traces.spans.execute()
    out = {}
    for row in df[df.kind == "llm"].to_dict("records"):
        clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
        out[clean["span_id"]] = clean
    return out


def _agrees(got: dict[str, Any], want: dict[str, Any]) -> None:
    for key, value in want.items():
        if key == "failed":
            assert (got["status"] not in ("ok", None)) is value, (key, got["status"])
            continue
        actual = got[key]
        if isinstance(value, float) and actual is not None:
            assert actual == pytest.approx(value), key
        elif isinstance(value, int) and not isinstance(value, bool) and actual is not None:
            assert int(actual) == value, key
        else:
            assert actual == value, (key, actual, value)


# detection picks the shipped mapping (the Langfuse JSON lines go to the Python reader), so the
# mapping is given by hand only where that reads the file another way
_HOW = [(case, "detected") for case in CASES] + [("langfuse-jsonl", "mapping")]


@pytest.mark.parametrize(("case", "how"), _HOW)
def test_every_call_fact_is_read_from_the_export(case: str, how: str) -> None:
    path, mapping_file, name, expected = CASES[case]
    if how == "mapping":
        traces = ingest([path], mapping=load_mapping(MAPPINGS / mapping_file), fmt="table")
    else:
        traces = ingest([path])
        if name is not None:
            assert traces.sources[0].format == name
    assert traces.quality.set_aside == {}
    want = expected(path)
    got = _calls(traces)
    assert set(got) == set(want)
    for span_id, facts in want.items():
        if how == "detected" and name is None:
            # the Python reader's endpoint is the facts layer's to normalise
            facts = {k: v for k, v in facts.items() if k != "endpoint"}
        _agrees(got[span_id], facts)


CONTRACT = """\
contract:
  id: exports-test
  vendor: OpenAI
  customer: Acme
  effective: {start: 2026-11-01, end: 2027-10-31}
  time_zone: UTC
scope:
  providers: [openai]
  models: [gpt-4o]
  endpoints: [api.openai.com]
latency:
  - id: ttft-1000
    measurement_point: time_to_first_token
    objective: {kind: occurrence, percentile: 95, threshold: 1000, method: nearest_rank}
  - id: ttft-2000
    measurement_point: time_to_first_token
    objective: {kind: occurrence, percentile: 95, threshold: 2000, method: nearest_rank}
availability:
  target_percent: 99.0
  failures: {throttling_below_limit: false}
"""


def _nearest_rank(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(p * len(ordered) / 100) - 1]


@pytest.mark.parametrize("case", ["langfuse-csv", "langsmith-parquet", "litellm-csv"])
def test_a_scoped_contract_gets_decided_verdicts(case: str, tmp_path: Path) -> None:
    path, mapping_file, _, expected = CASES[case]
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    args = ["check", str(contract), str(path), "--format", "json"]
    if case == "langsmith-parquet":  # the CLI's --mapping, with the shipped file
        args += ["--mapping", str(MAPPINGS / mapping_file)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output  # availability is breached
    terms = {t["id"]: t for t in json.loads(result.stdout)["terms"]}
    want = expected(path)
    # a gateway cache hit never reached the vendor: outside vendor terms (readings.cache_hits)
    ok = [f for f in want.values() if not f["failed"] and not f.get("response_cached")]
    p95 = _nearest_rank([f["ttft_ms"] for f in ok], 95)
    for threshold in (1000, 2000):
        ttft = terms[f"ttft-{threshold}"]
        assert (ttft["observed"], ttft["total"]) == (pytest.approx(p95), len(ok))
        assert ttft["verdict"] == ("met" if p95 <= threshold else "breached")
    availability = terms["availability"]
    assert availability["verdict"] == "breached"
    vendor_5xx = [
        f
        for f in want.values()
        if f["failed"]
        and (
            (f.get("http_status") or 0) >= 500
            or str(f.get("error_type") or "").endswith("InternalServerError")
        )
    ]
    assert availability["total"] - availability["good"] >= len(vendor_5xx) > 0


# -- the mapping features --------------------------------------------------------------------


def _mapping(text: str, tmp_path: Path) -> Mapping:
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8")
    return load_mapping(path)


def test_mapping_features_on_a_gateway_table(tmp_path: Path) -> None:
    table = tmp_path / "gw.csv"
    table.write_text(
        "id,start,first,end,base,meta,code\n"
        "r1,2026-07-01T00:00:00Z,2026-07-01T00:00:00.250Z,2026-07-01T00:00:01Z,"
        'http://GW.internal:4000/v1/,"{""usage"": {""in"": 12.0}, ""err"": {""class"": '
        '""RateLimitError""}}",\n'
        "r2,2026-07-01T00:00:02Z,,2026-07-01T00:00:03Z,,not json,503\n",
        encoding="utf-8",
    )
    mapping = _mapping(
        """\
columns:
  task_id: id
  span_id: id
  kind: {value: llm}
  start_us: start
  end_us: end
  ttft_ms: {between: [start, first]}
  endpoint: {column: base, normalise: host}
  provider: {first_of: [{column: meta, json: provider}, {value: acme}]}
  input_tokens: {column: meta, json: usage.in}
  error_type: {column: meta, json: [err, class]}
  http_status: code
""",
        tmp_path,
    )
    traces = ingest([table], mapping=mapping, fmt="table")
    assert traces.quality.set_aside == {}
    got = _calls(traces)
    assert got["r1"]["ttft_ms"] == 250.0 and got["r2"]["ttft_ms"] is None
    assert got["r1"]["endpoint"] == "gw.internal" and got["r2"]["endpoint"] is None
    assert got["r1"]["provider"] == "acme"
    assert got["r1"]["input_tokens"] == 12 and got["r2"]["input_tokens"] is None
    # the shared classification: an error class, an HTTP status
    assert got["r1"]["status"] == "throttled" and got["r1"]["error_type"] == "RateLimitError"
    assert got["r2"]["status"] == "vendor_error" and got["r2"]["http_status"] == 503


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("columns: {ttft_ms: {column: a, value: 1}}", "exactly one of"),
        ("columns: {input_tokens: {between: [a, b]}}", "for a *_ms field only"),
        ("columns: {input_tokens: {column: a, normalise: host}}", "a host is text"),
        ("columns: {status: {column: s, values: {x: broken}}}", "is not a status"),
        ("columns: {provider: {json: a.b}}", "exactly one of"),
    ],
)
def test_a_bad_mapping_names_the_field(text: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(TraceInputError) as err:
        _mapping(text, tmp_path)
    assert says in str(err.value)


def test_a_missing_column_inside_a_spec_is_named(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("id,start,end\nr1,2026-07-01T00:00:00Z,2026-07-01T00:00:01Z\n")
    mapping = _mapping(
        "columns: {task_id: id, span_id: id, start_us: start, end_us: end, "
        "ttft_ms: {between: [start, first_chunk]}}",
        tmp_path,
    )
    with pytest.raises(TraceInputError) as err:
        ingest([table], mapping=mapping, fmt="table")
    (problem,) = err.value.problems
    assert problem.field == "columns.ttft_ms" and "first_chunk" in problem.message


# -- the host normaliser: the engine expression is the Python function -----------------------

_HOSTS = st.sampled_from(["api.openai.com", "GW.local", "10.0.0.7", "[::1]", "host.", ""])
_URLS = st.builds(
    lambda scheme, user, host, port, path: f"{scheme}{user}{host}{port}{path}",
    st.sampled_from(["", "http://", "https://", "HTTPS://"]),
    st.sampled_from(["", "key:secret@"]),
    _HOSTS,
    st.sampled_from(["", ":443", ":4000", ":"]),
    st.sampled_from(["", "/", "/v1/", "/v1?x=1", "#f", "/a@b"]),
)


_CON: list[Any] = []


@settings(max_examples=25, deadline=None)
@given(st.lists(_URLS, min_size=1, max_size=40))
def test_host_expression_is_the_python_normaliser(urls: list[str]) -> None:
    import ibis

    from slacheck.engine import duckdb_connect

    if not _CON:
        _CON.append(duckdb_connect())
    t = ibis.memtable({"u": urls})
    got = _CON[0].execute(t.select(h=host_expr(t.u)))["h"].tolist()
    assert [None if g is None or g != g else g for g in got] == [host_of(u) for u in urls]


def test_host_of_reads_urls_as_urllib_does() -> None:
    for url in ("http://Proxy.local:4000/v1/", "https://u:p@api.openai.com/v1", "api.x.com:443"):
        assert host_of(url) == _host(url)
    assert host_of("[::1]:8080") == "::1" and host_of("  ") is None and host_of(None) is None
