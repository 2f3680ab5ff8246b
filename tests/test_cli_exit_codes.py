"""The command line's exit codes follow the verdicts, whatever typer and click are installed.

The entry point runs as a user runs it (a subprocess of ``python -m slacheck``, the console
script's code); the rest through typer's test runner, which parses with the same installed
typer and click: typer 0.12.5 with click 8.5.1 once made every command print the version and
exit 0. ``make test-deps`` runs this module at the lowest and the newest versions
pyproject.toml allows.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from slacheck import __version__
from slacheck.cli import app

ROOT = Path(__file__).resolve().parents[1]

MET_ALL = """\
contract:
  id: ALL-MET
  vendor: V
  customer: C
  effective: {start: 2026-07-01}
  time_zone: UTC
latency:
  - id: generous
    measurement_point: full_response
    objective: {kind: occurrence, percentile: 50, threshold: 3600000, method: nearest_rank}
    window: calendar_month
    min_samples: 1
"""


def run(*args: str, cwd: Path) -> Any:
    """The command in this process (typer's runner), from ``cwd``."""
    here = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        os.chdir(here)


def slacheck(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "slacheck", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def traffic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("exit") / "traffic.parquet"
    write(generate(TrafficProfile(tasks=100, days=2, seed=3)), path, "parquet")
    return path


def test_version_prints_and_exits_0(tmp_path: Path) -> None:
    done = slacheck("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"slacheck {__version__}"


def test_a_bad_contract_exits_2_naming_the_problem(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("contract:\n  id: x\n  vendr: y\n", encoding="utf-8")
    done = slacheck("validate", "bad.yaml", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "bad.yaml:3" in done.stderr and "vendr" in done.stderr
    assert "slacheck " + __version__ not in done.stdout  # the version is no answer
    assert "Traceback" not in done.stderr


def test_a_usage_error_exits_2(tmp_path: Path) -> None:
    done = run("check", cwd=tmp_path)  # arguments missing
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output


def test_a_breach_exits_1_and_all_met_exits_0(traffic: Path, tmp_path: Path) -> None:
    (tmp_path / "breached.yaml").write_text(MET_ALL.replace("3600000", "1"), encoding="utf-8")
    breached = run("check", "breached.yaml", str(traffic), "--format", "json", cwd=tmp_path)
    assert breached.exit_code == 1, breached.output[-2000:]
    assert set(re.findall(r'"verdict": "(\w+)"', breached.stdout)) == {"breached"}
    (tmp_path / "met.yaml").write_text(MET_ALL, encoding="utf-8")
    met = run("check", "met.yaml", str(traffic), "--format", "json", cwd=tmp_path)
    assert met.exit_code == 0, met.output[-2000:]
    verdicts = set(re.findall(r'"verdict": "(\w+)"', met.stdout))
    assert verdicts == {"met"}


def test_flags_are_read_as_given(tmp_path: Path) -> None:
    # a flag left out is off and a flag given is on (typer < 0.16 with click >= 8.2 read an
    # absent flag as the string "False": truthy)
    listed = run("init", "--list-presets", cwd=tmp_path)
    assert listed.exit_code == 0 and "aws-bedrock" in listed.stdout
    starter = run("init", cwd=tmp_path)
    assert starter.exit_code == 0 and "aws-bedrock" not in starter.stdout
    assert "contract:" in starter.stdout
    (tmp_path / "c.yaml").write_text("x", encoding="utf-8")
    refused = run("init", "-o", "c.yaml", cwd=tmp_path)
    assert refused.exit_code == 2 and "--force" in refused.output
    forced = run("init", "-o", "c.yaml", "--force", cwd=tmp_path)
    assert forced.exit_code == 0 and (tmp_path / "c.yaml").read_text().startswith("#")


@pytest.mark.parametrize(
    "command",
    [
        ["check"],
        ["fields"],
        ["accept", "-o", "a.md"],
        ["report", "-o", "r.md"],
        ["claim", "-o", "c"],
    ],
)
def test_a_bad_period_is_refused_before_the_traces_are_read(
    command: list[str], tmp_path: Path
) -> None:
    # the traces file cannot be read: an error about it means the traces were read first
    (tmp_path / "c.yaml").write_text(MET_ALL, encoding="utf-8")
    (tmp_path / "broken.parquet").write_bytes(b"not parquet at all")
    name, *rest = command
    bad = run(name, "c.yaml", "broken.parquet", "--period", "2026Q3", *rest, cwd=tmp_path)
    assert bad.exit_code == 2, bad.output
    assert "2026Q3" in bad.output and "broken.parquet" not in bad.output, bad.output
    good = run(name, "c.yaml", "broken.parquet", "--period", "2026-Q3", *rest, cwd=tmp_path)
    assert good.exit_code == 2 and "broken.parquet" in good.output, good.output
    assert "Traceback" not in bad.output + good.output
