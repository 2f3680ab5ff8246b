"""The terminal speaks the reader's language: with --lang zh, no English sentence on screen.

Every command that has --lang is run as a person runs it, piped to a file (a subprocess, so the
width, the encoding and the pipe are the real ones), and its stdout and stderr are read with
the checker the documents use (tests/langcheck.py): identifiers, codes, file names and quoted
contract values are allowed, a run of three or more English words is not. The same commands
in English are read too, for counts that do not agree with their nouns ("1 calls").
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from slacheck.contract.load import load_contract
from slacheck.trace.generate import TrafficProfile, generate, write
from tests.langcheck import english_runs

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ROOT / "contracts"


@pytest.fixture(scope="module")
def traffic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A week of traffic that starts two days before the contract is in force (so `check`
    says what it leaves out), with malformed rows (so it says what it set aside)."""
    path = tmp_path_factory.mktemp("zh-cli") / "traffic.parquet"
    start = dt.datetime(2026, 6, 28, 16, tzinfo=dt.UTC)
    write(
        generate(TrafficProfile(tasks=80, days=7, seed=5, start=start, malformed=4)),
        path,
        "parquet",
    )
    return path


def run(*args: str | Path, cwd: Path = ROOT) -> tuple[int, str]:
    """``slacheck args…`` with stdout and stderr piped to a file; the exit code and the text."""
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"slacheck-zh-{os.getpid()}.txt"
    with log.open("wb") as fh:
        done = subprocess.run(
            [sys.executable, "-m", "slacheck", *map(str, args)],
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env={**os.environ, "COLUMNS": "80"},
            check=False,
        )
    text = log.read_text(encoding="utf-8")
    log.unlink()
    return done.returncode, text


@cache
def quoted(name: str) -> tuple[str, ...]:
    """What the contract says in its own words, quoted as it is."""
    c = load_contract(CONTRACTS / name)
    values = [c.contract.vendor, c.contract.customer, c.contract.id]
    values += [t.description or "" for t in c.latency]
    return tuple(v for v in values if v)


def _lines_with_english(text: str, allowed: tuple[str, ...]) -> list[str]:
    return [line for line in text.splitlines() if english_runs(line, allowed=allowed)]


@pytest.mark.parametrize("name", ["weak-vendor-draft.yaml", "strong-cn-task-e2e.yaml"])
def test_lint_in_chinese(name: str) -> None:
    code, text = run("lint", CONTRACTS / name, "--lang", "zh")
    assert code == 1, text  # both contracts draw findings
    assert "条款审阅" in text and "审阅意见" in text
    assert _lines_with_english(text, quoted(name)) == []
    assert "finding" not in text


def test_fields_and_check_in_chinese(traffic: Path) -> None:
    name = "strong-cn-task-e2e.yaml"
    code, fields = run("fields", CONTRACTS / name, traffic, "--lang", "zh")
    assert code in (0, 1), fields
    assert "八项字段检查" in fields and "分子 / 分母" in fields
    assert _lines_with_english(fields, quoted(name)) == []
    code, check = run("check", CONTRACTS / name, traffic, "--lang", "zh", "--period", "2026-07")
    assert code in (0, 1), check
    for words in ("判定结果", "判定标准", "解释口径", "不予计入"):
        assert words in check, words
    assert _lines_with_english(check, quoted(name)) == []
    # the verdict names are the catalogue's, never the raw values
    assert not re.search(r"\b(breached|no_data|indeterminate)\b", check)


def test_documents_and_init_report_in_chinese(traffic: Path, tmp_path: Path) -> None:
    name = "strong-cn-task-e2e.yaml"
    code, text = run("draft", CONTRACTS / name, "-o", tmp_path / "d.md", "--lang", "zh")
    assert code == 0 and "已写入" in text, text
    code, more = run("init", "--lang", "zh", "-o", tmp_path / "c.yaml")
    assert code == 0 and "已写入" in more, more
    assert _lines_with_english(text + more, quoted(name)) == []


BUDGET_WHAT_IFS = ("--what-if", "steps=0.5", "--what-if", "utilisation=0.85->0.5, network=20")


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_budget_in_chinese(traffic: Path, fmt: str) -> None:
    """The latency budget on the terminal and as Markdown: headings, table labels, sentences,
    scenarios and notes all in Chinese; the English run of the same command is flagged."""
    args = ("budget", traffic, *BUDGET_WHAT_IFS, "--format", fmt)
    code, text = run(*args, "--lang", "zh")
    assert code == 0, text
    for words in ("任务耗时构成", "网络往返", "并行度", "假设分析", "利用率 85% → 50%", "说明："):
        assert words in text, words
    assert "次模型调用在读取时被剔除" in text  # the malformed rows' note
    assert _lines_with_english(text, ()) == []
    code, english = run(*args)
    assert code == 0, english
    assert _lines_with_english(english, ()) != []
    assert "(s)" not in english
    assert not re.search(r"(?<![\d.,])1 [a-z\- ]{0,20}?(calls|tasks|steps|spans)\b", english)


def test_the_checker_sees_english_when_there_is_some(traffic: Path) -> None:
    """The same commands in English: the checker flags them (it can fail), and no count
    stands before a noun that disagrees with it."""
    name = "strong-cn-task-e2e.yaml"
    _, lint = run("lint", CONTRACTS / name)
    _, check = run("check", CONTRACTS / name, traffic, "--period", "2026-07")
    assert _lines_with_english(lint, quoted(name)) != []
    assert _lines_with_english(check, quoted(name)) != []
    assert "Not counted:" in check  # traffic before the effective start
    for text in (lint, check):
        assert not re.search(r"(?<![\d.,])1 [a-z\- ]{0,20}?(calls|tasks|findings|slices)\b", text)
        assert "(s)" not in text
