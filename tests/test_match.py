"""The eight-item field check and the metering mismatches, on real samples and generated traffic."""

# Generated traffic is small (150 tasks over 2 days) and fully instrumented: every successful
# call is streamed, so the baseline trace measures every item. Each removal nulls out one field
# (or drops one kind of span) in the pyarrow table before it is written as Parquet, then the
# whole check runs again; the expected statuses say which items must change, and every other
# item must stay measurable.

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import ibis
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slacheck.contract.load import load_contract_text
from slacheck.contract.model import Contract, ModelScope, Scope
from slacheck.engine import duckdb_connect
from slacheck.match.fields import (
    DERIVABLE_NOW,
    SCHEMA_CHANGE,
    FieldCheck,
    FieldItem,
    ItemStatus,
    check_fields,
    classify,
)
from slacheck.match.mismatch import Code, Mismatch, find_mismatches
from slacheck.metering.derive import (
    calls,
    endpoint_key,
    host_key,
    in_scope,
    model_base,
    provider_key,
    scope_match,
    tasks,
)
from slacheck.render.markdown import fields_markdown
from slacheck.trace import schema
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces

REAL = Path(__file__).resolve().parent / "data" / "real"

IDENTITY = """
contract:
  id: T-MATCH
  vendor: Example Cloud
  customer: Example Customer
  # in force for the real samples (2024–2025) and the generated traffic (2026)
  effective: {start: 2020-01-01}
  time_zone: %(zone)s
"""

# Every item of the table has something to check: five latency points, regions, a peak
# definition the 2-day trace reaches (busiest minutes see ~30 calls) and a per-token limit.
FULL = (
    IDENTITY
    + """
scope: {providers: [openai], models: [gpt-4o]}
latency:
  - id: S
    measurement_point: server_processing
    objective: {kind: occurrence, percentile: 95, threshold: 2000}
  - id: T
    measurement_point: time_to_first_token
    objective: {kind: occurrence, percentile: 95, threshold: 1500}
  - id: F
    measurement_point: full_response
    objective: {kind: occurrence, percentile: 99, threshold: 6000}
  - id: E
    measurement_point: task_end_to_end
    objective: {kind: occurrence, percentile: 95, threshold: 60000}
  - id: P
    measurement_point: output_tokens_per_second
    tokens_per_second_basis: after_first_token
    objective: {kind: time_slice, slice_minutes: 60, threshold: 20, slices_passing_percent: 99}
regions:
  primary: [{name: cn-shanghai, jurisdiction: {country: CN}}]
  failover: [{name: cn-beijing, jurisdiction: {country: CN}}]
peak:
  definition: {kind: request_rate, requests_per_minute: 15}
  degradation: {%(policy)s}
rate_limit: {basis: per_token, limit: 300000}
"""
)
POLICIES = {
    "queue": "queue: {max_wait_ms: 1000}",
    "smaller_model": "smaller_model: {fallback_model: gpt-4o-mini}",
    "cache": "cache: {max_staleness_seconds: 60}",
}


def contract(text: str, zone: str = "UTC", policy: str = "queue") -> Contract:
    return load_contract_text(text % {"zone": zone, "policy": POLICIES[policy]}, "<test>")


def _real(*names: str) -> list[Path]:
    """Real sample files; a missing folder or file fails the test, never skips it."""
    assert REAL.is_dir(), f"real trace samples not found at {REAL}"
    paths = [REAL / n for n in names]
    missing = [str(p) for p in paths if not p.exists()]
    assert not missing, f"real trace samples missing: {missing}"
    return paths


# ---------------------------------------------------------------------------------------------
# generated traffic and its removals


def _null(table: pa.Table, column: str) -> pa.Table:
    i = table.schema.get_field_index(column)
    return table.set_column(i, column, pa.nulls(table.num_rows, table.schema.field(i).type))


def _drop_kind(table: pa.Table, kind: str) -> pa.Table:
    return table.filter(pc.not_equal(table.column("kind"), kind))


def _reroot(table: pa.Table) -> pa.Table:
    """No root spans, and the steps are top-level spans of their trace (nothing dangles)."""
    return _null(_drop_kind(table, "task"), "parent_span_id")


