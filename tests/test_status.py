"""Status classes read from what real SDKs record: exception classes in ``error.type`` or only in
an exception span event, HTTP codes written in messages; both OTLP readers agree span by span;
the contract's readings of unclassified failures and gateway cache hits, counted and named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from slacheck.checks.availability import availability
from slacheck.checks.latency import latency
from slacheck.cli import app
from slacheck.contract.load import load_contract_text
from slacheck.engine import Engine, EngineConfig, EngineSession
from slacheck.metering.context import CheckContext
from slacheck.trace.conventions import table
from slacheck.trace.ingest import ingest
from slacheck.trace.otlp import read_otlp
from slacheck.trace.otlp_engine import read_otlp_lines
from slacheck.trace.status import classify
from slacheck.verdict import Verdict

runner = CliRunner()

#: per SDK family, as its instrumentations record them: (exception class path, message) of a
#: customer 4xx, and of a vendor failure with the status class it must read as. The classes
#: and message shapes are the SDKs' own (see conventions.yaml's comments for the sources).
FAMILIES: dict[str, dict[str, Any]] = {
    "openai": {
        "customer": (
            "openai.NotFoundError",
            "Error code: 404 - {'error': {'message': 'The model `gpt-9` does not exist', "
            "'type': 'invalid_request_error', 'code': 'model_not_found'}}",
        ),
        "vendor": ("openai.InternalServerError", "Error code: 503 - {'error': 'overloaded'}"),
        "vendor_status": "vendor_error",
    },
    "anthropic": {
        "customer": (
            "anthropic._exceptions.NotFoundError",
            "Error code: 404 - {'type': 'error', 'error': {'type': 'not_found_error', "
            "'message': 'model: claude-9'}}",
        ),
        "vendor": ("anthropic.APITimeoutError", "Request timed out."),
        "vendor_status": "timeout",
    },
    "google-genai": {
        "customer": (
            "google.genai.errors.ClientError",
            "404 NOT_FOUND. {'error': {'code': 404, 'message': 'models/gemini-9 is not found', "
            "'status': 'NOT_FOUND'}}",
        ),
        "vendor": (
            "google.genai.errors.ServerError",
            "503 UNAVAILABLE. {'error': {'code': 503, 'status': 'UNAVAILABLE'}}",
        ),
        "vendor_status": "vendor_error",
        # ClientError is any 4xx, 429 included: its code, in its message, decides
        "class_alone": False,
    },
    "google-api-core": {
        "customer": (
            "google.api_core.exceptions.InvalidArgument",
            "400 Request contains an invalid argument.",
        ),
        "vendor": ("google.api_core.exceptions.DeadlineExceeded", "504 Deadline Exceeded"),
        "vendor_status": "timeout",
    },
    "azure": {
        "customer": (
            "azure.core.exceptions.ResourceNotFoundError",
            "(DeploymentNotFound) The API deployment for this resource does not exist.",
        ),
        "vendor": ("azure.core.exceptions.ServiceResponseTimeoutError", "Read timed out."),
        "vendor_status": "timeout",
    },
    "bedrock": {
        "customer": (
            "botocore.errorfactory.ValidationException",
            "An error occurred (ValidationException) when calling the Converse operation: "
            "The provided model identifier is invalid.",
        ),
        "vendor": (
            "botocore.exceptions.ClientError",
            "An error occurred (ServiceUnavailableException) when calling the Converse "
            "operation: Bedrock is unable to process your request.",
        ),
        "vendor_status": "vendor_error",
    },
    "mistral": {
        "customer": (
            "mistralai.models.sdkerror.SDKError",
            'API error occurred: Status 404. Body: {"object":"error","message":"Invalid model"}',
        ),
        "vendor": ("mistralai.models.sdkerror.SDKError", "API error occurred: Status 502. Body: "),
        "vendor_status": "vendor_error",
        # SDKError is any status: its code, in its message, decides
        "class_alone": False,
    },
    "cohere": {
        "customer": (
            "cohere.errors.not_found_error.NotFoundError",
            "headers: {}, status_code: 404, body: {'message': 'model not found'}",
        ),
        "vendor": (
            "cohere.errors.gateway_timeout_error.GatewayTimeoutError",
            "headers: {}, status_code: 504, body: {}",
        ),
        "vendor_status": "timeout",
    },
    "litellm": {
        "customer": (
            "litellm.exceptions.ContextWindowExceededError",
            "litellm.ContextWindowExceededError: This model's maximum context length is 8192",
        ),
        "vendor": (
            "litellm.exceptions.ServiceUnavailableError",
            "litellm.ServiceUnavailableError: OpenAIException - upstream connect error",
        ),
        "vendor_status": "vendor_error",
    },
}

_T0 = 1_782_900_000_000_000_000  # 2026-07-01, in ns


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(
    task: int,
    *,
    ms: float = 800.0,
    failed: bool = False,
    error_type: str | None = None,
    event: tuple[str, str] | None = None,
    message: str | None = None,
    http: int | None = None,
    http_key: str = "http.response.status_code",
    cached: bool | None = None,
    provider: str = "openai",
) -> dict[str, Any]:
    start = _T0 + task * 60_000_000_000
    attrs = [
        _attr("gen_ai.operation.name", "chat"),
        _attr("gen_ai.provider.name", provider),
        _attr("gen_ai.request.model", "m-1"),
    ]
    if error_type is not None:
        attrs.append(_attr("error.type", error_type))
    if http is not None:
        attrs.append(_attr(http_key, http))
    if cached is not None:
        attrs.append(_attr("slacheck.response_cached", cached))
    span: dict[str, Any] = {
        "traceId": f"{task:032x}",
        "spanId": f"{task:016x}",
        "name": "chat m-1",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + int(ms * 1_000_000)),
        "attributes": attrs,
        "status": {"code": 2, **({"message": message} if message else {})} if failed else {},
    }
    if event is not None:
        span["events"] = [
            {
                "name": "exception",
                "timeUnixNano": str(start),
                "attributes": [
                    _attr("exception.type", event[0]),
                    _attr("exception.message", event[1]),
                ],
            }
        ]
    return span


def _document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def _family_spans() -> tuple[list[dict[str, Any]], dict[int, str]]:
    """Per family: 3 answered calls, a customer 4xx known only by its class in ``error.type``,
    one known only by an exception event, and a vendor failure; with the class each must read.
    A family whose class covers every code (``class_alone`` false) has its message as the span's
    status message too, as OTel instrumentations record ``str(exc)``."""
    spans: list[dict[str, Any]] = []
    want: dict[int, str] = {}
    task = 0
    for name, f in FAMILIES.items():
        for _ in range(3):
            spans.append(_span(task, provider=name))
            want[task] = "ok"
            task += 1
        cls, msg = f["customer"]
        said = None if f.get("class_alone", True) else msg
        spans.append(_span(task, failed=True, error_type=cls, message=said, provider=name))
        want[task] = "customer_error"
        task += 1
        spans.append(_span(task, failed=True, event=f["customer"], provider=name))
        want[task] = "customer_error"
        task += 1
        cls, msg = f["vendor"]
        spans.append(_span(task, failed=True, error_type=cls, event=f["vendor"], provider=name))
        want[task] = f["vendor_status"]
        task += 1
    return spans, want


def _contract(extra: str = "") -> Any:
    text = (
        "contract: {id: S-1, vendor: V, customer: C, effective: {start: '2026-01-01'}}\n"
        "availability: {target_percent: 99.5}\n"
        "latency:\n"
        "  - {id: p95, measurement_point: full_response, "
        "objective: {kind: occurrence, percentile: 95, threshold: 1000}}\n" + extra
    )
    return load_contract_text(text, "contract.yaml")


@pytest.fixture(params=["python", "engine"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which OTLP reader ingestion uses: the Python one (a JSON document) or the engine's
    (JSON lines, every size)."""
    if request.param == "engine":
        monkeypatch.setenv("SLACHECK_OTLP_ENGINE_BYTES", "0")
    return str(request.param)


