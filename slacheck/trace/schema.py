"""The canonical span table: one row per span, whatever the source format."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import pyarrow as pa


class Kind(StrEnum):
    """What a span is, as far as the contract cares."""

    TASK = "task"
    LLM = "llm"
    TOOL = "tool"
    RETRIEVAL = "retrieval"
    OTHER = "other"


class Status(StrEnum):
    """How a span ended: its status class (``conventions.yaml``, section ``status``)."""

    OK = "ok"
    #: the customer's own error: a 4xx other than 429, or an SDK class that means one
    CUSTOMER_ERROR = "customer_error"
    THROTTLED = "throttled"
    #: the vendor failed: a 5xx, or an SDK class that means one
    VENDOR_ERROR = "vendor_error"
    TIMEOUT = "timeout"
    #: a failure no source can classify (a connection error, a bare failure flag)
    UNCLASSIFIED = "unclassified"


#: The status earlier versions (and gateway mappings) wrote for every failure but throttling and
#: timeouts: read by the same rule as a reader's (HTTP status, error type), else unclassified.
LEGACY_ERROR = "error"


class StatusSource(StrEnum):
    """Which source classified a failed call (``status_source``, for ``traces inspect``)."""

    ERROR_TYPE = "error_type"
    EXCEPTION_TYPE = "exception_type"
    HTTP_STATUS = "http_status"
    MESSAGE = "message"
    #: failed, and nothing said how: the call is unclassified
    FAILURE_ONLY = "failure_only"
    #: the legacy status ``error`` with nothing to classify it
    LEGACY = "legacy"


class SetAside(StrEnum):
    """Why a row was set aside. Readers write one of these into ``defect`` for rows they
    could parse only in part; the quality stage adds the ones it finds itself."""

    MISSING_ID = "missing_id"
    MISSING_TIMESTAMP = "missing_timestamp"
    #: a start and no end: a span still open when exported (a call never answered, or a
    #: Langfuse observation without ``endTime``). The row has no duration and no outcome, so
    #: it is set aside; its start still counts in its task's recorded time, a lower bound
    #: (``metering.derive.TaskSource.UNENDED``)
    MISSING_END = "missing_end"
    UNPARSEABLE_TIMESTAMP = "unparseable_timestamp"
    UNPARSEABLE_NUMBER = "unparseable_number"
    END_BEFORE_START = "end_before_start"
    DUPLICATE_SPAN_ID = "duplicate_span_id"
    NEGATIVE_TOKENS = "negative_tokens"
    #: a measurement no clock can give: negative, not finite, or longer than its own span;
    #: or a token count beyond ``MAX_TOKENS_PER_CALL``; reported with the field, e.g.
    #: ``impossible_value:ttft_ms``
    IMPOSSIBLE_VALUE = "impossible_value"
    #: a timestamp outside the years slacheck's calendars cover (``PLAUSIBLE_US``), reported
    #: with the field, e.g. ``out_of_range:start_us``
    OUT_OF_RANGE = "out_of_range"


#: Timestamps slacheck can place in a calendar window: 1970-01-01 to 2200-01-01 (UTC, µs).
#: One span dated in year 3000 would otherwise stretch every window list to a millennium.
PLAUSIBLE_US: tuple[int, int] = (0, 7_258_118_400_000_000)

#: A quarter hour in µs: every time zone's offset is a whole number of them, so a local
#: midnight (a window's edge) falls on one; model calls are counted per UTC quarter hour.
QUARTER_HOUR_US = 15 * 60_000_000


#: The most tokens one model call can count in a field (input, output, cached). The largest
#: context windows hold about 10⁷ tokens; a count beyond 10⁹ is no call's, and a row with one
#: is set aside (``impossible_value:<field>``). Below it a sum over nine billion calls fits
#: in int64, so no sum of token counts can overflow.
MAX_TOKENS_PER_CALL = 10**9
TOKEN_FIELDS: tuple[str, ...] = ("input_tokens", "output_tokens", "cached_tokens")

#: Measurements that happen inside a span, so none can be negative or exceed the span itself.
WITHIN_SPAN_MS: tuple[str, ...] = ("ttft_ms", "server_ms", "queue_ms", "network_ms")

#: Slack for a within-span measurement recorded at a finer clock than the span's timestamps
#: (seconds as a float against millisecond timestamps): more than this over the span's
#: duration is impossible, not rounding.
WITHIN_SPAN_SLACK_MS = 1.0


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: pa.DataType
    unit: str
    doc: str
    #: which kinds the field applies to, for coverage figures (None: every span)
    applies_to: tuple[Kind, ...] | None = None


_LLM = (Kind.LLM,)

#: The canonical columns, in order. Nulls mean "the source did not record it"; never invented.
COLUMNS: tuple[Column, ...] = (
    Column("task_id", pa.string(), "", "The agent task: the trace id (hex or uuid, lower case)."),
    Column("span_id", pa.string(), "", "The span (observation, run) id, unique within its task."),
    Column("parent_span_id", pa.string(), "", "The parent span id; null for a root span."),
    Column("kind", pa.string(), "", "`task`, `llm`, `tool`, `retrieval` or `other`."),
    Column("name", pa.string(), "", "The span name as the source wrote it."),
    Column("operation", pa.string(), "", "`gen_ai.operation.name` or the source's equivalent."),
    Column("start_us", pa.int64(), "µs", "Start, UTC microseconds since the Unix epoch."),
    Column("end_us", pa.int64(), "µs", "End, UTC microseconds since the Unix epoch."),
    Column("duration_ms", pa.float64(), "ms", "end − start, recomputed from the timestamps."),
    Column("ttft_ms", pa.float64(), "ms", "Time to first token: request sent → first chunk.", _LLM),
    Column(
        "server_ms",
        pa.float64(),
        "ms",
        "Vendor-side processing time (e.g. `openai-processing-ms`).",
        _LLM,
    ),
    Column("queue_ms", pa.float64(), "ms", "Time queued before service (client or gateway).", _LLM),
    Column("network_ms", pa.float64(), "ms", "Network round trip, when recorded.", _LLM),
    Column("request_model", pa.string(), "", "Model asked for.", _LLM),
    Column("response_model", pa.string(), "", "Model that answered.", _LLM),
    Column("provider", pa.string(), "", "`gen_ai.provider.name` (older `gen_ai.system`).", _LLM),
    Column("endpoint", pa.string(), "", "`server.address` or the API base host.", _LLM),
    Column("region", pa.string(), "", "Serving region (`cloud.region` or derived).", _LLM),
    Column(
        "status",
        pa.string(),
        "",
        "`ok`, `customer_error`, `throttled`, `vendor_error`, `timeout` or `unclassified` "
        "(`error`, as earlier versions wrote, is read as its HTTP status and error type say).",
    ),
    Column(
        "status_source",
        pa.string(),
        "",
        "What classified a failure: `error_type`, `exception_type`, `http_status`, `message`, "
        "`failure_only` (nothing did) or `legacy`, with the rule after a colon "
        "(`error_type:class`); null for a call that did not fail.",
    ),
    Column("http_status", pa.int64(), "", "HTTP status code of the call.", _LLM),
    Column("error_type", pa.string(), "", "`error.type` or the source's error text class."),
    Column("attempt", pa.int64(), "", "1 for the first try, 2 for the first retry, …", _LLM),
    Column("input_tokens", pa.int64(), "tokens", "Input (prompt) tokens.", _LLM),
    Column("output_tokens", pa.int64(), "tokens", "Output (completion) tokens.", _LLM),
    Column("cached_tokens", pa.int64(), "tokens", "Input tokens read from the prompt cache.", _LLM),
    Column("service_tier", pa.string(), "", "Service tier that served the call.", _LLM),
    Column(
        "response_cached",
        pa.bool_(),
        "",
        "The answer came from a response cache, not the model (gateway flag).",
        _LLM,
    ),
    Column("source_file", pa.string(), "", "File the row came from."),
    Column("source_ref", pa.string(), "", "Row number, span id or JSON path within that file."),
    Column(
        "defect",
        pa.string(),
        "",
        "Set by a reader when part of the row could not be parsed: a `SetAside` reason "
        "and the field, e.g. `unparseable_timestamp:start_us`. Null for a clean row.",
    ),
    Column(
        "evidence",
        pa.string(),
        "",
        "Which source filled each fact a convention supplied, as `field=source` pairs joined "
        "by `;` in column order (`provider=gen_ai.system;endpoint=server.address`); a source "
        "is an attribute or key, `event:<name>`, or `derived:endpoint` for a provider named by "
        "the endpoint host. Null when no convention supplied a fact (tables, generated spans).",
    ),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
ARROW_SCHEMA: pa.Schema = pa.schema([pa.field(c.name, c.type) for c in COLUMNS])
BY_NAME: dict[str, Column] = {c.name: c for c in COLUMNS}


def empty_table() -> pa.Table:
    """A canonical table with no rows."""
    return ARROW_SCHEMA.empty_table()


def conform(table: pa.Table) -> pa.Table:
    """Add missing canonical columns as nulls, order them, and cast to the canonical types.

    Raises ``ValueError`` for a column that cannot be cast; readers turn that into an
    ``InputError`` naming the file.
    """
    n = table.num_rows
    arrays = []
    for col in COLUMNS:
        if col.name in table.column_names:
            arrays.append(table.column(col.name).cast(col.type))
        else:
            arrays.append(pa.nulls(n, type=col.type))
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)


def reference_markdown() -> str:
    """The canonical table as a Markdown table, for the README."""
    lines = ["| column | type | unit | applies to | meaning |", "|---|---|---|---|---|"]
    for c in COLUMNS:
        kinds = "all" if c.applies_to is None else ", ".join(k.value for k in c.applies_to)
        lines.append(f"| `{c.name}` | {c.type} | {c.unit or '—'} | {kinds} | {c.doc} |")
    lines.append(
        "| `orphan` | bool | — | all | Added by ingestion: the parent span is not in the task. |"
    )
    return "\n".join(lines) + "\n"
