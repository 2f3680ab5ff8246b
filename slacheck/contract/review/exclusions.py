"""Exclusions (SLA605–SLA607): calls that drop out of every term, and failures that do not count
as failures."""

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import Contract
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.contract.review.wording import num
from slacheck.messages import NC_, NPC_, MessageCode

__all__ = ["ExclusionSays"]


class ExclusionSays(MessageCode):
    """What the exclusion and failure-definition rules say."""

    SLA605_TITLE = NC_("SLA605.title", "Requests over a small input size are excluded.")
    SLA605_WHY = NPC_(
        "SLA605.why",
        "Requests over {limit} input token are excluded. An agent call carries the system prompt, "
        "tool definitions, history and tool results; after a few steps most calls exceed {limit} "
        "token and drop out of every term.",
        "Requests over {limit} input tokens are excluded. An agent call carries the system "
        "prompt, tool definitions, history and tool results; after a few steps most calls exceed "
        "{limit} tokens and drop out of every term.",
        count="limit",
    )
    SLA605_FIX = NC_(
        "SLA605.fix",
        "Raise exclusions.max_input_tokens to the model's context length (e.g. 128,000), or "
        "remove it.",
    )
    SLA606_TITLE = NC_(
        "SLA606.title",
        "Calls on downgraded service tiers are excluded, and the vendor decides the tier.",
    )
    SLA606_WHY = NC_(
        "SLA606.why",
        "Calls served on {tiers} are excluded, and the response's service tier is set by the "
        "vendor: at peak it can serve calls there and out of every term.",
    )
    SLA606_FIX = NC_(
        "SLA606.fix",
        "Exclude only calls the customer requested on those tiers (the request's "
        "service_tier), or remove the exclusion.",
    )
    SLA607_TITLE = NC_(
        "SLA607.title", "Timeouts or throttling below the limit do not count as failures."
    )
    SLA607_TIMEOUTS = NC_("SLA607.what.timeouts", "a call that times out")
    SLA607_THROTTLING = NC_("SLA607.what.throttling_below_limit", "a 429 under the rate limit")
    SLA607_WHY = NC_(
        "SLA607.why",
        "failures.{name} is false: {what} counts as served, so {target} % availability can be "
        "met while agent tasks stop.",
    )
    SLA607_FIX = NC_("SLA607.fix", "Set availability.failures.{name}: true.")


_AGENT_INPUT_TOKENS = 8000


@rule("SLA605", Severity.MEDIUM, title=ExclusionSays.SLA605_TITLE)
def low_input_token_exclusion(contract: Contract) -> Iterator[Hit]:
    """Requests over a small input size are excluded.

    An agent step resends the system prompt, the conversation so far and the tool results, so
    input grows step by step; below 8,000 tokens the exclusion removes most agent calls, and
    the slowest ones, from every term.
    """
    limit = contract.exclusions.max_input_tokens
    if limit is None or limit >= _AGENT_INPUT_TOKENS:
        return
    yield Hit(
        ("exclusions", "max_input_tokens"),
        ExclusionSays.SLA605_WHY(limit=num(limit)),
        ExclusionSays.SLA605_FIX(),
    )


@rule("SLA606", Severity.LOW, title=ExclusionSays.SLA606_TITLE)
def downgraded_tiers_excluded(contract: Contract) -> Iterator[Hit]:
    """Calls on downgraded service tiers are excluded, and the vendor decides the tier.

    If the vendor may serve a call on a lower tier (e.g. `flex`) at its discretion, excluding
    that tier lets it move the worst calls out of the SLA.
    """
    tiers = contract.exclusions.downgraded_service_tiers
    if not tiers:
        return
    yield Hit(
        ("exclusions", "downgraded_service_tiers"),
        ExclusionSays.SLA606_WHY(tiers=list(tiers)),
        ExclusionSays.SLA606_FIX(),
    )


@rule("SLA607", Severity.MEDIUM, title=ExclusionSays.SLA607_TITLE)
def failures_narrowed(contract: Contract) -> Iterator[Hit]:
    """Timeouts or throttling below the limit do not count as failures.

    For an agent a timeout or a 429 under the contracted rate is an outage: the task stops.
    Excluding them lets availability read high while tasks fail.
    """
    avail = contract.availability
    if avail is None:
        return
    f = avail.failures
    for name, counted, what in (
        ("timeouts", f.timeouts, ExclusionSays.SLA607_TIMEOUTS),
        ("throttling_below_limit", f.throttling_below_limit, ExclusionSays.SLA607_THROTTLING),
    ):
        if counted:
            continue
        yield Hit(
            ("availability", "failures", name),
            ExclusionSays.SLA607_WHY(name=name, what=what(), target=num(avail.target_percent)),
            ExclusionSays.SLA607_FIX(name=name),
        )
