"""A span with a start and no end (still open when exported: a Langfuse observation without
``endTime``, an OTLP span without ``endTimeUnixNano``) is set aside as ``missing_end``, and its
task keeps a time: the envelope of what is recorded, its start included, which is a lower bound
on the task's time. A lower bound proves an ``at_most`` task term breached, never met."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import pytest

from slacheck.checks.latency import latency
from slacheck.contract.load import load_contract_text
from slacheck.metering import derive
from slacheck.metering.context import CheckContext
from slacheck.trace.ingest import ingest
from slacheck.verdict import Verdict


def _obs(i: int, trace: str, start: str, end: str | None) -> dict[str, Any]:
    o: dict[str, Any] = {
        "id": f"o{i}",
        "traceId": trace,
        "type": "GENERATION",
        "name": "chat",
        "startTime": start,
        "model": "gpt-4o",
        "usage": {"input": 10, "output": 5},
    }
    if end is not None:
        o["endTime"] = end
    return o


#: task a: two answered calls and one still open 40 s in; task b: two answered calls
OBSERVATIONS = [
    _obs(1, "a", "2026-07-01T10:00:00.000Z", "2026-07-01T10:00:02.000Z"),
    _obs(2, "a", "2026-07-01T10:00:02.500Z", "2026-07-01T10:00:03.000Z"),
    _obs(3, "a", "2026-07-01T10:00:40.000Z", None),
    _obs(4, "b", "2026-07-01T11:00:00.000Z", "2026-07-01T11:00:01.000Z"),
    _obs(5, "b", "2026-07-01T11:00:01.000Z", "2026-07-01T11:00:04.250Z"),
]


def _us(text: str) -> int:
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(when.timestamp()) * 1_000_000 + when.microsecond


def _recorded_ms(trace: str) -> float:
    """The task's recorded envelope, from the file's own fields: first start to the last time
    recorded (an end, or an open observation's start)."""
    obs = [o for o in OBSERVATIONS if o["traceId"] == trace]
    times = [_us(o["startTime"]) for o in obs] + [_us(o["endTime"]) for o in obs if "endTime" in o]
    return (max(times) - min(times)) / 1000.0


def _export(tmp_path: Path) -> Path:
    path = tmp_path / "observations.json"
    path.write_text(json.dumps(OBSERVATIONS), encoding="utf-8")
    return path


def _contract(threshold_ms: float) -> Any:
    return load_contract_text(
        f"""
contract:
  id: U-1
  vendor: Example Cloud
  customer: Example Customer
  effective: {{start: "2026-07-01"}}
latency:
  - id: E1
    measurement_point: task_end_to_end
    objective: {{kind: occurrence, percentile: 90, threshold: {threshold_ms}}}
""",
        "<test>",
    )


def test_the_open_call_is_set_aside_by_name_and_counted(tmp_path: Path) -> None:
    traces = ingest([_export(tmp_path)])
    q = traces.quality
    open_ = sum(1 for o in OBSERVATIONS if "endTime" not in o)
    assert q.set_aside == {"missing_end": open_}
    assert q.rows_read == len(OBSERVATIONS) == q.rows_used + q.rows_set_aside


def test_its_task_keeps_the_recorded_time_as_a_lower_bound(tmp_path: Path) -> None:
    traces = ingest([_export(tmp_path)])
    rows = derive.tasks(traces).execute().set_index("task_id")
    assert rows.loc["a", "task_source"] == derive.TaskSource.UNENDED
    assert rows.loc["a", "task_ms"] == pytest.approx(_recorded_ms("a"))
    assert rows.loc["a", "start_us"] == _us(OBSERVATIONS[0]["startTime"])
    # task b is whole: several roots, their envelope, exact
    assert rows.loc["b", "task_source"] == derive.TaskSource.ROOTS_ENVELOPE
    assert rows.loc["b", "task_ms"] == pytest.approx(_recorded_ms("b"))


def test_a_lower_bound_beyond_the_threshold_proves_a_breach(tmp_path: Path) -> None:
    """p90 over two tasks needs both within: task a's recorded 40 s already exceeds 30 s."""
    lower = _recorded_ms("a")
    threshold = math.floor(lower) - 10_000
    assert _recorded_ms("b") <= threshold < lower
    traces = ingest([_export(tmp_path)])
    contract = _contract(threshold)
    (r,) = [r for r in latency(CheckContext(contract, traces)) if r.window == "2026-07"]
    assert r.verdict is Verdict.BREACHED, r
    assert r.total == 2
    assert "a" in r.examples


def test_a_lower_bound_within_the_threshold_proves_nothing(tmp_path: Path) -> None:
    """Task a's recorded time is within the threshold, but it may have run longer: the p90 of
    two tasks, one of them a bound, is neither proven met nor breached."""
    threshold = math.ceil(_recorded_ms("a")) + 10_000
    traces = ingest([_export(tmp_path)])
    (r,) = [r for r in latency(CheckContext(_contract(threshold), traces)) if r.window == "2026-07"]
    assert r.verdict is Verdict.INDETERMINATE, r
    assert r.total == 2
    assert any("lower bound" in n.text for n in r.notes), [n.text for n in r.notes]


def test_an_otlp_span_without_an_end_is_read_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both OTLP readers (Python, engine) say ``missing_end`` for a span with no end time."""
    start = _us("2026-07-01T10:00:00Z") * 1000
    spans = [
        {
            "traceId": "0" * 31 + "1",
            "spanId": f"{i + 1:016x}",
            "name": "chat gpt-4o",
            "startTimeUnixNano": str(start + i * 10**9),
            **({"endTimeUnixNano": str(start + i * 10**9 + 5 * 10**8)} if i < 2 else {}),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            ],
        }
        for i in range(3)
    ]
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    for reader, limit in (("python", "-1"), ("engine", "0")):
        monkeypatch.setenv("SLACHECK_OTLP_ENGINE_BYTES", limit)
        traces = ingest([path])
        assert {s.read_by for s in traces.sources} == {reader}
        assert traces.quality.set_aside == {"missing_end": 1}, reader
        (task,) = derive.tasks(traces).execute().to_dict("records")
        assert task["task_source"] == derive.TaskSource.UNENDED
        assert task["task_ms"] == pytest.approx(2000.0)  # first start → the open span's start
