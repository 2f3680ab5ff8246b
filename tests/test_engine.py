"""The engine session: configuration from arguments and the environment, tables released."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slacheck.engine import (
    DEFAULT_SPARK_MASTER,
    Engine,
    EngineConfig,
    EngineSession,
    parse_spark_conf,
)
from slacheck.errors import UsageError
from slacheck.trace.ingest import ingest


def test_configuration_from_arguments_then_environment() -> None:
    env = {
        "SLACHECK_SPARK_MASTER": "spark://head:7077",
        "SLACHECK_SPARK_CONF": "spark.executor.memory=4g; spark.sql.shuffle.partitions = 64",
        "SLACHECK_DUCKDB_MEMORY": "3GB",
        "SLACHECK_DUCKDB_FILE": "/tmp/x.duckdb",
    }
    c = EngineConfig.from_env("spark", environ=env)
    assert c.engine is Engine.SPARK and c.spark_master == "spark://head:7077"
    assert c.spark_conf == (
        ("spark.executor.memory", "4g"),
        ("spark.sql.shuffle.partitions", "64"),
    )
    assert c.duckdb_memory == "3GB" and c.duckdb_file == "/tmp/x.duckdb"
    flag = EngineConfig.from_env("spark", spark_master="sc://connect:15002", environ=env)
    assert flag.spark_master == "sc://connect:15002"  # the flag wins over the environment
    assert EngineConfig.from_env("spark", environ={}).spark_master == DEFAULT_SPARK_MASTER


def test_bad_configuration_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown engine"):
        EngineConfig.from_env("polars", environ={})
    with pytest.raises(UsageError, match="key=value"):
        parse_spark_conf("spark.a=1; nonsense")
    with pytest.raises(UsageError, match="memory size"):
        EngineSession(EngineConfig(duckdb_memory="lots")).backend  # noqa: B018


def test_close_drops_the_tables_and_the_scratch_folder(
    generated_parquet: Path, tmp_path: Path
) -> None:
    session = EngineSession(EngineConfig(duckdb_file=None))
    traces = ingest([generated_parquet], session=session)
    assert traces.session is session and traces.quality.rows_read > 0
    scratch = Path(session.scratch())
    con = session.backend.con  # DuckDB's own connection
    assert _tables(con)  # the flags table of the generated malformed rows
    session.close()
    assert not scratch.exists()
    with EngineSession(EngineConfig(duckdb_file=str(tmp_path / "kept.duckdb"))) as on_file:
        ingest([generated_parquet], session=on_file)
        assert _tables(on_file.backend.con)
        file_con = on_file.backend.con
    with pytest.raises(Exception, match="closed"):
        file_con.execute("SELECT 1")  # released


def test_a_held_table_is_the_rows_it_was_given_until_it_is_let_go() -> None:
    """``hold`` keeps a query's rows as Arrow columns the engine reads by name, the same rows in
    the same order as a table made of them, other queries joining them alike; ``drop`` and
    ``close`` let them go (a session over someone else's backend leaves nothing behind)."""
    import ibis

    backend = ibis.duckdb.connect()
    session = EngineSession.around(backend)
    n = 300_000  # more than one Arrow batch
    src = ibis.range(n).unnest().name("i").as_table()
    src = src.mutate(s=src.i.cast("string"), x=src.i * 0.5, odd=src.i % 2 == 1)
    made = session.materialise(src)
    held = session.hold(made)
    assert held.to_pyarrow().equals(made.to_pyarrow())
    joined = held.join(made, "i").aggregate(n=ibis._.count(), x=ibis._.x.sum())
    assert joined.to_pyarrow().to_pylist() == [{"n": n, "x": 0.25 * n * (n - 1)}]
    name, other = held.get_name(), session.hold(made.limit(3))
    session.drop(held)
    with pytest.raises(Exception, match=name):
        backend.con.execute(f'SELECT * FROM "{name}"').fetchall()
    assert backend.con.execute(f'SELECT count(*) FROM "{other.get_name()}"').fetchall() == [(3,)]
    session.close()
    with pytest.raises(Exception, match=other.get_name()):
        backend.con.execute(f'SELECT * FROM "{other.get_name()}"').fetchall()
    assert backend.con.execute("SELECT 1").fetchall() == [(1,)]  # the backend stays its owner's


def _tables(con: Any) -> list[str]:
    rows = con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    return [r[0] for r in rows if r[0].startswith("slacheck_")]


def test_duckdb_draws_no_progress_bar_on_stdout() -> None:
    """DuckDB's progress bar (drawn on stdout for a query of more than two seconds, into a
    pipe too) went into ``check --format json``'s output on a folder. Asked in a process of
    its own: under pytest the setting reads false either way."""
    code = (
        "from slacheck.engine import duckdb_connect\n"
        "con = duckdb_connect()\n"
        "print(con.raw_sql(\"SELECT current_setting('enable_progress_bar')\").fetchone()[0])"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "False"


def test_slacheck_backends_compile_unfused_and_leave_ibis_options_alone() -> None:
    """slacheck's DuckDB backend compiles a select over a select as two (its engine merges
    them); Ibis's own option is as it was, so another backend in the process still merges."""
    import ibis

    from slacheck.engine import duckdb_connect

    con = duckdb_connect()
    t = ibis.memtable({"a": [1, 2, 3]})
    nested = t.mutate(b=t.a + 1)
    nested = nested.mutate(c=nested.b * 2)
    assert ibis.options.sql.fuse_selects is True
    ours = con.compile(nested)
    assert ibis.options.sql.fuse_selects is True
    theirs = ibis.duckdb.connect().compile(nested)
    assert ours.count("SELECT") == 2 and theirs.count("SELECT") == 1, (ours, theirs)
    assert con.to_pyarrow(nested).to_pydict() == {"a": [1, 2, 3], "b": [2, 3, 4], "c": [4, 6, 8]}
