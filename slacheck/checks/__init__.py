"""One small registered function per term kind; each returns TermResults for every window.

Built-in checks register through ``check`` exactly as an outside one would::

    @check("availability")
    def availability(ctx: CheckContext) -> list[TermResult]: ...
"""

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


def load_builtin_checks() -> dict[str, CheckFn]:
    """Import the built-in check modules (they register themselves) and return the registry."""
    from slacheck.checks import availability, latency, peak, ratelimit, regions  # noqa: F401

    return CHECKS


__all__ = ["CHECKS", "CheckContext", "CheckFn", "check", "load_builtin_checks"]
