"""Orchestration only: run every registered check over the traces and collect frozen results."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from slacheck import __version__
from slacheck.checks import CheckContext, load_builtin_checks
from slacheck.contract.model import Contract, Window
from slacheck.errors import UsageError
from slacheck.messages import Message
from slacheck.metering.context import EffectiveSpan
from slacheck.metering.metrics import MetricsEvidence
from slacheck.progress import Stage, Step, report
from slacheck.trace.results import Quality, SourceFile
from slacheck.trace.traces import Traces
from slacheck.verdict import TermResult, Verdict
from slacheck.windows import parse_period


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
    #: server-side metrics read as a second evidence source (``--metrics``), if any
    metrics: MetricsEvidence | None = None
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
            **({} if self.metrics is None else {"metrics": self.metrics.data.to_dict()}),
        }


def evaluate(
    contract: Contract,
    traces: Traces,
    *,
    period: str | None = None,
    only: Iterable[str] | None = None,
    metrics: MetricsEvidence | None = None,
) -> Evaluation:
    """Check ``contract`` against ``traces``. ``period``: `2026-07` or `2026-Q3` (contract zone);
    ``metrics``: server-side OTLP metrics, a second evidence source for server-side terms."""
    window = parse_period(period, contract.zone) if period else None
    return run_checks(CheckContext(contract, traces, window, metrics), only=only)


def run_checks(ctx: CheckContext, *, only: Iterable[str] | None = None) -> Evaluation:
    """``evaluate`` on a context the caller keeps (its derived tables are then built once)."""
    registry = load_builtin_checks()
    # report order: latency first, then the clauses in the order DOMAIN.md gives them
    preferred = ["latency", "regions", "peak", "rate_limit", "availability"]
    default = [n for n in preferred if n in registry] + [n for n in registry if n not in preferred]
    names = default if only is None else list(only)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise UsageError(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(registry)}")
    results: list[TermResult] = []
    for done, name in enumerate(names):
        report(Step(Stage.CHECK, done, len(names), item=name))
        results.extend(registry[name](ctx))
    report(Step(Stage.CHECK, len(names), len(names)))
    results = _with_coverage(ctx, results)
    traces = ctx.traces
    return Evaluation(
        contract=ctx.contract,
        results=tuple(results),
        sources=traces.sources,
        quality=traces.quality,
        engine=str(traces.engine),
        period=None if ctx.period is None else ctx.period.label,
        outside_effective=ctx.outside_effective,
        metrics=ctx.metrics,
        no_window=ctx.no_window(),
    )


def contract_terms(contract: Contract) -> list[str]:
    """The ids of the contract's terms, as the checks name their results."""
    ids = [t.id for t in contract.latency]
    for name in ("regions", "peak", "rate_limit", "availability"):
        if getattr(contract, name) is not None:
            ids.append(name)
    return ids


def _with_coverage(ctx: CheckContext, results: list[TermResult]) -> list[TermResult]:
    """Each result with its window's coverage (the same ``Coverage`` its ``partial_window``
    was decided from)."""
    by_label = {w.label: w for kind in Window for w in ctx.windows(kind)}
    return [
        r
        if r.window not in by_label
        else dataclasses.replace(r, coverage=ctx.coverage(by_label[r.window]).to_dict())
        for r in results
    ]
