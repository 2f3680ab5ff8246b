"""The credit-claim pack as rendered: for one availability window, the computation, the
incidents, every affected call as CSV with its SHA-256, the credit in money, the deadline, and
the claim letter. ``slacheck.prepare.claim`` computes the pack; this module only words it.

Only availability carries credits in the contract model; latency terms have none.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any

from slacheck.contract.model import Contract
from slacheck.messages import NC_, Message, MessageCode, Param
from slacheck.render.credit import ClaimStatus, CreditClaim
from slacheck.render.details import AvailabilityDetails
from slacheck.verdict import TermResult
from slacheck.windows import from_us

__all__ = [
    "AFFECTED_COLUMNS",
    "INCIDENT_GAP_MINUTES",
    "ClaimPack",
    "ClaimSays",
    "Incident",
    "render_letter",
]

#: failed calls further apart than this start a new incident
INCIDENT_GAP_MINUTES = 5
AFFECTED_COLUMNS = (
    "time_utc",
    "time_local",
    "task_id",
    "span_id",
    "region",
    "provider",
    "model",
    "endpoint",
    "status",
    "http_status",
)


class ClaimSays(MessageCode):
    """What `slacheck claim` says on the terminal."""

    STATUS = NC_("claim.status_line", "Claim status for {window} as of {as_of}: {status}.")
    DUE = NC_(
        "claim.due",
        "A credit of {percent} % of the monthly fee is due for {window} (availability {observed} "
        "%, target {target} %); claim by {deadline}.",
    )
    DUE_NO_DEADLINE = NC_(
        "claim.due_no_deadline",
        "A credit of {percent} % of the monthly fee is due for {window} (availability {observed} "
        "%, target {target} %); the contract states no claim deadline.",
    )
    EXPIRED = NC_(
        "claim.expired",
        "A credit of {percent} % of the monthly fee was earned for {window} (availability "
        "{observed} %, target {target} %), but its claim deadline, {deadline}, passed before "
        "{as_of}: the claim has expired.",
    )
    CLAIMED = NC_(
        "claim.claimed",
        "The credit of {percent} % of the monthly fee for {window} (availability {observed} %, "
        "target {target} %) has been claimed (--claimed); nothing more is due.",
    )
    NONE = NC_(
        "claim.none",
        "No credit is due for {window}: availability {observed} % earns no credit tier.",
    )
    NO_DATA = NC_("claim.no_data", "No claim can be made for {window}: {reason}.")


@dataclass(frozen=True, slots=True)
class Incident:
    """A run of failed calls: first and last failure, how many, and where."""

    start_us: int
    end_us: int
    calls: int
    regions: tuple[str, ...]
    models: tuple[str, ...]
    endpoints: tuple[str, ...]

    def to_dict(self, zone: Any) -> dict[str, Any]:
        return {
            "start_utc": _iso(self.start_us, dt.UTC),
            "end_utc": _iso(self.end_us, dt.UTC),
            "start_local": _iso(self.start_us, zone),
            "end_local": _iso(self.end_us, zone),
            "failed_calls": self.calls,
            "regions": list(self.regions),
            "models": list(self.models),
            "endpoints": list(self.endpoints),
        }


@dataclass(frozen=True, slots=True)
class ClaimPack:
    """Everything a credit claim for one window needs."""

    contract: Contract
    window: str
    result: TermResult
    #: the credit owed (the tier's, capped) and its claim status as of the issue date: the
    #: one status the report, this pack and the terminal show (``render.credit``)
    credit: CreditClaim
    #: the credit of the tier the availability falls in, before the cap
    tier_percent: float
    cap_percent: float | None
    deadline: dt.date | None
    incidents: tuple[Incident, ...]
    affected_csv: bytes
    affected_rows: int
    sources: tuple[tuple[str, str], ...] = field(default=())  # (file name, sha256)

    @property
    def credit_percent(self) -> float:
        return self.credit.credit_percent

    @property
    def amount(self) -> float | None:
        return self.credit.amount

    @property
    def currency(self) -> str | None:
        return self.credit.currency

    @property
    def earned(self) -> bool:
        """A credit tier is reached (whatever its claim status)."""
        return self.credit.earned

    @property
    def due(self) -> bool:
        """The credit is still to be claimed: earned, not claimed, its deadline not passed."""
        return self.credit.status is ClaimStatus.DUE

    @property
    def affected_sha256(self) -> str:
        return hashlib.sha256(self.affected_csv).hexdigest()

    @property
    def status_line(self) -> Message:
        k = self.credit
        return ClaimSays.STATUS(window=self.window, as_of=k.as_of.isoformat(), status=k.word)

    @property
    def message(self) -> Message:
        r, k = self.result, self.credit
        if r.observed is None:
            reason = r.notes[0] if r.notes else "no data"
            return ClaimSays.NO_DATA(window=self.window, reason=reason)
        if k.status is ClaimStatus.NONE:
            return ClaimSays.NONE(window=self.window, observed=round(r.observed, 4))
        target = self.contract.availability.target_percent if self.contract.availability else None
        figures: dict[str, Param] = {
            "percent": self.credit_percent,
            "window": self.window,
            "observed": round(r.observed, 4),
            "target": target,
        }
        deadline = k.claim_by.isoformat() if k.claim_by else "—"
        if k.status is ClaimStatus.CLAIMED:
            return ClaimSays.CLAIMED(**figures)
        if k.status is ClaimStatus.EXPIRED:
            return ClaimSays.EXPIRED(**figures, deadline=deadline, as_of=k.as_of.isoformat())
        if k.claim_by is None:
            return ClaimSays.DUE_NO_DEADLINE(**figures)
        return ClaimSays.DUE(**figures, deadline=deadline)

    def to_dict(self) -> dict[str, Any]:
        r, c = self.result, self.contract
        zone = c.zone
        return {
            "contract": c.contract.id,
            "vendor": c.contract.vendor,
            "customer": c.contract.customer,
            "window": self.window,
            "time_zone": c.contract.time_zone or "UTC",
            "availability": {
                "verdict": str(r.verdict),
                "observed_percent": r.observed,
                "target_percent": c.availability.target_percent if c.availability else None,
                "numerator_good_calls": r.good,
                "denominator_counted_calls": r.total,
                "failed_calls": r.total - r.good,
                "excluded_calls": dict(r.excluded),
                # named, whatever the reading: counted as the vendor's, left out, or read both
                # ways (``undecided``: in neither count the claim rests on)
                "unclassified_failures": {
                    "calls": AvailabilityDetails.of(r).unclassified_calls,
                    "undecided": AvailabilityDetails.of(r).undecided_calls,
                    "reading": str(c.readings.unclassified_failures),
                },
                "cache_hit_calls": AvailabilityDetails.of(r).cache_hit_calls,
                "criterion": r.criterion,
                "failures": c.availability.failures.model_dump() if c.availability else {},
            },
            "credit": {
                # the claim status as of the issue date (``render.credit``): due, expired,
                # claimed or none; ``due``: still to be claimed; ``earned``: a tier is reached
                **self.credit.to_dict(),
                "due": self.due,
                "earned": self.earned,
                "percent": self.credit_percent,
                "tier_percent": self.tier_percent,
                "cap_percent": self.cap_percent,
                "monthly_fee": c.fees.monthly if c.fees else None,
                "amount": self.amount,
                "currency": self.currency,
                "deadline": self.deadline.isoformat() if self.deadline else None,
                "tiers": [t.model_dump(mode="json") for t in c.credits.tiers] if c.credits else [],
            },
            "incidents": [i.to_dict(zone) for i in self.incidents],
            "affected_calls": {"rows": self.affected_rows, "sha256": self.affected_sha256},
            "sources": [{"file": f, "sha256": h} for f, h in self.sources],
        }


def _iso(us: int, zone: Any) -> str:
    return from_us(us, zone).isoformat(timespec="milliseconds")


def render_letter(pack: ClaimPack, lang: str) -> str:
    """The claim letter (Markdown) in ``lang``: one template, ``claim.md.j2``, its prose
    translated from the message catalogue and its figures formatted for the language."""
    from zoneinfo import ZoneInfo

    from jinja2 import Environment, PackageLoader, StrictUndefined

    from slacheck.messages import render
    from slacheck.render.documents import install_translations, money
    from slacheck.render.format import Formatter, check_lang
    from slacheck.textsafe import visible

    language = check_lang(lang)
    env = Environment(
        loader=PackageLoader("slacheck", "templates"),
        autoescape=False,  # Markdown, not HTML: trace text goes through mdcell
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    install_translations(env, language)
    env.filters["mdcell"] = _mdcell
    fmt = Formatter(language, ZoneInfo(pack.contract.contract.time_zone or "UTC"))
    template = env.get_template("claim.md.j2")
    text = template.render(
        pack=pack,
        data=pack.to_dict(),
        say=lambda m: render(m, language),
        count=fmt.count,
        pct=fmt.pct,
        pct4=lambda v: fmt.pct(v, 4),
        money=lambda amount, currency: money(amount, currency, language),
        listing=fmt.listing,
        exclusion=lambda r: fmt.name("exclusion", r),
        sp="" if language == "zh" else " ",
    )
    return visible(text)  # one text-safety rule (``textsafe``)


def _mdcell(value: Any) -> str:
    """Trace text inside a Markdown table cell or code span: no pipe, backtick or line break."""
    return " ".join(str(value).replace("|", "\\|").replace("`", "'").split())
