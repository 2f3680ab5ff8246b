"""The peak, regions, rate-limit and availability checks: data-driven cases and invariants."""

# tests/cases/evaluate/<check>_*.yaml hold behaviour cases, one check per file: a minimal
# contract (the identity block is filled in; `time_zone` may be given at the top of the case),
# a handful of trace rows in canonical columns, and the results expected. Row shorthand:
# `start` is an ISO timestamp (→ start_us), `duration_ms` defaults to 100 plus any `queue_ms`
# (→ end_us; a call is never shorter than its queue wait, or it is set aside), `kind`
# defaults to llm and `status` to ok, `span_id` is generated; `repeat: N` copies a row N times,
# `every_s` seconds apart, with `{i}` in `task_id` replaced by the copy's number. A case's
# `defaults` apply to all its rows. `expect` lists every result the check must give, keyed by
# term and window: verdict, and optionally good, total, observed, examples, details (a subset),
# notes (substrings that must appear in some note), partial_window, excluded.

from __future__ import annotations

import datetime as dt
import io
import json
import random
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from slacheck.checks.availability import availability
from slacheck.checks.peak import peak
from slacheck.checks.ratelimit import rate_limit
from slacheck.checks.regions import regions
from slacheck.contract.load import load_contract_text
from slacheck.contract.model import Contract
from slacheck.metering.context import CheckContext
from slacheck.trace.ingest import ingest
from slacheck.trace.schema import BY_NAME, conform
from slacheck.trace.traces import Traces
from slacheck.verdict import TermResult, Verdict
from tests.wording import assert_worded, result_messages

CASES = Path(__file__).resolve().parent / "cases" / "evaluate"
CHECKS: dict[str, Callable[[CheckContext], list[TermResult]]] = {
    "peak": peak,
    "regions": regions,
    "rate_limit": rate_limit,
    "availability": availability,
}
PREFIX = {
    "peak": "peak",
    "regions": "regions",
    "rate_limit": "ratelimit",
    "availability": "availability",
}
IDENTITY = {
    "id": "T-1",
    "vendor": "Example Cloud",
    "customer": "Example Customer",
    "effective": {"start": "2026-01-01"},
}


# ---------------------------------------------------------------------------------------------
# Building contracts and traces


def make_contract(body: dict[str, Any], time_zone: str | None = None) -> Contract:
    """Through the real loader (YAML text in), so a bad case names its field."""
    identity = dict(IDENTITY)
    if time_zone is not None:
        identity["time_zone"] = time_zone
    buf = io.StringIO()
    YAML(typ="safe").dump({"contract": identity, **(body or {})}, buf)
    return load_contract_text(buf.getvalue(), "case")


def _us(iso: str) -> int:
    when = dt.datetime.fromisoformat(iso)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp()) * 1_000_000 + when.microsecond


