"""Canonical spans written as the exports slacheck reads: Parquet as it is, OTLP JSON lines as
the OpenTelemetry file exporter writes them, and a Langfuse observation export. The output
formats of the synthetic generator (``generate.write``); each says what its format cannot carry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from slacheck.trace.schema import Kind, Status


def write_parquet(table: pa.Table, path: Path) -> None:
    """The canonical table as it is, zstd-compressed."""
    pq.write_table(table, path, compression="zstd")


def _rows(table: pa.Table, batch: int = 10_000) -> Iterator[dict[str, Any]]:
    for rb in table.to_batches(max_chunksize=batch):
        yield from rb.to_pylist()


def _str(v: str) -> dict[str, Any]:
    return {"stringValue": v}


def _int(v: int) -> dict[str, Any]:
    return {"intValue": str(v)}  # the proto JSON mapping writes int64 as a string


def _double(v: float) -> dict[str, Any]:
    return {"doubleValue": v}


def _ms_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(v)


def _otlp_span(r: dict[str, Any]) -> dict[str, Any]:
    attrs: list[tuple[str, dict[str, Any]]] = []
    if r["operation"] is not None:
        attrs.append(("gen_ai.operation.name", _str(r["operation"])))
    if r["kind"] == Kind.TOOL and r["name"] is not None:
        attrs.append(("gen_ai.tool.name", _str(r["name"].removeprefix("tool."))))
    strings = (
        ("gen_ai.provider.name", "provider"),
        ("gen_ai.request.model", "request_model"),
        ("gen_ai.response.model", "response_model"),
        ("server.address", "endpoint"),
        ("cloud.region", "region"),
        ("error.type", "error_type"),
        ("openai.response.service_tier", "service_tier"),
    )
    attrs += [(key, _str(r[col])) for key, col in strings if r[col] is not None]
    ints = (
        ("gen_ai.usage.input_tokens", "input_tokens"),
        ("gen_ai.usage.output_tokens", "output_tokens"),
        ("gen_ai.usage.cache_read.input_tokens", "cached_tokens"),
        ("http.response.status_code", "http_status"),
    )
    attrs += [(key, _int(r[col])) for key, col in ints if r[col] is not None]
    if r["attempt"] is not None:
        # resend_count alone cannot tell a first attempt from an unrecorded one
        attrs.append(("slacheck.attempt", _int(r["attempt"])))
        if r["attempt"] > 1:
            attrs.append(("http.request.resend_count", _int(r["attempt"] - 1)))
    if r["ttft_ms"] is not None:
        attrs.append(("gen_ai.response.time_to_first_chunk", _double(r["ttft_ms"] / 1000.0)))
    if r["server_ms"] is not None:
        attrs.append(
            (
                "http.response.header.openai-processing-ms",
                {"arrayValue": {"values": [_str(_ms_text(r["server_ms"]))]}},
            )
        )
    for key, col in (("slacheck.queue_ms", "queue_ms"), ("slacheck.network_ms", "network_ms")):
        if r[col] is not None:
            attrs.append((key, _double(r[col])))
    if r["response_cached"] is not None:
        attrs.append(("slacheck.response_cached", {"boolValue": r["response_cached"]}))

    span: dict[str, Any] = {"traceId": r["task_id"], "spanId": r["span_id"]}
    if r["parent_span_id"] is not None:
        span["parentSpanId"] = r["parent_span_id"]
    span["name"] = r["name"] or ""
    span["kind"] = 3 if r["kind"] == Kind.LLM else 1
    # proto3 JSON omits a field it has no value for; a reader sees a missing timestamp
    if r["start_us"] is not None:
        span["startTimeUnixNano"] = str(r["start_us"] * 1000)
    if r["end_us"] is not None:
        span["endTimeUnixNano"] = str(r["end_us"] * 1000)
    span["attributes"] = [{"key": key, "value": value} for key, value in attrs]
    if r["status"] not in (None, Status.OK):
        span["status"] = {"code": 2, "message": r["error_type"] or r["status"]}
    else:
        span["status"] = {}
    return span


def write_otlp(table: pa.Table, path: Path, per_line: int = 1000) -> None:
    """OTLP JSON lines, as the OpenTelemetry file exporter writes them: one
    ``{"resourceSpans": [...]}`` per line, up to ``per_line`` spans each, GenAI semantic
    conventions for the attributes.

    Skipped: rows with a null ``task_id`` or ``span_id`` (OTLP requires both). A null start or
    end is written as an absent ``*TimeUnixNano`` field (proto3 JSON's way to say 0).
    Not carried: ``source_file``, ``source_ref``, ``defect``; ``status`` is carried as span
    status code 2 plus ``error.type`` / ``http.response.status_code``.
    """
    resource = {"attributes": [{"key": "service.name", "value": _str("slacheck-generate")}]}
    scope = {"name": "slacheck.trace.generate", "version": "1"}

    def flush(out: Any, spans: list[dict[str, Any]]) -> None:
        doc = {
            "resourceSpans": [
                {"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}
            ]
        }
        out.write(json.dumps(doc, separators=(",", ":")))
        out.write("\n")

    with path.open("w", encoding="utf-8") as out:
        spans: list[dict[str, Any]] = []
        for r in _rows(table):
            if r["task_id"] is None or r["span_id"] is None:
                continue
            spans.append(_otlp_span(r))
            if len(spans) == per_line:
                flush(out, spans)
                spans = []
        if spans:
            flush(out, spans)


_LANGFUSE_TYPE = {
    Kind.TASK: "AGENT",
    Kind.LLM: "GENERATION",
    Kind.TOOL: "TOOL",
    Kind.RETRIEVAL: "RETRIEVER",
}


def _iso_ms(us: pa.Array) -> list[str | None]:
    """µs since the epoch → ISO-8601 with milliseconds and "Z" (sub-ms is truncated)."""
    values = us.to_numpy(zero_copy_only=False)
    valid = ~pc.is_null(us).to_numpy(zero_copy_only=False)
    stamps = (
        np.where(valid, values, 0)
        .astype(np.int64)
        .astype("datetime64[us]")
        .astype("datetime64[ms]")
    )
    text = np.char.add(np.datetime_as_string(stamps, unit="ms"), "Z")
    return [t if ok else None for t, ok in zip(text.tolist(), valid.tolist(), strict=True)]


def write_langfuse(table: pa.Table, path: Path) -> None:
    """A JSON list of Langfuse observations (the shape of Langfuse's observation export).

    ``type`` is AGENT, GENERATION, TOOL, RETRIEVER or SPAN; times are ISO-8601 with
    milliseconds and "Z" (truncated), so sub-millisecond precision is lost, for TTFT too
    (``completionStartTime`` = start + ttft); ``model`` is the requested model;
    ``usageDetails`` holds input, output and cache_read_input_tokens; ``level`` is "ERROR" for
    a non-ok span, whose ``statusMessage`` is its error type. ``metadata`` (a JSON string, as
    Langfuse stores OTel spans) keeps the attributes Langfuse users commonly have there: the
    operation name and the request and response models.
    Lost in this format (Langfuse has no field for them): queue, network and server time,
    region, provider, endpoint, HTTP status, service tier, attempt, the response-cache flag,
    and ``source_file`` / ``source_ref``.
    Skipped: rows with a null ``task_id`` or ``span_id`` (Langfuse requires both); a null
    start or end is written as null.
    """
    starts = _iso_ms(table.column("start_us").combine_chunks())
    ends = _iso_ms(table.column("end_us").combine_chunks())
    ttft_us = pc.add(
        table.column("start_us"),
        pc.cast(pc.round(pc.multiply(table.column("ttft_ms"), 1000.0)), pa.int64()),
    )
    completion = _iso_ms(ttft_us.combine_chunks())
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        first = True
        for i, r in enumerate(_rows(table)):
            if r["task_id"] is None or r["span_id"] is None:
                continue
            usage = {
                key: r[col]
                for key, col in (
                    ("input", "input_tokens"),
                    ("output", "output_tokens"),
                    ("cache_read_input_tokens", "cached_tokens"),
                )
                if r[col] is not None
            }
            failed = r["status"] not in (None, Status.OK)
            # what an OTel-instrumented app's span attributes leave in Langfuse's metadata
            attributes = {
                key: r[col]
                for key, col in (
                    ("gen_ai.operation.name", "operation"),
                    ("gen_ai.request.model", "request_model"),
                    ("gen_ai.response.model", "response_model"),
                )
                if r[col] is not None
            }
            obs = {
                "id": r["span_id"],
                "traceId": r["task_id"],
                "parentObservationId": r["parent_span_id"],
                "type": _LANGFUSE_TYPE.get(r["kind"], "SPAN"),
                "name": r["name"],
                "startTime": starts[i],
                "endTime": ends[i],
                "completionStartTime": completion[i],
                "model": r["request_model"],
                "usageDetails": usage,
                "level": "ERROR" if failed else "DEFAULT",
                "statusMessage": (r["error_type"] or r["status"]) if failed else None,
                "metadata": json.dumps({"attributes": attributes}),
            }
            out.write("\n" if first else ",\n")
            out.write(json.dumps(obs, separators=(",", ":")))
            first = False
        out.write("\n]\n")
