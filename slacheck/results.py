"""What a run established, as frozen data with no engine behind it: the evaluation (every
term's verdict per window, what was read and how) and the figures it carries.

Everything here can be read by any layer, the renderers included: nothing imports an engine,
the metering model or a check. ``slacheck.evaluation`` computes an ``Evaluation``; the prepare
stage (``slacheck.prepare``) adds what each document needs; the renderers only format.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from slacheck.contract.model import Contract
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.verdict import TermResult, Verdict
from slacheck.version import __version__

if TYPE_CHECKING:
    from slacheck.trace.results import Quality, SourceFile

__all__ = [
    "EffectiveSpan",
    "Evaluation",
    "LossSays",
    "Losses",
    "ScopeMatch",
    "contract_terms",
]


@dataclass(frozen=True, slots=True)
class ScopeMatch:
    """How a scope filter fared against the calls: ``matched`` of ``calls`` llm calls."""

    calls: int
    matched: int
    unmatched_values: tuple[str, ...]  # contract values (models, providers, …) that match nothing

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "matched": self.matched,
            "unmatched_values": list(self.unmatched_values),
        }


class LossSays(MessageCode):
    """What a result says of the calls its window could not count."""

    SET_ASIDE = NPC_(
        "metering.losses.set_aside",
        "{n} model call in this window was set aside and not counted ({why})",
        "{n} model calls in this window were set aside and not counted ({why})",
    )
    REASON = NC_("metering.losses.reason", "{reason} {n}")
    SCOPE_FIELD_MISSING = NPC_(
        "metering.losses.scope_field_missing",
        "{n} model call records no {field}, which the contract's scope is decided on, and is not "
        "counted",
        "{n} model calls record no {field}, which the contract's scope is decided on, and are not "
        "counted",
    )
    UNDATED = NPC_(
        "metering.losses.undated",
        "{n} model call set aside without a start time may belong here too",
        "{n} model calls set aside without a start time may belong here too",
    )
    SET_ASIDE_ALL = NPC_(
        "metering.losses.set_aside_all",
        "{n} model call in the effective period was set aside and is not counted ({why})",
        "{n} model calls in the effective period were set aside and are not counted ({why})",
    )


@dataclass(frozen=True, slots=True)
class Losses:
    """Model calls a window's terms cannot count, and why: rows set aside at ingestion (by
    reason) and calls without the field the contract's scope is decided on (by field)."""

    set_aside: dict[str, int]
    scope_field_missing: dict[str, int]

    @property
    def any(self) -> bool:
        return bool(self.set_aside or self.scope_field_missing)

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {
            "set_aside": dict(sorted(self.set_aside.items())),
            "scope_field_missing": dict(sorted(self.scope_field_missing.items())),
        }

    def notes(self, undated: int = 0, *, whole_period: bool = False) -> tuple[Message, ...]:
        """What a result says of them (``undated``: calls set aside without a start time;
        ``whole_period``: the losses are the effective period's, not one window's)."""
        out = []
        if self.set_aside:
            n = sum(self.set_aside.values())
            why = [LossSays.REASON(reason=k, n=v) for k, v in sorted(self.set_aside.items())]
            said = LossSays.SET_ASIDE_ALL if whole_period else LossSays.SET_ASIDE
            out.append(said(n=n, why=why))
        for name, n in sorted(self.scope_field_missing.items()):
            out.append(LossSays.SCOPE_FIELD_MISSING(n=n, field=name))
        if undated:
            out.append(LossSays.UNDATED(n=undated))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class EffectiveSpan:
    """Calls (in scope) outside the contract's effective period: never counted, always said."""

    before: int
    after: int

    @property
    def outside(self) -> int:
        return self.before + self.after


@dataclass(frozen=True)
class Evaluation:
    """Every term's verdict per window, with what was read and how."""

    contract: Contract
    results: tuple[TermResult, ...]
    sources: tuple[SourceFile, ...]
    quality: Quality
    engine: str
    period: str | None
    #: in-scope calls outside the contract's effective period: never counted, always said
    outside_effective: EffectiveSpan = field(default_factory=lambda: EffectiveSpan(0, 0))
    version: str = __version__
    #: server-side metrics read as a second evidence source (``--metrics``), if any: what was
    #: read (``MetricPoints.to_dict``)
    metrics: dict[str, Any] | None = None
    #: said when no window of the effective period overlaps the traces (with both ranges):
    #: every term is then no data, and there is no table to show
    no_window: Message | None = None

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.verdict is Verdict.MET for r in self.results)

    @property
    def exit_code(self) -> int:
        """0 when every term is met in every window; 1 otherwise (breached or unverifiable)."""
        return 0 if self.ok else 1

    def readings(self) -> dict[str, dict[str, Any]]:
        """The judgement calls the verdicts were read with: each value, and whether the contract
        states it or slacheck's default applied."""
        r = self.contract.readings
        return {
            name: {"value": str(getattr(r, name)), "stated": name in r.model_fields_set}
            for name in type(r).model_fields
        }

    def counts(self) -> dict[str, int]:
        """Results per verdict; when no window overlaps the traces, each of the contract's
        terms counts once as no data."""
        c = Counter(str(r.verdict) for r in self.results)
        if self.no_window is not None and not self.results:
            c[str(Verdict.NO_DATA)] = len(contract_terms(self.contract))
        return {str(v): c.get(str(v), 0) for v in Verdict}

    def to_dict(self) -> dict[str, Any]:
        return {
            "contract": self.contract.contract.id,
            "period": self.period,
            "engine": self.engine,
            "slacheck_version": self.version,
            "summary": self.counts(),
            "readings": self.readings(),
            "effective": {
                "start": self.contract.contract.effective.start.isoformat(),
                "end": (
                    None
                    if self.contract.contract.effective.end is None
                    else self.contract.contract.effective.end.isoformat()
                ),
                "calls_before": self.outside_effective.before,
                "calls_after": self.outside_effective.after,
            },
            "no_window": None if self.no_window is None else self.no_window.to_dict(),
            "terms": [r.to_dict() for r in self.results],
            "quality": self.quality.to_dict(),
            "sources": [
                {"path": s.path, "format": s.format, "sha256": s.sha256, "rows": s.rows}
                for s in self.sources
            ],
            **({} if self.metrics is None else {"metrics": self.metrics}),
        }


def contract_terms(contract: Contract) -> list[str]:
    """The ids of the contract's terms, as the checks name their results."""
    ids = [t.id for t in contract.latency]
    for name in ("regions", "peak", "rate_limit", "availability"):
        if getattr(contract, name) is not None:
            ids.append(name)
    return ids
