"""The contract's terms as typed, validated pydantic models; the field descriptions are the docs.

``Contract`` and the terms are here; the strict base and ``FieldError`` are in ``base``, service
credits and fees in ``credits``, exclusions in ``exclusions`` and the readings in ``readings``,
all importable from here too.
"""

from __future__ import annotations

import datetime as dt
import typing
from enum import StrEnum
from typing import Annotated, Any, Literal, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator, model_validator

from slacheck.contract.base import YEARS, FieldError, StrictModel
from slacheck.contract.credits import Credits, CreditTier, Fees
from slacheck.contract.exclusions import Exclusions, MaintenanceWindow, WeeklyRecurrence
from slacheck.contract.parties import IndeterminateMeans, NoDataMeans, Notices, VerdictMeaning
from slacheck.contract.readings import (
    AtTheLimit,
    CacheHits,
    ExcludedInTaskTerms,
    ModelScope,
    Readings,
    TaskRateCount,
    UnclassifiedFailures,
)

#: the contract model, with the parts its sibling modules hold
__all__ = [
    "DEFAULT_EVIDENCE_RETENTION_MONTHS",
    "YEARS",
    "Acceptance",
    "AtTheLimit",
    "Availability",
    "BusiestMinutesPeak",
    "CacheDegradation",
    "CacheHits",
    "Contract",
    "CreditTier",
    "Credits",
    "Decider",
    "Degradation",
    "Direction",
    "Effective",
    "EvidenceKeeper",
    "ExcludedInTaskTerms",
    "Exclusions",
    "FailureDefinition",
    "Fees",
    "FieldError",
    "Identity",
    "IndeterminateMeans",
    "Jurisdiction",
    "LatencyTerm",
    "MaintenanceWindow",
    "MeasurementPoint",
    "ModelScope",
    "NoDataMeans",
    "Notices",
    "Objective",
    "OccurrenceObjective",
    "Peak",
    "PeakDefinition",
    "PercentileMethod",
    "Period",
    "QueueDegradation",
    "RateLimit",
    "RateLimitBasis",
    "Readings",
    "Region",
    "Regions",
    "RequestRatePeak",
    "Residency",
    "Routing",
    "RoutingPermission",
    "Scope",
    "SmallerModel",
    "TaskRateCount",
    "TimeSliceObjective",
    "TokensPerSecondBasis",
    "UnclassifiedFailures",
    "UtilisationPeak",
    "VerdictMeaning",
    "WeeklyRecurrence",
    "Window",
    "nested_models",
    "region_allowed_by_residency",
]


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


class Effective(StrictModel):
    start: dt.date = Field(description="First day the contract applies (inclusive).")
    end: dt.date | None = Field(
        default=None, description="Last day the contract applies (inclusive); omit if open-ended."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end is not None and self.end < self.start:
            raise FieldError(("end",), "effective.end is before effective.start; swap them")
        return self


class Scope(StrictModel):
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


class Identity(StrictModel):
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


class OccurrenceObjective(StrictModel):
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


class TimeSliceObjective(StrictModel):
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


class LatencyTerm(StrictModel):
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


class Jurisdiction(StrictModel):
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


class Region(StrictModel):
    name: str = Field(min_length=1, description="Region name as traces report it (`cloud.region`).")
    jurisdiction: Jurisdiction | None = Field(
        default=None, description="Where the region is; required for failover regions."
    )


class Residency(StrictModel):
    countries: list[str] = Field(
        default_factory=list, description="Data may be processed only in these countries."
    )
    provinces: list[str] = Field(
        default_factory=list, description="…and, if listed, only in these provinces."
    )


class Regions(StrictModel):
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


class Routing(StrictModel):
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


class RequestRatePeak(StrictModel):
    kind: Literal["request_rate"] = "request_rate"
    requests_per_minute: float = Field(gt=0, description="Peak when requests/min exceed this.")


class UtilisationPeak(StrictModel):
    kind: Literal["utilisation"] = "utilisation"
    percent: float = Field(
        gt=0, lt=100, description="Peak when utilisation of the contracted capacity exceeds this."
    )
    capacity_requests_per_minute: float = Field(
        gt=0, description="Contracted capacity that utilisation is measured against."
    )


class BusiestMinutesPeak(StrictModel):
    kind: Literal["busiest_minutes"] = "busiest_minutes"
    percent: float = Field(gt=0, lt=100, description="The busiest N % of minutes are peak.")


PeakDefinition = Annotated[
    RequestRatePeak | UtilisationPeak | BusiestMinutesPeak, Field(discriminator="kind")
]


class SmallerModel(StrictModel):
    fallback_model: str = Field(min_length=1, description="The model served instead at peak.")


class CacheDegradation(StrictModel):
    max_staleness_seconds: int = Field(gt=0, description="Oldest cached answer allowed.")


class QueueDegradation(StrictModel):
    max_wait_ms: float = Field(gt=0, description="Longest a call may wait in the queue.")


class Degradation(StrictModel):
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


class Peak(StrictModel):
    definition: PeakDefinition = Field(description="How peak is recognised.")
    degradation: Degradation | None = Field(
        default=None, description="What the vendor does at peak; unwritten is the worst case."
    )


class RateLimit(StrictModel):
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
# Availability


class FailureDefinition(StrictModel):
    server_errors: bool = Field(default=True, description="HTTP 5xx counts as a failed call.")
    timeouts: bool = Field(default=True, description="Timeouts count as failed calls.")
    timeout_ms: float | None = Field(
        default=None,
        gt=0,
        description="The client timeout, in ms: how long the Customer's client waits for a "
        "complete response before it abandons the call. The check counts a call as a timeout "
        "when its trace records one (HTTP 408 or 504, or the client's timeout error); the "
        "draft's definition of a timeout states this duration. Unset: the review flags it.",
    )
    throttling_below_limit: bool = Field(
        default=True,
        description="429 while traffic was under the contracted rate limit counts as failed.",
    )


class Availability(StrictModel):
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


# ---------------------------------------------------------------------------------------------
# Acceptance and the contract


class EvidenceKeeper(StrEnum):
    BOTH = "both"
    CUSTOMER = "customer"
    VENDOR = "vendor"


#: Months after the contract's effective period ends that the acceptance evidence package is
#: kept when the contract does not say: two years, long enough to outlast the usual limitation
#: periods for a service-credit claim. The acceptance document states when this default applies.
DEFAULT_EVIDENCE_RETENTION_MONTHS = 24


class Acceptance(StrictModel):
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


class Contract(StrictModel):
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
    notices: Notices | None = Field(
        default=None,
        description="How notices are given and where claims go; unset, the review flags it.",
    )
    precedence: list[str] = Field(
        default_factory=list,
        description="Order of precedence: the documents of the agreement, the one that "
        "prevails first (e.g. `these service level clauses`, `the master services agreement`, "
        "`the order form`). Empty: unstated, and the review flags it.",
    )
    verdicts: VerdictMeaning | None = Field(
        default=None,
        description="What `indeterminate` and `no data` mean for the parties; unset, the "
        "review flags it.",
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
