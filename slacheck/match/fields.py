"""The eight-item field check (八项字段检查): can these traces meter what this contract promises?"""

# One row per item, each with numerator, denominator and criterion, as the seeds' audit
# product has it. The status follows from the counts alone (see ``classify``); the fix says
# whether closing the gap needs new instrumentation (a trace-schema change, naming the real
# OpenTelemetry attribute to emit) or only a computation from fields already there. Counts are
# Ibis aggregates, a handful of queries in all; Python only loops over contract terms. This
# module derives the counts; ``match.items`` turns them into rows and words.

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.contract.model import (
    Contract,
    MeasurementPoint,
    Peak,
    RateLimitBasis,
    RequestRatePeak,
    TokensPerSecondBasis,
    UtilisationPeak,
)
from slacheck.match.items import (
    DERIVABLE_NOW,
    NEED_CACHED,
    NEED_MODEL_TIME,
    NEED_NETWORK,
    NEED_OUTPUT_TOKENS,
    NEED_QUEUE,
    NEED_REGION,
    NEED_RESPONSE_MODEL,
    NEED_ROOT,
    NEED_SERVER,
    NEED_TASK_IDS,
    NEED_TOKENS,
    NEED_TTFT,
    SCHEMA_CHANGE,
    FieldCheck,
    FieldItem,
    FieldSays,
    ItemStatus,
    Need,
    classify,
    counted_item,
    gap_fix,
    not_applicable_item,
    schema_change_fix,
)
from slacheck.match.mismatch import (
    TermCoverage,
    extent_aggregates,
    extent_from,
    find_mismatches,
)
from slacheck.match.mismatch.core import (
    Shared,
    aggregate_row,
    coverage_aggregates,
    coverage_columns,
    coverage_from,
)
from slacheck.messages import Message
from slacheck.metering.calls import RegionRole, region_role_expr, region_roles
from slacheck.metering.context import Metering
from slacheck.metering.derive import (
    CallState,
    model_base,
    scope_match,
    scoped,
    succeeded,
)
from slacheck.metering.peak import at_peak_expr, minute_expr
from slacheck.trace.schema import SetAside
from slacheck.trace.traces import Traces

__all__ = [
    "DERIVABLE_NOW",
    "SCHEMA_CHANGE",
    "FieldCheck",
    "FieldItem",
    "FieldSays",
    "ItemStatus",
    "check_fields",
    "classify",
]

S = FieldSays  # each item below says several of the field check's words
#: a degradation policy's name in words (the English word is the contract's key)
_POLICY_NAMES = {
    "smaller_model": S.POLICY_SMALLER_MODEL,
    "cache": S.POLICY_CACHE,
    "queue": S.POLICY_QUEUE,
}


def _row(t: ir.Table, **aggs: ir.Scalar) -> dict[str, Any]:
    return _zeroed(aggregate_row(t, **aggs))


def _zeroed(row: dict[str, Any]) -> dict[str, Any]:
    """An aggregate row with its nulls (no rows counted) as 0."""
    return {k: (0 if v is None else v) for k, v in row.items()}


# ---------------------------------------------------------------------------------------------
# the check


