"""The rate limit (SLA401–SLA403): whether it is written, and what it admits in agent tasks."""

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import Contract, RateLimitBasis
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.contract.review.wording import ASSUMED_STEPS, num, task_steps
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param

__all__ = ["RateLimitSays"]


class RateLimitSays(MessageCode):
    """What the rate-limit rules say, and how they name a limit's period."""

    # a limit's period, as the sentences below name it
    PER_SECOND = NC_("review.per.second", "s")
    PER_MINUTE = NC_("review.per.minute", "min")
    PER_HOUR = NC_("review.per.hour", "h")
    PER_DAY = NC_("review.per.day", "day")

    SLA401_TITLE = NC_("SLA401.title", "The rate limit counts requests, not agent tasks.")
    SLA401_WHY = NC_(
        "SLA401.why",
        "{limit} requests/{per} is {tasks} tasks/{per} at {steps}; a retry or a longer chain "
        "lowers it further.",
    )
    SLA401_WHY_BURST = NPC_(
        "SLA401.why.burst",
        "{limit} requests/{per} is {tasks} tasks/{per} (burst {burst} task) at {steps}; a retry "
        "or a longer chain lowers it further.",
        "{limit} requests/{per} is {tasks} tasks/{per} (burst {burst} tasks) at {steps}; a retry "
        "or a longer chain lowers it further.",
        count="burst",
    )
    SLA401_FIX = NC_(
        "SLA401.fix",
        "Write the limit per task (basis: per_task, limit: {tasks}) or keep it per request and "
        "state steps_per_task so both sides compute the same task rate.",
    )
    SLA402_TITLE = NC_("SLA402.title", "A per-request rate limit without steps_per_task.")
    SLA402_WHY = NPC_(
        "SLA402.why",
        "The limit is {limit} requests/{per} with no steps_per_task, so the task rate is "
        "unwritten ({tasks} tasks/{per} if a task takes {steps} step).",
        "The limit is {limit} requests/{per} with no steps_per_task, so the task rate is "
        "unwritten ({tasks} tasks/{per} if a task takes {steps} steps).",
        count="steps",
    )
    SLA402_FIX = NC_(
        "SLA402.fix", "Add rate_limit.steps_per_task with the measured model calls per task."
    )
    SLA403_TITLE = NC_("SLA403.title", "The contract has no rate-limit clause.")
    SLA403_WHY = NC_(
        "SLA403.why",
        "No rate_limit section: the vendor may throttle at any rate, and a 429 under your "
        "expected load cannot be argued as a failure.",
    )
    SLA403_FIX = NC_(
        "SLA403.fix",
        "Add rate_limit with basis (per_task preferred for agents), limit, period and burst.",
    )


def _per(period: str) -> Message:
    return {
        "second": RateLimitSays.PER_SECOND,
        "minute": RateLimitSays.PER_MINUTE,
        "hour": RateLimitSays.PER_HOUR,
        "day": RateLimitSays.PER_DAY,
    }[str(period)]()


@rule("SLA401", Severity.MEDIUM, title=RateLimitSays.SLA401_TITLE)
def per_request_rate_limit(contract: Contract) -> Iterator[Hit]:
    """The rate limit counts requests, not agent tasks.

    An agent task makes one request per step, so a per-request limiter admits far fewer tasks
    than its number suggests: 600 requests/min is 50 tasks/min at 12 steps.
    """
    rl = contract.rate_limit
    if rl is None or rl.basis is not RateLimitBasis.PER_REQUEST:
        return
    steps, how = task_steps(contract)
    tasks = num(round(rl.limit / steps, 1))
    numbers: dict[str, Param] = {
        "limit": num(rl.limit),
        "per": _per(rl.period),
        "tasks": tasks,
        "steps": how,
    }
    why = (
        RateLimitSays.SLA401_WHY_BURST(**numbers, burst=num(round(rl.burst / steps, 1)))
        if rl.burst
        else RateLimitSays.SLA401_WHY(**numbers)
    )
    yield Hit(("rate_limit", "basis"), why, RateLimitSays.SLA401_FIX(tasks=tasks))


@rule("SLA402", Severity.LOW, title=RateLimitSays.SLA402_TITLE)
def steps_per_task_unstated(contract: Contract) -> Iterator[Hit]:
    """A per-request rate limit without steps_per_task.

    Without the expected steps per task, the per-task capacity the customer is buying is
    unwritten; slacheck assumes 12 (the worked example) and says so.
    """
    rl = contract.rate_limit
    if rl is None or rl.basis is not RateLimitBasis.PER_REQUEST or rl.steps_per_task is not None:
        return
    yield Hit(
        ("rate_limit", "steps_per_task"),
        RateLimitSays.SLA402_WHY(
            limit=num(rl.limit),
            per=_per(rl.period),
            tasks=num(round(rl.limit / ASSUMED_STEPS, 1)),
            steps=ASSUMED_STEPS,
        ),
        RateLimitSays.SLA402_FIX(),
    )


@rule("SLA403", Severity.LOW, title=RateLimitSays.SLA403_TITLE)
def rate_limit_missing(contract: Contract) -> Iterator[Hit]:
    """The contract has no rate-limit clause.

    Without one, a 429 cannot be told apart from an outage: the contract cannot say whether
    throttling below the limit counts as a failure, because there is no limit.
    """
    if contract.rate_limit is not None:
        return
    yield Hit(("rate_limit",), RateLimitSays.SLA403_WHY(), RateLimitSays.SLA403_FIX())
