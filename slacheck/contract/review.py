"""The clause review behind `slacheck lint`: registered rules that flag weak or unstated clauses."""

# Each rule is a small function registered with `@rule(code, severity)`; its docstring is its
# user documentation (first line: the title). Codes group by clause: SLA1xx metering point,
# 2xx regions and routing, 3xx peak, 4xx rate limit, 5xx windows, samples and time, 6xx
# availability, credits and exclusions. A rule yields `Hit`s (where, why with the contract's own
# numbers, and the clause change that fixes it); the registry turns them into `Finding`s.

from __future__ import annotations

import datetime as dt
import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from slacheck.contract.model import (
    Contract,
    Direction,
    LatencyTerm,
    MaintenanceWindow,
    MeasurementPoint,
    OccurrenceObjective,
    RateLimitBasis,
    Region,
    Residency,
    RoutingPermission,
    TokensPerSecondBasis,
    WeeklyRecurrence,
    Window,
    region_allowed_by_residency,
)

__all__ = ["RULES", "Finding", "Hit", "Rule", "Severity", "review", "rule"]

Loc = tuple[str | int, ...]


class Severity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """0 for the most severe, so findings sort HIGH first."""
        return list(Severity).index(self)


@dataclass(frozen=True, slots=True)
class Finding:
    """One weak clause: which rule, where in the contract, why it matters, what to write."""

    code: str
    severity: Severity
    field: Loc
    title: str
    explanation: str
    suggestion: str

    @property
    def path(self) -> str:
        """`latency[0].measurement_point`, for people."""
        out = ""
        for seg in self.field:
            out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else seg)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "field": list(self.field),
            "path": self.path,
            "title": self.title,
            "explanation": self.explanation,
            "suggestion": self.suggestion,
        }


@dataclass(frozen=True, slots=True)
class Hit:
    """What a rule function yields; the registry adds the rule's code, severity and title."""

    field: Loc
    explanation: str
    suggestion: str


RuleFunc = Callable[[Contract], Iterable[Hit]]


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: Severity
    title: str
    doc: str
    check: Callable[[Contract], Iterable[Finding]]


RULES: dict[str, Rule] = {}
_CODE = re.compile(r"SLA[1-9]\d\d")