def _no_server_no_network(table: pa.Table) -> pa.Table:
    return _null(_null(table, "server_ms"), "network_ms")


Removal = Callable[[pa.Table], pa.Table]


def _col(name: str) -> Removal:
    return lambda t: _null(t, name)


# name → (how, peak policy, expected statuses of the items that change, expected item-5 term
# statuses that change, a phrase the changed items' fix must contain)
REMOVALS: dict[str, tuple[Removal, str, dict[int, ItemStatus], dict[str, ItemStatus], str]] = {
    "network_ms": (
        _col("network_ms"),
        "queue",
        {2: ItemStatus.DERIVABLE},
        {},
        "duration_ms − server_ms − queue_ms",
    ),
    "server_ms": (
        _col("server_ms"),
        "queue",
        {1: ItemStatus.DERIVABLE, 5: ItemStatus.DERIVABLE},
        {"S": ItemStatus.DERIVABLE},
        "duration_ms − network_ms − queue_ms",
    ),
    "server_ms+network_ms": (
        _no_server_no_network,
        "queue",
        {1: ItemStatus.NOT_MEASURABLE, 2: ItemStatus.NOT_MEASURABLE, 5: ItemStatus.PARTIAL},
        {"S": ItemStatus.PARTIAL},
        "http.response.header.openai-processing-ms",
    ),
    "ttft_ms": (
        _col("ttft_ms"),
        "queue",
        {5: ItemStatus.NOT_MEASURABLE},
        {"T": ItemStatus.NOT_MEASURABLE, "P": ItemStatus.NOT_MEASURABLE},
        "gen_ai.response.time_to_first_chunk",
    ),
    "region": (_col("region"), "queue", {6: ItemStatus.NOT_MEASURABLE}, {}, "cloud.region"),
    "queue_ms": (
        _col("queue_ms"),
        "queue",
        {7: ItemStatus.NOT_MEASURABLE},
        {},
        "slacheck.queue_ms",
    ),
    "response_model": (
        _col("response_model"),
        "smaller_model",
        {7: ItemStatus.NOT_MEASURABLE},
        {},
        "gen_ai.response.model",
    ),
    "response_cached": (
        _col("response_cached"),
        "cache",
        {7: ItemStatus.NOT_MEASURABLE},
        {},
        "slacheck.response_cached",
    ),
    "output_tokens": (
        _col("output_tokens"),
        "queue",
        {5: ItemStatus.NOT_MEASURABLE, 8: ItemStatus.NOT_MEASURABLE},
        {"P": ItemStatus.NOT_MEASURABLE},
        "gen_ai.usage.output_tokens",
    ),
    "root spans, steps re-rooted": (
        _reroot,
        "queue",
        {4: ItemStatus.DERIVABLE, 5: ItemStatus.DERIVABLE},
        {"E": ItemStatus.DERIVABLE},
        "first span start → last span end",
    ),
    "root spans, parents dangling": (
        lambda t: _drop_kind(t, "task"),
        "queue",
        {4: ItemStatus.NOT_MEASURABLE, 5: ItemStatus.NOT_MEASURABLE},
        {"E": ItemStatus.NOT_MEASURABLE},
        "invoke_agent root span",
    ),
    "tool spans": (
        lambda t: _drop_kind(t, "tool"),
        "queue",
        {3: ItemStatus.NO_DATA},
        {},
        "instrument tool calls: emit execute_tool spans",
    ),
}


@pytest.fixture(scope="module")
def traffic(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Traces]:
    """Generated traffic, optionally with one removal, ingested from Parquet (cached)."""
    base = generate(TrafficProfile(tasks=150, days=2, seed=7, streamed_share=1.0))
    folder = tmp_path_factory.mktemp("traffic")

    @cache
    def make(removal: str | None = None) -> Traces:
        table = base if removal is None else REMOVALS[removal][0](base)
        path = folder / f"{removal or 'baseline'}.parquet".replace(" ", "_").replace(",", "")
        write(table, path, "parquet")
        return ingest([path])

    return make


