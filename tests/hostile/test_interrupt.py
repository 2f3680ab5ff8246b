"""Issue 26: SIGTERM and SIGINT stop a DuckDB query that is running (a real DuckDB, a query of
minutes), instead of waiting for it to return: the process exits 143 / 130 within seconds of
CPU, its scratch folder removed."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: a child that runs a query of minutes in an engine session, as a command does
CHILD = """
import sys
from slacheck.engine import EngineConfig, EngineSession
from slacheck.outputs import Terminated, handle_signals, raise_if_signalled

handle_signals()
try:
    with EngineSession(EngineConfig.from_env()) as session:
        session.scratch()
        con = session.backend
        print("ready", flush=True)
        try:
            con.raw_sql(
                "SELECT sum(hash(a)) FROM range(100000000000) t(a) WHERE a % 7 = 3"
            ).fetchall()
        except Exception:  # DuckDB's "interrupted", as slacheck.cli.helpers._run takes it
            raise_if_signalled()
            raise
except Terminated:  # as slacheck.cli.main takes it
    sys.exit(143)
except KeyboardInterrupt:
    sys.exit(130)
"""


def _run(sig: int, scratch: Path) -> tuple[int, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SLACHECK_SCRATCH": str(scratch)}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, env=env, stdin=subprocess.DEVNULL
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(2)  # the query is running
        proc.send_signal(sig)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                return proc.returncode, usage.ru_utime + usage.ru_stime
            time.sleep(0.2)
        raise AssertionError("the query ran on after the signal")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_a_running_duckdb_query(tmp_path: Path, sig: int, code: int) -> None:
    # the query alone would take minutes of CPU: the bound says it was stopped
    resource.getrusage(resource.RUSAGE_CHILDREN)
    got, cpu = _run(sig, tmp_path)
    assert got == code
    assert cpu < 30, f"{cpu:.1f} s of CPU: the query was not interrupted"
    assert list(tmp_path.iterdir()) == []  # the scratch folder removed
