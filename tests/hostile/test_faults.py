"""Issue 26, item 7: faults are the user's problem, said as such. SIGTERM ends a command as
SIGINT does (temporary files removed, the old output intact, exit 143); a full disk, a
file-size limit, an output that is a device and a trace file that vanishes while a command runs
end in exit 2 naming the path and the cause, never exit 3; a folder output (the claim pack,
``traces convert``) appears whole or not at all. Each case runs the real command line in a
subprocess; a fault is made real (``/dev/full``, a tmpfs of a few kilobytes in a mount
namespace of its own, ``RLIMIT_FSIZE``, a signal) or, where only timing makes it, a hook in
the child holds the command at the moment the fault must strike."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from slacheck.outputs import atomic_folder, write_folder
from tests.hostile.corpus import CONTRACT

ROOT = Path(__file__).resolve().parents[2]
PACK = ("claim.json", "affected_calls.csv", "letter.en.md", "letter.zh.md")


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str


def _cli(
    argv: Sequence[str],
    *,
    cwd: Path,
    prelude: str = "",
    stdout: Path | None = None,
    file_limit: int | None = None,
    when: Callable[[], bool] | None = None,
    send: int | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Ran:
    """``slacheck argv`` in a subprocess through the console script's ``main``; with ``send``,
    that signal once ``when()`` holds; with ``file_limit``, RLIMIT_FSIZE in the child (SIGXFSZ
    left at its default: slacheck must ignore it itself)."""
    code = f"{textwrap.dedent(prelude)}\nfrom slacheck.cli import main\nmain()"

    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    environ = {**os.environ, "SLACHECK_DEBUG": "", "PYTHONPATH": str(ROOT), **(env or {})}
    out = stdout.open("wb") if stdout is not None else subprocess.PIPE
    proc: subprocess.Popen[bytes] | None = None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *argv],
            cwd=cwd,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.PIPE,
            preexec_fn=limit,
        )
        if send is not None:
            assert when is not None
            deadline = time.monotonic() + timeout
            while not when():
                assert proc.poll() is None, f"ended before the signal: {proc.stderr.read()!r}"  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "the moment to signal never came"
                time.sleep(0.05)
            proc.send_signal(send)
        o, e = proc.communicate(timeout=timeout)
    finally:
        if proc is not None and proc.poll() is None:  # a failed wait: no command left running
            proc.kill()
            proc.communicate()
        if stdout is not None:
            out.close()  # type: ignore[union-attr]
    return Ran(proc.returncode, (o or b"").decode(), e.decode())


def _said(ran: Ran, *words: str) -> None:
    """Exit 2 with one ``error:`` message naming each of ``words``; no traceback, no exit 3."""
    assert ran.code == 2, f"exit {ran.code}\n{ran.stderr}"
    assert ran.stderr.startswith("error: "), ran.stderr
    assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr, ran.stderr
    for w in words:
        assert w in ran.stderr, f"message lacks {w!r}: {ran.stderr}"


def _digest(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (hidden ones too) with its content's hash."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else ""
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture(scope="module")
def traffic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A month of a little traffic: enough for every document, quick to check."""
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("faults") / "traffic.parquet"
    write(generate(TrafficProfile(tasks=60, days=31, seed=3)), path, "parquet")
    return path


def _report(traffic: Path, out: str, *more: str) -> list[str]:
    return ["report", str(CONTRACT), str(traffic), "-o", out, "--period", "2026-Q3", *more]


def _claim(traffic: Path, out: str) -> list[str]:
    return ["claim", str(CONTRACT), str(traffic), "--period", "2026-07", "-o", out]


# -- signals -------------------------------------------------------------------------------------

#: the child waits in the write's fsync, its temporary file complete: the moment to signal
_HOLD_IN_FSYNC = """
    import os, time
    _fsync = os.fsync
    def _held(fd):
        time.sleep(120)
        _fsync(fd)
    os.fsync = _held
"""