def expand(
    rows: list[dict[str, Any]], defaults: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Case rows → canonical rows (see the module comment for the shorthand)."""
    out: list[dict[str, Any]] = []
    for raw in rows:
        spec = {**(defaults or {}), **raw}
        n, every = int(spec.pop("repeat", 1)), float(spec.pop("every_s", 0))
        start = _us(str(spec.pop("start")))
        for i in range(n):
            row = dict(spec)
            row["task_id"] = str(row["task_id"]).format(i=i)
            row.setdefault("kind", "llm")
            row.setdefault("status", "ok")
            # a queue wait is part of the call: a call is never shorter than its wait
            row.setdefault("duration_ms", 100.0 + float(row.get("queue_ms") or 0))
            row["span_id"] = row.get("span_id") or f"s{len(out)}"
            row["start_us"] = start + int(i * every * 1_000_000)
            row["end_us"] = row["start_us"] + round(float(row["duration_ms"]) * 1000)
            out.append(row)
    return out


def write_traces(rows: list[dict[str, Any]], folder: Path) -> Traces:
    names = sorted({k for r in rows for k in r})
    unknown = [n for n in names if n not in BY_NAME]
    assert not unknown, f"not canonical columns: {unknown}"
    table = pa.table({n: pa.array([r.get(n) for r in rows], type=BY_NAME[n].type) for n in names})
    path = folder / "traces.parquet"
    pq.write_table(conform(table), path)
    return ingest([path])


def run(
    check: str, contract: Contract, rows: list[dict[str, Any]], folder: Path
) -> list[TermResult]:
    return CHECKS[check](CheckContext(contract, write_traces(rows, folder)))


# ---------------------------------------------------------------------------------------------
# The data-driven cases


def _read(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _case_files() -> list[Path]:
    # The folder is shared with the latency check's cases: take only this module's prefixes.
    return sorted(p for prefix in PREFIX.values() for p in CASES.glob(f"{prefix}_*.yaml"))


def _cases() -> Iterator[Any]:
    for path in _case_files():
        doc = _read(path)
        assert PREFIX[doc["check"]] == path.stem.split("_")[0], f"{path.name}: {doc['check']}"
        for case in doc["cases"]:
            yield pytest.param(doc["check"], case, id=f"{path.stem}-{case['name']}")


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, float) and isinstance(got, int | float):
        return got == pytest.approx(want, rel=1e-9, abs=1e-9)
    return bool(got == want)


@pytest.mark.parametrize(("check", "case"), list(_cases()))
def test_case(check: str, case: dict[str, Any], tmp_path: Path) -> None:
    contract = make_contract(case.get("contract") or {}, case.get("time_zone"))
    results = run(check, contract, expand(case["rows"], case.get("defaults")), tmp_path)
    assert_worded(result_messages(results))  # in both languages, as its readers get them
    got = {(r.term_id, r.window): r for r in results}
    assert len(got) == len(results), "two results for one term and window"
    want = {(e["term"], str(e["window"])): e for e in case.get("expect") or []}
    assert sorted(got) == sorted(want)
    for key, e in want.items():
        r = got[key]
        ctx = f"{key}: {r.to_dict()}"
        assert r.verdict is Verdict(e["verdict"]), ctx
        for attr in ("good", "total", "partial_window"):
            if attr in e:
                assert getattr(r, attr) == e[attr], f"{attr} of {ctx}"
        if "observed" in e:
            want_obs = e["observed"]
            assert (
                (r.observed is None) if want_obs is None else _same(r.observed, float(want_obs))
            ), ctx
        if "examples" in e:
            assert list(r.examples) == [str(x) for x in e["examples"]], ctx
        if "excluded" in e:
            assert r.excluded == e["excluded"], ctx
        for k, v in (e.get("details") or {}).items():
            assert k in r.details, f"detail {k} missing in {ctx}"
            assert _same(r.details[k], v), f"detail {k} of {ctx}"
        for text in e.get("notes") or []:
            assert any(text in n.text for n in r.notes), f"no note with {text!r} in {ctx}"


def test_every_check_has_cases_for_every_verdict_it_gives() -> None:
    seen: dict[str, set[str]] = {}
    for path in _case_files():
        doc = _read(path)
        for case in doc["cases"]:
            for e in case.get("expect") or []:
                seen.setdefault(f"{doc['check']}:{e['term']}", set()).add(e["verdict"])
    every = {str(v) for v in Verdict}
    assert seen["peak:peak"] == every
    assert seen["regions:regions"] == every - {"indeterminate"}
    assert seen["regions:routing"] == every
    assert seen["regions:residency"] == every
    assert seen["rate_limit:rate_limit"] == every
    # availability is decided by a number, unless unclassified failures decide it (read both
    # ways: indeterminate); not_measurable cannot arise
    assert seen["availability:availability"] == {"met", "breached", "indeterminate", "no_data"}


# ---------------------------------------------------------------------------------------------
# Invariants

PROPERTY_CONTRACT = {
    "regions": {
        "primary": [{"name": "cn-north-1", "jurisdiction": {"country": "CN"}}],
        "failover": [
            {"name": "cn-east-2", "jurisdiction": {"country": "CN"}},
            {"name": "ap-southeast-1", "jurisdiction": {"country": "SG"}},
        ],
        "residency": {"countries": ["CN"]},
    },
    "routing": {"cross_region": "peak_only"},
    "peak": {
        "definition": {"kind": "request_rate", "requests_per_minute": 2},
        "degradation": {"queue": {"max_wait_ms": 500}},
    },
    "rate_limit": {"basis": "per_request", "limit": 3, "period": "minute"},
    "availability": {"target_percent": 90},
    "credits": {
        "tiers": [
            {"from_percent": 80, "to_percent": 90, "credit_percent": 10},
            {"from_percent": 0, "to_percent": 80, "credit_percent": 50},
        ]
    },
}

_row = st.fixed_dictionaries(
    {
        "task_id": st.sampled_from(["t1", "t2", "t3", "t4"]),
        "minute": st.integers(0, 4),
        "second": st.integers(0, 59),
        "status": st.sampled_from(["ok", "ok", "error", "throttled", "timeout"]),
        "http_status": st.sampled_from([None, 200, 429, 500, 503]),
        "region": st.sampled_from([None, "cn-north-1", "cn-east-2", "ap-southeast-1", "us-east-1"]),
        "response_model": st.sampled_from([None, "gpt-4o", "gpt-4o-mini"]),
        "queue_ms": st.sampled_from([None, 10.0, 400.0, 900.0]),
        "response_cached": st.sampled_from([None, False, True]),
    }
)


def _property_rows(drawn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for i, d in enumerate(drawn):
        start = _us("2026-07-31T15:58:00+00:00") + (d["minute"] * 60 + d["second"]) * 1_000_000
        rows.append(
            {
                "task_id": d["task_id"],
                "span_id": f"s{i}",
                "kind": "llm",
                "start_us": start,
                "end_us": start + 200_000,
                "duration_ms": 200.0,
                "status": d["status"],
                "http_status": d["http_status"],
                "region": d["region"],
                "request_model": "gpt-4o",
                "response_model": d["response_model"],
                "queue_ms": d["queue_ms"],
                "response_cached": d["response_cached"],
            }
        )
    return rows


def _evaluate(contract: Contract, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        traces = write_traces(rows, Path(folder))
        ctx = CheckContext(contract, traces)
        return [r.to_dict() for fn in CHECKS.values() for r in fn(ctx)]


@settings(max_examples=10, deadline=None)
@given(drawn=st.lists(_row, min_size=1, max_size=12), seed=st.integers(0, 2**16))
def test_good_never_exceeds_total_and_row_order_changes_nothing(
    drawn: list[dict[str, Any]], seed: int
) -> None:
    # The month edge in Asia/Shanghai falls inside the drawn minutes: two windows per term.
    contract = make_contract(PROPERTY_CONTRACT, "Asia/Shanghai")
    rows = _property_rows(drawn)
    first = _evaluate(contract, rows)
    for r in first:
        json.dumps(r)  # results go to JSON and templates as they are
        assert 0 <= r["good"] <= r["total"], r
        if r["verdict"] == "met" and r["unit"] == "%" and r["kind"] != "availability":
            assert r["observed"] == 100.0, r
        if r["kind"] == "availability" and r["observed"] is not None:
            # read both ways (readings.unclassified_failures: bounds): met when the target holds
            # with every unclassified failure the vendor's, breached when it fails without them
            low = r["details"].get("observed_with_unclassified_as_failures", r["observed"])
            want = "met" if low >= 90 else "breached" if r["observed"] < 90 else "indeterminate"
            assert r["verdict"] == want, r
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    assert _evaluate(contract, shuffled) == first
