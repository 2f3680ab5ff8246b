"""The contract's terms as typed, validated pydantic models; the field descriptions are the docs."""

from __future__ import annotations

import datetime as dt
import itertools
import typing
from enum import StrEnum
from typing import Annotated, Any, Literal, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)


class FieldError(ValueError):
    """A rule broken at ``path`` below the model that raised it: a cross-field rule, or
    (``cross_field=False``) a value of the wrong kind that pydantic would have coerced.

    pydantic keeps the exception in the error's context, so the loader can point at the exact
    YAML node (e.g. ``regions.failover[1]``) rather than at the parent mapping.
    """

    def __init__(
        self, path: tuple[str | int, ...], message: str, *, cross_field: bool = True
    ) -> None:
        super().__init__(message)
        self.path = path
        self.cross_field = cross_field


class _Model(BaseModel):
    """Strict base: unknown keys are errors (with a "did you mean"), models are frozen, numbers
    are finite, and a yes/no is never read as a number (YAML's `true` is not 1 ms)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_enum_values=False, allow_inf_nan=False
    )

    @model_validator(mode="before")
    @classmethod
    def _no_bool_as_number(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                field = cls.model_fields.get(key) if isinstance(key, str) else None
                if isinstance(value, bool) and field and not _admits_bool(field.annotation):
                    raise FieldError(
                        (key,),
                        f"{str(value).lower()} is a yes/no, not a value for this field",
                        cross_field=False,
                    )
        return data

    @field_validator("*", mode="after")
    @classmethod
    def _sane(cls, value: Any) -> Any:
        for item in value if isinstance(value, list) else (value,):
            _check_sane(item)
        return value


#: Contract numbers beyond these validate in Python and break later in a 64-bit engine, a
#: ``timedelta`` or a float division; no signed SLA needs them.
_MAX_NUMBER = 10**12
_MIN_FRACTION = 1e-6
#: Years a contract date may fall in: the calendars slacheck builds windows from.
YEARS = (1970, 2199)


def _check_sane(value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float) and abs(value) > _MAX_NUMBER:
        raise ValueError(f"{value:g} is beyond any contract figure (at most {_MAX_NUMBER:,})")
    if isinstance(value, float) and value != 0 and abs(value) < _MIN_FRACTION:
        raise ValueError(f"{value:g} is too small to mean anything (at least {_MIN_FRACTION:g})")
    if isinstance(value, dt.date) and not YEARS[0] <= value.year <= YEARS[1]:
        raise ValueError(f"year {value.year} is outside {YEARS[0]}–{YEARS[1]}")


def _admits_bool(annotation: Any) -> bool:
    if annotation is bool:
        return True
    return any(_admits_bool(a) for a in typing.get_args(annotation))


# ---------------------------------------------------------------------------------------------
# Enumerations


class MeasurementPoint(StrEnum):
    """Where the clock starts and stops (计量点). Points nest: full_response ≥ server_processing."""

    SERVER_PROCESSING = "server_processing"
    TIME_TO_FIRST_TOKEN = "time_to_first_token"
    FULL_RESPONSE = "full_response"
    TASK_END_TO_END = "task_end_to_end"
    OUTPUT_TOKENS_PER_SECOND = "output_tokens_per_second"


class PercentileMethod(StrEnum):
    NEAREST_RANK = "nearest_rank"
    LINEAR = "linear"


class Window(StrEnum):
    CALENDAR_MONTH = "calendar_month"
    CALENDAR_QUARTER = "calendar_quarter"
    ROLLING_30_DAYS = "rolling_30_days"


class Direction(StrEnum):
    AT_MOST = "at_most"
    AT_LEAST = "at_least"


class TokensPerSecondBasis(StrEnum):
    WHOLE_REQUEST = "whole_request"
    AFTER_FIRST_TOKEN = "after_first_token"
    UNSTATED = "unstated"


class RoutingPermission(StrEnum):
    NEVER = "never"
    PEAK_ONLY = "peak_only"
    ALWAYS = "always"


class Decider(StrEnum):
    VENDOR = "vendor"
    CUSTOMER = "customer"
    JOINT = "joint"


class RateLimitBasis(StrEnum):
    PER_REQUEST = "per_request"
    PER_TASK = "per_task"
    PER_TOKEN = "per_token"


class Period(StrEnum):
    SECOND = "second"
    MINUTE = "minute"
    HOUR = "hour"
    DAY = "day"

    @property
    def seconds(self) -> int:
        return {"second": 1, "minute": 60, "hour": 3600, "day": 86400}[self.value]


# ---------------------------------------------------------------------------------------------
# Identity and scope


class Effective(_Model):
    start: dt.date = Field(description="First day the contract applies (inclusive).")
    end: dt.date | None = Field(
        default=None, description="Last day the contract applies (inclusive); omit if open-ended."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end is not None and self.end < self.start:
            raise FieldError(("end",), "effective.end is before effective.start; swap them")
        return self


class Scope(_Model):
    providers: list[str] = Field(
        default_factory=list,
        description="Providers the terms cover (`gen_ai.provider.name`, e.g. `openai`); "
        "empty means any.",
    )
    models: list[str] = Field(
        default_factory=list,
        description="Models the terms cover; a base name also covers its dated snapshots "
        "(`gpt-4o` covers `gpt-4o-2024-08-06`). Empty means any.",
    )
    endpoints: list[str] = Field(
        default_factory=list,
        description="API hosts the terms cover (`server.address`); empty means any.",
    )


class Identity(_Model):
    id: str = Field(min_length=1, description="Contract identifier, as on the signed document.")
    vendor: str = Field(min_length=1, description="The party that serves inference.")
    customer: str = Field(min_length=1, description="The party that calls it.")
    effective: Effective = Field(description="When the contract applies.")
    time_zone: str | None = Field(
        default=None,
        description="IANA time zone (e.g. `Asia/Shanghai`) that bounds months and quarters and "
        "maintenance windows. Unstated means UTC, and the review flags it.",
    )
    language: Literal["en", "zh"] = Field(
        default="en", description="Language of the signed text (`en` or `zh`)."
    )

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown IANA time zone {v!r}; use a name such as 'Asia/Shanghai' or 'UTC'"
            ) from None
        return v


# ---------------------------------------------------------------------------------------------
# Latency terms


class OccurrenceObjective(_Model):
    """`percentile` of the in-scope calls (or tasks) must be within `threshold`."""

    kind: Literal["occurrence"] = "occurrence"
    percentile: float = Field(description="Percentile in (0, 100), e.g. 95 for p95.", gt=0, lt=100)
    threshold: float = Field(
        gt=0,
        description="Threshold in ms (latency points) or tokens/s (`output_tokens_per_second`).",
    )
    direction: Direction = Field(
        default=Direction.AT_MOST,
        description="`at_most` for latency (p95 ≤ threshold), `at_least` for speed.",
    )
    method: PercentileMethod = Field(
        default=PercentileMethod.NEAREST_RANK,
        description="How the percentile is computed: `nearest_rank` (default) or `linear` "
        "interpolation. State it: the review flags an unstated method.",
    )


class TimeSliceObjective(_Model):
    """In `slices_passing_percent` % of `slice_minutes` slices, the in-slice statistic passes."""

    kind: Literal["time_slice"] = "time_slice"
    slice_minutes: int = Field(gt=0, le=1440, description="Slice length in minutes, e.g. 5.")
    statistic: Literal["p50", "p90", "p95", "p99", "mean", "min"] = Field(
        default="p50", description="Statistic computed within each slice."
    )
    threshold: float = Field(gt=0, description="Threshold the slice statistic is compared with.")
    direction: Direction = Field(
        default=Direction.AT_LEAST, description="`at_least` (speed) or `at_most` (latency)."
    )
    slices_passing_percent: float = Field(
        gt=0, le=100, description="Share of slices with data that must pass, e.g. 99."
    )
    min_calls_per_slice: int = Field(
        default=1, ge=1, description="A slice with fewer calls counts as empty, not as a pass."
    )


Objective = Annotated[OccurrenceObjective | TimeSliceObjective, Field(discriminator="kind")]


class LatencyTerm(_Model):
    id: str = Field(min_length=1, description="Term id, unique in the contract (e.g. `L1`).")
    description: str = Field(default="", description="Free text, shown in documents.")
    measurement_point: MeasurementPoint = Field(description="Where the clock starts and stops.")
    objective: Objective = Field(description="`occurrence` or `time_slice` objective.")
    tokens_per_second_basis: TokensPerSecondBasis | None = Field(
        default=None,
        description="For `output_tokens_per_second`: the denominator — `whole_request`, "
        "`after_first_token` (generation only) or `unstated`.",
    )
    window: Window = Field(
        default=Window.CALENDAR_MONTH,
        description="Evaluation window: `calendar_month`, `calendar_quarter` or `rolling_30_days`.",
    )
    min_samples: int | None = Field(
        default=None,
        ge=1,
        description="Fewer in-scope calls (or slices) than this in a window gives `no data`, "
        "never `met`.",
    )
    scope: Scope | None = Field(
        default=None, description="Narrows the contract's scope for this term only."
    )

    @model_validator(mode="after")
    def _tps_basis(self) -> Self:
        is_tps = self.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
        if self.tokens_per_second_basis is not None and not is_tps:
            raise FieldError(
                ("tokens_per_second_basis",),
                "tokens_per_second_basis applies only to measurement_point "
                "output_tokens_per_second; remove it",
            )
        return self


# ---------------------------------------------------------------------------------------------
# Regions, routing, peak, rate limit


class Jurisdiction(_Model):
    country: str = Field(
        min_length=2, max_length=2, description="ISO 3166-1 alpha-2 country code, e.g. `CN`."
    )
    province: str | None = Field(
        default=None, description="Province or state, when residency is bound to one."
    )

    @field_validator("country")
    @classmethod
    def _upper(cls, v: str) -> str:
        return v.upper()


class Region(_Model):
    name: str = Field(min_length=1, description="Region name as traces report it (`cloud.region`).")
    jurisdiction: Jurisdiction | None = Field(
        default=None, description="Where the region is; required for failover regions."
    )


class Residency(_Model):
    countries: list[str] = Field(
        default_factory=list, description="Data may be processed only in these countries."
    )
    provinces: list[str] = Field(
        default_factory=list, description="…and, if listed, only in these provinces."
    )


class Regions(_Model):
    primary: list[Region] = Field(min_length=1, description="Regions that serve normally.")
    failover: list[Region] = Field(
        default_factory=list, description="Regions that may serve when routing rights allow."
    )
    residency: Residency | None = Field(
        default=None, description="Data-residency limits; omit when there are none."
    )

    @model_validator(mode="after")
    def _failover_jurisdiction(self) -> Self:
        for i, r in enumerate(self.failover):
            if r.jurisdiction is None:
                raise FieldError(
                    ("failover", i, "jurisdiction"),
                    f"failover region {r.name} needs a jurisdiction (country, optionally "
                    "province) so residency can be checked",
                )
        return self


class Routing(_Model):
    cross_region: RoutingPermission = Field(
        description="When calls may be served outside the primary regions: `never`, "
        "`peak_only` or `always`."
    )
    decided_by: Decider | None = Field(
        default=None, description="Who decides to route: `vendor`, `customer` or `joint`."
    )
    data_may_move: bool = Field(
        default=False, description="Whether request data may leave the primary regions."
    )
    notice_minutes: int | None = Field(
        default=None, ge=0, description="Notice the vendor must give before routing elsewhere."
    )


class RequestRatePeak(_Model):
    kind: Literal["request_rate"] = "request_rate"
    requests_per_minute: float = Field(gt=0, description="Peak when requests/min exceed this.")


class UtilisationPeak(_Model):
    kind: Literal["utilisation"] = "utilisation"
    percent: float = Field(
        gt=0, lt=100, description="Peak when utilisation of the contracted capacity exceeds this."
    )
    capacity_requests_per_minute: float = Field(
        gt=0, description="Contracted capacity that utilisation is measured against."
    )


class BusiestMinutesPeak(_Model):
    kind: Literal["busiest_minutes"] = "busiest_minutes"
    percent: float = Field(gt=0, lt=100, description="The busiest N % of minutes are peak.")


PeakDefinition = Annotated[
    RequestRatePeak | UtilisationPeak | BusiestMinutesPeak, Field(discriminator="kind")
]


class SmallerModel(_Model):
    fallback_model: str = Field(min_length=1, description="The model served instead at peak.")


class CacheDegradation(_Model):
    max_staleness_seconds: int = Field(gt=0, description="Oldest cached answer allowed.")


class QueueDegradation(_Model):
    max_wait_ms: float = Field(gt=0, description="Longest a call may wait in the queue.")


class Degradation(_Model):
    """Exactly one of the three policies (峰值降级策略)."""

    smaller_model: SmallerModel | None = Field(default=None, description="Serve a smaller model.")
    cache: CacheDegradation | None = Field(default=None, description="Serve cached answers.")
    queue: QueueDegradation | None = Field(default=None, description="Queue calls.")

    @property
    def policies(self) -> tuple[str, ...]:
        return tuple(
            name for name in ("smaller_model", "cache", "queue") if getattr(self, name) is not None
        )

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if not self.policies:
            raise FieldError(
                (),
                "exactly one degradation policy is required: give smaller_model, cache or queue, "
                "or remove degradation (the review then flags the missing policy)",
            )
        if len(self.policies) > 1:
            raise FieldError(
                (self.policies[1],),
                f"exactly one degradation policy is allowed; found {', '.join(self.policies)}: "
                "keep one of smaller_model, cache, queue",
            )
        return self


class Peak(_Model):
    definition: PeakDefinition = Field(description="How peak is recognised.")
    degradation: Degradation | None = Field(
        default=None, description="What the vendor does at peak; unwritten is the worst case."
    )


class RateLimit(_Model):
    basis: RateLimitBasis = Field(
        description="What is counted: `per_request`, `per_task` or `per_token` (限流口径)."
    )
    limit: float = Field(gt=0, description="How many per period.")
    period: Period = Field(default=Period.MINUTE, description="`second`, `minute`, `hour`, `day`.")
    burst: float | None = Field(default=None, gt=0, description="Short burst allowance, if any.")
    steps_per_task: float | None = Field(
        default=None,
        gt=0,
        description="Expected model calls per agent task, to state a per-request limit per task.",
    )


# ---------------------------------------------------------------------------------------------
# Availability, credits, exclusions


class FailureDefinition(_Model):
    server_errors: bool = Field(default=True, description="HTTP 5xx counts as a failed call.")
    timeouts: bool = Field(default=True, description="Timeouts count as failed calls.")
    throttling_below_limit: bool = Field(
        default=True,
        description="429 while traffic was under the contracted rate limit counts as failed.",
    )


class Availability(_Model):
    target_percent: float = Field(
        gt=0, le=100, description="Monthly availability target, e.g. 99.9."
    )
    window: Window = Field(default=Window.CALENDAR_MONTH, description="Usually a calendar month.")
    failures: FailureDefinition = Field(
        default_factory=FailureDefinition, description="What counts as a failed call."
    )
    min_samples: int | None = Field(
        default=None, ge=1, description="Fewer calls than this in a window gives `no data`."
    )


class CreditTier(_Model):
    from_percent: float = Field(ge=0, le=100, description="Availability at or above (inclusive).")
    to_percent: float = Field(gt=0, le=100, description="…and below (exclusive).")
    credit_percent: float = Field(gt=0, le=100, description="Credit, % of the monthly fee.")

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.to_percent <= self.from_percent:
            raise FieldError(("to_percent",), "to_percent must be above from_percent")
        return self


class Credits(_Model):
    tiers: list[CreditTier] = Field(min_length=1, description="Credit per availability band.")
    claim_deadline_days: int | None = Field(
        default=None,
        ge=1,
        le=3660,
        description="Days after the month within which a claim must be made.",
    )
    cap_percent: float | None = Field(
        default=None, gt=0, le=100, description="Most credit owed in one month."
    )

    @model_validator(mode="after")
    def _tiers_tile(self) -> Self:
        order = sorted(range(len(self.tiers)), key=lambda i: self.tiers[i].from_percent)
        for lo_i, up_i in itertools.pairwise(order):
            lower, upper = self.tiers[lo_i], self.tiers[up_i]
            if upper.from_percent < lower.to_percent:
                raise FieldError(
                    ("tiers", up_i, "from_percent"),
                    f"credit tiers overlap: [{lower.from_percent}, {lower.to_percent}) and "
                    f"[{upper.from_percent}, {upper.to_percent}); make each tier start where "
                    "the one below ends",
                )
            if upper.from_percent > lower.to_percent:
                raise FieldError(
                    ("tiers", up_i, "from_percent"),
                    f"credit tiers leave a gap: availability in [{lower.to_percent}, "
                    f"{upper.from_percent}) earns no credit; extend a tier to cover it",
                )
        return self


class Fees(_Model):
    """The fee a service credit is a share of, so credits can be stated in money."""

    monthly: float = Field(gt=0, le=1e12, description="Fee for one month of service.")
    currency: str = Field(
        pattern=r"^[A-Z]{3}$",
        description="ISO 4217 currency code of the fee, e.g. `CNY`, `USD`, `EUR`.",
    )


class MaintenanceWindow(_Model):
    """Either one interval (`start`, `end`) or a weekly recurrence (`weekly`)."""

    start: dt.datetime | None = Field(
        default=None, description="Start of a one-off window (contract time zone if naive)."
    )
    end: dt.datetime | None = Field(default=None, description="End of a one-off window.")
    weekly: WeeklyRecurrence | None = Field(default=None, description="A weekly recurring window.")

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        interval = self.start is not None or self.end is not None
        if interval == (self.weekly is not None):
            raise FieldError((), "give either start and end, or weekly, for a maintenance window")
        if interval and (self.start is None or self.end is None):
            raise FieldError((), "a one-off maintenance window needs both start and end")
        if (
            self.start is not None
            and self.end is not None
            and (self.start.tzinfo is None) != (self.end.tzinfo is None)
        ):
            raise FieldError(
                ("end",), "give both start and end with a UTC offset, or neither (contract zone)"
            )
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise FieldError(("end",), "maintenance window end is not after its start")
        return self


class WeeklyRecurrence(_Model):
    days: list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]] = Field(
        min_length=1, description="Days of the week, e.g. [sun]."
    )
    start: dt.time = Field(description="Local start time (contract time zone), e.g. 02:00.")
    duration_minutes: int = Field(gt=0, le=1440, description="Length of each window.")


MaintenanceWindow.model_rebuild()


class Exclusions(_Model):
    maintenance: list[MaintenanceWindow] = Field(
        default_factory=list, description="Maintenance windows: calls in them are excluded."
    )
    max_input_tokens: int | None = Field(
        default=None, gt=0, description="Requests with more input tokens are excluded."
    )
    downgraded_service_tiers: list[str] = Field(
        default_factory=list,
        description="Calls served on these tiers (e.g. `flex`) are excluded.",
    )
    customer_errors: bool = Field(
        default=True,
        description="Customer-caused errors are excluded: status class `customer_error` (HTTP "
        "4xx other than 429, or an SDK exception class that means one, such as "
        "`openai.NotFoundError`).",
    )


# ---------------------------------------------------------------------------------------------
# The contract


class ExcludedInTaskTerms(StrEnum):
    REMOVE_TASK = "remove_task"
    REMOVE_CALL = "remove_call"


class ModelScope(StrEnum):
    REQUESTED = "requested"
    SERVED = "served"
    EITHER = "either"


class TaskRateCount(StrEnum):
    STARTED = "started"
    ACTIVE = "active"


class AtTheLimit(StrEnum):
    WITHIN = "within"
    BEYOND = "beyond"


class UnclassifiedFailures(StrEnum):
    BOUNDS = "bounds"
    VENDOR = "vendor"
    EXCLUDED = "excluded"


class CacheHits(StrEnum):
    EXCLUDED = "excluded"
    COUNTED = "counted"


class Readings(_Model):
    """How the contract is read where its words leave room for argument (judgement calls).

    Each has a default a neutral auditor would choose; every verdict prints the readings it
    used, and the review flags each one the contract leaves unstated.
    """

    excluded_calls_in_task_terms: ExcludedInTaskTerms = Field(
        default=ExcludedInTaskTerms.REMOVE_TASK,
        description="An excluded call (maintenance, long input, …) inside an agent task: "
        "`remove_task` takes the whole task out of task-level terms (its time is not the "
        "vendor's alone), `remove_call` keeps the task. Default `remove_task`.",
    )
    model_scope: ModelScope = Field(
        default=ModelScope.REQUESTED,
        description="Which model decides whether a call is in `scope.models`: the model "
        "`requested` (default: the customer bought service for what it asks for, so a call "
        "answered by a fallback model stays in scope), the model `served`, or `either`.",
    )
    per_task_rate_counts: TaskRateCount = Field(
        default=TaskRateCount.STARTED,
        description="A per-task rate limit counts the tasks `started` in a period (default: "
        "admission, as a limiter sees it) or the tasks `active` in it.",
    )
    at_the_limit: AtTheLimit = Field(
        default=AtTheLimit.WITHIN,
        description="A value exactly at a threshold is `within` it (default: ≤ for at-most "
        'terms, ≥ for at-least terms, as "within 500 ms" is usually read) or `beyond` it.',
    )
    unclassified_failures: UnclassifiedFailures = Field(
        default=UnclassifiedFailures.BOUNDS,
        description="A failed call whose trace does not say whose failure it was (a connection "
        "error, a bare failure flag): `bounds` (default) computes every term that counts "
        "failures both with these calls as the vendor's failures and with them excluded, and "
        "the verdict is `indeterminate` when the two disagree; `vendor` counts them as the "
        "vendor's failures; `excluded` leaves them out. Always counted and named.",
    )
    cache_hits: CacheHits = Field(
        default=CacheHits.EXCLUDED,
        description="A call a gateway answered from its response cache (`response_cached`), "
        "never sent to the vendor: `excluded` (default) leaves it out of vendor terms "
        "(latency, availability), `counted` measures it as an answered call. Always counted.",
    )


class EvidenceKeeper(StrEnum):
    BOTH = "both"
    CUSTOMER = "customer"
    VENDOR = "vendor"


#: Months after the contract's effective period ends that the acceptance evidence package is
#: kept when the contract does not say: two years, long enough to outlast the usual limitation
#: periods for a service-credit claim. The acceptance document states when this default applies.
DEFAULT_EVIDENCE_RETENTION_MONTHS = 24


class Acceptance(_Model):
    """Who keeps the acceptance evidence package, and for how long.

    The package is the traces, the contract, the tool version, the outputs and their hashes
    (the acceptance document lists it); unset fields take the defaults the document states."""

    evidence_retention_months: int | None = Field(
        default=None,
        ge=1,
        le=1200,
        description="Months after the contract's effective period ends that the evidence "
        "package is kept (and in any case until every claim or dispute relying on it is "
        f"closed). Unset: {DEFAULT_EVIDENCE_RETENTION_MONTHS} months, and the acceptance "
        "document says the default applies.",
    )
    evidence_kept_by: EvidenceKeeper | None = Field(
        default=None,
        description="Who keeps the evidence package: `both` parties (each a copy), the "
        "`customer` or the `vendor`. Unset: both, and the acceptance document says so.",
    )


class Contract(_Model):
    """A vendor inference contract, as slacheck reads it."""

    contract: Identity = Field(description="Who, when and in which time zone.")
    scope: Scope = Field(default_factory=Scope, description="What the terms cover.")
    latency: list[LatencyTerm] = Field(default_factory=list, description="Latency terms.")
    regions: Regions | None = Field(default=None, description="Region list and residency.")
    routing: Routing | None = Field(default=None, description="Cross-region routing rights.")
    peak: Peak | None = Field(default=None, description="Peak definition and degradation.")
    rate_limit: RateLimit | None = Field(default=None, description="Rate-limit basis.")
    availability: Availability | None = Field(default=None, description="Availability target.")
    credits: Credits | None = Field(default=None, description="Service-credit tiers.")
    fees: Fees | None = Field(
        default=None, description="Monthly fee, so credits are stated in money."
    )
    exclusions: Exclusions = Field(
        default_factory=Exclusions, description="What does not count against the vendor."
    )
    readings: Readings = Field(
        default_factory=Readings,
        description="How terms are read where the words leave room (judgement calls).",
    )
    acceptance: Acceptance | None = Field(
        default=None,
        description="How the acceptance evidence is kept: retention period and keeper.",
    )

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.contract.time_zone or "UTC")

    @model_validator(mode="after")
    def _cross_field(self) -> Self:
        seen: set[str] = set()
        for i, term in enumerate(self.latency):
            if term.id in seen:
                raise FieldError(
                    ("latency", i, "id"), f"latency term id {term.id!r} is used twice; rename one"
                )
            seen.add(term.id)
        if self.routing is not None and self.regions is not None:
            self._check_routing_residency(self.regions, self.routing)
        return self

    @staticmethod
    def _check_routing_residency(regions: Regions, routing: Routing) -> None:
        residency = regions.residency
        if residency is None or routing.cross_region is RoutingPermission.NEVER:
            return
        if not routing.data_may_move:
            return
        outside = [
            r.name
            for r in regions.failover
            if r.jurisdiction is not None and not _inside(r.jurisdiction, residency)
        ]
        if outside:
            raise FieldError(
                ("routing", "data_may_move"),
                f"routing lets data move to failover region(s) {', '.join(outside)}, outside the "
                "residency limits; set routing.data_may_move to false, routing.cross_region to "
                "never, or remove those regions",
            )


def _inside(j: Jurisdiction, residency: Residency) -> bool:
    countries = {c.upper() for c in residency.countries}
    if countries and j.country not in countries:
        return False
    if residency.provinces:
        return j.province is not None and j.province in residency.provinces
    return True


def region_allowed_by_residency(region: Region, residency: Residency | None) -> bool | None:
    """True/False when decidable; None when the region's jurisdiction is unknown."""
    if residency is None:
        return True
    if region.jurisdiction is None:
        return None
    return _inside(region.jurisdiction, residency)


def nested_models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models inside a field annotation (through Optional, list, unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(nested_models(arg))
    return found
