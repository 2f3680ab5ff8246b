"""The latency budget: where agent task time goes, and what a change to it would save.

The pure model (``model``: the formula, the result types, the what-ifs) loads at once; the
measured budget (``analysis``, in the engine) on first use of ``analyse`` or
``task_breakdown``, so that reading the types loads no engine. The Markdown is
``slacheck.render.budget``; parsing a what-if from the command line, ``slacheck.cli.whatif``."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from slacheck.budget.model import (
    PARTS,
    Budget,
    BudgetSays,
    Part,
    Scenario,
    Spread,
    StepProfile,
    ToolParallelism,
    WhatIf,
    queue_factor,
    queue_wait_ms,
    task_time_ms,
    what_if,
)

if TYPE_CHECKING:
    from slacheck.budget.analysis import analyse, task_breakdown

__all__ = [
    "PARTS",
    "Budget",
    "BudgetSays",
    "Part",
    "Scenario",
    "Spread",
    "StepProfile",
    "ToolParallelism",
    "WhatIf",
    "analyse",
    "queue_factor",
    "queue_wait_ms",
    "task_breakdown",
    "task_time_ms",
    "what_if",
]

#: what ``slacheck.budget.analysis`` gives, imported on first use
_MEASURED = frozenset({"analyse", "task_breakdown"})


def __getattr__(name: str) -> Any:
    if name not in _MEASURED:
        raise AttributeError(f"module 'slacheck.budget' has no attribute {name!r}")
    value = getattr(importlib.import_module("slacheck.budget.analysis"), name)
    globals()[name] = value
    return value