def check_fields(
    contract: Contract, traces: Traces, metering: Metering | None = None
) -> FieldCheck:
    """The eight-item table for ``contract`` against ``traces``, with the metering mismatches.

    ``metering``: the run's metering model, when the caller has one (its tables are then shared
    with the checks); else one is made here. Every count reads its calls and peak minutes.
    """
    m = metering if metering is not None else Metering(contract, traces)
    # the traces given, all of them or the metering's period: whether they can meter the
    # contract is asked before it starts, so the effective period does not narrow them (the
    # calls that fall before and after it are counted and said)
    c = m.calls.filter(_measured(m, m.calls.start_us))
    t = m.tasks.filter(_measured(m, m.tasks.start_us)).cache()
    # the per-call counts of the items and of the mismatch finders, in one query over the calls
    # (each term's unit test and the peak test computed once per call, as columns): a per-call
    # term's units are the calls its check counts, answered, in scope, not excluded
    x = coverage_columns(contract, c, m.exclusion_reason(c).notnull())
    x = x.mutate(_sc=scoped(x, contract), _succ=succeeded(x))
    if contract.peak is not None:
        x = x.mutate(_peak=(x._sc & at_peak_expr(m, x)).fill_null(False))
    shared = Shared(x)
    asked_coverage = shared.ask(**coverage_aggregates(contract, x))
    asked_steps = shared.ask(**_step_aggregates(contract, x, x._sc, x._succ))
    asked_peak = None
    if contract.peak is not None:
        asked_peak = shared.ask(**_peak_aggregates(m, x, x._succ))
    asked_extent = shared.ask(**extent_aggregates(x, x._sc))
    coverage = coverage_from(contract, shared.row(asked_coverage), c, t)
    steps = _step_items(contract, c, shared.row(asked_steps))
    unordered = (
        *steps[:2],
        _tool_item(m),
        *_task_items(contract, traces, c, t),
        _point_item(contract, coverage),
        steps[2],
        _peak_item(m, None if asked_peak is None else shared.row(asked_peak)),
    )
    items = tuple(sorted(unordered, key=lambda i: i.item))
    matched = scope_match(c, contract.scope, contract.readings.model_scope)
    mismatches = find_mismatches(
        contract,
        traces,
        c,
        t,
        coverage=coverage,
        metering=m,
        scope=matched,
        extent=extent_from(shared.row(asked_extent)),
    )
    states, notes = _states(contract, c)
    return FieldCheck(
        items,
        mismatches,
        matched,
        m.total_losses,
        effective=m.outside_effective,
        outside=m.outside_said(),
        states=states,
        status_notes=notes,
    )


def _measured(m: Metering, ts_us: ir.IntegerValue) -> ir.BooleanValue:
    """Inside the period the field check was asked for (``Metering.period``), else any time."""
    if m.period is None:
        return ibis.literal(True)
    return (ts_us >= m.period.start_us) & (ts_us < m.period.end_us)


def _states(contract: Contract, c: ir.Table) -> tuple[dict[str, int], tuple[Message, ...]]:
    """The in-scope calls per call state, and the notes the unclassified failures and cache
    hits need: counted and named, with the reading that decides how they are read."""
    x = c.filter(scoped(c, contract))
    df = x.group_by("state").aggregate(n=x.count()).to_pyarrow().to_pylist()
    states = {str(r["state"]): int(r["n"]) for r in df}
    notes: list[Message] = []
    readings = contract.readings
    if states.get(str(CallState.UNCLASSIFIED)):
        notes.append(
            S.UNCLASSIFIED(
                n=states[str(CallState.UNCLASSIFIED)], reading=str(readings.unclassified_failures)
            )
        )
    if states.get(str(CallState.CACHED)):
        notes.append(
            S.CACHE_HITS(n=states[str(CallState.CACHED)], reading=str(readings.cache_hits))
        )
    return states, tuple(notes)


def _step_aggregates(
    contract: Contract, c: ir.Table, sc: ir.BooleanValue, ok: ir.BooleanValue
) -> dict[str, ir.Scalar]:
    """Items 1, 2 and 6: their counts over the model calls ``c``, of which ``sc`` are in the
    contract's scope and ``ok`` succeeded."""
    aggs: dict[str, ir.Scalar] = {
        "ok": ok.sum(),
        "model_rec": (ok & c.server_ms.notnull()).sum(),
        "model_der": (ok & (c.model_source == "derived").fill_null(False)).sum(),
        "net_rec": (ok & c.network_ms.notnull()).sum(),
        "net_der": (ok & (c.network_source == "derived").fill_null(False)).sum(),
        "scope": sc.sum(),
        "region_rec": (sc & c.region.notnull()).sum(),
        "region_der": (sc & (c.region_source == "model_path").fill_null(False)).sum(),
    }
    # the roles as the regions check reads them (``metering.calls``)
    role = region_role_expr(contract, c.region_key)
    if contract.regions is not None:
        aggs["in_primary"] = (sc & (role == str(RegionRole.PRIMARY))).sum()
        aggs["in_failover"] = (sc & (role == str(RegionRole.FAILOVER))).sum()
        aggs["outside"] = _unlisted(contract, c, sc).sum()
    return aggs


