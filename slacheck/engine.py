"""Where trace computations run: an Ibis backend on DuckDB (default) or PySpark."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from enum import StrEnum
from typing import Any

import ibis
from ibis.backends import BaseBackend

from slacheck.errors import UsageError


class Engine(StrEnum):
    DUCKDB = "duckdb"
    SPARK = "spark"


def connect(engine: Engine | str = Engine.DUCKDB, database: str | None = None) -> BaseBackend:
    """A backend for ``engine``. ``database``: a DuckDB file for inputs larger than memory."""
    try:
        which = Engine(engine)
    except ValueError:
        raise UsageError(f"unknown engine {engine!r}; use duckdb or spark") from None
    if which is Engine.DUCKDB:
        con = ibis.duckdb.connect(database or ":memory:")
        # Bound DuckDB's memory and let it spill to a scratch folder: a 10-million-span month
        # then stays under 1.5 GiB (and runs no slower). SLACHECK_DUCKDB_MEMORY raises it.
        limit = os.environ.get("SLACHECK_DUCKDB_MEMORY", "1GB")
        scratch = tempfile.mkdtemp(prefix="slacheck-duckdb-")
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        try:
            con.raw_sql(f"SET memory_limit = '{limit}'")
        except Exception:  # DuckDB's own parser error type
            raise UsageError(
                f"SLACHECK_DUCKDB_MEMORY={limit!r} is not a memory size such as 4GB"
            ) from None
        con.raw_sql(f"SET temp_directory = '{scratch}'")
        return con
    session = _spark_session()  # first: without PySpark, ibis.pyspark itself fails to import
    return ibis.pyspark.connect(session)


@functools.cache
def _spark_session() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError(
            "the spark engine needs PySpark: pip install 'slacheck[spark]' (and a Java runtime)"
        ) from None
    builder: Any = SparkSession.builder
    session = (
        builder.master("local[2]")
        .appName("slacheck")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.driver.memory", "2g")
        # tables slacheck materialises are scratch: keep them out of the working directory
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="slacheck-spark-"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def engine_of(backend: BaseBackend) -> Engine:
    return Engine.SPARK if backend.name == "pyspark" else Engine.DUCKDB
