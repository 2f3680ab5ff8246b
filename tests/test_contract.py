"""Contract loading: every validation rule, located errors, schema, init, samples, docs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.contract.docs import json_schema, json_schema_text, reference_markdown
from slacheck.contract.load import load_contract, load_contract_text
from slacheck.contract.model import Contract, MeasurementPoint, PercentileMethod
from slacheck.errors import ContractInvalid, Reason

ROOT = Path(__file__).resolve().parents[1]
CASES = YAML(typ="safe").load((ROOT / "tests/cases/contract_invalid.yaml").read_text())
SAMPLES = sorted((ROOT / "contracts").glob("*.yaml"))
runner = CliRunner()


def _with_base(text: str) -> str:
    # The case's own lines come first, so expected line numbers count in the case text.
    if re.search(r"^contract:", text, re.M):
        return text
    return text + CASES["base"]


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"])
def test_invalid_contract_reports_line_and_field(case: dict[str, Any]) -> None:
    with pytest.raises(ContractInvalid) as info:
        load_contract_text(_with_base(case["yaml"]), "case.yaml")
    got = [(p.code, p.line, p.field) for p in info.value.problems]
    want = [(Reason(w["code"]), w["line"], w["field"]) for w in case["problems"]]
    assert sorted(got, key=str) == sorted(want, key=str)
    for w in case["problems"]:
        problem = next(p for p in info.value.problems if p.field == w["field"])
        assert w.get("fix_contains", "") in problem.fix
        assert w.get("message_contains", "") in problem.message
    assert all(p.file == "case.yaml" for p in info.value.problems)


def test_every_validation_rule_has_a_case() -> None:
    # Each FieldError raised in the contract model (model.py and the modules it is built from)
    # must be exercised by a case above.
    parts = ("model", "base", "credits", "exclusions", "readings")
    source = "".join((ROOT / f"slacheck/contract/{m}.py").read_text() for m in parts)
    raised = len(re.findall(r"raise FieldError\(", source))
    cross = sum(1 for c in CASES["cases"] for p in c["problems"] if p["code"] == "cross_field")
    # the one FieldError that is not cross-field: a yes/no given for a number or a word
    yes_no = sum(
        1
        for c in CASES["cases"]
        for p in c["problems"]
        if "yes/no" in p.get("message_contains", "")
    )
    assert cross + min(yes_no, 1) >= raised


def test_yaml_syntax_error_is_located() -> None:
    with pytest.raises(ContractInvalid) as info:
        load_contract_text("contract:\n  id: [unclosed\n  vendor: V\n", "s.yaml")
    (problem,) = info.value.problems
    assert problem.code is Reason.YAML_SYNTAX
    assert problem.line == 3


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(ContractInvalid) as info:
        load_contract_text("- a\n- b\n", "list.yaml")
    assert info.value.problems[0].code is Reason.NOT_A_MAPPING


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ContractInvalid) as info:
        load_contract(tmp_path / "nope.yaml")
    assert info.value.problems[0].code is Reason.FILE_NOT_FOUND


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_validate(path: Path) -> None:
    contract = load_contract(path)
    assert contract.contract.id


def test_there_are_at_least_four_samples() -> None:
    assert len(SAMPLES) >= 4


def test_method_defaults_to_nearest_rank() -> None:
    c = load_contract_text(
        CASES["base"]
        + "latency:\n  - id: L\n    measurement_point: full_response\n"
        + "    objective: {kind: occurrence, percentile: 95, threshold: 500}\n"
    )
    objective = c.latency[0].objective
    assert objective.kind == "occurrence"
    assert objective.method is PercentileMethod.NEAREST_RANK
    assert "method" not in objective.model_fields_set  # the review can tell it was unstated
    assert c.latency[0].measurement_point is MeasurementPoint.FULL_RESPONSE


# -- CLI ------------------------------------------------------------------------------------


def test_validate_cli_exit_codes(tmp_path: Path) -> None:
    ok = runner.invoke(app, ["validate", *map(str, SAMPLES)])
    assert ok.exit_code == 0, ok.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("contract:\n  id: X\n  vendr: V\n")
    res = runner.invoke(app, ["validate", str(bad)])
    assert res.exit_code == 2
    assert f"{bad}:3:3" in res.output
    assert "Traceback" not in res.output


def test_init_writes_a_contract_that_validates(tmp_path: Path) -> None:
    for lang in ("en", "zh"):
        target = tmp_path / f"{lang}.yaml"
        res = runner.invoke(app, ["init", "--lang", lang, "-o", str(target)])
        assert res.exit_code == 0, res.output
        text = target.read_text(encoding="utf-8")
        assert text.startswith("# yaml-language-server: $schema=")
        assert isinstance(load_contract(target), Contract)
        again = runner.invoke(app, ["init", "--lang", lang, "-o", str(target)])
        assert again.exit_code == 2  # refuses to overwrite without --force
    assert "合同" in (tmp_path / "zh.yaml").read_text(encoding="utf-8")


def test_schema_cli_prints_json_schema() -> None:
    res = runner.invoke(app, ["schema"])
    assert res.exit_code == 0
    schema = json.loads(res.output)
    assert schema["$schema"].endswith("2020-12/schema")
    assert set(schema["required"]) == {"contract"}
    assert "LatencyTerm" in schema["$defs"]
    assert schema["additionalProperties"] is False


def test_schema_file_shipped_is_current() -> None:
    shipped = ROOT / "slacheck/contract/contract.schema.json"
    assert shipped.read_text(encoding="utf-8") == json_schema_text(), (
        "regenerate: slacheck schema -o slacheck/contract/contract.schema.json"
    )


def test_schema_validates_samples_structurally() -> None:
    # Every sample's top-level keys are properties of the schema (an editor would accept them).
    props = set(json_schema()["properties"])
    for path in SAMPLES:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        assert set(data) <= props, path


def test_readme_documents_every_contract_field() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- contract-fields:start -->") + len("<!-- contract-fields:start -->")
    end = readme.index("<!-- contract-fields:end -->")
    assert readme[start:end].strip() == reference_markdown().strip(), (
        "README contract reference drifted: run `make docs`"
    )
