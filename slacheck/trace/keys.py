"""The engines' 64-bit hashes of ids, and whether one is exact over a set of ids.

One integer groups, joins and partitions a window several times faster than one or two long
ids (a window over 10⁷ spans by task: ~5 s of CPU by the 32-character id, ~2 s by its hash).
DuckDB's ``hash``; Spark's ``xxhash64`` (its ``hash`` has 32 bits: collisions from ~10⁵ ids,
too few to keep a missing parent from hiding behind one at 10⁸ spans). A hash is exact only
where no two ids share it: ``exact_key`` checks that over the ids a caller will key, so that a
collision costs time, never a figure; ingestion's id pass confirms its suspects on the ids.
"""

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from slacheck.engine import Engine

__all__ = ["exact_key", "hash_key", "pair_key"]


def _duckdb_hash(a: str) -> dt.uint64:
    """DuckDB's 64-bit hash of a value."""


def _duckdb_hash_pair(a: str, b: str) -> dt.uint64:
    """DuckDB's 64-bit hash of its arguments together."""


def _xxhash64(a: str) -> dt.int64:
    """Spark's 64-bit xxHash of a value."""


def _xxhash64_pair(a: str, b: str) -> dt.int64:
    """Spark's 64-bit xxHash of its arguments together."""


_ONE: dict[Engine, Any] = {
    Engine.DUCKDB: ibis.udf.scalar.builtin(_duckdb_hash, name="hash"),
    Engine.SPARK: ibis.udf.scalar.builtin(_xxhash64, name="xxhash64"),
}
_PAIR: dict[Engine, Any] = {
    Engine.DUCKDB: ibis.udf.scalar.builtin(_duckdb_hash_pair, name="hash"),
    Engine.SPARK: ibis.udf.scalar.builtin(_xxhash64_pair, name="xxhash64"),
}


def hash_key(engine: Engine, ids: ir.StringValue) -> ir.IntegerValue:
    """The engine's 64-bit hash of ``ids``: an integer per id, the same for the same id."""
    key: ir.IntegerValue = _ONE[engine](ids)
    return key


def pair_key(engine: Engine, a: ir.StringValue, b: ir.StringValue) -> ir.IntegerValue:
    """The engine's 64-bit hash of a pair of ids together (task, span)."""
    key: ir.IntegerValue = _PAIR[engine](a, b)
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