def rule(code: str, severity: Severity) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule; built-in rules use this exactly as an outside plugin would."""

    def register(fn: RuleFunc) -> RuleFunc:
        if not _CODE.fullmatch(code):
            raise ValueError(f"rule code {code!r} must look like SLA101")
        if code in RULES:
            raise ValueError(f"rule code {code} is registered twice")
        doc = inspect.getdoc(fn)
        if not doc:
            raise TypeError(f"rule {code} needs a docstring: it is the rule's documentation")
        title = doc.splitlines()[0].strip()

        def check(contract: Contract) -> Iterator[Finding]:
            for hit in fn(contract):
                yield Finding(code, severity, hit.field, title, hit.explanation, hit.suggestion)

        RULES[code] = Rule(code, severity, title, doc, check)
        # re-insert in code order so documentation and `lint --rules` list rules predictably
        ordered = sorted(RULES.items())
        RULES.clear()
        RULES.update(ordered)
        return fn

    return register


def review(contract: Contract) -> tuple[Finding, ...]:
    """Run every registered rule; findings sorted by severity (high first), then code."""
    found = [finding for r in RULES.values() for finding in r.check(contract)]
    return tuple(sorted(found, key=lambda f: (f.severity.rank, f.code)))


# ---------------------------------------------------------------------------------------------
# Wording helpers: every explanation quotes the contract's own numbers

_ASSUMED_STEPS = 12  # DOMAIN.md's worked example: a 12-step agent task
_PER = {"second": "s", "minute": "min", "hour": "h", "day": "day"}
_BUSINESS_START, _BUSINESS_END = 9 * 60, 18 * 60  # 09:00–18:00, minutes after midnight
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTH_MINUTES = 30 * 24 * 60


def _num(x: float) -> str:
    """600.0 → "600", 128000 → "128,000", 99.95 → "99.95" (and float noise trimmed)."""
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.6g}"


def _objective(term: LatencyTerm) -> str:
    o = term.objective
    tps = term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
    unit = "tokens/s" if tps else "ms"
    op = "≤" if o.direction is Direction.AT_MOST else "≥"
    if isinstance(o, OccurrenceObjective):
        return f"p{_num(o.percentile)} {op} {_num(o.threshold)} {unit}"
    return (
        f"{_num(o.slices_passing_percent)} % of {o.slice_minutes}-minute slices with "
        f"{o.statistic} {op} {_num(o.threshold)} {unit}"
    )


def _steps(contract: Contract) -> tuple[float, str]:
    """Steps per agent task and how we know it."""
    rl = contract.rate_limit
    if rl is not None and rl.steps_per_task is not None:
        return rl.steps_per_task, f"{_num(rl.steps_per_task)} steps (rate_limit.steps_per_task)"
    return _ASSUMED_STEPS, f"{_ASSUMED_STEPS} steps (assumed: steps_per_task is unstated)"


def _zone_name(contract: Contract) -> str:
    tz = contract.contract.time_zone
    return tz if tz else "UTC, since time_zone is unstated"


def _minutes(m: float) -> str:
    return f"{_num(round(m / 60, 1))} h" if m >= 120 else f"{_num(round(m))} min"


def _routes(contract: Contract) -> bool:
    r = contract.routing
    return r is not None and r.cross_region is not RoutingPermission.NEVER


def _where(region: Region) -> str:
    j = region.jurisdiction
    if j is None:
        return region.name
    return f"{region.name} ({j.country}{', ' + j.province if j.province else ''})"


def _residency(res: Residency) -> str:
    parts = [", ".join(res.countries)] if res.countries else []
    if res.provinces:
        parts.append("provinces " + ", ".join(res.provinces))
    return "; ".join(parts) or "none"


# ---------------------------------------------------------------------------------------------
# SLA1xx: metering point


@rule("SLA101", Severity.HIGH)
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
            f"{term.id} promises {_objective(term)} measured inside the vendor, excluding the "
            "network round trip, client queueing and tools. In the worked example a 200 ms model "
            "call with 50 ms tools makes a 12-step task of 3.0 s in one region, 5.4 s when model "
            "calls cross a region and 7.8 s when tools do too; the server-side time, and this "
            f"{_num(term.objective.threshold)} ms cap, are the same in all three. Your traces "
            "can show it met, never breached.",
            f"Set {term.id}'s measurement_point to full_response (request sent → last byte, at "
            "the client), with a threshold that allows for the round trip, and add a "
            "task_end_to_end term for the whole agent task.",
        )


@rule("SLA102", Severity.MEDIUM)
def per_call_metering(contract: Contract) -> Iterator[Hit]:
    """Latency is metered per call, with no term for the agent task.

    `time_to_first_token` and `full_response` are measured per model call at the client. An
    agent task is a chain of calls plus tool waits and network round trips, and the user waits
    for all of it; per-call terms can all be met while tasks miss their budget. The rule fires
    when no `task_end_to_end` term exists (slacheck reviews contracts for agent workloads).
    """
    if any(t.measurement_point is MeasurementPoint.TASK_END_TO_END for t in contract.latency):
        return
    steps, how = _steps(contract)
    per_call = (MeasurementPoint.TIME_TO_FIRST_TOKEN, MeasurementPoint.FULL_RESPONSE)
    for i, term in enumerate(contract.latency):
        if term.measurement_point not in per_call:
            continue
        total_s = steps * term.objective.threshold / 1000
        yield Hit(
            ("latency", i, "measurement_point"),
            f"{term.id} promises {_objective(term)} per call at {term.measurement_point}; a task "
            f"of {how} multiplies it: {_num(round(total_s, 1))} s within this term alone, with "
            "tool waits and round trips on top and not covered. In the worked example 12 × "
            "(200 ms model + 50 ms tool) is 3.0 s in one region and 7.8 s when model and tool "
            "calls cross a region, with identical per-call figures.",
            "Add a latency term with measurement_point: task_end_to_end (all steps, tools and "
            f"waits), e.g. p95 ≤ the task budget, beside {term.id}.",
        )


@rule("SLA103", Severity.MEDIUM)
def no_latency_terms(contract: Contract) -> Iterator[Hit]:
    """The contract has no latency term.

    Without a latency term, a call that answers slowly still counts as served: availability
    and credits cover errors only. Agent tasks multiply per-call latency by the number of steps.
    """
    if contract.latency:
        return
    avail = contract.availability
    promise = (
        f"only availability ({_num(avail.target_percent)} %)"
        if avail is not None
        else "nothing measurable about speed"
    )
    _, how = _steps(contract)
    yield Hit(
        ("latency",),
        f"The contract promises {promise}: a call that takes 60 s still counts as served, and "
        f"a task of {how} waits for every one of them.",
        "Add latency terms: task_end_to_end (e.g. p95 per task) and full_response or "
        "time_to_first_token per call, each with a percentile method and min_samples.",
    )


@rule("SLA104", Severity.HIGH)
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
            f"{term.id} promises {_objective(term)} without saying what the seconds are. A "
            f"{_num(t)}-token answer with 1 s to the first token and 1 s of generation runs at "
            f"{_num(t)} tokens/s after the first token but {_num(t / 2)} tokens/s over the "
            "whole request: it passes one reading and fails the other.",
            f"Add `tokens_per_second_basis: after_first_token` (generation only) or "
            f"`whole_request` to {term.id}, matching the signed text.",
        )


# ---------------------------------------------------------------------------------------------
# SLA2xx: regions and cross-region routing


@rule("SLA201", Severity.HIGH)
def regions_outside_residency(contract: Contract) -> Iterator[Hit]:
    """A region that may serve lies outside the residency limits.

    Residency says where data may be processed; the region list and routing rights say where
    calls may be served. Serving a call in a region means sending its prompt there, so a
    primary region, or a failover region that routing allows, outside residency contradicts
    it, whatever `data_may_move` says. The vendor will read the contradiction in its favour.
    """
    regions = contract.regions
    if regions is None or regions.residency is None:
        return
    res = regions.residency
    routing = contract.routing
    serving: list[tuple[str, int, Region, str]] = [
        ("primary", i, r, "serves normally") for i, r in enumerate(regions.primary)
    ]
    if routing is not None and routing.cross_region is not RoutingPermission.NEVER:
        how = f"may serve when routing allows ({routing.cross_region})"
        serving += [("failover", i, r, how) for i, r in enumerate(regions.failover)]
    moves = routing is not None and routing.data_may_move
    for group, i, region, how in serving:
        if region_allowed_by_residency(region, res) is not False:
            continue
        yield Hit(
            ("regions", group, i),
            f"{_where(region)} {how}, but residency allows only {_residency(res)}. "
            + (
                "routing.data_may_move is true, so data may go there."
                if moves
                else "data_may_move is false, yet serving a call there sends its prompt there."
            ),
            f"Remove {region.name} from regions.{group} or replace it with a region inside "
            f"{_residency(res)}"
            + ("; or set routing.cross_region: never." if group == "failover" else "."),
        )


@rule("SLA202", Severity.MEDIUM)
def failover_without_residency(contract: Contract) -> Iterator[Hit]:
    """Routing may use failover regions, but no residency limit is written.

    With routing allowed and no `regions.residency`, nothing in the contract stops request data
    being processed in whatever country the failover regions are in.
    """
    regions = contract.regions
    if regions is None or regions.residency is not None or not regions.failover:
        return
    if contract.routing is None or not _routes(contract):
        return
    places = ", ".join(_where(r) for r in regions.failover)
    yield Hit(
        ("regions", "residency"),
        f"routing.cross_region is {contract.routing.cross_region}, so calls may be served in "
        f"{places}, and no residency limit says whether your data may be processed there.",
        "Add regions.residency (countries, and provinces if bound to one) listing where data "
        "may be processed, or set routing.cross_region: never.",
    )


@rule("SLA203", Severity.MEDIUM)
def routing_decider_unset(contract: Contract) -> Iterator[Hit]:
    """Cross-region routing is allowed but nobody is named to decide it.

    Unwritten, the vendor decides: it can move calls to a distant region at will, and each
    cross-region call adds a network round trip (+200 ms per step in the worked example).
    """
    r = contract.routing
    if r is None or r.cross_region is RoutingPermission.NEVER or r.decided_by is not None:
        return
    steps, how = _steps(contract)
    yield Hit(
        ("routing", "decided_by"),
        f"routing.cross_region is {r.cross_region} with decided_by unset, so in practice the "
        f"vendor decides. At +200 ms a round trip, a task of {how} gains "
        f"{_num(round(steps * 0.2, 1))} s when its calls are routed away.",
        "Set routing.decided_by to customer or joint (or vendor, knowingly), with notice_minutes.",
    )


@rule("SLA204", Severity.LOW)
def routing_always_without_notice(contract: Contract) -> Iterator[Hit]:
    """Calls may be routed to another region at any time, with no notice.

    `cross_region: always` without `notice_minutes` lets the vendor move traffic silently: the
    customer sees only slower tasks and cannot tell a slow vendor from a distant data centre.
    """
    r = contract.routing
    if r is None or r.cross_region is not RoutingPermission.ALWAYS or r.notice_minutes is not None:
        return
    yield Hit(
        ("routing", "notice_minutes"),
        "routing.cross_region is always and notice_minutes is unset: the vendor may route calls "
        "to another region at any time without telling you.",
        "Add routing.notice_minutes (e.g. 15), or narrow cross_region to peak_only.",
    )


@rule("SLA205", Severity.MEDIUM)
def regions_missing(contract: Contract) -> Iterator[Hit]:
    """The contract lists no regions.

    Without a region list the vendor may serve from anywhere: residency cannot be checked, and
    a distant region adds a round trip to every step of every task.
    """
    if contract.regions is not None:
        return
    steps, how = _steps(contract)
    yield Hit(
        ("regions",),
        "No regions section: calls may be served from any region. In the worked example, model "
        "calls crossing a region turn a 3.0 s task into 5.4 s; for a task of "
        f"{how} that is +{_num(round(steps * 0.2, 1))} s at 200 ms a round trip.",
        "Add regions.primary (names as traces report them in cloud.region, with jurisdiction), "
        "any failover regions, and regions.residency if data must stay in a country.",
    )


@rule("SLA206", Severity.MEDIUM)
def failover_without_routing(contract: Contract) -> Iterator[Hit]:
    """Failover regions are listed but no routing clause says when they may serve.

    Without `routing`, when calls may leave the primary regions, who decides and whether data
    may move are all unwritten.
    """
    regions = contract.regions
    if regions is None or not regions.failover or contract.routing is not None:
        return
    yield Hit(
        ("routing",),
        f"regions.failover lists {', '.join(_where(r) for r in regions.failover)}, but no "
        "routing section says when calls may go there, who decides, or whether data may move.",
        "Add routing with cross_region (never, peak_only or always), decided_by, "
        "data_may_move and notice_minutes.",
    )


# ---------------------------------------------------------------------------------------------
# SLA3xx: peak degradation


@rule("SLA301", Severity.HIGH)
def peak_missing(contract: Contract) -> Iterator[Hit]:
    """The contract says nothing about peak load.

    Capacity is bought on average load; latency breaks at peak. Unwritten, the default at peak
    is usually the worst of the three policies (smaller model, cache, queue), chosen by the
    vendor without notice. Queueing theory: at 85 % utilisation the mean wait is 5.7 service
    times.
    """
    if contract.peak is not None:
        return
    yield Hit(
        ("peak",),
        "No peak section: how peak is recognised and what the vendor does then are unwritten; "
        "unwritten, the default at peak is usually the worst of the three (a smaller model, "
        "stale cache, or an unbounded queue). At 200 ms service, going from 50 % to 85 % "
        "utilisation moves the mean queue wait from 200 ms to 1.13 s per call.",
        "Add peak.definition (request_rate, utilisation or busiest_minutes) and exactly one "
        "peak.degradation policy with its parameter (fallback_model, max_staleness_seconds or "
        "max_wait_ms).",
    )


@rule("SLA302", Severity.HIGH)
def peak_without_degradation(contract: Contract) -> Iterator[Hit]:
    """Peak is defined but no degradation policy is written.

    Knowing when peak starts is of little use without what happens then: unwritten, the default
    at peak is usually the worst of smaller model, cache and queue.
    """
    peak = contract.peak
    if peak is None or peak.degradation is not None:
        return
    yield Hit(
        ("peak", "degradation"),
        f"Peak is defined ({peak.definition.kind}) but peak.degradation is unwritten: the "
        "vendor may switch model, serve cached answers or queue without limit, and usually "
        "the worst of the three.",
        "Add exactly one of peak.degradation.smaller_model (fallback_model), cache "
        "(max_staleness_seconds) or queue (max_wait_ms).",
    )


_SNAPSHOT = re.compile(r"-\d{4}-?\d{2}-?\d{2}$")


@rule("SLA303", Severity.LOW)
def fallback_model_out_of_scope(contract: Contract) -> Iterator[Hit]:
    """The peak fallback model is outside the contract's model scope.

    Calls served by the fallback model at peak are then not covered by any term: the slowest
    hour of the month drops out of the figures exactly when it matters.
    """
    peak = contract.peak
    if peak is None or peak.degradation is None or peak.degradation.smaller_model is None:
        return
    models = contract.scope.models
    fallback = peak.degradation.smaller_model.fallback_model
    # a base name covers its dated snapshots (`gpt-4o` covers `gpt-4o-2024-08-06`), nothing else
    base = _SNAPSHOT.sub("", fallback)
    if not models or fallback in models or base in models:
        return
    yield Hit(
        ("peak", "degradation", "smaller_model", "fallback_model"),
        f"At peak the vendor may serve {fallback}, but scope.models covers only "
        f"{', '.join(models)}: those calls fall outside every term.",
        f"Add {fallback} to scope.models, or state that fallback calls count against the terms.",
    )


# ---------------------------------------------------------------------------------------------
# SLA4xx: rate-limit basis


@rule("SLA401", Severity.MEDIUM)
def per_request_rate_limit(contract: Contract) -> Iterator[Hit]:
    """The rate limit counts requests, not agent tasks.

    An agent task makes one request per step, so a per-request limiter admits far fewer tasks
    than its number suggests: 600 requests/min is 50 tasks/min at 12 steps.
    """
    rl = contract.rate_limit
    if rl is None or rl.basis is not RateLimitBasis.PER_REQUEST:
        return
    steps, how = _steps(contract)
    per = _PER[rl.period]
    tasks = _num(round(rl.limit / steps, 1))
    burst = f" (burst {_num(round(rl.burst / steps, 1))} tasks)" if rl.burst else ""
    yield Hit(
        ("rate_limit", "basis"),
        f"{_num(rl.limit)} requests/{per} is {tasks} tasks/{per}{burst} at {how}; a retry "
        "or a longer chain lowers it further.",
        f"Write the limit per task (basis: per_task, limit: {tasks}) or keep it per request and "
        "state steps_per_task so both sides compute the same task rate.",
    )


@rule("SLA402", Severity.LOW)
def steps_per_task_unstated(contract: Contract) -> Iterator[Hit]:
    """A per-request rate limit without steps_per_task.

    Without the expected steps per task, the per-task capacity the customer is buying is
    unwritten; slacheck assumes 12 (the worked example) and says so.
    """
    rl = contract.rate_limit
    if rl is None or rl.basis is not RateLimitBasis.PER_REQUEST or rl.steps_per_task is not None:
        return
    yield Hit(
        ("rate_limit", "steps_per_task"),
        f"The limit is {_num(rl.limit)} requests/{_PER[rl.period]} with no steps_per_task, so "
        f"the task rate is unwritten ({_num(round(rl.limit / _ASSUMED_STEPS, 1))} tasks/"
        f"{_PER[rl.period]} if a task takes {_ASSUMED_STEPS} steps).",
        "Add rate_limit.steps_per_task with the measured model calls per task.",
    )


@rule("SLA403", Severity.LOW)
def rate_limit_missing(contract: Contract) -> Iterator[Hit]:
    """The contract has no rate-limit clause.

    Without one, a 429 cannot be told apart from an outage: the contract cannot say whether
    throttling below the limit counts as a failure, because there is no limit.
    """
    if contract.rate_limit is not None:
        return
    yield Hit(
        ("rate_limit",),
        "No rate_limit section: the vendor may throttle at any rate, and a 429 under your "
        "expected load cannot be argued as a failure.",
        "Add rate_limit with basis (per_task preferred for agents), limit, period and burst.",
    )


# ---------------------------------------------------------------------------------------------
# SLA5xx: windows, samples and time


@rule("SLA501", Severity.MEDIUM)
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
            f"{term.id} promises {_objective(term)} without saying how p{_num(o.percentile)} "
            "is computed: with a long tail, nearest rank and linear interpolation can fall on "
            f"either side of {_num(o.threshold)}.",
            f"Add `method: nearest_rank` (or linear) to {term.id}'s objective.",
        )


@rule("SLA502", Severity.MEDIUM)
def time_zone_unstated(contract: Contract) -> Iterator[Hit]:
    """The time zone that bounds months and maintenance windows is unstated.

    Months, quarters and maintenance windows need a time zone. Unstated, slacheck (and most
    vendors) use UTC; in Asia/Shanghai the month then starts at 08:00 on the 1st, moving up to
    8 h of traffic into the neighbouring month's figures and credits.
    """
    if contract.contract.time_zone is not None:
        return
    windows = len(contract.exclusions.maintenance)
    also = f", and the {windows} maintenance window(s) move with it" if windows else ""
    yield Hit(
        ("contract", "time_zone"),
        "No time_zone: months are bounded at UTC midnight. For a team in Asia/Shanghai a "
        "month then starts at 08:00 on the 1st, so up to 8 h of traffic counts in the wrong "
        f"month{also}.",
        "Add contract.time_zone (an IANA name such as Asia/Shanghai or UTC).",
    )


@rule("SLA503", Severity.MEDIUM)
def rolling_window(contract: Contract) -> Iterator[Hit]:
    """A rolling 30-day window where a calendar month is meant.

    Invoices, credits and reports run per calendar month. A rolling window has no month to
    match: 31-day months leave a day out, and which of the ~30 overlapping windows decides a
    month's credit is unwritten.
    """
    targets: list[tuple[Loc, str, Window]] = [
        (("latency", i, "window"), t.id, t.window) for i, t in enumerate(contract.latency)
    ]
    if contract.availability is not None:
        targets.append((("availability", "window"), "availability", contract.availability.window))
    for loc, name, window in targets:
        if window is not Window.ROLLING_30_DAYS:
            continue
        yield Hit(
            loc,
            f"{name} is evaluated over rolling 30 days, but credits are owed per calendar month: "
            "in a 31-day month one day falls outside any single window, and a bad week counts in "
            "up to 30 overlapping windows.",
            f"Set {name}'s window to calendar_month.",
        )


@rule("SLA504", Severity.MEDIUM)
def min_samples_missing(contract: Contract) -> Iterator[Hit]:
    """A term has no minimum sample count.

    Without `min_samples`, a thin month can be declared met on a handful of calls: p95 of 3
    calls is simply the slowest of them, and one good call makes 100 % availability.
    """
    targets: list[tuple[Loc, str]] = [
        (("latency", i, "min_samples"), t.id)
        for i, t in enumerate(contract.latency)
        if t.min_samples is None
    ]
    avail = contract.availability
    if avail is not None and avail.min_samples is None:
        targets.append((("availability", "min_samples"), "availability"))
    for loc, name in targets:
        yield Hit(
            loc,
            f"{name} has no min_samples: a month with 3 calls could be reported as met, and "
            "that verdict would carry the same weight as one on 100,000.",
            f"Add min_samples to {name} (e.g. 1,000 calls a month); fewer gives `no data`.",
        )


def _weekly_overlap(w: WeeklyRecurrence) -> int:
    """Minutes a week that a weekly window spends in Mon–Fri 09:00–18:00 (local)."""
    start = w.start.hour * 60 + w.start.minute
    week = 7 * 1440
    total = 0
    for day in w.days:
        a = _DAYS.index(day) * 1440 + start
        b = a + w.duration_minutes
        for d in range(5):
            for wrap in (0, week):  # a window late on Sunday runs into Monday
                lo, hi = d * 1440 + _BUSINESS_START + wrap, d * 1440 + _BUSINESS_END + wrap
                total += max(0, min(b, hi) - max(a, lo))
    return total


def _interval_overlap(m: MaintenanceWindow, zone: ZoneInfo) -> int:
    """Minutes of a one-off window inside Mon–Fri 09:00–18:00 in the contract's zone."""
    if m.start is None or m.end is None:  # a weekly window; the model guarantees one form
        return 0

    def local(t: dt.datetime) -> dt.datetime:
        return t.replace(tzinfo=zone) if t.tzinfo is None else t.astimezone(zone)

    start, end = local(m.start), local(m.end)
    total = 0.0
    day = start.date()
    while day <= end.date():
        if day.weekday() < 5:
            lo = dt.datetime.combine(day, dt.time(9), tzinfo=zone)
            hi = dt.datetime.combine(day, dt.time(18), tzinfo=zone)
            total += max(0.0, (min(end, hi) - max(start, lo)).total_seconds() / 60)
        day += dt.timedelta(days=1)
    return round(total)


