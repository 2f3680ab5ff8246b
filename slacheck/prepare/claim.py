"""The credit-claim pack's inputs for one availability window, from one metering run.

The affected calls are exactly the calls the availability check counts as failed (in scope,
not excluded, in the window, failed under ``availability.failures``): the same metered-call
table (``metering.calls``), so the CSV's row count is the check's ``total − good``. Incidents
are runs of failed calls no more than ``INCIDENT_GAP_MINUTES`` apart.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection

from slacheck.checks.availability import tier_credit
from slacheck.contract.model import Contract
from slacheck.errors import UsageError
from slacheck.evaluation import run_checks
from slacheck.metering.context import CheckContext, Metering
from slacheck.prepare.evidence import affected_calls, affected_csv, incidents
from slacheck.render.claim import INCIDENT_GAP_MINUTES, ClaimPack
from slacheck.render.credit import check_claimed, credit_claim
from slacheck.trace.traces import Traces
from slacheck.windows import parse_period

__all__ = ["prepare_claim"]


def prepare_claim(
    contract: Contract,
    traces: Traces,
    *,
    period: str,
    issued: dt.date | None = None,
    claimed: Collection[str] = (),
    metering: Metering | None = None,
) -> ClaimPack:
    """The claim for the one availability window ``period`` names, its status as of
    ``issued`` (default: today in the contract's zone, read here, once); ``claimed``: the
    windows the customer says were claimed (``--claimed``); ``metering``: the command's metering
    run over ``period`` (``prepare.metering_run``), when it has one."""
    spec = contract.availability
    if spec is None:
        raise UsageError(
            "the contract has no availability term: only availability carries service credits"
        )
    if contract.credits is None:
        raise UsageError("the contract has no credits section: there is no credit to claim")
    window = parse_period(period, contract.zone)
    ctx = CheckContext(contract, traces, window) if metering is None else metering
    p = ctx.period
    if (
        ctx.traces is not traces
        or p is None
        or (p.start_us, p.end_us)
        != (
            window.start_us,
            window.end_us,
        )
    ):
        raise UsageError(f"the metering run given is not over these traces and {period}")
    windows = ctx.windows(spec.window)
    if len(windows) != 1:
        raise UsageError(
            f"--period {period} holds {len(windows)} availability windows; a claim is made for "
            "one: pass one month (or the one window the contract measures)"
        )
    w = windows[0]
    check_claimed(claimed, [w.label])
    (result,) = [r for r in run_checks(ctx, only=["availability"]).results if r.window == w.label]
    credits = contract.credits
    as_of = issued if issued is not None else dt.datetime.now(contract.zone).date()
    affected = affected_calls(ctx, windows)
    found = incidents(affected, INCIDENT_GAP_MINUTES * 60_000_000)
    listed, rows = affected_csv(affected, contract)
    traces.verify_unchanged()  # no claim on a file written while it was read
    return ClaimPack(
        contract=contract,
        window=w.label,
        result=result,
        # the credit and its status from the check's result, as the report computes them
        credit=credit_claim(contract, result, as_of=as_of, claimed=claimed),
        tier_percent=tier_credit(credits, result.observed) if result.observed is not None else 0.0,
        cap_percent=credits.cap_percent,
        deadline=ctx.claim_deadline(credits, w),
        incidents=found,
        affected_csv=listed,
        affected_rows=rows,
        sources=tuple((s.path, s.sha256) for s in traces.sources),
    )
