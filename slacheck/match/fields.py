"""The eight-item field check (八项字段检查): can these traces meter what this contract promises?"""

# One row per item, each with numerator, denominator and criterion, as the seeds' audit
# product has it. The status follows from the counts alone (see ``classify``); the fix says
# whether closing the gap needs new instrumentation (a trace-schema change, naming the real
# OpenTelemetry attribute to emit) or only a computation from fields already there. Counts are
# Ibis aggregates, a handful of queries in all; Python only loops over contract terms.

from __future__ import annotations

from dataclasses import dataclass, field
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
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.metering.context import Losses, Metering
from slacheck.metering.derive import (
    CallState,
    ScopeMatch,
    model_base,
    region_key,
    scope_match,
    scoped,
    succeeded,
)
from slacheck.metering.peak import at_peak_expr, minute_expr
from slacheck.results import EffectiveSpan
from slacheck.trace.schema import SetAside
from slacheck.trace.traces import Traces

__all__ = [
    "FieldCheck",
    "FieldItem",
    "FieldSays",
    "ItemStatus",
    "check_fields",
    "classify",
]

_MIN = 60_000_000


class FieldSays(MessageCode):
    """Everything the field check says: each item's criterion and the fix for a gap."""

    # fixes
    FIX_SCHEMA = NC_("fields.fix.schema_change", "needs a trace-schema change: {needs:and}")
    FIX_DERIVABLE = NC_("fields.fix.derivable", "derivable now from {source}")
    NEED = NC_("fields.need", "emit {what}, e.g. {example}")
    FIX_CLIENT_ONLY = NPC_(
        "fields.fix.client_only",
        "{fix}; until then {calls} call is measured only at the client (an upper bound): a "
        "one-sided 'met' is provable, a breach is not",
        "{fix}; until then {calls} calls are measured only at the client (an upper bound): a "
        "one-sided 'met' is provable, a breach is not",
        count="calls",
    )
    FIX_BASIS_UNSTATED = NC_(
        "fields.fix.basis_unstated",
        "{fix} (the basis is unstated: both readings are needed until the contract states one)",
    )
    FIX_FOR_TERM = NC_("fields.fix.for_term", "{term}: {fix}")
    FIXES = NC_("fields.fix.list", "{fixes:semi}")
    # what a trace must carry
    WHAT_SERVER = NC_("fields.what.server", "the vendor's server processing time")
    EG_SERVER = NC_(
        "fields.example.server",
        "the OpenTelemetry attribute http.response.header.openai-processing-ms (the vendor's "
        "processing-time header)",
    )
    WHAT_NETWORK = NC_("fields.what.network", "the network round trip")
    EG_NETWORK = NC_(
        "fields.example.network",
        "the attribute slacheck.network_ms (or the server processing time, "
        "http.response.header.openai-processing-ms, so network = duration − server − queue)",
    )
    WHAT_MODEL_TIME = NC_("fields.what.model_time", "the model's time")
    EG_MODEL_TIME = NC_(
        "fields.example.model_time",
        "the OpenTelemetry attribute http.response.header.openai-processing-ms (or the network "
        "round trip, slacheck.network_ms, so model time = duration − network − queue)",
    )
    WHAT_TTFT = NC_("fields.what.ttft", "time to first token")
    EG_TTFT = NC_(
        "fields.example.ttft",
        "the OpenTelemetry attribute gen_ai.response.time_to_first_chunk (Langfuse: "
        "completionStartTime; LangSmith: first_token_time or new_token events; streaming calls "
        "only)",
    )
    WHAT_OUTPUT_TOKENS = NC_("fields.what.output_tokens", "output tokens")
    EG_OUTPUT_TOKENS = NC_(
        "fields.example.output_tokens", "the OpenTelemetry attribute gen_ai.usage.output_tokens"
    )
    WHAT_TOKENS = NC_("fields.what.tokens", "input and output tokens on every successful call")
    EG_TOKENS = NC_(
        "fields.example.tokens",
        "the OpenTelemetry attributes gen_ai.usage.input_tokens and gen_ai.usage.output_tokens "
        "(calls with unusable values are set aside: see slacheck traces inspect)",
    )
    WHAT_ROOT = NC_("fields.what.root", "one root span per agent task")
    EG_ROOT = NC_(
        "fields.example.root",
        "an invoke_agent root span (gen_ai.operation.name = invoke_agent) around each task",
    )
    WHAT_REGION = NC_("fields.what.region", "the serving region")
    EG_REGION = NC_(
        "fields.example.region",
        "the OpenTelemetry attribute cloud.region (or a model resource path with "
        "locations/<region>/)",
    )
    WHAT_RESPONSE_MODEL = NC_(
        "fields.what.response_model", "the model that answered beside the one asked for"
    )
    EG_RESPONSE_MODEL = NC_(
        "fields.example.response_model",
        "the OpenTelemetry attribute gen_ai.response.model (with gen_ai.request.model)",
    )
    WHAT_CACHED = NC_("fields.what.cached", "a response-cache flag")
    EG_CACHED = NC_(
        "fields.example.cached",
        "the attribute slacheck.response_cached (a gateway's cache-hit flag)",
    )
    WHAT_QUEUE = NC_("fields.what.queue", "the queue wait")
    EG_QUEUE = NC_(
        "fields.example.queue", "the attribute slacheck.queue_ms (gateway or vendor queue time)"
    )
    WHAT_TASK_IDS = NC_("fields.what.task_ids", "a task id and start time on every model call")
    EG_TASK_IDS = NC_(
        "fields.example.task_ids",
        "the OTLP traceId and startTimeUnixNano (rows without them are set aside: see slacheck "
        "traces inspect)",
    )
    WHAT_TOOL_TIMES = NC_("fields.what.tool_times", "start and end times on tool spans")
    EG_TOOL_TIMES = NC_("fields.example.tool_times", "execute_tool spans")
    WHAT_CALL_TIMES = NC_("fields.what.call_times", "start and end times on model-call spans")
    EG_CALL_TIMES = NC_("fields.example.call_times", "a chat span per call")
    # where a derivable figure comes from
    FROM_MODEL_TIME = NC_(
        "fields.from.model_time",
        "duration_ms − network_ms − queue_ms (client duration − network − queue)",
    )
    FROM_NETWORK = NC_(
        "fields.from.network",
        "duration_ms − server_ms − queue_ms (client duration − server processing − queue)",
    )
    FROM_MODEL_PATH = NC_("fields.from.model_path", "the model resource path (locations/<region>/)")
    FROM_COMPLETE_TASK = NC_(
        "fields.from.complete_task",
        "first span start → last span end of each task with several roots or no root in the "
        "export (nothing set aside)",
    )
    FROM_SERVER = NC_("fields.from.server", "duration_ms − network_ms − queue_ms")
    FROM_COMPLETE_TASKS = NC_(
        "fields.from.complete_tasks", "first span start → last span end of complete tasks"
    )
    # nothing to measure
    NO_CALLS = NC_("fields.no_data.calls", "no successful model calls in the traces")
    UNCLASSIFIED = NPC_(
        "fields.status.unclassified",
        "{n} in-scope model call failed and no source says whose failure it was (no HTTP "
        "status, no known exception class): read as readings.unclassified_failures says "
        "({reading}); record http.response.status_code or error.type to classify it",
        "{n} in-scope model calls failed and no source says whose failure it was (no HTTP "
        "status, no known exception class): read as readings.unclassified_failures says "
        "({reading}); record http.response.status_code or error.type to classify them",
    )
    CACHE_HITS = NPC_(
        "fields.status.cache_hits",
        "{n} in-scope model call was answered from a gateway's response cache: {reading} by "
        "readings.cache_hits",
        "{n} in-scope model calls were answered from a gateway's response cache: {reading} by "
        "readings.cache_hits",
    )
    NO_SCOPED_CALLS = NC_(
        "fields.no_data.scoped_calls",
        "no in-scope model calls: check the contract's scope (slacheck traces inspect)",
    )
    NO_TOOLS = NC_(
        "fields.no_data.tools",
        "instrument tool calls: emit execute_tool spans (gen_ai.operation.name = execute_tool) "
        "with start and end times",
    )
    NO_TASKS = NC_("fields.no_data.tasks", "no tasks in the traces")
    NO_SCOPED_TASKS = NC_(
        "fields.no_data.scoped_tasks",
        "no tasks with in-scope model calls: check the contract's scope",
    )
    NO_UNITS = NC_("fields.no_data.units", "no in-scope units: check the term's scope")
    NO_PEAK = NC_(
        "fields.no_data.peak",
        "no in-scope call fell in a peak minute ({peak}): peak behaviour cannot be observed in "
        "these traces",
    )
    NA_REGIONS = NC_(
        "fields.not_applicable.regions", "the contract lists no regions: see slacheck lint"
    )
    NA_RATE = NC_(
        "fields.not_applicable.rate_limit", "the contract has no rate_limit: see slacheck lint"
    )
    NA_LATENCY = NC_(
        "fields.not_applicable.latency", "the contract has no latency terms: see slacheck lint"
    )
    NA_PEAK = NC_(
        "fields.not_applicable.peak", "the contract has no peak policy: see slacheck lint"
    )
    # criteria
    CRIT_MODEL = NC_(
        "fields.criterion.model_time",
        "successful model calls with the model's time: server processing recorded, or client "
        "duration − network − queue",
    )
    CRIT_NETWORK = NC_(
        "fields.criterion.network",
        "successful model calls with the network round trip: recorded, or client duration − "
        "server processing − queue",
    )
    CRIT_REGION_NA = NC_("fields.criterion.region_na", "in-scope model calls with a serving region")
    CRIT_REGION = NC_(
        "fields.criterion.region",
        "in-scope model calls with a serving region (recorded, or from the model path); "
        "allowed: {allowed}",
    )
    CRIT_TOOLS = NC_("fields.criterion.tools", "tool spans with a duration")
    CRIT_TASK = NC_(
        "fields.criterion.task",
        "tasks with a total time: one root span's duration, or first start → last end of a task "
        "with several roots or of an exported subtree, none of its rows set aside",
    )
    CRIT_RATE_NA = NC_("fields.criterion.rate_na", "tasks whose requests can be counted")
    CRIT_RATE = NC_(
        "fields.criterion.rate", "tasks with in-scope calls that can be counted {basis}: {how}"
    )
    HOW_PER_REQUEST = NC_(
        "fields.rate.per_request",
        "every model call has a start time (none set aside without one)",
    )
    HOW_PER_TASK = NC_("fields.rate.per_task", "the task has a start time")
    HOW_PER_TOKEN = NC_(
        "fields.rate.per_token",
        "every successful model call has input and output tokens (none set aside)",
    )
    CRIT_POINT_NA = NC_(
        "fields.criterion.point_na", "in-scope units where the term's metric is measurable"
    )
    CRIT_POINT_CALLS = NC_(
        "fields.criterion.point_calls",
        "term {term} ({point}): successful in-scope calls where the metric is measurable",
    )
    CRIT_POINT_TASKS = NC_(
        "fields.criterion.point_tasks",
        "term {term} ({point}): tasks with in-scope calls where the metric is measurable",
    )
    CRIT_POINT_CALLS_OF = NPC_(
        "fields.criterion.point_calls_of",
        "term {term} ({point}): successful in-scope calls where the metric is measurable; least "
        "measurable of {terms} term",
        "term {term} ({point}): successful in-scope calls where the metric is measurable; least "
        "measurable of {terms} terms",
        count="terms",
    )
    CRIT_POINT_TASKS_OF = NPC_(
        "fields.criterion.point_tasks_of",
        "term {term} ({point}): tasks with in-scope calls where the metric is measurable; least "
        "measurable of {terms} term",
        "term {term} ({point}): tasks with in-scope calls where the metric is measurable; least "
        "measurable of {terms} terms",
        count="terms",
    )
    CRIT_PEAK_NA = NC_(
        "fields.criterion.peak_na", "peak-time calls whose degradation is observable"
    )
    CRIT_PEAK = NC_(
        "fields.criterion.peak",
        "successful in-scope calls in peak minutes ({peak}) whose {policy} is observable: {signal}",
    )
    DEGRADATION = NC_("fields.peak.degradation", "degradation")
    SIGNAL_MODELS = NC_(
        "fields.signal.smaller_model", "gen_ai.request.model and gen_ai.response.model"
    )
    SIGNAL_ALL = NC_(
        "fields.signal.all",
        "all three signals (no policy is written, so any of the three may happen)",
    )
    PEAK_RATE = NC_("fields.peak.request_rate", "in-scope calls/min > {rate}")
    PEAK_UTILISATION = NC_(
        "fields.peak.utilisation", "utilisation of {capacity} calls/min > {percent} %"
    )
    PEAK_BUSIEST = NC_("fields.peak.busiest", "the busiest {percent} % of minutes")


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
    criterion_message: Message
    status: ItemStatus
    needs_schema_change: bool
    fix_message: Message | None
    details: tuple[dict[str, Any], ...] = ()  # e.g. one per latency term for item 5

    @property
    def ratio(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    @property
    def criterion(self) -> str:
        return self.criterion_message.text

    @property
    def fix(self) -> str:
        """The fix in English; "" when there is nothing to fix."""
        return self.fix_message.text if self.fix_message is not None else ""

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
            "messages": {
                "criterion": self.criterion_message.to_dict(),
                "fix": self.fix_message.to_dict() if self.fix_message is not None else None,
            },
            "details": [dict(d) for d in self.details],
        }


