"""One reading of the contract, the same everywhere: the metering issue's cases, each with the
right answer, and properties that the field check and the checks agree."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from slacheck.contract.load import load_contract_text
from slacheck.contract.model import Contract
from slacheck.evaluation import evaluate
from slacheck.match.fields import check_fields
from slacheck.metering import context
from slacheck.metering.context import Metering
from slacheck.trace import schema
from slacheck.trace.ingest import ingest
from slacheck.trace.schema import QUARTER_HOUR_US
from slacheck.trace.traces import Traces
from slacheck.verdict import TermResult
from slacheck.windows import parse_period

HEAD = """contract:
  id: T-1
  vendor: V
  customer: C
  effective: {{start: {start}{end}}}
  time_zone: {zone}
"""


def contract(body: str, start: str = "2026-01-01", end: str = "", zone: str = "UTC") -> Contract:
    head = HEAD.format(start=start, end=f", end: {end}" if end else "", zone=zone)
    return load_contract_text(head + body, "case.yaml")


def _us(iso: str) -> int:
    when = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(when.timestamp()) * 1_000_000 + when.microsecond


def traces(tmp: Path, rows: list[dict[str, Any]]) -> Traces:
    """Canonical llm rows: ``start`` (ISO, UTC), ``ms`` (default 100) and any canonical field."""
    out = []
    for n, r in enumerate(rows):
        r = dict(r)
        start = _us(r.pop("start"))
        ms = float(r.pop("ms", 100))
        row = {name: None for name in schema.COLUMN_NAMES}
        row.update(
            task_id=f"t{n}",
            span_id=f"s{n}",
            kind="llm",
            status="ok",
            start_us=start,
            end_us=start + round(ms * 1000),
            duration_ms=ms,
            source_file="case",
            source_ref=f"row {n + 1}",
        )
        row.update(r)
        out.append(row)
    path = tmp / f"t{len(list(tmp.iterdir()))}.parquet"
    pq.write_table(schema.conform(pa.Table.from_pylist(out, schema=schema.ARROW_SCHEMA)), path)
    return ingest([path])


def by_key(results: tuple[TermResult, ...]) -> dict[tuple[str, str], TermResult]:
    return {(r.term_id, r.window): r for r in results}


# ---------------------------------------------------------------------------------------------
# 1. regions compare through one key


REGIONS = """regions:
  primary:
    - {name: cn-shanghai, jurisdiction: {country: CN, province: Shanghai}}
"""


def test_region_case_does_not_change_the_reading(tmp_path: Path) -> None:
    c = contract(REGIONS)
    t = traces(
        tmp_path,
        [{"start": f"2026-07-0{i + 1}T00:00:00Z", "region": "CN-Shanghai"} for i in range(5)],
    )
    ev = evaluate(c, t, period="2026-07")
    r = by_key(ev.results)["regions", "2026-07"]
    assert (str(r.verdict), r.good, r.total) == ("met", 5, 5)
    item6 = check_fields(c, t).item(6)
    (details,) = item6.details
    assert (details["in_primary"], details["outside"]) == (5, 0)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.generate],
)
@given(
    spellings=st.lists(
        st.sampled_from(["cn-shanghai", "CN-Shanghai", " cn-SHANGHAI ", "us-east-1", "US-EAST-1"]),
        min_size=1,
        max_size=8,
    )
)
def test_field_check_and_regions_check_count_the_same_calls(
    tmp_path_factory: pytest.TempPathFactory, spellings: list[str]
) -> None:
    c = contract(REGIONS)
    rows = [{"start": f"2026-07-01T00:{i:02d}:00Z", "region": s} for i, s in enumerate(spellings)]
    t = traces(tmp_path_factory.mktemp("r"), rows)
    r = by_key(evaluate(c, t, period="2026-07").results)["regions", "2026-07"]
    (details,) = check_fields(c, t).item(6).details
    inside = sum(1 for s in spellings if s.strip().lower() == "cn-shanghai")
    assert r.good == details["in_primary"] == inside
    assert r.total - r.good == details["outside"] == len(spellings) - inside


# ---------------------------------------------------------------------------------------------
# 2. one call state


def test_calls_without_a_status_are_measured_and_counted_everywhere(tmp_path: Path) -> None:
    c = contract(
        """latency:
  - {id: L, measurement_point: full_response,
     objective: {kind: occurrence, percentile: 50, threshold: 500}}
