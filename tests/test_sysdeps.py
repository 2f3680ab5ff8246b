"""scripts/sysdeps.sh decides right, every time: with everything installed it installs nothing
(30 runs in a row; fc-list piped into grep -q under pipefail once decided to reinstall in 20 of
30), and without root it names the packages and the command instead of failing in apt-get."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "sysdeps.sh"


def sysdeps(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_with_everything_installed_it_installs_nothing_30_times() -> None:
    # `make test` runs sysdeps first, so everything is installed here
    env = {**os.environ, "SYSDEPS_DRY_RUN": "1"}
    decisions = [sysdeps(env) for _ in range(30)]
    for done in decisions:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "sysdeps: nothing to install", done.stdout
        assert done.stderr == ""


def test_without_root_it_names_the_packages_and_the_command(tmp_path: Path) -> None:
    # a PATH with every tool the script probes but java, and an `id` that says "not root"
    # (and no sudo): the run must stop before apt-get, naming what to install
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "fc-list", "pdftotext", "chromium", "cat", "true"):
        found = shutil.which(tool)
        assert found is not None, f"{tool} is not installed: run `make sysdeps`"
        (bin_dir / tool).symlink_to(found)
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    (bin_dir / "ldconfig").symlink_to(ldconfig)
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "id").chmod(0o755)
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\ntouch {tmp_path}/apt-ran\nexit 0\n")
    (bin_dir / "apt-get").chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "default-jre-headless" in done.stderr
    assert "apt-get install" in done.stderr and "root" in done.stderr
    assert not (tmp_path / "apt-ran").exists()
    # and the dry run says the same decision without the root check
    dry = subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT), "--dry-run"], env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert dry.returncode == 0
    assert dry.stdout.strip() == "sysdeps: would install: default-jre-headless"
