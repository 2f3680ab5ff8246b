"""`slacheck claim`: the affected calls are the failing calls `check` counts for the window,
the CSV's hash is the one the pack states, and the letter renders in both languages."""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from slacheck.cli import app

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "slacheck" / "contract" / "starters" / "demo.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("claim") / "july.parquet"
    write(generate(TrafficProfile(tasks=150, days=31, seed=11)), path, "parquet")
    return path


def _availability(contract: Path, traffic: Path) -> dict:
    result = runner.invoke(
        app, ["check", str(contract), str(traffic), "--period", "2026-07", "--format", "json"]
    )
    assert result.exit_code in (0, 1), result.output
    (term,) = [t for t in json.loads(result.stdout)["terms"] if t["kind"] == "availability"]
    return term


def test_claim_pack_matches_check(month: Path, tmp_path: Path) -> None:
    out = tmp_path / "pack"
    args = ["claim", str(DEMO), str(month), "--period", "2026-07", "-o", str(out)]
    result = runner.invoke(app, [*args, "--issued", "2026-08-15"])
    assert result.exit_code == 1, result.output  # a credit is due
    term = _availability(DEMO, month)
    failed = term["total"] - term["good"]
    assert failed > 0
    raw = (out / "affected_calls.csv").read_bytes()
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8"))))
    assert len(rows) == failed
    # the vendor's proven failures: a customer error is excluded, an unclassified one is not proven
    assert {r["status"] for r in rows} <= {"vendor_error", "timeout", "throttled"}
    claim = json.loads((out / "claim.json").read_text(encoding="utf-8"))
    assert claim["affected_calls"] == {"rows": failed, "sha256": hashlib.sha256(raw).hexdigest()}
    a = claim["availability"]
    assert (a["numerator_good_calls"], a["denominator_counted_calls"]) == (
        term["good"],
        term["total"],
    )
    assert a["observed_percent"] == pytest.approx(term["observed"])
    credit = claim["credit"]
    assert credit["due"] and credit["percent"] == term["details"]["credit_percent"]
    assert (credit["status"], credit["as_of"], credit["claim_by"]) == (
        "due",
        "2026-08-15",
        "2026-08-30",
    )
    assert credit["deadline"] == term["details"]["claim_deadline"] == "2026-08-30"
    assert credit["amount"] == pytest.approx(180_000 * credit["percent"] / 100)
    assert sum(i["failed_calls"] for i in claim["incidents"]) == failed
    first = claim["incidents"][0]
    assert first["start_utc"].endswith("+00:00") and first["start_local"].endswith("+08:00")
    assert rows[0]["time_utc"] == first["start_utc"]

    en = (out / "letter.en.md").read_text(encoding="utf-8")
    zh = (out / "letter.zh.md").read_text(encoding="utf-8")
    assert "Service credit claim" in en and f"{term['total']:,}" in en
    assert "服务赔偿申请" in zh and "故障区间" in zh and f"{term['total']:,}" in zh
    assert claim["affected_calls"]["sha256"] in en and claim["affected_calls"]["sha256"] in zh
    assert "CNY" in en and "2026-08-30" in zh
    assert "credit of" in result.stdout


def test_no_claim_exits_zero(month: Path, tmp_path: Path) -> None:
    import re

    lenient = tmp_path / "lenient.yaml"
    text = DEMO.read_text(encoding="utf-8").replace("target_percent: 99.5", "target_percent: 50")
    text = re.sub(
        r"  tiers:\n(    - .*\n)+",
        "  tiers:\n    - {from_percent: 0, to_percent: 50, credit_percent: 10}\n",
        text,
    )
    lenient.write_text(text, encoding="utf-8")
    result = runner.invoke(
        app, ["claim", str(lenient), str(month), "--period", "2026-07", "-o", str(tmp_path / "p")]
    )
    assert result.exit_code == 0, result.output
    assert "No credit is due" in result.stdout
    assert (tmp_path / "p" / "letter.zh.md").is_file()


def test_claim_needs_one_window_and_credits(month: Path, tmp_path: Path) -> None:
    quarter = runner.invoke(
        app, ["claim", str(DEMO), str(month), "--period", "2026-Q3", "-o", str(tmp_path / "q")]
    )
    assert quarter.exit_code == 2 and "one" in quarter.stderr
    from slacheck.contract.presets import preset

    ptu = preset("azure-openai-ptu")  # availability without credits
    assert ptu is not None
    bare = tmp_path / "ptu.yaml"
    bare.write_text(ptu.text, encoding="utf-8")
    no_credits = runner.invoke(
        app, ["claim", str(bare), str(month), "--period", "2026-07", "-o", str(tmp_path / "n")]
    )
    assert no_credits.exit_code == 2