#: the report spends a minute of CPU in its queries before it writes (more on a loaded machine):
#: the draft, written by the same ``atomic_path`` under the same signal handler, is the quick case
_SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    ("signum", "code", "command", "fmt"),
    [
        (signal.SIGTERM, 143, "draft", "md"),
        pytest.param(signal.SIGTERM, 143, "report", "md", marks=_SLOW),
        pytest.param(signal.SIGTERM, 143, "report", "pdf", marks=_SLOW),  # weasyprint's time
        pytest.param(signal.SIGINT, 130, "report", "md", marks=_SLOW),  # as it always was
    ],
)
def test_a_signal_while_a_document_is_written_keeps_the_old_one(
    tmp_path: Path, traffic: Path, signum: int, code: int, command: str, fmt: str
) -> None:
    old = tmp_path / f"{command}.{fmt}"
    old.write_bytes(b"the document as it was before\n")
    before = _digest(tmp_path)

    def writing() -> bool:  # the new document, complete in its temporary file
        return any(p.stat().st_size > 100 for p in tmp_path.glob(f".{old.name}.*.tmp"))

    argv = _report(traffic, old.name) if command == "report" else ["draft", str(CONTRACT)]
    if command == "draft":
        argv += ["-o", old.name]
    ran = _cli(argv, cwd=tmp_path, prelude=_HOLD_IN_FSYNC, when=writing, send=signum, timeout=900)
    assert ran.code == code, ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr
    assert _digest(tmp_path) == before  # no temporary file, the old report byte for byte


#: SIGTERM arrives the moment the temporary file or folder beside the output is made, while the
#: signals are held (``outputs.signals_held``): delivered as the hold ends, it must still take
#: the temporary with it
_SIGNAL_AS_THE_TEMPORARY_IS_MADE = """
    import os, signal, tempfile
    def _signalled(make):
        def made(*a, **k):
            name = make(*a, **k)
            if str(k.get("prefix", "")).startswith("."):  # the output's own, not an engine's
                os.kill(os.getpid(), signal.SIGTERM)
            return name
        return made
    tempfile.mkstemp = _signalled(tempfile.mkstemp)
    tempfile.mkdtemp = _signalled(tempfile.mkdtemp)
"""


@pytest.mark.parametrize(
    "argv",
    [["schema", "-o", "schema.json"], ["traces", "convert", "t.json", "-o", "converted"]],
    ids=["file", "folder"],
)
def test_a_signal_as_the_temporary_output_is_made_leaves_nothing(
    tmp_path: Path, argv: list[str]
) -> None:
    from tests.hostile.corpus import otlp_doc, otlp_span

    (tmp_path / "t.json").write_text(json.dumps(otlp_doc([otlp_span(i) for i in range(3)])))
    before = _digest(tmp_path)
    ran = _cli(argv, cwd=tmp_path, prelude=_SIGNAL_AS_THE_TEMPORARY_IS_MADE)
    assert ran.code == 143, ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr
    assert _digest(tmp_path) == before  # no temporary file or folder, no output


# -- a device, a full disk, a file-size limit ------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["schema", "-o", "/dev/full"],
        ["draft", str(CONTRACT), "-o", "/dev/full", "--format", "md"],
        ["export", "openslo", str(CONTRACT), "-o", "/dev/full"],
    ],
    ids=["json-schema", "document", "yaml"],
)
def test_an_output_that_is_dev_full_is_named(tmp_path: Path, argv: list[str]) -> None:
    _said(_cli(argv, cwd=tmp_path), "/dev/full", "No space left on device")


def test_json_to_a_standard_output_that_is_dev_full_is_named(tmp_path: Path) -> None:
    ran = _cli(
        ["traces", "conventions", "--format", "json"], cwd=tmp_path, stdout=Path("/dev/full")
    )
    _said(ran, "standard output", "No space left on device")


def test_junit_to_dev_full_is_named(tmp_path: Path) -> None:
    from tests.hostile.corpus import otlp_doc, otlp_span

    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(otlp_doc([otlp_span(i) for i in range(3)])))
    ran = _cli(["check", str(CONTRACT), trace.name, "--junit", "/dev/full"], cwd=tmp_path)
    _said(ran, "/dev/full", "No space left on device")


