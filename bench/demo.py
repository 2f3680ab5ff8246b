"""The bench's whole-contract section: ``slacheck check`` on the demo contract (every term kind)
beside the hand-written SQL baseline for the same figures (``bench.baseline``), verified equal;
each term kind alone against its own SQL; ``report`` against ``check``; ``traces convert`` and a
check of the converted folder. Every figure is CPU time (all threads) and wall time, with the
machine's load average (1 minute) when the step started and ended."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.baseline import KINDS, compare, slacheck_figures

DEMO = "slacheck/contract/starters/demo.yaml"
#: the aim for a check of converted traces at 10 M spans (issue 27)
CONVERTED_AIM_S = 10.0
#: the aim for a report against the check of the same traces
REPORT_AIM = 1.3

#: SLACHECK_BENCH_REPEAT=n runs each whole-contract step n times and reports the run of median
#: CPU with the spread: on a 2-core machine two runs of one commit differ by up to ~10 %
REPEAT = max(1, int(os.environ.get("SLACHECK_BENCH_REPEAT", "1") or "1"))

Run = Callable[[str, Path], dict[str, Any]]


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median CPU time among ``runs`` (the lower middle one of an even count), with
    ``spread``: the lowest and highest CPU time of all of them."""
    ordered = sorted(runs, key=lambda r: float(r["cpu_seconds"]))
    cpus = [float(r["cpu_seconds"]) for r in ordered]
    return {**ordered[(len(ordered) - 1) // 2], "spread": (cpus[0], cpus[-1]), "runs": len(runs)}


def repeated(step: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``step`` run ``REPEAT`` times: its median run (``median_run``)."""
    return median_run([step() for _ in range(REPEAT)])


def load() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def cli(args: list[str], root: Path, out: Path) -> dict[str, Any]:
    """``slacheck ARGS`` in a process of its own: its CPU time (user + system, every thread),
    wall time and peak memory from ``wait4``, its exit code and standard output."""
    exe = Path(sys.executable).with_name("slacheck")
    out.parent.mkdir(parents=True, exist_ok=True)
    before = load()
    t0 = time.perf_counter()
    with out.open("wb") as stdout:
        proc = subprocess.Popen([str(exe), *args], cwd=root, stdout=stdout, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = out.read_text()
    out.unlink()
    code = proc.returncode
    if code not in (0, 1):  # 1: a breached term, which the demo contract has
        sys.stderr.write(err.decode(errors="replace"))
        raise SystemExit(f"slacheck {' '.join(args[:2])} failed ({code})")
    return {
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "seconds": wall,
        "peak_mib": usage.ru_maxrss / 1024,
        "exit_code": code,
        "stdout": text,
        "load": (before, load()),
    }


def _load(step: Mapping[str, Any]) -> str:
    a, b = step.get("load", (None, None))
    return "" if a is None else f"   load {a:4.1f}→{b:4.1f}"


def line(label: str, step: Mapping[str, Any], base: Mapping[str, Any] | None = None) -> str:
    """CPU and wall of a step, and its CPU against ``base``'s."""
    cpu = float(step["cpu_seconds"])
    ratio = f"   {cpu / float(base['cpu_seconds']):5.2f}×" if base else "         "
    peak = f"   peak {step['peak_mib']:5.0f} MiB" if "peak_mib" in step else ""
    spread = ""
    if step.get("runs", 1) > 1:
        lo, hi = step["spread"]
        spread = f"   median of {step['runs']} ({lo:.2f}–{hi:.2f} s)"
    return (
        f"  {label:<26} CPU {cpu:8.2f} s   wall {float(step['seconds']):8.2f} s{ratio}"
        f"{peak}{_load(step)}{spread}"
    )


def leaves(tree: Mapping[str, Any]) -> int:
    """How many figures a figure tree holds."""
    return sum(leaves(v) if isinstance(v, Mapping) else 1 for v in tree.values())


def _same(label: str, sql: Mapping[str, Any], mine: Mapping[str, Any]) -> bool:
    diff = compare(sql, mine)
    n = leaves({k: sql[k] for k in set(sql) & set(mine)})
    print(f"  same figures as the hand SQL ({label}): {'yes' if not diff else 'NO'}  ({n} figures)")
    for d in diff[:20]:
        print(f"    {d}")
    if len(diff) > 20:
        print(f"    … {len(diff) - 20} more")
    return not diff


def quarter(path: Path) -> str:
    """The quarter (contract zone: Asia/Shanghai) the trace's first span starts in."""
    import duckdb

    source = f"'{path}/**/*.parquet'" if path.is_dir() else f"'{path}'"
    con = duckdb.connect()
    start_us = con.execute(f"SELECT min(start_us) FROM read_parquet({source})").fetchall()[0][0]
    con.close()
    import datetime as dt
    from zoneinfo import ZoneInfo

    t = dt.datetime.fromtimestamp(start_us / 1e6, tz=ZoneInfo("Asia/Shanghai"))
    return f"{t.year}-Q{(t.month - 1) // 3 + 1}"


def _terms(step: Mapping[str, Any]) -> dict[str, Any]:
    doc = json.loads(step["stdout"])
    return slacheck_figures(doc["terms"], doc["quality"])


def section(path: Path, root: Path, out: Path, run: Run) -> bool:
    """The whole-contract figures; False when slacheck's figures differ from the hand SQL's."""
    ok = True
    period = quarter(path)
    demo = str(root / DEMO)
    print(
        f"\nthe demo contract, every term kind (--period {period}): `slacheck check` end to end"
        " (imports and ingestion included) × the hand SQL computing ingestion's accounting and"
        " every kind's counts per window"
    )
    sql = repeated(lambda: run("demo_sql", path))
    check = repeated(
        lambda: cli(
            ["check", demo, str(path), "--period", period, "--format", "json"], root, out / "c"
        )
    )
    print(line("hand-written SQL", sql))
    print(line("slacheck check", check, sql) + f"   exit {check['exit_code']}")
    ok &= _same("whole contract", sql["figures"], _terms(check))

    print("\neach term kind alone (CPU after one ingestion; the SQL makes its calls view anew)")
    kinds_sql, kinds_chk = run("sql_kinds", path), run("check_kinds", path)
    print(
        f"  {'':<14}{'hand SQL':>12}{'slacheck':>12}{'ratio':>9}   (whole step{_load(kinds_chk)})"
    )
    for kind in ("ingestion", *KINDS):
        a, b = kinds_sql["kinds"][kind], kinds_chk["kinds"][kind]
        ca, cb = float(a["cpu_seconds"]), float(b["cpu_seconds"])
        print(f"  {kind:<14}{ca:10.2f} s{cb:10.2f} s{cb / ca:8.2f}×")
    sums = [sum(float(k["kinds"][n]["cpu_seconds"]) for n in KINDS) for k in (kinds_sql, kinds_chk)]
    print(f"  {'the kinds':<14}{sums[0]:10.2f} s{sums[1]:10.2f} s{sums[1] / sums[0]:8.2f}×")
    for kind in KINDS:
        a, b = kinds_sql["kinds"][kind]["figures"], kinds_chk["kinds"][kind]["figures"]
        ok &= _same(f"{kind} alone", {kind: a}, {kind: b})

    print(
        "\n`slacheck report` (Markdown) × `slacheck check`, same traces and period;"
        f" aim ≤ {REPORT_AIM}×"
    )
    report = repeated(
        lambda: cli(
            ["report", demo, str(path), "--period", period, "-o", str(out / "report.md")],
            root,
            out / "r",
        )
    )
    print(line("slacheck check", check))
    print(line("slacheck report", report, check) + f"   exit {report['exit_code']}")
    for f in out.glob("report*"):
        f.unlink() if f.is_file() else shutil.rmtree(f)

    print(
        "\n`slacheck traces convert`, then `check` on the converted folder"
        f" (aim < {CONVERTED_AIM_S:.0f} s wall at 10 M)"
    )
    converted = out / "converted"
    shutil.rmtree(converted, ignore_errors=True)
    conv = cli(["traces", "convert", str(path), "-o", str(converted)], root, out / "v")
    again = repeated(
        lambda: cli(
            ["check", demo, str(converted), "--period", period, "--format", "json"],
            root,
            out / "c",
        )
    )
    print(line("slacheck traces convert", conv))
    print(line("check on the converted", again, check) + f"   exit {again['exit_code']}")
    ok &= _same("check on the converted", sql["figures"], _terms(again))
    shutil.rmtree(converted, ignore_errors=True)
    return ok
