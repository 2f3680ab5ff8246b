"""The field check's rows: an item's status from its counts, its criterion, and the fix a gap
needs, in words.

What ``match.fields`` derives from the traces (the counts per item) becomes a ``FieldItem``
here: ``classify`` gives its status, and the fix says whether closing the gap needs new
instrumentation (a trace-schema change, naming the real OpenTelemetry attribute to emit) or
only a computation from fields already there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from slacheck.match.findings import Mismatch
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.results import EffectiveSpan, Losses, ScopeMatch

__all__ = [
    "DERIVABLE_NOW",
    "SCHEMA_CHANGE",
    "FieldCheck",
    "FieldItem",
    "FieldSays",
    "ItemStatus",
    "Need",
    "classify",
    "counted_item",
    "gap_fix",
    "not_applicable_item",
    "schema_change_fix",
]


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
    # the degradation policies by name, as the criterion of item 7 says them
    POLICY_SMALLER_MODEL = NC_("fields.peak.policy.smaller_model", "smaller_model")
    POLICY_CACHE = NC_("fields.peak.policy.cache", "cache")
    POLICY_QUEUE = NC_("fields.peak.policy.queue", "queue")
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


# ---------------------------------------------------------------------------------------------
# fix texts


#: how a fix's English text starts, by kind (tests and the item-5 ordering key on these)
SCHEMA_CHANGE = FieldSays.FIX_SCHEMA.template.removesuffix(": {needs:and}")
DERIVABLE_NOW = FieldSays.FIX_DERIVABLE.template.removesuffix(" {source}")


@dataclass(frozen=True, slots=True)
class Need:
    """A field the trace must carry: what it is, and how to emit it."""

    what: FieldSays
    example: FieldSays

    def message(self) -> Message:
        return FieldSays.NEED(what=self.what(), example=self.example())


def schema_change_fix(*needs: Need) -> Message:
    """The fix that needs new instrumentation: each field to emit, and how."""
    return FieldSays.FIX_SCHEMA(needs=[n.message() for n in needs])


#: the fields a fix can ask the trace to carry
NEED_SERVER = Need(FieldSays.WHAT_SERVER, FieldSays.EG_SERVER)
NEED_NETWORK = Need(FieldSays.WHAT_NETWORK, FieldSays.EG_NETWORK)
NEED_MODEL_TIME = Need(FieldSays.WHAT_MODEL_TIME, FieldSays.EG_MODEL_TIME)
NEED_TTFT = Need(FieldSays.WHAT_TTFT, FieldSays.EG_TTFT)
NEED_OUTPUT_TOKENS = Need(FieldSays.WHAT_OUTPUT_TOKENS, FieldSays.EG_OUTPUT_TOKENS)
NEED_TOKENS = Need(FieldSays.WHAT_TOKENS, FieldSays.EG_TOKENS)
NEED_ROOT = Need(FieldSays.WHAT_ROOT, FieldSays.EG_ROOT)
NEED_REGION = Need(FieldSays.WHAT_REGION, FieldSays.EG_REGION)
NEED_RESPONSE_MODEL = Need(FieldSays.WHAT_RESPONSE_MODEL, FieldSays.EG_RESPONSE_MODEL)
NEED_CACHED = Need(FieldSays.WHAT_CACHED, FieldSays.EG_CACHED)
NEED_QUEUE = Need(FieldSays.WHAT_QUEUE, FieldSays.EG_QUEUE)
NEED_TASK_IDS = Need(FieldSays.WHAT_TASK_IDS, FieldSays.EG_TASK_IDS)


def gap_fix(
    status: ItemStatus,
    *,
    derivable_from: Message | None,
    needs: tuple[Need, ...],
    no_data: Message | None,
) -> Message | None:
    """The fix for an item of this status: a computation, new fields, or why there is no data."""
    if status is ItemStatus.DERIVABLE and derivable_from is not None:
        return FieldSays.FIX_DERIVABLE(source=derivable_from)
    if status in (ItemStatus.PARTIAL, ItemStatus.NOT_MEASURABLE):
        return schema_change_fix(*needs)
    if status is ItemStatus.NO_DATA:
        return no_data
    return None


def counted_item(
    number: int,
    name: str,
    recorded: int,
    derived: int,
    denominator: int,
    criterion: Message,
    *,
    needs: tuple[Need, ...],
    derivable_from: Message | None = None,
    no_data: Message | None = None,
    details: tuple[dict[str, Any], ...] = (),
) -> FieldItem:
    """An item from its counts: ``classify`` gives the status, ``gap_fix`` the fix."""
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
        fix_message=gap_fix(status, derivable_from=derivable_from, needs=needs, no_data=no_data),
        details=details,
    )


def not_applicable_item(number: int, name: str, criterion: Message, fix: Message) -> FieldItem:
    """An item for a clause the contract does not have; ``fix`` points to the lint."""
    return FieldItem(number, name, 0, 0, 0, 0, criterion, ItemStatus.NOT_APPLICABLE, False, fix, ())


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
