"""Tell which trace format a file holds from its first bytes, without loading it whole."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.trace.litellm_log import is_payload
from slacheck.trace.records import JSON_LINES_SUFFIXES, problem, unreadable

Format = Literal["otlp", "langfuse", "langsmith", "litellm", "openai_agents", "table"]

#: what slacheck reads; said once per problem, as its ``fix``
EXPECTED = (
    "expected OTLP JSON with resourceSpans, Langfuse {trace, observations} or observation list, "
    "LangSmith {post, patch} or run list, LiteLLM StandardLoggingPayload lines, an OpenAI "
    "Agents trace export {data: [trace, trace.span]}; or CSV/Parquet/JSONL with a mapping file"
)

_PARQUET_MAGIC = b"PAR1"
_JSON_SUFFIXES = frozenset({".json", *JSON_LINES_SUFFIXES})
#: how far into a JSON document to look for its top-level keys; the Langfuse trace download
#: puts the whole trace (with its input and output) before "observations"
_SCAN_LIMITS = (64 * 1024, 1024 * 1024, 16 * 1024 * 1024)
#: a JSON string (possessive, so an unterminated one at the end of the window cannot make the
#: scan quadratic) or a structural character; numbers and literals need no token
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[{}\[\]:,]')


def detect_format(path: Path) -> Format:
    """``otlp``, ``langfuse`` or ``langsmith`` for their JSON and JSON-lines exports; ``table``
    for Parquet, CSV and JSON lines of other records (read with a column mapping). A JSON
    document of no known shape raises ``TraceInputError`` (``UNKNOWN_FORMAT``)."""
    head = _head(path, _SCAN_LIMITS[0])
    if head.startswith(_PARQUET_MAGIC):
        return "table"
    encoded = _encoding_problem(path, head)
    if encoded is not None:
        raise TraceInputError([encoded])
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if not text:
        raise TraceInputError([problem(path, "empty file", Reason.UNKNOWN_FORMAT, fix=EXPECTED)])
    if text[0] not in "{[":
        if path.suffix.lower() in _JSON_SUFFIXES:
            raise _unknown(path, "a JSON file that is neither an object nor a list")
        return "table"
    lines = _json_lines_head(path)
    if lines is not None:
        if "resourceMetrics" in lines:
            raise _metrics(path)
        return _record_format(lines.keys()) or _batch_format(lines) or "table"
    found = _scan(path)
    if found is None:
        if '"resourceMetrics"' in text:
            raise _metrics(path)
        raise _unknown(path, "JSON of no known trace shape")
    return found


def _metrics(path: Path) -> TraceInputError:
    """An OTLP metrics export given where traces belong: said as such."""
    return TraceInputError(
        [
            problem(
                path,
                "an OTLP metrics export (resourceMetrics), not traces",
                Reason.UNKNOWN_FORMAT,
                fix="pass it with --metrics FILE (slacheck check, slacheck fields)",
            )
        ]
    )


def _encoding_problem(path: Path, head: bytes) -> Problem | None:
    """A compressed or UTF-16 file, said as such rather than "neither an object nor a list"."""
    if head.startswith(b"\x1f\x8b") and not "".join(path.suffixes).lower().endswith(".csv.gz"):
        what, fix = "gzip-compressed", "decompress it first (gunzip)"
    elif head.startswith(b"PK\x03\x04"):
        what, fix = "a ZIP archive", "unzip it and pass the files inside"
    elif head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) > 1 and head[1:2] == b"\0"):
        what, fix = "UTF-16 text", "save it as UTF-8"
    else:
        return None
    return problem(path, f"{what}; slacheck reads UTF-8 text and Parquet", Reason.NOT_UTF8, fix=fix)


def _unknown(path: Path, what: str) -> TraceInputError:
    return TraceInputError([problem(path, what, Reason.UNKNOWN_FORMAT, fix=EXPECTED)])


def _head(path: Path, size: int) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(size)
    except OSError as exc:
        raise unreadable(path, exc) from None


def _json_lines_head(path: Path) -> Mapping[str, object] | None:
    """The first record of a JSON-lines file (an object on line one, more after it, or a
    ``.jsonl``/``.ndjson`` name); None when the file is not JSON lines of objects."""
    with path.open("rb") as f:
        first = f.readline(_SCAN_LIMITS[-1])
        rest = f.read(4096).strip()
    try:
        record = json.loads(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    if rest or path.suffix.lower() in JSON_LINES_SUFFIXES:
        return record
    return None


def _batch_format(record: Mapping[str, object]) -> Format | None:
    """A JSON-lines record that is a whole exporter batch: LangSmith's ``{post, patch}``, the
    OpenAI Agents SDK's ``{data: [...]}``."""
    if "post" in record or "patch" in record:
        return "langsmith"
    data = record.get("data")
    if isinstance(data, list) and data and isinstance(data[0], dict):
        found = _record_format(data[0].keys())
        return found if found == "openai_agents" else None
    return None