@rule("SLA505", Severity.MEDIUM)
def maintenance_in_business_hours(contract: Contract) -> Iterator[Hit]:
    """A maintenance window falls inside business hours.

    Calls in a maintenance window are excluded from every term. A window inside 09:00–18:00
    Monday to Friday (in the contract's time zone) excludes the hours when the customer's
    agents are busiest, so an outage then costs the vendor nothing.
    """
    zone = contract.zone
    for i, m in enumerate(contract.exclusions.maintenance):
        if m.weekly is not None:
            w = m.weekly
            minutes = _weekly_overlap(w)
            what = (
                f"The weekly window ({', '.join(w.days)} {w.start:%H:%M}, "
                f"{w.duration_minutes} min) spends {_minutes(minutes)} a week"
            )
        else:
            minutes = _interval_overlap(m, zone)
            what = f"The window {m.start} to {m.end} spends {_minutes(minutes)}"
        if minutes == 0:
            continue
        yield Hit(
            ("exclusions", "maintenance", i),
            f"{what} inside business hours (Mon–Fri 09:00–18:00, {_zone_name(contract)}); "
            "calls then are excluded, so an outage while your agents are busiest does not count.",
            "Move maintenance outside business hours (e.g. Sunday 02:00–04:00 local) or state "
            "that maintenance inside business hours counts as downtime.",
        )


