"""What the JSON trace readers share: load a file with located errors, assemble the span table."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.inputs import decode_utf8, open_regular
from slacheck.trace import numbers
from slacheck.trace.schema import BY_NAME, Kind, SetAside, conform

#: Extensions that always mean one JSON value per line, however many lines there are.
JSON_LINES_SUFFIXES = frozenset({".jsonl", ".ndjson"})

#: At most this many bad lines are reported for one JSON-lines file.
_MAX_LINE_PROBLEMS = 20


@dataclass(frozen=True, slots=True)
class Loaded:
    """A parsed JSON file: one document, or one value per line of a JSON-lines file."""

    value: Any
    #: 1-based line number of each value of ``value`` when the file is JSON lines, else None
    line_numbers: tuple[int, ...] | None = None


def problem(
    path: Path, message: str, code: Reason = Reason.MALFORMED_TRACE, **where: Any
) -> Problem:
    """A ``Problem`` about the trace file ``path``."""
    return Problem(file=str(path), message=message, code=code, **where)


def unreadable(path: Path, exc: OSError) -> TraceInputError:
    """The error for a trace file that cannot be opened."""
    return TraceInputError(
        [
            problem(
                path,
                f"cannot read the trace file: {exc.strerror or exc}",
                Reason.FILE_NOT_FOUND,
                fix="check the path",
            )
        ]
    )


def read_text(path: Path) -> str:
    """The file's text; a missing, unreadable, non-regular or non-UTF-8 file raises
    ``TraceInputError``."""
    with open_regular(path, TraceInputError, "trace file") as fh:
        try:
            data = fh.read()
        except OSError as exc:
            raise unreadable(path, exc) from None
    return decode_utf8(data, path, TraceInputError)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key written twice: a parser keeps only the last value, so the
    spans under the first ``"resourceSpans"`` would vanish without a trace."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_duplicates)


def _duplicate(path: Path, text: str, key: str, line: int | None = None) -> TraceInputError:
    if line is None:
        # the second place the key is written: where the first value got lost
        marks = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
        at = marks[1] if len(marks) > 1 else (marks[0] if marks else 0)
        line = text.count("\n", 0, at) + 1
    return TraceInputError(
        [
            problem(
                path,
                f"the key {json.dumps(key)} is written twice in one object; a JSON parser "
                "keeps only the last, so the spans under the first would be lost",
                Reason.DUPLICATE_KEY,
                line=line,
                fix="merge the two into one key",
            )
        ]
    )


def load_json(path: Path) -> Loaded:
    """Parse ``path`` as one JSON document or as JSON lines (by extension, or when the document
    is followed by more values). Invalid JSON raises ``TraceInputError`` with the line."""
    text = read_text(path)
    if path.suffix.lower() in JSON_LINES_SUFFIXES:
        return _load_lines(path, text)
    try:
        value = _loads(text)
    except _DuplicateKey as exc:
        raise _duplicate(path, text, exc.key) from None
    except RecursionError:
        raise TraceInputError([_too_deep(path)]) from None
    except json.JSONDecodeError as exc:
        # a whole first line followed by more values: JSON lines (not a document with junk after)
        if exc.msg == "Extra data" and exc.lineno > 1 and _is_json(text.split("\n", 1)[0]):
            return _load_lines(path, text)
        raise TraceInputError(
            [problem(path, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno)]
        ) from None
    if numbers.json_depth(value) > numbers.MAX_JSON_DEPTH:
        raise TraceInputError([_too_deep(path)])
    return Loaded(value)


def _too_deep(path: Path, line: int | None = None) -> Problem:
    """The problem of a JSON value nested deeper than ``numbers.MAX_JSON_DEPTH``."""
    return problem(
        path,
        f"JSON nested more than {numbers.MAX_JSON_DEPTH} lists and objects deep",
        Reason.TOO_DEEP,
        line=line,
        fix="no trace record nests this deep",
    )


def split_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: split on ``\\n`` only (``numbers``: U+2028, U+0085 and a
    bare CR inside a JSON string are no line ends; ``\\r\\n`` leaves JSON whitespace)."""
    return text.split("\n")


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _load_lines(path: Path, text: str) -> Loaded:
    values: list[Any] = []
    numbers_: list[int] = []
    problems: list[Problem] = []
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        if len(line) * 4 > numbers.MAX_LINE_BYTES and len(line.encode()) > numbers.MAX_LINE_BYTES:
            raise TraceInputError(
                [
                    problem(
                        path,
                        f"a line longer than {numbers.MAX_LINE_BYTES:,} bytes",
                        Reason.TOO_LARGE,
                        line=number,
                        fix="write one export request per line",
                    )
                ]
            )
        try:
            value = _loads(line)
        except _DuplicateKey as exc:
            raise _duplicate(path, line, exc.key, number) from None
        except RecursionError:
            raise TraceInputError([_too_deep(path, number)]) from None
        except json.JSONDecodeError as exc:
            if len(problems) < _MAX_LINE_PROBLEMS:
                problems.append(
                    problem(path, f"invalid JSON line: {exc.msg}", line=number, column=exc.colno)
                )
            continue
        if numbers.json_depth(value) > numbers.MAX_JSON_DEPTH:
            raise TraceInputError([_too_deep(path, number)])
        values.append(value)
        numbers_.append(number)
    if problems:
        raise TraceInputError(problems)
    return Loaded(values, tuple(numbers_))


