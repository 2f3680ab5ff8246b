"""`python -m bench`: ingestion and check benchmarks on a generated 10-million-span trace.

Figures are printed with ratios to baselines measured in the same run on the same file:
ingestion against DuckDB scanning the file with a bare aggregate, the latency check against a
hand-written DuckDB SQL query computing the same compliance counts. Each step runs in its own
process so its peak memory is its own. SLACHECK_BENCH_TASKS shrinks the trace for a quick run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
TASKS = int(os.environ.get("SLACHECK_BENCH_TASKS", "440000"))
DAYS = 90


def _trace() -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = OUT / f"traffic-{TASKS}x{DAYS}d.parquet"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        table = generate(TrafficProfile(tasks=TASKS, days=DAYS, seed=42))
        write(table, path, "parquet")
        print(f"generated {table.num_rows:,} spans in {time.perf_counter() - t0:.1f} s → {path}")
    return path


def _run(step: str, path: Path) -> dict[str, object]:
    db = OUT / f"{step}.duckdb"
    res = subprocess.run(
        [sys.executable, "-m", "bench.one", step, str(path), str(db)],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    db.unlink(missing_ok=True)
    data: dict[str, object] = json.loads(res.stdout.strip().splitlines()[-1])
    return data


def main() -> int:
    import pyarrow.parquet as pq

    path = _trace()
    spans = pq.read_metadata(path).num_rows
    print(
        f"trace: {spans:,} spans, {TASKS:,} tasks, {DAYS} days "
        f"({path.stat().st_size / 2**20:.0f} MiB)"
    )

    scan, ing = _run("scan", path), _run("ingest", path)
    rate = spans / float(ing["seconds"])  # type: ignore[arg-type]
    ratio = float(ing["seconds"]) / float(scan["seconds"])  # type: ignore[arg-type]
    print("\ningestion (read, classify every row, set aside, flag orphans)")
    print(f"  duckdb bare scan  {scan['seconds']:7.2f} s   peak {scan['peak_mib']:6.0f} MiB")
    print(
        f"  slacheck ingest   {ing['seconds']:7.2f} s   peak {ing['peak_mib']:6.0f} MiB"
        f"   {rate:,.0f} spans/s"
    )
    print(f"  ratio to scan     {ratio:7.2f}×  (aim ≤ 3×, peak < 2048 MiB)")

    sql, chk = _run("sql", path), _run("check", path)
    same = sql["counts"] == chk["counts"]
    cratio = float(chk["check_seconds"]) / float(sql["check_seconds"])  # type: ignore[arg-type]
    print("\nlatency check (p95 full_response per month, exact counts)")
    print(f"  hand-written SQL  {sql['check_seconds']:7.2f} s   peak {sql['peak_mib']:6.0f} MiB")
    print(
        f"  slacheck check    {chk['check_seconds']:7.2f} s   peak {chk['peak_mib']:6.0f} MiB"
        f"   (after ingest; whole run {chk['seconds']:.2f} s)"
    )
    print(f"  ratio to SQL      {cratio:7.2f}×  (aim ≤ 2×, peak < 2048 MiB)")
    print(f"  same counts as SQL: {'yes' if same else 'NO'}")
    if not same:
        print(f"    sql   {sql['counts']}\n    check {chk['counts']}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
