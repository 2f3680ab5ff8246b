"""Read LiteLLM's ``StandardLoggingPayload`` (what its logging callbacks and integrations are
given as ``standard_logging_object``) into the canonical span table: JSON lines of payloads, or
a JSON list of them. One payload is one call to a model API, so one ``llm`` row.

The fields, as ``litellm/types/utils.py`` declares them: ``startTime``, ``endTime`` and
``completionStartTime`` are epoch **seconds** (floats; LiteLLM writes ``completionStartTime =
endTime`` for a call that was not streamed, when the whole answer is the first token);
``api_base`` is a URL; ``custom_llm_provider`` the vendor; ``status`` ``success`` or
``failure``, with ``error_information`` (``error_code``: the HTTP status as a string,
``error_class``: the exception class); ``cache_hit`` true for an answer from LiteLLM's cache.
A failed call writes 0 tokens because the fields are required ints: they are read as unknown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.trace import numbers
from slacheck.trace.normalise import host_of
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

#: the keys every payload has (``StandardLoggingPayload`` declares them required), which tell
#: it from a row of LiteLLM's SpendLogs table (``request_id``, ``startTime`` as a timestamp)
PAYLOAD_KEYS = frozenset({"id", "call_type", "startTime", "endTime"})

_EXPECTED = "not LiteLLM StandardLoggingPayload records: expected JSON lines or a list of them"

#: ``call_type`` (sync and ``a``-prefixed async spellings) → ``gen_ai.operation.name``
_OPERATIONS = {
    "completion": "chat",
    "text_completion": "text_completion",
    "embedding": "embeddings",
    "responses": "chat",
}


def is_payload(keys: object) -> bool:
    """The keys of a record are a StandardLoggingPayload's."""
    if not isinstance(keys, set | frozenset | Mapping):
        return False
    return set(keys) >= PAYLOAD_KEYS and "request_id" not in keys


def read_litellm(path: Path) -> pa.Table:
    loaded = load_json(path)
    value = loaded.value
    items: list[tuple[str, object]]
    if loaded.line_numbers is not None:
        items = [(f"line {n}", v) for n, v in zip(loaded.line_numbers, value, strict=True)]
    elif isinstance(value, list):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    elif isinstance(value, dict):
        items = [("", value)]
    else:
        raise TraceInputError([problem(path, _EXPECTED, Reason.UNKNOWN_FORMAT)])
    rows = SpanRows(path, integer_nanos=True)
    problems: list[Problem] = []
    for ref, payload in items:
        if isinstance(payload, dict) and is_payload(payload):
            _add_payload(rows, ref, payload)
        else:
            problems.append(problem(path, "not a LiteLLM StandardLoggingPayload", field=ref))
    if problems:
        raise TraceInputError(problems)
    return rows.table()


def _epoch_seconds(value: object) -> object:
    """Epoch seconds (a JSON number) as integer nanoseconds, kept to the microsecond a float
    holds; anything else is passed on as a value no timestamp rule reads (a defect on the row),
    never guessed as another unit or parsed as text."""
    if value is None:
        return None
    seconds = numbers.real(value) if not isinstance(value, str | bool) else None
    if seconds is None or not math.isfinite(seconds):
        return ("not epoch seconds", value)
    return round(seconds * 1_000_000) * 1000


def _add_payload(rows: SpanRows, ref: str, p: dict[str, Any]) -> None:
    defects: list[str] = []
    failed = p.get("status") == "failure"
    error = p.get("error_information")
    error = error if isinstance(error, Mapping) else {}
    call_type = as_text(p.get("call_type")) or ""
    fields: dict[str, Any] = {}
    if not failed:
        metadata = p.get("metadata")
        usage = metadata.get("usage_object") if isinstance(metadata, Mapping) else None
        fields.update(
            read_usage(
                (
                    usage,
                    {
                        "prompt_tokens": p.get("prompt_tokens"),
                        "completion_tokens": p.get("completion_tokens"),
                    },
                ),
                defects,
            )
        )
    response = decode_embedded(p.get("response"))
    fields["request_model"] = as_text(p.get("model")) or None
    fields["response_model"] = (
        as_text(response.get("model")) if isinstance(response, Mapping) else None
    ) or None
    fields["provider"] = (
        as_text(p.get("custom_llm_provider")) or as_text(error.get("llm_provider")) or None
    )
    fields["endpoint"] = host_of(as_text(p.get("api_base")))
    fields["response_cached"] = p.get("cache_hit") is True
    fields["operation"] = _OPERATIONS.get(call_type.removeprefix("a"), call_type or None)
    # a string; an HTTP status where it is one (a provider's own code otherwise: not a status)
    code = as_text(error.get("error_code"))
    fields["http_status"] = numbers.count(code) if code and code.strip().isdigit() else None
    fields["error_type"] = as_text(error.get("error_class")) or None
    message = as_text(error.get("error_message")) or as_text(p.get("error_str"))
    set_status(fields, failed=failed, message=message)
    span_id = as_text(p.get("litellm_call_id")) or as_text(p.get("id"))
    fields["kind"] = str(Kind.LLM)
    fields["task_id"] = as_text(p.get("trace_id")) or span_id
    fields["span_id"] = span_id
    fields["name"] = call_type or None
    start = _epoch_seconds(p.get("startTime"))
    rows.add(
        ref,
        fields,
        start=start,
        end=_epoch_seconds(p.get("endTime")),
        # a failed call received no token, whatever completionStartTime repeats
        first_token=None if failed else _epoch_seconds(p.get("completionStartTime")),
        defects=defects,
    )
