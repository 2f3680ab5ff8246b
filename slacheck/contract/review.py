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
    TimeSliceObjective,
    TokensPerSecondBasis,
    WeeklyRecurrence,
    Window,
    region_allowed_by_residency,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.names import model_base

__all__ = ["RULES", "Finding", "Hit", "Rule", "Says", "Severity", "review", "rule"]

Loc = tuple[str | int, ...]


class Says(MessageCode):
    """Everything the clause review says: rule titles, why a clause is weak, what to write."""

    # pieces the sentences below are built from
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
    STEPS_STATED = NPC_(
        "review.steps.stated",
        "{steps} step (rate_limit.steps_per_task)",
        "{steps} steps (rate_limit.steps_per_task)",
        count="steps",
    )
    STEPS_ASSUMED = NPC_(
        "review.steps.assumed",
        "{steps} step (assumed: steps_per_task is unstated)",
        "{steps} steps (assumed: steps_per_task is unstated)",
        count="steps",
    )
    PER_SECOND = NC_("review.per.second", "s")
    PER_MINUTE = NC_("review.per.minute", "min")
    PER_HOUR = NC_("review.per.hour", "h")
    PER_DAY = NC_("review.per.day", "day")
    ZONE_UNSTATED = NC_("review.zone.unstated", "UTC, since time_zone is unstated")
    HOURS = NC_("review.hours", "{n} h")
    MINUTES = NC_("review.minutes", "{n} min")
    REGION_IN = NC_("review.region.in", "{region} ({country})")
    REGION_IN_PROVINCE = NC_("review.region.in_province", "{region} ({country}, {province})")
    RESIDENCY_COUNTRIES = NC_("review.residency.countries", "{countries}")
    RESIDENCY_PROVINCES = NC_("review.residency.provinces", "provinces {provinces}")
    RESIDENCY_BOTH = NC_("review.residency.both", "{countries}; provinces {provinces}")
    RESIDENCY_NONE = NC_("review.residency.none", "none")

    # SLA1xx: metering point
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

    # SLA2xx: regions and cross-region routing
    SLA201_TITLE = NC_("SLA201.title", "A region that may serve lies outside the residency limits.")
    SLA201_SERVES = NC_("SLA201.serves", "serves normally")
    SLA201_MAY_SERVE = NC_("SLA201.may_serve", "may serve when routing allows ({routing})")
    SLA201_WHY_MOVES = NC_(
        "SLA201.why.moves",
        "{region} {how}, but residency allows only {residency}. routing.data_may_move is "
        "true, so data may go there.",
    )
    SLA201_WHY_STAYS = NC_(
        "SLA201.why.stays",
        "{region} {how}, but residency allows only {residency}. data_may_move is false, yet "
        "serving a call there sends its prompt there.",
    )
    SLA201_FIX_PRIMARY = NC_(
        "SLA201.fix.primary",
        "Remove {region} from regions.primary or replace it with a region inside {residency}.",
    )
    SLA201_FIX_FAILOVER = NC_(
        "SLA201.fix.failover",
        "Remove {region} from regions.failover or replace it with a region inside "
        "{residency}; or set routing.cross_region: never.",
    )
    SLA202_TITLE = NC_(
        "SLA202.title",
        "Routing may use failover regions, but no residency limit is written.",
    )
    SLA202_WHY = NC_(
        "SLA202.why",
        "routing.cross_region is {routing}, so calls may be served in {places}, and no "
        "residency limit says whether your data may be processed there.",
    )
    SLA202_FIX = NC_(
        "SLA202.fix",
        "Add regions.residency (countries, and provinces if bound to one) listing where data "
        "may be processed, or set routing.cross_region: never.",
    )
    SLA203_TITLE = NC_(
        "SLA203.title", "Cross-region routing is allowed but nobody is named to decide it."
    )
    SLA203_WHY = NC_(
        "SLA203.why",
        "routing.cross_region is {routing} with decided_by unset, so in practice the vendor "
        "decides. At +200 ms a round trip, a task of {steps} gains {seconds} s when its calls "
        "are routed away.",
    )
    SLA203_FIX = NC_(
        "SLA203.fix",
        "Set routing.decided_by to customer or joint (or vendor, knowingly), with notice_minutes.",
    )
    SLA204_TITLE = NC_(
        "SLA204.title", "Calls may be routed to another region at any time, with no notice."
    )
    SLA204_WHY = NC_(
        "SLA204.why",
        "routing.cross_region is always and notice_minutes is unset: the vendor may route "
        "calls to another region at any time without telling you.",
    )
    SLA204_FIX = NC_(
        "SLA204.fix", "Add routing.notice_minutes (e.g. 15), or narrow cross_region to peak_only."
    )
    SLA205_TITLE = NC_("SLA205.title", "The contract lists no regions.")
    SLA205_WHY = NC_(
        "SLA205.why",
        "No regions section: calls may be served from any region. In the worked example, model "
        "calls crossing a region turn a 3.0 s task into 5.4 s; for a task of {steps} that is "
        "+{seconds} s at 200 ms a round trip.",
    )
    SLA205_FIX = NC_(
        "SLA205.fix",
        "Add regions.primary (names as traces report them in cloud.region, with "
        "jurisdiction), any failover regions, and regions.residency if data must stay in a "
        "country.",
    )
    SLA206_TITLE = NC_(
        "SLA206.title",
        "Failover regions are listed but no routing clause says when they may serve.",
    )
    SLA206_WHY = NC_(
        "SLA206.why",
        "regions.failover lists {places}, but no routing section says when calls may go "
        "there, who decides, or whether data may move.",
    )
    SLA206_FIX = NC_(
        "SLA206.fix",
        "Add routing with cross_region (never, peak_only or always), decided_by, data_may_move "
        "and notice_minutes.",
    )

    # SLA3xx: peak degradation
    SLA301_TITLE = NC_("SLA301.title", "The contract says nothing about peak load.")
    SLA301_WHY = NC_(
        "SLA301.why",
        "No peak section: how peak is recognised and what the vendor does then are unwritten; "
        "unwritten, the default at peak is usually the worst of the three (a smaller model, "
        "stale cache, or an unbounded queue). At 200 ms service, going from 50 % to 85 % "
        "utilisation moves the mean queue wait from 200 ms to 1.13 s per call.",
    )
    SLA301_FIX = NC_(
        "SLA301.fix",
        "Add peak.definition (request_rate, utilisation or busiest_minutes) and exactly one "
        "peak.degradation policy with its parameter (fallback_model, max_staleness_seconds or "
        "max_wait_ms).",
    )
    SLA302_TITLE = NC_("SLA302.title", "Peak is defined but no degradation policy is written.")
    SLA302_WHY = NC_(
        "SLA302.why",
        "Peak is defined ({definition}) but peak.degradation is unwritten: the vendor may "
        "switch model, serve cached answers or queue without limit, and usually the worst of "
        "the three.",
    )
    SLA302_FIX = NC_(
        "SLA302.fix",
        "Add exactly one of peak.degradation.smaller_model (fallback_model), cache "
        "(max_staleness_seconds) or queue (max_wait_ms).",
    )
    SLA303_TITLE = NC_(
        "SLA303.title", "The peak fallback model is outside the contract's model scope."
    )
    SLA303_WHY = NC_(
        "SLA303.why",
        "At peak the vendor may serve {fallback}, but scope.models covers only {models}: "
        "those calls fall outside every term.",
    )
    SLA303_FIX = NC_(
        "SLA303.fix",
        "Add {fallback} to scope.models, or state that fallback calls count against the terms.",
    )

    # SLA4xx: rate-limit basis
    SLA401_TITLE = NC_("SLA401.title", "The rate limit counts requests, not agent tasks.")
    SLA401_WHY = NC_(
        "SLA401.why",
        "{limit} requests/{per} is {tasks} tasks/{per} at {steps}; a retry or a longer chain "
        "lowers it further.",
    )
    SLA401_WHY_BURST = NPC_(
        "SLA401.why.burst",
        "{limit} requests/{per} is {tasks} tasks/{per} (burst {burst} task) at {steps}; a retry "
        "or a longer chain lowers it further.",
        "{limit} requests/{per} is {tasks} tasks/{per} (burst {burst} tasks) at {steps}; a retry "
        "or a longer chain lowers it further.",
        count="burst",
    )
    SLA401_FIX = NC_(
        "SLA401.fix",
        "Write the limit per task (basis: per_task, limit: {tasks}) or keep it per request and "
        "state steps_per_task so both sides compute the same task rate.",
    )
    SLA402_TITLE = NC_("SLA402.title", "A per-request rate limit without steps_per_task.")
    SLA402_WHY = NPC_(
        "SLA402.why",
        "The limit is {limit} requests/{per} with no steps_per_task, so the task rate is "
        "unwritten ({tasks} tasks/{per} if a task takes {steps} step).",
        "The limit is {limit} requests/{per} with no steps_per_task, so the task rate is "
        "unwritten ({tasks} tasks/{per} if a task takes {steps} steps).",
        count="steps",
    )
    SLA402_FIX = NC_(
        "SLA402.fix", "Add rate_limit.steps_per_task with the measured model calls per task."
    )
    SLA403_TITLE = NC_("SLA403.title", "The contract has no rate-limit clause.")
    SLA403_WHY = NC_(
        "SLA403.why",
        "No rate_limit section: the vendor may throttle at any rate, and a 429 under your "
        "expected load cannot be argued as a failure.",
    )
    SLA403_FIX = NC_(
        "SLA403.fix",
        "Add rate_limit with basis (per_task preferred for agents), limit, period and burst.",
    )

    # SLA5xx: windows, samples and time
    SLA501_TITLE = NC_("SLA501.title", "The percentile method is unstated.")
    SLA501_WHY = NC_(
        "SLA501.why",
        "{term} promises {objective} without saying how p{percentile} is computed: with a "
        "long tail, nearest rank and linear interpolation can fall on either side of "
        "{threshold}.",
    )
    SLA501_FIX = NC_("SLA501.fix", "Add `method: nearest_rank` (or linear) to {term}'s objective.")
    SLA502_TITLE = NC_(
        "SLA502.title",
        "The time zone that bounds months and maintenance windows is unstated.",
    )
    SLA502_WHY = NC_(
        "SLA502.why",
        "No time_zone: months are bounded at UTC midnight. For a team in Asia/Shanghai a month "
        "then starts at 08:00 on the 1st, so up to 8 h of traffic counts in the wrong month.",
    )
    SLA502_WHY_MAINTENANCE = NPC_(
        "SLA502.why.maintenance",
        "No time_zone: months are bounded at UTC midnight. For a team in Asia/Shanghai a month "
        "then starts at 08:00 on the 1st, so up to 8 h of traffic counts in the wrong month, and "
        "the {windows} maintenance window moves with it.",
        "No time_zone: months are bounded at UTC midnight. For a team in Asia/Shanghai a month "
        "then starts at 08:00 on the 1st, so up to 8 h of traffic counts in the wrong month, and "
        "the {windows} maintenance windows move with it.",
        count="windows",
    )
    SLA502_FIX = NC_(
        "SLA502.fix", "Add contract.time_zone (an IANA name such as Asia/Shanghai or UTC)."
    )
    SLA503_TITLE = NC_("SLA503.title", "A rolling 30-day window where a calendar month is meant.")
    SLA503_WHY = NC_(
        "SLA503.why",
        "{name} is evaluated over rolling 30 days, but credits are owed per calendar month: in "
        "a 31-day month one day falls outside any single window, and a bad week counts in up "
        "to 30 overlapping windows.",
    )
    SLA503_FIX = NC_("SLA503.fix", "Set {name}'s window to calendar_month.")
    SLA504_TITLE = NC_("SLA504.title", "A term has no minimum sample count.")
    SLA504_WHY = NC_(
        "SLA504.why",
        "{name} has no min_samples: a month with 3 calls could be reported as met, and that "
        "verdict would carry the same weight as one on 100,000.",
    )
    SLA504_FIX = NC_(
        "SLA504.fix",
        "Add min_samples to {name} (e.g. 1,000 calls a month); fewer gives `no data`.",
    )
    SLA505_TITLE = NC_("SLA505.title", "A maintenance window falls inside business hours.")
    SLA505_WEEKLY = NC_(
        "SLA505.weekly",
        "The weekly window ({days} {start}, {duration} min) spends {overlap} a week",
    )
    SLA505_ONCE = NC_("SLA505.once", "The window {start} to {end} spends {overlap}")
    SLA505_WHY = NC_(
        "SLA505.why",
        "{what} inside business hours (Mon–Fri 09:00–18:00, {zone}); calls then are excluded, "
        "so an outage while your agents are busiest does not count.",
    )
    SLA505_FIX = NC_(
        "SLA505.fix",
        "Move maintenance outside business hours (e.g. Sunday 02:00–04:00 local) or state that "
        "maintenance inside business hours counts as downtime.",
    )
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

    # SLA6xx: availability, credits and exclusions
    SLA601_TITLE = NC_("SLA601.title", "Availability just under the target earns no credit.")
    SLA601_WHY = NPC_(
        "SLA601.why",
        "The target is {target} % but the highest credit tier ends at {top} %: a month at "
        "{between} % misses the target and earns nothing. The gap is {gap} point, {downtime} of "
        "full downtime in a 30-day month.",
        "The target is {target} % but the highest credit tier ends at {top} %: a month at "
        "{between} % misses the target and earns nothing. The gap is {gap} points, {downtime} of "
        "full downtime in a 30-day month.",
        count="gap",
    )
    SLA601_FIX = NC_("SLA601.fix", "Make the top tier run up to {target} (to_percent: {target}).")
    SLA602_TITLE = NC_("SLA602.title", "The lowest credit tier does not reach 0 %.")
    SLA602_WHY = NC_(
        "SLA602.why",
        "The lowest tier starts at {low} %: a month below that earns no credit, less than the "
        "{credit} % owed for a better month.",
    )
    SLA602_FIX = NC_(
        "SLA602.fix",
        "Set the lowest tier's from_percent to 0 (e.g. 0–{low} % → 100 %).",
    )
    SLA603_TITLE = NC_(
        "SLA603.title", "Credits without an availability target, or a target without credits."
    )
    SLA603_WHY_NO_TARGET = NPC_(
        "SLA603.why.no_target",
        "credits has {tiers} tier but no availability section defines the target, window and what "
        "counts as a failed call, so no tier can be computed.",
        "credits has {tiers} tiers but no availability section defines the target, window and "
        "what counts as a failed call, so no tier can be computed.",
        count="tiers",
    )
    SLA603_FIX_NO_TARGET = NC_(
        "SLA603.fix.no_target",
        "Add availability with target_percent, window: calendar_month, failures and min_samples.",
    )
    SLA603_WHY_NO_CREDITS = NC_(
        "SLA603.why.no_credits",
        "availability promises {target} % but no credits section says what a missed month is "
        "worth: the target has no remedy.",
    )
    SLA603_FIX_NO_CREDITS = NC_(
        "SLA603.fix.no_credits",
        "Add credits.tiers, the top one ending at {target} (e.g. < target → 10 %, < 99.0 → "
        "25 %, < 95.0 → 100 %), and claim_deadline_days.",
    )
    SLA604_TITLE = NC_("SLA604.title", "No claim deadline for service credits.")
    SLA604_WHY = NC_(
        "SLA604.why",
        "Credits of up to {most} % of the monthly fee have no claim deadline in the contract, "
        "so the vendor's standard terms (often short) decide when a claim is too late.",
    )
    SLA604_FIX = NC_(
        "SLA604.fix",
        "Add credits.claim_deadline_days (e.g. 30), counted from the end of the month.",
    )
    SLA605_TITLE = NC_("SLA605.title", "Requests over a small input size are excluded.")
    SLA605_WHY = NPC_(
        "SLA605.why",
        "Requests over {limit} input token are excluded. An agent call carries the system prompt, "
        "tool definitions, history and tool results; after a few steps most calls exceed {limit} "
        "token and drop out of every term.",
        "Requests over {limit} input tokens are excluded. An agent call carries the system "
        "prompt, tool definitions, history and tool results; after a few steps most calls exceed "
        "{limit} tokens and drop out of every term.",
        count="limit",
    )
    SLA605_FIX = NC_(
        "SLA605.fix",
        "Raise exclusions.max_input_tokens to the model's context length (e.g. 128,000), or "
        "remove it.",
    )
    SLA606_TITLE = NC_(
        "SLA606.title",
        "Calls on downgraded service tiers are excluded, and the vendor decides the tier.",
    )
    SLA606_WHY = NC_(
        "SLA606.why",
        "Calls served on {tiers} are excluded, and the response's service tier is set by the "
        "vendor: at peak it can serve calls there and out of every term.",
    )
    SLA606_FIX = NC_(
        "SLA606.fix",
        "Exclude only calls the customer requested on those tiers (the request's "
        "service_tier), or remove the exclusion.",
    )
    SLA607_TITLE = NC_(
        "SLA607.title", "Timeouts or throttling below the limit do not count as failures."
    )
    SLA607_TIMEOUTS = NC_("SLA607.what.timeouts", "a call that times out")
    SLA607_THROTTLING = NC_("SLA607.what.throttling_below_limit", "a 429 under the rate limit")
    SLA607_WHY = NC_(
        "SLA607.why",
        "failures.{name} is false: {what} counts as served, so {target} % availability can be "
        "met while agent tasks stop.",
    )
    SLA607_FIX = NC_("SLA607.fix", "Set availability.failures.{name}: true.")


