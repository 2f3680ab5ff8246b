"""Record the conformance corpus: each producer, installed at its pinned version in its own
environment, runs its task against the local replay server; what it exports is written to
``tests/data/conformance/<producer>/`` with a PROVENANCE line.

    python3 conformance/run.py                 # every producer under conformance/producers/
    python3 conformance/run.py langfuse litellm

Python producers get a virtual environment under ``conformance/.venvs/<producer>`` (pip,
``requirements.txt`` with exact pins); JS producers an ``npm install`` of their
``package.json`` (exact versions) in ``conformance/.venvs/<producer>``. The replay server runs
in ``conformance/.venvs/_server`` (opentelemetry-proto, to decode OTLP protobuf). Only
127.0.0.1 is called, but for the package registries during installs.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENVS = HERE / ".venvs"
DATA = ROOT / "tests" / "data" / "conformance"
SERVER_REQS = ["opentelemetry-proto==1.45.2"]
PYTHON = os.environ.get("PYTHON", sys.executable)


def _run(cmd: list[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None,
         timeout: float = 1800) -> bool:
    with log.open("w") as f:
        done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                              timeout=timeout, check=False)
    return done.returncode == 0


def python_env(name: str, reqs: list[str] | Path) -> Path:
    venv = VENVS / name
    if (venv / ".ok").exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    VENVS.mkdir(parents=True, exist_ok=True)
    subprocess.run([PYTHON, "-m", "venv", str(venv)], check=True)
    args = ["-r", str(reqs)] if isinstance(reqs, Path) else reqs
    if not _run([str(venv / "bin" / "pip"), "install", "-q", *args], VENVS / f"{name}.log"):
        raise RuntimeError(f"{name}: pip install failed, see {VENVS / f'{name}.log'}")
    (venv / ".ok").touch()
    return venv


def js_env(name: str, producer: Path) -> Path:
    folder = VENVS / name
    if (folder / ".ok").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copy(producer / "package.json", folder / "package.json")
    if not _run(["npm", "install", "--no-audit", "--no-fund", "--save-exact"],
                VENVS / f"{name}.log", cwd=folder):
        raise RuntimeError(f"{name}: npm install failed, see {VENVS / f'{name}.log'}")
    (folder / ".ok").touch()
    return folder


def versions(producer: Path) -> list[str]:
    """The pinned packages the PROVENANCE names (the producer's own, not the OTel SDK's)."""
    meta = json.loads((producer / "producer.json").read_text())
    return list(meta["packages"])


def installed(env_dir: Path, packages: list[str]) -> list[str]:
    """``packages`` ("name==pin") at the versions installed in ``env_dir``: the PROVENANCE
    states what ran, and a pin that pip resolved otherwise fails the recording."""
    names = [p.split("==")[0] for p in packages]
    code = "import sys, importlib.metadata as m; print(' '.join(m.version(n) for n in sys.argv[1:]))"
    out = subprocess.run([str(env_dir / "bin" / "python"), "-c", code, *names],
                         capture_output=True, text=True, check=True).stdout.split()
    got = [f"{n}=={v}" for n, v in zip(names, out, strict=True)]
    if got != packages:
        raise RuntimeError(f"installed {' '.join(got)}, but producer.json names {' '.join(packages)}")
    return got


def record(name: str) -> Path:
    producer = HERE / "producers" / name
    meta = json.loads((producer / "producer.json").read_text())
    server_env = python_env("_server", SERVER_REQS)
    if meta["lang"] == "python":
        env_dir = python_env(name, producer / "requirements.txt")
        cmd = [str(env_dir / "bin" / "python"), str(producer / meta["script"])]
        cwd = producer
    else:
        env_dir = js_env(name, producer)
        shutil.copy(producer / meta["script"], env_dir / meta["script"])
        for shared in (HERE / "tasks").glob("*.mjs"):
            shutil.copy(shared, env_dir / shared.name)
        cmd = ["node", meta["script"]]
        cwd = env_dir
    scratch = VENVS / "_runs" / name
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    port_file = scratch / "port"
    server = subprocess.Popen(
        [str(server_env / "bin" / "python"), str(HERE / "server.py"), "--out", str(scratch),
         "--port-file", str(port_file)]
    )
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        port = port_file.read_text()
        url = f"http://127.0.0.1:{port}"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": os.environ.get("HOME", "/tmp"),
            "PYTHONPATH": str(HERE / "tasks"),
            "NODE_PATH": str(env_dir / "node_modules"),
            "REPLAY_URL": url,
            "OUT_DIR": str(scratch),
            "OPENAI_BASE_URL": f"{url}/v1",
            "OPENAI_API_BASE": f"{url}/v1",
            "OPENAI_API_KEY": "test_openai_api_key",
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "test_anthropic_api_key",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{url}/v1/traces",
            "OTEL_EXPORTER_OTLP_ENDPOINT": url,
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
            "OTEL_SERVICE_NAME": f"conformance-{name}",
            "NO_PROXY": "127.0.0.1,localhost",
            **{k: v.replace("{url}", url) for k, v in meta.get("env", {}).items()},
        }
        started = time.time()
        log = scratch / "task.log"
        ok = _run(cmd, log, cwd=cwd, env=env, timeout=300)
        print(log.read_text(), end="")
        if not ok:
            raise RuntimeError(f"{name}: task failed, see {log}")
        time.sleep(float(meta.get("settle_s", 1.0)))
    finally:
        server.terminate()
        server.wait(timeout=10)
    export = scratch / meta["export"]
    if not export.exists() or not export.read_text().strip():
        raise RuntimeError(f"{name}: nothing exported to {export.name}")
    dest = DATA / name
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    out_name = meta.get("file", meta["export"])
    shutil.copy(export, dest / out_name)
    day = dt.date.fromtimestamp(started).isoformat()
    runtime = "node " + subprocess.run(["node", "--version"], capture_output=True, text=True,
                                       check=False).stdout.strip() if meta["lang"] == "js" else \
        "Python " + subprocess.run([cmd[0], "-c", "import sys; print(sys.version.split()[0])"],
                                   capture_output=True, text=True, check=False).stdout.strip()
    named = installed(env_dir, meta["packages"]) if meta["lang"] == "python" else meta["packages"]
    (dest / "PROVENANCE").write_text(
        f"{out_name}: {' '.join(named)}; script conformance/producers/{name}/"
        f"{meta['script']}; {runtime}; recorded {day} by conformance/run.py against the "
        f"replay server (conformance/responses/); exporter: {meta['exporter']}\n"
    )
    return dest / out_name


def main(argv: list[str]) -> int:
    names = argv or sorted(p.name for p in (HERE / "producers").iterdir()
                           if (p / "producer.json").exists())
    failed = []
    for name in names:
        print(f"== {name}", flush=True)
        try:
            path = record(name)
            print(f"   -> {path.relative_to(ROOT)}")
        except Exception as exc:
            print(f"   FAILED: {exc}")
            failed.append(name)
    if failed:
        print("failed: " + " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
