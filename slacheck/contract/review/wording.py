"""What several rule groups quote: the contract's numbers as message parameters."""

# Every explanation quotes the contract's own numbers. Steps per task are quoted by the latency,
# region and rate-limit rules, durations by the maintenance and credit rules; each group's own
# pieces (an objective, a region, a period) live beside its rules.

from __future__ import annotations

from slacheck.contract.model import Contract
from slacheck.messages import NC_, NPC_, Message, MessageCode

__all__ = ["ASSUMED_STEPS", "Wording", "num", "quote_minutes", "task_steps"]

ASSUMED_STEPS = 12  # DOMAIN.md's worked example: a 12-step agent task


class Wording(MessageCode):
    """The pieces several rule groups' sentences are built from."""

    STEPS_STATED = NPC_(
        "review.steps.stated",
        "{steps} step (rate_limit.steps_per_task)",
        "{steps} steps (rate_limit.steps_per_task)",
        count="steps",
    )
    STEPS_ASSUMED = NPC_(
        "review.steps.assumed",
        "{steps} step (assumed: steps_per_task is unstated)",
        "{steps} steps (assumed: steps_per_task is unstated)",
        count="steps",
    )
    HOURS = NC_("review.hours", "{n} h")
    MINUTES = NC_("review.minutes", "{n} min")


def num(x: float) -> float:
    """A number for a message: rounded to 6 significant digits (the message formats it)."""
    return int(x) if float(x).is_integer() else float(f"{x:.6g}")


def task_steps(contract: Contract) -> tuple[float, Message]:
    """Steps per agent task and how we know it."""
    rl = contract.rate_limit
    if rl is not None and rl.steps_per_task is not None:
        return rl.steps_per_task, Wording.STEPS_STATED(steps=num(rl.steps_per_task))
    return ASSUMED_STEPS, Wording.STEPS_ASSUMED(steps=ASSUMED_STEPS)


def quote_minutes(m: float) -> Message:
    """A duration in minutes, quoted in hours from two hours up."""
    if m >= 120:
        return Wording.HOURS(n=num(round(m / 60, 1)))
    return Wording.MINUTES(n=num(round(m)))
