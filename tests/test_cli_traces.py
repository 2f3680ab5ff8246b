"""`slacheck traces …` on the command line: directories, file lists, task counts, whole lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slacheck import cli
from slacheck.cli import app
from slacheck.trace.conventions import reference_markdown, rows

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def _otlp_two_roots(path: Path) -> Path:
    """One trace id, two root spans (an export that starts below the real root), one child."""

    def span(sid: str, parent: str | None, start_ms: int, end_ms: int) -> dict[str, object]:
        s: dict[str, object] = {
            "traceId": "5b8efff798038103d269b633813fc60c",
            "spanId": sid,
            "name": f"s{sid[-1]}",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + start_ms * 1_000_000),
            "endTimeUnixNano": str(1_700_000_000_000_000_000 + end_ms * 1_000_000),
        }
        if parent:
            s["parentSpanId"] = parent
        return s

    spans = [
        span("eee19b7ec3c1b171", None, 0, 100),
        span("eee19b7ec3c1b172", "ffffffffffffffff", 50, 300),  # parent not in the export
        span("eee19b7ec3c1b173", "eee19b7ec3c1b171", 10, 90),
    ]
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    return path


def test_inspect_reads_a_directory_recursively_and_lists_its_files(tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    _otlp_two_roots(tmp_path / "nested" / "a.json")
    (tmp_path / "README.md").write_text("not a trace")
    (tmp_path / ".hidden.json").write_text("{}")
    res = runner.invoke(app, ["traces", "inspect", str(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert [s["path"] for s in d["sources"]] == [str(tmp_path / "nested" / "a.json")]
    assert d["tasks"] == 1  # distinct task ids, not root spans
    assert d["kinds"]["task"] == 2
    table = runner.invoke(app, ["traces", "inspect", str(tmp_path)])
    assert table.exit_code == 0
    assert str(tmp_path / "nested" / "a.json") in table.stdout
    assert "tasks (distinct task ids) │ 1 " in table.stdout


def test_inspect_a_directory_of_fixtures() -> None:
    res = runner.invoke(app, ["traces", "inspect", str(DATA / "langsmith_js"), "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert (d["spans"], d["tasks"], d["kinds"]) == (4, 4, {"llm": 4})
    assert len(d["sources"]) == 4


def test_an_empty_directory_is_bad_input(tmp_path: Path) -> None:
    res = runner.invoke(app, ["traces", "inspect", str(tmp_path)])
    assert res.exit_code == 2
    assert "no trace files in this directory" in res.output
    assert "Traceback" not in res.output


def test_unknown_format_lists_the_formats_once(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"a": 1}')
    res = runner.invoke(app, ["traces", "inspect", str(path)])
    assert res.exit_code == 2
    assert res.output.count("OTLP JSON with resourceSpans") == 1, res.output
    assert "JSON of no known trace shape" in res.output


def test_conventions_command_in_three_formats() -> None:
    as_json = runner.invoke(app, ["traces", "conventions", "--format", "json"])
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["rows"] == rows()
    as_md = runner.invoke(app, ["traces", "conventions", "--format", "md"])
    assert as_md.stdout == reference_markdown()
    table = runner.invoke(app, ["traces", "conventions"])
    assert table.exit_code == 0
    # a pipe gets whole lines: the longest attribute is never folded or cut
    assert "http.response.header.openai-processing-ms" in table.stdout
    assert "…" not in table.stdout


def test_piped_output_is_never_cut_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    class Pipe(io.StringIO):
        def isatty(self) -> bool:
            return False

    monkeypatch.setenv("COLUMNS", "80")  # some CI runners export it; a pipe ignores it
    monkeypatch.setattr("sys.stdout", Pipe())
    console = cli._console()
    assert console.width == cli.PIPE_WIDTH
    with console.capture() as captured:
        console.print("  • " + "word " * 60)
    assert captured.get().rstrip().endswith("word")
    assert "\n" not in captured.get().rstrip()
