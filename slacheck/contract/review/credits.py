"""Availability and credits (SLA601–SLA604, SLA608): what a missed month is worth, and until
when."""

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import Contract
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.contract.review.wording import num, quote_minutes
from slacheck.messages import NC_, NPC_, MessageCode

__all__ = ["CreditSays"]

_MONTH_MINUTES = 30 * 24 * 60


class CreditSays(MessageCode):
    """What the availability-target and credit rules say."""

    SLA601_TITLE = NC_("SLA601.title", "Availability just under the target earns no credit.")
    SLA601_WHY = NPC_(
        "SLA601.why",
        "The target is {target} % but the highest credit tier ends at {top} %: a month at "
        "{between} % misses the target and earns nothing. The gap is {gap} point, {downtime} of "
        "full downtime in a 30-day month.",
        "The target is {target} % but the highest credit tier ends at {top} %: a month at "
        "{between} % misses the target and earns nothing. The gap is {gap} points, {downtime} of "
        "full downtime in a 30-day month.",
        count="gap",
    )
    SLA601_FIX = NC_("SLA601.fix", "Make the top tier run up to {target} (to_percent: {target}).")
    SLA602_TITLE = NC_("SLA602.title", "The lowest credit tier does not reach 0 %.")
    SLA602_WHY = NC_(
        "SLA602.why",
        "The lowest tier starts at {low} %: a month below that earns no credit, less than the "
        "{credit} % owed for a better month.",
    )
    SLA602_FIX = NC_(
        "SLA602.fix",
        "Set the lowest tier's from_percent to 0 (e.g. 0–{low} % → 100 %).",
    )
    SLA603_TITLE = NC_(
        "SLA603.title", "Credits without an availability target, or a target without credits."
    )
    SLA603_WHY_NO_TARGET = NPC_(
        "SLA603.why.no_target",
        "credits has {tiers} tier but no availability section defines the target, window and what "
        "counts as a failed call, so no tier can be computed.",
        "credits has {tiers} tiers but no availability section defines the target, window and "
        "what counts as a failed call, so no tier can be computed.",
        count="tiers",
    )
    SLA603_FIX_NO_TARGET = NC_(
        "SLA603.fix.no_target",
        "Add availability with target_percent, window: calendar_month, failures and min_samples.",
    )
    SLA603_WHY_NO_CREDITS = NC_(
        "SLA603.why.no_credits",
        "availability promises {target} % but no credits section says what a missed month is "
        "worth: the target has no remedy.",
    )
    SLA603_FIX_NO_CREDITS = NC_(
        "SLA603.fix.no_credits",
        "Add credits.tiers, the top one ending at {target} (e.g. < target → 10 %, < 99.0 → "
        "25 %, < 95.0 → 100 %), and claim_deadline_days.",
    )
    SLA604_TITLE = NC_("SLA604.title", "No claim deadline for service credits.")
    SLA604_WHY = NC_(
        "SLA604.why",
        "Credits of up to {most} % of the monthly fee have no claim deadline in the contract, "
        "so the vendor's standard terms (often short) decide when a claim is too late.",
    )
    SLA604_FIX = NC_(
        "SLA604.fix",
        "Add credits.claim_deadline_days (e.g. 30), counted from the end of the month.",
    )
    SLA608_TITLE = NC_("SLA608.title", "A credit tier reaches above the availability target.")
    SLA608_WHY = NC_(
        "SLA608.why",
        "The target is {target} % but a tier runs from {low} % to {high} %: a month at {met} % "
        "meets the target, yet earns a {credit} % credit, so the credit no longer says the "
        "target was missed.",
    )
    SLA608_FIX = NC_(
        "SLA608.fix",
        "End every tier at or below the target (to_percent: {target} for the top one).",
    )