@pytest.fixture(scope="module")
def checked(traffic: Callable[..., Traces]) -> Callable[..., FieldCheck]:
    @cache
    def run(removal: str | None = None, policy: str = "queue") -> FieldCheck:
        return check_fields(contract(FULL, policy=policy), traffic(removal))

    return run


def _terms(item: FieldItem) -> dict[str, str]:
    return {d["term_id"]: d["status"] for d in item.details}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_baseline_measures_every_item(checked: Callable[..., FieldCheck], policy: str) -> None:
    check = checked(None, policy)
    assert [i.item for i in check.items] == list(range(1, 9))
    bad = {i.item: (i.status, i.fix) for i in check.items if i.status is not ItemStatus.MEASURABLE}
    assert bad == {}
    assert check.ok and check.gaps() == ()
    assert set(_terms(check.item(5)).values()) == {"measurable"}
    assert check.scope.matched == check.scope.calls > 0
    peak = check.item(7)
    assert peak.denominator > 0, "the peak definition must be reached by the test traffic"
    assert peak.details[0]["peak"]["peak_minutes"] > 0


@pytest.mark.parametrize("removal", sorted(REMOVALS))
def test_removal_changes_the_expected_items(
    checked: Callable[..., FieldCheck], removal: str
) -> None:
    _, policy, expected, expected_terms, phrase = REMOVALS[removal]
    check = checked(removal, policy)
    got = {i.item: i.status for i in check.items if i.status is not ItemStatus.MEASURABLE}
    assert got == expected
    for number in expected:
        assert phrase in check.item(number).fix, (number, check.item(number).fix)
    terms = _terms(check.item(5))
    changed = {t: s for t, s in terms.items() if s != "measurable"}
    assert changed == {t: str(s) for t, s in expected_terms.items()}
    assert not check.ok or all(s is ItemStatus.DERIVABLE for s in expected.values())


@pytest.mark.parametrize("removal", sorted(REMOVALS))
def test_derivable_never_needs_schema_change_and_missing_never_derivable(
    checked: Callable[..., FieldCheck], removal: str
) -> None:
    check = checked(removal, REMOVALS[removal][1])
    rows: list[dict[str, Any]] = [i.to_dict() for i in check.items]
    rows += [d for d in check.item(5).to_dict()["details"]]
    for row in rows:
        status = ItemStatus(row["status"])
        if status is ItemStatus.DERIVABLE:
            assert not row["needs_schema_change"], row
            assert DERIVABLE_NOW in row["fix"] and SCHEMA_CHANGE not in row["fix"], row
        elif status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE):
            assert row["needs_schema_change"], row
            assert SCHEMA_CHANGE in row["fix"] and DERIVABLE_NOW not in row["fix"], row
        else:
            assert not row["needs_schema_change"], row
    for item in check.items:
        assert item.numerator == item.recorded + item.derived <= item.denominator
        if item.status is not ItemStatus.PARTIAL:  # partial may be one-sided (server, client)
            assert item.status is classify(item.recorded, item.derived, item.denominator)
    # a gap that needs instrumentation comes before one a computation closes
    flags = [g.needs_schema_change for g in check.gaps()]
    assert flags == sorted(flags, reverse=True)


def test_client_only_server_processing_is_partial_and_only_met_provable(
    checked: Callable[..., FieldCheck],
) -> None:
    check = checked("server_ms+network_ms")
    term = next(d for d in check.item(5).details if d["term_id"] == "S")
    assert term["client_only"] == term["in_scope"] > 0 and term["measurable"] == 0
    assert "one-sided 'met' is provable" in term["fix"]
    only = [m for m in check.mismatches if m.code == Code.ONLY_MET_PROVABLE]
    assert [m.term_id for m in only] == ["S"]
    assert only[0].numbers["client_only"] == term["client_only"]
    assert "indeterminate" in only[0].detail