"""
    )
    rows = [{"start": f"2026-07-0{i + 1}T00:00:00Z", "ms": 200, "status": None} for i in range(5)]
    t = traces(tmp_path, rows)
    r = by_key(evaluate(c, t, period="2026-07").results)["L", "2026-07"]
    assert (str(r.verdict), r.good, r.total) == ("met", 5, 5)
    assert r.details["unknown_status_calls"] == 5
    assert any("without a recorded status" in n.text for n in r.notes)
    item5 = check_fields(c, t).item(5)
    assert (item5.numerator, item5.denominator) == (5, 5)


# ---------------------------------------------------------------------------------------------
# 3. one definition of peak minutes


def test_busiest_minutes_are_the_same_for_the_field_check_and_the_peak_check(
    tmp_path: Path,
) -> None:
    c = contract(
        """peak:
  definition: {kind: busiest_minutes, percent: 10}
  degradation: {queue: {max_wait_ms: 1000}}
"""
    )
    # sparse traffic: 10 minutes with traffic over a long July day, one of them busy
    rows = [{"start": f"2026-07-01T{h:02d}:00:00Z", "queue_ms": 0} for h in range(9)]
    rows += [{"start": "2026-07-01T12:00:00Z", "queue_ms": 0} for _ in range(10)]
    t = traces(tmp_path, rows)
    r = by_key(evaluate(c, t, period="2026-07").results)["peak", "2026-07"]
    (peak_details, *_) = check_fields(c, t).item(7).details
    assert r.details["peak_minutes"] == peak_details["peak"]["peak_minutes"] == 1
    assert r.details["calls_at_peak"] == check_fields(c, t).item(7).denominator == 10


# ---------------------------------------------------------------------------------------------
# 4. rolling windows are anchored on the effective start, with or without a period


def test_rolling_windows_do_not_move_with_the_period(tmp_path: Path) -> None:
    c = contract(
        """latency:
  - {id: L, measurement_point: full_response, window: rolling_30_days,
     objective: {kind: occurrence, percentile: 50, threshold: 500}}
""",
        start="2026-06-15",
    )
    rows = [{"start": f"2026-07-{d:02d}T00:00:00Z"} for d in range(1, 31)]
    rows += [{"start": f"2026-08-{d:02d}T00:00:00Z"} for d in range(1, 31)]
    t = traces(tmp_path, rows)
    free = {r.window for r in evaluate(c, t).results}
    in_q3 = {r.window for r in evaluate(c, t, period="2026-Q3").results}
    assert free == {"2026-06-15/30d", "2026-07-15/30d", "2026-08-14/30d"}
    assert in_q3 <= free | {"2026-09-13/30d"}
    assert "2026-07-01/30d" not in in_q3


# ---------------------------------------------------------------------------------------------
# 5. the effective period


LATENCY = """latency:
  - {id: L, measurement_point: full_response,
     objective: {kind: occurrence, percentile: 50, threshold: 500}}
"""


def test_no_verdict_before_the_contract_takes_effect(tmp_path: Path) -> None:
    c = contract(LATENCY, start="2026-07-01")
    t = traces(tmp_path, [{"start": "2025-08-10T00:00:00Z", "ms": 900}])
    assert evaluate(c, t).results == ()
    assert evaluate(c, t, period="2025-08").results == ()
    assert Metering(c, t).outside_effective.before == 1


def test_windows_are_clipped_to_the_effective_period(tmp_path: Path) -> None:
    c = contract(LATENCY, start="2026-07-15", end="2026-08-10")
    rows = [
        {"start": "2026-07-01T00:00:00Z", "ms": 900},  # before: not counted
        {"start": "2026-07-20T00:00:00Z", "ms": 100},
        {"start": "2026-08-05T00:00:00Z", "ms": 100},
        {"start": "2026-09-05T00:00:00Z", "ms": 900},  # after: not counted
    ]
    t = traces(tmp_path, rows)
    got = by_key(evaluate(c, t).results)
    assert sorted(got) == [("L", "2026-07"), ("L", "2026-08")]
    assert (got["L", "2026-07"].total, got["L", "2026-07"].partial_window) == (1, True)
    assert (got["L", "2026-08"].total, got["L", "2026-08"].partial_window) == (1, True)
    assert Metering(c, t).outside_effective.before == 1
    assert Metering(c, t).outside_effective.after == 1


# ---------------------------------------------------------------------------------------------
# 6. partial windows, for every window


def test_a_middle_month_with_three_days_of_calls_is_partial(tmp_path: Path) -> None:
    c = contract(LATENCY)
    rows = [{"start": f"2026-06-{d:02d}T{h:02d}:00:00Z"} for d in range(1, 31) for h in (0, 23)]
    rows += [{"start": f"2026-07-{d:02d}T12:00:00Z"} for d in (10, 11, 12)]
    rows += [{"start": f"2026-08-{d:02d}T{h:02d}:00:00Z"} for d in range(1, 32) for h in (0, 23)]
    t = traces(tmp_path, rows)
    got = by_key(evaluate(c, t).results)
    assert got["L", "2026-07"].partial_window is True
    assert got["L", "2026-06"].partial_window is False
    assert got["L", "2026-08"].partial_window is False
    m = Metering(c, t)
    july = parse_period("2026-07", c.zone)
    assert (m.coverage(july).days, m.coverage(july).days_with_calls) == (31, 3)


# ---------------------------------------------------------------------------------------------
# 8. claim deadline: calendar days from the day after the window's last day


def test_claim_deadline_counts_from_the_day_after_the_window(tmp_path: Path) -> None:
    c = contract(
        """availability: {target_percent: 99.9}
