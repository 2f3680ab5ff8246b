"""Read LangSmith runs (ingest payloads, run lists, JSON lines) into the canonical span table."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from slacheck.errors import Problem, Reason, TraceInputError
from slacheck.trace.conventions import derive_provider, read_span
from slacheck.trace.langsmith_batch import is_batch, merge_batches
from slacheck.trace.records import (
    SpanRows,
    as_text,
    decode_embedded,
    load_json,
    lookup,
    problem,
    read_usage,
)
from slacheck.trace.schema import Kind
from slacheck.trace.status import set_status

#: LangChain's ``ls_model_type`` → ``gen_ai.operation.name``
_MODEL_TYPE_OPERATION = {"chat": "chat", "llm": "text_completion"}

_EXPECTED = (
    "not LangSmith runs: expected {post, patch}, a list of runs, {runs: [...]} "
    "or JSON lines of runs"
)


def read_langsmith(path: Path) -> pa.Table:
    """Read a LangSmith run-ingest payload ``{post: [run], patch: [run]}`` (a post and its patch
    merged by ``id``, the patch winning for the fields it sets), a JSON list of runs,
    ``{runs: [...]}``, JSON lines of runs or JSON lines of ``{post, patch}`` bodies (merged
    across lines: ``langsmith_batch``). Nested ``child_runs`` are read too."""
    loaded = load_json(path)
    value = loaded.value
    problems: list[Problem] = []
    items: list[tuple[str, object]]
    if loaded.line_numbers is not None:
        items = [(f"line {n}", v) for n, v in zip(loaded.line_numbers, value, strict=True)]
        if items and is_batch(items[0][1]):
            items = merge_batches(path, items, _run_id, problems)
    elif isinstance(value, dict) and ("post" in value or "patch" in value):
        items = _merged(path, value, problems)
    elif isinstance(value, dict) and isinstance(value.get("runs"), list):
        items = [(f"runs[{i}]", v) for i, v in enumerate(value["runs"])]
    elif isinstance(value, list):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        raise TraceInputError([problem(path, _EXPECTED, Reason.UNKNOWN_FORMAT)])
    if items and not any(_run_id(v) for _, v in items):
        raise TraceInputError([problem(path, _EXPECTED, Reason.UNKNOWN_FORMAT)])
    # epoch numbers are milliseconds (the JS SDK's Date.now()), passed on as nanoseconds
    rows = SpanRows(path, integer_nanos=True)
    for ref, run in _with_children(items):
        if isinstance(run, dict) and _run_id(run):
            _add_run(rows, ref, run)
        else:
            problems.append(
                problem(path, "not a LangSmith run (no id, no dotted_order)", field=ref)
            )
    if problems:
        raise TraceInputError(problems)
    return rows.table()


def _merged(
    path: Path, payload: dict[str, Any], problems: list[Problem]
) -> list[tuple[str, object]]:
    """Posts with their patches applied, then patches whose run was not posted here."""
    lists: dict[str, list[Any]] = {}
    for key in ("post", "patch"):
        runs = payload.get(key) or []
        if isinstance(runs, list):
            lists[key] = runs
        else:
            problems.append(problem(path, "expected a list of runs", field=key))
            lists[key] = []
    patches: dict[object, list[tuple[int, dict[str, Any]]]] = {}
    for j, patch in enumerate(lists["patch"]):
        if isinstance(patch, dict):
            patches.setdefault(_run_id(patch), []).append((j, patch))
        else:
            problems.append(problem(path, "not a LangSmith run", field=f"patch[{j}]"))
    items: list[tuple[str, object]] = []
    for i, post in enumerate(lists["post"]):
        if not isinstance(post, dict):
            items.append((f"post[{i}]", post))
            continue
        run, ref = dict(post), f"post[{i}]"
        for j, patch in patches.pop(_run_id(post), []):
            run.update({k: v for k, v in patch.items() if v is not None})
            ref += f"+patch[{j}]"
        items.append((ref, run))
    items.extend((f"patch[{j}]", patch) for left in patches.values() for j, patch in left)
    return items


def _run_id(run: object) -> str | None:
    """The run's ``id``; else the run id that ends its ``dotted_order``
    (``<timestamp>Z<run id>``, one segment per ancestor): the JS SDK's patches carry no id."""
    if not isinstance(run, Mapping):
        return None
    run_id = as_text(run.get("id"))
    if run_id:
        return run_id
    dotted = as_text(run.get("dotted_order"))
    if dotted and "Z" in dotted:
        return dotted.rsplit(".", 1)[-1].split("Z", 1)[1] or None
    return None


