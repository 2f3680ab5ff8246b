"""Run hostile cases through the real command line, in parallel, with timeouts."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.hostile.corpus import Case


@dataclass(frozen=True)
class Outcome:
    case: Case
    code: int | None  # None: timed out
    stdout: str
    stderr: str
    changed: tuple[str, ...]


def run(case: Case) -> Outcome:
    code = f"{case.prelude}\nfrom slacheck.cli import main\nmain()"
    saved: dict[str, Path] = {}
    keep = Path(tempfile.mkdtemp(prefix="hostile-keep-"))
    for i, f in enumerate(case.unchanged):
        saved[f] = keep / str(i)
        shutil.copyfile(f, saved[f])
    env = {**os.environ, "SLACHECK_DEBUG": "", "COLUMNS": "200", **case.env}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, *case.argv],
            capture_output=True,
            timeout=case.timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        rc: int | None = proc.returncode
        out, err = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = None, exc.stdout or b"", exc.stderr or b""
    changed = tuple(f for f, copy in saved.items() if not filecmp.cmp(f, copy, shallow=False))
    shutil.rmtree(keep)
    return Outcome(
        case,
        rc,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        changed,
    )


def run_all(cases: list[Case], workers: int = 4) -> dict[str, Outcome]:
    with ThreadPoolExecutor(workers) as pool:
        return {o.case.name: o for o in pool.map(run, cases)}


if __name__ == "__main__":
    from tests.hostile.corpus import build

    folder = Path(tempfile.mkdtemp(prefix="hostile-"))
    only = set(sys.argv[1:])
    cases = [c for c in build(folder) if not only or c.name in only]
    for name, o in run_all(cases, 6).items():
        ok = o.code in o.case.exits and not o.changed
        ok = ok and not any(f in o.stdout + o.stderr for f in o.case.forbidden)
        ok = ok and all(s in o.stderr for s in o.case.says) if o.code == 2 else ok
        print(f"{'ok ' if ok else 'BAD'} {name}: exit {o.code} {o.changed or ''}")
        if not ok:
            print("   ", (o.stderr.strip().splitlines() or [""])[-3:])
