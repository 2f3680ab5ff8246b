# ruff: noqa: E501  (each wording is one line, as the catalogue extracts it)
"""The words documents and the terminal put around figures: names of enum values and codes,
the definition of each measurement point, and short labels (table headers, captions).

Each is a message code with its English wording; other languages come from the catalogue
(``slacheck/locale``), like every finding and note. ``NAMES``, ``LABELS`` and
``POINT_DEFINITIONS`` are read-only views by language for templates and tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from slacheck.messages import LANGUAGES, LOCALES, NC_, MessageCode, template_for

__all__ = ["LABELS", "NAMES", "POINT_DEFINITIONS", "Label", "Name", "PointDefinition", "word"]


class Name(MessageCode):
    VERDICT_MET = NC_("name.verdict.met", "met")
    VERDICT_BREACHED = NC_("name.verdict.breached", "breached")
    VERDICT_INDETERMINATE = NC_("name.verdict.indeterminate", "indeterminate")
    VERDICT_NOT_MEASURABLE = NC_("name.verdict.not_measurable", "not measurable")
    VERDICT_NO_DATA = NC_("name.verdict.no_data", "no data")
    POINT_SERVER_PROCESSING = NC_("name.point.server_processing", "server processing time")
    POINT_TIME_TO_FIRST_TOKEN = NC_("name.point.time_to_first_token", "time to first token (TTFT)")
    POINT_FULL_RESPONSE = NC_("name.point.full_response", "full response time")
    POINT_TASK_END_TO_END = NC_("name.point.task_end_to_end", "agent task end-to-end time")
    POINT_OUTPUT_TOKENS_PER_SECOND = NC_(
        "name.point.output_tokens_per_second", "output speed (tokens per second)"
    )
    TPS_BASIS_WHOLE_REQUEST = NC_(
        "name.tps_basis.whole_request", "output tokens over the whole request (duration)"
    )
    TPS_BASIS_AFTER_FIRST_TOKEN = NC_(
        "name.tps_basis.after_first_token",
        "output tokens over the generation after the first token (duration − time to first token)",
    )
    TPS_BASIS_UNSTATED = NC_("name.tps_basis.unstated", "not stated")
    WINDOW_CALENDAR_MONTH = NC_("name.window.calendar_month", "calendar month")
    WINDOW_CALENDAR_QUARTER = NC_("name.window.calendar_quarter", "calendar quarter")
    WINDOW_ROLLING_30_DAYS = NC_("name.window.rolling_30_days", "rolling 30 days")
    METHOD_NEAREST_RANK = NC_("name.method.nearest_rank", "nearest rank")
    METHOD_LINEAR = NC_("name.method.linear", "linear interpolation")
    ROUTING_NEVER = NC_("name.routing.never", "never")
    ROUTING_PEAK_ONLY = NC_("name.routing.peak_only", "at peak only")
    ROUTING_ALWAYS = NC_("name.routing.always", "at any time")
    DECIDER_VENDOR = NC_("name.decider.vendor", "the vendor")
    DECIDER_CUSTOMER = NC_("name.decider.customer", "the customer")
    DECIDER_JOINT = NC_("name.decider.joint", "both parties jointly")
    BASIS_PER_REQUEST = NC_("name.basis.per_request", "per request")
    BASIS_PER_TASK = NC_("name.basis.per_task", "per agent task")
    BASIS_PER_TOKEN = NC_("name.basis.per_token", "per token")
    UNIT_OF_BASIS_PER_REQUEST = NC_("name.unit_of_basis.per_request", "requests")
    UNIT_OF_BASIS_PER_TASK = NC_("name.unit_of_basis.per_task", "tasks")
    UNIT_OF_BASIS_PER_TOKEN = NC_("name.unit_of_basis.per_token", "tokens")
    PERIOD_SECOND = NC_("name.period.second", "second")
    PERIOD_MINUTE = NC_("name.period.minute", "minute")
    PERIOD_HOUR = NC_("name.period.hour", "hour")
    PERIOD_DAY = NC_("name.period.day", "day")
    POLICY_SMALLER_MODEL = NC_("name.policy.smaller_model", "serve a smaller model")
    POLICY_CACHE = NC_("name.policy.cache", "serve cached answers")
    POLICY_QUEUE = NC_("name.policy.queue", "queue calls")
    POLICY_NONE = NC_("name.policy.none", "no policy written")
    SEVERITY_HIGH = NC_("name.severity.high", "high")
    SEVERITY_MEDIUM = NC_("name.severity.medium", "medium")
    SEVERITY_LOW = NC_("name.severity.low", "low")
    STATUS_MEASURABLE = NC_("name.status.measurable", "measurable")
    STATUS_DERIVABLE = NC_("name.status.derivable", "derivable")
    STATUS_PARTIAL = NC_("name.status.partial", "partial")
    STATUS_NOT_MEASURABLE = NC_("name.status.not_measurable", "not measurable")
    STATUS_NO_DATA = NC_("name.status.no_data", "no data")
    STATUS_NOT_APPLICABLE = NC_("name.status.not_applicable", "not applicable")
    ITEM_1 = NC_("name.item.1", "model time per step")
    ITEM_2 = NC_("name.item.2", "network round trip per step")
    ITEM_3 = NC_("name.item.3", "tool wait per step")
    ITEM_4 = NC_("name.item.4", "task total time")
    ITEM_5 = NC_("name.item.5", "contracted measurement point")
    ITEM_6 = NC_("name.item.6", "region list and cross-region rights")
    ITEM_7 = NC_("name.item.7", "peak degradation")
    ITEM_8 = NC_("name.item.8", "rate-limit basis")
    KIND_LATENCY = NC_("name.kind.latency", "latency")
    KIND_TIME_SLICE = NC_("name.kind.time_slice", "latency (time slices)")
    KIND_PEAK = NC_("name.kind.peak", "peak degradation")
    KIND_REGIONS = NC_("name.kind.regions", "region list")
    KIND_ROUTING = NC_("name.kind.routing", "cross-region routing")
    KIND_RESIDENCY = NC_("name.kind.residency", "data residency")
    KIND_RATE_LIMIT = NC_("name.kind.rate_limit", "rate limit")
    KIND_AVAILABILITY = NC_("name.kind.availability", "availability")
    PART_MODEL = NC_("name.part.model", "model (server processing)")
    PART_NETWORK = NC_("name.part.network", "network round trip")
    PART_QUEUE = NC_("name.part.queue", "queue wait")
    PART_UNSPLIT = NC_("name.part.unsplit", "model call, not split")
    PART_TOOL = NC_("name.part.tool", "tool calls")
    PART_RETRIEVAL = NC_("name.part.retrieval", "retrieval")
    PART_RETRIES = NC_("name.part.retries", "retries and backoff")
    PART_GAPS = NC_("name.part.gaps", "unaccounted gaps")
    SET_ASIDE_MISSING_ID = NC_("name.set_aside.missing_id", "missing task or span id")
    SET_ASIDE_MISSING_TIMESTAMP = NC_("name.set_aside.missing_timestamp", "missing timestamp")
    SET_ASIDE_MISSING_END = NC_("name.set_aside.missing_end", "start recorded, no end")
    SET_ASIDE_UNPARSEABLE_TIMESTAMP = NC_(
        "name.set_aside.unparseable_timestamp", "unparseable timestamp"
    )
    SET_ASIDE_UNPARSEABLE_NUMBER = NC_("name.set_aside.unparseable_number", "unparseable number")
    SET_ASIDE_END_BEFORE_START = NC_("name.set_aside.end_before_start", "end before start")
    SET_ASIDE_DUPLICATE_SPAN_ID = NC_("name.set_aside.duplicate_span_id", "duplicate span id")
    SET_ASIDE_NEGATIVE_TOKENS = NC_("name.set_aside.negative_tokens", "negative token count")
    SET_ASIDE_IMPOSSIBLE_VALUE = NC_("name.set_aside.impossible_value", "impossible value")
    EXCLUSION_MAINTENANCE = NC_("name.exclusion.maintenance", "maintenance window")
    EXCLUSION_LONG_INPUT = NC_("name.exclusion.long_input", "input over the token limit")
    EXCLUSION_DOWNGRADED_TIER = NC_("name.exclusion.downgraded_tier", "downgraded service tier")
    EXCLUSION_CUSTOMER_ERROR = NC_("name.exclusion.customer_error", "customer-caused error")
    EXCLUSION_CACHE_HIT = NC_("name.exclusion.cache_hit", "gateway cache hit")
    EXCLUSION_UNCLASSIFIED_FAILURE = NC_(
        "name.exclusion.unclassified_failure", "unclassified failure"
    )
    ROLE_PRIMARY = NC_("name.role.primary", "primary")
    ROLE_FAILOVER = NC_("name.role.failover", "failover")
    ROLE_UNLISTED = NC_("name.role.unlisted", "not in the contract's list")
    ROLE_UNKNOWN = NC_("name.role.unknown", "not recorded")
    DAY_MON = NC_("name.day.mon", "Monday")
    DAY_TUE = NC_("name.day.tue", "Tuesday")
    DAY_WED = NC_("name.day.wed", "Wednesday")
    DAY_THU = NC_("name.day.thu", "Thursday")
    DAY_FRI = NC_("name.day.fri", "Friday")
    DAY_SAT = NC_("name.day.sat", "Saturday")
    DAY_SUN = NC_("name.day.sun", "Sunday")


class PointDefinition(MessageCode):
    SERVER_PROCESSING = NC_(
        "point_definition.server_processing",
        "the time the vendor's service spends on one call, from receipt of the complete request at the vendor's edge to dispatch of the last byte of the response, as the vendor reports it per call (for example the openai-processing-ms response header); network transit and any queueing before the vendor's edge are not included",
    )
    TIME_TO_FIRST_TOKEN = NC_(
        "point_definition.time_to_first_token",
        "the time from the moment the customer's client sends a request to the moment it receives the first content chunk of the response, measured at the client; it applies to streaming calls only",
    )
    FULL_RESPONSE = NC_(
        "point_definition.full_response",
        "the time from the moment the customer's client sends a request to the moment it receives the last byte of the response, measured at the client; network round trip and queueing on either side are included",
    )
    TASK_END_TO_END = NC_(
        "point_definition.task_end_to_end",
        "the time one agent task takes from its start to its end, over all of its steps: every model call, network round trip, tool call, retry and queue wait is included; it is measured by the task's root span or, where there is none, from the start of the task's first span to the end of its last",
    )
    OUTPUT_TOKENS_PER_SECOND = NC_(
        "point_definition.output_tokens_per_second",
        "the output tokens of one call divided by its generation time in seconds",
    )


class Label(MessageCode):
    TERM = NC_("label.term", "Term")
    KIND = NC_("label.kind", "Kind")
    WINDOW = NC_("label.window", "Window")
    VERDICT = NC_("label.verdict", "Verdict")
    OBSERVED = NC_("label.observed", "Observed")
    GOOD_TOTAL = NC_("label.good_total", "Good / total")
    CRITERION = NC_("label.criterion", "Criterion")
    EXAMPLES = NC_("label.examples", "Example task ids")
    WHERE_ROWS = NC_("label.where_rows", "Examples (file: row)")
    ROW_REF = NC_("label.row_ref", "{file}: row {row}")
    NOTES = NC_("label.notes", "Notes")
    PARTIAL = NC_("label.partial", "partial window")
    ITEM = NC_("label.item", "Item")
    NUMERATOR = NC_("label.numerator", "Numerator")
    DENOMINATOR = NC_("label.denominator", "Denominator")
    RATIO = NC_("label.ratio", "Ratio")
    STATUS = NC_("label.status", "Status")
    FIX = NC_("label.fix", "How to close the gap")
    SCHEMA_CHANGE = NC_("label.schema_change", "needs a trace-schema change")
    COMPUTATION = NC_("label.computation", "a computation from recorded fields")
    FILE = NC_("label.file", "File")
    FORMAT = NC_("label.format", "Format")
    ROWS = NC_("label.rows", "Rows")
    SHA256 = NC_("label.sha256", "SHA-256")
    CONTRACT = NC_("label.contract", "Contract")
    VENDOR = NC_("label.vendor", "Vendor")
    CUSTOMER = NC_("label.customer", "Customer")
    PERIOD = NC_("label.period", "Period")
    TIME_ZONE = NC_("label.time_zone", "Time zone")
    EFFECTIVE = NC_("label.effective", "Effective")
    OPEN_ENDED = NC_("label.open_ended", "open-ended")
    NONE = NC_("label.none", "none")
    NOT_STATED = NC_("label.not_stated", "not stated")
    YES = NC_("label.yes", "yes")
    NO = NC_("label.no", "no")
    PAGE = NC_("label.page", "Page")
    OF = NC_("label.of", "of")
    CODE = NC_("label.code", "Code")
    SEVERITY = NC_("label.severity", "Severity")
    WHERE = NC_("label.where", "Clause")
    FINDING = NC_("label.finding", "Finding")
    PART = NC_("label.part", "Part")
    PER_TASK = NC_("label.per_task", "Per task (mean)")
    SHARE = NC_("label.share", "Share")
    REASON = NC_("label.reason", "Reason")
    COUNT = NC_("label.count", "Rows")
    CREDIT = NC_("label.credit", "Credit owed")
    CLAIM_BY = NC_("label.claim_by", "Claim by")
    AVAILABILITY = NC_("label.availability", "Availability")
    NO_RESULTS = NC_("label.no_results", "No results in the period.")
    MODEL = NC_("label.model", "Model (as recorded)")
    CALLS = NC_("label.calls", "Model calls")
    IN_SCOPE = NC_("label.in_scope", "In scope")
    REGION = NC_("label.region", "Serving region")
    ROLE = NC_("label.role", "Role")


def word(code: MessageCode, lang: str) -> str:
    """``code``'s wording in ``lang`` (English where the catalogue has none)."""
    return template_for(code, lang) or code.template


