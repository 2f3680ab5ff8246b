"""`traces convert`: canonical Parquet by day that reads back to the same table and accounting."""

from __future__ import annotations

import re
from pathlib import Path

import ibis
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.trace.ingest import ingest
from slacheck.trace.tabular import identity_mapping, read_parquet_files, read_table

runner = CliRunner()


def test_converted_folder_reads_back_the_same(generated_parquet: Path, tmp_path: Path) -> None:
    out = tmp_path / "by-day"
    res = runner.invoke(app, ["traces", "convert", str(generated_parquet), "-o", str(out)])
    assert res.exit_code == 0, res.output
    # the record (``.slacheck``, hidden: not a trace file) beside one folder per day
    days = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert days[-1] == "day=set-aside" and days[0].startswith("day=2026-07-0")
    assert (out / ".slacheck" / "record.json").is_file()
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


# -- a converted folder is one scan ------------------------------------------------------------


def _converted(generated_parquet: Path, out: Path) -> list[Path]:
    res = runner.invoke(app, ["traces", "convert", str(generated_parquet), "-o", str(out)])
    assert res.exit_code == 0, res.output
    files = sorted(out.glob("day=*/*.parquet"))  # the data files, not the record's
    assert len(files) >= 3
    return files


def _sorted(table: ibis.Table) -> pa.Table:
    return table.order_by(list(table.columns)).to_pyarrow()


def test_the_files_read_as_one_scan_are_each_file_read_alone(
    generated_parquet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one scan of a folder's files gives, row for row, what reading each file alone gives:
    every canonical column, the file's name as it was given (here relative to the working
    folder, as DuckDB's own name for it is absolute) and each row's number in its own file."""
    files = _converted(generated_parquet, tmp_path / "by-day")
    monkeypatch.chdir(tmp_path)
    given = [f.relative_to(tmp_path) for f in files]
    con = ibis.duckdb.connect()
    mapping = identity_mapping("parquet")
    alone = ibis.union(*(read_table(con, f, mapping) for f in given), distinct=False)
    one = read_parquet_files(con, given, mapping)
    assert one.columns == alone.columns
    a, b = _sorted(alone), _sorted(one)
    assert a.num_rows == sum(pq.read_metadata(f).num_rows for f in files)
    assert a.equals(b)
    assert set(b.column("source_file").to_pylist()) == {str(f) for f in given}


def test_a_converted_folder_is_one_read_whatever_its_days(
    generated_parquet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each query over the traces compiles one read of the folder, not one per day file (ninety
    in a quarter, each compiled again by every later query). Read in place, as a folder of more
    spans than ``SLACHECK_COPY_UP_TO_ROWS`` is."""
    monkeypatch.setenv("SLACHECK_COPY_UP_TO_ROWS", "0")
    files = _converted(generated_parquet, tmp_path / "by-day")
    traces = ingest([tmp_path / "by-day"])
    sql = ibis.to_sql(traces.spans)
    assert len(set(re.findall(r"ibis_read_parquet_\w+", sql))) == 1, sql[:2000]
    assert [s.rows for s in traces.sources] == [pq.read_metadata(f).num_rows for f in files]


def test_files_of_two_schemas_are_read_as_two_scans(
    generated_parquet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A canonical file written with a narrower integer type (another writer, another version)
    is read beside the others, by a scan of its own: its rows all count, none is cast wrong."""
    monkeypatch.setenv("SLACHECK_COPY_UP_TO_ROWS", "0")
    files = _converted(generated_parquet, tmp_path / "by-day")
    narrow = pq.read_table(files[0])
    i = narrow.schema.get_field_index("attempt")
    narrow = narrow.set_column(i, "attempt", narrow.column("attempt").cast(pa.int32()))
    pq.write_table(narrow, files[0])
    before = ingest([generated_parquet])
    after = ingest([tmp_path / "by-day"])
    assert len(set(re.findall(r"ibis_read_parquet_\w+", ibis.to_sql(after.spans)))) == 2
    assert after.quality.rows_read == before.quality.rows_read
    assert after.quality.set_aside == before.quality.set_aside
    cols = ["task_id", "span_id", "attempt", "start_us"]
    assert _sorted(before.spans.select(*cols)).equals(_sorted(after.spans.select(*cols)))