def _write(folder: Path, reader: str, spans: list[dict[str, Any]]) -> Path:
    doc = _document(spans)
    if reader == "engine":
        path = folder / "traces.jsonl"
        path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    else:
        path = folder / "traces.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_every_family_customer_errors_excluded_vendor_failures_failed(
    tmp_path: Path, reader: str
) -> None:
    spans, want = _family_spans()
    traces = ingest([_write(tmp_path, reader, spans)])
    assert [s.read_by for s in traces.sources] == ["engine" if reader == "engine" else "python"]
    got = traces.spans.select("task_id", "status").to_pyarrow().to_pylist()
    assert {int(r["task_id"], 16): r["status"] for r in got} == want
    (result,) = availability(CheckContext(_contract(), traces))
    families = len(FAMILIES)
    vendor = sum(1 for s in want.values() if s in ("vendor_error", "timeout"))
    assert vendor == families
    assert result.excluded == {"customer_error": 2 * families}
    assert (result.total, result.total - result.good) == (4 * families, families)
    assert result.verdict is Verdict.BREACHED


@pytest.mark.parametrize("key", ["http.response.status_code", "http.status_code"])
def test_an_http_status_alone_classifies_a_failed_call(
    tmp_path: Path, reader: str, key: str
) -> None:
    """The status code in OTel's current attribute or in the deprecated one (HTTP conventions
    before 1.21, which many instrumentations still write): a failed call with only a code is
    classified by it, not left unclassified."""
    codes = {0: 404, 1: 429, 2: 503, 3: 504}
    spans = [_span(t, failed=True, http=code, http_key=key) for t, code in codes.items()]
    traces = ingest([_write(tmp_path, reader, spans)])
    got = traces.spans.select("task_id", "status", "http_status").to_pyarrow().to_pylist()
    assert {int(r["task_id"], 16): (r["status"], r["http_status"]) for r in got} == {
        0: ("customer_error", 404),
        1: ("throttled", 429),
        2: ("vendor_error", 503),
        3: ("timeout", 504),
    }


