"""Latency terms (SLA101–SLA105, SLA501): where the clock runs, and how its figure is computed."""

# A latency term names a measurement point and an objective. The point decides what the figure
# leaves out (SLA101 server-side, SLA102 per call, SLA103 no term at all); the objective must say
# how its number is computed (SLA104 the tokens/s basis, SLA105 the statistic within a slice,
# SLA501 the percentile method), or each party reads it as suits it.

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import (
    Contract,
    Direction,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    TimeSliceObjective,
    TokensPerSecondBasis,
)
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.contract.review.wording import num, task_steps
from slacheck.messages import NC_, Message, MessageCode

__all__ = ["LatencySays"]


class LatencySays(MessageCode):
    """What the latency rules say, and how they quote a term's objective."""

    # a term's objective, as the sentences below quote it
    OBJECTIVE_MS = NC_("review.objective.ms", "p{percentile} {op} {threshold} ms")
    OBJECTIVE_TPS = NC_("review.objective.tps", "p{percentile} {op} {threshold} tokens/s")
    SLICES_MS = NC_(
        "review.objective.slices_ms",
        "{passing} % of {minutes}-minute slices with {statistic} {op} {threshold} ms",
    )
    SLICES_TPS = NC_(
        "review.objective.slices_tps",
        "{passing} % of {minutes}-minute slices with {statistic} {op} {threshold} tokens/s",
    )

    SLA101_TITLE = NC_("SLA101.title", "Latency is metered inside the vendor (server_processing).")
    SLA101_WHY = NC_(
        "SLA101.why",
        "{term} promises {objective} measured inside the vendor, excluding the network round "
        "trip, client queueing and tools. In the worked example a 200 ms model call with 50 ms "
        "tools makes a 12-step task of 3.0 s in one region, 5.4 s when model calls cross a "
        "region and 7.8 s when tools do too; the server-side time, and this {threshold} ms cap, "
        "are the same in all three. Your traces can show it met, never breached.",
    )
    SLA101_FIX = NC_(
        "SLA101.fix",
        "Set {term}'s measurement_point to full_response (request sent → last byte, at the "
        "client), with a threshold that allows for the round trip, and add a task_end_to_end "
        "term for the whole agent task.",
    )
    SLA102_TITLE = NC_(
        "SLA102.title", "Latency is metered per call, with no term for the agent task."
    )
    SLA102_WHY = NC_(
        "SLA102.why",
        "{term} promises {objective} per call at {point}; a task of {steps} multiplies it: "
        "{seconds} s within this term alone, with tool waits and round trips on top and not "
        "covered. In the worked example 12 × (200 ms model + 50 ms tool) is 3.0 s in one region "
        "and 7.8 s when model and tool calls cross a region, with identical per-call figures.",
    )
    SLA102_FIX = NC_(
        "SLA102.fix",
        "Add a latency term with measurement_point: task_end_to_end (all steps, tools and "
        "waits), e.g. p95 ≤ the task budget, beside {term}.",
    )
    SLA103_TITLE = NC_("SLA103.title", "The contract has no latency term.")
    SLA103_WHY_AVAILABILITY = NC_(
        "SLA103.why.availability",
        "The contract promises only availability ({target} %): a call that takes 60 s still "
        "counts as served, and a task of {steps} waits for every one of them.",
    )
    SLA103_WHY_NOTHING = NC_(
        "SLA103.why.nothing",
        "The contract promises nothing measurable about speed: a call that takes 60 s still "
        "counts as served, and a task of {steps} waits for every one of them.",
    )
    SLA103_FIX = NC_(
        "SLA103.fix",
        "Add latency terms: task_end_to_end (e.g. p95 per task) and full_response or "
        "time_to_first_token per call, each with a percentile method and min_samples.",
    )
    SLA104_TITLE = NC_("SLA104.title", "The tokens-per-second basis is unstated.")
    SLA104_WHY = NC_(
        "SLA104.why",
        "{term} promises {objective} without saying what the seconds are. A {tokens}-token "
        "answer with 1 s to the first token and 1 s of generation runs at {tokens} tokens/s "
        "after the first token but {half} tokens/s over the whole request: it passes one "
        "reading and fails the other.",
    )
    SLA104_FIX = NC_(
        "SLA104.fix",
        "Add `tokens_per_second_basis: after_first_token` (generation only) or "
        "`whole_request` to {term}, matching the signed text.",
    )
    SLA105_TITLE = NC_("SLA105.title", "The statistic within each time slice is unstated.")
    SLA105_WHY = NC_(
        "SLA105.why",
        "{term} counts {minutes}-minute slices that pass {threshold}, without saying which value "
        "of a slice is compared: the median call, the mean of the calls, or the slice's total "
        "divided by its time. A slice with one slow call among fast ones passes by its median and "
        "may fail by its mean; slacheck applies {default} and says so.",
    )
    SLA105_FIX = NC_(
        "SLA105.fix",
        "Add `statistic:` (p50, mean, …) to {term}'s objective, matching the signed text.",
    )
    SLA501_TITLE = NC_("SLA501.title", "The percentile method is unstated.")
    SLA501_WHY = NC_(
        "SLA501.why",
        "{term} promises {objective} without saying how p{percentile} is computed: with a "
        "long tail, nearest rank and linear interpolation can fall on either side of "
        "{threshold}.",
    )
    SLA501_FIX = NC_("SLA501.fix", "Add `method: nearest_rank` (or linear) to {term}'s objective.")


