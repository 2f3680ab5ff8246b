"""`slacheck export openslo`: OpenSLO v1 SLO documents with the required fields, and the mapped
objectives' numbers round-trip to the contract's."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.contract.load import load_contract
from slacheck.contract.model import OccurrenceObjective, TimeSliceObjective

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = sorted((ROOT / "contracts").glob("*.yaml"))
runner = CliRunner()
_DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _export(path: Path, tmp_path: Path) -> tuple[list[dict], str]:
    out = tmp_path / "slo.yaml"
    result = runner.invoke(app, ["export", "openslo", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    return list(YAML(typ="safe").load_all(io.StringIO(text))), result.stderr


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.stem)
def test_required_openslo_v1_fields(path: Path, tmp_path: Path) -> None:
    docs, _ = _export(path, tmp_path)
    contract = load_contract(path)
    assert len(docs) == len(contract.latency) + (contract.availability is not None)
    names = [d["metadata"]["name"] for d in docs]
    assert len(set(names)) == len(names)
    for d in docs:
        assert d["apiVersion"] == "openslo/v1" and d["kind"] == "SLO"
        assert _DNS1123.fullmatch(d["metadata"]["name"]) and len(d["metadata"]["name"]) <= 63
        assert all(isinstance(v, str) for v in d["metadata"]["annotations"].values())
        spec = d["spec"]
        assert spec["service"]
        assert "indicator" in spec or "indicatorRef" in spec
        assert spec["budgetingMethod"] in {"Occurrences", "Timeslices", "RatioTimeslices"}
        assert spec["timeWindow"] and spec["timeWindow"][0]["duration"]
        for o in spec["objectives"]:
            assert 0 <= o["target"] < 1
            if spec["budgetingMethod"] == "Timeslices":
                assert 0 < o["timeSliceTarget"] <= 1 and o["timeSliceWindow"]
        sli = spec["indicator"]["spec"]
        assert ("ratioMetric" in sli) != ("thresholdMetric" in sli)


def test_numbers_round_trip(tmp_path: Path) -> None:
    path = ROOT / "contracts" / "provisioned-throughput-tps.yaml"
    contract = load_contract(path)
    docs, stderr = _export(path, tmp_path)
    by_name = {d["metadata"]["displayName"].split()[-1]: d for d in docs}
    for term in contract.latency:
        d = by_name[term.id]
        (objective,) = d["spec"]["objectives"]
        ann = d["metadata"]["annotations"]
        assert ann["slacheck.measurement_point"] == str(term.measurement_point)
        o = term.objective
        if isinstance(o, TimeSliceObjective):
            assert objective["target"] * 100 == pytest.approx(o.slices_passing_percent)
            assert objective["timeSliceWindow"] == f"{o.slice_minutes}m"
            assert objective["timeSliceTarget"] == 0.5  # p50 at least N: half the calls
            assert ann["slacheck.slice_statistic"] == o.statistic
            assert d["spec"]["timeWindow"][0] == {
                "duration": "1M",
                "isRolling": False,
                "calendar": {"startTime": "2026-10-01 00:00:00", "timeZone": "UTC"},
            }
        else:
            assert isinstance(o, OccurrenceObjective)
            assert objective["target"] * 100 == pytest.approx(o.percentile)
            assert str(o.threshold).rstrip("0").rstrip(".") in objective["displayName"]
    avail = by_name["availability"]
    assert contract.availability is not None
    assert avail["spec"]["objectives"][0]["target"] == pytest.approx(0.999)
    assert "slacheck.credits" in avail["metadata"]["annotations"]
    assert "left out: rate-limit basis" in stderr


def test_mean_slices_become_a_threshold_metric(tmp_path: Path) -> None:
    from slacheck.contract.presets import preset

    p = preset("azure-openai-ptu")
    assert p is not None
    src = tmp_path / "ptu.yaml"
    src.write_text(p.text, encoding="utf-8")
    docs, _ = _export(src, tmp_path)
    gpt4o = next(d for d in docs if d["metadata"]["name"].endswith("ptu-gpt-4o"))
    (objective,) = gpt4o["spec"]["objectives"]
    assert objective == {
        "displayName": "99 % of 1-minute slices with mean gte 25 tokens/s",
        "target": 0.99,
        "timeSliceWindow": "1m",
        "op": "gte",
        "value": 25.0,
        "timeSliceTarget": 1.0,
    }
    assert "thresholdMetric" in gpt4o["spec"]["indicator"]["spec"]
