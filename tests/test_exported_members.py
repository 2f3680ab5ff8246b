"""The package's public API is explicit, sorted and complete (as httpx keeps it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import slacheck

ROOT = Path(__file__).resolve().parents[1]


def test_all_is_sorted_and_every_name_resolves() -> None:
    names = [n for n in slacheck.__all__ if n != "__version__"]
    assert names == sorted(names)
    assert set(names) == set(slacheck._EXPORTS)  # the list ruff and readers see is the lookup's
    for name in names:
        assert getattr(slacheck, name) is not None, name


def test_every_public_error_is_exported() -> None:
    # every exception class in slacheck.errors is part of the API
    errors = importlib.import_module("slacheck.errors")
    classes = {
        n
        for n, obj in vars(errors).items()
        if inspect.isclass(obj) and obj.__module__ == errors.__name__
    }
    assert classes <= set(slacheck.__all__)


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        slacheck.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_every_module_imports() -> None:
    for mod in pkgutil.walk_packages(slacheck.__path__, "slacheck."):
        importlib.import_module(mod.name)


def test_type_checkers_see_every_export() -> None:
    # the names imported for type checkers (``if TYPE_CHECKING:``) are exactly the exports,
    # each the object the lazy lookup gives
    import ast

    tree = ast.parse(Path(slacheck.__file__).read_text(encoding="utf-8"))
    guarded = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    seen: dict[str, tuple[str, str]] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            seen[alias.asname or alias.name] = (node.module, alias.name)
    exports = {n for n in slacheck.__all__ if n != "__version__"}
    assert set(seen) == exports
    for name, (module, attr) in seen.items():
        assert getattr(importlib.import_module(module), attr) is getattr(slacheck, name), name


def test_the_readme_python_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re
    import shutil

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert len(code.strip().splitlines()) <= 7, "the API is a few lines"
    shutil.copytree(ROOT / "contracts", tmp_path / "contracts")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(code, "README.md (Python API)", "exec"), scope)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    result = scope["result"]
    assert isinstance(result, slacheck.Evaluation)
    # the report states each of the evaluation's verdicts
    assert result.results and all(r.term_id in report for r in result.results)
