"""One small registered function per term kind; each returns TermResults for every window.

Built-in checks register through ``check`` exactly as an outside one would::

    @check("availability")
    def availability(ctx: CheckContext) -> list[TermResult]: ...
"""

from __future__ import annotations

from slacheck.checks.registry import CHECKS, CheckFn, check
from slacheck.metering.context import CheckContext


def load_builtin_checks() -> dict[str, CheckFn]:
    """Import the built-in check modules (they register themselves) and return the registry."""
    from slacheck.checks import availability, latency, peak, ratelimit, regions  # noqa: F401

    return CHECKS


__all__ = ["CHECKS", "CheckContext", "CheckFn", "check", "load_builtin_checks"]