credits:
  tiers: [{from_percent: 0, to_percent: 99.9, credit_percent: 10}]
  claim_deadline_days: 30
""",
        zone="Asia/Shanghai",
    )
    t = traces(tmp_path, [{"start": "2026-07-10T00:00:00Z", "status": "vendor_error"}])
    m = Metering(c, t)
    assert c.credits is not None
    assert m.claim_deadline(c.credits, parse_period("2026-07", c.zone)) == dt.date(2026, 8, 30)
    r = by_key(evaluate(c, t, period="2026-07").results)["availability", "2026-07"]
    assert r.details["claim_deadline"] == "2026-08-30"


# ---------------------------------------------------------------------------------------------
# judgement calls: the model the scope reads, and a value at the limit


def test_model_scope_reads_the_requested_model_by_default(tmp_path: Path) -> None:
    body = """scope: {models: [gpt-4o]}
latency:
  - {id: L, measurement_point: full_response,
     objective: {kind: occurrence, percentile: 50, threshold: 500}}
"""
    rows = [
        {
            "start": "2026-07-01T00:00:00Z",
            "request_model": "gpt-4o-mini",
            "response_model": "gpt-4o",
        },
        {
            "start": "2026-07-02T00:00:00Z",
            "request_model": "gpt-4o",
            "response_model": "gpt-4o-mini",
        },
    ]
    t = traces(tmp_path, rows)
    requested = by_key(evaluate(contract(body), t, period="2026-07").results)["L", "2026-07"]
    assert requested.total == 1
    served = contract(body + "readings: {model_scope: served}\n")
    assert by_key(evaluate(served, t, period="2026-07").results)["L", "2026-07"].total == 1
    either = contract(body + "readings: {model_scope: either}\n")
    assert by_key(evaluate(either, t, period="2026-07").results)["L", "2026-07"].total == 2


def test_a_value_at_the_limit_is_within_unless_the_contract_says_beyond(tmp_path: Path) -> None:
    rows = [{"start": "2026-07-01T00:00:00Z", "ms": 500}]
    t = traces(tmp_path, rows)
    within = by_key(evaluate(contract(LATENCY), t, period="2026-07").results)["L", "2026-07"]
    assert str(within.verdict) == "met"
    beyond = contract(LATENCY + "readings: {at_the_limit: beyond}\n")
    assert str(by_key(evaluate(beyond, t, period="2026-07").results)["L", "2026-07"].verdict) == (
        "breached"
    )


# ---------------------------------------------------------------------------------------------
# the readers issue: what was lost is said where it matters


def test_calls_set_aside_or_without_a_scope_field_are_said_per_window(tmp_path: Path) -> None:
    c = contract(
        """scope: {providers: [openai]}
availability: {target_percent: 99.9}
latency:
  - {id: L, measurement_point: full_response,
     objective: {kind: occurrence, percentile: 50, threshold: 500}}
