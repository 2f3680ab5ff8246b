"""Service credits: the credit owed per band of availability, and the monthly fee a credit is a
share of (so credits can be stated in money)."""

from __future__ import annotations

import itertools
from typing import Self

from pydantic import Field, model_validator

from slacheck.contract.base import FieldError, StrictModel


class CreditTier(StrictModel):
    from_percent: float = Field(ge=0, le=100, description="Availability at or above (inclusive).")
    to_percent: float = Field(gt=0, le=100, description="…and below (exclusive).")
    credit_percent: float = Field(gt=0, le=100, description="Credit, % of the monthly fee.")

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.to_percent <= self.from_percent:
            raise FieldError(("to_percent",), "to_percent must be above from_percent")
        return self


class Credits(StrictModel):
    tiers: list[CreditTier] = Field(min_length=1, description="Credit per availability band.")
    claim_deadline_days: int | None = Field(
        default=None,
        ge=1,
        le=3660,
        description="Days after the month within which a claim must be made.",
    )
    cap_percent: float | None = Field(
        default=None, gt=0, le=100, description="Most credit owed in one month."
    )
    sole_remedy: bool | None = Field(
        default=None,
        description="`true`: service credits are the Customer's sole and exclusive remedy for "
        "a missed service level; `false`: they leave its other rights and remedies intact. "
        "Unset: the review flags it.",
    )

    @model_validator(mode="after")
    def _tiers_tile(self) -> Self:
        order = sorted(range(len(self.tiers)), key=lambda i: self.tiers[i].from_percent)
        for lo_i, up_i in itertools.pairwise(order):
            lower, upper = self.tiers[lo_i], self.tiers[up_i]
            if upper.from_percent < lower.to_percent:
                raise FieldError(
                    ("tiers", up_i, "from_percent"),
                    f"credit tiers overlap: [{lower.from_percent}, {lower.to_percent}) and "
                    f"[{upper.from_percent}, {upper.to_percent}); make each tier start where "
                    "the one below ends",
                )
            if upper.from_percent > lower.to_percent:
                raise FieldError(
                    ("tiers", up_i, "from_percent"),
                    f"credit tiers leave a gap: availability in [{lower.to_percent}, "
                    f"{upper.from_percent}) earns no credit; extend a tier to cover it",
                )
        return self


class Fees(StrictModel):
    """The fee a credit is a share of: its tier's percent, to the minor unit, half a unit up."""

    monthly: float = Field(gt=0, le=1e12, description="Fee for one month of service.")
    currency: str = Field(
        pattern=r"^[A-Z]{3}$",
        description=(
            "ISO 4217 currency code of the fee, e.g. `CNY`, `USD`, `EUR`; credits are stated "
            "to its minor unit (cents; whole yen for `JPY`, three decimals for `KWD`)."
        ),
    )