def decode_embedded(value: object) -> object:
    """A value some exporters write as a JSON-encoded string, decoded; other values as they are.
    A string that is not JSON stays a string."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


# -- values -------------------------------------------------------------------------------------


class Unparseable(ValueError):
    """A value present in the source that is not of the field's type."""


def as_text(value: object) -> str | None:
    """A string field: strings as written, numbers as text, anything else (lists, objects) null."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return None


def as_int(value: object) -> int:
    """An integer field, as ``numbers`` reads a count: ints, integral floats and strings of an
    ASCII number within int64 (``12.0`` is 12; ``0x10``, ``１２`` and 12.5 are no count);
    raises ``Unparseable``."""
    n = numbers.count(value)
    if n is None:
        raise Unparseable(value)
    return n


def as_float(value: object) -> float:
    """A float field: numbers and strings of an ASCII number (``numbers``); raises
    ``Unparseable``."""
    x = numbers.real(value)
    if x is None:
        raise Unparseable(value)
    return x


def as_bool(value: object) -> bool:
    """A flag: JSON booleans and the strings true/false; raises ``Unparseable``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise Unparseable(value)


def count_or_defect(value: object, field: str, defects: list[str]) -> int | None:
    """``as_int(value)``, or None and an ``unparseable_number:<field>`` defect; None is None."""
    if value is None:
        return None
    try:
        return as_int(value)
    except Unparseable:
        defects.append(f"{SetAside.UNPARSEABLE_NUMBER}:{field}")
        return None


def lookup(mapping: Mapping[str, Any], path: str) -> object:
    """``mapping[path]``, or the nested value at the dotted ``path``; None when absent."""
    if path in mapping:
        return mapping[path]
    node: object = mapping
    for part in path.split("."):
        # a dict first: the ABC's check costs more than the lookup
        if not (type(node) is dict or isinstance(node, Mapping)) or part not in node:
            return None
        node = node[part]
    return node


_INPUT_TOKENS = ("input_tokens", "prompt_tokens", "input", "promptTokens")
_OUTPUT_TOKENS = ("output_tokens", "completion_tokens", "output", "completionTokens")
_CACHED_TOKENS = (
    "cache_read_input_tokens",
    "input_cached_tokens",
    "input_cache_read",
    "prompt_details.cache_read",
    "input_token_details.cache_read",
    "prompt_tokens_details.cached_tokens",
    "input_tokens_details.cached_tokens",
)


#: how a usage object spells each count, in order of preference (OpenAI, LangChain, Langfuse,
#: Vercel): the JSON readers' usage objects and the conventions' ``normalise: usage`` rows
USAGE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "input_tokens": _INPUT_TOKENS,
    "output_tokens": _OUTPUT_TOKENS,
    "cached_tokens": _CACHED_TOKENS,
}


