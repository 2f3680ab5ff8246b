"""An integer key for an id column, where it is exact.

A window partitioned by an integer, a group by one, a join on one, cost the engine a fraction of
the same over 32-character ids (a window over 10⁷ spans by task: ~5 s of CPU by the string,
~2 s by a 64-bit hash). A hash is exact only where no two ids share it, so ``exact_key`` checks
that over the ids it will key (a count of distinct keys against a count of ids, over a table of
one row per id) and gives the id itself otherwise: a collision costs time, never a figure.
"""

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from slacheck.engine import Engine

__all__ = ["exact_key", "hash_key"]


def _duckdb_hash(a: str) -> dt.uint64:
    """DuckDB's 64-bit hash of a value."""


def _xxhash64(a: str) -> dt.int64:
    """Spark's 64-bit xxHash of a value (its ``hash`` has 32 bits: collisions from ~10⁵ ids)."""


_HASHES: dict[Engine, Any] = {
    Engine.DUCKDB: ibis.udf.scalar.builtin(_duckdb_hash, name="hash"),
    Engine.SPARK: ibis.udf.scalar.builtin(_xxhash64, name="xxhash64"),
}


def hash_key(engine: Engine, ids: ir.StringValue) -> ir.IntegerValue:
    """The engine's 64-bit hash of ``ids``: an integer per id, the same for the same id."""
    key: ir.IntegerValue = _HASHES[engine](ids)
    return key


def exact_key(engine: Engine, ids: ir.Table, column: str) -> bool:
    """Whether ``hash_key`` tells apart every value of ``column`` in ``ids`` (best a table
    with one row per id; nulls are not ids): one query over that table."""
    c = ids[column]
    row = (
        ids.filter(c.notnull())
        .aggregate(n=c.nunique(), k=hash_key(engine, c).nunique())
        .execute()
        .iloc[0]
    )
    return int(row["n"]) == int(row["k"])
