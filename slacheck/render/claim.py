"""The credit-claim pack: for one availability window, the computation, the incidents, every
affected call as CSV with its SHA-256, the credit in money, the deadline, and a claim letter.

The affected calls are exactly the calls the availability check counts as failed (in scope,
not excluded, in the window, failed under ``availability.failures``): the same table, the same
expressions (``checks.availability.failed_expr``), so the CSV's row count is the check's
``total − good``. Incidents are runs of failed calls no more than ``INCIDENT_GAP_MINUTES``
apart. Only availability carries credits in the contract model; latency terms have none.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
from dataclasses import dataclass, field
from typing import Any

from slacheck.checks.availability import credit_for, failed_expr
from slacheck.contract.model import Contract
from slacheck.errors import UsageError
from slacheck.evaluate import run_checks
from slacheck.messages import NC_, Message, MessageCode
from slacheck.metering.context import CheckContext
from slacheck.metering.windowed import scoped_calls
from slacheck.trace.traces import Traces
from slacheck.verdict import TermResult
from slacheck.windows import from_us, parse_period

__all__ = [
    "AFFECTED_COLUMNS",
    "INCIDENT_GAP_MINUTES",
    "ClaimPack",
    "ClaimSays",
    "Incident",
    "prepare_claim",
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

    DUE = NC_(
        "claim.due",
        "A credit of {percent} % of the monthly fee is due for {window} (availability {observed} "
        "%, target {target} %); claim by {deadline}.",
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
    credit_percent: float
    cap_percent: float | None
    amount: float | None
    currency: str | None
    deadline: dt.date | None
    incidents: tuple[Incident, ...]
    affected_csv: bytes
    affected_rows: int
    sources: tuple[tuple[str, str], ...] = field(default=())  # (file name, sha256)

    @property
    def due(self) -> bool:
        return self.credit_percent > 0

    @property
    def affected_sha256(self) -> str:
        return hashlib.sha256(self.affected_csv).hexdigest()

    @property
    def message(self) -> Message:
        r = self.result
        if r.observed is None:
            reason = r.notes[0] if r.notes else "no data"
            return ClaimSays.NO_DATA(window=self.window, reason=reason)
        if not self.due:
            return ClaimSays.NONE(window=self.window, observed=round(r.observed, 4))
        target = self.contract.availability.target_percent if self.contract.availability else None
        return ClaimSays.DUE(
            percent=self.credit_percent,
            window=self.window,
            observed=round(r.observed, 4),
            target=target,
            deadline=self.deadline.isoformat() if self.deadline else "—",
        )

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
                    "calls": int(r.details.get("unclassified_calls") or 0),
                    "undecided": int(r.details.get("undecided_calls") or 0),
                    "reading": str(c.readings.unclassified_failures),
                },
                "cache_hit_calls": int(r.details.get("cache_hit_calls") or 0),
                "criterion": r.criterion,
                "failures": c.availability.failures.model_dump() if c.availability else {},
            },
            "credit": {
                "due": self.due,
                "percent": self.credit_percent,
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


def prepare_claim(contract: Contract, traces: Traces, *, period: str) -> ClaimPack:
    """The claim for the one availability window ``period`` names."""
    spec = contract.availability
    if spec is None:
        raise UsageError(
            "the contract has no availability term: only availability carries service credits"
        )
    if contract.credits is None:
        raise UsageError("the contract has no credits section: there is no credit to claim")
    window = parse_period(period, contract.zone)
    ctx = CheckContext(contract, traces, window)
    windows = ctx.windows(spec.window)
    if len(windows) != 1:
        raise UsageError(
            f"--period {period} holds {len(windows)} availability windows; a claim is made for "
            "one: pass one month (or the one window the contract measures)"
        )
    w = windows[0]
    (result,) = [r for r in run_checks(ctx, only=["availability"]).results if r.window == w.label]
    credits = contract.credits
    pct = credit_for(credits, result.observed) if result.observed is not None else 0.0
    fees = contract.fees
    rows = _affected(ctx, windows)
    return ClaimPack(
        contract=contract,
        window=w.label,
        result=result,
        credit_percent=pct,
        cap_percent=credits.cap_percent,
        amount=round(fees.monthly * pct / 100.0, 2) if fees is not None else None,
        currency=fees.currency if fees is not None else None,
        deadline=ctx.claim_deadline(credits, w),
        incidents=_incidents(rows),
        affected_csv=_csv(rows, contract),
        affected_rows=len(rows),
        sources=tuple((s.path, s.sha256) for s in traces.sources),
    )


def _affected(ctx: CheckContext, windows: Any) -> list[dict[str, Any]]:
    """The calls the availability check counts as failed, oldest first."""
    c = scoped_calls(ctx, windows)
    c = c.mutate(_ex=ctx.exclusion_reason(c), _failed=failed_expr(ctx, c))
    c = c.filter(c._ex.isnull() & c._failed)
    cols = ["start_us", "task_id", "span_id", "region_key", "provider", "request_model"]
    cols += ["endpoint", "status", "http_status"]
    rows: list[dict[str, Any]] = (
        c.select(*cols).order_by(["start_us", "task_id", "span_id"]).to_pyarrow().to_pylist()
    )
    return rows


def _incidents(rows: list[dict[str, Any]]) -> tuple[Incident, ...]:
    gap = INCIDENT_GAP_MINUTES * 60_000_000
    runs: list[list[dict[str, Any]]] = []
    for r in rows:
        if runs and int(r["start_us"]) - int(runs[-1][-1]["start_us"]) <= gap:
            runs[-1].append(r)
        else:
            runs.append([r])

    def labels(run: list[dict[str, Any]], key: str) -> tuple[str, ...]:
        return tuple(sorted({str(r[key]) for r in run if r[key] is not None}))

    return tuple(
        Incident(
            int(run[0]["start_us"]),
            int(run[-1]["start_us"]),
            len(run),
            labels(run, "region_key"),
            labels(run, "request_model"),
            labels(run, "endpoint"),
        )
        for run in runs
    )


def _iso(us: int, zone: Any) -> str:
    return from_us(us, zone).isoformat(timespec="milliseconds")


def _csv(rows: list[dict[str, Any]], contract: Contract) -> bytes:
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(AFFECTED_COLUMNS)
    for r in rows:
        us = int(r["start_us"])
        http = "" if r["http_status"] is None else str(int(r["http_status"]))
        out.writerow(
            (
                _iso(us, dt.UTC),
                _iso(us, contract.zone),
                *(
                    _cell(r[k])
                    for k in ("task_id", "span_id", "region_key", "provider", "request_model")
                ),
                _cell(r["endpoint"]),
                _cell(r["status"]),
                http,
            )
        )
    return buf.getvalue().encode("utf-8")


def _cell(value: Any) -> str:
    """Trace text as a CSV cell a spreadsheet will not run as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


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