@dataclass(frozen=True, slots=True)
class FieldCheck:
    """The eight items, the metering mismatches, and how the contract's scope fared."""

    items: tuple[FieldItem, ...]
    mismatches: tuple[Mismatch, ...]
    scope: ScopeMatch
    #: model calls in the effective period no term can count: set aside, or without a scope field
    losses: Losses = field(default_factory=lambda: Losses({}, {}))
    #: in-scope calls before and after the effective period (measured here, never checked)
    effective: EffectiveSpan = field(default_factory=lambda: EffectiveSpan(0, 0))
    #: that said, when any fall outside it
    outside: Message | None = None
    #: in-scope calls of the traces measured, by call state (``metering.derive.CallState``)
    states: dict[str, int] = field(default_factory=dict)
    #: what the states need said: unclassified failures and cache hits, and their readings
    status_notes: tuple[Message, ...] = ()

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
            "lost": self.losses.to_dict(),
            "lost_notes": [n.to_dict() for n in self.losses.notes(whole_period=True)],
            "effective": {
                "calls_before": self.effective.before,
                "calls_after": self.effective.after,
                "message": None if self.outside is None else self.outside.to_dict(),
            },
            "call_states": dict(sorted(self.states.items())),
            "status_notes": [n.to_dict() for n in self.status_notes],
        }


