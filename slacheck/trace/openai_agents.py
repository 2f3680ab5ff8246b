"""Read the OpenAI Agents SDK's own trace export (``agents.tracing``): the ``trace`` and
``trace.span`` objects its exporter sends (``{"data": [...]}``), a list of them, or JSON lines of
them. Spans carry ``span_data`` with a ``type`` (generation, response, function, agent,
handoff, guardrail, custom, …); which type is which kind, and which keys fill which column,
are the ``openai_agents`` rows of the conventions table."""

from __future__ import annotations

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
)
from slacheck.trace.schema import Kind
from slacheck.trace.status import set_status

_EXPECTED = (
    "not an OpenAI Agents trace export: expected {data: [trace and trace.span objects]}, "
    "a list of them or JSON lines of them"
)


def is_agents_record(keys: object) -> bool:
    """Whether an object with these keys is one of the SDK's exported items."""
    if not isinstance(keys, set | frozenset | dict):
        return False
    return "span_data" in keys or ("object" in keys and "workflow_name" in keys)


def read_openai_agents(path: Path) -> pa.Table:
    """Read an OpenAI Agents SDK trace export. ``trace`` objects carry no times and are not
    spans: a span without a parent is a root of its trace (the task)."""
    loaded = load_json(path)
    value = loaded.value
    items: list[tuple[str, object]]
    if loaded.line_numbers is not None:
        # one item a line, or one exporter batch {data: [...]} a line
        items = []
        for n, v in zip(loaded.line_numbers, value, strict=True):
            if isinstance(v, dict) and isinstance(v.get("data"), list):
                items += [(f"line {n}: data[{i}]", x) for i, x in enumerate(v["data"])]
            else:
                items.append((f"line {n}", v))
    elif isinstance(value, dict) and isinstance(value.get("data"), list):
        items = [(f"data[{i}]", v) for i, v in enumerate(value["data"])]
    elif isinstance(value, list):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        raise TraceInputError([problem(path, _EXPECTED, Reason.UNKNOWN_FORMAT)])
    if items and not any(isinstance(v, dict) and is_agents_record(v) for _, v in items):
        raise TraceInputError([problem(path, _EXPECTED, Reason.UNKNOWN_FORMAT)])
    problems: list[Problem] = []
    rows = SpanRows(path)
    for ref, item in items:
        if _is_span(item):
            _add_span(rows, ref, item)
        elif not (isinstance(item, dict) and item.get("object") == "trace"):
            problems.append(problem(path, "not an OpenAI Agents trace or span", field=ref))
    if problems:
        raise TraceInputError(problems)
    return rows.table()


def _is_span(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and "span_data" in value and "trace_id" in value


def _add_span(rows: SpanRows, ref: str, span: dict[str, Any]) -> None:
    defects: list[str] = []
    data = decode_embedded(span.get("span_data"))
    view = {**span, "span_data": data if isinstance(data, dict) else {}}
    reading, claimed = read_span(view, "openai_agents", defects)
    fields = reading.fields
    derive_provider(fields, reading.sources)
    kind, operation = claimed or (Kind.OTHER, None)
    if fields.get("operation") is None:
        fields["operation"] = operation
    error = decode_embedded(span.get("error"))
    failed = error is not None and error != {}
    message = as_text(error.get("message")) if isinstance(error, dict) else as_text(error)
    # SpanError(message, data): the SDK's own words ("Error getting response") in message, the
    # vendor's exception as text in data.error ("Error code: 404 - ..."; the corpus recording,
    # openai-agents 0.24)
    data = decode_embedded(error.get("data")) if isinstance(error, dict) else None
    detail = as_text(data.get("error")) if isinstance(data, dict) else None
    set_status(fields, failed=failed, message=message, exception=(None, detail))
    fields["kind"] = str(kind)
    fields["task_id"] = as_text(span.get("trace_id"))
    fields["span_id"] = as_text(span.get("id"))
    fields["parent_span_id"] = as_text(span.get("parent_id"))
    data_name = view["span_data"].get("name")
    fields["name"] = as_text(data_name) or as_text(view["span_data"].get("type"))
    rows.add(
        ref,
        fields,
        start=span.get("started_at"),
        end=span.get("ended_at"),
        first_token=reading.first_token,
        defects=defects,
        evidence=reading.sources,
    )
