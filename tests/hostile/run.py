"""Run hostile cases through the real command line, in parallel, with timeouts."""

from __future__ import annotations

import filecmp
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.hostile.corpus import Case

#: wall seconds per second of CPU a case may take before it counts as hung: on two shared cores
#: a command gets a fraction of one
WALL_FACTOR = 6


def _cpu_limit(seconds: float) -> Callable[[], None]:
    """In the child: SIGXCPU after ``seconds`` of CPU (all threads), SIGKILL a little later."""
    soft = math.ceil(seconds)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))

    return limit


@dataclass(frozen=True)
class Outcome:
    case: Case
    code: int | None  # None: timed out
    stdout: str
    stderr: str
    changed: tuple[str, ...]
    #: why a hung command was stopped: "cpu" (its CPU limit) or "wall"; "" when it ended
    stopped: str = ""


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
            timeout=case.timeout * WALL_FACTOR,
            env=env,
            stdin=subprocess.DEVNULL,
            preexec_fn=_cpu_limit(case.timeout),
        )
        rc: int | None = proc.returncode
        out, err = proc.stdout, proc.stderr
        stopped = ""
        if rc in (-signal.SIGXCPU, -signal.SIGKILL):  # its CPU time ran out: hung
            rc, stopped = None, "cpu"
    except subprocess.TimeoutExpired as exc:
        rc, out, err, stopped = None, exc.stdout or b"", exc.stderr or b"", "wall"
    changed = tuple(f for f, copy in saved.items() if not filecmp.cmp(f, copy, shallow=False))
    shutil.rmtree(keep)
    return Outcome(
        case,
        rc,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        changed,
        stopped,
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
