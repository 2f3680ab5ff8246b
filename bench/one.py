"""Run one measured step in a fresh process and print JSON: seconds and peak memory.

Each step runs alone in its own interpreter so its peak RSS is its own, not the parent's.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def _ingest(path: str, db: str) -> dict[str, object]:
    from slacheck.trace.ingest import ingest

    traces = ingest([path], database=db)
    return {"rows_used": traces.quality.rows_used, "rows_read": traces.quality.rows_read}


def _scan(path: str, db: str) -> dict[str, object]:
    import duckdb

    con = duckdb.connect(db)
    row = con.sql(
        "SELECT count(*), sum(duration_ms), min(start_us), max(end_us), "
        f"count(DISTINCT task_id) FROM read_parquet('{path}')"
    ).fetchone()
    assert row is not None
    return {"rows": row[0]}


def _check(path: str, db: str) -> dict[str, object]:
    from bench.contract import BENCH_CONTRACT
    from slacheck.checks import CheckContext
    from slacheck.checks.latency import latency as latency_check
    from slacheck.contract.load import load_contract_text
    from slacheck.trace.ingest import ingest

    contract = load_contract_text(BENCH_CONTRACT, "bench-contract.yaml")
    traces = ingest([path], database=db)
    t0 = time.perf_counter()
    results = latency_check(CheckContext(contract, traces))
    return {
        "check_seconds": time.perf_counter() - t0,
        "counts": sorted([r.window, r.good, r.total] for r in results),
    }


def _sql(path: str, db: str) -> dict[str, object]:
    import duckdb

    from bench.contract import SQL_COUNTS

    con = duckdb.connect(db)
    t0 = time.perf_counter()
    rows = con.sql(SQL_COUNTS.format(path=path)).fetchall()
    return {"check_seconds": time.perf_counter() - t0, "counts": sorted(list(r) for r in rows)}


STEPS = {"ingest": _ingest, "scan": _scan, "check": _check, "sql": _sql}


def main() -> None:
    step, path, db = sys.argv[1], sys.argv[2], sys.argv[3]
    Path(db).unlink(missing_ok=True)
    t0 = time.perf_counter()
    extra = STEPS[step](path, db)
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "peak_mib": _peak_mib(), **extra}))


def _peak_mib() -> float:
    """This process's peak resident memory. VmHWM, not ru_maxrss: the latter survives exec,
    so it would report the parent's peak (the parent generated the trace)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
