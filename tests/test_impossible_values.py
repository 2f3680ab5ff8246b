"""Impossible measurements never decide a verdict: set aside at ingestion, with the field named;
JSON output is strict; a contract number must be a finite number, not a yes/no."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.contract.load import load_contract_text
from slacheck.errors import ContractInvalid
from slacheck.render.jsonout import dumps
from slacheck.trace import schema
from slacheck.trace.ingest import ingest

runner = CliRunner()

T0 = 1_782_864_000_000_000  # 2026-07-01T00:00:00Z in µs


def _otlp_span(span_id: str, ttft: Any) -> dict[str, Any]:
    start_ns = (T0 + int(span_id) * 60_000_000) * 1000
    return {
        "traceId": f"{int(span_id):032x}",
        "spanId": f"{int(span_id):016x}",
        "name": "chat gpt-4o",
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(start_ns + 900_000_000),  # 900 ms
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            {"key": "gen_ai.response.time_to_first_chunk", "value": {"doubleValue": ttft}},
        ],
    }


def _otlp(tmp_path: Path, ttfts: list[Any]) -> Path:
    doc = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [_otlp_span(str(i + 1), t) for i, t in enumerate(ttfts)]}]}
        ]
    }
    path = tmp_path / "trace.json"
    # "Infinity" as the proto3 JSON mapping writes it, and bare Infinity as Python's json does
    path.write_text(json.dumps(doc))
    return path


def test_otlp_negative_and_infinite_ttft_are_set_aside(tmp_path: Path) -> None:
    traces = ingest([_otlp(tmp_path, [0.25, -100, "Infinity", float("inf"), 5.0])])
    q = traces.quality
    assert q.rows_read == 5
    assert q.rows_used == 1
    # -100 s, infinite twice, and 5 s inside a 900 ms call
    assert q.set_aside == {"impossible_value:ttft_ms": 4}
    assert q.rows_read == q.rows_used + q.rows_set_aside
    used = traces.spans.execute()
    assert list(used["ttft_ms"]) == [250.0]


def test_langfuse_first_token_before_start_is_set_aside(tmp_path: Path) -> None:
    def obs(i: int, completion: str) -> dict[str, Any]:
        return {
            "id": f"o{i}",
            "traceId": "t1",
            "type": "GENERATION",
            "startTime": f"2026-07-01T00:0{i}:01.000Z",
            "endTime": f"2026-07-01T00:0{i}:02.000Z",
            "completionStartTime": completion.format(i=i),
            "model": "gpt-4o",
        }

    path = tmp_path / "obs.json"
    path.write_text(
        json.dumps([obs(1, "2026-07-01T00:0{i}:01.300Z"), obs(2, "2026-07-01T00:0{i}:00.500Z")])
    )
    q = ingest([path]).quality
    assert (q.rows_read, q.rows_used) == (2, 1)
    assert q.set_aside == {"impossible_value:ttft_ms": 1}
    assert q.examples["impossible_value:ttft_ms"] == (f"{path}: [1]",)


_WITHIN = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(min_value=0, max_value=2000),
)
_ROW = st.fixed_dictionaries(
    {
        "duration_ms": st.integers(min_value=0, max_value=2000),
        **{name: _WITHIN for name in schema.WITHIN_SPAN_MS},
    }
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(specs=st.lists(_ROW, min_size=1, max_size=25))
def test_a_row_is_used_only_when_every_within_span_value_is_possible(
    tmp_path_factory: pytest.TempPathFactory, specs: list[dict[str, Any]]
) -> None:
    rows = []
    for n, spec in enumerate(specs):
        row: dict[str, Any] = {name: None for name in schema.COLUMN_NAMES}
        duration = spec["duration_ms"]
        row.update(
            task_id=f"t{n}",
            span_id="s",
            kind="llm",
            start_us=T0,
            end_us=T0 + duration * 1000,
            duration_ms=float(duration),
            source_file="x",
            source_ref=f"row {n + 1}",
            **{k: v for k, v in spec.items() if k != "duration_ms"},
        )
        rows.append(row)
    path = tmp_path_factory.mktemp("p") / "rows.parquet"
    pq.write_table(schema.conform(pa.Table.from_pylist(rows, schema=schema.ARROW_SCHEMA)), path)
    traces = ingest([path])

    def possible(v: float | None, duration: int) -> bool:
        return v is None or (math.isfinite(v) and 0 <= v <= duration + 1.0)

    want: dict[str, str | None] = {}
    for n, spec in enumerate(specs):
        bad = [k for k in schema.WITHIN_SPAN_MS if not possible(spec[k], spec["duration_ms"])]
        want[f"row {n + 1}"] = f"impossible_value:{bad[0]}" if bad else None
    aside = traces.set_aside_rows.select("source_ref", "_reason").execute()
    got: dict[str, str | None] = {ref: None for ref in want}
    got.update(dict(zip(aside["source_ref"], aside["_reason"], strict=True)))
    assert got == want
    q = traces.quality
    assert q.rows_read == len(specs) == q.rows_used + q.rows_set_aside


def test_json_output_has_no_nan_or_infinity() -> None:
    text = dumps({"a": float("nan"), "b": [1.5, float("inf"), -float("inf")], "c": {"d": 2}})
    assert json.loads(text) == {"a": None, "b": [1.5, None, None], "c": {"d": 2}}
    assert "NaN" not in text and "Infinity" not in text


def test_check_json_is_strict_with_hostile_values(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(
        """contract: {id: C, vendor: V, customer: C, effective: {start: 2026-07-01}}
latency:
  - {id: FT, measurement_point: time_to_first_token,
     objective: {kind: occurrence, percentile: 50, threshold: 500}}
"""
    )
    trace = _otlp(tmp_path, [0.25, -100, "Infinity"])
    result = runner.invoke(app, ["check", str(contract), str(trace), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    (term,) = data["terms"]
    assert (term["verdict"], term["good"], term["total"], term["observed"]) == ("met", 1, 1, 250.0)
    assert data["quality"]["set_aside"] == {"impossible_value:ttft_ms": 2}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("true", "true is a yes/no, not a value for this field"),
        ("false", "false is a yes/no, not a value for this field"),
        (".inf", "finite number"),
        ("-.inf", "finite number"),
        (".nan", "finite number"),
        ("1e309", "finite number"),
    ],
)
def test_a_threshold_must_be_a_finite_number(value: str, message: str) -> None:
    text = f"""contract: {{id: C, vendor: V, customer: C, effective: {{start: 2026-07-01}}}}
latency:
  - id: L
    measurement_point: full_response
    objective: {{kind: occurrence, percentile: 95, threshold: {value}}}
"""
    with pytest.raises(ContractInvalid) as info:
        load_contract_text(text, "c.yaml")
    (problem,) = info.value.problems
    assert problem.field == "latency[0].objective.threshold"
    assert (problem.file, problem.line) == ("c.yaml", 5)
    assert message in problem.message