def test_to_markdown_puts_schema_changes_first(checked: Callable[..., FieldCheck]) -> None:
    check = checked("ttft_ms")
    md = fields_markdown(check)
    table, _, notes = md.partition("\n\n")
    lines = table.splitlines()
    assert lines[0] == "| # | item | numerator | denominator | ratio | criterion | status | fix |"
    assert len(lines) == 2 + 8
    # below the table, a line per note: the lost calls, and the status notes (the traffic's
    # gateway cache hits, counted and with their reading)
    said = [*check.losses.notes(whole_period=True), *check.status_notes]
    assert len(notes.splitlines()) == len(said) > 0
    assert all(line.startswith("- ") for line in notes.splitlines())
    assert lines[2].startswith("| 5 | contracted measurement point | 0 | ")
    assert "not measurable" in lines[2] and "gen_ai.response.time_to_first_chunk" in lines[2]
    assert [ln.split("|")[1].strip() for ln in lines[3:]] == ["1", "2", "3", "4", "6", "7", "8"]
    assert "| 100.0 % |" in lines[3]
    json.dumps(check.to_dict())  # serialisable as is


# ---------------------------------------------------------------------------------------------
# real samples


def test_ttft_contract_against_langfuse_is_not_measurable() -> None:
    traces = ingest(sorted(_real("langfuse").pop().glob("*.trace.json")))
    text = (
        IDENTITY
        + """
latency:
  - id: L-ttft
    measurement_point: time_to_first_token
    objective: {kind: occurrence, percentile: 95, threshold: 2000}
"""
    )
    check = check_fields(contract(text), traces)
    item = check.item(5)
    assert item.status is ItemStatus.NOT_MEASURABLE and item.needs_schema_change
    assert item.numerator == 0 and item.denominator > 0
    assert "gen_ai.response.time_to_first_chunk" in item.fix
    assert "completionStartTime" in item.fix
    assert check.gaps()[0].needs_schema_change
    codes = {(m.code, m.term_id) for m in check.mismatches}
    assert (Code.POINT_NOT_RECORDED, "L-ttft") in codes


def test_streamed_langsmith_run_measures_ttft() -> None:
    traces = ingest(_real("langsmith/langsmith_py_wrap_openai_stream.json"))
    text = (
        IDENTITY
        + """
scope: {models: [gpt-4o-mini]}
latency:
  - id: L-ttft
    measurement_point: time_to_first_token
    objective: {kind: occurrence, percentile: 95, threshold: 2000}
"""
    )
    check = check_fields(contract(text), traces)
    item = check.item(5)
    assert (item.status, item.numerator, item.denominator) == (ItemStatus.MEASURABLE, 1, 1)
    assert item.fix == ""
    # one call cannot give a p95 other than itself
    assert Code.PERCENTILE_IS_MAXIMUM in {m.code for m in check.mismatches}


def test_vertex_region_comes_from_the_model_path() -> None:
    traces = ingest(_real("langfuse/vertex-ai-2025-08-01.trace.json"))
    text = (
        IDENTITY
        + """
regions:
  primary: [{name: europe-central2}]
"""
    )
    item = check_fields(contract(text), traces).item(6)
    assert (item.recorded, item.derived, item.denominator) == (0, 1, 1)
    assert item.status is ItemStatus.DERIVABLE and not item.needs_schema_change
    assert item.fix.startswith(DERIVABLE_NOW) and "model resource path" in item.fix
    assert item.details[0]["in_primary"] == 1 and item.details[0]["outside"] == 0


# ---------------------------------------------------------------------------------------------
# mismatches


def _mismatches(text: str, traces: Traces, zone: str = "UTC") -> tuple[Mismatch, ...]:
    c, t = calls(traces).cache(), tasks(traces).cache()
    return find_mismatches(contract(text, zone), traces, c, t)


TPS_UNSTATED = (
    IDENTITY
    + """
latency:
  - id: P
    measurement_point: output_tokens_per_second
    objective: {kind: occurrence, percentile: 50, threshold: 30, direction: at_least}
"""
)


def test_unstated_tps_basis_is_measured_both_ways(traffic: Callable[..., Traces]) -> None:
    found = [m for m in _mismatches(TPS_UNSTATED, traffic()) if m.code == Code.TPS_BASIS_UNSTATED]
    assert len(found) == 1
    n = found[0].numbers
    assert n["whole_request"] == n["after_first_token"] == n["in_scope"] > 0
    # dividing by the generation only is always faster than by the whole request
    assert n["median_after_first_token"] > n["median_whole_request"] > 0


