"""`traces convert`: canonical Parquet by day that reads back to the same table and accounting."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.trace.ingest import ingest

runner = CliRunner()


def test_converted_folder_reads_back_the_same(generated_parquet: Path, tmp_path: Path) -> None:
    out = tmp_path / "by-day"
    res = runner.invoke(app, ["traces", "convert", str(generated_parquet), "-o", str(out)])
    assert res.exit_code == 0, res.output
    days = sorted(p.name for p in out.iterdir())
    assert days[-1] == "day=set-aside" and days[0].startswith("day=2026-07-0")
    before, after = ingest([generated_parquet]), ingest([out])
    assert after.quality.rows_read == before.quality.rows_read
    assert after.quality.set_aside == before.quality.set_aside
    assert after.quality.orphans == before.quality.orphans
    cols = ["task_id", "span_id", "start_us", "end_us", "duration_ms", "kind", "output_tokens"]
    a = before.spans.select(*cols).order_by(cols).to_pyarrow()
    b = after.spans.select(*cols).order_by(cols).to_pyarrow()
    assert a.equals(b)


def test_convert_refuses_a_folder_with_files(generated_parquet: Path, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    res = runner.invoke(app, ["traces", "convert", str(generated_parquet), "-o", str(tmp_path)])
    assert res.exit_code == 2 and "not an empty folder" in res.output
    assert (tmp_path / "keep.txt").read_text() == "mine"