def read_usage(
    sources: Iterable[object],
    defects: list[str],
    evidence: dict[str, str] | None = None,
    names: Sequence[str] = (),
) -> dict[str, Any]:
    """Token counts from usage objects, in order of preference (OpenAI, LangChain, Langfuse
    spellings). Only counts the source wrote are returned; ``evidence`` (when given) gets the
    ``names`` entry of the source each count came from."""
    found: dict[str, object] = {}
    for index, source in enumerate(sources):
        if not (type(source) is dict or isinstance(source, Mapping)) or not source:
            continue  # an empty usage object holds no count
        for field, paths in USAGE_SPELLINGS.items():
            if field in found:
                continue
            for path in paths:
                value = lookup(source, path)
                if value is not None:
                    found[field] = value
                    if evidence is not None and index < len(names):
                        evidence[field] = names[index]
                    break
    return {f: count_or_defect(v, f, defects) for f, v in found.items()}


# -- assembly -----------------------------------------------------------------------------------

#: Columns a reader fills directly; timestamps, durations and provenance are computed here.
_COMPUTED = frozenset(
    {"start_us", "end_us", "duration_ms", "source_file", "source_ref", "defect", "evidence"}
)
_FILLED = tuple(name for name in BY_NAME if name not in _COMPUTED)


class SpanRows:
    """Canonical columns filled one parsed record at a time, made into one table at the end.

    Timestamps are given as written and parsed together in ``table()``: ISO-8601 strings, and
    integers only when ``integer_nanos`` (OTLP's ``*UnixNano``). ``kind`` is the span's own
    kind (llm, tool, retrieval or other): a root span of kind other becomes the task.
    """

    def __init__(self, source_file: Path, *, integer_nanos: bool = False) -> None:
        self._source_file = source_file
        self._integer_nanos = integer_nanos
        self._columns: dict[str, list[Any]] = {name: [] for name in _FILLED}
        self._times: dict[str, list[object]] = {"start": [], "end": [], "first_token": []}
        self._refs: list[str] = []
        self._defects: list[list[str]] = []
        self._evidence: list[dict[str, str]] = []
        self._stream_log: list[bool] = []

    def add(
        self,
        ref: str,
        fields: Mapping[str, object],
        *,
        start: object,
        end: object,
        first_token: object = None,
        defects: Sequence[str] = (),
        evidence: Mapping[str, str] | None = None,
        stream_log: bool = False,
    ) -> None:
        unknown = fields.keys() - self._columns.keys()
        if unknown:
            raise KeyError(f"not a column a reader fills: {sorted(unknown)}")
        for name, values in self._columns.items():
            values.append(fields.get(name))
        self._times["start"].append(start)
        self._times["end"].append(end)
        self._times["first_token"].append(first_token)
        self._refs.append(ref)
        self._defects.append(list(defects))
        self._evidence.append(dict(evidence or {}))
        self._stream_log.append(stream_log)

    def table(self) -> pa.Table:
        """The canonical table, through ``schema.conform``."""
        path = self._source_file
        nanos = self._integer_nanos
        start, start_ok = _to_us(self._times["start"], "start_us", self._defects, nanos)
        end, end_ok = _to_us(self._times["end"], "end_us", self._defects, nanos)
        first, first_ok = _to_us(self._times["first_token"], "ttft_ms", self._defects, nanos)
        try:
            columns = {
                name: _array(values, BY_NAME[name].type) for name, values in self._columns.items()
            }
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise TraceInputError([problem(path, f"a value has the wrong type: {exc}")]) from None
        # a span that ended before its first token arrived (a stream's span closed when the
        # generator was handed back) lasted at least until that token
        late = first_ok & end_ok & (first > end)
        for i in np.flatnonzero(late).tolist():
            end[i] = first[i]
            self._evidence[i]["end_us"] = FIRST_TOKEN_END
        if any(self._stream_log):
            completed = _complete_streams(self, start, start_ok, end, end_ok)
            for name in STREAM_LOG_FIELDS:
                values = columns[name].to_pylist()
                for call, log in completed.items():
                    if values[call] is None:
                        values[call] = values[log]
                columns[name] = pa.array(values, type=columns[name].type)
        both = start_ok & end_ok
        columns["start_us"] = pa.array(start, mask=~start_ok)
        columns["end_us"] = pa.array(end, mask=~end_ok)
        columns["duration_ms"] = pa.array((end - start) / 1000.0, mask=~both)
        from_first = pa.array((first - start) / 1000.0, mask=~(first_ok & start_ok))
        # a recorded first-token time beats a source's own TTFT figure: same clock as start
        columns["ttft_ms"] = pc.coalesce(from_first, columns["ttft_ms"])
        for name in ("task_id", "span_id", "parent_span_id"):
            columns[name] = pc.utf8_lower(columns[name])
        columns["kind"] = _with_tasks(columns)
        columns["source_file"] = pa.array([str(path)] * len(self._refs), type=pa.string())
        columns["source_ref"] = pa.array(self._refs, type=pa.string())
        columns["defect"] = pa.array(
            [";".join(d) if d else None for d in self._defects], type=pa.string()
        )
        columns["evidence"] = pa.array([evidence_text(e) for e in self._evidence], type=pa.string())
        try:
            return conform(pa.table(columns))
        except (ValueError, pa.ArrowInvalid) as exc:
            raise TraceInputError([problem(path, f"cannot build the span table: {exc}")]) from None


