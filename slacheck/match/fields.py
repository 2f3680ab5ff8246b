"""The eight-item field check (八项字段检查): can these traces meter what this contract promises?"""

# One row per item, each with numerator, denominator and criterion, as the seeds' audit
# product has it. The status follows from the counts alone (see ``classify``); the fix says
# whether closing the gap needs new instrumentation (a trace-schema change, naming the real
# OpenTelemetry attribute to emit) or only a computation from fields already there. Counts are
# Ibis aggregates, a handful of queries in all; Python only loops over contract terms.

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
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
from slacheck.match.mismatch import (
    Mismatch,
    TermCoverage,
    find_mismatches,
    term_coverage,
)
from slacheck.metering.context import Metering
from slacheck.metering.derive import (
    ScopeMatch,
    model_base,
    region_key,
    scope_match,
    scoped,
    succeeded,
)
from slacheck.metering.peak import at_peak_expr, minute_expr
from slacheck.trace.ingest import Traces
from slacheck.trace.schema import SetAside

__all__ = [
    "FieldCheck",
    "FieldItem",
    "ItemStatus",
    "check_fields",
    "classify",
]

_MIN = 60_000_000
SCHEMA_CHANGE = "needs a trace-schema change"
DERIVABLE_NOW = "derivable now from"


class ItemStatus(StrEnum):
    MEASURABLE = "measurable"  # recorded for every unit
    DERIVABLE = "derivable"  # recorded or computable from recorded fields for every unit
    PARTIAL = "partial"  # some units only
    NOT_MEASURABLE = "not_measurable"  # no unit
    NO_DATA = "no_data"  # nothing to measure: the denominator is 0
    NOT_APPLICABLE = "not_applicable"  # the contract has no such clause

    @property
    def gap(self) -> bool:
        return self not in (ItemStatus.MEASURABLE, ItemStatus.NOT_APPLICABLE)


def classify(recorded: int, derived: int, denominator: int) -> ItemStatus:
    """The status that follows from the counts."""
    if denominator == 0:
        return ItemStatus.NO_DATA
    if recorded >= denominator:
        return ItemStatus.MEASURABLE
    if recorded + derived >= denominator:
        return ItemStatus.DERIVABLE
    if recorded + derived > 0:
        return ItemStatus.PARTIAL
    return ItemStatus.NOT_MEASURABLE


@dataclass(frozen=True, slots=True)
class FieldItem:
    """One row of the eight-item table. ``numerator = recorded + derived``."""

    item: int
    name: str
    numerator: int
    denominator: int
    recorded: int
    derived: int
    criterion: str
    status: ItemStatus
    needs_schema_change: bool
    fix: str
    details: tuple[dict[str, Any], ...] = ()  # e.g. one per latency term for item 5

    @property
    def ratio(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "name": self.name,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "ratio": self.ratio,
            "recorded": self.recorded,
            "derived": self.derived,
            "criterion": self.criterion,
            "status": str(self.status),
            "needs_schema_change": self.needs_schema_change,
            "fix": self.fix,
            "details": [dict(d) for d in self.details],
        }


@dataclass(frozen=True, slots=True)
class FieldCheck:
    """The eight items, the metering mismatches, and how the contract's scope fared."""

    items: tuple[FieldItem, ...]
    mismatches: tuple[Mismatch, ...]
    scope: ScopeMatch

    def gaps(self) -> tuple[FieldItem, ...]:
        """Items not measurable as recorded (derivable, partial, not measurable, no data):
        those needing a trace-schema change first, then those a computation (or more traffic)
        closes; each group in item order."""
        gaps = [i for i in self.items if i.status.gap]
        return tuple(sorted(gaps, key=lambda i: (not i.needs_schema_change, i.item)))

    @property
    def ok(self) -> bool:
        """Every item measurable, derivable or not applicable: the traces can meter the contract."""
        fine = (ItemStatus.MEASURABLE, ItemStatus.DERIVABLE, ItemStatus.NOT_APPLICABLE)
        return all(i.status in fine for i in self.items)

    def item(self, number: int) -> FieldItem:
        return next(i for i in self.items if i.item == number)

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": [i.to_dict() for i in self.items],
            "mismatches": [m.to_dict() for m in self.mismatches],
            "scope": self.scope.to_dict(),
        }


