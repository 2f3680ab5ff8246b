"""What the parties agree beyond the figures: how notices and claims are given, which document
prevails, and what an undecided verdict (indeterminate, no data) means for each of them.

Every field is optional: the clause draft states what the contract says and nothing else, and
the review flags what it leaves open (SLA702, SLA704, SLA705).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from slacheck.contract.base import StrictModel


class IndeterminateMeans(StrEnum):
    """What a window whose verdict is ``indeterminate`` means for the parties."""

    #: counted as met: no credit is owed for the window
    MET = "met"
    #: counted as breached: the credit a breach earns is owed
    BREACHED = "breached"
    #: neither, until the parties review the window's evidence together
    REVIEW = "review"


class NoDataMeans(StrEnum):
    """What a window whose verdict is ``no data`` means for the parties."""

    MET = "met"
    BREACHED = "breached"
    #: the term is not assessed for the window: neither met nor breached, no credit owed
    NOT_ASSESSED = "not_assessed"


class Notices(StrictModel):
    """How the parties give each other notice, and where a claim for a service credit goes."""

    channel: str = Field(
        min_length=1,
        description="How notices between the parties are given, as the signed text says it "
        "(e.g. `by email to sla@vendor.example and to ops@customer.example`).",
    )
    claims: str | None = Field(
        default=None,
        min_length=1,
        description="Where a claim for a service credit is sent, when not by the notice "
        "channel (e.g. `through the Vendor's support portal, category “SLA claim”`). Unset: "
        "claims go by the notice channel.",
    )


class VerdictMeaning(StrictModel):
    """What a verdict the evidence cannot settle means for each party."""

    indeterminate: IndeterminateMeans | None = Field(
        default=None,
        description="A window whose verdict is `indeterminate` (the evidence bounds the "
        "figure on both sides of the threshold): `met` (no credit is owed), `breached` (the "
        "credit a breach earns is owed) or `review` (neither, until the parties review the "
        "window's evidence; a credit is owed only if they then agree the term was breached). "
        "Unset: the review flags it.",
    )
    no_data: NoDataMeans | None = Field(
        default=None,
        description="A window whose verdict is `no data` (nothing in scope, or fewer units "
        "than the term's minimum sample): `met`, `breached`, or `not_assessed` (neither met "
        "nor breached; no credit is owed). Unset: the review flags it.",
    )