#: the ``evidence`` source of a call's end taken from the log written after its stream
STREAM_LOG_END = "stream_log"
#: the ``evidence`` source of a span's end moved to its first token, recorded after the end
FIRST_TOKEN_END = "first_token"


#: what a call the stream log completes takes from it when the call's own span lacks it: the
#: streamed answer's usage (Logfire writes it on the log, not on the call's span)
STREAM_LOG_FIELDS = ("input_tokens", "output_tokens", "cached_tokens")


def _complete_streams(
    rows: SpanRows,
    start: np.ndarray[Any, np.dtype[np.int64]],
    start_ok: np.ndarray[Any, np.dtype[np.bool_]],
    end: np.ndarray[Any, np.dtype[np.int64]],
    end_ok: np.ndarray[Any, np.dtype[np.bool_]],
) -> dict[int, int]:
    """Each log record written after a streamed call (``stream_log``) ends the model call of
    its task that ended last at or before the log's time (the same requested model where both
    name one; ties by the larger span id): the call's end becomes the log's time, since the
    span itself ended at the response headers. ``end`` and ``end_ok`` are changed in place.
    Returns each completed call's row → the row of the latest log that completed it (ties by the
    larger source reference), whose ``STREAM_LOG_FIELDS`` fill the call's missing ones.
    ``otlp_columns._complete_streams`` is the same rule in the engine."""
    cols = rows._columns
    task = [str(t).lower() if t is not None else None for t in cols["task_id"]]
    span = [str(x).lower() if x is not None else "" for x in cols["span_id"]]
    model = cols["request_model"]
    calls: dict[str, list[int]] = {}
    for j, kind in enumerate(cols["kind"]):
        in_task = task[j]
        if kind == str(Kind.LLM) and not rows._stream_log[j] and end_ok[j] and in_task is not None:
            calls.setdefault(in_task, []).append(j)
    latest: dict[int, tuple[int, str, int]] = {}
    for i, is_log in enumerate(rows._stream_log):
        own = task[i]
        if not is_log or not start_ok[i] or own is None:
            continue
        candidates = [
            j
            for j in calls.get(own, ())
            if end[j] <= start[i] and (model[i] is None or model[j] is None or model[i] == model[j])
        ]
        if candidates:
            chosen = max(candidates, key=lambda j: (int(end[j]), span[j]))
            key = (int(start[i]), rows._refs[i], i)
            if chosen not in latest or key[:2] > latest[chosen][:2]:
                latest[chosen] = key
    for j, (at, _, _) in latest.items():
        end[j] = at
        rows._evidence[j]["end_us"] = STREAM_LOG_END
    return {j: i for j, (_, _, i) in latest.items()}


