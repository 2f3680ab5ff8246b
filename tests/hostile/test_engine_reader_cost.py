"""Issue 26: the engine reader spent 35 s of CPU on a three-span OTLP JSON-lines file (the
``line_separators_in_strings_engine`` case). The cost is not the separators: any file pays it.
The canonical columns were one statement of 2.5 MB of SQL (each rule's read, the timestamps and
the fields inlined at every use), which DuckDB plans for seconds and which took a Spark
cluster's executor heap. Each stage is now a view the next refers to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ibis.expr.types as ir
import pytest

from slacheck.engine import Engine, EngineConfig, EngineSession
from slacheck.trace import otlp_engine
from slacheck.trace.otlp_columns import canonical, unnest_spans
from tests.hostile.corpus import otlp_doc, otlp_span

ROOT = Path(__file__).resolve().parents[2]
#: minutes of wall time on the shared machine (the engine reader's fixed cost, twice)
pytestmark = pytest.mark.slow


def _separators(path: Path) -> None:
    import json

    def line(spans: list[dict[str, object]]) -> str:
        return json.dumps(otlp_doc(spans), ensure_ascii=False)

    lines = [
        line([otlp_span(0, name="a\u2028b"), otlp_span(1, name="c\u0085d")]),
        line([otlp_span(2, name="e\u2029f\x1cg")]),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_canonical_statement_stays_small(tmp_path: Path) -> None:
    """Every stage's SQL, each referring to the one before by name: DuckDB plans each view
    where it is used, and Spark inlines every stage into the one plan it runs."""
    path = tmp_path / "separators.jsonl"
    _separators(path)
    with EngineSession(EngineConfig()) as session:
        con = session.backend
        stages: list[int] = []

        def staged(t: ir.Table) -> ir.Table:
            stages.append(len(con.compile(t)))
            return session.view(t)

        view = "slacheck_test_lines"
        lines = otlp_engine._duckdb_file_lines(str(path), doc=True)
        con.raw_sql(f"CREATE OR REPLACE TEMP VIEW {view} AS {lines}")
        sql = con.compile(canonical(unnest_spans(con.table(view)), Engine.DUCKDB, staged))
        con.raw_sql(f"DROP VIEW {view}")
    total = sum(stages) + len(sql)
    # 2.5 MB before the stages; 1.8 MB with the reads a stage (the spellings of the numbers
    # and the timestamps' nanoseconds inlined at every use); 1.3 MB with those stages too
    assert total < 1_500_000, f"{total} characters of SQL in {len(stages) + 1} stages"
    assert max(stages) < 600_000, stages


def test_the_engine_reader_reads_line_separators_in_bounded_cpu(tmp_path: Path) -> None:
    path = tmp_path / "separators.jsonl"
    _separators(path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SLACHECK_OTLP_ENGINE_BYTES": "0"}
    code = "from slacheck.cli import main\nmain()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "traces", "inspect", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    assert proc.returncode == 0
    # about 17 s of CPU on a loaded 2-core machine (ibis building the expression, DuckDB
    # planning it): a fixed cost of the engine reader, not the file's
    assert cpu < 30, f"{cpu:.1f} s of CPU for three spans"