@pytest.mark.slow  # two commands that read the month: make test-all runs them
def test_a_folder_output_that_is_a_device_is_refused(tmp_path: Path, traffic: Path) -> None:
    _said(_cli(["traces", "convert", str(traffic), "-o", "/dev/full"], cwd=tmp_path), "/dev/full")
    _said(_cli(_claim(traffic, "/dev/full"), cwd=tmp_path), "/dev/full")


def test_a_file_size_limit_is_said_and_leaves_the_old_file(tmp_path: Path) -> None:
    old = tmp_path / "t.parquet"
    old.write_bytes(b"old traffic")
    before = _digest(tmp_path)
    ran = _cli(
        ["generate", "-o", old.name, "--tasks", "300", "--days", "2"],
        cwd=tmp_path,
        file_limit=20_000,
    )
    _said(ran, "t.parquet", "File too large")
    assert _digest(tmp_path) == before


def test_convert_beyond_a_file_size_limit_leaves_no_folder(tmp_path: Path, traffic: Path) -> None:
    ran = _cli(
        ["traces", "convert", str(traffic), "-o", "converted"], cwd=tmp_path, file_limit=1_000
    )
    _said(ran, "converted", "File too large")
    assert list(tmp_path.iterdir()) == []  # neither the folder nor its staging


