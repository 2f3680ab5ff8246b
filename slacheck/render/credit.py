"""One claim status per availability window's service credit, as of a document's issue date.

Computed here, once, from the window's result (its credit and claim deadline, as the
availability check wrote them), the issue date and the windows the customer says were already
claimed (``--claimed``). The report's summary and claims table, the claim pack (``claim.json``
and the letters) and the terminal all show this status; none decides it again.

- ``due``: a credit is earned, not claimed, and its claim deadline (if the contract states one)
  has not passed on the issue date;
- ``expired``: a credit is earned, not claimed, and the deadline passed before the issue date;
- ``claimed``: a credit is earned and the customer says it was claimed;
- ``none``: no credit is earned (no tier reached, or no figure to reach one with).

Engine-free: the prepare stage and the renderers both import it.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from slacheck.contract.base import as_written
from slacheck.contract.model import Contract
from slacheck.errors import UsageError
from slacheck.messages import NC_, Message, MessageCode
from slacheck.render.details import AvailabilityDetails
from slacheck.verdict import TermKind, TermResult

__all__ = [
    "ClaimStatus",
    "CreditClaim",
    "StatusSays",
    "check_claimed",
    "credit_amount",
    "credit_claim",
    "credit_claims",
    "minor_units",
]


class ClaimStatus(StrEnum):
    DUE = "due"
    EXPIRED = "expired"
    CLAIMED = "claimed"
    NONE = "none"


class StatusSays(MessageCode):
    """A claim status in one word, the same in every document and on the terminal."""

    DUE = NC_("claim.status.due", "due")
    EXPIRED = NC_("claim.status.expired", "expired")
    CLAIMED = NC_("claim.status.claimed", "claimed")
    NONE = NC_("claim.status.none", "no credit")


_WORDS = {
    ClaimStatus.DUE: StatusSays.DUE,
    ClaimStatus.EXPIRED: StatusSays.EXPIRED,
    ClaimStatus.CLAIMED: StatusSays.CLAIMED,
    ClaimStatus.NONE: StatusSays.NONE,
}


@dataclass(frozen=True, slots=True)
class CreditClaim:
    """One window's service credit and its claim status as of ``as_of``."""

    window: str
    status: ClaimStatus
    credit_percent: float  # what is owed: the tier's credit, capped; 0 when none is earned
    amount: float | None  # in the contract's currency, when the contract states its fee
    currency: str | None
    claim_by: dt.date | None  # the contract's deadline for this window; None: none stated
    as_of: dt.date  # the document's issue date

    @property
    def earned(self) -> bool:
        return self.credit_percent > 0

    @property
    def word(self) -> Message:
        """The status in one word (a message: worded in the reader's language)."""
        return _WORDS[self.status]()

    def to_dict(self) -> dict[str, object]:
        return {
            "status": str(self.status),
            "as_of": self.as_of.isoformat(),
            "claim_by": None if self.claim_by is None else self.claim_by.isoformat(),
        }


def credit_claim(
    contract: Contract,
    result: TermResult,
    *,
    as_of: dt.date,
    claimed: Collection[str] = (),
) -> CreditClaim:
    """The claim status of an availability result's credit as of ``as_of``; ``claimed``: the
    windows the customer says were claimed."""
    figures = AvailabilityDetails.of(result)
    pct = float(figures.credit_percent or 0.0)
    deadline = dt.date.fromisoformat(figures.claim_deadline) if figures.claim_deadline else None
    if pct <= 0:
        status = ClaimStatus.NONE
    elif result.window in claimed:
        status = ClaimStatus.CLAIMED
    elif deadline is not None and as_of > deadline:
        status = ClaimStatus.EXPIRED
    else:
        status = ClaimStatus.DUE
    fees = contract.fees
    return CreditClaim(
        window=result.window,
        status=status,
        credit_percent=pct,
        amount=credit_amount(fees.monthly, pct, fees.currency)
        if fees is not None and pct > 0
        else None,
        currency=fees.currency if fees is not None else None,
        claim_by=deadline,
        as_of=as_of,
    )


def minor_units(currency: str | None) -> int:
    """The decimals of ``currency``'s minor unit (ISO 4217, from Babel's data): 2 for CNY, USD
    and EUR, 0 for JPY and KRW, 3 for KWD and BHD; 2 for a code Babel does not know."""
    from babel.numbers import get_currency_precision

    return int(get_currency_precision(str(currency or "").upper() or "XXX"))


def credit_amount(monthly: float, percent: float, currency: str | None = None) -> float:
    """``percent`` % of the ``monthly`` fee to the currency's minor unit (the cent; the whole
    yen for JPY, the fils for KWD: ``minor_units``), a half unit rounded up, computed on the
    figures as the contract writes them. As doubles the product rounds first: 50 % of 0.43 is
    0.215, but 0.43 × 50 / 100 is 0.21499999999999997, which rounded to 0.21; and 25 % of
    1,234.50 is 308.625 exactly, which Python's round takes to the even 308.62. In yen 12.5 %
    of ¥1,234 is ¥154.25, owed as ¥154: no invoice states a fraction of a yen."""
    unit = 10 ** minor_units(currency)
    units = as_written(monthly) * as_written(percent) * unit / 100
    return float(math.floor(units + Fraction(1, 2)) / unit)


def credit_claims(
    contract: Contract,
    results: Iterable[TermResult],
    *,
    as_of: dt.date,
    claimed: Collection[str] = (),
) -> list[CreditClaim]:
    """Every availability window's claim status, by window (``none`` ones included)."""
    out = [
        credit_claim(contract, r, as_of=as_of, claimed=claimed)
        for r in results
        if str(r.kind) == str(TermKind.AVAILABILITY)
    ]
    return sorted(out, key=lambda c: c.window)


def check_claimed(claimed: Collection[str], windows: Collection[str]) -> None:
    """A usage error when ``--claimed`` names a window that is not one of ``windows``."""
    unknown = sorted(set(claimed) - set(windows))
    if unknown:
        known = ", ".join(sorted(windows)) or "none"
        raise UsageError(
            f"--claimed {', '.join(unknown)}: not an availability window of this period "
            f"(windows: {known})"
        )
