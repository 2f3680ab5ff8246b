"""Issue 26 in process: the alias bomb is refused within a second, before any model is built,
and the JUnit file of hostile term ids is well-formed XML (the CLI cases are in ``parse26``)."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from slacheck.cli import app
from slacheck.contract.load import load_contract_text
from slacheck.errors import ContractInvalid, Reason, TraceInputError
from slacheck.trace.records import load_json
from tests.hostile.corpus import CONTRACT, otlp_doc, otlp_span
from tests.hostile.parse26 import alias_bomb


def test_the_alias_bomb_is_refused_within_a_second() -> None:
    start = time.process_time()
    with pytest.raises(ContractInvalid) as info:
        load_contract_text(alias_bomb(), "bomb.yaml")
    assert time.process_time() - start < 1.0
    (p,) = info.value.problems
    assert (p.code, p.line) == (Reason.TOO_LARGE, 5)


_COMMANDS = [
    "validate", "lint", "check", "draft", "memo", "accept", "report", "claim", "fields",
    "export openslo",
]  # fmt: skip

# the modules a refused contract must not have paid for: the engines and the PDF writer
_HEAVY = ("ibis", "duckdb", "pyarrow", "pandas", "pyspark", "weasyprint", "slacheck.prepare")

_CHILD = f"""
import sys
from slacheck.cli import main
try:
    main()
finally:
    print(" ".join(m for m in {_HEAVY!r} if m in sys.modules))
"""


@pytest.mark.parametrize("command", _COMMANDS)
def test_the_alias_bomb_ends_each_command_within_a_second_of_cpu(
    tmp_path: Path, command: str
) -> None:
    """The whole command, in a process of its own: the contract is read (and refused) before the
    engine's imports, so a hook on a hostile pull request answers at once. Two measures: no
    engine module is imported by then (exact, whatever the machine's load), and the child's own
    CPU time (``wait4``), which a loaded machine stretches less than the wall; Python and the
    command line take about 0.7 s of it on their own."""
    import json
    import os
    import subprocess
    import sys

    bomb, trace = tmp_path / "bomb.yaml", tmp_path / "t.json"
    bomb.write_text(alias_bomb(), encoding="utf-8")
    trace.write_text(json.dumps(otlp_doc([otlp_span(0)])))
    out = tmp_path / "out"
    argv = {
        "validate": [bomb],
        "lint": [bomb],
        "check": [bomb, trace],
        "draft": [bomb, "-o", out.with_suffix(".md")],
        "memo": [bomb, "-o", out.with_suffix(".md")],
        "accept": [bomb, trace, "-o", out.with_suffix(".md")],
        "report": [bomb, trace, "-o", out.with_suffix(".md"), "--period", "2026-07"],
        "claim": [bomb, trace, "-o", out, "--period", "2026-07"],
        "fields": [bomb, trace],
        "export openslo": [bomb],
    }[command]
    with (tmp_path / "err").open("wb") as stderr, (tmp_path / "out.txt").open("wb") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, *command.split()] + [str(a) for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, "SLACHECK_DEBUG": ""},
        )
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = (tmp_path / "err").read_text()
    assert proc.returncode == 2, err
    assert err.startswith("error: ") and "bomb.yaml:5:" in err, err
    imported = (tmp_path / "out.txt").read_text().splitlines()[-1].split()
    assert imported == [], f"{command} imported {imported} before refusing the contract"
    assert usage.ru_utime + usage.ru_stime < 1.5, (usage.ru_utime, usage.ru_stime)


def test_a_contract_with_a_few_aliases_still_loads() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    anchored = text.replace("  max_input_tokens: 128000", "  max_input_tokens: &m 128000", 1)
    anchored += "x-copies: [*m, *m, *m]\n"
    with pytest.raises(ContractInvalid) as info:  # an unknown key, but the aliases were read
        load_contract_text(anchored)
    assert [p.code for p in info.value.problems] == [Reason.UNKNOWN_FIELD]


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(ContractInvalid) as info:
        load_contract_text("a: &a [1, *a]\n", "self.yaml")
    assert info.value.problems[0].line == 1


@pytest.mark.parametrize("depth", [128, 129, 1_000_000])
def test_json_depth_is_bounded_the_same_way(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"resourceSpans": [], "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}\n")
    if depth <= 128:
        assert load_json(path).line_numbers == (1,)
        return
    with pytest.raises(TraceInputError) as info:
        load_json(path)
    (p,) = info.value.problems
    assert (p.code, p.line) == (Reason.TOO_DEEP, 1)


def test_lines_split_on_newline_only(tmp_path: Path) -> None:
    import json

    doc = otlp_doc([otlp_span(0, name="a\u2028b\u0085c\x1c")])
    path = tmp_path / "seps.jsonl"
    path.write_text(json.dumps(doc, ensure_ascii=False) + "\r\n\n" + json.dumps(doc) + "\n")
    loaded = load_json(path)
    assert loaded.line_numbers == (1, 3)
    assert loaded.value[0] == doc


def test_junit_of_hostile_ids_is_well_formed(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    text = CONTRACT.read_text(encoding="utf-8")
    hostile = tmp_path / "c.yaml"
    hostile.write_text(
        text.replace("id: L1-task-p95", 'id: "L1\\x01\\x0b\\e[31m\\uFFFE\\u202e"', 1),
        encoding="utf-8",
    )
    import json

    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(otlp_doc([otlp_span(i) for i in range(3)])))
    junit = tmp_path / "j.xml"
    result = CliRunner().invoke(app, ["check", str(hostile), str(trace), "--junit", str(junit)])
    assert result.exit_code in (0, 1), result.output
    root = ET.fromstring(junit.read_bytes())
    names = [case.get("name") or "" for case in root.iter("testcase")]
    assert any(n.startswith("L1\\x01\\x0b\\x1b[31m\\ufffe\\u202e") for n in names), names