@pytest.mark.slow  # a claim on the full month: make test-all runs it
def test_a_claim_beyond_a_file_size_limit_keeps_the_old_pack(tmp_path: Path, traffic: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    for name in PACK:
        (pack / name).write_text(f"the old {name}\n")
    (pack / "notes.txt").write_text("the user's own file\n")
    before = _digest(tmp_path)
    ran = _cli(_claim(traffic, "pack"), cwd=tmp_path, file_limit=4_000)
    _said(ran, "pack", "File too large")
    assert _digest(tmp_path) == before


def _unshare() -> list[str] | None:
    """A command prefix running its command as root of a mount namespace of its own, or None
    where this machine allows none."""
    tool = shutil.which("unshare")
    if tool is None:
        return None
    for prefix in ([tool, "--mount"], [tool, "--mount", "--map-root-user"]):
        probe = subprocess.run(
            [*prefix, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True
        )
        if probe.returncode == 0:
            return prefix
    return None


#: inside the namespace: mount the tmpfs on $1, copy the old outputs in, run slacheck there,
#: then say the exit code, stderr and every entry's hash (the tmpfs goes with the namespace)
_IN_TMPFS = """
import hashlib, json, shutil, subprocess, sys
from pathlib import Path
size, mnt, seed, *argv = sys.argv[1:]
subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt], check=True)
shutil.copytree(seed, mnt, dirs_exist_ok=True)
before = {str(p.relative_to(mnt)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file()
          else "" for p in sorted(Path(mnt).rglob("*"))}
code = "from slacheck.cli import main\\nmain()"
run = subprocess.run([sys.executable, "-c", code, *argv], cwd=mnt, capture_output=True, text=True)
after = {str(p.relative_to(mnt)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file()
         else "" for p in sorted(Path(mnt).rglob("*"))}
print(json.dumps({"code": run.returncode, "stderr": run.stderr, "before": before,
                  "after": after}))
"""


@pytest.fixture(scope="module")
def namespace() -> list[str]:
    prefix = _unshare()
    if prefix is None:
        pytest.skip("no mount namespace here (unshare --mount is not permitted)")
    return prefix


def _in_tmpfs(
    prefix: list[str], tmp_path: Path, size: str, seed: Path, argv: list[str]
) -> tuple[Ran, dict[str, str], dict[str, str]]:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    env = {**os.environ, "SLACHECK_DEBUG": "", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", _IN_TMPFS, size, str(mnt), str(seed), *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,  # the report: a minute of CPU, several on a loaded machine
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    return Ran(got["code"], "", got["stderr"]), got["before"], got["after"]


@pytest.mark.slow  # three commands on a full disk: make test-all runs them
@pytest.mark.parametrize("what", ["report", "convert", "claim"])
def test_a_full_disk_is_said_and_leaves_the_old_output(
    namespace: list[str], tmp_path: Path, traffic: Path, what: str
) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    if what == "report":
        (seed / "report.pdf").write_bytes(b"%PDF the old report")
        argv, named = _report(traffic, "report.pdf"), "report.pdf"
    elif what == "convert":
        argv, named = ["traces", "convert", str(traffic), "-o", "converted"], "converted"
    else:
        (seed / "pack").mkdir()
        for name in PACK:
            (seed / "pack" / name).write_text(f"the old {name}\n")
        argv, named = _claim(traffic, "pack"), "pack"
    ran, before, after = _in_tmpfs(namespace, tmp_path, "24k", seed, argv)
    _said(ran, named, "No space left on device")
    assert after == before


# -- a trace file that vanishes while the command runs -------------------------------------------

#: the trace file is deleted once ingestion has opened it (DuckDB reads Parquet lazily)
_DELETE_AFTER_INGEST = """
    import os
    import slacheck.trace.ingest as _ingest
    _real = _ingest.ingest
    def _then_delete(paths, *a, **k):
        traces = _real(paths, *a, **k)
        for p in paths:
            os.unlink(p)
        return traces
    _ingest.ingest = _then_delete
"""


def test_a_trace_file_deleted_while_the_report_runs_is_named(tmp_path: Path, traffic: Path) -> None:
    gone = tmp_path / "gone.parquet"
    shutil.copyfile(traffic, gone)
    # read in place (a small input is otherwise copied into the engine, and its file no
    # longer needed after ingestion)
    ran = _cli(
        _report(gone, "report.md"),
        cwd=tmp_path,
        prelude=_DELETE_AFTER_INGEST,
        timeout=120,
        env={"SLACHECK_COPY_UP_TO_ROWS": "0"},
    )
    _said(ran, str(gone), "deleted or moved")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no report, no temporary file


# -- folder outputs, in process --------------------------------------------------------------------


def test_a_new_folder_appears_whole(tmp_path: Path) -> None:
    target = tmp_path / "pack"
    write_folder(target, {"a.txt": "one", "b.bin": b"\x00two"})
    assert _digest(tmp_path) == {
        "pack": "",
        "pack/a.txt": hashlib.sha256(b"one").hexdigest(),
        "pack/b.bin": hashlib.sha256(b"\x00two").hexdigest(),
    }


def test_an_existing_folder_gets_the_new_files_and_keeps_its_others(tmp_path: Path) -> None:
    target = tmp_path / "pack"
    target.mkdir()
    (target / "a.txt").write_text("old")
    (target / "mine.txt").write_text("the user's")
    write_folder(target, {"a.txt": "new", "b.txt": "also new"})
    assert {p.name: p.read_text() for p in target.iterdir()} == {
        "a.txt": "new",
        "b.txt": "also new",
        "mine.txt": "the user's",
    }


@pytest.mark.parametrize("existing", [False, True])
def test_a_failure_mid_write_leaves_the_folder_as_it_was(tmp_path: Path, existing: bool) -> None:
    target = tmp_path / "pack"
    if existing:
        target.mkdir()
        (target / "a.txt").write_text("old a")
    before = _digest(tmp_path)
    with pytest.raises(RuntimeError, match="disk gave up"), atomic_folder(target) as out:
        out.mkdir()
        (out / "a.txt").write_text("new a")
        (out / "b.txt").write_text("half of b")
        raise RuntimeError("disk gave up")
    assert _digest(tmp_path) == before


def test_a_folder_that_cannot_take_the_new_one_is_said(tmp_path: Path) -> None:
    from slacheck.errors import UsageError

    target = tmp_path / "pack"
    target.mkdir()
    (target / "sub").mkdir()
    (target / "sub" / "kept.txt").write_text("kept")
    with pytest.raises(UsageError, match="in the way"), atomic_folder(target) as out:
        (out / "sub").mkdir(parents=True)  # a folder over a non-empty folder: refused
        (out / "sub" / "x").write_text("x")
    assert (target / "sub" / "kept.txt").read_text() == "kept"
    assert [p.name for p in target.iterdir()] == ["sub"]