def _unlisted(contract: Contract, c: ir.Table, sc: ir.BooleanValue) -> ir.BooleanValue:
    """Per call of ``c``: in the scope (``sc``) and served in a region the contract does not
    list, by the roles the regions check reads (``metering.calls``)."""
    return sc & (region_role_expr(contract, c.region_key) == str(RegionRole.UNLISTED))


def _step_items(
    contract: Contract, c: ir.Table, row: dict[str, Any]
) -> tuple[FieldItem, FieldItem, FieldItem]:
    """Items 1, 2 and 6 from ``_step_aggregates``' values over the calls ``c``."""
    r = _zeroed(row)
    regions = contract.regions
    primary, failover = region_roles(contract)
    allowed = [*primary, *failover]
    calls_note = S.NO_CALLS()
    model = counted_item(
        1,
        "model time per step",
        r["model_rec"],
        r["model_der"],
        r["ok"],
        S.CRIT_MODEL(),
        needs=(NEED_MODEL_TIME,),
        derivable_from=S.FROM_MODEL_TIME(),
        no_data=calls_note,
    )
    network = counted_item(
        2,
        "network round trip per step",
        r["net_rec"],
        r["net_der"],
        r["ok"],
        S.CRIT_NETWORK(),
        needs=(NEED_NETWORK,),
        derivable_from=S.FROM_NETWORK(),
        no_data=calls_note,
    )
    if regions is None:
        region = not_applicable_item(
            6,
            "region list and cross-region rights",
            S.CRIT_REGION_NA(),
            S.NA_REGIONS(),
        )
        return model, network, region
    unlisted = _unlisted(contract, c, scoped(c, contract))
    outside = _outside_regions(c, unlisted) if r["outside"] else {}
    region = counted_item(
        6,
        "region list and cross-region rights",
        r["region_rec"],
        r["region_der"],
        r["scope"],
        S.CRIT_REGION(allowed=list(allowed)),
        needs=(NEED_REGION,),
        derivable_from=S.FROM_MODEL_PATH(),
        no_data=S.NO_SCOPED_CALLS(),
        details=(
            {
                "primary": primary,
                "failover": failover,
                "in_primary": r["in_primary"],
                "in_failover": r["in_failover"],
                "outside": r["outside"],
                "outside_regions": outside,
                "unknown": r["scope"] - r["region_rec"] - r["region_der"],
            },
        ),
    )
    return model, network, region


def _outside_regions(c: ir.Table, unlisted: ir.BooleanValue) -> dict[str, int]:
    """The regions outside the contract's list that served in-scope calls (``unlisted``: per
    call, it did; the five busiest)."""
    x = c.filter(unlisted)
    top = (
        x.group_by(region=x.region_key)
        .aggregate(n=x.count())
        .order_by([ibis.desc("n"), "region"])
        .limit(5)
    )
    return {str(row["region"]): int(row["n"]) for row in top.to_pyarrow().to_pylist()}


def _tool_item(m: Metering) -> FieldItem:
    """Item 3: tool spans (in the period measured) with a duration."""
    s = m.traces.spans
    s = s.filter(_measured(m, s.start_us))
    tool = s.kind == "tool"
    r = _row(s, n=tool.sum(), rec=(tool & s.duration_ms.notnull()).sum())
    return counted_item(
        3,
        "tool wait per step",
        r["rec"],
        0,
        r["n"],
        S.CRIT_TOOLS(),
        needs=(Need(S.WHAT_TOOL_TIMES, S.EG_TOOL_TIMES),),
        no_data=S.NO_TOOLS(),
    )


