"""The effective period, said: ``fields`` measures the traces given and counts the calls before
and after the effective period; ``check``, ``accept``, ``report`` and ``claim`` say, when no
window of the effective period overlaps the traces, exactly that, with both date ranges."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slacheck.cli import app

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "data" / "exports" / "litellm_spendlogs.csv"
runner = CliRunner()

CONTRACT = """\
contract:
  id: next-year
  vendor: OpenAI
  customer: Acme
  effective: {{start: {start}, end: {end}}}
  time_zone: UTC
scope:
  providers: [openai]
latency:
  - id: ttft
    measurement_point: time_to_first_token
    objective: {{kind: occurrence, percentile: 95, threshold: 2000, method: nearest_rank}}
availability:
  target_percent: 99.0
credits:
  tiers: [{{from_percent: 0, to_percent: 99.0, credit_percent: 10}}]
"""


def _rows() -> list[dict[str, str]]:
    with TRACES.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _day(text: str) -> str:
    return datetime.fromisoformat(text).date().isoformat()  # naive is UTC, as slacheck reads


def _contract(tmp_path: Path, start: str, end: str) -> Path:
    path = tmp_path / "contract.yaml"
    path.write_text(CONTRACT.format(start=start, end=end), encoding="utf-8")
    return path


@pytest.fixture
def next_year(tmp_path: Path) -> Path:
    """A draft whose effective period starts after the traces end."""
    last = max(_day(r["endTime"]) for r in _rows())
    year = int(last[:4]) + 1
    return _contract(tmp_path, f"{year}-01-01", f"{year}-12-31")


def _ranges(contract: Path) -> tuple[str, str, str, str]:
    rows = _rows()
    text = contract.read_text(encoding="utf-8")
    start = text.split("start: ")[1].split(",")[0]
    end = text.split("end: ")[1].split("}")[0]
    return (
        min(_day(r["startTime"]) for r in rows),
        max(_day(r["endTime"]) for r in rows),
        start,
        end,
    )


def test_fields_measures_traces_before_the_effective_period(next_year: Path) -> None:
    rows = _rows()
    result = runner.invoke(app, ["fields", str(next_year), str(TRACES), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    in_scope = [r for r in rows if r["custom_llm_provider"] == "openai"]
    assert doc["effective"]["calls_before"] == len(in_scope) > 0
    assert doc["effective"]["calls_after"] == 0
    assert doc["effective"]["message"]["code"] == "metering.effective.outside"
    # the traces are measured, not hidden: every request is a task with its time
    task = next(i for i in doc["items"] if i["item"] == 4)
    assert task["denominator"] == len({r["request_id"] for r in rows})
    assert doc["scope"]["calls"] == len(rows)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fields_says_the_calls_outside_in_both_languages(next_year: Path, lang: str) -> None:
    result = runner.invoke(app, ["fields", str(next_year), str(TRACES), "--lang", lang])
    _, _, start, end = _ranges(next_year)
    text = " ".join(result.stdout.split())
    n = len(_rows())
    said = f"{n} calls fall before" if lang == "en" else f"有 {n} 次调用在生效期"
    assert said in text and start in text and end in text
    assert "the traces hold no model calls" not in text


def test_check_says_no_window_overlaps_with_both_ranges(next_year: Path, tmp_path: Path) -> None:
    junit = tmp_path / "out.xml"
    args = ["check", str(next_year), str(TRACES), "--format", "json", "--junit", str(junit)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("skipped")) == ("2", "2")
    assert all("no window" in (s.text or "") for s in suite.iter("skipped"))
    doc = json.loads(result.stdout)
    first, last, start, end = _ranges(next_year)
    assert doc["terms"] == []
    assert doc["summary"]["no_data"] == 2  # ttft and availability
    assert sum(doc["summary"].values()) == 2
    said = doc["no_window"]
    assert said["code"] == "metering.effective.no_window"
    p = said["params"]
    assert p["effective"]["params"] == {"start": start, "end": end}
    assert p["traces"]["params"] == {"start": first, "end": last}
    assert start in said["text"] and first in said["text"]
    assert doc["effective"]["calls_before"] == len(_rows())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_check_table_says_why_instead_of_an_empty_table(next_year: Path, lang: str) -> None:
    result = runner.invoke(app, ["check", str(next_year), str(TRACES), "--lang", lang])
    assert result.exit_code == 1
    first, last, start, end = _ranges(next_year)
    text = " ".join(result.stdout.split())
    assert all(d in text for d in (first, last, start, end))
    assert "┏" not in result.stdout  # no empty table
    assert ("2 no data" in text) if lang == "en" else ("无数据 2 项" in text)
    assert ("no window of the effective period" in text) == (lang == "en")


def test_check_in_force_says_nothing_of_the_kind(tmp_path: Path) -> None:
    first, *_ = (_day(r["startTime"]) for r in _rows())
    contract = _contract(tmp_path, first[:8] + "01", f"{int(first[:4]) + 1}-12-31")
    result = runner.invoke(app, ["check", str(contract), str(TRACES), "--format", "json"])
    doc = json.loads(result.stdout)
    assert doc["no_window"] is None and doc["terms"]


@pytest.mark.parametrize("command", ["report", "claim", "accept"])
def test_documents_say_no_window_and_exit_1(next_year: Path, tmp_path: Path, command: str) -> None:
    last = _ranges(next_year)[1]
    period = ["--period", last[:7]]
    target = tmp_path / ("pack" if command == "claim" else "out.md")
    args = {
        "report": ["report", str(next_year), str(TRACES), "-o", str(target), *period],
        "claim": ["claim", str(next_year), str(TRACES), "-o", str(target), *period],
        "accept": ["accept", str(next_year), "-o", str(target), str(TRACES)],
    }[command]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "no window of the effective period" in " ".join(result.stdout.split())
    # the acceptance criteria stand without a window; a report or claim has nothing to state
    assert target.exists() == (command == "accept")