"""
    )
    rows = [
        {"start": "2026-07-01T00:00:00Z", "provider": "openai"},
        {"start": "2026-07-02T00:00:00Z", "provider": None},  # no provider: scope undecided
        {"start": "2026-07-03T00:00:00Z", "provider": "openai", "ttft_ms": -1.0},  # set aside
    ]
    t = traces(tmp_path, rows)
    got = by_key(evaluate(c, t, period="2026-07").results)
    # the field check and the budget say it too, over the whole effective period
    lost = check_fields(c, t).losses
    assert lost.to_dict() == {
        "set_aside": {"impossible_value:ttft_ms": 1},
        "scope_field_missing": {"provider": 1},
    }
    from slacheck.budget import analyse

    assert analyse(t).calls_set_aside == 1
    for key in (("availability", "2026-07"), ("L", "2026-07")):
        r = got[key]
        assert (r.good, r.total) == (1, 1)
        assert r.details["lost"] == {
            "set_aside": {"impossible_value:ttft_ms": 1},
            "scope_field_missing": {"provider": 1},
        }
        assert any("1 model call records no provider" in n.text for n in r.notes)
        assert any(
            "set aside and not counted (impossible_value:ttft_ms 1)" in n.text for n in r.notes
        )


# ---------------------------------------------------------------------------------------------
# typed results: gap, exact and bounded counts, coverage


def test_json_gives_gap_exact_bounded_and_coverage(tmp_path: Path) -> None:
    c = contract(
        """latency:
  - {id: FT, measurement_point: time_to_first_token,
     objective: {kind: occurrence, percentile: 50, threshold: 1500}}
availability: {target_percent: 99.0}
"""
    )
    rows = [{"start": f"2026-07-{d:02d}T00:00:00Z", "ms": 900, "ttft_ms": 300} for d in (1, 2)]
    rows += [{"start": "2026-07-03T00:00:00Z", "ms": 1200}]  # not streamed: a bound
    t = traces(tmp_path, rows)
    terms = {(x["id"], x["window"]): x for x in evaluate(c, t, period="2026-07").to_dict()["terms"]}
    ft = terms["FT", "2026-07"]
    # nearest rank over 300, 300, ≤1200: the 2nd value, 300; 1,200 ms of headroom
    assert (ft["verdict"], ft["observed"], ft["unit"], ft["gap"]) == ("met", 300.0, "ms", 1200.0)
    assert (ft["exact"], ft["bounded"]) == (2, 1)
    assert ft["coverage"] == {
        "days": 31,
        "days_with_calls": 3,
        "edges_covered": False,
        "clipped": False,
        "partial": True,
    }
    av = terms["availability", "2026-07"]
    assert (av["observed"], av["gap"], av["exact"]) == (100.0, 1.0, None)


# ---------------------------------------------------------------------------------------------
# properties: the field check and the checks read the same calls


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.generate],  # each example ingests and evaluates: no shrinking
)
@given(
    zone=st.sampled_from(["UTC", "Asia/Shanghai", "America/New_York", "Australia/Adelaide"]),
    start_day=st.integers(min_value=1, max_value=28),
    end_day=st.none() | st.integers(min_value=1, max_value=28),
    upper=st.booleans(),
    drop_status=st.booleans(),
    percent=st.sampled_from([1.0, 5.0, 20.0]),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_field_check_counts_equal_the_checks(
    tmp_path_factory: pytest.TempPathFactory,
    zone: str,
    start_day: int,
    end_day: int | None,
    upper: bool,
    drop_status: bool,
    percent: float,
    seed: int,
) -> None:
    from slacheck.trace.generate import TrafficProfile, generate

    table = generate(
        TrafficProfile(tasks=40, days=45, seed=seed, start=dt.datetime(2026, 6, 20, tzinfo=dt.UTC))
    )
    if upper:  # the traces spell regions in another case than the contract
        i = table.schema.get_field_index("region")
        table = table.set_column(i, "region", pa.compute.utf8_upper(table.column("region")))
    if drop_status:  # OpenTelemetry leaves a successful span's status unset
        i = table.schema.get_field_index("status")
        ok = pa.compute.equal(table.column("status"), "ok")
        table = table.set_column(
            i,
            "status",
            pa.compute.if_else(ok, pa.scalar(None, pa.string()), table.column("status")),
        )
    path = tmp_path_factory.mktemp("agree") / "t.parquet"
    pq.write_table(table, path)
    t = ingest([path])
    end = f"2026-08-{end_day:02d}" if end_day is not None else ""
    c = contract(
        f"""regions:
  primary: [{{name: cn-shanghai, jurisdiction: {{country: CN}}}}]
  failover: [{{name: cn-beijing, jurisdiction: {{country: CN}}}}]
peak:
  definition: {{kind: busiest_minutes, percent: {percent}}}
  degradation: {{queue: {{max_wait_ms: 1000}}}}
latency:
  - {{id: L, measurement_point: full_response,
     objective: {{kind: occurrence, percentile: 95, threshold: 5000}}}}
