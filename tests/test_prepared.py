"""The prepare stage reads the checks' own tables: on generated traces, per window, the report's
evidence appendix, the claim pack, the field check (items 5 to 7) and the charts say what the
checks counted.

The traces mix every state a call can end in — no recorded status, customer errors, throttling
above and below the rate limit, vendor errors, timeouts, unclassified failures — with excluded
calls (customer errors, long inputs, a maintenance window) and several regions, across the
Asia/Shanghai month edge, so each term has two windows in the quarter.
"""

from __future__ import annotations

import csv
import io
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from slacheck.contract.model import Contract
from slacheck.prepare import prepare_claim, prepare_report
from slacheck.render.details import details_of
from slacheck.render.inputs import EVIDENCE_COLUMNS, ReportInputs
from slacheck.verdict import TermResult
from tests.test_check_others import PROPERTY_CONTRACT, _us, make_contract, write_traces

PERIOD = "2026-Q3"
WINDOWS = ("2026-07", "2026-08")
#: a maintenance window inside the drawn minutes (UTC 16:00–16:01)
MAINTENANCE = {"start": "2026-07-31T16:00:00+00:00", "end": "2026-07-31T16:01:00+00:00"}


def _contract(unclassified: str, customer_errors: bool) -> Contract:
    body: dict[str, Any] = {
        **PROPERTY_CONTRACT,
        "latency": [
            {
                "id": "L1",
                "measurement_point": "full_response",
                "objective": {"kind": "occurrence", "percentile": 90, "threshold": 300},
                "window": "calendar_month",
            }
        ],
        "exclusions": {
            "customer_errors": customer_errors,
            "max_input_tokens": 5000,
            "maintenance": [MAINTENANCE],
        },
        "readings": {"unclassified_failures": unclassified},
    }
    return make_contract(body, "Asia/Shanghai")


_call = st.fixed_dictionaries(
    {
        "task_id": st.sampled_from(["t1", "t2", "t3", "t4", "t5"]),
        "minute": st.integers(0, 4),
        "second": st.integers(0, 59),
        # (status, http_status): None is a call with no recorded status
        "status": st.sampled_from(
            [
                ("ok", 200),
                (None, None),
                ("customer_error", 404),
                ("customer_error", 400),
                ("throttled", 429),
                ("vendor_error", 503),
                ("timeout", None),
                ("unclassified", None),
            ]
        ),
        "region": st.sampled_from([None, "cn-north-1", "cn-east-2", "ap-southeast-1", "us-west-2"]),
        "duration_ms": st.sampled_from([100.0, 250.0, 400.0]),
        "input_tokens": st.sampled_from([None, 100, 9000]),
    }
)


def _rows(drawn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for i, d in enumerate(drawn):
        start = _us("2026-07-31T15:58:00+00:00") + (d["minute"] * 60 + d["second"]) * 1_000_000
        status, http = d["status"]
        rows.append(
            {
                "task_id": d["task_id"],
                "span_id": f"s{i}",
                "kind": "llm",
                "start_us": start,
                "end_us": start + round(d["duration_ms"] * 1000),
                "duration_ms": d["duration_ms"],
                "status": status,
                "http_status": http,
                "region": d["region"],
                "request_model": "gpt-4o",
                "response_model": "gpt-4o",
                "input_tokens": d["input_tokens"],
            }
        )
    return rows


def _evidence(inputs: ReportInputs) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(inputs.evidence.data.decode("utf-8")))
    assert tuple(reader.fieldnames or ()) == EVIDENCE_COLUMNS
    rows = list(reader)
    assert len(rows) == inputs.evidence.rows
    return rows


def _by(results: tuple[TermResult, ...], term: str) -> dict[str, TermResult]:
    return {r.window: r for r in results if r.term_id == term}


# every state in one example, on both sides of the month edge
_EVERY_STATE = [
    {
        "task_id": f"t{i % 5}",
        "minute": m,
        "second": 7 * i % 60,
        "status": s,
        "region": r,
        "duration_ms": 250.0,
        "input_tokens": tok,
    }
    for i, (m, s, r, tok) in enumerate(
        [
            (0, ("ok", 200), "cn-north-1", 100),
            (0, (None, None), "cn-east-2", None),
            (0, ("customer_error", 404), "cn-north-1", 100),
            (0, ("throttled", 429), "ap-southeast-1", 100),  # the 4th call of a minute: above
            (0, ("vendor_error", 503), None, 100),
            (2, ("throttled", 429), "cn-north-1", 100),  # alone in its minute: under the limit
            (3, ("timeout", None), "us-west-2", 100),
            (3, ("unclassified", None), "cn-north-1", 100),
            (4, ("ok", 200), "cn-north-1", 9000),  # a long input: excluded
            (1, ("vendor_error", 503), "cn-north-1", 100),  # in maintenance: excluded
        ]
    )
]


