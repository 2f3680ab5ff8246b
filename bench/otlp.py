"""`python -m bench.otlp` (``make bench-otlp``): a folder of OTLP JSON lines (about 1 million
spans by default) checked on DuckDB and on Spark, read by the engine (no span parsed in Python:
the Python reader refuses, and every source must say it was read by the engine);
the verdicts and the set-aside accounting must be identical. SLACHECK_BENCH_OTLP_TASKS scales
it (44,000 tasks ≈ 1 million spans), SLACHECK_BENCH_OTLP_CHUNKS sets the number of files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "out"
TASKS = int(os.environ.get("SLACHECK_BENCH_OTLP_TASKS", "44000"))
CHUNKS = int(os.environ.get("SLACHECK_BENCH_OTLP_CHUNKS", "8"))
DAYS = 30


def _trace() -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = OUT / f"otlp-{TASKS}x{DAYS}d-{CHUNKS}files"
    if path.exists():
        return path
    part = OUT / f"{path.name}.partial"
    part.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i in range(CHUNKS):
        chunk = part / f"traces-{i:04d}.jsonl"
        if not chunk.exists():
            profile = TrafficProfile(tasks=TASKS // CHUNKS, days=DAYS, seed=100 + i)
            write(generate(profile), chunk, "otlp")
        print(f"  file {i + 1}/{CHUNKS} ({time.perf_counter() - t0:.0f} s)", flush=True)
    part.rename(path)
    return path


def _one(engine: str, path: str) -> dict[str, Any]:
    """Ingest and evaluate the demo contract on ``engine``, in this process."""
    import slacheck.trace.otlp as otlp
    from slacheck.contract.load import load_contract
    from slacheck.engine import EngineConfig, EngineSession
    from slacheck.evaluation import evaluate
    from slacheck.trace.ingest import ingest

    def refuse(p: Path) -> Any:
        raise AssertionError(f"the Python OTLP reader was asked to parse {p}")

    otlp.read_otlp = refuse  # the engine path, or a failure
    os.environ["SLACHECK_OTLP_ENGINE_BYTES"] = "0"
    contract = load_contract(ROOT / "slacheck/contract/starters/demo.yaml")
    t0 = time.perf_counter()
    with EngineSession(EngineConfig.from_env(engine)) as session:
        traces = ingest([path], session=session)
        t_ingest = time.perf_counter() - t0
        result = evaluate(contract, traces)
        verdicts = sorted(
            [r.term_id, r.window, str(r.verdict), repr(r.observed), r.good, r.total]
            for r in result.results
        )
        q = traces.quality.to_dict()
        # the record ingestion keeps of how each file was read: every one by the engine
        read_by = sorted({(s.read_by, s.fallback) for s in traces.sources}, key=str)
        assert read_by == [("engine", None)], read_by
    return {
        "peak_mib": _peak_mib(),
        "ingest_seconds": t_ingest,
        "seconds": time.perf_counter() - t0,
        "verdicts": verdicts,
        "quality": {k: q[k] for k in ("rows_read", "rows_used", "set_aside", "orphans")},
    }


def _peak_mib() -> float:
    """This process's peak resident memory (a Spark run's JVM is another process: not counted)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    if len(sys.argv) == 3:  # a child: one engine
        print(json.dumps(_one(sys.argv[1], sys.argv[2])))
        return 0
    path = _trace()
    size = sum(f.stat().st_size for f in path.glob("*.jsonl"))
    print(f"trace: {path.name}, {len(list(path.glob('*.jsonl')))} files, {size / 2**20:.0f} MiB")
    runs = {}
    for engine in ("duckdb", "spark"):
        res = subprocess.run(
            [sys.executable, "-m", "bench.otlp", engine, str(path)],
            check=False,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if res.returncode != 0:
            sys.stderr.write(res.stderr[-4000:])
            raise SystemExit(f"{engine} failed")
        runs[engine] = json.loads(res.stdout.strip().splitlines()[-1])
        r = runs[engine]
        spans = r["quality"]["rows_read"]
        print(
            f"  {engine:<7} ingest {r['ingest_seconds']:7.1f} s ({spans / r['ingest_seconds']:,.0f}"
            f" spans/s), ingest + evaluate {r['seconds']:7.1f} s, {spans:,} spans read,"
            f" peak {r['peak_mib']:,.0f} MiB{' (Python side)' if engine == 'spark' else ''}"
        )
    same = runs["duckdb"]["verdicts"] == runs["spark"]["verdicts"]
    same_q = runs["duckdb"]["quality"] == runs["spark"]["quality"]
    print(
        f"  identical verdicts: {'yes' if same else 'NO'}; identical accounting: "
        f"{'yes' if same_q else 'NO'}  {runs['duckdb']['quality']}"
    )
    return 0 if same and same_q else 1


if __name__ == "__main__":
    sys.exit(main())
