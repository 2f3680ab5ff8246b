"""Read Langfuse observation exports (trace download, list, API page, JSON lines) into spans."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

import pyarrow as pa

from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.trace.conventions import derive_provider, read_span
from slacheck.trace.records import (
    SpanRows,
    as_text,
    decode_embedded,
    load_json,
    problem,
    read_usage,
)
from slacheck.trace.schema import Kind
from slacheck.trace.status import set_status

_TOKEN_FIELDS = ("input_tokens", "output_tokens", "cached_tokens")

_EXPECTED = (
    "not a Langfuse export: expected {trace, observations}, a list of observations, "
    "{data: [observations]} or JSON lines of observations"
)


def read_langfuse(path: Path) -> pa.Table:
    """Read a Langfuse trace download ``{trace, observations}``, a JSON list of observations,
    an API page ``{data: [...]}`` or JSON lines of observations. Durations come from
    ``startTime``/``endTime``, never from ``latency`` (seconds in some exports, ms in others)."""
    loaded = load_json(path)
    value = loaded.value
    problems: list[Problem] = []
    items: list[tuple[str, object]]
    if loaded.line_numbers is not None:
        items = [(f"line {n}", v) for n, v in zip(loaded.line_numbers, value, strict=True)]
    elif isinstance(value, dict) and any(
        isinstance(value.get(key), list) for key in ("observations", "data")
    ):
        # both lists in one file: both are read (a span in both is then a duplicate, counted)
        items = [
            (f"{key}[{i}]", v)
            for key in ("observations", "data")
            if isinstance(value.get(key), list)
            for i, v in enumerate(value[key])
        ]
    elif isinstance(value, list):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        raise TraceInputError([problem(path, _EXPECTED, Reason.UNKNOWN_FORMAT)])
    if items and not any(_is_observation(v) for _, v in items):
        raise TraceInputError([problem(path, _EXPECTED, Reason.UNKNOWN_FORMAT)])
    rows = SpanRows(path)
    for ref, observation in items:
        if _is_observation(observation):
            _add_observation(rows, ref, observation)
        else:
            problems.append(problem(path, "not a Langfuse observation", field=ref))
    if problems:
        raise TraceInputError(problems)
    return rows.table()


def _is_observation(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and "traceId" in value and "startTime" in value


def _metadata_attributes(metadata: object) -> dict[str, object]:
    """Span attributes kept in ``metadata`` (a JSON string in some exports): resource
    attributes, then top-level scalar entries (e.g. ``ls_provider``), then span attributes."""
    metadata = decode_embedded(metadata)
    if not isinstance(metadata, Mapping):
        return {}
    resource = metadata.get("resourceAttributes")
    attributes = metadata.get("attributes")
    return {
        **(resource if isinstance(resource, Mapping) else {}),
        **{k: v for k, v in metadata.items() if isinstance(v, str | int | float | bool)},
        **(attributes if isinstance(attributes, Mapping) else {}),
    }


def _add_observation(rows: SpanRows, ref: str, observation: dict[str, Any]) -> None:
    defects: list[str] = []
    # token counts only from Langfuse's own usage: agent spans repeat their children's sums in
    # gen_ai.usage.* attributes, and Langfuse does not count them
    otel, claimed = read_span(
        _metadata_attributes(observation.get("metadata")),
        "otlp",
        defects,
        skip=_TOKEN_FIELDS,
        name=as_text(observation.get("name")),
    )
    fields = otel.fields
    sources = otel.sources
    usage_details = decode_embedded(observation.get("usageDetails"))
    fields.update(
        read_usage(
            (usage_details, observation.get("usage")),
            defects,
            sources,
            ("usageDetails", "usage"),
        )
    )
    # then Langfuse's own keys (its `model`, `completionStartTime`, `type`) for what is left;
    # the span's own convention knows its kind better than Langfuse's type (Langfuse calls the
    # Vercel AI SDK's ai.generateText wrapper a GENERATION, though only its doGenerate is a call)
    own, by_type = read_span(observation, "langfuse", defects, skip=fields.keys())
    fields.update(own.fields)
    sources.update({k: v for k, v in own.sources.items() if k not in sources})
    if own.first_token is not None:
        sources["ttft_ms"] = own.sources["ttft_ms"]
    derive_provider(fields, sources)
    kind, operation = claimed or by_type or (Kind.OTHER, None)
    if fields.get("operation") is None:
        fields["operation"] = operation
    failed = str(observation.get("level") or "").upper() == "ERROR"
    message = as_text(observation.get("statusMessage"))
    set_status(fields, failed=failed, message=message)
    fields["kind"] = str(kind)
    fields["task_id"] = as_text(observation.get("traceId"))
    fields["span_id"] = as_text(observation.get("id"))
    fields["parent_span_id"] = as_text(observation.get("parentObservationId"))
    fields["name"] = as_text(observation.get("name"))
    rows.add(
        ref,
        fields,
        start=observation.get("startTime"),
        end=observation.get("endTime"),
        first_token=own.first_token if own.first_token is not None else otel.first_token,
        defects=defects,
        evidence=sources,
    )
