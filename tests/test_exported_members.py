"""The package's public API is explicit, sorted and complete (as httpx keeps it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import slacheck


def test_all_is_sorted_and_every_name_resolves() -> None:
    names = [n for n in slacheck.__all__ if n != "__version__"]
    assert names == sorted(names)
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
