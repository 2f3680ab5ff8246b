"""The compliance report's inputs, from one metering run: the evaluation (run here unless given),
the field check, the budget, the traffic, the evidence appendix and each latency term's measured
figures for the charts — each read from the tables the checks count."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from pathlib import Path

import ibis

from slacheck.budget import analyse
from slacheck.contract.load import verify_contract_file
from slacheck.contract.model import Contract, Direction, MeasurementPoint, OccurrenceObjective
from slacheck.errors import UsageError
from slacheck.evaluation import run_checks
from slacheck.inputs import sha256_if_readable
from slacheck.match.fields import check_fields
from slacheck.metering.calls import region_role_expr
from slacheck.metering.context import CheckContext, Metering
from slacheck.metering.derive import scoped
from slacheck.metering.units import call_base, period_values
from slacheck.prepare.evidence import evidence
from slacheck.render import charts
from slacheck.render.credit import check_claimed
from slacheck.render.inputs import ReportInputs, Traffic
from slacheck.results import Evaluation
from slacheck.trace.traces import Traces
from slacheck.verdict import TermKind, TermResult
from slacheck.windows import CalendarWindow, parse_period

__all__ = ["prepare_report"]

#: models and regions the traffic table lists, the busiest first
_TOP = 20


def prepare_report(
    contract: Contract,
    traces: Traces,
    *,
    period: str,
    evaluation: Evaluation | None = None,
    contract_file: Path | None = None,
    issued: dt.date | None = None,
    claimed: Collection[str] = (),
    metering: Metering | None = None,
    contract_sha256: str | None = None,
) -> ReportInputs:
    """Evaluate (unless ``evaluation`` is given), check fields, analyse the budget, and read
    each latency term's measured values for the charts, all on one metering run.

    ``issued`` is the report's issue date (claim status is stated as of it); the caller
    passes it (``--issued``), else it is today in the contract's zone — read here, once,
    never inside a template. ``claimed``: the availability windows whose credit the customer
    says was claimed (``--claimed``); the claim status of every window is stated as of
    ``issued`` (``render.credit``). ``metering``: the command's metering run over ``period``
    (``prepare.metering_run``), when it has one; else one is made here.

    ``contract_sha256``: the SHA-256 of the bytes the contract was read from
    (``LoadedContract.sha256``), which the report states; the file must still hold them when
    the figures are computed (``ContractInvalid`` otherwise). Without it, the file's hash as it
    is now."""
    digest = contract_sha256
    if digest is None and contract_file is not None:
        digest = sha256_if_readable(contract_file)
    window = parse_period(period, contract.zone)
    # one context for the verdicts, the field check, the budget, the evidence and the charts:
    # its derived tables are built once
    ctx = _run(metering, contract, traces, window)
    if evaluation is None:
        evaluation = run_checks(ctx)
    elif evaluation.period is not None and evaluation.period != window.label:
        raise UsageError(
            f"the evaluation covers {evaluation.period}, not the report's period {window.label}"
        )
    check_claimed(
        claimed, [r.window for r in evaluation.results if r.kind == TermKind.AVAILABILITY]
    )
    lo, hi = ctx.data_range
    inputs = ReportInputs(
        contract=contract,
        period=period,
        evaluation=evaluation,
        fields=check_fields(contract, traces, ctx),
        budget=analyse(traces, ctx),
        distributions=_distributions(ctx, evaluation.results),
        period_start_us=window.start_us,
        period_end_us=window.end_us,
        data_start_us=lo,
        data_end_us=hi,
        traffic=_traffic(ctx),
        evidence=evidence(ctx),
        issued=issued if issued is not None else dt.datetime.now(contract.zone).date(),
        contract_file=contract_file,
        claimed=frozenset(claimed),
        contract_sha256=digest,
    )
    traces.verify_unchanged()  # no figure of a file written while it was read
    if contract_file is not None and digest is not None:
        verify_contract_file(contract_file, digest)  # nor of terms the file no longer holds
    return inputs


def _run(
    metering: Metering | None, contract: Contract, traces: Traces, window: CalendarWindow
) -> Metering:
    """The command's metering run when it is over ``window``, else a new one."""
    if metering is None:
        return CheckContext(contract, traces, window)
    p = metering.period
    if metering.contract is not contract or metering.traces is not traces or p is None:
        raise UsageError("the metering run given is not over these contract and traces")
    if (p.start_us, p.end_us) != (window.start_us, window.end_us):
        raise UsageError(f"the metering run covers {p.label}, not the period {window.label}")
    return metering


def _traffic(ctx: Metering) -> Traffic:
    """Model calls of the period by the model that answered and by serving region, with the
    region's role as the regions check reads it (``metering.calls.region_role_expr``)."""
    contract = ctx.contract
    w = ctx.period
    assert w is not None
    c = ctx.calls
    c = c.filter((c.start_us >= w.start_us) & (c.start_us < w.end_us))
    c = c.mutate(
        _model=ibis.coalesce(c.response_model, c.request_model).fill_null("—"),
        _in=scoped(c, contract).cast("int64"),
        _region=c.region_key.fill_null(""),
        _role=region_role_expr(contract, c.region_key),
    )
    models = (
        c.group_by("_model")
        .aggregate(calls=c.count(), scoped=c._in.sum())
        .order_by([ibis.desc("calls"), "_model"])
        .limit(_TOP)
        .to_pyarrow()
        .to_pylist()
    )
    regions = (
        c.group_by(["_region", "_role"])
        .aggregate(calls=c.count())
        .order_by([ibis.desc("calls"), "_region"])
        .limit(_TOP)
        .to_pyarrow()
        .to_pylist()
    )
    return Traffic(
        models=tuple((str(r["_model"]), int(r["calls"]), int(r["scoped"] or 0)) for r in models),
        regions=tuple((str(r["_region"]), int(r["calls"]), str(r["_role"])) for r in regions),
    )


def _distributions(ctx: Metering, results: Sequence[TermResult]) -> tuple[charts.Distribution, ...]:
    """Per latency term: its figures in the period, as the check counts a window's
    (``period_values``: same units, states, exclusions and point)."""
    contract = ctx.contract
    if not contract.latency or ctx.period is None:
        return ()
    base = call_base(ctx)
    w = ctx.period
    out: list[charts.Distribution] = []
    for term in contract.latency:
        figures = period_values(ctx, term, w.start_us, w.end_us, base)
        obj = term.objective
        monthly = tuple(
            (r.window, float(r.observed))
            for r in sorted(results, key=lambda r: r.window)
            if r.term_id == term.id
            and r.observed is not None
            and r.measured_at == figures.point.name
        )
        tps = term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
        if not isinstance(obj, OccurrenceObjective):
            # a time-slice term reports the share of slices passing, not a speed: no marker
            monthly = ()
        out.append(
            charts.Distribution(
                term_id=term.id,
                values=figures.values,
                threshold=obj.threshold,
                at_most=obj.direction is Direction.AT_MOST,
                unit="tokens/s" if tps else "ms",
                percentile=obj.percentile if isinstance(obj, OccurrenceObjective) else None,
                measured_at=figures.point.name,
                bound=figures.bound,
                monthly=monthly,
                unit_word="tasks"
                if term.measurement_point is MeasurementPoint.TASK_END_TO_END
                else "calls",
            )
        )
    return tuple(out)