# ---------------------------------------------------------------------------------------------
# fix texts


@dataclass(frozen=True, slots=True)
class _Need:
    """A field the trace must carry: what it is, and how to emit it."""

    what: str
    example: str

    def text(self) -> str:
        return f"emit {self.what}, e.g. {self.example}"


def _needs(*needs: _Need) -> str:
    return f"{SCHEMA_CHANGE}: " + "; and ".join(n.text() for n in needs)


_SERVER = _Need(
    "the vendor's server processing time",
    "the OpenTelemetry attribute http.response.header.openai-processing-ms (the vendor's "
    "processing-time header)",
)
_NETWORK = _Need(
    "the network round trip",
    "the attribute slacheck.network_ms (or the server processing time, "
    "http.response.header.openai-processing-ms, so network = duration − server − queue)",
)
_MODEL_TIME = _Need(
    "the model's time",
    "the OpenTelemetry attribute http.response.header.openai-processing-ms (or the network "
    "round trip, slacheck.network_ms, so model time = duration − network − queue)",
)
_TTFT = _Need(
    "time to first token",
    "the OpenTelemetry attribute gen_ai.response.time_to_first_chunk (Langfuse: "
    "completionStartTime; LangSmith: first_token_time or new_token events; streaming calls only)",
)
_OUTPUT_TOKENS = _Need("output tokens", "the OpenTelemetry attribute gen_ai.usage.output_tokens")
_TOKENS = _Need(
    "input and output tokens on every successful call",
    "the OpenTelemetry attributes gen_ai.usage.input_tokens and gen_ai.usage.output_tokens "
    "(calls with unusable values are set aside: see slacheck traces inspect)",
)
_ROOT = _Need(
    "one root span per agent task",
    "an invoke_agent root span (gen_ai.operation.name = invoke_agent) around each task",
)
_REGION = _Need(
    "the serving region",
    "the OpenTelemetry attribute cloud.region (or a model resource path with locations/<region>/)",
)
_RESPONSE_MODEL = _Need(
    "the model that answered beside the one asked for",
    "the OpenTelemetry attribute gen_ai.response.model (with gen_ai.request.model)",
)
_CACHED = _Need(
    "a response-cache flag", "the attribute slacheck.response_cached (a gateway's cache-hit flag)"
)
_QUEUE = _Need("the queue wait", "the attribute slacheck.queue_ms (gateway or vendor queue time)")
_TASK_IDS = _Need(
    "a task id and start time on every model call",
    "the OTLP traceId and startTimeUnixNano (rows without them are set aside: see slacheck "
    "traces inspect)",
)


def _fix(status: ItemStatus, *, derivable_from: str, needs: tuple[_Need, ...], no_data: str) -> str:
    if status is ItemStatus.DERIVABLE:
        return f"{DERIVABLE_NOW} {derivable_from}"
    if status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE):
        return _needs(*needs)
    if status is ItemStatus.NO_DATA:
        return no_data
    return ""


def _item(
    number: int,
    name: str,
    recorded: int,
    derived: int,
    denominator: int,
    criterion: str,
    *,
    needs: tuple[_Need, ...],
    derivable_from: str = "",
    no_data: str = "",
    details: tuple[dict[str, Any], ...] = (),
) -> FieldItem:
    status = classify(recorded, derived, denominator)
    return FieldItem(
        item=number,
        name=name,
        numerator=recorded + derived,
        denominator=denominator,
        recorded=recorded,
        derived=derived,
        criterion=criterion,
        status=status,
        needs_schema_change=status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE),
        fix=_fix(status, derivable_from=derivable_from, needs=needs, no_data=no_data),
        details=details,
    )


def _not_applicable(number: int, name: str, criterion: str, fix: str) -> FieldItem:
    return FieldItem(number, name, 0, 0, 0, 0, criterion, ItemStatus.NOT_APPLICABLE, False, fix, ())


