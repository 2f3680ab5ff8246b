"""The frozen inputs of the documents: what the prepare stage (``slacheck.prepare``) computes
once from the contract, the metering run and the evaluation, and the renderers format in any
language and format. Data only: nothing here reads traces or imports an engine."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from slacheck.contract.model import Contract, Window
from slacheck.render import charts
from slacheck.results import Evaluation

if TYPE_CHECKING:
    from slacheck.budget.model import Budget
    from slacheck.match.items import FieldCheck
    from slacheck.trace.results import Quality, SourceFile

__all__ = [
    "EVIDENCE_COLUMNS",
    "AcceptInputs",
    "AcceptWindow",
    "EvidenceFile",
    "ReportInputs",
    "Traffic",
    "acceptance_window_kind",
    "evidence_name",
    "evidence_path",
]


def acceptance_window_kind(contract: Contract) -> Window:
    """The window the acceptance is counted in: the first latency term's, else availability's."""
    if contract.latency:
        return contract.latency[0].window
    if contract.availability is not None:
        return contract.availability.window
    return Window.CALENDAR_MONTH


@dataclass(frozen=True, slots=True)
class AcceptWindow:
    """One window the acceptance test covers and, with traces, the traffic they hold in it."""

    label: str
    start_us: int
    last_us: int  # the window's last microsecond
    clipped: bool  # the effective period cuts it
    calls: int | None = None  # in-scope model calls (None: no traces given)
    tasks: int | None = None  # tasks with at least one in-scope model call
    busiest_minute: int | None = None  # in-scope calls in the busiest UTC minute
    peak_minutes: int | None = None  # minutes that meet the contract's peak definition


@dataclass(frozen=True)
class AcceptInputs:
    """What the acceptance document needs: the contract, the test period and, with traces,
    the field check and the traffic per test window."""

    contract: Contract
    fields: FieldCheck | None = None
    sources: tuple[SourceFile, ...] = ()
    quality: Quality | None = None
    contract_file: Path | None = None
    period: str | None = None  # as given (--period); None: the windows the traces cover
    windows: tuple[AcceptWindow, ...] = ()


@dataclass(frozen=True, slots=True)
class Traffic:
    """Model calls in the period by the model that answered and by serving region (the busiest
    first), so the report shows what the traces hold, names as recorded."""

    models: tuple[tuple[str, int, int], ...]  # (model as recorded, calls, of them in scope)
    regions: tuple[tuple[str, int, str], ...]  # (region, calls, primary|failover|unlisted|unknown)


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report shows, computed once and rendered in any language and format."""

    contract: Contract
    period: str
    evaluation: Evaluation
    fields: FieldCheck
    budget: Budget
    distributions: tuple[charts.Distribution, ...]
    period_start_us: int
    period_end_us: int
    data_start_us: int | None
    data_end_us: int | None
    traffic: Traffic
    evidence: EvidenceFile
    issued: dt.date
    contract_file: Path | None = None
    #: availability windows whose credit the customer says was claimed (``--claimed``)
    claimed: frozenset[str] = frozenset()
    #: SHA-256 of the contract file's bytes the contract was read from (None: read it when
    #: rendering, for inputs made without one)
    contract_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class EvidenceFile:
    """The evidence appendix: every in-scope call of the period the availability rule counts
    as failed, leaves undecided (an unclassified failure read both ways) or excludes, as CSV
    written beside the report; the report prints its name, row count and SHA-256."""

    data: bytes
    rows: int

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


#: one row per call; ``window``: the availability window (or month) it counts in, so each
#: window's claim carries its own rows
EVIDENCE_COLUMNS = (
    "window",
    "time_local",
    "task_id",
    "span_id",
    "region",
    "status",
    "http_status",
    "counted_as",
    "reason",
)


def evidence_name(contract: Contract, period: str) -> str:
    """The evidence appendix's file name, the same for every language and format of one
    report: ``<contract id>_<period>_evidence.csv``, with only safe characters."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{contract.contract.id}_{period}").strip("._")
    return f"{stem or 'report'}_evidence.csv"


def evidence_path(report: Path, inputs: ReportInputs) -> Path:
    """Where the evidence appendix of the report written to ``report`` goes: beside it."""
    return report.with_name(evidence_name(inputs.contract, inputs.period))
