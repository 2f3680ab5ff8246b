"""Trace inputs given as URLs, read by Spark where they are (``slacheck.trace.remote``). The
tests use ``file:`` URLs with Spark in local mode: the same reader Spark uses for ``s3a://`` or
``hdfs://``, so only the file system differs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.engine import Engine, EngineConfig, EngineSession
from slacheck.errors import TraceInputError
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.remote import kind_of
from slacheck.trace.urls import is_url

runner = CliRunner()
DEMO = Path(__file__).resolve().parents[1] / "slacheck" / "contract" / "starters" / "demo.yaml"


def test_what_counts_as_a_url() -> None:
    assert is_url("s3a://bucket/spans/") and is_url("hdfs://nn:8020/x.jsonl")
    assert is_url("file:///tmp/x.parquet")
    assert not is_url("spans/2026-07.parquet") and not is_url("C:/x") and not is_url(Path("/x"))


def test_a_urls_kind_comes_from_the_flag_or_its_ending() -> None:
    assert kind_of("s3a://b/day=2026-07-01/part-0.parquet", None) == "canonical"
    assert kind_of("s3a://b/otel/*.JSONL", None) == "otlp"
    assert kind_of("s3a://b/by-day/", "canonical") == "canonical"
    with pytest.raises(TraceInputError) as exc:
        kind_of("s3a://b/by-day/", None)
    assert "--trace-format" in (exc.value.problems[0].fix or "")
    with pytest.raises(TraceInputError) as exc:
        kind_of("s3a://b/x.csv", "table")
    assert exc.value.problems[0].file == "s3a://b/x.csv"


def test_duckdb_refuses_a_url_naming_it(tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["traces", "inspect", "s3a://bucket/spans/part-0.parquet", "--format", "json"]
    )
    assert res.exit_code == 2, res.output
    assert "s3a://bucket/spans/part-0.parquet" in res.output and "--engine spark" in res.output


def _convert(source: Path, out: Path) -> Path:
    res = runner.invoke(app, ["traces", "convert", str(source), "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.spark
def test_a_converted_folder_read_by_url_on_spark_is_the_local_reading(
    generated_parquet: Path, tmp_path: Path, spark_backend: Any
) -> None:
    """The folder `traces convert` writes, given to Spark as a URL: the same spans and accounting
    as DuckDB's reading of the local file, a source per Parquet file Spark listed, each with the
    SHA-256 of that file's bytes and its rows."""
    folder = _convert(generated_parquet, tmp_path / "by-day")
    url = folder.resolve().as_uri()
    with EngineSession.around(spark_backend) as session:
        remote = ingest([url], fmt="canonical", session=session)
        local = ingest([generated_parquet])
        assert remote.quality.to_dict() | {"examples": {}, "orphan_examples": []} == (
            local.quality.to_dict() | {"examples": {}, "orphan_examples": []}
        )
        cols = ["task_id", "span_id", "start_us", "end_us", "kind", "status", "output_tokens"]
        a = remote.spans.select(*cols).order_by(cols).to_pyarrow()
        b = local.spans.select(*cols).order_by(cols).to_pyarrow()
        assert a.equals(b)
        # every row is numbered within its own file, as a local file's are
        refs = remote.spans.select("source_file", "source_ref").to_pyarrow().to_pylist()
    assert refs and all(r["source_ref"].startswith("row ") for r in refs)
    assert {r["source_file"] for r in refs} <= {s.path for s in remote.sources}
    # the data files: the record beside them (``.slacheck``, hidden) is no trace, and Spark's
    # listing leaves hidden folders out as slacheck's own does
    files = sorted(folder.glob("day=*/*.parquet"))
    assert (folder / ".slacheck").is_dir()
    assert len(remote.sources) == len(files) > 1
    for source in remote.sources:
        assert source.path.startswith("file:") and source.read_by == "engine"
        on_disk = Path(source.path.removeprefix("file:").removeprefix("//"))
        assert source.sha256 == hashlib.sha256(on_disk.read_bytes()).hexdigest()
    assert sum(s.rows for s in remote.sources) == remote.quality.rows_read


@pytest.mark.spark
def test_check_reads_a_parquet_url_on_spark_from_the_command_line(
    generated_parquet: Path, tmp_path: Path
) -> None:
    """The command as a user runs it, in a process of its own (a JVM of its own): the verdicts
    DuckDB gives on the file, and nothing on stderr (no JVM warning, log line or stage progress
    bar: a Spark run is quiet unless --verbose)."""
    folder = _convert(generated_parquet, tmp_path / "by-day")
    url = folder.resolve().as_uri()
    args = ["check", str(DEMO), url, "--trace-format", "canonical", "--format", "json"]
    exe = Path(sys.executable).with_name("slacheck")
    spark = subprocess.run(
        [str(exe), *args, "--engine", "spark"], capture_output=True, text=True, check=False
    )
    duck = runner.invoke(app, ["check", str(DEMO), str(generated_parquet), "--format", "json"])
    assert spark.returncode == duck.exit_code in (0, 1), spark.stderr
    assert spark.stderr == ""
    a, b = json.loads(spark.stdout), json.loads(duck.stdout)
    verdicts = [(t["id"], t["window"], t["verdict"], t["good"], t["total"]) for t in a["terms"]]
    assert len(verdicts) > 5
    assert verdicts == [
        (t["id"], t["window"], t["verdict"], t["good"], t["total"]) for t in b["terms"]
    ]
    assert all(s["path"].startswith("file:") for s in a["sources"])


@pytest.mark.spark
@pytest.mark.slow  # the OTLP flattening on Spark, about 75 s: make test-all runs it
def test_otlp_lines_read_by_url_on_spark_are_the_local_reading(tmp_path: Path) -> None:
    folder = tmp_path / "otel"
    folder.mkdir()
    for i in range(2):
        traffic = generate(TrafficProfile(tasks=20, days=2, seed=30 + i))
        write(traffic, folder / f"spans-{i}.jsonl", "otlp")
    with EngineSession(EngineConfig(engine=Engine.SPARK)) as session:
        remote = ingest([folder.resolve().as_uri() + "/*.jsonl"], session=session)
        local = ingest(sorted(folder.glob("*.jsonl")))
        assert remote.quality.rows_read == local.quality.rows_read
        assert remote.quality.set_aside == local.quality.set_aside
        assert [s.sha256 for s in remote.sources] == [
            hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.jsonl"))
        ]


@pytest.mark.spark
@pytest.mark.slow  # the OTLP flattening again: make test-all runs it
def test_a_url_with_lines_that_are_not_export_requests_is_named_with_their_count(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "otel"
    folder.mkdir()
    write(generate(TrafficProfile(tasks=5, days=1, seed=3)), folder / "good.jsonl", "otlp")
    (folder / "bad.jsonl").write_text('{"resourceSpans": []}\nnot json\n[1, 2]\n', "utf-8")
    with (
        EngineSession(EngineConfig(engine=Engine.SPARK)) as session,
        pytest.raises(TraceInputError) as exc,
    ):
        ingest([folder.resolve().as_uri() + "/*.jsonl"], session=session)
    (problem,) = exc.value.problems
    assert problem.file.endswith("/bad.jsonl")
    assert problem.message.startswith("2 lines are not an OTLP export request")
