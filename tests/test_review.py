"""The clause review: per-rule YAML cases, the registry's contract, and the sample contracts."""

# tests/cases/review/SLAnnn.yaml holds one rule's behaviour cases, as in sqlfluff: a minimal
# contract (the `contract:` identity block is filled in when omitted), the finding codes that
# must be `present` and `absent`, and optionally the exact `paths` a code is reported at. Every
# registered rule needs a case that triggers it and one that does not.

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from slacheck.contract.load import load_contract, load_contract_text, read_contract
from slacheck.contract.model import Contract
from slacheck.contract.review import RULES, Finding, Hit, Says, Severity, review, rule

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "cases" / "review"
CONTRACTS = ROOT / "contracts"
SAMPLES = (
    "strong-cn-task-e2e",
    "weak-vendor-draft",
    "provisioned-throughput-tps",
    "hyperscaler-availability-credits",
)
IDENTITY = {
    "id": "T-1",
    "vendor": "Example Cloud",
    "customer": "Example Customer",
    "effective": {"start": "2026-01-01"},
}


def _case_files() -> list[Path]:
    return sorted(CASES.glob("SLA*.yaml"))


def _read(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _cases() -> Iterator[Any]:
    for path in _case_files():
        doc = _read(path)
        for case in doc["cases"]:
            yield pytest.param(doc["rule"], case, id=f"{path.stem}-{case['name']}")


def _contract(case: dict[str, Any], where: str) -> Contract:
    """Through the real loader (YAML text in), so a bad case reports file, line and field."""
    data = {"contract": IDENTITY, **(case["contract"] or {})}
    buf = io.StringIO()
    YAML(typ="safe").dump(data, buf)
    return load_contract_text(buf.getvalue(), where)


@pytest.mark.parametrize(("code", "case"), list(_cases()))
def test_case(code: str, case: dict[str, Any]) -> None:
    findings = review(_contract(case, f"{code}: {case['name']}"))
    codes = {f.code for f in findings}
    for want in case.get("present", []):
        assert want in codes, f"{want} expected, got {sorted(codes)}"
    for unwanted in case.get("absent", []):
        assert unwanted not in codes, f"{unwanted} not expected"
    for c, paths in (case.get("paths") or {}).items():
        assert sorted(f.path for f in findings if f.code == c) == sorted(paths)


# ---------------------------------------------------------------------------------------------
# The registry


def test_case_files_match_registered_rules() -> None:
    files = {p.stem for p in _case_files()}
    assert files == set(RULES)
    for p in _case_files():
        assert _read(p)["rule"] == p.stem


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_is_triggered_and_not_triggered_by_its_cases(code: str) -> None:
    cases = _read(CASES / f"{code}.yaml")["cases"]
    assert any(code in c.get("present", []) for c in cases), f"{code} has no triggering case"
    assert any(code in c.get("absent", []) for c in cases), f"{code} has no clean case"


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_is_documented(code: str) -> None:
    r = RULES[code]
    assert r.code == code
    assert isinstance(r.severity, Severity)
    title, _, body = r.doc.partition("\n")
    assert r.title == title.strip() and r.title.endswith(".")
    assert len(body.strip()) >= 60, "the docstring body is the rule's user documentation"


def test_codes_are_grouped_and_ordered() -> None:
    assert list(RULES) == sorted(RULES)
    assert {c[3] for c in RULES} == {"1", "2", "3", "4", "5", "6", "7"}


def test_registry_rejects_bad_rules() -> None:
    def documented(contract: Contract) -> Iterator[Hit]:
        """A title.

        A body.
        """
        return iter(())

    def undocumented(contract: Contract) -> Iterator[Hit]:
        return iter(())

    before = dict(RULES)
    with pytest.raises(ValueError, match="twice"):
        rule("SLA101", Severity.LOW)(documented)
    with pytest.raises(ValueError, match="SLA101"):
        rule("X1", Severity.LOW)(documented)
    with pytest.raises(TypeError, match="docstring"):
        rule("SLA699", Severity.LOW)(undocumented)
    after = dict(RULES)
    assert after == before


def test_findings_sorted_by_severity_then_code() -> None:
    findings = review(load_contract(CONTRACTS / "weak-vendor-draft.yaml"))
    keys = [(f.severity.rank, f.code) for f in findings]
    assert keys == sorted(keys)
    assert findings[0].severity is Severity.HIGH
    assert findings[-1].severity is Severity.LOW


def test_finding_to_dict_is_json() -> None:
    why = Says.SLA101_WHY(
        term="L1", objective=Says.OBJECTIVE_MS(percentile=99, op="≤", threshold=800), threshold=800
    )
    f = Finding(
        "SLA101",
        Severity.HIGH,
        ("latency", 0, "measurement_point"),
        Says.SLA101_TITLE(),
        why,
        Says.SLA101_FIX(term="L1"),
    )
    d = json.loads(json.dumps(f.to_dict()))
    assert d["severity"] == "high"
    assert d["field"] == ["latency", 0, "measurement_point"]
    assert d["path"] == "latency[0].measurement_point"
    # the English text as before, and the message it came from: code, params, text
    assert d["explanation"].startswith("L1 promises p99 ≤ 800 ms measured inside the vendor")
    said = d["messages"]["explanation"]
    assert said["code"] == "SLA101.why" and said["text"] == d["explanation"]
    assert said["params"]["objective"]["code"] == "review.objective.ms"
    assert said["params"]["threshold"] == 800


# ---------------------------------------------------------------------------------------------
# The sample contracts


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_loads_with_schema_header(name: str) -> None:
    path = CONTRACTS / f"{name}.yaml"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# yaml-language-server: $schema=../slacheck/contract/contract.schema.json"
    assert lines[1].startswith("# ") and lines[2].startswith("# ")
    loaded = read_contract(path)
    # every finding points at a line the lint output can cite
    for f in review(loaded.contract):
        line, _ = loaded.position(f.field)
        assert line is not None, f.path


def test_strong_contract_has_no_high_finding() -> None:
    findings = review(load_contract(CONTRACTS / "strong-cn-task-e2e.yaml"))
    assert [f.code for f in findings if f.severity is Severity.HIGH] == []


def test_weak_draft_findings() -> None:
    findings = review(load_contract(CONTRACTS / "weak-vendor-draft.yaml"))
    codes = {f.code for f in findings}
    expected = {
        "SLA101",  # server_processing metering
        "SLA301",  # no peak section
        "SLA401",  # per-request rate limit
        "SLA402",  # ...without steps_per_task
        "SLA502",  # no time zone
        "SLA501",  # no percentile method
        "SLA503",  # rolling 30 days
        "SLA504",  # no min_samples
        "SLA505",  # maintenance in business hours
        "SLA601",  # credit gap under the target
    }
    assert expected <= codes
    (rate,) = [f for f in findings if f.code == "SLA401"]
    assert "600 requests/min is 50 tasks/min at 12 steps" in rate.explanation
    assert "assumed" in rate.explanation


def test_per_task_arithmetic_uses_stated_steps() -> None:
    findings = review(load_contract(CONTRACTS / "hyperscaler-availability-credits.yaml"))
    (rate,) = [f for f in findings if f.code == "SLA401"]
    assert "2,000 requests/min is 250 tasks/min at 8 steps" in rate.explanation


def test_credit_gap_quotes_the_contract() -> None:
    findings = review(load_contract(CONTRACTS / "weak-vendor-draft.yaml"))
    (gap,) = [f for f in findings if f.code == "SLA601"]
    assert "99.9" in gap.explanation and "99.5" in gap.explanation
    assert "0.4 points" in gap.explanation