@rule("SLA506", Severity.LOW)
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
            "An excluded call (maintenance, long input, downgraded tier) inside an agent task: "
            "does it take the whole task out of the task-level terms, or only itself?",
        ),
        "model_scope": (
            bool(contract.scope.models),
            "A call asked for one model and answered by another (a fallback at peak): is it "
            "in the scope of the listed models by the model requested or the model served?",
        ),
        "per_task_rate_counts": (
            contract.rate_limit is not None
            and contract.rate_limit.basis is RateLimitBasis.PER_TASK,
            "A per-task limit: does it count the tasks started in a period or the tasks active "
            "in it? An agent task lasts longer than a minute.",
        ),
        "at_the_limit": (
            bool(contract.latency),
            "A value exactly at a threshold: is it within it (≤) or beyond it (<)?",
        ),
    }
    defaults = type(contract.readings)()
    for name, (matters, question) in relevant.items():
        if matters and name not in stated:
            default = getattr(defaults, name)
            yield Hit(
                ("readings", name),
                f"{question} The contract does not say; slacheck reads it as "
                f"`{default}` and says so with every verdict.",
                f"State it: readings.{name}: {default} (or the reading the parties agree).",
            )


# ---------------------------------------------------------------------------------------------
# SLA6xx: availability, credits and exclusions


