"""`python -m bench`: ingestion, check, command and start-up benchmarks on a generated trace.

Every figure is printed beside baselines measured in the same run on the same file: a bare DuckDB
scan; hand-written DuckDB SQL doing ingestion's work (set-aside classification with counts,
duplicate ids, orphans) and the check's (per-window counts and the exact nearest-rank p95 through
``quantile_disc``); a straightforward pandas check. Then the workload users run (``bench.demo``):
``slacheck check`` on the whole demo contract beside a hand-written SQL baseline for every term
kind's figures (``bench.baseline``), verified equal, in CPU and wall time; each term kind alone
against its SQL; ``report`` against ``check``; ``traces convert`` and a check of its output.
Each step runs in its own process so its peak memory and CPU time are its own, and the load
average is printed beside it. SLACHECK_BENCH_TASKS scales the trace (440,000 tasks: about 10
million spans); SLACHECK_BENCH_CHUNKS > 1 writes it in chunks to a folder of Parquet files
(``make bench-large``); SLACHECK_BENCH_TRACE uses a trace generated before instead.
SLACHECK_BENCH_ONLY=ingest stops after ingestion, =check after the one-term check (before the
whole contract and the start-up figures), =demo runs only the whole contract's section.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.demo import section as demo_section

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "out"
TASKS = int(os.environ.get("SLACHECK_BENCH_TASKS", "100000"))
CHUNKS = int(os.environ.get("SLACHECK_BENCH_CHUNKS", "1"))
DAYS = 90
#: start-up aim for commands that read no traces
STARTUP_AIM_S = 0.3
PANDAS_MAX_SPANS = 30_000_000
#: SLACHECK_BENCH_ONLY=ingest stops after the ingestion figures (a 100-million-span run), =check
#: after the one-term check; =demo runs only the whole demo contract's section
ONLY = os.environ.get("SLACHECK_BENCH_ONLY", "")
#: this run's scratch files (databases, the converted trace, the report): its own, so two runs
#: at once (a 1 M and a 10 M trace) do not share them
RUN = OUT / f"run-{os.getpid()}"
#: a trace to use instead of generating one (e.g. one generated earlier with the same seed)
TRACE = os.environ.get("SLACHECK_BENCH_TRACE", "")


def _trace() -> Path:
    """The trace: SLACHECK_BENCH_TRACE when set (a Parquet file or folder the bench generated
    before), else one Parquet file, or a folder of CHUNKS files (each a seed of its own; ids are
    random 128-bit and 64-bit values, so chunks never share one), generated once."""
    from slacheck.trace.generate import TrafficProfile, generate, write

    if TRACE:
        given = Path(TRACE).resolve()
        if not given.exists():
            raise SystemExit(f"SLACHECK_BENCH_TRACE: no such file or folder: {given}")
        return given
    name = f"traffic-{TASKS}x{DAYS}d"
    path = OUT / (f"{name}-{CHUNKS}chunks" if CHUNKS > 1 else f"{name}.parquet")
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if CHUNKS == 1:
        table = generate(TrafficProfile(tasks=TASKS, days=DAYS, seed=42))
        write(table, path, "parquet")
    else:
        part = OUT / f"{path.name}.partial"
        part.mkdir(exist_ok=True)
        for i in range(CHUNKS):
            chunk = part / f"chunk-{i:04d}.parquet"
            if not chunk.exists():
                table = generate(TrafficProfile(tasks=TASKS // CHUNKS, days=DAYS, seed=42 + i))
                write(table, chunk, "parquet")
                del table
            print(f"  chunk {i + 1}/{CHUNKS} ({time.perf_counter() - t0:.0f} s)", flush=True)
        part.rename(path)
    print(f"generated the trace in {time.perf_counter() - t0:.1f} s → {path}")
    return path


def _run(step: str, path: Path) -> dict[str, Any]:
    db = RUN / f"{step}.duckdb"
    RUN.mkdir(parents=True, exist_ok=True)
    before = os.getloadavg()[0]
    res = subprocess.run(
        [sys.executable, "-m", "bench.one", step, str(path), str(db)],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    db.unlink(missing_ok=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"bench step {step} failed ({res.returncode})")
    data: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    data["load"] = (before, os.getloadavg()[0])
    return data


def _startup(args: list[str]) -> float:
    """The best of five wall times of ``slacheck ARGS`` (interpreter start included), with the
    package's bytecode compiled, as an installed package has it: where the environment sets
    PYTHONDONTWRITEBYTECODE every run would compile slacheck's own modules again (about 0.05 s
    of `validate`), which no installed copy does."""
    import compileall

    compileall.compile_dir(ROOT / "slacheck", quiet=1)
    exe = Path(sys.executable).with_name("slacheck")
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([str(exe), *args], check=False, capture_output=True, cwd=ROOT)
        best = min(best, time.perf_counter() - t0)
    return best


def _line(label: str, step: dict[str, Any], key: str, base: float | None) -> str:
    s = float(step[key])
    ratio = f"   {s / base:6.2f}×" if base else ""
    a, b = step["load"]
    return (
        f"  {label:<22}{s:8.2f} s   peak {step['peak_mib']:6.0f} MiB{ratio}   load {a:.1f}→{b:.1f}"
    )


def _spans(path: Path) -> int:
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    return sum(pq.read_metadata(f).num_rows for f in files)


def main() -> int:
    path = _trace()
    spans = _spans(path)
    size = sum(f.stat().st_size for f in (path.glob("*") if path.is_dir() else [path]))
    what = f"{path}" if TRACE else f"{TASKS:,} tasks, {DAYS} days"
    print(f"trace: {spans:,} spans, {what} ({size / 2**20:.0f} MiB)")
    try:
        return _main(path, spans)
    finally:
        shutil.rmtree(RUN, ignore_errors=True)


def _main(path: Path, spans: int) -> int:
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ok = True
    if ONLY == "demo":
        ok = demo_section(path, ROOT, RUN / "demo", _run)
        print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("all figures verified equal" if ok else "FIGURES DIFFER (see above)")
        return 0 if ok else 1

    scan = _run("scan", path)
    ing = _run("ingest", path)  # slacheck's first: its figures stand if the SQL fails
    print(f"  (slacheck ingest: {ing['seconds']:.2f} s, peak {ing['peak_mib']:.0f} MiB)")
    sql_ing = _run("sql_ingest", path)
    base = float(scan["seconds"])
    print("\ningestion (classify every row with counts, duplicate ids, orphans); × bare scan")
    print(_line("duckdb bare scan", scan, "seconds", base))
    print(_line("hand-written SQL", sql_ing, "seconds", base))
    print(
        _line("slacheck ingest", ing, "seconds", base) + f"   {spans / ing['seconds']:,.0f} spans/s"
    )
    print(f"  slacheck ÷ SQL        {ing['seconds'] / sql_ing['seconds']:8.2f}×")
    same = sql_ing["accounting"] == ing["accounting"]
    ok &= same
    print(f"  same accounting as SQL: {'yes' if same else 'NO'}  {ing['accounting']}")
    if not same:
        print(f"    sql {sql_ing['accounting']}")
    cpu = {k: float(v["cpu_seconds"]) for k, v in (("sql", sql_ing), ("ingest", ing))}
    print(
        f"  CPU time (all threads): SQL {cpu['sql']:.1f} s, slacheck {cpu['ingest']:.1f} s,"
        f" slacheck ÷ SQL {cpu['ingest'] / cpu['sql']:.2f}×"
    )
    if ONLY == "ingest":
        return 0 if ok else 1

    sql, chk = _run("sql", path), _run("check", path)
    # pandas holds every id as a Python string: at 10⁸ spans it would not fit in memory
    pandas = _run("pandas", path) if spans <= PANDAS_MAX_SPANS else None
    base = float(sql["check_seconds"])
    print("\nlatency check (full_response per month: counts and the nearest-rank p95); × SQL")
    print(_line("hand-written SQL", sql, "check_seconds", base))
    if pandas is not None:
        print(_line("pandas", pandas, "check_seconds", base) + "   (read included)")
    else:
        print(f"  pandas                skipped above {PANDAS_MAX_SPANS:,} spans")
    print(
        _line("slacheck check", chk, "check_seconds", base)
        + f"   (after ingest; whole run {chk['seconds']:.2f} s)"
    )
    for name, other in (("SQL", sql), ("pandas", pandas)):
        if other is None:  # skipped: nothing to compare with
            continue
        same = other["counts"] == chk["counts"]
        ok &= same
        print(f"  same counts and p95 as {name}: {'yes' if same else 'NO'}")
        if not same:
            print(f"    {name} {other['counts']}\n    check {chk['counts']}")
    if ONLY == "check":
        return 0 if ok else 1

    ok &= demo_section(path, ROOT, RUN / "demo", _run)

    demo = ROOT / "slacheck/contract/starters/demo.yaml"
    print(f"\nstart-up (best of 5, interpreter included; aim < {STARTUP_AIM_S} s)")
    for label, args in (
        ("slacheck --help", ["--help"]),
        ("slacheck validate", ["validate", str(demo)]),
    ):
        s = _startup(args)
        print(f"  {label:<22}{s:8.2f} s   {'ok' if s < STARTUP_AIM_S else 'over the aim'}")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("all figures verified equal" if ok else "FIGURES DIFFER (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
