"""Judgement calls (SLA506): where the words leave room for argument, the reading is stated."""

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import Contract, MeasurementPoint, RateLimitBasis
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.messages import NC_, MessageCode

__all__ = ["ReadingSays"]


class ReadingSays(MessageCode):
    """What the readings rule says: each judgement call's question, and the reading to state."""

    SLA506_TITLE = NC_("SLA506.title", "A judgement call the contract leaves to the reader.")
    SLA506_EXCLUDED_CALLS = NC_(
        "SLA506.question.excluded_calls_in_task_terms",
        "An excluded call (maintenance, long input, downgraded tier) inside an agent task: does "
        "it take the whole task out of the task-level terms, or only itself?",
    )
    SLA506_MODEL_SCOPE = NC_(
        "SLA506.question.model_scope",
        "A call asked for one model and answered by another (a fallback at peak): is it in "
        "the scope of the listed models by the model requested or the model served?",
    )
    SLA506_PER_TASK_RATE = NC_(
        "SLA506.question.per_task_rate_counts",
        "A per-task limit: does it count the tasks started in a period or the tasks active in "
        "it? An agent task lasts longer than a minute.",
    )
    SLA506_AT_THE_LIMIT = NC_(
        "SLA506.question.at_the_limit",
        "A value exactly at a threshold: is it within it (≤) or beyond it (<)?",
    )
    SLA506_WHY = NC_(
        "SLA506.why",
        "{question} The contract does not say; slacheck reads it as `{default}` and says so "
        "with every verdict.",
    )
    SLA506_FIX = NC_(
        "SLA506.fix", "State it: readings.{name}: {default} (or the reading the parties agree)."
    )


@rule("SLA506", Severity.LOW, title=ReadingSays.SLA506_TITLE)
def reading_unstated(contract: Contract) -> Iterator[Hit]:
    """A judgement call the contract leaves to the reader.

    Where the words leave room for argument, slacheck reads the contract the way a neutral
    auditor would (the `readings` section's defaults) and prints the reading with every
    verdict; a contract that states it removes the argument. Flagged only where it matters:
    an excluded call inside a task-level term, a model list, a per-task rate limit, a latency
    threshold.
    """
    stated = contract.readings.model_fields_set
    task_terms = any(
        t.measurement_point is MeasurementPoint.TASK_END_TO_END for t in contract.latency
    )
    ex = contract.exclusions
    has_exclusions = bool(ex.maintenance or ex.max_input_tokens or ex.downgraded_service_tiers)
    relevant = {
        "excluded_calls_in_task_terms": (
            task_terms and has_exclusions,
            ReadingSays.SLA506_EXCLUDED_CALLS(),
        ),
        "model_scope": (
            bool(contract.scope.models),
            ReadingSays.SLA506_MODEL_SCOPE(),
        ),
        "per_task_rate_counts": (
            contract.rate_limit is not None
            and contract.rate_limit.basis is RateLimitBasis.PER_TASK,
            ReadingSays.SLA506_PER_TASK_RATE(),
        ),
        "at_the_limit": (
            bool(contract.latency),
            ReadingSays.SLA506_AT_THE_LIMIT(),
        ),
    }
    defaults = type(contract.readings)()
    for name, (matters, question) in relevant.items():
        if matters and name not in stated:
            default = getattr(defaults, name)
            yield Hit(
                ("readings", name),
                ReadingSays.SLA506_WHY(question=question, default=str(default)),
                ReadingSays.SLA506_FIX(name=name, default=str(default)),
            )