_BUILT_IN_TITLES = {str(m).removesuffix(".title"): m for m in Says if str(m).endswith(".title")}


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
    """One weak clause: which rule, where in the contract, why it matters, what to write.

    ``headline``, ``why`` and ``fix`` are messages (codes with parameters); ``title``,
    ``explanation`` and ``suggestion`` are their English text.
    """

    code: str
    severity: Severity
    field: Loc
    headline: Message
    why: Message
    fix: Message

    @property
    def path(self) -> str:
        """`latency[0].measurement_point`, for people."""
        out = ""
        for seg in self.field:
            out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else seg)
        return out

    @property
    def title(self) -> str:
        return self.headline.text

    @property
    def explanation(self) -> str:
        return self.why.text

    @property
    def suggestion(self) -> str:
        return self.fix.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "field": list(self.field),
            "path": self.path,
            "title": self.title,
            "explanation": self.explanation,
            "suggestion": self.suggestion,
            "messages": {
                "title": self.headline.to_dict(),
                "explanation": self.why.to_dict(),
                "suggestion": self.fix.to_dict(),
            },
        }


@dataclass(frozen=True, slots=True)
class Hit:
    """What a rule function yields; the registry adds the rule's code, severity and title."""

    field: Loc
    why: Message
    fix: Message


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


