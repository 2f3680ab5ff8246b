"""The registry of checks: ``check`` registers a function under a term kind's name."""

from __future__ import annotations

from collections.abc import Callable

from slacheck.metering.context import CheckContext
from slacheck.verdict import TermResult

CheckFn = Callable[[CheckContext], list[TermResult]]

#: name → check, in registration order (which is the order results are reported in)
CHECKS: dict[str, CheckFn] = {}


def check(name: str) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        if name in CHECKS:
            raise ValueError(f"check {name!r} is registered twice")
        CHECKS[name] = fn
        return fn

    return register