""",
        start=f"2026-07-{start_day:02d}",
        end=end,
        zone=zone,
    )
    m = Metering(c, t)
    ev = evaluate(c, t)
    fields = check_fields(c, t, m)
    results = [r for r in ev.results]

    # item 6 and the regions check: every in-scope call, in every window; the field check
    # measures the traces given, so it also counts the calls before and after the effective
    # period, which it says (fields.effective)
    regions = [r for r in results if r.term_id == "regions"]
    (d6,) = fields.item(6).details
    outside_period = fields.effective.before + fields.effective.after
    assert sum(r.details["calls"] for r in regions) + outside_period == (
        d6["in_primary"] + d6["in_failover"] + d6["outside"] + d6["unknown"]
    )
    if outside_period == 0:
        assert sum(r.good for r in regions) == d6["in_primary"] + d6["in_failover"]
        assert sum(r.total - r.good for r in regions) == d6["outside"]
    # item 7 and the peak check: the same peak minutes
    peaks = [r for r in results if r.term_id == "peak"]
    d7 = fields.item(7).details[0]["peak"]
    assert sum(r.details.get("peak_minutes", 0) for r in peaks) == d7["peak_minutes"]
    # item 5 and the latency check: answered in-scope calls measured, a missing status included
    latency = [r for r in results if r.term_id == "L"]
    item5 = fields.item(5)
    # (the calls outside the effective period are in item 5, never in a window)
    if outside_period == 0:
        assert sum(r.total for r in latency) == item5.denominator
    else:
        assert sum(r.total for r in latency) <= item5.denominator


# ---------------------------------------------------------------------------------------------
# the readers issue, in the metering layer: each call once, providers as contracts name them

DATA = Path(__file__).resolve().parent / "data"
STARTERS = Path(__file__).resolve().parents[1] / "slacheck" / "contract" / "starters"


def test_a_wrapped_model_call_counts_once_with_its_wrappers_provider() -> None:
    from slacheck.metering.derive import calls

    # agno: an OpenInference LLM span (provider OpenAI) wraps each OTel chat span (no provider)
    t = ingest([DATA / "real" / "langfuse" / "agno-2025-06-11.trace.json"])
    c = calls(t).select("span_id", "provider", "duration_ms").order_by("span_id").execute()
    assert list(c["span_id"]) == ["1f883bb9668167c0", "fc7f61b57ecebbaf"]  # the inner chats
    assert list(c["provider"]) == ["OpenAI", "OpenAI"]
    assert list(c["duration_ms"]) == [953.0, 4793.0]


def test_sdk_provider_names_match_the_contracts(tmp_path: Path) -> None:
    c = contract(
        """scope: {providers: [openai]}