@pytest.mark.parametrize(
    "cls", ["google.genai.errors.ClientError", "mistralai.models.sdkerror.SDKError", "ClientError"]
)
def test_a_class_of_every_code_alone_is_unclassified_never_the_customers(cls: str) -> None:
    # google-genai's ClientError covers 429; botocore's ClientError every AWS error code
    assert classify(failed=True, error_type=cls, http_status=None) == (
        "unclassified",
        "failure_only",
    )


def test_customer_errors_count_when_the_contract_does_not_exclude_them(tmp_path: Path) -> None:
    spans, _ = _family_spans()
    traces = ingest([_write(tmp_path, "python", spans)])
    contract = _contract("exclusions: {customer_errors: false}\n")
    (result,) = availability(CheckContext(contract, traces))
    families = len(FAMILIES)
    # counted, yet never the vendor's failure
    assert (result.total, result.total - result.good) == (6 * families, families)
    assert result.details["customer_error_calls"] == 2 * families


def test_unclassified_failure_counted_and_makes_a_close_verdict_indeterminate(
    tmp_path: Path, reader: str
) -> None:
    spans = [_span(i) for i in range(199)]
    # a connection error: the SDK cannot say who failed
    spans.append(_span(199, failed=True, error_type="openai.APIConnectionError"))
    path = _write(tmp_path, reader, spans)
    traces = ingest([path])
    (result,) = availability(CheckContext(_contract(), traces))
    # even counted as the vendor's, 199 of 200 = 99.5 % meets the target: decided, and named
    assert result.verdict is Verdict.MET
    assert (result.good, result.total) == (199, 199)
    assert result.details["unclassified_calls"] == 1
    assert result.details["observed_with_unclassified_as_failures"] == 99.5
    assert any("1 failed call no source could classify" in n.text for n in result.notes)
    # a bare failure flag is unclassified too: 199 of 201 would breach, 199 of 199 meets
    spans.append(_span(200, failed=True, message="boom"))
    traces = ingest([_write(tmp_path, reader, spans)])
    (result,) = availability(CheckContext(_contract(), traces))
    assert result.verdict is Verdict.INDETERMINATE
    assert result.details["undecided_calls"] == 2
    vendor = _contract("readings: {unclassified_failures: vendor}\n")
    (result,) = availability(CheckContext(vendor, traces))
    assert (result.verdict, result.good, result.total) == (Verdict.BREACHED, 199, 201)
    excluded = _contract("readings: {unclassified_failures: excluded}\n")
    (result,) = availability(CheckContext(excluded, traces))
    assert (result.verdict, result.excluded) == (Verdict.MET, {"unclassified_failure": 2})