def _task_items(
    contract: Contract, traces: Traces, c: ir.Table, t: ir.Table
) -> tuple[FieldItem, FieldItem]:
    """Items 4 and 8: one query over the tasks.

    A model call set aside by the quality stage still belongs to its task: without a start it
    cannot be placed in a rate-limit period, and (unless it is merely a duplicate) its tokens
    cannot be trusted, so its task cannot be counted on those bases.
    """
    ok = succeeded(c)
    sc = scoped(c, contract)
    per = c.group_by("task_id").aggregate(
        in_scope_calls=sc.sum(),
        untokened=(sc & ok & (c.input_tokens.isnull() | c.output_tokens.isnull())).sum(),
    )
    bad = traces.set_aside_rows
    bad = bad.filter((bad.kind == "llm") & bad.task_id.notnull())
    lost = bad.group_by("task_id").aggregate(
        unstarted=bad.start_us.isnull().sum(),
        untrusted=(bad._reason != str(SetAside.DUPLICATE_SPAN_ID)).fill_null(True).sum(),
    )
    j = t.left_join(per, "task_id").drop("task_id_right")
    j = j.left_join(lost, "task_id").drop("task_id_right")
    has = j.in_scope_calls.fill_null(0) > 0
    placed = j.unstarted.fill_null(0) == 0
    trusted = j.untrusted.fill_null(0) == 0
    r = _row(
        j,
        tasks=j.count(),
        root=(j.task_source == "root_span").fill_null(False).sum(),
        derived=(j.task_source == "roots_envelope").fill_null(False).sum(),
        scoped=has.sum(),
        per_request=(has & placed).sum(),
        per_task=(has & j.start_us.notnull()).sum(),
        per_token=(has & trusted & (j.untokened.fill_null(0) == 0)).sum(),
    )
    task = counted_item(
        4,
        "task total time",
        r["root"],
        r["derived"],
        r["tasks"],
        S.CRIT_TASK(),
        needs=(NEED_ROOT,),
        derivable_from=S.FROM_COMPLETE_TASK(),
        no_data=S.NO_TASKS(),
    )
    rl = contract.rate_limit
    name = "rate-limit basis"
    if rl is None:
        return task, not_applicable_item(
            8,
            name,
            S.CRIT_RATE_NA(),
            S.NA_RATE(),
        )
    basis = {
        RateLimitBasis.PER_REQUEST: ("per_request", S.HOW_PER_REQUEST(), (NEED_TASK_IDS,)),
        RateLimitBasis.PER_TASK: ("per_task", S.HOW_PER_TASK(), (NEED_TASK_IDS,)),
        RateLimitBasis.PER_TOKEN: ("per_token", S.HOW_PER_TOKEN(), (NEED_TOKENS,)),
    }[rl.basis]
    rate = counted_item(
        8,
        name,
        r[basis[0]],
        0,
        r["scoped"],
        S.CRIT_RATE(basis=str(rl.basis), how=basis[1]),
        needs=basis[2],
        no_data=S.NO_SCOPED_TASKS(),
        details=({"basis": str(rl.basis), "limit": rl.limit, "period": str(rl.period)},),
    )
    return task, rate