def _objective(term: LatencyTerm) -> Message:
    o = term.objective
    tps = term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
    op = "≤" if o.direction is Direction.AT_MOST else "≥"
    if isinstance(o, OccurrenceObjective):
        code = LatencySays.OBJECTIVE_TPS if tps else LatencySays.OBJECTIVE_MS
        return code(percentile=num(o.percentile), op=op, threshold=num(o.threshold))
    code = LatencySays.SLICES_TPS if tps else LatencySays.SLICES_MS
    return code(
        passing=num(o.slices_passing_percent),
        minutes=o.slice_minutes,
        statistic=str(o.statistic),
        op=op,
        threshold=num(o.threshold),
    )


@rule("SLA101", Severity.HIGH, title=LatencySays.SLA101_TITLE)
def server_side_metering(contract: Contract) -> Iterator[Hit]:
    """Latency is metered inside the vendor (server_processing).

    A `server_processing` term starts and stops the clock inside the vendor's service: it leaves
    out the network round trip, the client's queue, tool calls and every other step of an agent
    task. The vendor can meet it while every task misses its budget, and a customer's traces can
    prove such a cap met but never breached (they measure at a later point). Meter at the
    client (`full_response`, `time_to_first_token`) and add a `task_end_to_end` term.
    """
    for i, term in enumerate(contract.latency):
        if term.measurement_point is not MeasurementPoint.SERVER_PROCESSING:
            continue
        yield Hit(
            ("latency", i, "measurement_point"),
            LatencySays.SLA101_WHY(
                term=term.id, objective=_objective(term), threshold=num(term.objective.threshold)
            ),
            LatencySays.SLA101_FIX(term=term.id),
        )


@rule("SLA102", Severity.MEDIUM, title=LatencySays.SLA102_TITLE)
def per_call_metering(contract: Contract) -> Iterator[Hit]:
    """Latency is metered per call, with no term for the agent task.

    `time_to_first_token` and `full_response` are measured per model call at the client. An
    agent task is a chain of calls plus tool waits and network round trips, and the user waits
    for all of it; per-call terms can all be met while tasks miss their budget. The rule fires
    when no `task_end_to_end` term exists (slacheck reviews contracts for agent workloads).
    """
    if any(t.measurement_point is MeasurementPoint.TASK_END_TO_END for t in contract.latency):
        return
    steps, how = task_steps(contract)
    per_call = (MeasurementPoint.TIME_TO_FIRST_TOKEN, MeasurementPoint.FULL_RESPONSE)
    for i, term in enumerate(contract.latency):
        if term.measurement_point not in per_call:
            continue
        total_s = steps * term.objective.threshold / 1000
        yield Hit(
            ("latency", i, "measurement_point"),
            LatencySays.SLA102_WHY(
                term=term.id,
                objective=_objective(term),
                point=str(term.measurement_point),
                steps=how,
                seconds=num(round(total_s, 1)),
            ),
            LatencySays.SLA102_FIX(term=term.id),
        )