# ---------------------------------------------------------------------------------------------
# fix texts


#: how a fix's English text starts, by kind (tests and the item-5 ordering key on these)
SCHEMA_CHANGE = FieldSays.FIX_SCHEMA.template.removesuffix(": {needs:and}")
DERIVABLE_NOW = FieldSays.FIX_DERIVABLE.template.removesuffix(" {source}")


@dataclass(frozen=True, slots=True)
class _Need:
    """A field the trace must carry: what it is, and how to emit it."""

    what: FieldSays
    example: FieldSays

    def message(self) -> Message:
        return FieldSays.NEED(what=self.what(), example=self.example())


def _needs(*needs: _Need) -> Message:
    return FieldSays.FIX_SCHEMA(needs=[n.message() for n in needs])


S = FieldSays
_SERVER = _Need(S.WHAT_SERVER, S.EG_SERVER)
_NETWORK = _Need(S.WHAT_NETWORK, S.EG_NETWORK)
_MODEL_TIME = _Need(S.WHAT_MODEL_TIME, S.EG_MODEL_TIME)
_TTFT = _Need(S.WHAT_TTFT, S.EG_TTFT)
_OUTPUT_TOKENS = _Need(S.WHAT_OUTPUT_TOKENS, S.EG_OUTPUT_TOKENS)
_TOKENS = _Need(S.WHAT_TOKENS, S.EG_TOKENS)
_ROOT = _Need(S.WHAT_ROOT, S.EG_ROOT)
_REGION = _Need(S.WHAT_REGION, S.EG_REGION)
_RESPONSE_MODEL = _Need(S.WHAT_RESPONSE_MODEL, S.EG_RESPONSE_MODEL)
_CACHED = _Need(S.WHAT_CACHED, S.EG_CACHED)
_QUEUE = _Need(S.WHAT_QUEUE, S.EG_QUEUE)
_TASK_IDS = _Need(S.WHAT_TASK_IDS, S.EG_TASK_IDS)


