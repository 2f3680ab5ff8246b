"""One snapshot-name rule: the contract's lint (SLA303) and the checks' scope read it alike."""

from __future__ import annotations

import datetime as dt
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import ibis
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slacheck.contract.model import Contract
from slacheck.contract.review import review
from slacheck.engine import connect
from slacheck.metering.context import Metering
from slacheck.metering.derive import model_base_expr, scoped
from slacheck.names import model_base, region_key
from slacheck.trace.ingest import ingest
from slacheck.trace.schema import BY_NAME, conform

SCOPE = "gpt-4o"
NAMES = [
    "gpt-4o",
    "gpt-4o-latest",
    "gpt-4o@latest",
    "gpt-4o@20240806",
    "gpt-4o-20240806",
    "gpt-4o-2024-08-06",
    "GPT-4o-2024-08-06",
    " gpt-4o ",
    "projects/p/locations/us-central1/publishers/openai/models/gpt-4o-2024-08-06",
    "gpt-4o-mini",
    "gpt-4o-mini-latest",
    "gpt-4",
    "gpt-4o-2024",
]


def _contract(fallback: str, model_scope: str = "requested") -> Contract:
    return Contract.model_validate(
        {
            "contract": {
                "id": "T-1",
                "vendor": "V",
                "customer": "C",
                "effective": {"start": "2026-01-01"},
            },
            "scope": {"models": [SCOPE]},
            "peak": {
                "definition": {"kind": "request_rate", "requests_per_minute": 300},
                "degradation": {"smaller_model": {"fallback_model": fallback}},
            },
            "readings": {"model_scope": model_scope},
        }
    )


@cache
def _duckdb() -> Any:
    return connect("duckdb")


def _bases_in_engine(names: list[str]) -> list[str | None]:
    """``model_base_expr`` on a tiny table, run by DuckDB (the engine the checks default to)."""
    t = ibis.memtable(pd.DataFrame({"v": names}))
    return list(_duckdb().execute(t.select(m=model_base_expr(t.v)))["m"])


def test_sla303_and_the_check_scope_agree_on_every_name() -> None:
    # the check counts a call in scope when its model's base (the Ibis expression) is a scope
    # model's base; SLA303 says the fallback is out of scope exactly when the check would not
    # count calls served by it
    engine = _bases_in_engine(NAMES)
    for name, base in zip(NAMES, engine, strict=True):
        counted = base == model_base(SCOPE)
        flagged = any(f.code == "SLA303" for f in review(_contract(name)))
        assert flagged is not counted, f"{name!r}: SLA303 {flagged}, check counts it {counted}"
    assert engine[1] == engine[3] == engine[4] == "gpt-4o"  # -latest, @date, compact date
    assert engine[9] == "gpt-4o-mini"


# Names as vendors and gateways write them: a base, perhaps a resource path before it, and a
# snapshot or alias after it (the three forms SNAPSHOT strips, and near misses it must keep),
# in any case, perhaps padded; and random text over the same letters.
_day = st.dates(dt.date(2020, 1, 1), dt.date(2029, 12, 31))
_suffix = st.one_of(
    st.sampled_from(["", "-latest", "@latest", "-0613", "-1106"]),
    _day.map(lambda d: f"-{d:%Y-%m-%d}"),
    _day.map(lambda d: f"-{d:%Y%m%d}"),  # compact date
    _day.map(lambda d: f"@{d:%Y%m%d}"),  # @date
    # near misses: not a snapshot, so part of the name
    st.sampled_from(["-2024", "-latest-x", "-lates", "@2024080", "@202408061", "-2024-8-6"]),
)
_structured = st.builds(
    lambda pad, prefix, base, suffix, case: pad + case(prefix + base + suffix) + pad,
    st.sampled_from(["", " "]),
    st.sampled_from(["", "models/", "projects/p/locations/us-central1/publishers/openai/models/"]),
    st.sampled_from(["gpt-4o", "gpt-4o-mini", "gpt-4", "claude-3-5-sonnet", "o1"]),
    _suffix,
    st.sampled_from([str, str.upper, str.title]),
)
_name = st.one_of(_structured, st.text(alphabet="abcGPT-4o@/0123456789 .latesLATES", max_size=24))


@settings(max_examples=60, deadline=None)
@given(st.lists(_name, min_size=1, max_size=8))
def test_python_and_engine_rules_are_one(names: list[str]) -> None:
    assert _bases_in_engine(names) == [model_base(n) for n in names]


# ---------------------------------------------------------------------------------------------
# SLA303 against the checks' own scope: the calls the fallback serves, through ingestion and the
# metering model, counted in scope exactly when the lint says the fallback is in scope


