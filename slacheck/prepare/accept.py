"""The acceptance document's inputs: the test windows with the traffic each holds, and with
traces the field check, all from one metering run."""

from __future__ import annotations

from pathlib import Path

from slacheck.contract.model import Contract
from slacheck.errors import UsageError
from slacheck.match.fields import check_fields
from slacheck.metering.context import Metering, contract_windows
from slacheck.metering.derive import scoped
from slacheck.metering.peak import MINUTE_US, minute_expr, peak_minutes
from slacheck.render.inputs import AcceptInputs, AcceptWindow, acceptance_window_kind
from slacheck.trace.traces import Traces
from slacheck.windows import CalendarWindow, parse_period

__all__ = ["prepare_accept"]


def prepare_accept(
    contract: Contract,
    traces: Traces | None,
    *,
    contract_file: Path | None = None,
    period: str | None = None,
    metering: Metering | None = None,
) -> AcceptInputs:
    """The field check (with traces) and the test windows: those of ``period`` when given
    (``--period 2026-Q3``), else those the traces cover; each with the traffic it holds.

    ``metering``: the command's metering run over all the traces (``prepare.metering_run``
    without a period), when it has one; else one is made here. The field check asks of all
    the traces given, and a window's traffic is the same whichever period the run covers, so
    one run serves both."""
    kind = acceptance_window_kind(contract)
    span = parse_period(period, contract.zone) if period is not None else None
    if traces is None:
        laid = contract_windows(contract, kind, span)
        windows = tuple(AcceptWindow(w.label, w.start_us, w.end_us - 1, w.clipped) for w in laid)
        return AcceptInputs(contract, contract_file=contract_file, period=period, windows=windows)
    ctx = Metering(contract, traces) if metering is None else metering
    if ctx.traces is not traces or ctx.period is not None:
        raise UsageError("the metering run given is not over all of these traces")
    laid = contract_windows(contract, kind, span) if span is not None else ctx.windows(kind)
    inputs = AcceptInputs(
        contract,
        # the field check asks of all the traces given (its own rule), on the same calls
        check_fields(contract, traces, ctx),
        traces.sources,
        traces.quality,
        contract_file,
        period,
        tuple(_window_traffic(ctx, w) for w in laid),
    )
    traces.verify_unchanged()  # no count of a file written while it was read
    return inputs


def _window_traffic(ctx: Metering, w: CalendarWindow) -> AcceptWindow:
    c = ctx.calls
    c = c.filter(scoped(c, ctx.contract) & (c.start_us >= w.start_us) & (c.start_us < w.end_us))
    row = c.aggregate(calls=c.count(), tasks=c.task_id.nunique()).execute().iloc[0]
    per_minute = c.group_by(_m=minute_expr(c.start_us)).aggregate(n=c.count())
    busiest = per_minute.aggregate(top=per_minute.n.max()).execute().iloc[0]["top"]
    pm = peak_minutes(ctx)
    peaks: int | None = None
    if pm is not None:
        pm = pm.filter((pm.minute * MINUTE_US >= w.start_us) & (pm.minute * MINUTE_US < w.end_us))
        peaks = int(pm.count().execute())
    return AcceptWindow(
        w.label,
        w.start_us,
        w.end_us - 1,
        w.clipped,
        int(row["calls"]),
        int(row["tasks"] or 0),
        None if busiest is None or busiest != busiest else int(busiest),
        peaks,
    )
