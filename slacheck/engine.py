"""Where trace computations run: an Ibis backend on DuckDB (default) or PySpark."""

from __future__ import annotations

import functools
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
        return ibis.duckdb.connect(database or ":memory:")
    return ibis.pyspark.connect(_spark_session())


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