def _served_by(names: list[str], folder: Path) -> Any:
    """One successful model call per name, each its own task (``t<i>``): asked for and answered
    by that name, and one asked for the scope's model but answered by it (``f<i>``), as a
    fallback at peak is; ingested as any trace file is."""
    start = int(dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC).timestamp() * 1_000_000)
    rows: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        for task, requested in ((f"t{i}", name), (f"f{i}", SCOPE)):
            at = start + len(rows) * 1_000_000
            rows.append(
                {
                    "task_id": task,
                    "span_id": f"s{len(rows)}",
                    "kind": "llm",
                    "status": "ok",
                    "provider": "openai",
                    "request_model": requested,
                    "response_model": name,
                    "start_us": at,
                    "end_us": at + 100_000,
                    "duration_ms": 100.0,
                }
            )
    table = pa.table({k: pa.array([r[k] for r in rows], type=BY_NAME[k].type) for k in rows[0]})
    path = folder / "traces.parquet"
    pq.write_table(conform(table), path)
    return ingest([path])


def _in_scope(traces: Any, model_scope: str) -> dict[str, int]:
    """Per task, the calls the checks count in scope (``derive.scoped`` on ``Metering.calls``)."""
    contract = _contract(SCOPE, model_scope)  # the scope is all that matters here
    c = Metering(contract, traces).calls
    counts = c.group_by("task_id").aggregate(n=scoped(c, contract).sum()).to_pyarrow()
    return dict(zip(counts["task_id"].to_pylist(), counts["n"].to_pylist(), strict=True))


def _agree(traces: Any, names: list[str]) -> None:
    # a call naming the fallback on both sides: in scope under every reading or under none
    for model_scope in ("requested", "served", "either"):
        counted = _in_scope(traces, model_scope)
        for i, name in enumerate(names):
            flagged = any(f.code == "SLA303" for f in review(_contract(name, model_scope)))
            assert flagged is not bool(counted[f"t{i}"]), (
                f"{name!r} ({model_scope}): SLA303 {flagged}, the checks count it "
                f"{bool(counted[f't{i}'])}"
            )
    # a call asking for the scope's model, served by the fallback: by the model served, in scope
    # exactly when SLA303 says the fallback is
    counted = _in_scope(traces, "served")
    for i, name in enumerate(names):
        flagged = any(f.code == "SLA303" for f in review(_contract(name, "served")))
        assert flagged is not bool(counted[f"f{i}"]), f"{name!r} served: SLA303 {flagged}"


def test_sla303_and_the_checks_in_scope_count_agree(tmp_path: Path) -> None:
    # the snapshot and alias forms (-latest, @date, compact date) must be in scope on both sides
    traces = _served_by(NAMES, tmp_path)
    _agree(traces, NAMES)
    counted = _in_scope(traces, "requested")
    assert [bool(counted[f"t{i}"]) for i in (1, 3, 4)] == [True, True, True]
    assert not counted[f"t{NAMES.index('gpt-4o-mini')}"]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_structured, min_size=1, max_size=6, unique=True))
def test_sla303_and_the_checks_agree_on_generated_names(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:  # the traces are read lazily: kept till done
        _agree(_served_by(names, Path(folder)), names)


@pytest.mark.parametrize("name", ["CN-Shanghai", " cn-shanghai ", "cn-shanghai"])
def test_region_key_twins(name: str) -> None:
    got = _keys_in_engine([name], "x", table=False)
    assert got == [region_key(name)] == ["cn-shanghai"]


# ---------------------------------------------------------------------------------------------
# The region key once per distinct region (``derive.RegionKeys``): the engine reads each call's
# recorded region through a lookup made by ``names.region_key`` itself, so it is the contract
# side's rule on every string, white space ``str.strip`` knows and the engine's ``\s`` does not
# (no-break and ideographic spaces, the vertical tab, U+0085) included

_SPACE = st.sampled_from(
    [" ", "\t", "\n", "\v", "\f", "\r", "\x1c", "\x85", "\xa0", "\u2003", "\u3000"]
)
_region = st.one_of(
    st.none(),
    st.text(),
    st.builds(
        lambda a, name, b: a + name + b,
        st.text(_SPACE, max_size=3),
        st.sampled_from(["CN-Shanghai", "cn-beijing", "us-east-1", "ÉU-ouest", "İstanbul"]),
        st.text(_SPACE, max_size=3),
    ),
)


def _keys_in_engine(regions: list[str | None], path: str, *, table: bool) -> list[str | None]:
    from slacheck.metering.derive import (
        RegionKeys,
        region_key_table,
        region_keys,
        region_keys_of,
        with_region_key,
    )

    region_d = [path if r is None else r for r in regions]
    schema = pa.schema([("region", pa.string()), ("region_d", pa.string()), ("i", pa.int64())])
    data = pa.table([regions, region_d, list(range(len(regions)))], schema=schema)
    t = ibis.memtable(data)
    keys = region_keys_of(t.select("region").distinct())
    if table:
        keys = RegionKeys(table=region_key_table(region_keys(regions)))
    got = _duckdb().to_pyarrow(with_region_key(t, keys).order_by("i").select("region_key"))
    return got.column("region_key").to_pylist()


@settings(max_examples=150, deadline=None)
@given(st.lists(_region, min_size=1, max_size=8), st.booleans())
def test_region_keys_per_distinct_value_are_the_python_rule(
    regions: list[str | None], table: bool
) -> None:
    # no recorded region: the key of the region in the model's path (letters, digits, _ and -)
    want = [("us-central1" if r is None else (region_key(r) or None)) for r in regions]
    assert _keys_in_engine(regions, "US-Central1", table=table) == want
