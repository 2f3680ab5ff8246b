"""Run one measured step in a fresh process and print JSON: seconds and peak memory.

Each step runs alone in its own interpreter so its peak RSS is its own, not the parent's.
``PATH`` is a Parquet file or a folder of them.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _source(path: str) -> str:
    """The Parquet input as a DuckDB ``read_parquet`` argument: a file or a folder's files."""
    return f"'{path}/*.parquet'" if Path(path).is_dir() else f"'{path}'"


def _scan(path: str, db: str) -> dict[str, object]:
    import duckdb

    con = duckdb.connect(db)
    # DuckDB 2's relations have no fetchone(): the statement is executed
    row = con.execute(
        "SELECT count(*), sum(duration_ms), min(start_us), max(end_us), "
        f"count(DISTINCT task_id) FROM read_parquet({_source(path)})"
    ).fetchall()[0]
    return {"rows": row[0]}


def _sql_ingest(path: str, db: str) -> dict[str, object]:
    import duckdb

    from bench.contract import SQL_CLASSIFIED, SQL_IMPOSSIBLE, SQL_INGEST

    con = duckdb.connect(db)
    # the hand SQL's GROUP BY over the string ids does not fit 1 GB at 10⁸ spans: bench-large
    # gives it more (SLACHECK_BENCH_SQL_MEMORY)
    con.execute(f"SET memory_limit = '{os.environ.get('SLACHECK_BENCH_SQL_MEMORY', '1GB')}'")
    classified = SQL_CLASSIFIED.format(source=_source(path), impossible=SQL_IMPOSSIBLE)
    con.execute(f"CREATE TEMP VIEW classified AS {classified}")
    reasons = {str(r): int(n) for r, n in con.sql(SQL_INGEST["reasons"]).fetchall()}
    dups = int(con.sql(SQL_INGEST["duplicates"]).fetchall()[0][0])
    orphans = int(con.sql(SQL_INGEST["orphans"]).fetchall()[0][0])
    used = reasons.pop("None", 0) - dups
    if dups:
        reasons["duplicate_span_id"] = dups
    return {"accounting": _accounting(used, reasons, orphans)}


def _accounting(used: int, set_aside: dict[str, int], orphans: int) -> dict[str, object]:
    return {"used": used, "set_aside": dict(sorted(set_aside.items())), "orphans": orphans}


def _ingest(path: str, db: str) -> dict[str, object]:
    from slacheck.trace.ingest import ingest

    q = ingest([path], database=db).quality
    return {"accounting": _accounting(q.rows_used, q.set_aside, q.orphans)}


def _check(path: str, db: str) -> dict[str, object]:
    from bench.contract import BENCH_CONTRACT
    from slacheck.contract.load import load_contract_text
    from slacheck.evaluation import evaluate
    from slacheck.trace.ingest import ingest

    contract = load_contract_text(BENCH_CONTRACT, "bench-contract.yaml")
    traces = ingest([path], database=db)
    t0 = time.perf_counter()
    # what `slacheck check` runs after ingestion: every check, coverage, the effective period
    results = evaluate(contract, traces).results
    return {
        "check_seconds": time.perf_counter() - t0,
        "counts": sorted([r.window, r.good, r.total, r.observed] for r in results),
    }


def _sql(path: str, db: str) -> dict[str, object]:
    import duckdb

    from bench.contract import SQL_CHECK

    con = duckdb.connect(db)
    t0 = time.perf_counter()
    rows = con.sql(SQL_CHECK.format(source=_source(path))).fetchall()
    return {
        "check_seconds": time.perf_counter() - t0,
        "counts": sorted([w, int(g), int(n), float(p)] for w, g, n, p in rows),
    }


