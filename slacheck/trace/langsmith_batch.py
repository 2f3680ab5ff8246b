"""LangSmith run-ingest batches as JSON lines: each line the body a LangSmith client sends to
its run-ingest endpoint (``{"post": [run, ...], "patch": [run, ...]}``), merged into runs.

A run is posted when it starts and patched when it ends (``end_time``, ``outputs``, ``error``,
``events``), usually in different batches, so posts and patches are merged across the whole
file by run id, in the order written: a later field wins over an earlier one, as LangSmith's
own ingest does; a ``null`` sets nothing. A patch whose run was never posted is read as it is;
a post never patched is a run without an end (its ``end_time`` is missing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from slacheck.errors import Problem
from slacheck.trace.records import problem

#: the two lists of an ingest body, in the order LangSmith applies them
BATCH_KEYS = ("post", "patch")


def is_batch(value: object) -> bool:
    """A run-ingest body: an object with ``post`` or ``patch`` and no run of its own."""
    return (
        isinstance(value, Mapping)
        and any(key in value for key in BATCH_KEYS)
        and "run_type" not in value
        and "dotted_order" not in value
    )


def merge_batches(
    path: Path,
    bodies: Sequence[tuple[str, object]],
    run_id: Callable[[object], str | None],
    problems: list[Problem],
) -> list[tuple[str, object]]:
    """The runs of ``bodies`` (``(where, body)`` in file order), one per run id, each with the
    reference of every post and patch merged into it (``line 3 post[0]+line 7 patch[1]``).
    A run without an id stays as written, for the reader to set it aside."""
    merged: dict[str, dict[str, Any]] = {}
    refs: dict[str, list[str]] = {}
    items: list[tuple[str, object]] = []
    order: list[str | None] = []
    for where, body in bodies:
        if not isinstance(body, Mapping):
            problems.append(problem(path, "not a LangSmith run-ingest body", field=where))
            continue
        for key in BATCH_KEYS:
            runs = body.get(key)
            if runs is None:
                continue
            if not isinstance(runs, list):
                problems.append(problem(path, "expected a list of runs", field=f"{where} {key}"))
                continue
            for i, run in enumerate(runs):
                ref = f"{where} {key}[{i}]"
                rid = run_id(run)
                if rid is None or not isinstance(run, Mapping):
                    items.append((ref, run))
                    order.append(None)
                    continue
                if rid not in merged:
                    merged[rid], refs[rid] = {}, []
                    items.append(("", None))
                    order.append(rid)
                merged[rid].update({k: v for k, v in run.items() if v is not None})
                refs[rid].append(ref)
    return [
        ("+".join(refs[rid]), merged[rid]) if rid is not None else item
        for item, rid in zip(items, order, strict=True)
    ]
