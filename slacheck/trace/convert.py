"""Write ingested traces as slacheck's canonical Parquet, one folder per UTC day, for repeated
runs: a later run scans the Parquet in place instead of parsing the sources again."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import ibis
import ibis.expr.types as ir

from slacheck.engine import Engine
from slacheck.errors import UsageError
from slacheck.trace.ingest import Traces
from slacheck.trace.schema import COLUMN_NAMES, PLAUSIBLE_US

#: the partition of rows ingestion set aside: kept, so a later run reads and counts them again
SET_ASIDE_PARTITION = "set-aside"


@dataclass(frozen=True, slots=True)
class Converted:
    folder: Path
    rows: int
    files: int


def convert(traces: Traces, folder: Path) -> Converted:
    """Write every row read (used and set aside) under ``folder/day=YYYY-MM-DD/``; rows set
    aside go to ``day=set-aside``. ``folder`` must not exist or be empty; it appears whole or
    not at all (written beside it, then renamed)."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} exists and is not an empty folder; give a new folder")
    folder.parent.mkdir(parents=True, exist_ok=True)
    rows = _rows_to_write(traces)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        out = staging / "out"
        if traces.engine is Engine.SPARK:
            session = traces.backend._session
            df = session.sql(traces.backend.compile(rows))
            df.write.partitionBy("day").parquet(str(out))
        else:
            sql = traces.backend.compile(rows)
            target = str(out).replace("'", "''")
            traces.backend.raw_sql(
                f"COPY ({sql}) TO '{target}' (FORMAT parquet, PARTITION_BY (day))"
            )
        if folder.exists():
            folder.rmdir()
        out.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    files = sorted(folder.rglob("*.parquet"))
    return Converted(folder=folder, rows=traces.quality.rows_read, files=len(files))


def _rows_to_write(traces: Traces) -> ir.Table:
    used = traces.spans.select(*COLUMN_NAMES).mutate(_ok=ibis.literal(True))
    bad = traces.set_aside_rows.select(*COLUMN_NAMES).mutate(_ok=ibis.literal(False))
    t = ibis.union(used, bad, distinct=False)
    lo, hi = PLAUSIBLE_US
    start = ibis.ifelse(t._ok & (t.start_us >= lo) & (t.start_us < hi), t.start_us, 0)
    day = (start // 1_000_000).as_timestamp("s").date().cast("string")
    return t.mutate(day=ibis.ifelse(t._ok, day, ibis.literal(SET_ASIDE_PARTITION))).drop("_ok")
