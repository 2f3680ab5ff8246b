"""Orchestration only: run every registered check over the traces and collect frozen results."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from slacheck.checks import CheckContext, load_builtin_checks
from slacheck.contract.model import Contract, Window
from slacheck.errors import UsageError
from slacheck.metering.metrics import MetricsEvidence
from slacheck.progress import Stage, Step, report
from slacheck.results import Evaluation
from slacheck.trace.traces import Traces
from slacheck.verdict import TermResult
from slacheck.windows import parse_period


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
    traces.verify_unchanged()  # no verdict on a file written while it was read
    return Evaluation(
        contract=ctx.contract,
        results=tuple(results),
        sources=traces.sources,
        quality=traces.quality,
        engine=str(traces.engine),
        period=None if ctx.period is None else ctx.period.label,
        outside_effective=ctx.outside_effective,
        metrics=None if ctx.metrics is None else ctx.metrics.data.to_dict(),
        no_window=ctx.no_window(),
    )


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