def _record_format(keys: Collection[str]) -> Format | None:
    """The format one record (a line, a list element) belongs to, from its keys."""
    if "resourceSpans" in keys:
        return "otlp"
    if "traceId" in keys and "startTime" in keys:
        return "langfuse"
    if "run_type" in keys or "dotted_order" in keys:
        return "langsmith"
    if "post" in keys or "patch" in keys:  # a LangSmith run-ingest body (a JSON line of them)
        return "langsmith"
    if is_payload(set(keys)):
        return "litellm"
    # the OpenAI Agents SDK's exported items: trace.span objects, and trace objects
    if "span_data" in keys or ("object" in keys and "workflow_name" in keys):
        return "openai_agents"
    return None


@dataclass
class _Shape:
    """Top-level keys of a JSON document and the keys of the first object of each top-level
    list (``""`` for a document that is itself a list)."""

    is_list: bool = False
    keys: set[str] = field(default_factory=set)
    first_items: dict[str, set[str]] = field(default_factory=dict)

    def format(self) -> Format | None:
        if self.is_list:
            return _record_format(self.first_items.get("", set()))
        if "resourceSpans" in self.keys:
            return "otlp"
        if "observations" in self.keys:
            return "langfuse"
        if "post" in self.keys or "patch" in self.keys:
            return "langsmith"
        for key, expect in (
            ("data", "langfuse"),
            ("data", "openai_agents"),
            ("runs", "langsmith"),
        ):
            if key in self.keys and _record_format(self.first_items.get(key, set())) == expect:
                return expect
        return None


@dataclass
class _Frame:
    is_list: bool
    path: tuple[str, ...]
    index: int = 0
    key: str | None = None


def _scan(path: Path) -> Format | None:
    """The format of the JSON document in ``path`` from its shape in a growing window of its
    start, stopping as soon as the window tells."""
    for limit in _SCAN_LIMITS:
        head = _head(path, limit)
        shape = _scan_text(head.decode("utf-8-sig", errors="replace"))
        found = shape.format()
        if found is not None or len(head) < limit:
            return found
    # a trace download whose trace object alone outgrows the window; the reader checks the rest
    return "langfuse" if "trace" in shape.keys else None


def _scan_text(text: str) -> _Shape:
    shape = _Shape()
    stack: list[_Frame] = []
    pending: str | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        top = stack[-1] if stack else None
        if token[0] == '"':
            if len(token) < 2 or not token.endswith('"'):
                break  # the window ends inside a string
            pending = token
        elif token == ":":
            if top is not None and not top.is_list and pending is not None:
                top.key = _decode_key(pending)
                _record_key(shape, top, top.key)
        elif token == ",":
            if top is not None and top.is_list:
                top.index += 1
        elif token in "{[":
            if top is None:
                frame_path: tuple[str, ...] = ()
                shape.is_list = token == "["
            elif top.is_list:
                frame_path = (*top.path, str(top.index))
            else:
                frame_path = (*top.path, top.key or "")
            stack.append(_Frame(is_list=token == "[", path=frame_path))
        elif token in "}]":
            if stack:
                stack.pop()
            if not stack:
                break
        if token[0] != '"':
            pending = None
    return shape


def _decode_key(token: str) -> str:
    try:
        key = json.loads(token)
    except json.JSONDecodeError:
        return token.strip('"')
    return key if isinstance(key, str) else token.strip('"')


def _record_key(shape: _Shape, frame: _Frame, key: str) -> None:
    """Keep the keys that tell the format: the top object's, and the first object's of each
    top-level list."""
    if frame.path == ():
        shape.keys.add(key)
    elif frame.path == ("0",) and shape.is_list:
        shape.first_items.setdefault("", set()).add(key)
    elif len(frame.path) == 2 and frame.path[1] == "0" and not shape.is_list:
        shape.first_items.setdefault(frame.path[0], set()).add(key)