@settings(max_examples=3, deadline=None)
@given(
    drawn=st.lists(_call, min_size=1, max_size=14),
    unclassified=st.sampled_from(["bounds", "vendor", "excluded"]),
    customer_errors=st.booleans(),
)
@example(drawn=_EVERY_STATE, unclassified="bounds", customer_errors=True)
@example(drawn=_EVERY_STATE, unclassified="vendor", customer_errors=False)
def test_documents_count_what_the_checks_count(
    drawn: list[dict[str, Any]], unclassified: str, customer_errors: bool
) -> None:
    contract = _contract(unclassified, customer_errors)
    with tempfile.TemporaryDirectory() as folder:
        traces = write_traces(_rows(drawn), Path(folder))
        inputs = prepare_report(contract, traces, period=PERIOD)
        results = inputs.evaluation.results
        availability = _by(results, "availability")
        evidence = _evidence(inputs)
        for window, r in availability.items():
            mine = [e for e in evidence if e["window"] == window]
            counted = Counter(e["counted_as"] for e in mine)
            # the evidence lists exactly the check's failures, undecided calls and exclusions
            assert counted["failed"] == r.total - r.good, (window, mine, r.to_dict())
            assert counted["unclassified"] == r.details["undecided_calls"], (window, mine)
            excluded = Counter(e["reason"] for e in mine if e["counted_as"] == "excluded")
            assert dict(excluded) == r.excluded, (window, mine, r.excluded)
            # neither a call with no status, nor throttling above the limit, nor a customer
            # error is ever listed as the vendor's failure
            failed = {e["span_id"] for e in mine if e["counted_as"] == "failed"}
            assert all(e["status"] != "unknown" for e in mine if e["span_id"] in failed)
            assert all(e["status"] != "customer_error" for e in mine if e["span_id"] in failed)
            # the claim pack's affected calls are the same calls, by id
            claim = prepare_claim(contract, traces, period=window)
            affected = csv.DictReader(io.StringIO(claim.affected_csv.decode("utf-8")))
            assert {a["span_id"] for a in affected} == failed, window
            assert claim.affected_rows == r.total - r.good
            assert claim.result.to_dict() == r.to_dict()
        assert {e["window"] for e in evidence} <= set(WINDOWS)

        # the field check's items 5 (the latency point), 6 (regions) and 7 (peak) count the
        # checks' calls
        fields = inputs.fields
        (item5,) = fields.item(5).details
        assert item5["in_scope"] == sum(r.total for r in _by(results, "L1").values()), item5
        regions = _by(results, "regions")
        item6 = fields.item(6).details[0] if fields.item(6).details else {}
        listed = sum(r.good for r in regions.values())
        if item6:
            assert item6["in_primary"] + item6["in_failover"] == listed, (item6, regions)
        peak = _by(results, "peak")
        item7 = fields.item(7).details[0]["peak"]
        assert item7["peak_minutes"] == sum(int(r.details["peak_minutes"]) for r in peak.values())

        # the documents' typed figures read keys every check writes (a renamed key fails here)
        for r in results:
            if r.kind in ("availability", "peak", "rate_limit"):
                typed = details_of(r)
                missing = set(type(typed).__slots__) - set(r.details)
                if r.kind == "availability" and r.observed is None:
                    missing -= {"credit_percent", "claim_deadline"}  # no figure, no credit
                assert not missing, (r.term_id, r.window, missing)

        # the charts: each latency figure is the check's own, term-window by term-window
        (dist,) = inputs.distributions
        latency = _by(results, "L1")
        assert len(dist.values) == sum(r.total for r in latency.values())
        assert dict(dist.monthly) == {
            w: r.observed for w, r in latency.items() if r.observed is not None
        }


def test_the_evidence_is_the_same_fetched_a_few_rows_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the appendix turns its rows into Python values a batch at a time (a quarter at 100 M
    # spans is about a million rows): batches of two give the very bytes one batch gives
    from slacheck.metering.context import CheckContext
    from slacheck.prepare import evidence as ev
    from slacheck.windows import parse_period

    contract = _contract("bounds", True)
    traces = write_traces(_rows(_EVERY_STATE), tmp_path)
    ctx = CheckContext(contract, traces, parse_period(PERIOD, contract.zone))
    whole = ev.evidence(ctx)
    monkeypatch.setattr(ev, "STREAM_ROWS", 2)
    batched = ev.evidence(ctx)
    assert whole.rows >= 5 and whole.rows == batched.rows
    assert batched.data == whole.data
    assert whole.data.decode().count("\n") == whole.rows + 1