class _ByKey(Mapping[str, str]):
    """key → wording in one language, for the codes ``prefix.<key>`` of one enum."""

    def __init__(self, codes: Mapping[str, MessageCode], lang: str) -> None:
        self._codes = codes
        self._lang = lang

    def __getitem__(self, key: str) -> str:
        return word(self._codes[key], self._lang)

    def __getattr__(self, key: str) -> str:  # templates write L.term
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._codes)

    def __len__(self) -> int:
        return len(self._codes)


def _keyed(kind: type[MessageCode], prefix: str) -> dict[str, MessageCode]:
    return {c.value.removeprefix(prefix): c for c in kind if c.value.startswith(prefix)}


class _Languages(Mapping[str, _ByKey]):
    def __init__(self, codes: Mapping[str, MessageCode]) -> None:
        self._codes = codes
        self._by_lang: dict[str, _ByKey] = {}

    def __getitem__(self, lang: str) -> _ByKey:
        if lang not in LOCALES:
            raise KeyError(lang)
        if lang not in self._by_lang:
            self._by_lang[lang] = _ByKey(self._codes, lang)
        return self._by_lang[lang]

    def __iter__(self) -> Iterator[str]:
        return iter(LANGUAGES)

    def __len__(self) -> int:
        return len(LANGUAGES)


def _groups() -> dict[str, _Languages]:
    groups: dict[str, dict[str, MessageCode]] = {}
    for c in Name:
        _, group, key = c.value.split(".", 2)
        groups.setdefault(group, {})[key] = c
    return {g: _Languages(codes) for g, codes in groups.items()}


#: NAMES[group][lang][key]: the name of an enum value or code
NAMES: Mapping[str, _Languages] = _groups()
#: POINT_DEFINITIONS[lang][point]: where the clock starts and stops
POINT_DEFINITIONS = _Languages(_keyed(PointDefinition, "point_definition."))
#: LABELS[lang][key] (or .key): short labels for shared partials
LABELS = _Languages(_keyed(Label, "label."))
