"""The README's commands run as written (datasette keeps its documentation true this way).

Every fenced command block of the sections "A tour" (with "In CI and editors" and "Exit
codes"), "Contracts" and "Traces" is parsed from README.md, so a new block is tested without a
change here. Its commands run in order, in one temporary folder per module that holds copies of
`contracts/` and `examples/` (the sample files the repository ships for this), and must exit with
the code the README states: `exit N` in the line's comment, 0 where it says none. A block in any
other language must be a kind `NOT_COMMANDS` names, with the reason it is not run.

Commands run as written. The fast test runs those that need neither the tour's generated
traffic nor weasyprint (contracts, the sample files); the `slow` test (`make test-all`) runs
every block whole, in order, as a reader would: the tour's 2,000 tasks generated, checked and
reported (fewer tasks would change what `claim` finds), every PDF written.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slacheck.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SECTIONS = ("A tour", "Contracts", "Traces", "In CI and editors")
#: fenced blocks that are not commands, and why they are not run
NOT_COMMANDS = {
    "yaml": "a file's content (a contract, a mapping, a workflow step), not a command",
    "": "output the README shows, not a command",
}
COMMAND_LANGUAGES = ("sh", "bash", "console")


@dataclass(frozen=True)
class Command:
    section: str
    line: int  # in README.md
    text: str
    args: tuple[str, ...]
    exit_code: int

    @property
    def slow(self) -> bool:
        """Needs the generated traffic (seconds per command) or writes a PDF."""
        return any(a.endswith(".pdf") or a == "traffic.parquet" for a in self.args)


@dataclass(frozen=True)
class Block:
    section: str
    line: int
    language: str
    body: str


def _sections(text: str) -> dict[str, tuple[int, str]]:
    """Each wanted section's first line number and text, up to the next heading of its level
    or above."""
    lines = text.splitlines()
    found: dict[str, tuple[int, str]] = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(#{2,4}) (.+)$", line)
        if m and m.group(2).strip() in SECTIONS:
            level = len(m.group(1))
            end = next(
                (
                    j
                    for j in range(i + 1, len(lines))
                    if re.match(rf"^#{{1,{level}}} ", lines[j]) and not _in_fence(lines, j)
                ),
                len(lines),
            )
            found[m.group(2).strip()] = (i + 1, "\n".join(lines[i:end]))
    return found


def _in_fence(lines: list[str], j: int) -> bool:
    return sum(1 for line in lines[:j] if line.startswith("```")) % 2 == 1


def blocks() -> list[Block]:
    found: list[Block] = []
    for section, (first, text) in _sections(README.read_text(encoding="utf-8")).items():
        for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M):
            line = first + text[: m.start()].count("\n")
            found.append(Block(section, line, m.group(1), m.group(2)))
    return found


def _split_comment(line: str) -> tuple[str, str]:
    """The command and its comment (a `#` outside quotes, after a space)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].strip(), line[i + 1 :].strip()
    return line.strip(), ""


def commands(block: Block) -> list[Command]:
    found = []
    for offset, raw in enumerate(block.body.splitlines(), start=1):
        text, comment = _split_comment(raw)
        if not text:
            continue
        stated = re.search(r"\bexit (\d)\b", comment)
        args = tuple(shlex.split(text))
        found.append(
            Command(
                block.section,
                block.line + offset,
                text,
                args,
                int(stated.group(1)) if stated else 0,
            )
        )
    return found


COMMAND_BLOCKS = [b for b in blocks() if b.language in COMMAND_LANGUAGES]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder like the repository's root as the README's commands see it: contracts/ and
    examples/."""
    work = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "contracts", work / "contracts")
    shutil.copytree(ROOT / "examples", work / "examples")
    here = Path.cwd()
    os.chdir(work)
    try:
        yield work
    finally:
        os.chdir(here)


def _run(command: Command) -> None:
    assert command.args[0] == "slacheck", (
        f"README.md:{command.line}: `{command.text}` is not a slacheck command; "
        "run it here or name why not"
    )
    result = CliRunner().invoke(app, list(command.args[1:]))
    assert result.exit_code == command.exit_code, (
        f"README.md:{command.line}: `{command.text}` exited {result.exit_code}, the README "
        f"says {command.exit_code}\n{result.output[-3000:]}"
    )


def test_the_sections_have_command_blocks() -> None:
    found = {b.section for b in COMMAND_BLOCKS}
    assert {"A tour", "Contracts", "Traces"} <= found, found
    # the sections the README test promises are all there
    assert set(_sections(README.read_text(encoding="utf-8"))) == set(SECTIONS)


def test_every_other_block_is_a_kind_not_run_for_a_reason() -> None:
    for block in blocks():
        if block.language in COMMAND_LANGUAGES:
            continue
        assert block.language in NOT_COMMANDS, (
            f"README.md:{block.line}: a ```{block.language} block in {block.section!r}: run it "
            "in this test or add its kind to NOT_COMMANDS with the reason"
        )


@pytest.mark.parametrize("block", COMMAND_BLOCKS, ids=lambda b: f"{b.section}:{b.line}")
def test_block_runs_as_written(block: Block, workspace: Path) -> None:
    for command in commands(block):
        if not command.slow:
            _run(command)


@pytest.mark.slow
@pytest.mark.parametrize("block", COMMAND_BLOCKS, ids=lambda b: f"{b.section}:{b.line}")
def test_whole_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "contracts", tmp_path / "contracts")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        for command in commands(block):
            _run(command)
    finally:
        os.chdir(here)


def test_the_fast_test_runs_most_of_what_the_readme_says() -> None:
    every = [c for b in COMMAND_BLOCKS for c in commands(b)]
    fast = [c for c in every if not c.slow]
    assert len(fast) >= 10 and len(every) > len(fast)