def test_cache_hit_stays_out_of_latency_and_availability(tmp_path: Path, reader: str) -> None:
    # 19 slow calls (1.2 s) and one fast call answered by the gateway's cache (12 ms): were the
    # hit counted, p95 of 20 would still be slow; the point is that it is not counted at all
    spans = [_span(i, ms=900.0) for i in range(19)]
    spans += [_span(19 + i, ms=12.0, cached=True) for i in range(3)]
    traces = ingest([_write(tmp_path, reader, spans)])
    ctx = CheckContext(_contract(), traces)
    (avail,) = availability(ctx)
    assert (avail.total, avail.excluded) == (19, {"cache_hit": 3})
    assert avail.details["cache_hit_calls"] == 3
    assert any("response cache" in n.text for n in avail.notes)
    (lat,) = latency(ctx)
    assert (lat.total, lat.excluded) == (19, {"cache_hit": 3})
    counted = CheckContext(_contract("readings: {cache_hits: counted}\n"), traces)
    (lat,) = latency(counted)
    assert (lat.total, lat.excluded) == (22, {})


def test_check_fields_and_inspect_name_unclassified_failures_and_cache_hits(
    tmp_path: Path,
) -> None:
    spans = [_span(i) for i in range(199)]
    spans.append(_span(199, failed=True, error_type="httpx.ConnectError"))
    spans.append(_span(200, ms=12.0, cached=True))
    spans.append(_span(201, failed=True, event=FAMILIES["openai"]["customer"]))
    path = _write(tmp_path, "python", spans)
    contract = tmp_path / "contract.yaml"
    contract.write_text(
        "contract: {id: S-1, vendor: V, customer: C, effective: {start: '2026-01-01'}}\n"
        "availability: {target_percent: 99.6}\n",
        encoding="utf-8",
    )
    junit = tmp_path / "junit.xml"
    res = runner.invoke(
        app, ["check", str(contract), str(path), "--format", "json", "--junit", str(junit)]
    )
    assert res.exit_code == 1, res.output
    term = json.loads(res.stdout)["terms"][0]
    assert term["verdict"] == "indeterminate"
    notes = " ".join(n["text"] for n in term["notes"])
    assert "1 failed call no source could classify" in notes
    assert "1 call answered from a gateway's response cache" in notes
    assert "no source could classify" in junit.read_text(encoding="utf-8")
    md = runner.invoke(app, ["check", str(contract), str(path), "--format", "md"])
    assert "no source could classify" in md.stdout
    zh = runner.invoke(app, ["check", str(contract), str(path), "--lang", "zh"])
    assert "无法由任何来源判定归属" in zh.stdout
    fields = runner.invoke(app, ["fields", str(contract), str(path), "--format", "json"])
    doc = json.loads(fields.stdout)
    assert doc["call_states"] == {"ok": 199, "unclassified": 1, "cached": 1, "customer_error": 1}
    assert len(doc["status_notes"]) == 2
    inspect = runner.invoke(app, ["traces", "inspect", str(path), "--format", "json"])
    statuses = json.loads(inspect.stdout)["statuses"]
    assert statuses["unclassified"] == {"calls": 1, "by_source": {"error_type:class": 1}}
    assert statuses["customer_error"] == {"calls": 1, "by_source": {"exception_type:class": 1}}
    assert statuses["cached"]["calls"] == 1
    assert statuses["ok"] == {"calls": 199, "by_source": {"none": 199}}


