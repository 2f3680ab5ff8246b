"""A trace file written while slacheck reads it gives no result; a document states the SHA-256
of the contract bytes its terms were read from, and none is made from a contract file edited
meanwhile.

Queries read the trace files in place (and a small input is copied only once ingestion has
hashed it), so a file a collector is still writing would give counts of two versions of it and a
SHA-256 of neither. Every stage that returns results checks last that each local file the spans
are read from is as it was before its first byte was read (``Traces.verify_unchanged``), and
refuses with the file named: exit 2 on the command line, never a verdict.

The writers here are real writes to the real file during a real run: a progress listener (the
hook the terminal's progress line uses) appends to the file when the run reaches a stage.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from slacheck.budget import analyse
from slacheck.cli import app
from slacheck.contract.load import load_contract, read_contract
from slacheck.errors import ContractInvalid, Reason, TraceInputError
from slacheck.evaluation import evaluate
from slacheck.metering import recorded
from slacheck.prepare import prepare_accept, prepare_claim, prepare_fields, prepare_report
from slacheck.progress import Stage, Step, reporting
from slacheck.render.documents import DocFormat, render_memo, render_report
from slacheck.trace.convert import convert
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.inspect import summarize
from slacheck.trace.traces import Traces

STARTERS = Path(__file__).resolve().parents[1] / "slacheck" / "contract" / "starters"
DEMO = STARTERS / "demo.yaml"
MONTH = "2026-07"


@pytest.fixture(scope="module")
def table() -> object:
    profile = TrafficProfile(
        tasks=25, days=12, seed=11, start=dt.datetime(2026, 7, 2, tzinfo=dt.UTC)
    )
    return generate(profile)


def _trace(tmp: Path, table: object, fmt: str) -> Path:
    path = tmp / {"parquet": "t.parquet", "otlp": "t.jsonl", "langfuse": "t.json"}[fmt]
    write(table, path, fmt)  # type: ignore[arg-type]
    return path


def _append(path: Path) -> None:
    """What a writer still at work does: more bytes at the end of the file."""
    with path.open("ab") as fh:
        fh.write(b"\n")


def _when(stage: Stage, act: Callable[[], None]) -> Callable[[Step], None]:
    """A progress listener that does ``act`` once, the first time the run reaches ``stage``."""
    done: list[bool] = []

    def listener(step: Step) -> None:
        if step.stage is stage and not done:
            done.append(True)
            act()

    return listener


def _refused_for(exc: pytest.ExceptionInfo[TraceInputError], path: Path) -> None:
    (problem,) = exc.value.problems
    assert problem.code is Reason.CHANGED_WHILE_READ
    assert problem.file == str(path)
    assert "changed while slacheck read it" in str(problem)


@pytest.mark.parametrize("fmt", ["parquet", "otlp", "langfuse"])
def test_a_file_written_during_the_checks_gives_no_verdict(
    tmp_path: Path, table: object, fmt: str
) -> None:
    path = _trace(tmp_path, table, fmt)
    contract = load_contract(DEMO)
    # untouched, the same run gives its verdicts
    assert evaluate(contract, ingest([path]), period=MONTH).results
    traces = ingest([path])
    writer = _when(Stage.CHECK, lambda: _append(path))
    with reporting(writer), pytest.raises(TraceInputError) as exc:
        evaluate(contract, traces, period=MONTH)
    _refused_for(exc, path)


def test_reading_the_file_meanwhile_changes_nothing(tmp_path: Path, table: object) -> None:
    """Another program reading the file (its access time moves) is no change."""
    path = _trace(tmp_path, table, "otlp")
    contract = load_contract(DEMO)
    traces = ingest([path])
    with reporting(_when(Stage.CHECK, lambda: path.read_bytes())):
        assert evaluate(contract, traces, period=MONTH).results


def _stages() -> dict[str, Callable[[Traces, Path], object]]:
    contract = load_contract(DEMO)
    return {
        "fields": lambda t, _: prepare_fields(contract, t),
        "report": lambda t, _: prepare_report(contract, t, period=MONTH),
        "accept": lambda t, _: prepare_accept(contract, t),
        "claim": lambda t, _: prepare_claim(contract, t, period=MONTH),
        "budget": lambda t, _: analyse(t),
        "inspect": lambda t, _: summarize(t),
        "convert": lambda t, tmp: convert(t, tmp / "by-day", recorded.DERIVED),
    }


@pytest.mark.parametrize("stage", sorted(_stages()))
def test_every_stage_that_returns_results_refuses_a_changed_file(
    tmp_path: Path, table: object, stage: str
) -> None:
    path = _trace(tmp_path, table, "parquet")
    run = _stages()[stage]
    assert run(ingest([path]), tmp_path / "first") is not None  # untouched: a result
    traces = ingest([path])
    pq.write_table(pq.read_table(path).slice(1), path)  # a writer rewrote it meanwhile
    with pytest.raises(TraceInputError) as exc:
        run(traces, tmp_path)
    _refused_for(exc, path)
    # a converted folder appears whole or not at all: here, not at all
    assert not (tmp_path / "by-day").exists()


@pytest.mark.parametrize("which", ["data", "kept"])
def test_a_converted_folder_written_after_its_record_was_read(
    tmp_path: Path, table: object, which: str
) -> None:
    """A folder whose record held is read in place, its kept tables too: a file of it written
    between the record's check and the end of the run refuses the run."""
    src = _trace(tmp_path, table, "parquet")
    folder = tmp_path / "by-day"
    convert(ingest([src]), folder, recorded.DERIVED)
    traces = ingest([folder])
    assert traces.record_used and traces.derived
    if which == "data":
        path = sorted(p for p in folder.glob("day=2026-*/*.parquet"))[0]
    else:
        path = sorted((folder / ".slacheck").glob("*.parquet"))[0]
    assert str(path) in traces.stamps
    path.write_bytes(path.read_bytes())  # the same bytes, written again: a write all the same
    with pytest.raises(TraceInputError) as exc:
        evaluate(load_contract(DEMO), traces, period=MONTH)
    _refused_for(exc, path)