def _letter_pack(verdict: str, observed: float | None, tier: float, owed: float) -> Any:
    from slacheck.checks.availability import AvailabilitySays
    from slacheck.render.claim import ClaimPack
    from slacheck.render.credit import credit_claim
    from slacheck.verdict import TermKind, TermResult, Verdict
    from tests.test_check_others import make_contract

    contract = make_contract(
        {
            "availability": {"target_percent": 99.0},
            "credits": {
                "tiers": [
                    {"from_percent": 0, "to_percent": 99.5, "credit_percent": tier},
                    {"from_percent": 99.5, "to_percent": 100, "credit_percent": 1},
                ],
                "cap_percent": 40,
            },
            "fees": {"monthly": 1000, "currency": "CNY"},
        }
    )
    result = TermResult(
        "availability",
        TermKind.AVAILABILITY,
        "2026-07",
        Verdict(verdict),
        observed,
        "%",
        AvailabilitySays.CRITERION(target=99.0, failures=[AvailabilitySays.SERVER_ERRORS()]),
        990,
        1000,
    )
    credit = credit_claim(
        contract,
        dataclasses.replace(result, details={"credit_percent": owed}),
        as_of=dt.date(2026, 8, 1),
    )
    return ClaimPack(contract, "2026-07", result, credit, tier, 40.0, None, (), b"", 0, ())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_letter_says_what_the_verdict_is(lang: str) -> None:
    from slacheck.render.claim import render_letter

    missed = {"en": "missed its availability target", "zh": "未达到可用性目标"}[lang]
    met = {"en": "met its availability target", "zh": "达到了可用性目标"}[lang]
    breached = render_letter(_letter_pack("breached", 98.0, 10, 10), lang)
    assert missed in breached
    # a tier above the target pays a met month: the letter says the target was met
    paid_met = render_letter(_letter_pack("met", 99.2, 10, 10), lang)
    assert missed not in paid_met and met in paid_met
    no_data = render_letter(_letter_pack("no_data", None, 10, 0), lang)
    assert missed not in no_data and met not in no_data
    # a tier of 50 % capped at 40 %: both are said, the owed one in bold
    capped = render_letter(_letter_pack("breached", 98.0, 50, 40), lang)
    assert "50" in capped and "**40" in capped


def _runs_by_hand(rows: list[dict[str, Any]], gap: int) -> list[tuple[Any, ...]]:
    """Incidents as a reader would mark them on the sorted list: a call more than ``gap`` after
    the one before starts a new run."""
    runs: list[list[dict[str, Any]]] = []
    for r in sorted(rows, key=lambda r: r["start_us"]):
        if runs and r["start_us"] - runs[-1][-1]["start_us"] <= gap:
            runs[-1].append(r)
        else:
            runs.append([r])

    def labels(run: list[dict[str, Any]], key: str) -> tuple[str, ...]:
        return tuple(sorted({r[key] for r in run if r[key] is not None}))

    return [
        (
            run[0]["start_us"],
            run[-1]["start_us"],
            len(run),
            labels(run, "region_key"),
            labels(run, "request_model"),
            labels(run, "endpoint"),
        )
        for run in runs
    ]


_LABEL = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                # few distinct starts, so that many calls start together or exactly a gap apart
                "start_us": st.integers(0, 40).map(lambda k: k * 250),
                "region_key": _LABEL,
                "request_model": _LABEL,
                "endpoint": _LABEL,
            }
        ),
        max_size=60,
    ),
    gap=st.sampled_from([0, 250, 500, 1000]),
)
def test_incidents_are_the_runs_a_reader_marks_on_the_sorted_calls(
    rows: list[dict[str, Any]], gap: int
) -> None:
    """The engine's runs (a lag and a running count) are the runs of the sorted list: starts
    exactly ``gap`` apart join one run, calls that start together share one, labels are each
    run's distinct non-null values."""
    import ibis

    from slacheck.prepare.evidence import incidents

    table = ibis.memtable(
        rows or [{"start_us": 0, "region_key": None, "request_model": None, "endpoint": None}],
        schema={
            "start_us": "int64",
            "region_key": "string",
            "request_model": "string",
            "endpoint": "string",
        },
    )
    if not rows:
        table = table.filter(ibis.literal(False))
    got = [dataclasses.astuple(i) for i in incidents(table, gap)]
    assert got == _runs_by_hand(rows, gap)