def _pandas(path: str, db: str) -> dict[str, object]:
    """The check as a data scientist would write it: read, filter, group by month, quantile."""
    import math

    import pandas as pd

    t0 = time.perf_counter()
    cols = ["task_id", "span_id", "kind", "status", "start_us", "end_us", "duration_ms"]
    cols.append("response_cached")
    df = pd.read_parquet(path, columns=cols)
    calls = df[
        (df.kind == "llm")
        & (df.status == "ok")
        & df.duration_ms.notna()
        & df.task_id.notna()
        & df.span_id.notna()
        & (df.end_us >= df.start_us)
        & ~df.response_cached.fillna(False).astype(bool)  # cache hits are left out
    ]
    month = pd.to_datetime(calls.start_us, unit="us").dt.strftime("%Y-%m")
    counts = []
    for window, d in calls.duration_ms.groupby(month):
        values = d.sort_values().to_numpy()
        p95 = values[math.ceil(0.95 * len(values)) - 1]  # nearest rank
        counts.append([window, int((values <= 3000).sum()), len(values), float(p95)])
    return {"check_seconds": time.perf_counter() - t0, "counts": sorted(counts)}


def _demo_sql(path: str, db: str) -> dict[str, object]:
    """The whole demo contract by hand (``bench.baseline``): ingestion's accounting and every
    term kind's figures, in one DuckDB connection, imports included."""
    import duckdb

    from bench.baseline import figures

    con = duckdb.connect(db)
    con.execute(f"SET memory_limit = '{os.environ.get('SLACHECK_BENCH_SQL_MEMORY', '1GB')}'")
    return {"figures": figures(con, _source(path))}


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``fn()``, its CPU time (every thread's) and its wall time."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - t0


def _sql_kinds(path: str, db: str) -> dict[str, object]:
    """Each term kind's hand SQL alone: its calls view and the shared tables it needs made
    anew, then its queries (ingestion's accounting first, timed as a kind of its own)."""
    import duckdb

    from bench.baseline import KINDS, ingestion, kind_figures, prepare

    con = duckdb.connect(db)
    con.execute(f"SET memory_limit = '{os.environ.get('SLACHECK_BENCH_SQL_MEMORY', '1GB')}'")
    source = _source(path)
    per: dict[str, dict[str, object]] = {}
    _, cpu, wall = _timed(lambda: ingestion(con, source))
    per["ingestion"] = {"cpu_seconds": cpu, "seconds": wall}
    for kind in KINDS:

        def run(kind: str = kind) -> Any:
            prepare(con, source)
            return kind_figures(con, kind, source, set())

        got, cpu, wall = _timed(run)
        per[kind] = {"cpu_seconds": cpu, "seconds": wall, "figures": got}
    return {"kinds": per}


def _check_kinds(path: str, db: str) -> dict[str, object]:
    """Each check alone, after one ingestion (timed as a kind of its own): ``evaluate`` with
    only that check, on a context of its own (nothing kept from another check)."""
    from bench.baseline import KINDS, slacheck_figures
    from slacheck.contract.load import load_contract
    from slacheck.evaluation import evaluate
    from slacheck.trace.ingest import ingest

    contract = load_contract(Path(__file__).resolve().parents[1] / DEMO)
    traces, cpu, wall = _timed(lambda: ingest([path], database=db))
    per: dict[str, dict[str, object]] = {"ingestion": {"cpu_seconds": cpu, "seconds": wall}}
    for kind in KINDS:

        def run(kind: str = kind) -> Any:
            return evaluate(contract, traces, only=[kind])

        ev, cpu, wall = _timed(run)
        got = slacheck_figures([r.to_dict() for r in ev.results]).get(kind, {})
        per[kind] = {"cpu_seconds": cpu, "seconds": wall, "figures": got}
    return {"kinds": per}


DEMO = "slacheck/contract/starters/demo.yaml"

STEPS = {
    "scan": _scan,
    "sql_ingest": _sql_ingest,
    "ingest": _ingest,
    "sql": _sql,
    "pandas": _pandas,
    "check": _check,
    "demo_sql": _demo_sql,
    "sql_kinds": _sql_kinds,
    "check_kinds": _check_kinds,
}


def main() -> None:
    step, path, db = sys.argv[1], sys.argv[2], sys.argv[3]
    Path(db).unlink(missing_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    extra = STEPS[step](path, db)
    seconds = time.perf_counter() - t0
    # CPU time (every thread's): what the step cost when other jobs share the machine
    cpu = time.process_time() - c0
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_mib": _peak_mib(), **extra}))


def _peak_mib() -> float:
    """This process's peak resident memory. VmHWM, not ru_maxrss: the latter survives exec,
    so it would report the parent's peak (the parent generated the trace)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