@rule("SLA601", Severity.HIGH)
def credit_gap_below_target(contract: Contract) -> Iterator[Hit]:
    """Availability just under the target earns no credit.

    The highest credit tier should end exactly at the availability target. If it ends lower,
    a month that misses the target by less than the gap is a breach that costs the vendor
    nothing.
    """
    avail, credits = contract.availability, contract.credits
    if avail is None or credits is None:
        return
    top_i = max(range(len(credits.tiers)), key=lambda i: credits.tiers[i].to_percent)
    top = credits.tiers[top_i].to_percent
    target = avail.target_percent
    if top >= target:
        return
    gap = target - top
    yield Hit(
        ("credits", "tiers", top_i, "to_percent"),
        f"The target is {_num(target)} % but the highest credit tier ends at {_num(top)} %: a "
        f"month at {_num(round((top + target) / 2, 4))} % misses the target and earns nothing. "
        f"The gap is {_num(round(gap, 4))} points, {_minutes(gap / 100 * _MONTH_MINUTES)} of "
        "full downtime in a 30-day month.",
        f"Make the top tier run up to {_num(target)} (to_percent: {_num(target)}).",
    )


@rule("SLA602", Severity.LOW)
def lowest_tier_above_zero(contract: Contract) -> Iterator[Hit]:
    """The lowest credit tier does not reach 0 %.

    Availability below the lowest tier earns no credit at all: the worse the month, the less
    is owed.
    """
    credits = contract.credits
    if credits is None:
        return
    low_i = min(range(len(credits.tiers)), key=lambda i: credits.tiers[i].from_percent)
    low = credits.tiers[low_i]
    if low.from_percent <= 0:
        return
    yield Hit(
        ("credits", "tiers", low_i, "from_percent"),
        f"The lowest tier starts at {_num(low.from_percent)} %: a month below that earns no "
        f"credit, less than the {_num(low.credit_percent)} % owed for a better month.",
        f"Set the lowest tier's from_percent to 0 (e.g. 0–{_num(low.from_percent)} % → 100 %).",
    )