def _row(t: ir.Table, **aggs: ir.Scalar) -> dict[str, Any]:
    rows: list[dict[str, Any]] = t.aggregate(**aggs).to_pyarrow().to_pylist()
    return {k: (0 if v is None else v) for k, v in rows[0].items()}


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
    # what the contract meters: calls and tasks inside its effective period, as the checks read
    c = m.calls.filter(m.in_effect(m.calls.start_us))
    t = m.tasks.filter(m.in_effect(m.tasks.start_us)).cache()
    coverage = term_coverage(contract, c, t)
    steps = _step_items(contract, c)
    unordered = (
        *steps[:2],
        _tool_item(m),
        *_task_items(contract, traces, c, t),
        _point_item(contract, coverage),
        steps[2],
        _peak_item(m, c),
    )
    items = tuple(sorted(unordered, key=lambda i: i.item))
    mismatches = find_mismatches(contract, traces, c, t, coverage=coverage, metering=m)
    return FieldCheck(
        items, mismatches, scope_match(c, contract.scope, contract.readings.model_scope)
    )


def _step_items(contract: Contract, c: ir.Table) -> tuple[FieldItem, FieldItem, FieldItem]:
    """Items 1, 2 and 6: one query over the model calls."""
    ok = succeeded(c)
    sc = scoped(c, contract)
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
    regions = contract.regions
    primary = sorted({region_key(r.name) for r in regions.primary}) if regions else []
    failover = (
        sorted({region_key(r.name) for r in regions.failover} - set(primary)) if regions else []
    )
    allowed = [*primary, *failover]
    if regions is not None:
        known = sc & c.region_key.notnull()
        aggs["in_primary"] = (known & c.region_key.isin(primary)).sum()
        aggs["in_failover"] = (known & c.region_key.isin(failover or [""])).sum()
        aggs["outside"] = (known & ~c.region_key.isin(allowed)).sum()
    r = _row(c, **aggs)
    calls_note = "no successful model calls in the traces"
    model = _item(
        1,
        "model time per step",
        r["model_rec"],
        r["model_der"],
        r["ok"],
        "successful model calls with the model's time: server processing recorded, or client "
        "duration − network − queue",
        needs=(_MODEL_TIME,),
        derivable_from="duration_ms − network_ms − queue_ms (client duration − network − queue)",
        no_data=calls_note,
    )
    network = _item(
        2,
        "network round trip per step",
        r["net_rec"],
        r["net_der"],
        r["ok"],
        "successful model calls with the network round trip: recorded, or client duration − "
        "server processing − queue",
        needs=(_NETWORK,),
        derivable_from="duration_ms − server_ms − queue_ms (client duration − server "
        "processing − queue)",
        no_data=calls_note,
    )
    if regions is None:
        region = _not_applicable(
            6,
            "region list and cross-region rights",
            "in-scope model calls with a serving region",
            "the contract lists no regions: see slacheck lint",
        )
        return model, network, region
    outside = _outside_regions(c, sc, allowed) if r["outside"] else {}
    region = _item(
        6,
        "region list and cross-region rights",
        r["region_rec"],
        r["region_der"],
        r["scope"],
        "in-scope model calls with a serving region (recorded, or from the model path); "
        f"allowed: {', '.join(allowed)}",
        needs=(_REGION,),
        derivable_from="the model resource path (locations/<region>/)",
        no_data="no in-scope model calls: check the contract's scope (slacheck traces inspect)",
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


def _outside_regions(c: ir.Table, sc: ir.BooleanValue, allowed: list[str]) -> dict[str, int]:
    """The regions outside the contract's list that served in-scope calls (the five busiest)."""
    x = c.filter(sc & c.region_key.notnull() & ~c.region_key.isin(allowed))
    top = (
        x.group_by(region=x.region_key)
        .aggregate(n=x.count())
        .order_by([ibis.desc("n"), "region"])
        .limit(5)
    )
    return {str(row["region"]): int(row["n"]) for row in top.to_pyarrow().to_pylist()}


def _tool_item(m: Metering) -> FieldItem:
    """Item 3: tool spans (in the effective period) with a duration."""
    s = m.traces.spans
    s = s.filter(m.in_effect(s.start_us))
    tool = s.kind == "tool"
    r = _row(s, n=tool.sum(), rec=(tool & s.duration_ms.notnull()).sum())
    return _item(
        3,
        "tool wait per step",
        r["rec"],
        0,
        r["n"],
        "tool spans with a duration",
        needs=(_Need("start and end times on tool spans", "execute_tool spans"),),
        no_data="instrument tool calls: emit execute_tool spans (gen_ai.operation.name = "
        "execute_tool) with start and end times",
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
    task = _item(
        4,
        "task total time",
        r["root"],
        r["derived"],
        r["tasks"],
        "tasks with a total time: one root span's duration, or first start → last end of a "
        "task with several roots or of an exported subtree, none of its rows set aside",
        needs=(_ROOT,),
        derivable_from="first span start → last span end of each task with several roots or "
        "no root in the export (nothing set aside)",
        no_data="no tasks in the traces",
    )
    rl = contract.rate_limit
    name = "rate-limit basis"
    if rl is None:
        return task, _not_applicable(
            8,
            name,
            "tasks whose requests can be counted",
            "the contract has no rate_limit: see slacheck lint",
        )
    basis = {
        RateLimitBasis.PER_REQUEST: (
            "per_request",
            "every model call has a start time (none set aside without one)",
            (_TASK_IDS,),
        ),
        RateLimitBasis.PER_TASK: ("per_task", "the task has a start time", (_TASK_IDS,)),
        RateLimitBasis.PER_TOKEN: (
            "per_token",
            "every successful model call has input and output tokens (none set aside)",
            (_TOKENS,),
        ),
    }[rl.basis]
    rate = _item(
        8,
        name,
        r[basis[0]],
        0,
        r["scoped"],
        f"tasks with in-scope calls that can be counted {rl.basis}: {basis[1]}",
        needs=basis[2],
        no_data="no tasks with in-scope model calls: check the contract's scope",
        details=({"basis": str(rl.basis), "limit": rl.limit, "period": str(rl.period)},),
    )
    return task, rate


def _term_status(cov: TermCoverage) -> tuple[ItemStatus, str]:
    """A latency term's status and fix; server processing seen only at the client is partial."""
    status = classify(cov.recorded, cov.derived, cov.in_scope)
    point = cov.point
    if (
        point is MeasurementPoint.SERVER_PROCESSING
        and status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE)
        and cov.client_only
    ):
        fix = (
            f"{_needs(_SERVER)}; until then {cov.client_only} calls are measured only at the "
            "client (an upper bound): a one-sided 'met' is provable, a breach is not"
        )
        return ItemStatus.PARTIAL, fix
    needs: tuple[_Need, ...]
    derivable_from = ""
    if point is MeasurementPoint.SERVER_PROCESSING:
        needs, derivable_from = (_SERVER,), "duration_ms − network_ms − queue_ms"
    elif point is MeasurementPoint.TIME_TO_FIRST_TOKEN:
        needs = (_TTFT,)
    elif point is MeasurementPoint.FULL_RESPONSE:
        needs = (_Need("start and end times on model-call spans", "a chat span per call"),)
    elif point is MeasurementPoint.TASK_END_TO_END:
        needs, derivable_from = (_ROOT,), "first span start → last span end of complete tasks"
    else:
        lacks_tokens = (cov.whole_request or 0) < cov.in_scope
        wants_gen = cov.basis is not TokensPerSecondBasis.WHOLE_REQUEST
        lacks_ttft = wants_gen and (cov.after_first_token or 0) < (cov.whole_request or 0)
        needs = tuple(
            n for n, on in ((_OUTPUT_TOKENS, lacks_tokens), (_TTFT, lacks_ttft)) if on
        ) or (_OUTPUT_TOKENS,)
    fix = _fix(
        status,
        derivable_from=derivable_from,
        needs=needs,
        no_data="no in-scope units: check the term's scope",
    )
    if cov.basis_unstated and fix:
        fix += " (the basis is unstated: both readings are needed until the contract states one)"
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
        return _not_applicable(
            5,
            name,
            "in-scope units where the term's metric is measurable",
            "the contract has no latency terms: see slacheck lint",
        )
    rows: list[tuple[TermCoverage, ItemStatus, str]] = [
        (cov, *_term_status(cov)) for cov in coverage
    ]
    details = tuple(
        cov.to_dict()
        | {
            "status": str(status),
            "needs_schema_change": status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE),
            "fix": fix,
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
    fixes = [f"{cov.term_id}: {fix}" for cov, status, fix in rows if fix]
    # schema changes first, as in the table
    fixes.sort(key=lambda f: SCHEMA_CHANGE not in f)
    unit = "successful in-scope calls" if worst_cov.unit == "calls" else "tasks with in-scope calls"
    others = f"; least measurable of {len(rows)} terms" if len(rows) > 1 else ""
    return FieldItem(
        item=5,
        name=name,
        numerator=worst_cov.measurable,
        denominator=worst_cov.in_scope,
        recorded=worst_cov.recorded,
        derived=worst_cov.derived,
        criterion=f"term {worst_cov.term_id} ({worst_cov.point}): {unit} where the metric is "
        f"measurable{others}",
        status=worst,
        needs_schema_change=any(d["needs_schema_change"] for d in details),
        fix="; ".join(fixes),
        details=details,
    )


def _peak_text(peak: Peak) -> str:
    d = peak.definition
    if isinstance(d, RequestRatePeak):
        return f"in-scope calls/min > {d.requests_per_minute:g}"
    if isinstance(d, UtilisationPeak):
        return f"utilisation of {d.capacity_requests_per_minute:g} calls/min > {d.percent:g} %"
    return f"the busiest {d.percent:g} % of minutes"


def _peak_item(metering: Metering, c: ir.Table) -> FieldItem:
    """Item 7: in peak minutes, is the contracted degradation observable on each call?"""
    contract = metering.contract
    name = "peak degradation"
    peak = contract.peak
    if peak is None:
        return _not_applicable(
            7,
            name,
            "peak-time calls whose degradation is observable",
            "the contract has no peak policy: see slacheck lint",
        )
    # peak minutes as every check reads them (metering.peak): one definition of "minutes"
    x = c.filter(scoped(c, contract))
    x = x.mutate(minute=minute_expr(x.start_us), _peak=at_peak_expr(metering, x))
    pc = x.filter(x._peak)
    ok = succeeded(pc)
    smaller_obs = ok & pc.request_model.notnull() & pc.response_model.notnull()
    smaller_deg = smaller_obs & (pc.served_model != pc.requested).fill_null(False)
    cache_obs = ok & pc.response_cached.notnull()
    queue_obs = ok & pc.queue_ms.notnull()
    aggs: dict[str, ir.Scalar] = {
        "minutes": pc.minute.nunique(),
        "calls": ok.sum(),
        "smaller_model": smaller_obs.sum(),
        "smaller_model_deg": smaller_deg.sum(),
        "cache": cache_obs.sum(),
        "cache_deg": (cache_obs & pc.response_cached.fill_null(False)).sum(),
        "queue": queue_obs.sum(),
        "queue_deg": (queue_obs & (pc.queue_ms > 0).fill_null(False)).sum(),
        "all": (smaller_obs & cache_obs & queue_obs).sum(),
    }
    deg = peak.degradation
    if deg is not None and deg.smaller_model is not None:
        fallback = model_base(deg.smaller_model.fallback_model)
        aggs["smaller_model_ok"] = (
            smaller_deg & (pc.served_model == fallback).fill_null(False)
        ).sum()
    if deg is not None and deg.queue is not None:
        aggs["queue_ok"] = (
            queue_obs & (pc.queue_ms <= deg.queue.max_wait_ms).fill_null(False)
        ).sum()
    if deg is not None and deg.cache is not None:
        aggs["cache_ok"] = aggs["cache_deg"]  # staleness is not in the trace: hits are all we see
    r = _row(pc, **aggs)
    policy = deg.policies[0] if deg is not None else None
    signals = {
        "smaller_model": ("gen_ai.request.model and gen_ai.response.model", (_RESPONSE_MODEL,)),
        "cache": ("a response-cache flag", (_CACHED,)),
        "queue": ("the queue wait", (_QUEUE,)),
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
    base = {"peak_minutes": r["minutes"], "definition": _peak_text(peak)}
    if policy is None:
        recorded = r["all"]
        signal = "all three signals (no policy is written, so any of the three may happen)"
        needs = tuple(n for s in signals.values() for n in s[1])
    else:
        recorded = r[policy]
        signal, needs = signals[policy]
    return _item(
        7,
        name,
        recorded,
        0,
        r["calls"],
        f"successful in-scope calls in peak minutes ({_peak_text(peak)}) whose "
        f"{policy or 'degradation'} is observable: {signal}",
        needs=needs,
        no_data=f"no in-scope call fell in a peak minute ({_peak_text(peak)}): peak behaviour "
        "cannot be observed in these traces",
        details=({"peak": base}, *details),
    )
