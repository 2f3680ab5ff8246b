"""One snapshot-name rule: the contract's lint (SLA303) and the checks' scope read it alike."""

from __future__ import annotations

import ibis
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slacheck.contract.model import Contract
from slacheck.contract.review import review
from slacheck.metering.derive import model_base_expr, region_key_expr
from slacheck.names import model_base, region_key

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


def _contract(fallback: str) -> Contract:
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
        }
    )


def _bases_in_engine(names: list[str]) -> list[str | None]:
    t = ibis.memtable(pd.DataFrame({"v": names}))
    out = t.select(m=model_base_expr(t.v)).execute()
    return list(out["m"])


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


_name = st.text(alphabet="abcGPT-4o@/0123456789 .", max_size=24)


@settings(max_examples=40, deadline=None)
@given(st.lists(_name, min_size=1, max_size=8))
def test_python_and_engine_rules_are_one(names: list[str]) -> None:
    assert _bases_in_engine(names) == [model_base(n) for n in names]


@pytest.mark.parametrize("name", ["CN-Shanghai", " cn-shanghai ", "cn-shanghai"])
def test_region_key_twins(name: str) -> None:
    t = ibis.memtable(pd.DataFrame({"v": [name]}))
    assert t.select(r=region_key_expr(t.v)).execute()["r"][0] == region_key(name) == "cn-shanghai"