@rule("SLA603", Severity.MEDIUM)
def credits_availability_mismatch(contract: Contract) -> Iterator[Hit]:
    """Credits without an availability target, or a target without credits.

    Credit tiers are bands of monthly availability; without a target (and its failure
    definition) nobody can compute them. A target without credits has no remedy.
    """
    avail, credits = contract.availability, contract.credits
    if credits is not None and avail is None:
        yield Hit(
            ("availability",),
            f"credits has {len(credits.tiers)} tier(s) but no availability section defines the "
            "target, window and what counts as a failed call, so no tier can be computed.",
            "Add availability with target_percent, window: calendar_month, failures and "
            "min_samples.",
        )
    elif avail is not None and credits is None:
        yield Hit(
            ("credits",),
            f"availability promises {_num(avail.target_percent)} % but no credits section says "
            "what a missed month is worth: the target has no remedy.",
            f"Add credits.tiers, the top one ending at {_num(avail.target_percent)} (e.g. "
            "< target → 10 %, < 99.0 → 25 %, < 95.0 → 100 %), and claim_deadline_days.",
        )


@rule("SLA604", Severity.LOW)
def claim_deadline_missing(contract: Contract) -> Iterator[Hit]:
    """No claim deadline for service credits.

    Without `claim_deadline_days`, the vendor's standard terms decide how long the customer has
    to claim, and a missed deadline forfeits the credit.
    """
    credits = contract.credits
    if credits is None or credits.claim_deadline_days is not None:
        return
    most = max(t.credit_percent for t in credits.tiers)
    yield Hit(
        ("credits", "claim_deadline_days"),
        f"Credits of up to {_num(most)} % of the monthly fee have no claim deadline in the "
        "contract, so the vendor's standard terms (often short) decide when a claim is too late.",
        "Add credits.claim_deadline_days (e.g. 30), counted from the end of the month.",
    )