def _term_status(cov: TermCoverage) -> tuple[ItemStatus, Message | None]:
    """A latency term's status and fix; server processing seen only at the client is partial."""
    status = classify(cov.recorded, cov.derived, cov.in_scope)
    point = cov.point
    if (
        point is MeasurementPoint.SERVER_PROCESSING
        and status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE)
        and cov.client_only
    ):
        return ItemStatus.PARTIAL, S.FIX_CLIENT_ONLY(
            fix=schema_change_fix(NEED_SERVER), calls=cov.client_only
        )
    needs: tuple[Need, ...]
    derivable_from: Message | None = None
    if point is MeasurementPoint.SERVER_PROCESSING:
        needs, derivable_from = (NEED_SERVER,), S.FROM_SERVER()
    elif point is MeasurementPoint.TIME_TO_FIRST_TOKEN:
        needs = (NEED_TTFT,)
    elif point is MeasurementPoint.FULL_RESPONSE:
        needs = (Need(S.WHAT_CALL_TIMES, S.EG_CALL_TIMES),)
    elif point is MeasurementPoint.TASK_END_TO_END:
        needs, derivable_from = (NEED_ROOT,), S.FROM_COMPLETE_TASKS()
    else:
        lacks_tokens = (cov.whole_request or 0) < cov.in_scope
        wants_gen = cov.basis is not TokensPerSecondBasis.WHOLE_REQUEST
        lacks_ttft = wants_gen and (cov.after_first_token or 0) < (cov.whole_request or 0)
        needs = tuple(
            n for n, on in ((NEED_OUTPUT_TOKENS, lacks_tokens), (NEED_TTFT, lacks_ttft)) if on
        ) or (NEED_OUTPUT_TOKENS,)
    fix = gap_fix(
        status,
        derivable_from=derivable_from,
        needs=needs,
        no_data=S.NO_UNITS(),
    )
    if cov.basis_unstated and fix is not None:
        fix = S.FIX_BASIS_UNSTATED(fix=fix)
    return status, fix


# the order in which a term's status makes item 5 worse
_WORST = (
    ItemStatus.NOT_MEASURABLE,
    ItemStatus.PARTIAL,
    ItemStatus.NO_DATA,
    ItemStatus.DERIVABLE,
    ItemStatus.MEASURABLE,
)


def _point_item(contract: Contract, coverage: tuple[TermCoverage, ...]) -> FieldItem:
    """Item 5: per latency term; the row shows the least measurable term."""
    name = "contracted measurement point"
    if not coverage:
        return not_applicable_item(
            5,
            name,
            S.CRIT_POINT_NA(),
            S.NA_LATENCY(),
        )
    rows: list[tuple[TermCoverage, ItemStatus, Message | None]] = [
        (cov, *_term_status(cov)) for cov in coverage
    ]
    details = tuple(
        cov.to_dict()
        | {
            "status": str(status),
            "needs_schema_change": status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE),
            "fix": fix.text if fix is not None else "",
            "ratio": cov.measurable / cov.in_scope if cov.in_scope else None,
        }
        for cov, status, fix in rows
    )
    worst_cov, worst, _ = min(
        rows,
        key=lambda r: (
            _WORST.index(r[1]),
            r[0].measurable / r[0].in_scope if r[0].in_scope else 1.0,
        ),
    )
    fixes = [(cov.term_id, fix) for cov, status, fix in rows if fix is not None]
    # schema changes first, as in the table (a stable sort keeps the terms' order within each)
    fixes.sort(key=lambda f: SCHEMA_CHANGE not in f[1].text)
    calls = worst_cov.unit == "calls"
    term, point = worst_cov.term_id, str(worst_cov.point)
    if len(rows) > 1:
        said = S.CRIT_POINT_CALLS_OF if calls else S.CRIT_POINT_TASKS_OF
        criterion = said(term=term, point=point, terms=len(rows))
    else:
        criterion = (S.CRIT_POINT_CALLS if calls else S.CRIT_POINT_TASKS)(term=term, point=point)
    return FieldItem(
        item=5,
        name=name,
        numerator=worst_cov.measurable,
        denominator=worst_cov.in_scope,
        recorded=worst_cov.recorded,
        derived=worst_cov.derived,
        criterion_message=criterion,
        status=worst,
        needs_schema_change=any(d["needs_schema_change"] for d in details),
        fix_message=(
            S.FIXES(fixes=[S.FIX_FOR_TERM(term=t, fix=f) for t, f in fixes]) if fixes else None
        ),
        details=details,
    )


def _peak_text(peak: Peak) -> Message:
    d = peak.definition
    if isinstance(d, RequestRatePeak):
        return S.PEAK_RATE(rate=d.requests_per_minute)
    if isinstance(d, UtilisationPeak):
        return S.PEAK_UTILISATION(capacity=d.capacity_requests_per_minute, percent=d.percent)
    return S.PEAK_BUSIEST(percent=d.percent)


