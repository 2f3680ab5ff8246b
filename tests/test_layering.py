"""The stages point one way (STYLE.md), render only formats (no engine, metering or check
behind it), the commands call the stages, no check imports another, no trace module imports one
that imports it back and trace's results are plain data: import-linter's contracts in
pyproject.toml, run here so CI holds them (``make lint`` runs the same command)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.is_file(), "import-linter is a dev dependency: pip install -e '.[dev]'"
    run = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6 kept, 0 broken" in run.stdout


def test_every_package_folder_is_a_package() -> None:
    # a folder without __init__.py is left out of the wheel and escapes the contracts
    for folder in (ROOT / "slacheck").rglob("*"):
        if folder.is_dir() and any(folder.glob("*.py")):
            assert (folder / "__init__.py").is_file(), f"{folder} has no __init__.py"
