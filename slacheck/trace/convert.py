"""Write ingested traces as slacheck's canonical Parquet, one folder per UTC day, for repeated
runs: a later run scans the Parquet in place instead of parsing the sources again."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import ibis
import ibis.expr.types as ir

from slacheck.engine import Engine
from slacheck.errors import UsageError
from slacheck.outputs import atomic_folder
from slacheck.trace.ingest import trace_files
from slacheck.trace.record import SET_ASIDE_PARTITION, Derived, write_record
from slacheck.trace.schema import COLUMN_NAMES, PLAUSIBLE_US
from slacheck.trace.traces import Traces

__all__ = ["SET_ASIDE_PARTITION", "Converted", "check_new_folder", "convert"]


@dataclass(frozen=True, slots=True)
class Converted:
    folder: Path
    rows: int
    files: int


def convert(traces: Traces, folder: Path, derived: Sequence[Derived] = ()) -> Converted:
    """Write every row read (used and set aside) under ``folder/day=YYYY-MM-DD/``; rows set
    aside go to ``day=set-aside`` (the rows kept carry ingestion's ``orphan`` flag), and what
    ingestion established about them to ``folder/.slacheck/`` (``trace.record``), with the
    tables ``derived`` from the rows written (the model calls: ``metering.recorded``). ``folder``
    must not exist or be empty; it appears whole or not at all (written beside it, then
    renamed: ``outputs.atomic_folder``). A write the file system refuses (a full disk, a
    file-size limit) is a ``UsageError`` naming the folder."""
    check_new_folder(folder)
    rows = _rows_to_write(traces)
    with atomic_folder(folder) as out:
        try:
            _write(traces, rows, out)
            written = [p for p in trace_files([out]) if p.is_file()]
            if written:
                write_record(traces, out, written, derived)
            # no folder, and no record of facts, from a file written while it was read
            traces.verify_unchanged()
        except Exception as exc:
            said = _write_refused(exc)
            if said is None:
                raise
            raise UsageError(f"cannot write {folder}: {said}") from None
    return Converted(folder=folder, rows=traces.quality.rows_read, files=len(written))


def check_new_folder(folder: Path) -> None:
    """Refuse ``folder`` as the output of ``convert`` unless it is new or an empty folder."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} exists and is not an empty folder; give a new folder")


def _write(traces: Traces, rows: ir.Table, out: Path) -> None:
    if traces.engine is Engine.SPARK:
        session = traces.backend._session
        df = session.sql(traces.backend.compile(rows))
        df.write.partitionBy("day").parquet(str(out))
    else:
        sql = traces.backend.compile(rows)
        target = str(out).replace("'", "''")
        con = traces.backend
        con.raw_sql(f"SET partitioned_write_flush_threshold = {_FLUSH_ROWS}")
        try:
            con.raw_sql(f"COPY ({sql}) TO '{target}' (FORMAT parquet, PARTITION_BY (day))")
        finally:
            con.raw_sql("RESET partitioned_write_flush_threshold")


#: rows a DuckDB thread gathers before handing them to the day files' writers. DuckDB's
#: default (524,288) ran out of the default 1 GB memory bound at 100 M spans (91 day files
#: open at once) and, at 10 M under a 300 MB bound, took 39 s of wall time where this takes
#: 17 s (the COPY alone; 2 cores)
_FLUSH_ROWS = 20_000


#: what a refused write says, in DuckDB's and Java's words
_REFUSED = re.compile(
    r"No space left on device|File too large|Disk quota exceeded|Read-only file system|"
    r"Input/output error|Permission denied"
)


def _write_refused(exc: BaseException) -> str | None:
    """The file system's reason, when ``exc`` is a write it refused (DuckDB's IOException,
    Spark's java.io.IOException, an OSError); None for any other error."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    found = _REFUSED.search(str(exc))
    return found.group(0) if found else None


def _rows_to_write(traces: Traces) -> ir.Table:
    used = traces.spans.select(*COLUMN_NAMES, "orphan").mutate(_ok=ibis.literal(True))
    bad = traces.set_aside_rows.select(*COLUMN_NAMES).mutate(
        orphan=ibis.null().cast("boolean"), _ok=ibis.literal(False)
    )
    t = ibis.union(used, bad, distinct=False)
    lo, hi = PLAUSIBLE_US
    start = ibis.ifelse(t._ok & (t.start_us >= lo) & (t.start_us < hi), t.start_us, 0)
    day = (start // 1_000_000).as_timestamp("s").date().cast("string")
    return t.mutate(day=ibis.ifelse(t._ok, day, ibis.literal(SET_ASIDE_PARTITION))).drop("_ok")