availability: {target_percent: 99.0}
"""
    )
    rows = [
        {"start": "2026-07-01T00:00:00Z", "provider": "openai.chat"},  # Vercel AI SDK
        {"start": "2026-07-01T00:01:00Z", "provider": "OpenAI"},  # OpenLLMetry
        {"start": "2026-07-01T00:02:00Z", "provider": "openai.responses"},
        {"start": "2026-07-01T00:03:00Z", "provider": "azure.ai.openai"},  # another provider
    ]
    t = traces(tmp_path, rows)
    r = by_key(evaluate(c, t, period="2026-07").results)["availability", "2026-07"]
    assert r.total == 3


def test_every_verdict_says_which_readings_it_used(tmp_path: Path) -> None:
    c = contract(LATENCY + "readings: {at_the_limit: beyond}\n")
    t = traces(tmp_path, [{"start": "2026-07-01T00:00:00Z"}])
    readings = evaluate(c, t).to_dict()["readings"]
    assert readings["at_the_limit"] == {"value": "beyond", "stated": True}
    assert readings["model_scope"] == {"value": "requested", "stated": False}
    assert set(readings) == {
        "excluded_calls_in_task_terms",
        "model_scope",
        "per_task_rate_counts",
        "at_the_limit",
        "unclassified_failures",
        "cache_hits",
    }


# ---------------------------------------------------------------------------------------------
# Order statistics: counted per bucket, only the buckets holding a wanted rank are ranked


_VALUES = st.one_of(
    st.floats(-50, 5000, allow_nan=False),
    st.integers(-3, 40).map(float),  # ties, and values on a bucket's edge
    st.sampled_from([0.5, 2999.999, 3000.0, 3000.0001, 1e17, -1e17]),
    st.none(),
)


def _order_stats_case(data: st.DataObject) -> tuple[dict[str, list[Any]], dict[str, list[int]]]:
    rows = data.draw(st.lists(st.tuples(st.sampled_from("abc"), _VALUES), min_size=1, max_size=80))
    wanted: dict[str, list[int]] = {}
    for w in "abcd":
        n = sum(1 for label, v in rows if label == w and v is not None)
        wanted[w] = data.draw(st.lists(st.integers(1, max(n, 1) + 1), min_size=1, max_size=3))
    return {"w": [w for w, _ in rows], "x": [v for _, v in rows]}, wanted


def _sorted_truth(cols: dict[str, list[Any]], wanted: dict[str, list[int]]) -> dict[str, Any]:
    out: dict[str, dict[int, float]] = {}
    for w, ranks in wanted.items():
        xs = sorted(
            v for label, v in zip(cols["w"], cols["x"], strict=True) if label == w and v is not None
        )
        for k in ranks:
            if k <= len(xs):
                out.setdefault(w, {})[k] = xs[k - 1]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_order_stats_are_the_sorted_values_at_the_ranks(data: st.DataObject) -> None:
    import ibis

    from slacheck.metering.rank import order_stats

    cols, wanted = _order_stats_case(data)
    t = ibis.memtable(pa.table({"w": cols["w"], "x": pa.array(cols["x"], pa.float64())}))
    assert order_stats(t, "w", "x", wanted) == _sorted_truth(cols, wanted)


_PERCENTILES = st.sampled_from([1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0, 33.333])


def _nearest_truth(cols: dict[str, list[Any]], percentile: float) -> dict[str, float]:
    """The nearest-rank percentile by sorting, k = ceil(p·n/100) counted in exact decimals."""
    from decimal import ROUND_CEILING, Decimal

    out: dict[str, float] = {}
    for w in sorted(set(cols["w"])):
        xs = sorted(
            v for label, v in zip(cols["w"], cols["x"], strict=True) if label == w and v is not None
        )
        if xs:
            k = int((Decimal(repr(percentile)) * len(xs) / 100).to_integral_value(ROUND_CEILING))
            out[w] = xs[max(k, 1) - 1]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), percentile=_PERCENTILES)
def test_a_windows_nearest_rank_is_the_sorted_value_at_k(
    data: st.DataObject, percentile: float
) -> None:
    import ibis

    from slacheck.metering.rank import nearest_rank_by_window

    cols, _ = _order_stats_case(data)
    t = ibis.memtable(pa.table({"w": cols["w"], "x": pa.array(cols["x"], pa.float64())}))
    assert nearest_rank_by_window(t, "w", "x", percentile) == _nearest_truth(cols, percentile)


def _spark_probe(
    spark_backend: Any, name: str, seed: int, windows: str, n: int
) -> tuple[Any, dict[str, list[Any]]]:
    """A Spark table of ``n`` random values (nulls, ties, huge ones) in ``windows``."""
    import random

    rng = random.Random(seed)
    w = [rng.choice(windows) for _ in range(n)]
    x = [rng.choice([None, 1e17, float(rng.randint(0, 9)), rng.uniform(-5, 300)]) for _ in w]
    t = spark_backend.create_table(
        name, pa.table({"w": w, "x": pa.array(x, pa.float64())}).to_pandas(), overwrite=True
    )
    return t, {"w": w, "x": x}


@pytest.mark.spark
def test_a_windows_nearest_rank_on_spark_is_the_sorted_value(spark_backend: Any) -> None:
    from slacheck.metering.rank import nearest_rank_by_window

    t, cols = _spark_probe(spark_backend, "slacheck_nearest_rank_probe", 11, "abc", 400)
    for percentile in (50.0, 95.0, 99.9):
        assert nearest_rank_by_window(t, "w", "x", percentile) == _nearest_truth(cols, percentile)


@pytest.mark.spark
def test_order_stats_on_spark_are_the_sorted_values(spark_backend: Any) -> None:
    from slacheck.metering.rank import order_stats

    t, cols = _spark_probe(spark_backend, "slacheck_order_stats_probe", 7, "ab", 300)
    wanted = {"a": [1, 50, 95, 400], "b": [2, 3, 140]}
    assert order_stats(t, "w", "x", wanted) == _sorted_truth(cols, wanted)


# ---------------------------------------------------------------------------------------------
# the facts ingestion learns on the way (performance issue): a shortcut never changes a result


def _wrap_some(table: pa.Table, every: int) -> tuple[pa.Table, int]:
    """Every ``every``-th llm span put under a wrapper llm span of its own (as agno's
    OpenInference span wraps the OTel chat span): the wrapper holds the provider, the call
    does not. Returns the trace and the number of wrappers."""
    from collections import Counter

    rows = table.to_pylist()
    ids = Counter((r["task_id"], r["span_id"]) for r in rows)
    sound = [
        r
        for r in rows
        if r["kind"] == "llm"
        and ids[(r["task_id"], r["span_id"])] == 1
        and r["span_id"]
        and r["task_id"]
        and None not in (r["start_us"], r["end_us"], r["duration_ms"])
        and r["end_us"] >= r["start_us"]
    ]
    llm = sound[::every]
    for r in llm:
        wrapper = dict(r, span_id=r["span_id"] + "-w", source_ref=f"{r['source_ref']} wrapper")
        wrapper["start_us"] -= 1000
        wrapper["end_us"] += 1000
        wrapper["duration_ms"] += 2.0
        r["parent_span_id"], r["provider"] = wrapper["span_id"], None
        rows.append(wrapper)
    return pa.Table.from_pylist(rows, schema=table.schema), len(llm)


def _rename_some(table: pa.Table, endpoint: str) -> pa.Table:
    """Some llm spans given other names than the generator's one provider and model: another
    provider, an SDK's spelling of the same one, another model, none at all, another endpoint;
    so that a scope leaves calls out, and cannot decide on others."""
    rows = table.to_pylist()
    llm = [r for r in rows if r["kind"] == "llm"]
    for i, r in enumerate(llm):
        if i % 7 == 3:
            r["provider"] = "anthropic"
        if i % 11 == 5:
            r["provider"] = None
        if i % 9 == 2:
            r["provider"] = "OpenAI.chat"
        if i % 13 == 1:
            r["request_model"] = "claude-3-5-sonnet"
        if i % 17 == 4:
            r["request_model"] = r["response_model"] = None
        if i % 5 == 0:
            r["endpoint"] = endpoint
    return pa.Table.from_pylist(rows, schema=table.schema)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],
)
@given(
    seed=st.integers(min_value=0, max_value=1000),
    wrap=st.sampled_from([0, 5]),
    malformed=st.sampled_from([0, 12]),
    zone=st.sampled_from(["UTC", "Asia/Shanghai", "Asia/Kathmandu"]),
    inline=st.booleans(),
    by_endpoint=st.booleans(),
    copy=st.booleans(),
    view=st.booleans(),
)
# the shortcuts are taken only when every row is usable and nothing is wrapped: always tried,
# on the input copied into the engine and on the file read in place, the calls as a view and
# as a table
@example(
    seed=7,
    wrap=0,
    malformed=0,
    zone="Asia/Kathmandu",
    inline=True,
    by_endpoint=True,
    copy=False,
    view=True,
)
@example(
    seed=8, wrap=0, malformed=0, zone="UTC", inline=False, by_endpoint=False, copy=True, view=False
)
def test_what_ingestion_learns_never_changes_a_result(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    wrap: int,
    malformed: int,
    zone: str,
    inline: bool,
    by_endpoint: bool,
    copy: bool,
    view: bool,
) -> None:
    """Ingestion records the spans' extent, the wrapper count, whether every row is usable and
    the llm spans per quarter hour and names; the metering layer then reads the input as a
    view, skips the unwrapping join and reads coverage and name lookups from those counts.
    Forgetting those facts (the general path: classify every row, look for wrappers) gives
    the same results, term by term, and the facts are what the trace holds. Some calls carry
    other names, so the scope (providers and models, and endpoints when ``by_endpoint``)
    leaves some out and cannot decide on others. ``copy``: the input copied into the engine
    once (a small input's default) or the file read in place at each query (a large one's).
    ``view``: the calls a view over the spans where the facts allow (a large input's), or, as
    small as the input is, a table (whose name lookups still come from the counts). One of the
    two per example, each against the general path: each evaluation costs seconds."""
    import dataclasses
    import os
    from unittest import mock

    from slacheck.metering import derive
    from slacheck.trace.generate import TrafficProfile, generate

    table = generate(
        TrafficProfile(
            tasks=30,
            days=40,
            seed=seed,
            malformed=malformed,
            start=dt.datetime(2026, 6, 25, tzinfo=dt.UTC),
        )
    )
    table = _rename_some(table, "eu.api.example.com")
    wrappers = 0
    if wrap:
        table, wrappers = _wrap_some(table, wrap)
    path = tmp_path_factory.mktemp("facts") / "t.parquet"
    pq.write_table(table, path)
    with mock.patch.dict(os.environ, {"SLACHECK_COPY_UP_TO_ROWS": "" if copy else "0"}):
        t = ingest([path])
    # the wrappers among the usable spans, counted on the ids themselves (ingestion hashes them)
    llm = t.spans.filter(t.spans.kind == "llm")
    kids = llm.select(k_task=llm.task_id, k_parent=llm.parent_span_id)
    held = llm.semi_join(kids, [llm.task_id == kids.k_task, llm.span_id == kids.k_parent])
    assert t.llm_wrappers == int(held.count().execute())
    if not malformed:
        assert t.llm_wrappers == wrappers
    assert t.plain == (not t.quality.set_aside and t.quality.orphans == 0)
    assert t.plain == (malformed == 0)
    used = t.spans.aggregate(lo=t.spans.start_us.min(), hi=t.spans.end_us.max()).execute()
    assert t.extent == (int(used["lo"][0]), int(used["hi"][0]))
    # the llm spans per quarter hour and names, counted directly
    assert t.llm_by_quarter is not None
    names = ["request_model", "response_model", "provider", "endpoint"]
    direct = llm.group_by([(llm.start_us // QUARTER_HOUR_US).name("q"), *names]).aggregate(
        n=llm.count(), lo=llm.start_us.min(), hi=llm.start_us.max()
    )
    assert sorted(map(repr, t.llm_by_quarter.to_pyarrow().to_pylist())) == sorted(
        map(repr, direct.select("q", *names, "n", "lo", "hi").to_pyarrow().to_pylist())
    )
    general = dataclasses.replace(
        t, extent=None, llm_wrappers=None, plain=False, llm_by_quarter=None
    )
    text = (STARTERS / "demo.yaml").read_text(encoding="utf-8")
    text = text.replace("Asia/Shanghai", zone)
    if by_endpoint:
        text = text.replace(
            "  models: [gpt-4o]\n", "  models: [gpt-4o]\n  endpoints: [EU.api.example.com]\n", 1
        )
        assert "endpoints: [EU" in text
    c = load_contract_text(text, "demo.yaml")
    # the view puts the few distinct names into its queries as constants; too many are joined.
    # A small input's calls are a table (``VIEW_FROM_ROWS``): the view is asked for with ``view``
    rows = context.VIEW_FROM_ROWS
    with (
        mock.patch.object(derive, "INLINE_NAMES", derive.INLINE_NAMES if inline else 0),
        mock.patch.object(context, "VIEW_FROM_ROWS", 0 if view else rows),
    ):
        fast = evaluate(c, t)
        assert Metering(c, t).calls_are_view == (view and t.plain and wrappers == 0)
    slow = evaluate(c, general)
    assert not Metering(c, general).calls_are_view
    assert fast.to_dict() == slow.to_dict()
    assert len(fast.results) > 5


@settings(max_examples=25, deadline=None)
@given(
    spans=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["llm", "tool", "retrieval", "task"]),
            st.integers(min_value=0, max_value=50_000),
        ),
        min_size=1,
        max_size=12,
    )
)
@example(spans=[("a", "retrieval", 2619)])  # 261.9 ms: the fixture once truncated it to 261.899
def test_a_tasks_tool_and_retrieval_time_is_its_spans_sum(
    tmp_path_factory: pytest.TempPathFactory, spans: list[tuple[str, str, int]]
) -> None:
    """``derive.tasks`` sums each task's tool and retrieval span time (null when it has none),
    the figures the uncovered-task-time finding reads instead of grouping the spans again."""
    from slacheck.metering import derive

    rows = [
        {"start": "2026-07-01T00:00:00Z", "ms": ms / 10, "task_id": task, "kind": kind}
        for task, kind, ms in spans
    ]
    t = traces(tmp_path_factory.mktemp("tasks"), rows)
    got = {
        r["task_id"]: (r["tool_span_ms"], r["retrieval_span_ms"])
        for r in derive.tasks(t).to_pyarrow().to_pylist()
    }
    want: dict[str, list[float | None]] = {}
    for task, kind, ms in spans:
        sums = want.setdefault(task, [None, None])
        if kind in ("tool", "retrieval"):
            i = 0 if kind == "tool" else 1
            sums[i] = (sums[i] or 0.0) + ms / 10
    assert set(got) == set(want)
    for task, pair in got.items():
        assert pair == pytest.approx(tuple(want[task]))  # None stays None