def evidence_text(sources: Mapping[str, str]) -> str | None:
    """The ``evidence`` column's text: ``field=source`` pairs in column order, or None."""
    pairs = [f"{name}={sources[name]}" for name in BY_NAME if name in sources]
    return ";".join(pairs) or None


def _array(values: list[Any], type_: pa.DataType) -> pa.Array:
    """``pa.array``; a string with a lone surrogate (JSON's ``"\\ud800"``), which UTF-8 cannot
    hold, keeps its row with the surrogate written out as ``\\ud800``."""
    try:
        return pa.array(values, type=type_)
    except UnicodeEncodeError:
        cleaned = [
            v.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(v, str) else v
            for v in values
        ]
        return pa.array(cleaned, type=type_)


def _to_us(
    values: list[object], field: str, defects: list[list[str]], integer_nanos: bool
) -> tuple[np.ndarray[Any, np.dtype[np.int64]], np.ndarray[Any, np.dtype[np.bool_]]]:
    """Timestamps as written → (µs since the epoch, present-and-parsed mask). Strings are
    ISO-8601 (no offset means UTC); numbers are nanoseconds when ``integer_nanos`` (as
    ``numbers.nanos`` reads them: integral, 0 ≤ n ≤ 2⁶⁴−1); anything
    else, or a string that does not parse, is null with an ``unparseable_timestamp:<field>``
    defect on its row."""
    n = len(values)
    out = np.zeros(n, dtype=np.int64)
    ok = np.zeros(n, dtype=np.bool_)
    bad = np.zeros(n, dtype=np.bool_)
    text_at: list[int] = []
    texts: list[str] = []
    for i, value in enumerate(values):
        if value is None or (isinstance(value, str) and not value.strip(numbers.JSON_WS)):
            continue
        if isinstance(value, str):
            text_at.append(i)
            texts.append(value.strip(numbers.JSON_WS))
        elif integer_nanos and (nanos := _nanoseconds(value)) is not None:
            out[i] = nanos // 1000
            ok[i] = True
        else:
            bad[i] = True
    if texts:
        parsed = pd.to_datetime(
            pd.Series(texts, dtype=object), format="ISO8601", utc=True, errors="coerce"
        )
        at = np.asarray(text_at, dtype=np.intp)
        valid = parsed.notna().to_numpy()
        micros = parsed.dt.tz_localize(None).to_numpy(dtype="datetime64[us]").view(np.int64)
        out[at[valid]] = micros[valid]
        ok[at[valid]] = True
        bad[at[~valid]] = True
    for i in np.flatnonzero(bad).tolist():
        defects[i].append(f"{SetAside.UNPARSEABLE_TIMESTAMP}:{field}")
    return out, ok


def _nanoseconds(value: object) -> int | None:
    """A number of nanoseconds as ``numbers.nanos`` reads one (0 included), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    n = numbers.integer(value)
    return n if n is not None and 0 <= n <= numbers.UINT64_MAX else None


def tasks_at_roots(table: pa.Table) -> pa.Table:
    """``table`` with ``kind`` settled: a root span of kind other or task is the task, a task
    span that has a parent in the table is other. A span is a root when it has no parent, or
    its parent is not in the table (an export that starts below the real root). Idempotent, so
    it can be run again on spans concatenated from several files."""
    index = table.column_names.index("kind")
    return table.set_column(index, "kind", _with_tasks(table))


def _with_tasks(columns: Any) -> pa.Array:
    """``kind`` settled as ``tasks_at_roots`` says, from a table or a dict of columns."""
    span_key = pc.binary_join_element_wise(columns["task_id"], columns["span_id"], "\x1f")
    parent_key = pc.binary_join_element_wise(columns["task_id"], columns["parent_span_id"], "\x1f")
    if isinstance(span_key, pa.ChunkedArray):  # a table's column
        span_key = span_key.combine_chunks()
    parent_here = pc.fill_null(pc.is_in(parent_key, value_set=span_key), False)
    task, other = str(Kind.TASK), str(Kind.OTHER)
    kind = pc.fill_null(columns["kind"], other)
    base = pc.if_else(pc.equal(kind, task), other, kind)
    return pc.if_else(pc.and_(pc.invert(parent_here), pc.equal(base, other)), task, base)
