"""Issue 26, item 8: the Spark engine on a standalone cluster and through Spark Connect gives
DuckDB's verdicts, term for term and window for window.

A master and a worker are started from the installed PySpark on 127.0.0.1 (and a Spark Connect
server on that cluster, where the installed PySpark ships one), each in a process group of its
own that is stopped at the end however the tests end. The worker's ``python3`` is a stand-in
that refuses to run: slacheck's Spark work must need no Python on the executors, which on a
real cluster may have another Python than the driver or none (the OTLP JSON-lines path once
made a DataFrame of Python rows there and failed in ``collectToPython``).

Slow (minutes: Spark plans and runs hundreds of small jobs per check): ``make test-all``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

pytestmark = [pytest.mark.slow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
STRONG = ROOT / "contracts" / "strong-cn-task-e2e.yaml"
DEMO = ROOT / "slacheck" / "contract" / "starters" / "demo.yaml"
#: one check on the cluster takes minutes on two shared cores; this is a hang
CHECK_TIMEOUT = 1800


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class _Daemon:
    """A JVM of the cluster in a process group of its own, its output in a log file."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def wait_for(self, text: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log.read_text(errors="replace"):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        tail = self.log.read_text(errors="replace")[-3000:]
        raise AssertionError(f"{self.name} did not say {text!r} (exit {self.proc.poll()}):\n{tail}")

    def stop(self) -> None:
        """The group (the JVM and every executor it started), SIGTERM, then SIGKILL."""
        for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                continue
            # the JVM is gone; executors it launched may linger a moment in its group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            return


def _environ(tmp: Path, *, no_python: bool) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME", "SPARK_CONF_DIR")
    }
    env |= {"SPARK_HOME": str(_spark_home()), "SPARK_LOCAL_IP": "127.0.0.1"}
    if no_python:
        fake = tmp / "no-python"
        fake.mkdir(exist_ok=True)
        for name in ("python3", "python"):
            script = fake / name
            script.write_text('#!/bin/sh\necho "no Python on this executor" >&2\nexit 1\n')
            script.chmod(0o755)
        env["PATH"] = f"{fake}{os.pathsep}{env.get('PATH', '')}"
    return env


def _start(name: str, argv: list[str], env: dict[str, str], logs: Path) -> _Daemon:
    log = logs / f"{name}.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            argv,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    return _Daemon(name, proc, log)


@dataclass(frozen=True)
class Cluster:
    master: str
    connect: str | None  # sc://… when a Spark Connect server runs


#: the Spark Connect server's settings: half the worker's cores, so a driver started beside it
#: still gets executors; scratch tables in the test's folder
def _connect_conf(port: int, tmp: Path) -> dict[str, str]:
    return {
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.cores.max": "2",
        "spark.executor.memory": "1g",
        "spark.ui.enabled": "false",
        "spark.sql.warehouse.dir": str(tmp / "warehouse"),
    }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("cluster")
    home = _spark_home()
    spark_class = str(home / "bin" / "spark-class")
    env = _environ(tmp, no_python=True)
    port, connect_port = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    here = ["--host", "127.0.0.1", "--webui-port"]
    daemons: list[_Daemon] = []

    def start(name: str, argv: list[str]) -> _Daemon:
        daemons.append(_start(name, argv, env, tmp))
        return daemons[-1]

    try:
        main = "org.apache.spark.deploy.master.Master"
        m = start("master", [spark_class, main, *here, str(_free_port()), "--port", str(port)])
        m.wait_for("I have been elected leader")
        work = tmp / "work"
        work.mkdir()
        sizes = ["--cores", "4", "--memory", "4g", "--work-dir", str(work)]
        main = "org.apache.spark.deploy.worker.Worker"
        w = start("worker", [spark_class, main, *here, str(_free_port()), *sizes, master])
        w.wait_for("Successfully registered with master")
        connect = None
        if list((home / "jars").glob("spark-connect_*.jar")):
            conf = [
                x
                for k, v in _connect_conf(connect_port, tmp).items()
                for x in ("--conf", f"{k}={v}")
            ]
            main = "org.apache.spark.sql.connect.service.SparkConnectServer"
            submit = str(home / "bin" / "spark-submit")
            c = start("connect", [submit, "--master", master, "--class", main, *conf])
            c.wait_for("Spark Connect server started")
            connect = f"sc://127.0.0.1:{connect_port}"
        yield Cluster(master, connect)
    finally:
        for d in reversed(daemons):
            d.stop()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same traffic as Parquet, as OTLP JSON lines and as ``traces convert``'s folder."""
    from slacheck.trace.generate import TrafficProfile, generate, write

    tmp = tmp_path_factory.mktemp("cluster-traces")
    table = generate(TrafficProfile(tasks=60, days=31, seed=11))
    parquet, lines = tmp / "traffic.parquet", tmp / "traffic.jsonl"
    write(table, parquet, "parquet")
    write(table, lines, "otlp")
    folder = tmp / "converted"
    ran = _slacheck(["traces", "convert", str(parquet), "-o", str(folder)])
    assert ran.returncode == 0, ran.stderr
    return {"parquet": parquet, "jsonl": lines, "folder": folder}


def _slacheck(
    argv: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    code = "from slacheck.cli import main\nmain()"
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        env={**(env or os.environ), "PYTHONPATH": str(ROOT), "SLACHECK_DEBUG": ""},
        timeout=CHECK_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


def _verdicts(contract: Path, trace: str, *engine: str) -> tuple[int, Any]:
    env = _environ(Path("/nonexistent"), no_python=False) if engine else None
    if env is not None:
        # the cluster has 4 cores: the Connect server may hold 2
        env["SLACHECK_SPARK_CONF"] = "spark.cores.max=2; spark.executor.memory=1g"
    ran = _slacheck(["check", str(contract), trace, "--format", "json", *engine], env)
    assert ran.returncode in (0, 1), f"exit {ran.returncode}\n{ran.stderr[-3000:]}"
    doc = json.loads(ran.stdout)
    return ran.returncode, {"terms": doc["terms"], "summary": doc["summary"]}


def _url(path: Path) -> str:
    return path.resolve().as_uri() + ("/" if path.is_dir() else "")


def _duckdb(contract: Path, path: Path) -> tuple[int, Any]:
    """DuckDB's verdicts on the same input, read here: what every Spark run must give."""
    return _verdicts(contract, str(path))


@pytest.mark.parametrize("kind", ["jsonl", "folder"])
def test_a_standalone_cluster_gives_duckdbs_verdicts(
    cluster: Cluster, inputs: dict[str, Path], kind: str
) -> None:
    fmt = ["--trace-format", "canonical"] if kind == "folder" else []
    got = _verdicts(
        STRONG, _url(inputs[kind]), *fmt, "--engine", "spark", "--spark-master", cluster.master
    )
    assert got == _duckdb(STRONG, inputs[kind])


@pytest.mark.parametrize("kind", ["parquet", "folder", "jsonl"])
def test_spark_connect_gives_duckdbs_verdicts(
    cluster: Cluster, inputs: dict[str, Path], kind: str
) -> None:
    if cluster.connect is None:
        pytest.skip("the installed PySpark ships no Spark Connect server")
    trace = str(inputs[kind]) if kind == "parquet" else _url(inputs[kind])
    fmt = ["--trace-format", "canonical"] if kind == "folder" else []
    got = _verdicts(DEMO, trace, *fmt, "--engine", "spark", "--spark-master", cluster.connect)
    assert got == _duckdb(DEMO, inputs[kind])
