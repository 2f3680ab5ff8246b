"""CI and editors: `python -m slacheck`, the GitHub Action's run script against the demo
contract and generated traffic, and the pre-commit hook's entry, all without a network."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "slacheck" / "contract" / "starters" / "demo.yaml"
BIN = Path(sys.executable).parent


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACHECK", "GITHUB_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env | extra


def test_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "slacheck", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.startswith("slacheck ")


def test_action_is_a_composite_that_calls_the_script() -> None:
    action = YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert {"contract", "traces", "period", "fail-on-breach"} <= set(action["inputs"])
    runs = " ".join(str(s.get("run", "")) for s in action["runs"]["steps"])
    assert "scripts/action.sh" in runs
    uses = [s.get("uses", "") for s in action["runs"]["steps"]]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    assert all("shell" in s for s in action["runs"]["steps"] if "run" in s)


@pytest.fixture(scope="module")
def traffic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("ci") / "traffic.parquet"
    write(generate(TrafficProfile(tasks=60, days=2, seed=5)), path, "parquet")
    return path


def _action(traffic: Path, out: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    inputs = {
        "SLACHECK_CONTRACT": str(DEMO),
        "SLACHECK_TRACES": str(traffic),
        "SLACHECK_PERIOD": "2026-07",
        "SLACHECK_OUTPUT": str(out),
        "PYTHON": sys.executable,
    }
    env = _env(**(inputs | extra))
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "action.sh")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=out.parent,
    )


def _check_md(traffic: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`slacheck check --format md` as a user runs it, for comparing with the Action's summary."""
    cmd = [sys.executable, "-m", "slacheck", "check", str(DEMO), str(traffic), "--period"]
    return subprocess.run(
        [*cmd, "2026-07", "--format", "md", *args],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def test_action_script_runs_the_check(traffic: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    done = _action(traffic, tmp_path / "out", GITHUB_STEP_SUMMARY=str(summary))
    assert done.returncode == 1, done.stderr  # the demo contract is breached
    out = tmp_path / "out"
    assert (out / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")
    result = json.loads((out / "check.json").read_text(encoding="utf-8"))
    assert {t["verdict"] for t in result["terms"]} >= {"breached"}
    table = summary.read_text(encoding="utf-8")
    assert table == (out / "report.md").read_text(encoding="utf-8")
    # the summary is the command's own Markdown, byte for byte: no second renderer
    command = _check_md(traffic)
    assert command.returncode == 1, command.stderr
    assert table == command.stdout
    assert "| L1-task-p95 | 2026-07" in table and "**breached**" in table
    assert "no_data" not in table and ".00 calls" not in table


def test_action_script_can_report_without_failing(traffic: Path, tmp_path: Path) -> None:
    done = _action(traffic, tmp_path / "out", SLACHECK_FAIL_ON_BREACH="false", SLACHECK_LANG="zh")
    assert done.returncode == 0, done.stderr
    # no step summary: the command's Markdown on stdout, in the language asked for
    assert done.stdout == (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| availability | 2026-07" in done.stdout and "可用性" in done.stdout


def test_action_script_passes_bad_input_through(traffic: Path, tmp_path: Path) -> None:
    done = _action(traffic, tmp_path / "out", SLACHECK_CONTRACT=str(tmp_path / "missing.yaml"))
    assert done.returncode == 2 and "missing.yaml" in done.stderr


def test_pre_commit_hook_entry_validates(tmp_path: Path) -> None:
    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "slacheck-validate"]
    assert hook["language"] == "python"
    good = tmp_path / "contracts" / "vendor.yaml"
    good.parent.mkdir()
    good.write_text(DEMO.read_text(encoding="utf-8"), encoding="utf-8")
    bad = tmp_path / "contracts" / "typo.yaml"
    bad.write_text(
        DEMO.read_text(encoding="utf-8").replace("vendor:", "vendr:", 1), encoding="utf-8"
    )
    # pre-commit passes the staged files that match `files` as arguments
    import re

    assert re.search(hook["files"], "contracts/vendor.yaml")
    assert not re.search(hook["files"], ".github/workflows/ci.yml")
    entry = shlex.split(hook["entry"])
    ok = subprocess.run(
        [*entry, str(good)], env=_env(), capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0, ok.stderr
    ko = subprocess.run(
        [*entry, str(good), str(bad)], env=_env(), capture_output=True, text=True, check=False
    )
    assert ko.returncode == 2 and "typo.yaml" in ko.stderr and "vendr" in ko.stderr
