"""Read OTLP/JSON traces (one export request, or one per line) into the canonical span table."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.trace import numbers
from slacheck.trace.conventions import derive_provider, is_stream_log, read_span
from slacheck.trace.records import SpanRows, as_text, load_json, problem
from slacheck.trace.schema import Kind
from slacheck.trace.status import set_status

_ERROR_CODES = (2, "2", "STATUS_CODE_ERROR")
_HEX = re.compile(r"[0-9a-fA-F]+")


def read_otlp(path: Path) -> pa.Table:
    """Read an OTLP/JSON file: an ``ExportTraceServiceRequest`` (``{"resourceSpans": …}``), a
    list of them, or JSON lines of them (the collector's file exporter)."""
    loaded = load_json(path)
    problems: list[Problem] = []
    requests = _requests(path, loaded.value, loaded.line_numbers, problems)
    rows = SpanRows(path, integer_nanos=True)
    for prefix, request in requests:
        for i, resource_spans in _items(path, request, "resourceSpans", prefix, problems):
            resource = resource_spans.get("resource")
            resource_attrs = _attributes(
                resource.get("attributes") if isinstance(resource, dict) else None
            )
            # instrumentationLibrarySpans: OTLP before 0.15; a resource with both has both read
            scope_keys = [
                key
                for key in ("scopeSpans", "instrumentationLibrarySpans")
                if key in resource_spans
            ] or ["instrumentationLibrarySpans"]
            at_resource = f"{prefix}resourceSpans[{i}]."
            for scope_key in scope_keys:
                for j, scope_spans in _items(
                    path, resource_spans, scope_key, at_resource, problems
                ):
                    at_scope = f"{at_resource}{scope_key}[{j}]."
                    scope = scope_spans.get("scope")
                    # resource, then scope, then span attributes: the nearer one wins
                    outer = resource_attrs | _attributes(
                        scope.get("attributes") if isinstance(scope, dict) else None
                    )
                    for k, span in _items(path, scope_spans, "spans", at_scope, problems):
                        _add_span(rows, f"{at_scope}spans[{k}]", span, outer)
    if problems:
        raise TraceInputError(problems)
    return rows.table()


def _requests(
    path: Path, value: Any, line_numbers: tuple[int, ...] | None, problems: list[Problem]
) -> list[tuple[str, dict[str, Any]]]:
    return export_requests(path, value, line_numbers, problems, key="resourceSpans")


def export_requests(
    path: Path,
    value: Any,
    line_numbers: tuple[int, ...] | None,
    problems: list[Problem],
    *,
    key: str,
    what: str = "OTLP",
    line_reason: Reason = Reason.MALFORMED_TRACE,
    fix: str | None = None,
    lines_may_hold_none: bool = False,
) -> list[tuple[str, dict[str, Any]]]:
    """The export requests in one OTLP JSON file, each with where it stands (``line 3: ``,
    ``[2].`` or nothing): one request (an object holding ``key``), a list of them, or JSON lines
    of them (the collector's file exporter). Spans (``resourceSpans``) and metrics
    (``resourceMetrics``) share the shape; a line that is no request is a problem at its line."""
    if line_numbers is not None:
        requests = []
        for number, request in zip(line_numbers, value, strict=True):
            if isinstance(request, dict) and (key in request or not request):
                requests.append((f"line {number}: ", request))
            else:
                said = f"not an {what} export request (no {key})"
                problems.append(problem(path, said, line_reason, line=number))
        if requests or lines_may_hold_none:
            return requests
    elif isinstance(value, dict) and key in value:
        return [("", value)]
    elif isinstance(value, list) and value and all(isinstance(r, dict) and key in r for r in value):
        return [(f"[{i}].", r) for i, r in enumerate(value)]
    said = f"not {what} JSON: expected an object with {key}, a list of them, or JSON lines of them"
    found = problem(path, said, Reason.UNKNOWN_FORMAT, **({"fix": fix} if fix else {}))
    raise TraceInputError([found])


def _items(
    path: Path, container: Mapping[str, Any], key: str, at: str, problems: list[Problem]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of ``container[key]``; a missing list is empty, a wrong one a problem."""
    items = container.get(key)
    if items is None:
        return
    if not isinstance(items, list):
        problems.append(problem(path, "expected a list", field=f"{at}{key}"))
        return
    for index, item in enumerate(items):
        if isinstance(item, dict):
            yield index, item
        else:
            problems.append(problem(path, "expected an object", field=f"{at}{key}[{index}]"))


def _attributes(items: object) -> dict[str, object]:
    """OTLP ``[{"key", "value": AnyValue}]`` → a flat dict; entries without a key are skipped."""
    if not isinstance(items, list):
        return {}
    return {
        item["key"]: _any_value(item.get("value"))
        for item in items
        if isinstance(item, dict) and isinstance(item.get("key"), str)
    }


def _any_value(value: object) -> object:
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:  # int64 is a string in proto-JSON, a number in some exporters
        raw = value["intValue"]
        # the integer a string spells as ``numbers`` reads one; other strings as written
        spelled = numbers.integer(raw) if isinstance(raw, str) else None
        return raw if spelled is None else spelled
    if "doubleValue" in value:
        raw = value["doubleValue"]
        as_real = numbers.real(raw) if isinstance(raw, str) else None
        return raw if as_real is None else as_real
    if "arrayValue" in value:
        array = value["arrayValue"]
        values = array.get("values") if isinstance(array, dict) else None
        return [_any_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"]
        return _attributes(kvlist.get("values") if isinstance(kvlist, dict) else None)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _otlp_id(value: object, size: int) -> str | None:
    """Hex as OTLP/JSON writes it; base64 (protobuf's canonical JSON) turned into hex."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == 2 * size and _HEX.fullmatch(value):
        return value
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) == size else value


def _nanos(value: object) -> object:
    """``*UnixNano`` (a string or a number) as ``numbers.nanos`` reads it: nanoseconds, None when
    unset, an ISO-8601 string as written, or ``BAD_TIMESTAMP`` (the table reports it)."""
    return numbers.nanos(value)


def exception_event(span: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The type and message of the span's last ``exception`` event (OTel exception semantic
    conventions), each null when not recorded: what ended the span, when the SDK recorded it."""
    events = span.get("events")
    if not isinstance(events, list):
        return None, None
    last = None
    for event in events:
        if isinstance(event, dict) and event.get("name") == "exception":
            last = event
    if last is None:
        return None, None
    attrs = _attributes(last.get("attributes"))
    return as_text(attrs.get("exception.type")), as_text(attrs.get("exception.message"))


def _events(items: object) -> dict[str, object]:
    """A span's events: each name → the time of its first event of that name (as ``_nanos``
    reads it); events without a name are skipped."""
    if not isinstance(items, list):
        return {}
    found: dict[str, object] = {}
    for event in items:
        if isinstance(event, dict) and isinstance(event.get("name"), str):
            found.setdefault(event["name"], _nanos(event.get("timeUnixNano")))
    return found


def _add_span(rows: SpanRows, ref: str, span: dict[str, Any], resource: dict[str, object]) -> None:
    defects: list[str] = []
    attributes = {**resource, **_attributes(span.get("attributes"))}
    name = as_text(span.get("name"))
    # the conventions table decides which attributes fill which field, and the span's kind
    reading, claimed = read_span(
        attributes, "otlp", defects, events=_events(span.get("events")), name=name
    )
    fields = reading.fields
    derive_provider(fields, reading.sources)
    kind, operation = claimed or (Kind.OTHER, None)
    stream_log = is_stream_log(attributes, name)
    if stream_log:
        # a log record written after a streamed call: no call of its own, it ends one
        kind, operation = Kind.OTHER, None
        reading.sources.pop("kind", None)
    if fields.get("operation") is None:
        fields["operation"] = operation
    status = span.get("status")
    status = status if isinstance(status, dict) else {}
    failed = status.get("code") in _ERROR_CODES
    message = as_text(status.get("message"))
    set_status(fields, failed=failed, message=message, exception=exception_event(span))
    fields["kind"] = str(kind)
    fields["task_id"] = _otlp_id(span.get("traceId"), 16)
    fields["span_id"] = _otlp_id(span.get("spanId"), 8)
    fields["parent_span_id"] = _otlp_id(span.get("parentSpanId"), 8)
    fields["name"] = name
    rows.add(
        ref,
        fields,
        start=_nanos(span.get("startTimeUnixNano")),
        end=_nanos(span.get("endTimeUnixNano")),
        first_token=reading.first_token,
        defects=defects,
        evidence=reading.sources,
        stream_log=stream_log,
    )