@rule("SLA103", Severity.MEDIUM, title=LatencySays.SLA103_TITLE)
def no_latency_terms(contract: Contract) -> Iterator[Hit]:
    """The contract has no latency term.

    Without a latency term, a call that answers slowly still counts as served: availability
    and credits cover errors only. Agent tasks multiply per-call latency by the number of steps.
    """
    if contract.latency:
        return
    avail = contract.availability
    _, how = task_steps(contract)
    why = (
        LatencySays.SLA103_WHY_AVAILABILITY(target=num(avail.target_percent), steps=how)
        if avail is not None
        else LatencySays.SLA103_WHY_NOTHING(steps=how)
    )
    yield Hit(("latency",), why, LatencySays.SLA103_FIX())


@rule("SLA104", Severity.HIGH, title=LatencySays.SLA104_TITLE)
def tokens_per_second_basis_unstated(contract: Contract) -> Iterator[Hit]:
    """The tokens-per-second basis is unstated.

    Output speed can divide the output tokens by the whole request time or by the time after
    the first token. On short answers the two differ by 2× or more, so the same traffic passes
    under one reading and fails under the other: that ambiguity is itself a finding.
    """
    for i, term in enumerate(contract.latency):
        if term.measurement_point is not MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            continue
        if term.tokens_per_second_basis not in (None, TokensPerSecondBasis.UNSTATED):
            continue
        t = term.objective.threshold
        yield Hit(
            ("latency", i, "tokens_per_second_basis"),
            LatencySays.SLA104_WHY(
                term=term.id, objective=_objective(term), tokens=num(t), half=num(t / 2)
            ),
            LatencySays.SLA104_FIX(term=term.id),
        )


@rule("SLA105", Severity.MEDIUM, title=LatencySays.SLA105_TITLE)
def slice_statistic_unstated(contract: Contract) -> Iterator[Hit]:
    """The statistic within each time slice is unstated.

    A time-slice term compares one value per slice with its threshold. Published terms often
    say "99 % > 50 tokens/s" without saying whether that value is the median call, the mean,
    or the slice's tokens over its time; the same traffic passes under one and fails under
    another, so the statistic must be written down (slacheck applies p50 until it is).
    """
    for i, term in enumerate(contract.latency):
        objective = term.objective
        if not isinstance(objective, TimeSliceObjective):
            continue
        if "statistic" in objective.model_fields_set:
            continue
        yield Hit(
            ("latency", i, "objective", "statistic"),
            LatencySays.SLA105_WHY(
                term=term.id,
                minutes=objective.slice_minutes,
                threshold=num(objective.threshold),
                default=str(objective.statistic),
            ),
            LatencySays.SLA105_FIX(term=term.id),
        )


@rule("SLA501", Severity.MEDIUM, title=LatencySays.SLA501_TITLE)
def percentile_method_unstated(contract: Contract) -> Iterator[Hit]:
    """The percentile method is unstated.

    Nearest rank reports a value that was observed; linear interpolation reports a point
    between two observations. On a thin month or a long tail they land on different sides of a
    threshold, and each party will pick the reading that suits it.
    """
    for i, term in enumerate(contract.latency):
        o = term.objective
        if not isinstance(o, OccurrenceObjective) or "method" in o.model_fields_set:
            continue
        yield Hit(
            ("latency", i, "objective", "method"),
            LatencySays.SLA501_WHY(
                term=term.id,
                objective=_objective(term),
                percentile=num(o.percentile),
                threshold=num(o.threshold),
            ),
            LatencySays.SLA501_FIX(term=term.id),
        )
