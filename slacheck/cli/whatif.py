"""What-if scenarios as a command line gives them: ``steps=0.5``, ``parallel-tools``,
``network=20``, ``utilisation=0.85->0.5``, or several joined by commas."""

from __future__ import annotations

import re
from typing import Any

from slacheck.budget.model import Scenario
from slacheck.errors import UsageError

__all__ = ["parse_what_if"]

_WHAT_IF_FORMS = (
    "steps=FACTOR (e.g. steps=0.5), parallel-tools, network=MS (e.g. network=20), "
    "utilisation=FROM->TO (e.g. utilisation=0.85->0.5); combine with commas"
)
_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"


def parse_what_if(spec: str) -> Scenario:
    """A scenario from CLI text: ``steps=0.5``, ``parallel-tools``, ``network=20``,
    ``utilisation=0.85->0.5``, or several joined by commas."""
    options: dict[str, Any] = {}
    items = [s.strip() for s in spec.split(",")]
    if not spec.strip() or any(not s for s in items):
        raise UsageError(f"empty what-if {spec!r}; use {_WHAT_IF_FORMS}")
    for item in items:
        key, _, value = (x.strip() for x in item.partition("="))
        key = key.lower().replace("_", "-")
        if key in ("utilization", "util", "rho"):
            key = "utilisation"
        option = _WHAT_IF_KEYS.get(key)
        if option is None:
            raise UsageError(f"unknown what-if {item!r}; use {_WHAT_IF_FORMS}")
        if option in options:
            raise UsageError(f"what-if {spec!r} sets {key} twice")
        options.update(_parse_value(key, item, value))
    return Scenario(**options, spec=spec.strip())


_WHAT_IF_KEYS = {
    "steps": "steps_factor",
    "parallel-tools": "parallel_tools",
    "network": "network_ms_per_call",
    "utilisation": "utilisation_from",
}


def _parse_value(key: str, item: str, value: str) -> dict[str, Any]:
    if key == "parallel-tools":
        if value and value.lower() not in ("true", "yes", "1"):
            raise UsageError(f"what-if {item!r}: parallel-tools takes no value")
        return {"parallel_tools": True}
    if key == "utilisation":
        m = re.fullmatch(rf"({_NUMBER})\s*(?:->|→)\s*({_NUMBER})", value)
        if m is None:
            raise UsageError(
                f"what-if {item!r}: give the change as FROM->TO, e.g. utilisation=0.85->0.5"
            )
        lo, hi = (_fraction(item, g) for g in m.groups())
        return {"utilisation_from": lo, "utilisation_to": hi}
    unit = "ms" if key == "network" else ""
    v = value.removesuffix(unit).strip() if unit else value
    if not re.fullmatch(_NUMBER, v):
        example = "steps=0.5" if key == "steps" else "network=20"
        raise UsageError(f"what-if {item!r}: {key} needs a number, e.g. {example}")
    name = "steps_factor" if key == "steps" else "network_ms_per_call"
    return {name: float(v)}


def _fraction(item: str, text: str) -> float:
    v = float(text)
    if v >= 1.0:
        raise UsageError(
            f"what-if {item!r}: utilisation is a fraction in [0, 1), e.g. 0.85 for 85 %"
        )
    return v