def _epoch_ms(value: object) -> object:
    """A timestamp as written; an epoch number (milliseconds) as integer nanoseconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return round(value * 1_000_000)
    return value


def _with_children(items: list[tuple[str, object]]) -> Iterator[tuple[str, object]]:
    for ref, run in items:
        yield ref, run
        children = run.get("child_runs") if isinstance(run, dict) else None
        if isinstance(children, list) and children:
            yield from _with_children(
                [(f"{ref}.child_runs[{i}]", c) for i, c in enumerate(children)]
            )


def _mapping(value: object) -> Mapping[str, Any]:
    value = decode_embedded(value)
    return value if isinstance(value, Mapping) else {}


def _trace_id(run: Mapping[str, Any]) -> str | None:
    """``trace_id``; for older runs the root run id at the head of ``dotted_order``
    (``<timestamp>Z<run id>.…``), or the run's own id when it has no parent."""
    trace_id = as_text(run.get("trace_id"))
    if trace_id:
        return trace_id
    dotted = as_text(run.get("dotted_order"))
    if dotted and "Z" in dotted:
        return dotted.split(".", 1)[0].split("Z", 1)[1] or None
    return as_text(run.get("id")) if run.get("parent_run_id") is None else None


def _first_token_time(run: Mapping[str, Any]) -> object:
    """The first ``new_token`` event's time (``first_token_time`` is a row of the table)."""
    events = decode_embedded(run.get("events"))
    if isinstance(events, list):
        for event in events:
            if isinstance(event, Mapping) and event.get("name") == "new_token":
                return event.get("time")
    return None


def _add_run(rows: SpanRows, ref: str, run: dict[str, Any]) -> None:
    defects: list[str] = []
    extra = _mapping(run.get("extra"))
    metadata = _mapping(extra.get("metadata"))
    outputs = _mapping(run.get("outputs"))
    inputs = _mapping(run.get("inputs"))
    run_type = str(run.get("run_type") or "").lower()
    sources: dict[str, str] = {}
    fields: dict[str, Any] = read_usage(
        (
            outputs.get("usage_metadata"),
            outputs.get("usage"),
            lookup(outputs, "llm_output.token_usage"),
            {
                "prompt_tokens": run.get("prompt_tokens"),
                "completion_tokens": run.get("completion_tokens"),
            },
        ),
        defects,
        sources,
        ("outputs.usage_metadata", "outputs.usage", "outputs.llm_output.token_usage", "run"),
    )
    # the table's langsmith rows name keys of the run, with its JSON-encoded parts decoded
    view = {**run, "extra": extra, "outputs": outputs, "inputs": inputs}
    own, claimed = read_span(view, "langsmith", defects, skip=fields.keys())
    fields.update(own.fields)
    sources.update(own.sources)
    derive_provider(fields, sources)
    kind, operation = claimed or (Kind.OTHER, None)
    fields["operation"] = operation
    if run_type == "llm":
        fields["operation"] = _MODEL_TYPE_OPERATION.get(str(metadata.get("ls_model_type")))
    error = as_text(run.get("error"))
    failed = bool(error and error.strip()) or run.get("status") == "error"
    set_status(fields, failed=failed, message=error)
    fields["kind"] = str(kind)
    fields["task_id"] = _trace_id(run)
    fields["span_id"] = _run_id(run)
    fields["parent_span_id"] = as_text(run.get("parent_run_id"))
    fields["name"] = as_text(run.get("name"))
    first_token = own.first_token
    if first_token is None:
        first_token = _first_token_time(run)
        if first_token is not None:
            sources["ttft_ms"] = "event:new_token"
    rows.add(
        ref,
        fields,
        start=_epoch_ms(run.get("start_time")),
        end=_epoch_ms(run.get("end_time")),
        first_token=_epoch_ms(first_token),
        defects=defects,
        evidence=sources,
    )
