"""Ingestion: mapped tables read by the engine, set-aside accounting, inspection, Spark parity."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.errors import Reason, TraceInputError
from slacheck.trace.ingest import ingest
from slacheck.trace.inspect import summarize
from slacheck.trace.schema import COLUMN_NAMES
from slacheck.trace.tabular import load_mapping

runner = CliRunner()

GATEWAY_CSV = """trace,id,parent,type,start,end,model,in,out
t1,s1,,AGENT,2026-07-01T00:00:00Z,2026-07-01T00:00:05Z,,,
t1,s2,s1,GENERATION,2026-07-01T00:00:00.500Z,2026-07-01T00:00:02.250Z,gpt-4o,100,50
t1,s3,s1,TOOL,2026-07-01T00:00:03Z,2026-07-01T00:00:02Z,,,
t1,s2,s1,GENERATION,2026-07-01T00:00:01Z,2026-07-01T00:00:02Z,gpt-4o,100,50
t2,s4,,GENERATION,yesterday,2026-07-01T00:00:02Z,gpt-4o,1,3
,s5,,GENERATION,2026-07-01T00:00:01Z,2026-07-01T00:00:02Z,gpt-4o,1,2
t3,s6,,GENERATION,2026-07-01T00:00:01Z,2026-07-01T00:00:02Z,gpt-4o,1,-3
t3,s7,s99,TOOL,2026-07-01T00:00:01Z,2026-07-01T00:00:02Z,,,
t4,s8,,GENERATION,,2026-07-01T00:00:02Z,gpt-4o,1,2
"""

MAPPING = """columns:
  task_id: trace
  span_id: id
  parent_span_id: parent
  kind: {column: type, values: {AGENT: task, GENERATION: llm, TOOL: tool}, default: other}
  start_us: start
  end_us: end
  request_model: model
  input_tokens: in
  output_tokens: out
constants:
  provider: openai