def test_stated_basis_without_first_token_is_unmeasurable(traffic: Callable[..., Traces]) -> None:
    text = TPS_UNSTATED.replace(
        "measurement_point: output_tokens_per_second",
        "measurement_point: output_tokens_per_second\n"
        "    tokens_per_second_basis: after_first_token",
    )
    codes = {m.code for m in _mismatches(text, traffic("ttft_ms"))}
    assert Code.TPS_BASIS_UNMEASURABLE in codes and Code.TPS_BASIS_UNSTATED not in codes
    assert Code.TPS_BASIS_UNMEASURABLE not in {m.code for m in _mismatches(text, traffic())}


def test_window_coverage_of_a_two_day_trace(traffic: Callable[..., Traces]) -> None:
    found = [m for m in _mismatches(TPS_UNSTATED, traffic()) if m.code == Code.WINDOW_COVERAGE]
    assert [m.numbers["window"] for m in found] == ["2026-07"]
    n = found[0].numbers
    assert n["days"] == 31 and 2 <= n["days_with_calls"] <= 3 and not n["clipped"]
    assert found[0].title == f"2026-07: the traces cover {n['days_with_calls']} of 31 days"


def test_time_zone_moves_calls_across_the_month_end(tmp_path: Path) -> None:
    # business hours in UTC, across 31 July: 16:00–24:00 UTC is already August in Shanghai
    table = generate(
        TrafficProfile(
            tasks=150, days=3, seed=3, timezone="UTC", start=datetime(2026, 7, 30, tzinfo=UTC)
        )
    )
    write(table, tmp_path / "t.parquet", "parquet")
    traces = ingest([tmp_path / "t.parquet"])
    found = [
        m
        for m in _mismatches(TPS_UNSTATED, traces, "Asia/Shanghai")
        if m.code == Code.TIME_ZONE_MONTH
    ]
    assert len(found) == 1
    lo = int(datetime(2026, 7, 31, 16, tzinfo=UTC).timestamp()) * 1_000_000
    hi = int(datetime(2026, 8, 1, tzinfo=UTC).timestamp()) * 1_000_000
    llm = table.filter(pc.equal(table.column("kind"), "llm")).column("start_us")
    expected = pc.sum(pc.and_(pc.greater_equal(llm, lo), pc.less(llm, hi))).as_py()
    assert found[0].numbers["moved"] == expected > 0
    assert found[0].title.startswith(f"{expected} calls fall in a different calendar month")
    assert not [m for m in _mismatches(TPS_UNSTATED, traces) if m.code == Code.TIME_ZONE_MONTH]


def test_task_time_the_point_does_not_cover(checked: Callable[..., FieldCheck]) -> None:
    by_term = {m.term_id: m for m in checked().mismatches if m.code == Code.UNCOVERED_TASK_TIME}
    assert set(by_term) == {"S", "T", "F"}  # the task and tokens/s terms are not time slices
    full, server = by_term["F"].numbers, by_term["S"].numbers
    assert 0 < server["covered"] < full["covered"] < 1
    assert full["shares"]["tools"] > 0 and server["shares"]["network"] > 0
    for n in (full, server):
        assert sum(n["shares"].values()) + n["covered"] == pytest.approx(1.0, abs=1e-6)
    assert by_term["F"].title.startswith("F: full_response covers ")


def test_scope_that_matches_no_call(traffic: Callable[..., Traces]) -> None:
    text = TPS_UNSTATED + "scope: {models: [claude-3-opus], providers: [openai]}\n"
    found = [m for m in _mismatches(text, traffic()) if m.code == Code.SCOPE_UNMATCHED]
    assert len(found) == 1 and found[0].numbers["matched"] == 0
    assert found[0].numbers["unmatched"] == ["model claude-3-opus"]


