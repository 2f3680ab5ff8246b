"""The evaluator end to end: CLI exit codes, JSON and JUnit shapes, periods, Spark parity."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.contract.load import load_contract, load_contract_text
from slacheck.evaluation import evaluate
from slacheck.trace.ingest import ingest

ROOT = Path(__file__).resolve().parents[1]
STRONG = ROOT / "contracts" / "strong-cn-task-e2e.yaml"
runner = CliRunner()

LENIENT = """
contract:
  id: LENIENT
  vendor: V
  customer: C
  effective: {start: 2026-07-01}
  time_zone: UTC
latency:
  - id: full-p50
    measurement_point: full_response
    objective: {kind: occurrence, percentile: 50, threshold: 600000, method: nearest_rank}
    min_samples: 10
"""


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("c") / "lenient.yaml"
    path.write_text(LENIENT)
    return path


def test_check_exit_0_when_every_term_is_met(lenient: Path, generated_parquet: Path) -> None:
    res = runner.invoke(app, ["check", str(lenient), str(generated_parquet), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {t["verdict"] for t in data["terms"]} == {"met"}


def test_check_exit_1_and_json_shape(generated_parquet: Path, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    res = runner.invoke(
        app,
        ["check", str(STRONG), str(generated_parquet), "--format", "json", "--junit", str(junit)],
    )
    assert res.exit_code == 1, res.output
    data = json.loads(res.output)
    required = {"id", "window", "verdict", "good", "total", "observed", "criterion", "examples"}
    assert data["terms"] and all(required <= set(t) for t in data["terms"])
    assert all(0 <= t["good"] <= t["total"] for t in data["terms"])
    assert sum(data["summary"].values()) == len(data["terms"])
    suite = ET.parse(junit).getroot()
    cases = suite.findall("testcase")
    assert len(cases) == len(data["terms"])
    breached = sum(t["verdict"] == "breached" for t in data["terms"])
    assert len(suite.findall("testcase/failure")) == breached == int(suite.get("failures", -1))


def test_check_exit_2_on_bad_input(generated_parquet: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("contract: {id: X}\n")
    res = runner.invoke(app, ["check", str(bad), str(generated_parquet)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    res = runner.invoke(app, ["check", str(STRONG), str(tmp_path / "missing.parquet")])
    assert res.exit_code == 2 and "no such trace file" in res.output
    res = runner.invoke(app, ["check", str(STRONG), str(generated_parquet), "--period", "July"])
    assert res.exit_code == 2 and "2026-Q3" in res.output


def test_period_quarter_gives_monthly_windows(generated_parquet: Path) -> None:
    traces = ingest([generated_parquet])
    result = evaluate(load_contract(STRONG), traces, period="2026-Q3")
    latency_windows = {r.window for r in result.results if r.kind == "latency"}
    assert latency_windows == {"2026-07", "2026-08", "2026-09"}
    empty = [r for r in result.results if r.kind == "latency" and r.window != "2026-07"]
    assert empty and all(r.verdict == "no_data" for r in empty)


def test_fields_cli_json_and_exit(generated_parquet: Path) -> None:
    res = runner.invoke(app, ["fields", str(STRONG), str(generated_parquet), "--format", "json"])
    data = json.loads(res.output)
    items = data["items"]
    assert [i["item"] for i in sorted(items, key=lambda i: i["item"])] == list(range(1, 9))
    keys = {"item", "name", "numerator", "denominator", "status", "needs_schema_change", "fix"}
    assert all(keys <= set(i) for i in items)
    gaps = [i for i in items if i["status"] not in ("measurable", "derivable", "not_applicable")]
    assert res.exit_code == (1 if gaps else 0)


def test_budget_cli(generated_parquet: Path) -> None:
    res = runner.invoke(
        app, ["budget", str(generated_parquet), "--what-if", "steps=0.5", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["what_if"][0]["projected_ms"] < data["what_if"][0]["baseline_ms"]
    bad = runner.invoke(app, ["budget", str(generated_parquet), "--what-if", "steps=-1"])
    assert bad.exit_code == 2


@pytest.mark.spark
def test_spark_gives_the_same_verdicts(generated_parquet: Path, spark_backend: object) -> None:
    # the strong contract with every metering reading turned, an effective period cut
    # mid-window and a zone with DST: every field of every term the same on both engines
    text = STRONG.read_text(encoding="utf-8")
    text = text.replace(
        "effective: {start: 2026-07-01, end: 2027-06-30}", "effective: {start: 2026-07-02}"
    ).replace("time_zone: Asia/Shanghai", "time_zone: America/New_York")
    text += """
readings:
  per_task_rate_counts: active
  at_the_limit: beyond
  model_scope: either
"""
    variant = load_contract_text(text)
    duck = evaluate(variant, ingest([generated_parquet]))
    spark = evaluate(variant, ingest([generated_parquet], backend=spark_backend))  # type: ignore[arg-type]
    assert spark.engine == "spark" and duck.engine == "duckdb"
    assert duck.results, "the variant must give verdicts to compare"
    spark_d, duck_d = spark.to_dict(), duck.to_dict()
    assert spark_d["terms"] == duck_d["terms"]
    assert spark_d["effective"] == duck_d["effective"]
    assert spark_d["quality"] == duck_d["quality"]


def test_lenient_contract_in_python_api(generated_parquet: Path) -> None:
    result = evaluate(load_contract_text(LENIENT), ingest([generated_parquet]))
    assert result.ok and result.exit_code == 0


@pytest.mark.spark
def test_keys_trim_only_white_space_on_spark(spark_backend: object) -> None:
    # Ibis's strip() compiles on Spark to a trim that also drops the letters v and f
    import ibis
    import pandas as pd

    from slacheck.metering.derive import (
        RegionKeys,
        model_base_expr,
        provider_key_expr,
        region_key_table,
        region_keys,
        region_keys_of,
        with_region_key,
    )

    values = ["  vertex-f ", "Falkenstein", "fv"]
    con = spark_backend
    t = con.create_table(  # type: ignore[attr-defined]
        "slacheck_strip_probe", pd.DataFrame({"v": values}), overwrite=True
    )
    got = t.select(p=provider_key_expr(t.v), m=model_base_expr(t.v)).execute()
    want = ["vertex-f", "falkenstein", "fv"]
    assert list(got["p"]) == list(got["m"]) == want
    # the region keys, once per distinct region in Python, read on Spark as on DuckDB: every
    # white space str.strip knows (a no-break space, an ideographic space, a vertical tab)
    regions = [*values, "\xa0CN-Shanghai\u3000", "\x0bcn-beijing", " \t", None]
    df = pd.DataFrame(
        {
            "region": regions,
            "region_d": [r or "US-Central1" for r in regions],
            "i": range(len(regions)),
        }
    )
    r = con.create_table("slacheck_region_probe", df, overwrite=True)  # type: ignore[attr-defined]
    expect = [*want, "cn-shanghai", "cn-beijing", None, "us-central1"]
    for keys in (
        region_keys_of(r.select("region").distinct()),
        RegionKeys(table=region_key_table(region_keys(regions))),
    ):
        got_r = with_region_key(r, keys).order_by("i").execute()
        assert [None if k is None or k != k else k for k in got_r["region_key"]] == expect
    assert ibis.__name__ == "ibis"
