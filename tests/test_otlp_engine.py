"""OTLP JSON lines read by the engine: the same canonical rows and the same set-aside accounting
as the Python reader, without the Python reader parsing a span."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import slacheck.trace.otlp as otlp
from slacheck.engine import Engine, EngineConfig, EngineSession
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.otlp import read_otlp
from slacheck.trace.otlp_engine import read_otlp_lines
from slacheck.trace.schema import ARROW_SCHEMA

DATA = Path(__file__).parent / "data"
#: the OTLP fixtures written as one JSON document; the test writes each as JSON lines
DOCUMENTS = [
    DATA / "readers" / "otlp_genai.json",
    DATA / "vercel_ai" / "stream_generate_embed.json",
    DATA / "openinference" / "agent_llm_tool_retriever.json",
    DATA / "openllmetry" / "workflow_chat_embedding.json",
    DATA / "langfuse_otel" / "generation.json",
    DATA / "langsmith_otel" / "chain_llm.json",
    DATA / "real" / "otlp" / "opentelemetry-proto-example-trace.json",
]


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by([("source_file", "ascending"), ("source_ref", "ascending")])


def _python(paths: list[Path]) -> pa.Table:
    return _sorted(pa.concat_tables([read_otlp(p) for p in paths]))


def _engine(paths: list[Path], engine: Engine = Engine.DUCKDB) -> pa.Table:
    with EngineSession(EngineConfig(engine=engine)) as session:
        read = read_otlp_lines(session, paths)
        assert read.to_python == ()
        assert read.spans is not None
        return _sorted(read.spans.to_pyarrow())


def _same(engine: pa.Table, python: pa.Table) -> None:
    assert engine.schema.equals(ARROW_SCHEMA)
    assert engine.num_rows == python.num_rows
    for name in ARROW_SCHEMA.names:
        a, b = engine.column(name).to_pylist(), python.column(name).to_pylist()
        for ref, x, y in zip(python.column("source_ref").to_pylist(), a, b, strict=True):
            if isinstance(x, float) and isinstance(y, float):
                assert x == pytest.approx(y, rel=1e-12), (name, ref)
            else:
                assert x == y, (name, ref, x, y)


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Each fixture as JSON lines (twice, a blank line between: line numbers count it), the
    JSONL fixture as it is, and generated traffic with malformed rows."""
    folder = tmp_path_factory.mktemp("otlp-lines")
    out = []
    for doc in DOCUMENTS:
        text = json.dumps(json.loads(doc.read_text("utf-8")))
        path = folder / f"{doc.stem}.jsonl"
        path.write_text(f"{text}\n\n{text}\n", encoding="utf-8")
        out.append(path)
    out.append(DATA / "readers" / "otlp_genai.jsonl")
    generated = folder / "generated.jsonl"
    traffic = generate(TrafficProfile(tasks=60, days=2, seed=11, malformed=12))
    write(traffic, generated, "otlp")
    out.append(generated)
    return out


def test_same_rows_as_the_python_reader(lines: list[Path]) -> None:
    _same(_engine(lines), _python(lines))


@pytest.fixture
def engine_always(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Every OTLP JSON-lines file goes to the engine; records each Python OTLP read."""
    monkeypatch.setenv("SLACHECK_OTLP_ENGINE_BYTES", "0")
    called: list[Path] = []
    real = otlp.read_otlp

    def spy(path: Path) -> pa.Table:
        called.append(path)
        return real(path)

    monkeypatch.setattr(otlp, "read_otlp", spy)
    yield called


def test_ingest_takes_the_engine_path_in_one_scan_of_a_directory(
    lines: list[Path], engine_always: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory of OTLP JSON-lines files is read by the engine in one scan, no span parsed
    in Python, each source saying so; read by the Python reader instead, the same accounting,
    sources and rows (one ingestion each way: each costs seconds of planning)."""
    import slacheck.trace.otlp_engine as oe

    for i, path in enumerate(lines):
        (tmp_path / f"{i:02d}-{path.name}").write_bytes(path.read_bytes())
    scans: list[int] = []
    real = oe.read_otlp_lines

    def counted(session: EngineSession, paths: Any) -> Any:
        scans.append(len(paths))
        return real(session, paths)

    monkeypatch.setattr(oe, "read_otlp_lines", counted)
    engine = ingest([tmp_path])
    assert scans == [len(lines)] and engine_always == []  # no span was parsed in Python
    assert [(s.read_by, s.fallback) for s in engine.sources] == [("engine", None)] * len(lines)
    monkeypatch.setenv("SLACHECK_OTLP_ENGINE_BYTES", "-1")  # never the engine
    python = ingest([tmp_path])
    assert scans == [len(lines)]
    assert sorted(p.name for p in engine_always) == sorted(p.name for p in tmp_path.iterdir())
    assert [(s.read_by, s.fallback) for s in python.sources] == [("python", None)] * len(lines)
    assert engine.quality.to_dict() == python.quality.to_dict()
    q = engine.quality
    assert q.rows_read == q.rows_used + q.rows_set_aside
    assert q.rows_read == sum(read_otlp(p).num_rows for p in lines)
    assert q.set_aside  # the generated file's malformed rows
    assert [s.rows for s in engine.sources] == [s.rows for s in python.sources]
    assert [s.path for s in engine.sources] == [s.path for s in python.sources]
    cols = ["source_file", "source_ref", "task_id", "span_id", "kind", "status", "orphan"]
    a = engine.spans.select(cols).order_by(["source_file", "source_ref"]).to_pyarrow()
    b = python.spans.select(cols).order_by(["source_file", "source_ref"]).to_pyarrow()
    assert a.equals(b)


def test_a_bad_line_sends_its_file_to_the_python_reader(
    tmp_path: Path, engine_always: list[Path]
) -> None:
    good = DATA / "readers" / "otlp_genai.jsonl"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text("utf-8") + '{"resourceSpans": {"not": "a list"}}\n')
    from slacheck.errors import TraceInputError

    with pytest.raises(TraceInputError) as info:
        ingest([good, bad])
    assert engine_always == [bad]  # the good file stayed in the engine
    assert "expected a list" in info.value.problems[0].message