"""


@pytest.fixture
def gateway(tmp_path: Path) -> tuple[Path, Path]:
    csv = tmp_path / "gateway.csv"
    csv.write_text(GATEWAY_CSV)
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(MAPPING)
    return csv, mapping


def test_every_row_is_used_or_set_aside_with_a_reason(gateway: tuple[Path, Path]) -> None:
    csv, mapping = gateway
    traces = ingest([csv], mapping=load_mapping(mapping), fmt="table")
    q = traces.quality
    assert q.rows_read == 9
    assert q.set_aside == {
        "end_before_start": 1,
        "duplicate_span_id": 1,
        "unparseable_timestamp": 1,
        "missing_id": 1,
        "negative_tokens": 1,
        "missing_timestamp": 1,
    }
    assert q.rows_used == 3
    assert q.rows_read == q.rows_used + q.rows_set_aside
    assert q.examples["end_before_start"] == (f"{csv}: row 3",)
    assert q.examples["duplicate_span_id"] == (f"{csv}: row 4",)  # the later start is dropped
    assert q.orphans == 1 and q.orphan_examples == (f"{csv}: row 8",)
    spans = traces.spans.order_by("span_id").execute()
    assert list(spans["span_id"]) == ["s1", "s2", "s7"]
    s2 = spans[spans.span_id == "s2"].iloc[0]
    assert s2["duration_ms"] == 1750.0  # recomputed from the timestamps
    assert s2["provider"] == "openai" and s2["kind"] == "llm"
    assert set(spans.columns) == {*COLUMN_NAMES, "orphan"}


def test_missing_column_in_mapping_names_the_field(
    gateway: tuple[Path, Path], tmp_path: Path
) -> None:
    csv, _ = gateway
    bad = tmp_path / "bad.yaml"
    bad.write_text("columns:\n  task_id: trace_id\n  span_id: id\n")
    with pytest.raises(TraceInputError) as info:
        ingest([csv], mapping=load_mapping(bad), fmt="table")
    (problem,) = info.value.problems
    assert problem.code is Reason.BAD_MAPPING
    assert problem.field == "columns.task_id"
    assert "trace" in problem.fix  # lists the columns that are there


def test_mapping_to_unknown_canonical_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("columns:\n  task: trace\n")
    with pytest.raises(TraceInputError) as info:
        load_mapping(bad)
    assert info.value.problems[0].code is Reason.BAD_MAPPING
    assert info.value.problems[0].file == str(bad)


def test_table_without_mapping_is_a_clear_error(gateway: tuple[Path, Path]) -> None:
    csv, _ = gateway
    res = runner.invoke(app, ["traces", "inspect", str(csv)])
    assert res.exit_code == 2
    assert "needs a column mapping" in res.output
    assert "Traceback" not in res.output


def test_epoch_timestamps_and_duration_units(tmp_path: Path) -> None:
    table = pa.table(
        {
            "tid": ["a", "a"],
            "sid": ["1", "2"],
            "t0": [1_751_328_000_000, 1_751_328_001_000],  # epoch ms
            "secs": [2.5, 0.125],
        }
    )
    path = tmp_path / "gw.parquet"
    pq.write_table(table, path)
    mapping = tmp_path / "m.yaml"
    mapping.write_text(
        "timestamp_format: epoch_ms\ncolumns:\n  task_id: tid\n  span_id: sid\n"
        "  start_us: t0\n  duration_ms: {column: secs, unit: s}\n"
    )
    spans = ingest([path], mapping=load_mapping(mapping), fmt="table").spans.order_by("span_id")
    df = spans.execute()
    assert list(df["start_us"]) == [1_751_328_000_000_000, 1_751_328_001_000_000]
    assert list(df["duration_ms"]) == [2500.0, 125.0]
    assert list(df["end_us"]) == [1_751_328_002_500_000, 1_751_328_001_125_000]


def test_generated_malformed_rows_are_counted(generated_parquet: Path) -> None:
    traces = ingest([generated_parquet])
    q = traces.quality
    assert q.rows_set_aside == 5
    assert set(q.set_aside) == {
        "end_before_start",
        "missing_timestamp",
        "duplicate_span_id",
        "negative_tokens",
        "missing_id",
    }
    assert q.rows_read == pq.read_metadata(generated_parquet).num_rows


def test_row_order_changes_nothing(generated_parquet: Path, tmp_path: Path) -> None:
    table = pq.read_table(generated_parquet)
    order = list(range(table.num_rows))
    random.Random(3).shuffle(order)
    shuffled = tmp_path / "shuffled.parquet"
    pq.write_table(table.take(order), shuffled)
    a = ingest([generated_parquet]).quality
    b = ingest([shuffled]).quality
    assert (a.rows_used, a.set_aside, a.orphans) == (b.rows_used, b.set_aside, b.orphans)


def test_inspect_json_keys(generated_parquet: Path) -> None:
    res = runner.invoke(app, ["traces", "inspect", str(generated_parquet), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {"spans", "tasks", "kinds", "coverage", "set_aside", "time_range"} <= set(data)
    assert data["tasks"] == 200
    assert sum(data["kinds"].values()) == data["spans"]
    assert data["coverage"]["task_id"] == 1.0
    assert 0 < data["coverage"]["ttft_ms"] < 1  # streamed calls only
    assert sum(data["set_aside"].values()) == 5


def test_summary_coverage_counts_only_applicable_kinds(generated_parquet: Path) -> None:
    summary = summarize(ingest([generated_parquet]))
    by = {c.field: c for c in summary.coverage}
    assert by["server_ms"].applicable == summary.kinds["llm"]
    assert by["task_id"].applicable == summary.spans


def test_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(TraceInputError) as info:
        ingest([tmp_path / "nope.json"])
    assert info.value.problems[0].code is Reason.FILE_NOT_FOUND


@pytest.mark.spark
def test_spark_builds_the_same_canonical_table(
    generated_parquet: Path, spark_backend: object
) -> None:
    duck = ingest([generated_parquet])
    spark = ingest([generated_parquet], backend=spark_backend)  # type: ignore[arg-type]
    assert spark.quality.to_dict() == duck.quality.to_dict()
    cols = ["task_id", "span_id", "kind", "start_us", "end_us", "duration_ms", "orphan"]
    a = duck.spans.select(cols).order_by(["task_id", "span_id"]).execute()
    b = spark.spans.select(cols).order_by(["task_id", "span_id"]).execute()
    assert a.reset_index(drop=True).equals(b.reset_index(drop=True))


def test_readme_documents_the_canonical_table() -> None:
    from slacheck.trace.schema import reference_markdown

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- canonical-columns:start -->") + len(
        "<!-- canonical-columns:start -->"
    )
    end = readme.index("<!-- canonical-columns:end -->")
    assert readme[start:end].strip() == reference_markdown().strip(), "run `make docs`"


LANGFUSE_CSV = """id,traceId,parentObservationId,type,name,startTime,endTime,model,level,latency
o1,t1,,AGENT,agent,2025-08-01T12:31:01.518Z,2025-08-01T12:31:12.240Z,,DEFAULT,10.722
o2,t1,o1,GENERATION,llm,2025-08-01T12:31:01.600Z,2025-08-01T12:31:03.100Z,gpt-4o,DEFAULT,1500
o3,t1,o1,TOOL,search,2025-08-01T12:31:03.200Z,2025-08-01T12:31:03.250Z,,ERROR,0.05
"""


def test_langfuse_csv_export_needs_no_mapping(tmp_path: Path) -> None:
    path = tmp_path / "observations.csv"
    path.write_text(LANGFUSE_CSV)
    traces = ingest([path])
    assert traces.sources[0].format == "langfuse-csv"
    df = traces.spans.order_by("span_id").execute()
    assert list(df["kind"]) == ["task", "llm", "tool"]
    # durations from the timestamps, whatever unit `latency` was in
    assert list(df["duration_ms"]) == [10722.0, 1500.0, 50.0]
    # a tool's ERROR level with no message or code names no class of failure
    assert list(df["status"]) == ["ok", "ok", "unclassified"]


def _ingest_in_parts(path: Path, parts: int, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> Any:
    # the id pass as it runs after DuckDB ran out of memory: its keys in `parts` aggregates
    import slacheck.trace.ingest as ingest_module

    with monkeypatch.context() as m:
        m.setattr(ingest_module, "_ID_PASS_PARTS", (parts,))
        return ingest([path], **kw)


def _flagged(traces: Any) -> list[tuple[Any, ...]]:
    t = traces.spans
    cols = ["task_id", "span_id", "start_us", "orphan"]
    return sorted(tuple(r) for r in t.select(cols).to_pyarrow().to_pylist() for r in [r.values()])


@pytest.fixture
def suspects_trace(generated_parquet: Path, tmp_path: Path) -> Path:
    """The generated trace with wrapper llm spans and orphans besides its duplicate."""
    from tests.test_metering import _wrap_some

    wrapped, _ = _wrap_some(pq.read_table(generated_parquet), every=5)
    rows = wrapped.to_pylist()
    for r in rows[::97]:  # some spans whose parent is not in the trace
        r["parent_span_id"] = f"gone-{r['span_id']}"
    path = tmp_path / "wrapped.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=wrapped.schema), path)
    return path


@pytest.mark.parametrize("parts", [2, 3, 16])
def test_the_id_pass_in_parts_finds_what_the_one_pass_finds(
    suspects_trace: Path, parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = ingest([suspects_trace])
    split = _ingest_in_parts(suspects_trace, parts, monkeypatch)
    assert whole.quality.orphans > 10 and whole.quality.set_aside["duplicate_span_id"] > 0
    assert whole.llm_wrappers > 100
    assert split.quality.to_dict() == whole.quality.to_dict()
    assert split.llm_wrappers == whole.llm_wrappers
    assert _flagged(split) == _flagged(whole)
    assert (whole.id_pass_parts, split.id_pass_parts) == (1, parts)


@pytest.mark.parametrize(
    ("lang", "said"),
    [("en", "read the ids again in 4 passes"), ("zh", "已分 4 次重新读取 ID")],
)
def test_the_command_says_when_the_id_pass_ran_in_parts(
    suspects_trace: Path, monkeypatch: pytest.MonkeyPatch, lang: str, said: str
) -> None:
    from importlib import resources

    import slacheck.trace.ingest as ingest_module

    monkeypatch.setattr(ingest_module, "_ID_PASS_PARTS", (4,))
    demo = Path(str(resources.files("slacheck.contract").joinpath("starters/demo.yaml")))
    res = runner.invoke(
        app, ["check", str(demo), str(suspects_trace), "--format", "json", "--lang", lang]
    )
    assert res.exit_code in (0, 1), res.output
    assert said in res.stderr
    json.loads(res.stdout)  # the note is on stderr only


@pytest.mark.spark
def test_the_id_pass_in_parts_on_spark(
    suspects_trace: Path, spark_backend: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spark's 64-bit keys are signed: a part is a remainder in [0, parts) all the same
    whole = ingest([suspects_trace])
    split = _ingest_in_parts(suspects_trace, 3, monkeypatch, backend=spark_backend)
    assert split.quality.to_dict() == whole.quality.to_dict()
    assert split.llm_wrappers == whole.llm_wrappers


# -- a small input is copied into the engine once ----------------------------------------------


def _canonical_rows(t: Any) -> pa.Table:
    spans = t.spans
    return spans.order_by(list(spans.columns)).to_pyarrow()


@pytest.mark.parametrize("copy", ["", "0", "100000000"])
def test_a_copied_input_is_the_input_read_in_place(
    generated_parquet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copy: str
) -> None:
    """The copy (a small input's default, or a bound set high) holds what reading the file in
    place gives, row for row and in its accounting; it no longer needs the file, which the
    in-place read does at each query."""
    path = tmp_path / "t.parquet"
    path.write_bytes(generated_parquet.read_bytes())
    monkeypatch.setenv("SLACHECK_COPY_UP_TO_ROWS", "0")
    in_place = ingest([path])
    monkeypatch.setenv("SLACHECK_COPY_UP_TO_ROWS", copy)
    copied = ingest([path])
    assert copied.quality == in_place.quality and copied.plain == in_place.plain
    want = _canonical_rows(in_place)
    assert _canonical_rows(copied).equals(want)
    assert want.num_rows == in_place.quality.rows_used > 0
    path.unlink()
    if copy == "0":
        with pytest.raises(Exception, match=r"t\.parquet"):
            _canonical_rows(copied)
    else:
        assert _canonical_rows(copied).equals(want)


def test_a_copy_bound_that_is_not_a_number_is_a_usage_error(
    generated_parquet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from slacheck.errors import UsageError

    monkeypatch.setenv("SLACHECK_COPY_UP_TO_ROWS", "2M")
    with pytest.raises(UsageError, match="SLACHECK_COPY_UP_TO_ROWS='2M'"):
        ingest([generated_parquet])


#: text a table reader must keep as written or take for no value, the same on both engines:
#: whitespace of every kind Python's ``string.whitespace`` names, the letters Spark's ``TRIM``
#: of ``'\v\f'`` removes, and a space no-break (not whitespace here)
_TRICKY = ["f", "v", "vf", " \t", "\x0b", "\x0c\r\n", "", " gpt ", "false", "\u00a0", "x\x0b"]
_FLAGS = ["false", " true ", "f", "FALSE", "yes", "\tno\n", "0", "1", "v", " ", "\x0b"]


def _expected_text(value: str) -> str | None:
    return None if not value.strip(string.whitespace) else value


def _expected_flag(value: str) -> bool | None:
    text = value.strip(string.whitespace).lower()
    return True if text in ("true", "1", "yes") else False if text in ("false", "0", "no") else None


_JULY_US = 1_782_864_000_000_000  # 2026-07-01T00:00:00Z


#: the time spellings a mapping reads: ISO text (with spaces around it), epoch milliseconds, a
#: strptime pattern with fractional seconds; each gives start i s and end i.5 s after midnight
_TIMES = ("iso8601", "epoch_ms", "%Y-%m-%d %H:%M:%S.%f")


def _tricky_trace(tmp_path: Path, fmt: str) -> tuple[Path, Path]:
    """The tricky values as one llm span each, times written as ``fmt`` spells them."""
    n = len(_TRICKY)
    if fmt == "iso8601":
        t0: list[Any] = [f" 2026-07-01T00:00:{i:02d}Z " for i in range(n)]
        t1: list[Any] = [f"2026-07-01T00:00:{i:02d}.5Z" for i in range(n)]
    elif fmt == "epoch_ms":
        t0 = [_JULY_US // 1000 + i * 1000 for i in range(n)]
        t1 = [m + 500 for m in t0]
    else:
        t0 = [f"2026-07-01 00:00:{i:02d}.000000" for i in range(n)]
        t1 = [f"2026-07-01 00:00:{i:02d}.500000" for i in range(n)]
    table = pa.table(
        {
            "tid": ["t"] * n,
            "sid": [f"s{i:02d}" for i in range(n)],
            "t0": t0,
            "t1": t1,
            "prov": _TRICKY,
            "reg": list(reversed(_TRICKY)),
            "hit": _FLAGS,
        }
    )
    path = tmp_path / "tricky.parquet"
    pq.write_table(table, path)
    mapping = tmp_path / "m.yaml"
    mapping.write_text(
        f"timestamp_format: '{fmt}'\n"
        "columns:\n  task_id: tid\n  span_id: sid\n  start_us: t0\n  end_us: t1\n"
        "  provider: prov\n  region: reg\n  response_cached: hit\nconstants:\n  kind: llm\n"
    )
    return path, mapping


def _tricky_rows(path: Path, mapping: Path, backend: object | None) -> list[tuple[Any, ...]]:
    kw = {} if backend is None else {"backend": backend}
    traces = ingest([path], mapping=load_mapping(mapping), fmt="table", **kw)  # type: ignore[arg-type]
    cols = ["provider", "region", "response_cached", "start_us", "end_us"]
    rows = traces.spans.order_by("span_id").select(*cols).to_pyarrow().to_pylist()
    return [tuple(r[c] for c in cols) for r in rows]


def _tricky_expected() -> list[tuple[Any, ...]]:
    return [
        (
            _expected_text(p),
            _expected_text(r),
            _expected_flag(h),
            _JULY_US + i * 1_000_000,
            _JULY_US + i * 1_000_000 + 500_000,
        )
        for i, (p, r, h) in enumerate(zip(_TRICKY, reversed(_TRICKY), _FLAGS, strict=True))
    ]


def test_blank_text_and_flags_are_read_as_python_reads_them(tmp_path: Path) -> None:
    for fmt in _TIMES:
        path, mapping = _tricky_trace(tmp_path, fmt)
        assert _tricky_rows(path, mapping, None) == _tricky_expected(), fmt


@pytest.mark.spark
def test_spark_reads_blank_text_and_flags_as_duckdb_does(
    tmp_path: Path, spark_backend: object
) -> None:
    # Ibis compiles ``strip`` on Spark to TRIM('\v\f' …), which Spark reads as the letters v
    # and f: "false" was read as "alse" (no flag) and a provider "f" as no provider; and ISO
    # text timestamps failed to compile (Ibis has no microsecond extraction on Spark)
    for fmt in _TIMES:
        path, mapping = _tricky_trace(tmp_path, fmt)
        assert _tricky_rows(path, mapping, spark_backend) == _tricky_expected(), fmt
