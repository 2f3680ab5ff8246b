"""The field check's and the terminal's questions of the metering run, asked here so no command
builds a metering run of its own: the command's one metering run (``metering_run``), the
eight-item field check for a period, and whether any window of the effective period meets the
traces."""

from __future__ import annotations

from slacheck.contract.model import Contract, Window
from slacheck.match.fields import check_fields
from slacheck.match.items import FieldCheck
from slacheck.messages import Message
from slacheck.metering.context import EffectiveSays, Metering, contract_windows
from slacheck.trace.traces import Traces
from slacheck.windows import parse_period

__all__ = ["metering_run", "no_window", "prepare_fields"]


def metering_run(contract: Contract, traces: Traces, period: str | None = None) -> Metering:
    """The command's one metering run over ``traces``, restricted to ``period`` (``2026-07``,
    ``2026-Q3``) when given: the run the no-window notice (``no_window``) and the command's
    ``prepare_*`` call then share, so its tables (calls, quarter hours, peak minutes) are built
    once per command."""
    window = None if period is None else parse_period(period, contract.zone)
    return Metering(contract, traces, window)


def prepare_fields(contract: Contract, traces: Traces, *, period: str | None = None) -> FieldCheck:
    """The eight-item field check and the metering mismatches, on the traces of ``period``
    (``2026-07``, ``2026-Q3``) when given, else on all of them."""
    result = check_fields(contract, traces, metering_run(contract, traces, period))
    traces.verify_unchanged()  # no count of a file written while it was read
    return result


def no_window(run: Metering, period: str | None = None) -> Message | None:
    """What is said when no window of the effective period overlaps the traces (or ``period``,
    else the run's period), with both date ranges; None when one does. Asked of the command's
    metering run (``metering_run``): a run over all the traces answers for any ``period``, as
    the windows of a period are laid from the contract alone (``contract_windows``)."""
    if period is None:
        return run.no_window()
    span = parse_period(period, run.contract.zone)
    if any(contract_windows(run.contract, kind, span) for kind in Window):
        return None
    return EffectiveSays.NO_WINDOW(effective=run.effective_range(), traces=run.traces_range())
