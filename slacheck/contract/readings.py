"""The readings: how the contract is read where its words leave room for argument (judgement
calls), each with the default a neutral auditor would choose."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from slacheck.contract.base import StrictModel


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


class Readings(StrictModel):
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