def test_below_the_threshold_python_reads(lines: list[Path], monkeypatch: Any) -> None:
    monkeypatch.delenv("SLACHECK_OTLP_ENGINE_BYTES", raising=False)
    called: list[Path] = []
    real = otlp.read_otlp
    monkeypatch.setattr(otlp, "read_otlp", lambda p: called.append(p) or real(p))
    ingest(lines[:1])
    assert called == lines[:1]


@pytest.mark.spark
@pytest.mark.slow  # a wide query on Spark, about 75 s: make test-all runs it
def test_spark_reads_the_same_rows(lines: list[Path]) -> None:
    small = [lines[0], lines[-2], lines[-1]]  # GenAI fixture, base64 ids, generated traffic
    _same(_engine(small, Engine.SPARK), _python(small))


def test_slices_give_the_same_rows(
    lines: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB parses a file in slices of lines; cut into slices of a line or two, a file of
    every fixture's lines (blank lines among them) still gives the Python reader's rows. The
    generated traffic is left out: its hundreds of slices prove no boundary the fixtures'
    fifteen do not. The slices are parsed four to a statement (each statement costs seconds of
    planning whatever its size), so several statements still fill one table."""
    import slacheck.trace.otlp_engine as oe

    combined = tmp_path / "combined.jsonl"
    fixtures = lines[:-1]  # the last is the generated traffic
    combined.write_text("".join(p.read_text("utf-8") for p in fixtures), encoding="utf-8")
    monkeypatch.setattr(oe, "SLICE_BYTES", 3000)
    monkeypatch.setattr(oe, "BATCH_BYTES", 10**9)
    with EngineSession(EngineConfig()) as session:
        _, slices = oe._duckdb_check(session, [str(combined)])
    assert len(slices) >= 8
    assert all(lo > hi for (_, _, hi, _), (_, lo, _, _) in itertools.pairwise(slices))
    assert len(oe._batches(slices)) >= 2
    _same(_engine([combined]), _python([combined]))


def test_an_engine_failure_is_said_not_silent(
    lines: list[Path], engine_always: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line longer than DuckDB reads fails the engine on that file: it alone is parsed in
    Python (the others stay in the engine), and its source and the command say so."""
    import slacheck.trace.otlp_engine as oe

    generated, small = lines[-1], lines[0]
    longest = max(len(line) for line in generated.read_bytes().splitlines())
    assert longest > max(len(line) for line in small.read_bytes().splitlines())
    monkeypatch.setattr(oe, "MAX_LINE_BYTES", longest - 1)
    traces = ingest([small, generated])
    by = {Path(s.path): s for s in traces.sources}
    assert by[small].read_by == "engine" and by[small].fallback is None
    assert by[generated].read_by == "python"
    assert "line" in (by[generated].fallback or "").lower()
    assert engine_always == [generated]
    assert traces.quality.rows_read == sum(read_otlp(p).num_rows for p in (small, generated))

    from typer.testing import CliRunner

    from slacheck.cli import app

    res = CliRunner().invoke(app, ["traces", "inspect", str(generated), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert f"note: {generated} was parsed in Python, not by the duckdb engine" in res.stderr
    assert json.loads(res.stdout)["sources"][0]["read_by"] == "python"


def test_a_glob_pattern_reads_the_files_it_matches(
    lines: list[Path], engine_always: list[Path], tmp_path: Path
) -> None:
    for i, path in enumerate(lines[:3]):
        (tmp_path / f"{i:02d}.jsonl").write_bytes(path.read_bytes())
    (tmp_path / "notes.txt").write_text("not a trace")
    traces = ingest([str(tmp_path / "*.jsonl")])
    assert [Path(s.path).name for s in traces.sources] == ["00.jsonl", "01.jsonl", "02.jsonl"]
    assert traces.quality.rows_read == sum(read_otlp(p).num_rows for p in lines[:3])
    assert engine_always == []


def test_the_statement_run_for_each_slice_refers_to_its_stages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement DuckDB binds again for every slice of the lines refers to the stages'
    columns (views made once) instead of repeating their expressions: once, the status rules
    inlined over the read fields made it 524 KB, five seconds of binding per slice of 16 MiB."""
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(json.loads(DOCUMENTS[0].read_text())) + "\n")
    with EngineSession(EngineConfig(engine=Engine.DUCKDB)) as session:
        con = session.backend
        run = con.raw_sql
        seen: list[str] = []

        def raw_sql(query: Any, **kw: Any) -> Any:
            seen.append(query if isinstance(query, str) else query.sql("duckdb"))
            return run(query, **kw)

        monkeypatch.setattr(con, "raw_sql", raw_sql)
        read = read_otlp_lines(session, [path])
        assert read.spans is not None and read.spans.count().execute() > 0
    per_slice = [q for q in seen if q.startswith("CREATE TEMP TABLE") and "json_transform" not in q]
    assert per_slice, seen
    assert max(map(len, per_slice)) < 32_000
