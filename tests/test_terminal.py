"""The terminal: piped output is never padded, nothing is cut at 80 columns (piped or on a real
terminal, a pty here), help text carries no type placeholders or raw markup, and a progress
line reports ingestion and evaluation without touching library users."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from slacheck import cli
from slacheck.cli import app

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})


def words_of_markdown(text: str) -> set[str]:
    """The words a reader must find: Markdown's own punctuation (table bars, rules, emphasis,
    heading marks, bullets) left out."""
    plain = re.sub(r"[|*#`]", " ", text)
    return {w for w in plain.split() if not re.fullmatch(r"[-:–—•]+", w)}


def words_shown(text: str) -> set[str]:
    return set(re.sub(r"[│┃║|•*#`]", " ", ANSI.sub("", text)).split())


@pytest.fixture(scope="module")
def traffic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("term") / "traffic.parquet"
    write(generate(TrafficProfile(tasks=120, days=2, seed=5)), path, "parquet")
    return path


@pytest.fixture(scope="module")
def budget_source(traffic: Path) -> str:
    """The budget's Markdown, every word of which the terminal must show."""
    result = invoke("budget", str(traffic), "--format", "md")
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def test_piped_output_is_never_padded(traffic: Path) -> None:
    # rich's Markdown pads every line to the console's width: 10,000 characters when piped
    contract = str(ROOT / "contracts" / "weak-vendor-draft.yaml")
    for args in (
        ("budget", str(traffic)),
        ("lint", contract),
        ("traces", "conventions"),
    ):
        result = invoke(*args)
        assert result.exit_code in (0, 1), result.output[-2000:]
        padded = [line for line in result.stdout.splitlines() if line != line.rstrip()]
        assert not padded, f"{args}: {len(padded)} lines end in padding, e.g. {padded[0][:120]!r}"


def test_piped_budget_at_80_columns_loses_no_word(traffic: Path, budget_source: str) -> None:
    shown = invoke("budget", str(traffic)).stdout
    missing = words_of_markdown(budget_source) - words_shown(shown)
    assert not missing, sorted(missing)[:20]


def _in_pty(args: list[str], columns: int) -> str:
    """Run ``slacheck ARGS`` with stdout and stderr on a pty of ``columns`` columns."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(ROOT)
    env["TERM"] = "xterm"
    proc = subprocess.Popen(
        [sys.executable, "-m", "slacheck", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the pty closes when the process ends
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_on_an_80_column_terminal_the_budget_wraps_and_loses_no_word(
    traffic: Path, budget_source: str
) -> None:
    shown = _in_pty(["--quiet", "budget", str(traffic)], 80)
    lines = [ANSI.sub("", line) for line in shown.replace("\r", "").splitlines()]
    assert max(len(line) for line in lines) <= 80
    missing = words_of_markdown(budget_source) - words_shown(shown)
    assert not missing, sorted(missing)[:20]


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in getattr(group, "commands", {}).items():
        found.extend(_commands(command, (*prefix, name)))
    return found


def test_help_has_no_type_placeholders_or_raw_markup() -> None:
    commands = _commands(typer.main.get_command(app))
    assert len(commands) > 15
    for command in commands:
        result = invoke(*command, "--help")
        assert result.exit_code == 0, (command, result.output)
        text = ANSI.sub("", result.output)
        assert "<bool>" not in text and "BOOLEAN" not in text, (command, text)
        assert "``" not in text, (command, text)
        assert "--help" in text
        # arguments by their names, no type beside them (`<path>`, `<list[str]>`), no braces
        for placeholder in ("<path>", "<list[", "<str>", "{"):
            assert placeholder not in text, (command, placeholder, text)
        # piped (CliRunner is no terminal): click's plain help, nothing padded to a width
        padded = [line for line in text.splitlines() if line != line.rstrip()]
        assert not padded, (command, padded[:3])


def test_shell_completion_is_offered() -> None:
    result = invoke("--help")
    assert "--install-completion" in result.output and "--show-completion" in result.output


def test_progress_reports_files_rows_and_checks(traffic: Path) -> None:
    from slacheck.contract.load import load_contract
    from slacheck.evaluation import evaluate
    from slacheck.progress import Stage, Step, reporting
    from slacheck.trace.ingest import ingest

    steps: list[Step] = []
    with reporting(steps.append):
        traces = ingest([traffic])
        contract = load_contract(ROOT / "contracts" / "strong-cn-task-e2e.yaml")
        evaluate(contract, traces, only=["latency", "peak"])
    reads = [s for s in steps if s.stage is Stage.READ]
    assert reads[0].done == 0 and reads[0].total == 1
    assert reads[0].bytes_total == traffic.stat().st_size
    (quality,) = [s for s in steps if s.stage is Stage.QUALITY]
    assert quality.rows == traces.quality.rows_read
    checks = [s for s in steps if s.stage is Stage.CHECK]
    assert [s.done for s in checks] == list(range(len(checks)))
    assert checks[-1].done == checks[-1].total and checks[-1].item is None
    # with no listener, nothing is reported and nothing changes
    steps.clear()
    ingest([traffic])
    assert steps == []


def test_the_progress_line_says_rate_and_time_left() -> None:
    from slacheck.console import say
    from slacheck.progress import Stage, Step

    class Status:
        def update(self, text: str) -> None:
            self.text = text

    status = Status()
    line = cli._ProgressLine(status, "reading traces…", "en")
    line(Step(Stage.READ, 1, 4, rows=5000, bytes_done=100, bytes_total=400))
    assert status.text.startswith("reading traces… files 1/4, 5,000 rows, ")
    assert re.search(r"spans/s, about \d+:\d\d left$", status.text), status.text
    line(Step(Stage.CHECK, 2, 5, item="peak"))
    assert status.text == "reading traces… checks 2/5: peak"
    zh = cli._ProgressLine(status, "读取", "zh")
    assert "约剩" in say(zh.detail(Step(Stage.READ, 1, 2, 10, 1, 2)), "zh")


def test_progress_only_on_a_terminal_and_never_with_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    from slacheck.cli import terminal as consoles  # where the progress line's stderr lives

    terminal = Console(file=io.StringIO(), force_terminal=True)
    monkeypatch.setattr(consoles, "err", terminal)
    monkeypatch.setattr(consoles, "_quiet", False)
    with cli._working("reading traces…") as shown:
        assert isinstance(shown, cli._ProgressLine)
    monkeypatch.setattr(consoles, "_quiet", True)
    with cli._working("reading traces…") as shown:
        assert isinstance(shown, cli._Quiet)
    monkeypatch.setattr(consoles, "_quiet", False)
    monkeypatch.setattr(consoles, "err", Console(file=io.StringIO()))  # not a terminal
    with cli._working("reading traces…") as shown:
        assert isinstance(shown, cli._Quiet)


def test_quiet_is_an_option_of_every_command_line() -> None:
    result = invoke("--quiet", "validate", str(ROOT / "contracts" / "strong-cn-task-e2e.yaml"))
    assert result.exit_code == 0, result.output
