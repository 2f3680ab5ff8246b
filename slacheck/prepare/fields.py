"""The field check's and the terminal's questions of the metering run, asked here so no command
builds a metering run of its own: the eight-item field check for a period, and whether any
window of the effective period meets the traces."""

from __future__ import annotations

from slacheck.contract.model import Contract
from slacheck.match.fields import check_fields
from slacheck.match.items import FieldCheck
from slacheck.messages import Message
from slacheck.metering.context import Metering
from slacheck.trace.traces import Traces
from slacheck.windows import parse_period

__all__ = ["no_window", "prepare_fields"]


def prepare_fields(contract: Contract, traces: Traces, *, period: str | None = None) -> FieldCheck:
    """The eight-item field check and the metering mismatches, on the traces of ``period``
    (``2026-07``, ``2026-Q3``) when given, else on all of them."""
    window = None if period is None else parse_period(period, contract.zone)
    return check_fields(contract, traces, Metering(contract, traces, window))


def no_window(contract: Contract, traces: Traces, period: str | None = None) -> Message | None:
    """What is said when no window of the effective period overlaps the traces (or ``period``),
    with both date ranges; None when one does."""
    window = None if period is None else parse_period(period, contract.zone)
    return Metering(contract, traces, window).no_window()