@rule("SLA601", Severity.HIGH, title=CreditSays.SLA601_TITLE)
def credit_gap_below_target(contract: Contract) -> Iterator[Hit]:
    """Availability just under the target earns no credit.

    The highest credit tier should end exactly at the availability target. If it ends lower,
    a month that misses the target by less than the gap is a breach that costs the vendor
    nothing.
    """
    avail, credits = contract.availability, contract.credits
    if avail is None or credits is None:
        return
    top_i = max(range(len(credits.tiers)), key=lambda i: credits.tiers[i].to_percent)
    top = credits.tiers[top_i].to_percent
    target = avail.target_percent
    if top >= target:
        return
    gap = target - top
    yield Hit(
        ("credits", "tiers", top_i, "to_percent"),
        CreditSays.SLA601_WHY(
            target=num(target),
            top=num(top),
            between=num(round((top + target) / 2, 4)),
            gap=num(round(gap, 4)),
            downtime=quote_minutes(gap / 100 * _MONTH_MINUTES),
        ),
        CreditSays.SLA601_FIX(target=num(target)),
    )


@rule("SLA602", Severity.LOW, title=CreditSays.SLA602_TITLE)
def lowest_tier_above_zero(contract: Contract) -> Iterator[Hit]:
    """The lowest credit tier does not reach 0 %.

    Availability below the lowest tier earns no credit at all: the worse the month, the less
    is owed.
    """
    credits = contract.credits
    if credits is None:
        return
    low_i = min(range(len(credits.tiers)), key=lambda i: credits.tiers[i].from_percent)
    low = credits.tiers[low_i]
    if low.from_percent <= 0:
        return
    yield Hit(
        ("credits", "tiers", low_i, "from_percent"),
        CreditSays.SLA602_WHY(low=num(low.from_percent), credit=num(low.credit_percent)),
        CreditSays.SLA602_FIX(low=num(low.from_percent)),
    )


@rule("SLA603", Severity.MEDIUM, title=CreditSays.SLA603_TITLE)
def credits_availability_mismatch(contract: Contract) -> Iterator[Hit]:
    """Credits without an availability target, or a target without credits.

    Credit tiers are bands of monthly availability; without a target (and its failure
    definition) nobody can compute them. A target without credits has no remedy.
    """
    avail, credits = contract.availability, contract.credits
    if credits is not None and avail is None:
        yield Hit(
            ("availability",),
            CreditSays.SLA603_WHY_NO_TARGET(tiers=len(credits.tiers)),
            CreditSays.SLA603_FIX_NO_TARGET(),
        )
    elif avail is not None and credits is None:
        target = num(avail.target_percent)
        yield Hit(
            ("credits",),
            CreditSays.SLA603_WHY_NO_CREDITS(target=target),
            CreditSays.SLA603_FIX_NO_CREDITS(target=target),
        )


@rule("SLA604", Severity.LOW, title=CreditSays.SLA604_TITLE)
def claim_deadline_missing(contract: Contract) -> Iterator[Hit]:
    """No claim deadline for service credits.

    Without `claim_deadline_days`, the vendor's standard terms decide how long the customer has
    to claim, and a missed deadline forfeits the credit.
    """
    credits = contract.credits
    if credits is None or credits.claim_deadline_days is not None:
        return
    most = max(t.credit_percent for t in credits.tiers)
    yield Hit(
        ("credits", "claim_deadline_days"),
        CreditSays.SLA604_WHY(most=num(most)),
        CreditSays.SLA604_FIX(),
    )


@rule("SLA608", Severity.MEDIUM, title=CreditSays.SLA608_TITLE)
def credit_tier_above_target(contract: Contract) -> Iterator[Hit]:
    """A credit tier reaches above the availability target.

    A tier's band is [from_percent, to_percent): one that ends above the target pays a credit
    for a month that met it, so a met verdict and a credit are both true of the same month.
    """
    avail, credits = contract.availability, contract.credits
    if avail is None or credits is None:
        return
    target = avail.target_percent
    for i, tier in enumerate(credits.tiers):
        if tier.to_percent <= target:
            continue
        met = max(target, tier.from_percent)
        yield Hit(
            ("credits", "tiers", i, "to_percent"),
            CreditSays.SLA608_WHY(
                target=num(target),
                low=num(tier.from_percent),
                high=num(tier.to_percent),
                met=num(met),
                credit=num(tier.credit_percent),
            ),
            CreditSays.SLA608_FIX(target=num(target)),
        )