_AGENT_INPUT_TOKENS = 8000


@rule("SLA605", Severity.MEDIUM)
def low_input_token_exclusion(contract: Contract) -> Iterator[Hit]:
    """Requests over a small input size are excluded.

    An agent step resends the system prompt, the conversation so far and the tool results, so
    input grows step by step; below 8,000 tokens the exclusion removes most agent calls, and
    the slowest ones, from every term.
    """
    limit = contract.exclusions.max_input_tokens
    if limit is None or limit >= _AGENT_INPUT_TOKENS:
        return
    yield Hit(
        ("exclusions", "max_input_tokens"),
        f"Requests over {_num(limit)} input tokens are excluded. An agent call carries the "
        "system prompt, tool definitions, history and tool results; after a few steps most "
        f"calls exceed {_num(limit)} tokens and drop out of every term.",
        "Raise exclusions.max_input_tokens to the model's context length (e.g. 128,000), or "
        "remove it.",
    )


@rule("SLA606", Severity.LOW)
def downgraded_tiers_excluded(contract: Contract) -> Iterator[Hit]:
    """Calls on downgraded service tiers are excluded, and the vendor decides the tier.

    If the vendor may serve a call on a lower tier (e.g. `flex`) at its discretion, excluding
    that tier lets it move the worst calls out of the SLA.
    """
    tiers = contract.exclusions.downgraded_service_tiers
    if not tiers:
        return
    yield Hit(
        ("exclusions", "downgraded_service_tiers"),
        f"Calls served on {', '.join(tiers)} are excluded, and the response's service tier is "
        "set by the vendor: at peak it can serve calls there and out of every term.",
        "Exclude only calls the customer requested on those tiers (the request's service_tier), "
        "or remove the exclusion.",
    )


@rule("SLA607", Severity.MEDIUM)
def failures_narrowed(contract: Contract) -> Iterator[Hit]:
    """Timeouts or throttling below the limit do not count as failures.

    For an agent a timeout or a 429 under the contracted rate is an outage: the task stops.
    Excluding them lets availability read high while tasks fail.
    """
    avail = contract.availability
    if avail is None:
        return
    f = avail.failures
    for name, counted, what in (
        ("timeouts", f.timeouts, "a call that times out"),
        ("throttling_below_limit", f.throttling_below_limit, "a 429 under the rate limit"),
    ):
        if counted:
            continue
        yield Hit(
            ("availability", "failures", name),
            f"failures.{name} is false: {what} counts as served, so "
            f"{_num(avail.target_percent)} % availability can be met while agent tasks stop.",
            f"Set availability.failures.{name}: true.",
        )