_NAME = st.sampled_from([None, "openai", "anthropic", "gpt-4o", "claude-3-opus", "x"])
_HOST = st.sampled_from([None, "https://API.openai.com/v1/", "api.openai.com", "Unknown", "h:1"])


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(
        st.tuples(_NAME, _NAME, _NAME, _NAME, _HOST, st.booleans()), min_size=0, max_size=30
    ),
    providers=st.lists(st.sampled_from(["openai", "OpenAI", "azure"]), max_size=2),
    models=st.lists(st.sampled_from(["gpt-4o", "claude-3-opus", "gpt-4o-2024-08-06"]), max_size=2),
    endpoints=st.lists(st.sampled_from(["api.openai.com", "https://h:1/x", "other"]), max_size=2),
    model_scope=st.sampled_from(list(ModelScope)),
)
def test_scope_match_counts_each_call_as_its_row_does(
    rows: list[tuple[Any, ...]],
    providers: list[str],
    models: list[str],
    endpoints: list[str],
    model_scope: ModelScope,
) -> None:
    """The grouped scope match equals the row-wise reading: every call counted, matched where
    its own row is in scope, a listed value unmatched where no row has its key."""
    cols = ["provider_key", "model", "requested", "served_model", "endpoint"]
    data: dict[str, list[Any]] = {c: [r[i] for r in rows] for i, c in enumerate(cols)}
    data["start_us"] = [1 if r[5] else None for r in rows]
    c = ibis.memtable(data, schema={**dict.fromkeys(cols, "string"), "start_us": "int64"})
    scope = Scope(providers=providers, models=models, endpoints=endpoints)
    got = scope_match(c, scope, model_scope)

    con = duckdb_connect()
    hit = con.execute(c.select(h=in_scope(c, scope, model_scope)))["h"].tolist()
    keys = con.execute(c.select(e=endpoint_key(c.endpoint)))["e"].tolist()
    assert got.calls == len(rows)
    assert got.matched == sum(bool(h) for h in hit)
    names = {v for r in rows for v in (r[1], r[2]) if v is not None}
    want = [f"provider {p}" for p in providers if provider_key(p) not in {r[0] for r in rows}]
    want += [f"model {m}" for m in models if model_base(m) not in names]
    want += [f"endpoint {e}" for e in endpoints if host_key(e) not in set(keys) - {None}]
    assert list(got.unmatched_values) == want


def test_sparse_and_coarse_time_slices(traffic: Callable[..., Traces], tmp_path: Path) -> None:
    text = (
        IDENTITY
        + """
latency:
  - id: P
    measurement_point: output_tokens_per_second
    tokens_per_second_basis: whole_request
    objective: {kind: time_slice, slice_minutes: 5, threshold: 20, slices_passing_percent: 99,
                min_calls_per_slice: 40}
"""
    )
    sparse = [m for m in _mismatches(text, traffic()) if m.code == Code.SPARSE_SLICES]
    assert len(sparse) == 1
    n = sparse[0].numbers
    assert 0 < n["sparse_slices"] <= n["slices_with_calls"]
    assert Code.COARSE_TIMESTAMPS not in {m.code for m in _mismatches(text, traffic())}
    # timestamps to the hour cannot be put in 5-minute slices
    table = generate(TrafficProfile(tasks=20, days=1, seed=5))
    for col in ("start_us", "end_us"):
        hours = pc.multiply(pc.divide(table.column(col), 3_600_000_000), 3_600_000_000)
        table = table.set_column(table.schema.get_field_index(col), col, hours)
    # with clocks that coarse no time inside a call can be checked against the call's length:
    # the within-span figures are dropped, as such a source would not have them either
    for col in schema.WITHIN_SPAN_MS:
        i = table.schema.get_field_index(col)
        table = table.set_column(i, col, pa.nulls(table.num_rows, pa.float64()))
    write(table, tmp_path / "coarse.parquet", "parquet")
    coarse = [
        m
        for m in _mismatches(text, ingest([tmp_path / "coarse.parquet"]))
        if m.code == Code.COARSE_TIMESTAMPS
    ]
    assert len(coarse) == 1 and coarse[0].numbers["resolution_us"] == 3_600_000_000


