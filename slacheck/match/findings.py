"""What the field check finds, as plain data the documents read: the metering mismatches
(``Mismatch``, by ``Code``). The finders that compute them are in ``match/mismatch/``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from slacheck.contract.review import Severity
from slacheck.messages import Message

__all__ = ["Code", "Mismatch"]


class Code(StrEnum):
    """What kind of metering mismatch; tests and renderers key on these, not on the text."""

    POINT_NOT_RECORDED = "point_not_recorded"
    ONLY_MET_PROVABLE = "only_met_provable"
    TPS_BASIS_UNSTATED = "tps_basis_unstated"
    TPS_BASIS_UNMEASURABLE = "tps_basis_unmeasurable"
    SPARSE_SLICES = "sparse_slices"
    COARSE_TIMESTAMPS = "coarse_timestamps"
    PERCENTILE_IS_MAXIMUM = "percentile_is_maximum"
    WINDOW_COVERAGE = "window_coverage"
    TIME_ZONE_MONTH = "time_zone_month"
    UNCOVERED_TASK_TIME = "uncovered_task_time"
    SCOPE_UNMATCHED = "scope_unmatched"


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One place where the contract meters something the trace measures differently (or not).

    ``headline`` and ``explanation`` are messages; ``title`` and ``detail`` their English text.
    """

    code: str
    severity: Severity
    term_id: str | None  # the latency term (or terms, comma-separated); None: the whole contract
    headline: Message
    explanation: Message
    numbers: dict[str, Any]

    @property
    def title(self) -> str:
        return self.headline.text

    @property
    def detail(self) -> str:
        return self.explanation.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "severity": str(self.severity),
            "term_id": self.term_id,
            "title": self.title,
            "detail": self.detail,
            "messages": {
                "title": self.headline.to_dict(),
                "detail": self.explanation.to_dict(),
            },
            "numbers": self.numbers,
        }
