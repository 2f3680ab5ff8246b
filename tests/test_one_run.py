"""One metering run per document command: ``report``, ``accept`` and ``claim`` ask the no-window
question of the same run their prepare stage reads (its calls, quarter hours and peak minutes
built once), never of a second one. Counted on the real engine: every ``Metering`` built during
the command is recorded (the object is the real one, only its construction is counted)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.metering.context import Metering

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "slacheck" / "contract" / "starters" / "demo.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("one-run") / "july.parquet"
    write(generate(TrafficProfile(tasks=120, days=31, seed=5)), path, "parquet")
    return path


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Metering]]:
    """Every metering run built while the test runs."""
    built: list[Metering] = []
    init = Metering.__init__

    def counted(self: Metering, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(Metering, "__init__", counted)
    yield built


def test_report_builds_one_metering_run(month: Path, tmp_path: Path, runs: list[Metering]) -> None:
    out = tmp_path / "report.md"
    args = ["report", str(DEMO), str(month), "--period", "2026-Q3", "-o", str(out)]
    result = runner.invoke(app, [*args, "--issued", "2026-10-10"])
    assert result.exit_code == 0, result.output
    assert out.exists()
    assert len(runs) == 1
    (run,) = runs
    assert run.period is not None and run.period.label == "2026-Q3"


def test_claim_builds_one_metering_run(month: Path, tmp_path: Path, runs: list[Metering]) -> None:
    args = ["claim", str(DEMO), str(month), "--period", "2026-07", "-o", str(tmp_path / "pack")]
    result = runner.invoke(app, [*args, "--issued", "2026-08-15"])
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / "pack" / "claim.json").exists()
    assert len(runs) == 1


@pytest.mark.parametrize("period", [None, "2026-07"])
def test_accept_builds_one_metering_run(
    month: Path, tmp_path: Path, runs: list[Metering], period: str | None
) -> None:
    out = tmp_path / "accept.md"
    args = ["accept", str(DEMO), "-o", str(out), str(month)]
    result = runner.invoke(app, args if period is None else [*args, "--period", period])
    assert result.exit_code == 0, result.output
    assert out.exists()
    assert len(runs) == 1


def test_a_period_without_windows_is_said_from_the_one_run(
    month: Path, tmp_path: Path, runs: list[Metering]
) -> None:
    # 2026-Q2 is before the demo contract's effective period: nothing to report on
    out = tmp_path / "report.md"
    args = ["report", str(DEMO), str(month), "--period", "2026-Q2", "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "no window of the effective period" in result.output
    assert not out.exists()
    assert len(runs) == 1