def _peak_aggregates(
    metering: Metering, c: ir.Table, succeeded: ir.BooleanValue
) -> dict[str, ir.Scalar]:
    """Item 7's counts over the calls ``c``, whose ``_peak`` says a call is in scope and
    started in a peak minute as every check reads them (``metering.peak``)."""
    contract = metering.contract
    pk = c._peak
    ok = pk & succeeded
    smaller_obs = ok & c.request_model.notnull() & c.response_model.notnull()
    smaller_deg = smaller_obs & (c.served_model != c.requested).fill_null(False)
    cache_obs = ok & c.response_cached.notnull()
    queue_obs = ok & c.queue_ms.notnull()
    aggs: dict[str, ir.Scalar] = {
        "minutes": minute_expr(c.start_us).nunique(where=pk),
        "calls": ok.sum(),
        "smaller_model": smaller_obs.sum(),
        "smaller_model_deg": smaller_deg.sum(),
        "cache": cache_obs.sum(),
        "cache_deg": (cache_obs & c.response_cached.fill_null(False)).sum(),
        "queue": queue_obs.sum(),
        "queue_deg": (queue_obs & (c.queue_ms > 0).fill_null(False)).sum(),
        "all": (smaller_obs & cache_obs & queue_obs).sum(),
    }
    deg = contract.peak.degradation if contract.peak is not None else None
    if deg is not None and deg.smaller_model is not None:
        fallback = model_base(deg.smaller_model.fallback_model)
        aggs["smaller_model_ok"] = (
            smaller_deg & (c.served_model == fallback).fill_null(False)
        ).sum()
    if deg is not None and deg.queue is not None:
        aggs["queue_ok"] = (
            queue_obs & (c.queue_ms <= deg.queue.max_wait_ms).fill_null(False)
        ).sum()
    return aggs


def _peak_item(metering: Metering, row: dict[str, Any] | None) -> FieldItem:
    """Item 7: in peak minutes, is the contracted degradation observable on each call?
    ``row``: ``_peak_aggregates``' values (None without a peak definition)."""
    contract = metering.contract
    name = "peak degradation"
    peak = contract.peak
    if peak is None or row is None:
        return not_applicable_item(
            7,
            name,
            S.CRIT_PEAK_NA(),
            S.NA_PEAK(),
        )
    r = _zeroed(row)
    deg = peak.degradation
    if deg is not None and deg.cache is not None:
        r["cache_ok"] = r["cache_deg"]  # staleness is not in the trace: hits are all we see
    policy = deg.policies[0] if deg is not None else None
    signals: dict[str, tuple[Message, tuple[Need, ...]]] = {
        "smaller_model": (S.SIGNAL_MODELS(), (NEED_RESPONSE_MODEL,)),
        "cache": (S.WHAT_CACHED(), (NEED_CACHED,)),
        "queue": (S.WHAT_QUEUE(), (NEED_QUEUE,)),
    }
    details = tuple(
        {
            "policy": p,
            "contracted": p == policy,
            "observable": r[p],
            "degraded": r[f"{p}_deg"],
            "within_policy": r.get(f"{p}_ok") if p == policy else None,
        }
        for p in signals
    )
    base = {"peak_minutes": r["minutes"], "definition": _peak_text(peak).text}
    if policy is None:
        recorded = r["all"]
        signal = S.SIGNAL_ALL()
        needs = tuple(n for s in signals.values() for n in s[1])
    else:
        recorded = r[policy]
        signal, needs = signals[policy]
    return counted_item(
        7,
        name,
        recorded,
        0,
        r["calls"],
        S.CRIT_PEAK(
            peak=_peak_text(peak),
            policy=_POLICY_NAMES.get(policy or "", S.DEGRADATION)(),
            signal=signal,
        ),
        needs=needs,
        no_data=S.NO_PEAK(peak=_peak_text(peak)),
        details=({"peak": base}, *details),
    )