def test_the_command_exits_2_naming_the_file_and_prints_no_verdict(
    tmp_path: Path, table: object
) -> None:
    path = _trace(tmp_path, table, "otlp")
    args = ["check", str(DEMO), str(path), "--period", MONTH, "--format", "json"]
    runner = CliRunner()
    fine = runner.invoke(app, args)
    assert fine.exit_code in (0, 1) and json.loads(fine.stdout)["terms"]
    with reporting(_when(Stage.CHECK, lambda: _append(path))):
        res = runner.invoke(app, [*args, "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert str(path) in res.stderr and "changed while slacheck read it" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "r.json").exists()


# -- the contract file: the report states the SHA-256 of the bytes its terms were read from ------


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _contract(tmp: Path) -> Path:
    """A copy of the demo contract a test may edit."""
    path = tmp / "contract.yaml"
    path.write_bytes(DEMO.read_bytes())
    return path


def _edit(path: Path) -> None:
    """An edit of the contract file: a comment appended (its bytes change, its terms do not)."""
    path.write_text(DEMO.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")


def test_the_report_states_the_hash_of_the_contract_bytes_read(
    tmp_path: Path, table: object
) -> None:
    trace = _trace(tmp_path, table, "parquet")
    path = _contract(tmp_path)
    loaded = read_contract(path)
    assert loaded.sha256 == _sha256(path)
    traces = ingest([trace])
    inputs = prepare_report(
        loaded.contract, traces, period=MONTH, contract_file=path, contract_sha256=loaded.sha256
    )
    assert inputs.contract_sha256 == loaded.sha256
    assert loaded.sha256 in render_report(inputs, lang="en", fmt=DocFormat.MD).decode()
    # the file edited after it was read: the figures are refused, not stated under its new hash
    _edit(path)
    with pytest.raises(ContractInvalid) as exc:
        prepare_report(
            loaded.contract,
            traces,
            period=MONTH,
            contract_file=path,
            contract_sha256=loaded.sha256,
        )
    (problem,) = exc.value.problems
    assert (problem.code, problem.file) == (Reason.CHANGED_WHILE_READ, str(path))


def test_the_memo_states_the_hash_of_the_bytes_reviewed(tmp_path: Path) -> None:
    path = _contract(tmp_path)
    loaded = read_contract(path)
    _edit(path)
    memo = render_memo(
        loaded.contract,
        lang="en",
        fmt=DocFormat.MD,
        contract_file=path,
        contract_sha256=loaded.sha256,
    ).decode()
    assert loaded.sha256 is not None and loaded.sha256 in memo
    assert _sha256(path) not in memo


def test_a_contract_edited_during_the_report_command_gives_no_report(
    tmp_path: Path, table: object
) -> None:
    trace = _trace(tmp_path, table, "parquet")
    path = _contract(tmp_path)
    out = tmp_path / "report.md"
    args = ["report", str(path), str(trace), "--period", MONTH, "-o", str(out)]

    def edit() -> None:
        path.write_text(
            DEMO.read_text(encoding="utf-8").replace("percentile: 95", "percentile: 90"),
            encoding="utf-8",
        )

    assert "percentile: 95" in DEMO.read_text(encoding="utf-8")
    with reporting(_when(Stage.CHECK, edit)):
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert str(path) in res.stderr and "changed while slacheck read it" in res.stderr
    assert not out.exists() and not list(tmp_path.glob("*.csv"))