def _fix(
    status: ItemStatus,
    *,
    derivable_from: Message | None,
    needs: tuple[_Need, ...],
    no_data: Message | None,
) -> Message | None:
    if status is ItemStatus.DERIVABLE and derivable_from is not None:
        return FieldSays.FIX_DERIVABLE(source=derivable_from)
    if status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE):
        return _needs(*needs)
    if status is ItemStatus.NO_DATA:
        return no_data
    return None


def _item(
    number: int,
    name: str,
    recorded: int,
    derived: int,
    denominator: int,
    criterion: Message,
    *,
    needs: tuple[_Need, ...],
    derivable_from: Message | None = None,
    no_data: Message | None = None,
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
        criterion_message=criterion,
        status=status,
        needs_schema_change=status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE),
        fix_message=_fix(status, derivable_from=derivable_from, needs=needs, no_data=no_data),
        details=details,
    )


def _not_applicable(number: int, name: str, criterion: Message, fix: Message) -> FieldItem:
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
    # the traces given, all of them or the metering's period: whether they can meter the
    # contract is asked before it starts, so the effective period does not narrow them (the
    # calls that fall before and after it are counted and said)
    c = m.calls.filter(_measured(m, m.calls.start_us))
    t = m.tasks.filter(_measured(m, m.tasks.start_us)).cache()
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
    matched = scope_match(c, contract.scope, contract.readings.model_scope)
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
    calls_note = S.NO_CALLS()
    model = _item(
        1,
        "model time per step",
        r["model_rec"],
        r["model_der"],
        r["ok"],
        S.CRIT_MODEL(),
        needs=(_MODEL_TIME,),
        derivable_from=S.FROM_MODEL_TIME(),
        no_data=calls_note,
    )
    network = _item(
        2,
        "network round trip per step",
        r["net_rec"],
        r["net_der"],
        r["ok"],
        S.CRIT_NETWORK(),
        needs=(_NETWORK,),
        derivable_from=S.FROM_NETWORK(),
        no_data=calls_note,
    )
    if regions is None:
        region = _not_applicable(
            6,
            "region list and cross-region rights",
            S.CRIT_REGION_NA(),
            S.NA_REGIONS(),
        )
        return model, network, region
    outside = _outside_regions(c, sc, allowed) if r["outside"] else {}
    region = _item(
        6,
        "region list and cross-region rights",
        r["region_rec"],
        r["region_der"],
        r["scope"],
        S.CRIT_REGION(allowed=list(allowed)),
        needs=(_REGION,),
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
    """Item 3: tool spans (in the period measured) with a duration."""
    s = m.traces.spans
    s = s.filter(_measured(m, s.start_us))
    tool = s.kind == "tool"
    r = _row(s, n=tool.sum(), rec=(tool & s.duration_ms.notnull()).sum())
    return _item(
        3,
        "tool wait per step",
        r["rec"],
        0,
        r["n"],
        S.CRIT_TOOLS(),
        needs=(_Need(S.WHAT_TOOL_TIMES, S.EG_TOOL_TIMES),),
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
    task = _item(
        4,
        "task total time",
        r["root"],
        r["derived"],
        r["tasks"],
        S.CRIT_TASK(),
        needs=(_ROOT,),
        derivable_from=S.FROM_COMPLETE_TASK(),
        no_data=S.NO_TASKS(),
    )
    rl = contract.rate_limit
    name = "rate-limit basis"
    if rl is None:
        return task, _not_applicable(
            8,
            name,
            S.CRIT_RATE_NA(),
            S.NA_RATE(),
        )
    basis = {
        RateLimitBasis.PER_REQUEST: ("per_request", S.HOW_PER_REQUEST(), (_TASK_IDS,)),
        RateLimitBasis.PER_TASK: ("per_task", S.HOW_PER_TASK(), (_TASK_IDS,)),
        RateLimitBasis.PER_TOKEN: ("per_token", S.HOW_PER_TOKEN(), (_TOKENS,)),
    }[rl.basis]
    rate = _item(
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
        return ItemStatus.PARTIAL, S.FIX_CLIENT_ONLY(fix=_needs(_SERVER), calls=cov.client_only)
    needs: tuple[_Need, ...]
    derivable_from: Message | None = None
    if point is MeasurementPoint.SERVER_PROCESSING:
        needs, derivable_from = (_SERVER,), S.FROM_SERVER()
    elif point is MeasurementPoint.TIME_TO_FIRST_TOKEN:
        needs = (_TTFT,)
    elif point is MeasurementPoint.FULL_RESPONSE:
        needs = (_Need(S.WHAT_CALL_TIMES, S.EG_CALL_TIMES),)
    elif point is MeasurementPoint.TASK_END_TO_END:
        needs, derivable_from = (_ROOT,), S.FROM_COMPLETE_TASKS()
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
        return _not_applicable(
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


def _peak_item(metering: Metering, c: ir.Table) -> FieldItem:
    """Item 7: in peak minutes, is the contracted degradation observable on each call?"""
    contract = metering.contract
    name = "peak degradation"
    peak = contract.peak
    if peak is None:
        return _not_applicable(
            7,
            name,
            S.CRIT_PEAK_NA(),
            S.NA_PEAK(),
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
    signals: dict[str, tuple[Message, tuple[_Need, ...]]] = {
        "smaller_model": (S.SIGNAL_MODELS(), (_RESPONSE_MODEL,)),
        "cache": (S.WHAT_CACHED(), (_CACHED,)),
        "queue": (S.WHAT_QUEUE(), (_QUEUE,)),
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
    return _item(
        7,
        name,
        recorded,
        0,
        r["calls"],
        S.CRIT_PEAK(peak=_peak_text(peak), policy=policy or S.DEGRADATION(), signal=signal),
        needs=needs,
        no_data=S.NO_PEAK(peak=_peak_text(peak)),
        details=({"peak": base}, *details),
    )