def rule(
    code: str, severity: Severity, *, title: MessageCode | None = None
) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule; built-in rules use this exactly as an outside plugin would.

    The title is the docstring's first line, said through the message ``title`` (default: the
    built-in ``Says`` member ``<code>.title``), whose English template must be that line.
    """

    def register(fn: RuleFunc) -> RuleFunc:
        if not _CODE.fullmatch(code):
            raise ValueError(f"rule code {code!r} must look like SLA101")
        if code in RULES:
            raise ValueError(f"rule code {code} is registered twice")
        doc = inspect.getdoc(fn)
        if not doc:
            raise TypeError(f"rule {code} needs a docstring: it is the rule's documentation")
        first = doc.splitlines()[0].strip()
        said = title if title is not None else _BUILT_IN_TITLES.get(code)
        if said is None or said.template != first:
            raise ValueError(f"rule {code} needs a title message whose template is {first!r}")
        headline = said()

        def check(contract: Contract) -> Iterator[Finding]:
            for hit in fn(contract):
                yield Finding(code, severity, hit.field, headline, hit.why, hit.fix)

        RULES[code] = Rule(code, severity, first, doc, check)
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
# Wording helpers: every explanation quotes the contract's own numbers, as message parameters

_ASSUMED_STEPS = 12  # DOMAIN.md's worked example: a 12-step agent task
_BUSINESS_START, _BUSINESS_END = 9 * 60, 18 * 60  # 09:00–18:00, minutes after midnight
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTH_MINUTES = 30 * 24 * 60


def _num(x: float) -> float:
    """A number for a message: rounded to 6 significant digits (the message formats it)."""
    return int(x) if float(x).is_integer() else float(f"{x:.6g}")


def _objective(term: LatencyTerm) -> Message:
    o = term.objective
    tps = term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
    op = "≤" if o.direction is Direction.AT_MOST else "≥"
    if isinstance(o, OccurrenceObjective):
        code = Says.OBJECTIVE_TPS if tps else Says.OBJECTIVE_MS
        return code(percentile=_num(o.percentile), op=op, threshold=_num(o.threshold))
    code = Says.SLICES_TPS if tps else Says.SLICES_MS
    return code(
        passing=_num(o.slices_passing_percent),
        minutes=o.slice_minutes,
        statistic=str(o.statistic),
        op=op,
        threshold=_num(o.threshold),
    )


def _steps(contract: Contract) -> tuple[float, Message]:
    """Steps per agent task and how we know it."""
    rl = contract.rate_limit
    if rl is not None and rl.steps_per_task is not None:
        return rl.steps_per_task, Says.STEPS_STATED(steps=_num(rl.steps_per_task))
    return _ASSUMED_STEPS, Says.STEPS_ASSUMED(steps=_ASSUMED_STEPS)


def _per(period: str) -> Message:
    return {
        "second": Says.PER_SECOND,
        "minute": Says.PER_MINUTE,
        "hour": Says.PER_HOUR,
        "day": Says.PER_DAY,
    }[str(period)]()


def _zone_name(contract: Contract) -> Param:
    tz = contract.contract.time_zone
    return tz if tz else Says.ZONE_UNSTATED()


def _minutes(m: float) -> Message:
    if m >= 120:
        return Says.HOURS(n=_num(round(m / 60, 1)))
    return Says.MINUTES(n=_num(round(m)))


def _routes(contract: Contract) -> bool:
    r = contract.routing
    return r is not None and r.cross_region is not RoutingPermission.NEVER


def _where(region: Region) -> Param:
    j = region.jurisdiction
    if j is None:
        return region.name
    if j.province:
        return Says.REGION_IN_PROVINCE(region=region.name, country=j.country, province=j.province)
    return Says.REGION_IN(region=region.name, country=j.country)


def _residency(res: Residency) -> Message:
    countries, provinces = list(res.countries), list(res.provinces)
    if countries and provinces:
        return Says.RESIDENCY_BOTH(countries=countries, provinces=provinces)
    if provinces:
        return Says.RESIDENCY_PROVINCES(provinces=provinces)
    if countries:
        return Says.RESIDENCY_COUNTRIES(countries=countries)
    return Says.RESIDENCY_NONE()


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
            Says.SLA101_WHY(
                term=term.id, objective=_objective(term), threshold=_num(term.objective.threshold)
            ),
            Says.SLA101_FIX(term=term.id),
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
            Says.SLA102_WHY(
                term=term.id,
                objective=_objective(term),
                point=str(term.measurement_point),
                steps=how,
                seconds=_num(round(total_s, 1)),
            ),
            Says.SLA102_FIX(term=term.id),
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
    _, how = _steps(contract)
    why = (
        Says.SLA103_WHY_AVAILABILITY(target=_num(avail.target_percent), steps=how)
        if avail is not None
        else Says.SLA103_WHY_NOTHING(steps=how)
    )
    yield Hit(("latency",), why, Says.SLA103_FIX())


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
            Says.SLA104_WHY(
                term=term.id, objective=_objective(term), tokens=_num(t), half=_num(t / 2)
            ),
            Says.SLA104_FIX(term=term.id),
        )


@rule("SLA105", Severity.MEDIUM)
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
            Says.SLA105_WHY(
                term=term.id,
                minutes=objective.slice_minutes,
                threshold=_num(objective.threshold),
                default=str(objective.statistic),
            ),
            Says.SLA105_FIX(term=term.id),
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
    serving: list[tuple[str, int, Region, Message]] = [
        ("primary", i, r, Says.SLA201_SERVES()) for i, r in enumerate(regions.primary)
    ]
    if routing is not None and routing.cross_region is not RoutingPermission.NEVER:
        how = Says.SLA201_MAY_SERVE(routing=str(routing.cross_region))
        serving += [("failover", i, r, how) for i, r in enumerate(regions.failover)]
    moves = routing is not None and routing.data_may_move
    for group, i, region, how in serving:
        if region_allowed_by_residency(region, res) is not False:
            continue
        why = Says.SLA201_WHY_MOVES if moves else Says.SLA201_WHY_STAYS
        fix = Says.SLA201_FIX_FAILOVER if group == "failover" else Says.SLA201_FIX_PRIMARY
        yield Hit(
            ("regions", group, i),
            why(region=_where(region), how=how, residency=_residency(res)),
            fix(region=region.name, residency=_residency(res)),
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
    yield Hit(
        ("regions", "residency"),
        Says.SLA202_WHY(
            routing=str(contract.routing.cross_region),
            places=[_where(r) for r in regions.failover],
        ),
        Says.SLA202_FIX(),
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
        Says.SLA203_WHY(
            routing=str(r.cross_region), steps=how, seconds=_num(round(steps * 0.2, 1))
        ),
        Says.SLA203_FIX(),
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
    yield Hit(("routing", "notice_minutes"), Says.SLA204_WHY(), Says.SLA204_FIX())


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
        Says.SLA205_WHY(steps=how, seconds=_num(round(steps * 0.2, 1))),
        Says.SLA205_FIX(),
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
        Says.SLA206_WHY(places=[_where(r) for r in regions.failover]),
        Says.SLA206_FIX(),
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
    yield Hit(("peak",), Says.SLA301_WHY(), Says.SLA301_FIX())


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
        Says.SLA302_WHY(definition=str(peak.definition.kind)),
        Says.SLA302_FIX(),
    )


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
    # the checks' rule (slacheck.names): a name covers its snapshots and aliases
    # (`gpt-4o` covers `gpt-4o-2024-08-06`, `gpt-4o-20240806`, `gpt-4o@20240806`, `gpt-4o-latest`)
    if not models or model_base(fallback) in {model_base(m) for m in models}:
        return
    yield Hit(
        ("peak", "degradation", "smaller_model", "fallback_model"),
        Says.SLA303_WHY(fallback=fallback, models=list(models)),
        Says.SLA303_FIX(fallback=fallback),
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
    tasks = _num(round(rl.limit / steps, 1))
    numbers: dict[str, Param] = {
        "limit": _num(rl.limit),
        "per": _per(rl.period),
        "tasks": tasks,
        "steps": how,
    }
    why = (
        Says.SLA401_WHY_BURST(**numbers, burst=_num(round(rl.burst / steps, 1)))
        if rl.burst
        else Says.SLA401_WHY(**numbers)
    )
    yield Hit(("rate_limit", "basis"), why, Says.SLA401_FIX(tasks=tasks))


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
        Says.SLA402_WHY(
            limit=_num(rl.limit),
            per=_per(rl.period),
            tasks=_num(round(rl.limit / _ASSUMED_STEPS, 1)),
            steps=_ASSUMED_STEPS,
        ),
        Says.SLA402_FIX(),
    )


@rule("SLA403", Severity.LOW)
def rate_limit_missing(contract: Contract) -> Iterator[Hit]:
    """The contract has no rate-limit clause.

    Without one, a 429 cannot be told apart from an outage: the contract cannot say whether
    throttling below the limit counts as a failure, because there is no limit.
    """
    if contract.rate_limit is not None:
        return
    yield Hit(("rate_limit",), Says.SLA403_WHY(), Says.SLA403_FIX())


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
            Says.SLA501_WHY(
                term=term.id,
                objective=_objective(term),
                percentile=_num(o.percentile),
                threshold=_num(o.threshold),
            ),
            Says.SLA501_FIX(term=term.id),
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
    yield Hit(
        ("contract", "time_zone"),
        Says.SLA502_WHY_MAINTENANCE(windows=windows) if windows else Says.SLA502_WHY(),
        Says.SLA502_FIX(),
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
        yield Hit(loc, Says.SLA503_WHY(name=name), Says.SLA503_FIX(name=name))


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
        yield Hit(loc, Says.SLA504_WHY(name=name), Says.SLA504_FIX(name=name))


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
        what: Message
        if m.weekly is not None:
            w = m.weekly
            minutes = _weekly_overlap(w)
            what = Says.SLA505_WEEKLY(
                days=list(w.days),
                start=f"{w.start:%H:%M}",
                duration=w.duration_minutes,
                overlap=_minutes(minutes),
            )
        else:
            minutes = _interval_overlap(m, zone)
            what = Says.SLA505_ONCE(start=str(m.start), end=str(m.end), overlap=_minutes(minutes))
        if minutes == 0:
            continue
        yield Hit(
            ("exclusions", "maintenance", i),
            Says.SLA505_WHY(what=what, zone=_zone_name(contract)),
            Says.SLA505_FIX(),
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
            Says.SLA506_EXCLUDED_CALLS(),
        ),
        "model_scope": (
            bool(contract.scope.models),
            Says.SLA506_MODEL_SCOPE(),
        ),
        "per_task_rate_counts": (
            contract.rate_limit is not None
            and contract.rate_limit.basis is RateLimitBasis.PER_TASK,
            Says.SLA506_PER_TASK_RATE(),
        ),
        "at_the_limit": (
            bool(contract.latency),
            Says.SLA506_AT_THE_LIMIT(),
        ),
    }
    defaults = type(contract.readings)()
    for name, (matters, question) in relevant.items():
        if matters and name not in stated:
            default = getattr(defaults, name)
            yield Hit(
                ("readings", name),
                Says.SLA506_WHY(question=question, default=str(default)),
                Says.SLA506_FIX(name=name, default=str(default)),
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
        Says.SLA601_WHY(
            target=_num(target),
            top=_num(top),
            between=_num(round((top + target) / 2, 4)),
            gap=_num(round(gap, 4)),
            downtime=_minutes(gap / 100 * _MONTH_MINUTES),
        ),
        Says.SLA601_FIX(target=_num(target)),
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
        Says.SLA602_WHY(low=_num(low.from_percent), credit=_num(low.credit_percent)),
        Says.SLA602_FIX(low=_num(low.from_percent)),
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
            Says.SLA603_WHY_NO_TARGET(tiers=len(credits.tiers)),
            Says.SLA603_FIX_NO_TARGET(),
        )
    elif avail is not None and credits is None:
        target = _num(avail.target_percent)
        yield Hit(
            ("credits",),
            Says.SLA603_WHY_NO_CREDITS(target=target),
            Says.SLA603_FIX_NO_CREDITS(target=target),
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
        ("credits", "claim_deadline_days"), Says.SLA604_WHY(most=_num(most)), Says.SLA604_FIX()
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
        ("exclusions", "max_input_tokens"), Says.SLA605_WHY(limit=_num(limit)), Says.SLA605_FIX()
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
        Says.SLA606_WHY(tiers=list(tiers)),
        Says.SLA606_FIX(),
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
        ("timeouts", f.timeouts, Says.SLA607_TIMEOUTS),
        ("throttling_below_limit", f.throttling_below_limit, Says.SLA607_THROTTLING),
    ):
        if counted:
            continue
        yield Hit(
            ("availability", "failures", name),
            Says.SLA607_WHY(name=name, what=what(), target=_num(avail.target_percent)),
            Says.SLA607_FIX(name=name),
        )