# -- both readers, one rule ----------------------------------------------------------------


def _class_names() -> list[str]:
    return sorted({c.class_ for c in table().status.classes})


_MODULES = ["", "openai.", "openai._exceptions.", "google.genai.errors.", "botocore.errorfactory."]
_CLASS = st.builds(
    lambda m, c, low: (m + c).lower() if low else m + c,
    st.sampled_from(_MODULES),
    st.sampled_from([*_class_names(), "APIError", "HttpResponseError", "ClientError", "Boom"]),
    st.booleans(),
)
_CODE = st.sampled_from([200, 400, 401, 404, 408, 409, 422, 429, 499, 500, 502, 503, 504, 529])
_MESSAGE = st.one_of(
    st.none(),
    st.builds(lambda c: f"Error code: {c} - {{'error': 'x'}}", _CODE),
    st.builds(lambda c: f"API error occurred: Status {c}. Body: ", _CODE),
    st.builds(lambda c: f"{c} NOT_FOUND. {{}}", _CODE),
    st.builds(lambda c: f"status_code={c}", _CODE),
    st.builds(lambda c: f"HTTP/1.1 {c} upstream", _CODE),
    st.builds(
        lambda c: f"An error occurred ({c}) when calling the Converse operation: x",
        st.sampled_from(["ThrottlingException", "ValidationException", "Nope"]),
    ),
    st.builds(lambda c, t: f"{c}('{t}')", _CLASS, st.sampled_from(["x", "rate limit", "timeout"])),
    st.text(alphabet="abc ERT:.()_-0123456789\n", max_size=30),
    st.sampled_from(["Request timed out.", "Connection error.", "Rate limit reached", "  "]),
)
_SPAN = st.fixed_dictionaries(
    {
        "failed": st.booleans(),
        "error_type": st.one_of(st.none(), _CLASS, st.builds(str, _CODE), st.just("_OTHER")),
        "event": st.one_of(st.none(), st.tuples(_CLASS, st.one_of(st.just(""), _MESSAGE))),
        "message": _MESSAGE,
        "http": st.one_of(st.none(), _CODE),
    }
)


# The engine's OTLP reader costs about 12 s of CPU whatever the file's size (compiling and
# planning the conventions table's SQL), and each span is classified on its own: so a few large
# documents, not many small ones (8 examples of up to 40 spans once took 150 s of the suite).
@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_SPAN, min_size=20, max_size=150))
def test_both_readers_classify_every_span_alike(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[dict[str, Any]]
) -> None:
    folder = tmp_path_factory.mktemp("status")
    spans = []
    for i, d in enumerate(drawn):
        event = d["event"]
        if event is not None and event[1] is None:
            event = (event[0], "")
        spans.append(
            _span(
                i,
                failed=d["failed"],
                error_type=d["error_type"],
                event=event,
                message=d["message"],
                http=d["http"],
            )
        )
    doc = json.dumps(_document(spans))
    (folder / "t.json").write_text(doc, encoding="utf-8")
    (folder / "t.jsonl").write_text(doc + "\n", encoding="utf-8")
    python = read_otlp(folder / "t.json")
    with EngineSession(EngineConfig(engine=Engine.DUCKDB)) as session:
        read = read_otlp_lines(session, [folder / "t.jsonl"])
        assert read.spans is not None
        engine = read.spans.to_pyarrow()

    def by_span(t: pa.Table) -> dict[str, tuple[Any, ...]]:
        cols = ("status", "status_source", "error_type")
        return {r["span_id"]: tuple(r[c] for c in cols) for r in t.to_pylist()}

    assert by_span(engine) == by_span(python)
    # and the reader's answer is the rule's, applied to what the span records
    for i, d in enumerate(drawn):
        event = d["event"] or (None, None)
        status, _ = classify(
            failed=d["failed"],
            error_type=d["error_type"],
            http_status=d["http"],
            exception_type=event[0],
            exception_message=event[1],
            message=d["message"] if d["failed"] else None,
        )
        assert by_span(python)[f"{i:016x}"][0] == str(status)