@pytest.mark.parametrize("basis", ["per_request", "per_token"])
def test_set_aside_calls_make_their_tasks_uncountable(tmp_path: Path, basis: str) -> None:
    table = generate(TrafficProfile(tasks=150, days=2, seed=7, malformed=10))
    write(table, tmp_path / "m.parquet", "parquet")
    traces = ingest([tmp_path / "m.parquet"])
    item = check_fields(
        contract(IDENTITY + f"rate_limit: {{basis: {basis}, limit: 600}}\n"), traces
    )
    rate = item.item(8)
    # the bad copies: no start (cannot be placed in a period), end before start or negative
    # tokens (their tokens cannot be trusted); rows without a task id belong to no task
    llm = table.filter(
        pc.and_(pc.equal(table.column("kind"), "llm"), pc.is_valid(table.column("task_id")))
    )
    no_start = pc.is_null(llm.column("start_us"))
    untrusted = pc.or_kleene(
        no_start,
        pc.or_kleene(
            pc.less(llm.column("end_us"), llm.column("start_us")),
            pc.less(llm.column("output_tokens"), 0),
        ),
    )
    lost = no_start if basis == "per_request" else untrusted
    lost_tasks = len(set(llm.filter(pc.fill_null(lost, False)).column("task_id").to_pylist()))
    assert lost_tasks > 0
    assert (rate.numerator, rate.denominator) == (150 - lost_tasks, 150)
    assert rate.status is ItemStatus.PARTIAL and "set aside" in rate.fix


def test_classify() -> None:
    assert classify(0, 0, 0) is ItemStatus.NO_DATA
    assert classify(5, 0, 5) is ItemStatus.MEASURABLE
    assert classify(3, 2, 5) is ItemStatus.DERIVABLE
    assert classify(3, 1, 5) is ItemStatus.PARTIAL
    assert classify(0, 1, 5) is ItemStatus.PARTIAL
    assert classify(0, 0, 5) is ItemStatus.NOT_MEASURABLE


def test_not_applicable_items_without_clauses(traffic: Callable[..., Traces]) -> None:
    check = check_fields(contract(IDENTITY), traffic())
    na = {i.item: i.fix for i in check.items if i.status is ItemStatus.NOT_APPLICABLE}
    assert set(na) == {5, 6, 7, 8}
    assert na[7] == "the contract has no peak policy: see slacheck lint"
    assert check.ok


@pytest.mark.spark
@pytest.mark.slow  # full parity on Spark: `make test-all`; CI runs test_evaluate's subset
def test_spark_gives_the_same_check(traffic: Callable[..., Traces], spark_backend: Any) -> None:
    path = Path(traffic().sources[0].path)
    on_duckdb = check_fields(contract(FULL), traffic()).to_dict()
    on_spark = check_fields(contract(FULL), ingest([path], backend=spark_backend)).to_dict()
    assert _close(on_duckdb, on_spark), (on_duckdb, on_spark)


def _close(a: Any, b: Any) -> bool:
    """Equal, but for the last bits of float sums (the engines add in different orders)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
    return bool(a == b)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-5, 5)), max_size=30))
def test_shared_aggregates_are_each_readers_own(values: list[int | None]) -> None:
    # readers asking over one table get, each under its own names, what their own query gives
    # (names that repeat across readers stay apart); an ask after the query ran is refused
    from slacheck.match.mismatch.core import Shared, aggregate_row

    t = duckdb_connect().create_table("v", pa.table({"v": pa.array(values, pa.int64())}))
    asks = [
        {"n": t.count(), "s": t.v.sum()},
        {"n": (t.v > 0).sum(), "lo": t.v.min(where=t.v < 0)},
        {"s": t.v.max(), "k": t.v.nunique(where=t.v.notnull())},
    ]
    shared = Shared(t)
    keys = [shared.ask(**a) for a in asks]
    for key, aggs in zip(keys, asks, strict=True):
        assert shared.row(key) == aggregate_row(t, **aggs)
    with pytest.raises(RuntimeError, match="after the shared query ran"):
        shared.ask(n=t.count())
