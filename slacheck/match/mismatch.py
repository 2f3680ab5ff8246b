"""Where a contract and a trace meter different things: the mismatches a verdict must carry."""

# Each finder below answers one question a procurement team or an acceptance engineer asks
# before trusting a verdict: is the contracted point in the trace at all; was it measured at a
# later point (which can prove "met" but never "breached"); is the tokens/s basis stated and
# measurable; can the trace reproduce the percentile or the time slices; does it cover the
# contracted windows in the contract's own time zone; how much of the task time the contracted
# point leaves unprotected; and whether the contract's scope matches any call. Every number is an
# Ibis aggregate; Python only loops over contract terms and calendar windows.

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

import ibis.expr.types as ir

from slacheck.contract.model import (
    Contract,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    Scope,
    TimeSliceObjective,
    TokensPerSecondBasis,
    Window,
)
from slacheck.contract.review import Severity
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.metering.context import Metering
from slacheck.metering.derive import point_value, scope_match, scoped, succeeded
from slacheck.metering.windowexpr import in_intervals_expr, window_label_expr
from slacheck.trace.traces import Traces
from slacheck.windows import from_us, month_window

__all__ = [
    "Code",
    "Mismatch",
    "Said",
    "TermCoverage",
    "find_mismatches",
    "task_scope",
    "term_coverage",
    "timestamp_resolution_us",
]

_MS = 1_000
_S = 1_000_000
_MIN = 60 * _S
_QUARTER_HOUR = 15 * _MIN
_HOUR = 60 * _MIN
_DAY = 24 * _HOUR
#: a window missing less than this counts as covered (traces rarely start on the dot)
#: a component of task time below this share is left out of a title (still in the numbers)
_SHARE_SHOWN = 0.005


class Code(StrEnum):
    """What kind of metering mismatch; tests and renderers key on these, not on the text."""

    POINT_NOT_RECORDED = "point_not_recorded"
    ONLY_MET_PROVABLE = "only_met_provable"
    TPS_BASIS_UNSTATED = "tps_basis_unstated"
    TPS_BASIS_UNMEASURABLE = "tps_basis_unmeasurable"
    SPARSE_SLICES = "sparse_slices"
    COARSE_TIMESTAMPS = "coarse_timestamps"
    PERCENTILE_IS_MAXIMUM = "percentile_is_maximum"
    WINDOW_COVERAGE = "window_coverage"
    TIME_ZONE_MONTH = "time_zone_month"
    UNCOVERED_TASK_TIME = "uncovered_task_time"
    SCOPE_UNMATCHED = "scope_unmatched"


class Said(MessageCode):
    """Everything the mismatch finder says: a title and an explanation per mismatch."""

    CONTRACT_SCOPE = NC_("mismatch.scope.contract", "the contract's scope")
    TERM_SCOPE = NC_("mismatch.scope.term", "term {terms}'s scope")
    EVERY_VALUE = NC_("mismatch.scope.every_value", "every value")
    NO_CALLS_TITLE = NC_("mismatch.no_calls.title", "the traces hold no model calls")
    NO_CALLS_DETAIL = NC_(
        "mismatch.no_calls.detail",
        "No span is a model call (kind llm), so no call-level term can be checked; check the "
        "trace format and mapping (slacheck traces inspect).",
    )
    NO_MATCH_TITLE = NPC_(
        "mismatch.no_match.title",
        "{whose} does not match the {calls} model call",
        "{whose} matches none of the {calls} model calls",
        count="calls",
    )
    NO_MATCH_DETAIL = NC_(
        "mismatch.no_match.detail",
        "No call matches {whose} ({values}); every term would be 'no data'. Compare the "
        "scope's providers, models and endpoints with what the traces record (slacheck traces "
        "inspect).",
    )
    SOME_UNMATCHED_TITLE = NC_(
        "mismatch.some_unmatched.title", "{whose} names values no call has: {values}"
    )
    SOME_UNMATCHED_DETAIL = NPC_(
        "mismatch.some_unmatched.detail",
        "{matched} of {calls} call is in scope, but {values} match no call: a misspelling, or "
        "traffic the traces do not hold.",
        "{matched} of {calls} calls are in scope, but {values} match no call: a misspelling, or "
        "traffic the traces do not hold.",
        count="calls",
    )
    OBJECTIVE_MS = NC_("mismatch.objective.ms", "p{percentile} {op} {threshold} ms")
    OBJECTIVE_TPS = NC_("mismatch.objective.tps", "p{percentile} {op} {threshold} tokens/s")
    SLICES_MS = NC_(
        "mismatch.objective.slices_ms",
        "{statistic} per {minutes}-minute slice {op} {threshold} ms in {passing} % of slices",
    )
    SLICES_TPS = NC_(
        "mismatch.objective.slices_tps",
        "{statistic} per {minutes}-minute slice {op} {threshold} tokens/s in {passing} % of slices",
    )
    ONLY_MET_TITLE = NPC_(
        "mismatch.only_met_provable.title",
        "{term}: server processing is measured only at the client for {client} of {calls} call: "
        "only 'met' is provable",
        "{term}: server processing is measured only at the client for {client} of {calls} calls: "
        "only 'met' is provable",
        count="calls",
    )
    ONLY_MET_DETAIL = NC_(
        "mismatch.only_met_provable.detail",
        "The points nest: the client's full response ≥ the vendor's server processing. A "
        "client-side figure within the cap ({objective}) proves the cap met; a client figure "
        "beyond it proves nothing, so a breach can only be 'indeterminate — measured at a "
        "later point'. Record the vendor's processing time "
        "(http.response.header.openai-processing-ms) or the network time (slacheck.network_ms) "
        "to decide both ways.",
    )
    UNIT_CALLS = NC_("mismatch.unit.calls", "calls")
    UNIT_TASKS = NC_("mismatch.unit.tasks", "tasks")
    LACKS_TTFT = NC_(
        "mismatch.lacks.time_to_first_token",
        "time to first token (gen_ai.response.time_to_first_chunk; Langfuse "
        "completionStartTime; LangSmith first_token_time)",
    )
    LACKS_FULL_RESPONSE = NC_(
        "mismatch.lacks.full_response", "client duration (span start and end)"
    )
    LACKS_SERVER = NC_(
        "mismatch.lacks.server_processing",
        "server processing (http.response.header.openai-processing-ms)",
    )
    LACKS_TASK = NC_(
        "mismatch.lacks.task_end_to_end",
        "task time (an invoke_agent root span, or every span of the task)",
    )
    NOT_RECORDED_TITLE = NC_(
        "mismatch.point_not_recorded.title",
        "{term}: {point} is measurable for {measurable} of {n} in-scope {unit}",
    )
    NOT_RECORDED_DETAIL = NC_(
        "mismatch.point_not_recorded.detail",
        "The contract meters {point}; the traces lack {what} for {missing} of {n} in-scope "
        "{unit}. Those cannot count for or against the vendor.",
    )
    MEDIANS = NC_(
        "mismatch.tps.medians",
        " Medians: {whole:.1f} tokens/s over the whole request, {generation:.1f} after the "
        "first token.",
    )
    TPS_UNSTATED_TITLE = NC_(
        "mismatch.tps_basis_unstated.title",
        "{term}: the tokens/s basis is unstated; measured both ways",
    )
    TPS_UNSTATED_DETAIL = NPC_(
        "mismatch.tps_basis_unstated.detail",
        "The contract does not say whether output tokens/s divides by the whole request or only "
        "by the generation after the first token; the second is always faster, so the verdict can "
        "depend on the reading. Whole request: {whole} of {n} call measurable; after the first "
        "token: {generation} of {n}.{medians} State tokens_per_second_basis in the contract.",
        "The contract does not say whether output tokens/s divides by the whole request or only "
        "by the generation after the first token; the second is always faster, so the verdict can "
        "depend on the reading. Whole request: {whole} of {n} calls measurable; after the first "
        "token: {generation} of {n}.{medians} State tokens_per_second_basis in the contract.",
    )
    LACKS_OUTPUT_TOKENS = NC_(
        "mismatch.lacks.output_tokens", "output tokens (gen_ai.usage.output_tokens)"
    )
    LACKS_TOKENS_AND_TTFT = NC_(
        "mismatch.lacks.output_tokens_and_ttft",
        "output tokens and time to first token (gen_ai.usage.output_tokens, "
        "gen_ai.response.time_to_first_chunk)",
    )
    TPS_UNMEASURABLE_TITLE = NPC_(
        "mismatch.tps_basis_unmeasurable.title",
        "{term}: tokens/s {basis} is measurable for {measurable} of {n} call",
        "{term}: tokens/s {basis} is measurable for {measurable} of {n} calls",
    )
    TPS_UNMEASURABLE_DETAIL = NPC_(
        "mismatch.tps_basis_unmeasurable.detail",
        "The contract states the {basis} basis, which needs {lacks}; {missing} in-scope call "
        "lacks them. Whole-request readings exist for {whole} of the calls.{medians}",
        "The contract states the {basis} basis, which needs {lacks}; {missing} in-scope calls "
        "lack them. Whole-request readings exist for {whole} of the calls.{medians}",
        count="missing",
    )
    GRAIN_MICROSECOND = NC_("mismatch.grain.microsecond", "microsecond")
    GRAIN_MILLISECOND = NC_("mismatch.grain.millisecond", "millisecond")
    GRAIN_SECOND = NC_("mismatch.grain.second", "second")
    GRAIN_MINUTE = NC_("mismatch.grain.minute", "minute")
    GRAIN_HOUR = NC_("mismatch.grain.hour", "hour")
    COARSE_SLICES_TITLE = NC_(
        "mismatch.coarse_timestamps.slices.title",
        "{term}: timestamps are recorded to the {grain}, too coarse for {minutes}-minute slices",
    )
    COARSE_SLICES_DETAIL = NC_(
        "mismatch.coarse_timestamps.slices.detail",
        "Calls cannot be placed in the contracted time slices; record start and end times to "
        "the millisecond.",
    )
    SPARSE_TITLE = NPC_(
        "mismatch.sparse_slices.title",
        "{term}: {sparse} of {slices} {minutes}-minute slice with calls falls below the minimum "
        "measurable call count ({min_calls})",
        "{term}: {sparse} of {slices} {minutes}-minute slices with calls fall below the minimum "
        "measurable call count ({min_calls})",
        count="slices",
    )
    SPARSE_DETAIL = NPC_(
        "mismatch.sparse_slices.detail",
        "The contract counts a slice below its minimum call count ({min_calls}) as empty, so "
        "{sparse} slice with traffic drops out of the {passing} % target (slices aligned to UTC).",
        "The contract counts a slice below its minimum call count ({min_calls}) as empty, so "
        "{sparse} slices with traffic drop out of the {passing} % target (slices aligned to UTC).",
        count="sparse",
    )
    COARSE_THRESHOLD_TITLE = NC_(
        "mismatch.coarse_timestamps.threshold.title",
        "{term}: timestamps are recorded to the {grain}, coarse for a {threshold} ms threshold",
    )
    COARSE_THRESHOLD_DETAIL = NC_(
        "mismatch.coarse_timestamps.threshold.detail",
        "Durations come from start and end times; at this grain a figure near the threshold "
        "cannot be told apart from one beyond it.",
    )
    WINDOW_COUNT = NC_("mismatch.window_count", "{window}: {n}")
    MAXIMUM_TITLE = NC_(
        "mismatch.percentile_is_maximum.title",
        "{term}: p{percentile} over fewer than {needed} {unit} is the largest value ({windows})",
    )
    MAXIMUM_DETAIL_GUARDED = NPC_(
        "mismatch.percentile_is_maximum.detail.guarded",
        "By nearest rank, p{percentile} of fewer than {needed} value is their maximum, so one "
        "slow outlier decides the window. The contract's min_samples ({min_samples}) makes such "
        "windows 'no data'.",
        "By nearest rank, p{percentile} of fewer than {needed} values is their maximum, so one "
        "slow outlier decides the window. The contract's min_samples ({min_samples}) makes such "
        "windows 'no data'.",
        count="needed",
    )
    MAXIMUM_DETAIL = NPC_(
        "mismatch.percentile_is_maximum.detail",
        "By nearest rank, p{percentile} of fewer than {needed} value is their maximum, so one "
        "slow outlier decides the window. Set min_samples in the contract so such windows give "
        "'no data'.",
        "By nearest rank, p{percentile} of fewer than {needed} values is their maximum, so one "
        "slow outlier decides the window. Set min_samples in the contract so such windows give "
        "'no data'.",
        count="needed",
    )
    COVERAGE_TITLE = NPC_(
        "mismatch.window_coverage.title",
        "{window}: the traces cover {with_calls} of {days} day",
        "{window}: the traces cover {with_calls} of {days} days",
        count="days",
    )
    COVERAGE_TITLE_EDGES = NC_(
        "mismatch.window_coverage.title_edges",
        "{window}: the calls stop short of the window's start or end",
    )
    COVERAGE_TITLE_CLIPPED = NC_(
        "mismatch.window_coverage.title_clipped",
        "{window}: the contract is in force for part of this window only",
    )
    COVERAGE_DETAIL = NPC_(
        "mismatch.window_coverage.detail",
        "The {kind} window {window} ({zone}) has {days} day; in-scope calls fall on {with_calls} "
        "of them, between {first} and {last}. A verdict for this window covers part of it and "
        "says so; it cannot settle the window.",
        "The {kind} window {window} ({zone}) has {days} days; in-scope calls fall on {with_calls} "
        "of them, between {first} and {last}. A verdict for this window covers part of it and "
        "says so; it cannot settle the window.",
        count="days",
    )
    ZONE_TITLE = NPC_(
        "mismatch.time_zone_month.title",
        "{moved} call falls in a different calendar month in {zone} than in UTC",
        "{moved} calls fall in a different calendar month in {zone} than in UTC",
        count="moved",
    )
    ZONE_DETAIL = NPC_(
        "mismatch.time_zone_month.detail",
        "The contract bounds its months in {zone} (UTC{offset}); {moved} of {calls} in-scope call "
        "lies between a month's UTC midnight and its local midnight. A monthly figure computed in "
        "UTC would put it in the wrong month.",
        "The contract bounds its months in {zone} (UTC{offset}); {moved} of {calls} in-scope "
        "calls lie between a month's UTC midnight and its local midnight. A monthly figure "
        "computed in UTC would put them in the wrong month.",
        count="calls",
    )
    PART_NETWORK = NC_("mismatch.part.network", "network")
    PART_QUEUE = NC_("mismatch.part.queue", "queue")
    PART_GENERATION = NC_("mismatch.part.generation", "generation after first token")
    PART_UNMETERED = NC_("mismatch.part.unmetered_calls", "unmetered calls")
    PART_TOOLS = NC_("mismatch.part.tools", "tools")
    PART_RETRIEVAL = NC_("mismatch.part.retrieval", "retrieval")
    PART_GAPS = NC_("mismatch.part.gaps", "gaps")
    SHARE = NC_("mismatch.share", "{part} {share:percent}")
    TASK_TIME_TITLE = NC_(
        "mismatch.uncovered_task_time.title", "{term}: {point} covers {share:percent} of task time"
    )
    TASK_TIME_TITLE_PARTS = NC_(
        "mismatch.uncovered_task_time.title_parts",
        "{term}: {point} covers {share:percent} of task time; {parts}",
    )
    TASK_TIME_DETAIL = NPC_(
        "mismatch.uncovered_task_time.detail",
        "Over {tasks} task with a task time, the contracted point ({point}) covers "
        "{share:percent} of the time users wait; the rest is not protected by this term: {parts}. "
        "'unmetered calls' are model calls outside the term (out of scope, failed, or without the "
        "metric); 'gaps' is time between spans.",
        "Over {tasks} tasks with a task time, the contracted point ({point}) covers "
        "{share:percent} of the time users wait; the rest is not protected by this term: {parts}. "
        "'unmetered calls' are model calls outside the term (out of scope, failed, or without the "
        "metric); 'gaps' is time between spans.",
        count="tasks",
    )
    TASK_TIME_OVERLAP = NC_(
        "mismatch.uncovered_task_time.overlap",
        "Spans overlap (parallel calls), so shares sum past 100 %.",
    )
    TASK_TIME_CLIENT = NPC_(
        "mismatch.uncovered_task_time.client",
        "Server processing is known only at the client for {calls} call, counted at its full "
        "client duration: the covered share is an upper bound.",
        "Server processing is known only at the client for {calls} calls, counted at their full "
        "client duration: the covered share is an upper bound.",
        count="calls",
    )
    TASK_TIME_WITH_NOTES = NC_(
        "mismatch.uncovered_task_time.with_notes", "{detail} {notes:sentences}"
    )


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One place where the contract meters something the trace measures differently (or not).

    ``headline`` and ``explanation`` are messages; ``title`` and ``detail`` their English text.
    """

    code: str
    severity: Severity
    term_id: str | None  # the latency term (or terms, comma-separated); None: the whole contract
    headline: Message
    explanation: Message
    numbers: dict[str, Any]

    @property
    def title(self) -> str:
        return self.headline.text

    @property
    def detail(self) -> str:
        return self.explanation.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "severity": str(self.severity),
            "term_id": self.term_id,
            "title": self.title,
            "detail": self.detail,
            "messages": {
                "title": self.headline.to_dict(),
                "detail": self.explanation.to_dict(),
            },
            "numbers": self.numbers,
        }


@dataclass(frozen=True, slots=True)
class TermCoverage:
    """How many in-scope units (successful calls, or tasks) can be metered at a term's point.

    ``recorded + derived`` units are measurable; ``client_only`` (server processing only) are
    measured at the client, an upper bound. For tokens/s, ``whole_request`` and
    ``after_first_token`` count the calls measurable on each reading and ``recorded`` counts
    those measurable on the contracted one (both readings when the basis is unstated).
    """

    term_id: str
    point: MeasurementPoint
    unit: str  # "calls" or "tasks"
    in_scope: int
    recorded: int
    derived: int
    client_only: int = 0
    basis: TokensPerSecondBasis | None = None
    whole_request: int | None = None
    after_first_token: int | None = None
    median_whole_request: float | None = None
    median_after_first_token: float | None = None

    @property
    def measurable(self) -> int:
        return self.recorded + self.derived

    @property
    def basis_unstated(self) -> bool:
        return self.point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND and self.basis in (
            None,
            TokensPerSecondBasis.UNSTATED,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "term_id": self.term_id,
            "measurement_point": str(self.point),
            "unit": self.unit,
            "in_scope": self.in_scope,
            "recorded": self.recorded,
            "derived": self.derived,
            "measurable": self.measurable,
        }
        if self.point is MeasurementPoint.SERVER_PROCESSING:
            out["client_only"] = self.client_only
        if self.point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            out |= {
                "basis": str(self.basis) if self.basis is not None else None,
                "whole_request": self.whole_request,
                "after_first_token": self.after_first_token,
                "median_whole_request": self.median_whole_request,
                "median_after_first_token": self.median_after_first_token,
            }
        return out


# ---------------------------------------------------------------------------------------------
# shared aggregates


def _row(t: ir.Table, **aggs: ir.Scalar) -> dict[str, Any]:
    """One aggregate row as Python values (None, never NaN, for an empty input)."""
    rows: list[dict[str, Any]] = t.aggregate(**aggs).to_pyarrow().to_pylist()
    return rows[0]


def _n(v: Any) -> int:
    return 0 if v is None else int(v)


def _f(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def task_scope(
    calls: ir.Table, tasks: ir.Table, contract: Contract, term: LatencyTerm | None = None
) -> ir.Table:
    """``tasks`` joined with ``in_scope_calls``: how many of the task's calls the scope covers.

    Tasks without a model call are left out: an inference contract has nothing to say of them.
    """
    per = calls.group_by("task_id").aggregate(in_scope_calls=scoped(calls, contract, term).sum())
    return tasks.join(per, "task_id")


def term_coverage(contract: Contract, calls: ir.Table, tasks: ir.Table) -> tuple[TermCoverage, ...]:
    """For every latency term, how many in-scope units its metric can be computed for."""
    c = calls
    ok = succeeded(c)
    aggs: dict[str, ir.Scalar] = {}
    for i, term in enumerate(contract.latency):
        point = term.measurement_point
        if point is MeasurementPoint.TASK_END_TO_END:
            continue
        ts = scoped(c, contract, term) & ok
        _, src = point_value(c, point, term.tokens_per_second_basis)
        aggs[f"n{i}"] = ts.sum()
        aggs[f"der{i}"] = (ts & (src == "derived").fill_null(False)).sum()
        aggs[f"cli{i}"] = (ts & (src == "client").fill_null(False)).sum()
        if point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            whole, gen = ts & c.tps_whole.notnull(), ts & c.tps_gen.notnull()
            aggs[f"whole{i}"] = whole.sum()
            aggs[f"gen{i}"] = gen.sum()
            aggs[f"both{i}"] = (whole & gen).sum()
            # a null-masked column, not `where=`: the PySpark backend applies `where` to the
            # percentile's fraction too, which Spark rejects as not foldable
            aggs[f"mwhole{i}"] = whole.ifelse(c.tps_whole, None).median()
            aggs[f"mgen{i}"] = gen.ifelse(c.tps_gen, None).median()
        aggs[f"rec{i}"] = (ts & (src == "recorded").fill_null(False)).sum()
    row = _row(c, **aggs) if aggs else {}

    task_rows: dict[int, dict[str, Any]] = {}
    for i, term in enumerate(contract.latency):
        if term.measurement_point is not MeasurementPoint.TASK_END_TO_END:
            continue
        j = task_scope(c, tasks, contract, term)
        has = j.in_scope_calls > 0
        task_rows[i] = _row(
            j,
            n=has.sum(),
            rec=(has & (j.task_source == "root_span").fill_null(False)).sum(),
            der=(has & (j.task_source == "roots_envelope")).fill_null(False).sum(),
        )

    out: list[TermCoverage] = []
    for i, term in enumerate(contract.latency):
        point = term.measurement_point
        if i in task_rows:
            r = task_rows[i]
            out.append(
                TermCoverage(term.id, point, "tasks", _n(r["n"]), _n(r["rec"]), _n(r["der"]))
            )
            continue
        rec = _n(row[f"rec{i}"])
        extra: dict[str, Any] = {}
        if point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            extra = {
                "basis": term.tokens_per_second_basis,
                "whole_request": _n(row[f"whole{i}"]),
                "after_first_token": _n(row[f"gen{i}"]),
                "median_whole_request": _f(row[f"mwhole{i}"]),
                "median_after_first_token": _f(row[f"mgen{i}"]),
            }
            if term.tokens_per_second_basis in (None, TokensPerSecondBasis.UNSTATED):
                # measure both readings: a call counts only when both can be computed
                rec = _n(row[f"both{i}"])
        out.append(
            TermCoverage(
                term.id,
                point,
                "calls",
                _n(row[f"n{i}"]),
                rec,
                _n(row[f"der{i}"]),
                client_only=_n(row[f"cli{i}"]),
                **extra,
            )
        )
    return tuple(out)


def timestamp_resolution_us(calls: ir.Table) -> int | None:
    """The coarsest unit (1 µs, 1 ms, 1 s, 1 min, 1 h) every call start and end is a multiple of."""
    units = (_MS, _S, _MIN, _HOUR)
    aggs = {f"off{u}": ((calls.start_us % u != 0) | (calls.end_us % u != 0)).sum() for u in units}
    row = _row(calls, n=calls.count(), **aggs)
    if not _n(row["n"]):
        return None
    res = 1
    for u in units:
        if _n(row[f"off{u}"]):
            break
        res = u
    return res


def _grain(us: int) -> Param:
    said = {
        1: Said.GRAIN_MICROSECOND,
        _MS: Said.GRAIN_MILLISECOND,
        _S: Said.GRAIN_SECOND,
        _MIN: Said.GRAIN_MINUTE,
        _HOUR: Said.GRAIN_HOUR,
    }.get(us)
    return said() if said is not None else f"{us} µs"


# ---------------------------------------------------------------------------------------------
# the finders


def find_mismatches(
    contract: Contract,
    traces: Traces,
    calls: ir.Table,
    tasks: ir.Table,
    *,
    coverage: Sequence[TermCoverage] | None = None,
    metering: Metering | None = None,
) -> tuple[Mismatch, ...]:
    """Every metering mismatch between ``contract`` and the traces, most severe first.

    ``calls`` and ``tasks`` are ``derive.calls(traces)`` and ``derive.tasks(traces)``, best
    ``.cache()``d: a dozen small queries run on them. ``coverage`` (from ``term_coverage``) is
    recomputed when not given; ``metering``: the run's metering model, whose windows and
    coverage the window mismatches report (one is made when not given).
    """
    m = metering if metering is not None else Metering(contract, traces)
    cov = tuple(coverage) if coverage is not None else term_coverage(contract, calls, tasks)
    every, scoped = _ranges(contract, calls)
    found: list[Mismatch] = []
    found += _scope(contract, calls)
    found += _points(contract, cov)
    found += _reproducibility(m, calls, tasks, every)
    found += _window_coverage(m)
    found += _time_zone(contract, calls, scoped)
    found += _task_time(contract, traces, calls, tasks)
    return tuple(sorted(found, key=lambda m: m.severity.rank))


def _scope(contract: Contract, c: ir.Table) -> Iterable[Mismatch]:
    """The contract's scope (and each term's own) against the calls the traces hold."""
    scopes: dict[str, tuple[Scope, list[str]]] = {
        contract.scope.model_dump_json(): (contract.scope, [])
    }
    for term in contract.latency:
        if term.scope is not None:
            scopes.setdefault(term.scope.model_dump_json(), (term.scope, []))[1].append(term.id)
    for scope, term_ids in scopes.values():
        sm = scope_match(c, scope, contract.readings.model_scope)
        who = ", ".join(term_ids) if term_ids else None
        whose = Said.TERM_SCOPE(terms=term_ids) if who else Said.CONTRACT_SCOPE()
        values: list[Param] = list(sm.unmatched_values)
        numbers = {"calls": sm.calls, "matched": sm.matched, "unmatched": list(sm.unmatched_values)}
        if sm.calls == 0:
            yield Mismatch(
                Code.SCOPE_UNMATCHED,
                Severity.HIGH,
                who,
                Said.NO_CALLS_TITLE(),
                Said.NO_CALLS_DETAIL(),
                numbers,
            )
            return
        if sm.matched == 0:
            yield Mismatch(
                Code.SCOPE_UNMATCHED,
                Severity.HIGH,
                who,
                Said.NO_MATCH_TITLE(whose=whose, calls=sm.calls),
                Said.NO_MATCH_DETAIL(whose=whose, values=values or Said.EVERY_VALUE()),
                numbers,
            )
        elif sm.unmatched_values:
            yield Mismatch(
                Code.SCOPE_UNMATCHED,
                Severity.MEDIUM,
                who,
                Said.SOME_UNMATCHED_TITLE(whose=whose, values=values),
                Said.SOME_UNMATCHED_DETAIL(matched=sm.matched, calls=sm.calls, values=values),
                numbers,
            )


def _points(contract: Contract, coverage: Sequence[TermCoverage]) -> Iterable[Mismatch]:
    """Point not recorded; server cap measured at the client; tokens/s basis problems."""
    terms = {t.id: t for t in contract.latency}
    for cov in coverage:
        term = terms[cov.term_id]
        n = cov.in_scope
        if n == 0:
            continue  # nothing in scope: the scope finder says why
        missing = n - cov.measurable
        numbers = cov.to_dict()
        if cov.point is MeasurementPoint.SERVER_PROCESSING and cov.client_only:
            yield Mismatch(
                Code.ONLY_MET_PROVABLE,
                Severity.HIGH,
                term.id,
                Said.ONLY_MET_TITLE(term=term.id, client=cov.client_only, calls=n),
                Said.ONLY_MET_DETAIL(objective=_objective_text(term)),
                numbers,
            )
            continue
        if cov.point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            yield from _tps(term, cov)
            continue
        if missing > 0:
            what = {
                MeasurementPoint.TIME_TO_FIRST_TOKEN: (Said.LACKS_TTFT, Said.UNIT_CALLS),
                MeasurementPoint.FULL_RESPONSE: (Said.LACKS_FULL_RESPONSE, Said.UNIT_CALLS),
                MeasurementPoint.SERVER_PROCESSING: (Said.LACKS_SERVER, Said.UNIT_CALLS),
                MeasurementPoint.TASK_END_TO_END: (Said.LACKS_TASK, Said.UNIT_TASKS),
            }[cov.point]
            point, unit = str(cov.point), what[1]()
            yield Mismatch(
                Code.POINT_NOT_RECORDED,
                Severity.HIGH if cov.measurable == 0 else Severity.MEDIUM,
                term.id,
                Said.NOT_RECORDED_TITLE(
                    term=term.id, point=point, measurable=cov.measurable, n=n, unit=unit
                ),
                Said.NOT_RECORDED_DETAIL(
                    point=point, what=what[0](), missing=missing, n=n, unit=unit
                ),
                numbers,
            )


def _tps(term: LatencyTerm, cov: TermCoverage) -> Iterable[Mismatch]:
    n = cov.in_scope
    whole, gen = cov.whole_request or 0, cov.after_first_token or 0
    mw, mg = cov.median_whole_request, cov.median_after_first_token
    medians: Param = (
        Said.MEDIANS(whole=mw, generation=mg) if mw is not None and mg is not None else ""
    )
    if cov.basis_unstated:
        yield Mismatch(
            Code.TPS_BASIS_UNSTATED,
            Severity.HIGH,
            term.id,
            Said.TPS_UNSTATED_TITLE(term=term.id),
            Said.TPS_UNSTATED_DETAIL(whole=whole, n=n, generation=gen, medians=medians),
            cov.to_dict(),
        )
        return
    stated = cov.basis or TokensPerSecondBasis.WHOLE_REQUEST
    if cov.measurable < n:
        lacks = (
            Said.LACKS_OUTPUT_TOKENS()
            if stated is TokensPerSecondBasis.WHOLE_REQUEST
            else Said.LACKS_TOKENS_AND_TTFT()
        )
        yield Mismatch(
            Code.TPS_BASIS_UNMEASURABLE,
            Severity.HIGH if cov.measurable == 0 else Severity.MEDIUM,
            term.id,
            Said.TPS_UNMEASURABLE_TITLE(
                term=term.id, basis=str(stated), measurable=cov.measurable, n=n
            ),
            Said.TPS_UNMEASURABLE_DETAIL(
                basis=str(stated),
                lacks=lacks,
                missing=n - cov.measurable,
                whole=whole,
                medians=medians,
            ),
            cov.to_dict(),
        )


def _objective_text(term: LatencyTerm) -> Message:
    o = term.objective
    tps = term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
    op = "≤" if o.direction == "at_most" else "≥"
    if isinstance(o, OccurrenceObjective):
        said = Said.OBJECTIVE_TPS if tps else Said.OBJECTIVE_MS
        return said(percentile=o.percentile, op=op, threshold=o.threshold)
    said = Said.SLICES_TPS if tps else Said.SLICES_MS
    return said(
        statistic=str(o.statistic),
        minutes=o.slice_minutes,
        op=op,
        threshold=o.threshold,
        passing=o.slices_passing_percent,
    )


def _term_values(
    contract: Contract, term: LatencyTerm, c: ir.Table, tasks: ir.Table
) -> tuple[ir.Table, str]:
    """The term's measurable in-scope units as a table with ``ts_us`` (start), and the unit."""
    if term.measurement_point is MeasurementPoint.TASK_END_TO_END:
        j = task_scope(c, tasks, contract, term)
        j = j.filter((j.in_scope_calls > 0) & j.task_ms.notnull())
        return j.select(ts_us=j.start_us), "tasks"
    _, src = point_value(c, term.measurement_point, term.tokens_per_second_basis)
    keep = scoped(c, contract, term) & succeeded(c) & src.notnull() & (src != "client")
    x = c.filter(keep)
    return x.select(ts_us=x.start_us), "calls"


def _reproducibility(
    m: Metering, c: ir.Table, tasks: ir.Table, every: tuple[int, int] | None
) -> Iterable[Mismatch]:
    """Can the trace reproduce the contracted statistic: slices, timestamp grain, percentiles."""
    contract = m.contract
    if not contract.latency or every is None:
        return
    res = timestamp_resolution_us(c)
    for term in contract.latency:
        o = term.objective
        values, unit = _term_values(contract, term, c, tasks)
        if isinstance(o, TimeSliceObjective):
            slice_us = o.slice_minutes * _MIN
            if res is not None and res >= slice_us:
                yield Mismatch(
                    Code.COARSE_TIMESTAMPS,
                    Severity.HIGH,
                    term.id,
                    Said.COARSE_SLICES_TITLE(
                        term=term.id, grain=_grain(res), minutes=o.slice_minutes
                    ),
                    Said.COARSE_SLICES_DETAIL(),
                    {"resolution_us": res, "slice_minutes": o.slice_minutes},
                )
            per = values.group_by(slice=values.ts_us // slice_us).aggregate(n=values.count())
            r = _row(
                per,
                slices=per.count(),
                sparse=(per.n < o.min_calls_per_slice).sum(),
            )
            slices, sparse = _n(r["slices"]), _n(r["sparse"])
            if sparse:
                yield Mismatch(
                    Code.SPARSE_SLICES,
                    Severity.HIGH if sparse * 2 > slices else Severity.MEDIUM,
                    term.id,
                    Said.SPARSE_TITLE(
                        term=term.id,
                        sparse=sparse,
                        slices=slices,
                        minutes=o.slice_minutes,
                        min_calls=o.min_calls_per_slice,
                    ),
                    Said.SPARSE_DETAIL(
                        min_calls=o.min_calls_per_slice,
                        sparse=sparse,
                        passing=o.slices_passing_percent,
                    ),
                    {
                        "slices_with_calls": slices,
                        "sparse_slices": sparse,
                        "min_calls_per_slice": o.min_calls_per_slice,
                        "slice_minutes": o.slice_minutes,
                    },
                )
            continue
        # occurrence objective
        if (
            res is not None
            and term.measurement_point
            in (MeasurementPoint.FULL_RESPONSE, MeasurementPoint.TASK_END_TO_END)
            and res / _MS * 10 > o.threshold
        ):
            yield Mismatch(
                Code.COARSE_TIMESTAMPS,
                Severity.MEDIUM,
                term.id,
                Said.COARSE_THRESHOLD_TITLE(term=term.id, grain=_grain(res), threshold=o.threshold),
                Said.COARSE_THRESHOLD_DETAIL(),
                {"resolution_us": res, "threshold_ms": o.threshold},
            )
        needed = 100.0 / (100.0 - o.percentile)
        wins = m.windows(term.window)
        labelled = values.mutate(window=window_label_expr(values.ts_us, wins))
        counts = labelled.group_by("window").aggregate(n=labelled.count()).to_pyarrow().to_pylist()
        thin = sorted(
            (str(x["window"]), int(x["n"]))
            for x in counts
            if x["window"] is not None and int(x["n"]) < needed
        )
        if thin:
            guarded = term.min_samples is not None and term.min_samples >= needed
            yield Mismatch(
                Code.PERCENTILE_IS_MAXIMUM,
                Severity.LOW if guarded else Severity.MEDIUM,
                term.id,
                Said.MAXIMUM_TITLE(
                    term=term.id,
                    percentile=o.percentile,
                    needed=math.ceil(needed),
                    unit=Said.UNIT_TASKS() if unit == "tasks" else Said.UNIT_CALLS(),
                    windows=[Said.WINDOW_COUNT(window=w, n=n) for w, n in thin],
                ),
                (
                    Said.MAXIMUM_DETAIL_GUARDED(
                        percentile=o.percentile,
                        needed=math.ceil(needed),
                        min_samples=term.min_samples,
                    )
                    if guarded
                    else Said.MAXIMUM_DETAIL(percentile=o.percentile, needed=math.ceil(needed))
                ),
                {
                    "percentile": o.percentile,
                    "values_needed": math.ceil(needed),
                    "windows": {w: n for w, n in thin},
                    "min_samples": term.min_samples,
                },
            )


Range = tuple[int, int] | None


def _ranges(contract: Contract, c: ir.Table) -> tuple[Range, Range]:
    """First start → last end of every call, and of the calls in the contract's scope."""
    sc = scoped(c, contract)
    r = _row(
        c,
        lo=c.start_us.min(),
        hi=c.end_us.max(),
        slo=c.start_us.min(where=sc),
        shi=c.end_us.max(where=sc),
    )
    every = None if r["lo"] is None else (int(r["lo"]), int(r["hi"]))
    in_scope_range = None if r["slo"] is None else (int(r["slo"]), int(r["shi"]))
    return every, in_scope_range


def _window_coverage(m: Metering) -> Iterable[Mismatch]:
    """Each contracted window the calls cover only in part (``Metering.coverage``: the same rule
    the verdicts' ``partial_window`` follows), in the contract's time zone."""
    contract = m.contract
    users: dict[Window, list[str]] = {}
    for term in contract.latency:
        users.setdefault(term.window, []).append(term.id)
    if contract.availability is not None:
        users.setdefault(contract.availability.window, []).append("availability")
    zone = contract.zone
    for kind, who in users.items():
        for w in m.windows(kind):
            cov = m.coverage(w)
            if not cov.partial:
                continue
            first = last = "—"
            if cov.first_us is not None and cov.last_us is not None:
                first = f"{from_us(cov.first_us, zone):%Y-%m-%d %H:%M}"
                last = f"{from_us(cov.last_us, zone):%Y-%m-%d %H:%M}"
            yield Mismatch(
                Code.WINDOW_COVERAGE,
                Severity.MEDIUM,
                ", ".join(who),
                (
                    Said.COVERAGE_TITLE(
                        window=w.label, with_calls=cov.days_with_calls, days=cov.days
                    )
                    if cov.days_with_calls < cov.days
                    else Said.COVERAGE_TITLE_CLIPPED(window=w.label)
                    if cov.clipped
                    else Said.COVERAGE_TITLE_EDGES(window=w.label)
                ),
                Said.COVERAGE_DETAIL(
                    kind=str(kind),
                    window=w.label,
                    zone=w.zone,
                    days=cov.days,
                    with_calls=cov.days_with_calls,
                    first=first,
                    last=last,
                ),
                {
                    "window": w.label,
                    "window_kind": str(kind),
                    "zone": w.zone,
                    "days": cov.days,
                    "days_with_calls": cov.days_with_calls,
                    "edges_covered": cov.edges_covered,
                    "clipped": cov.clipped,
                    "terms": who,
                },
            )


def _time_zone(contract: Contract, c: ir.Table, rng: Range) -> Iterable[Mismatch]:
    """Calls whose calendar month in the contract's zone differs from their month in UTC."""
    zone = contract.zone
    if zone.key in ("UTC", "Etc/UTC", "Etc/UCT", "UCT", "Zulu", "Etc/Zulu"):
        return
    if rng is None:
        return
    lo, hi = rng
    utc = ZoneInfo("UTC")
    first, last = from_us(lo, utc), from_us(hi, utc)
    # every month start near the data: between the local and the UTC midnight of the 1st, a call
    # belongs to one month in the contract's zone and to the other in UTC
    y, m = (first.year - 1, 12) if first.month == 1 else (first.year, first.month - 1)
    intervals: list[tuple[int, int]] = []
    boundaries: list[str] = []
    while (y, m) <= (last.year + (last.month == 12), last.month % 12 + 1):
        local, plain = month_window(y, m, zone).start_us, month_window(y, m, utc).start_us
        if local != plain:
            intervals.append((min(local, plain), max(local, plain)))
            boundaries.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    if not intervals:
        return
    x = c.filter(scoped(c, contract))
    r = _row(x, n=x.count(), moved=in_intervals_expr(x.start_us, intervals).sum())
    moved = _n(r["moved"])
    if not moved:
        return
    offset = from_us(lo, zone).utcoffset()
    yield Mismatch(
        Code.TIME_ZONE_MONTH,
        Severity.MEDIUM,
        None,
        Said.ZONE_TITLE(moved=moved, zone=zone.key),
        Said.ZONE_DETAIL(zone=zone.key, offset=_offset_text(offset), moved=moved, calls=_n(r["n"])),
        {"zone": zone.key, "calls": _n(r["n"]), "moved": moved, "month_starts": boundaries},
    )


def _offset_text(offset: Any) -> str:
    if offset is None:
        return ""
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "−"
    h, mm = divmod(abs(minutes), 60)
    return f"{sign}{h:02d}:{mm:02d}"


_TIME_POINTS = (
    MeasurementPoint.SERVER_PROCESSING,
    MeasurementPoint.TIME_TO_FIRST_TOKEN,
    MeasurementPoint.FULL_RESPONSE,
)


def _task_time(
    contract: Contract, traces: Traces, c: ir.Table, tasks: ir.Table
) -> Iterable[Mismatch]:
    """For each call-level time term: the share of task time its point covers, and the rest."""
    terms = [(i, t) for i, t in enumerate(contract.latency) if t.measurement_point in _TIME_POINTS]
    if not terms:
        return
    ok = succeeded(c)
    per_call: dict[str, ir.Scalar] = {"llm_ms": c.duration_ms.sum()}
    for i, term in terms:
        value, src = point_value(c, term.measurement_point)
        metered = scoped(c, contract, term) & ok & src.notnull()
        per_call[f"cov{i}"] = value.sum(where=metered)
        per_call[f"met{i}"] = c.duration_ms.sum(where=metered)
        per_call[f"cli{i}"] = (metered & (src == "client")).sum()
        if term.measurement_point is MeasurementPoint.SERVER_PROCESSING:
            exact = metered & (src != "client")
            per_call[f"net{i}"] = c.network_d.sum(where=exact)
            per_call[f"que{i}"] = c.queue_ms.sum(where=exact)
    by_call = c.group_by("task_id").aggregate(**per_call)
    s = traces.spans
    by_span = s.group_by("task_id").aggregate(
        tools_ms=s.duration_ms.sum(where=s.kind == "tool"),
        retrieval_ms=s.duration_ms.sum(where=s.kind == "retrieval"),
    )
    tt = tasks.filter(tasks.task_ms.notnull()).select("task_id", "task_ms")
    j = tt.left_join(by_call, "task_id").drop("task_id_right")
    j = j.left_join(by_span, "task_id").drop("task_id_right")
    sums: dict[str, ir.Scalar] = {"tasks": j.count(), "task_ms": j.task_ms.sum()}
    for name in ("llm_ms", "tools_ms", "retrieval_ms", *list(per_call)[1:]):
        sums[name] = j[name].fill_null(0.0).sum()
    r = _row(j, **sums)
    total = _f(r["task_ms"]) or 0.0
    if total <= 0:
        return
    llm, tools, retrieval = (_f(r[k]) or 0.0 for k in ("llm_ms", "tools_ms", "retrieval_ms"))
    for i, term in terms:
        covered, metered = _f(r[f"cov{i}"]) or 0.0, _f(r[f"met{i}"]) or 0.0
        if metered <= 0:
            continue  # nothing metered at this point: point_not_recorded / scope say why
        parts: dict[str, float] = {}
        if term.measurement_point is MeasurementPoint.SERVER_PROCESSING:
            parts["network"] = _f(r[f"net{i}"]) or 0.0
            parts["queue"] = _f(r[f"que{i}"]) or 0.0
        elif term.measurement_point is MeasurementPoint.TIME_TO_FIRST_TOKEN:
            parts["generation after first token"] = max(metered - covered, 0.0)
        parts["unmetered calls"] = max(llm - metered, 0.0)
        parts["tools"] = tools
        parts["retrieval"] = retrieval
        rest = total - covered - sum(parts.values())
        parts["gaps"] = max(rest, 0.0)
        shares = {k: v / total for k, v in parts.items()}
        cov_share = covered / total
        shown = sorted(
            ((k, v) for k, v in shares.items() if v >= _SHARE_SHOWN), key=lambda kv: -kv[1]
        )
        point = str(term.measurement_point)
        title = (
            Said.TASK_TIME_TITLE_PARTS(
                term=term.id, point=point, share=cov_share, parts=_shares(shown)
            )
            if shown
            else Said.TASK_TIME_TITLE(term=term.id, point=point, share=cov_share)
        )
        detail = Said.TASK_TIME_DETAIL(
            tasks=_n(r["tasks"]),
            point=point,
            share=cov_share,
            parts=_shares(shown or list(shares.items())),
        )
        notes: list[Param] = []
        if rest < 0:
            notes.append(Said.TASK_TIME_OVERLAP())
        if _n(r.get(f"cli{i}")):
            notes.append(Said.TASK_TIME_CLIENT(calls=_n(r[f"cli{i}"])))
        yield Mismatch(
            Code.UNCOVERED_TASK_TIME,
            Severity.MEDIUM if cov_share < 0.5 else Severity.LOW,
            term.id,
            title,
            Said.TASK_TIME_WITH_NOTES(detail=detail, notes=notes) if notes else detail,
            {
                "tasks": _n(r["tasks"]),
                "task_ms": total,
                "covered": cov_share,
                "shares": shares,
                "point": str(term.measurement_point),
            },
        )


#: the parts of task time a point leaves out, keyed as the JSON numbers name them
_PARTS = {
    "network": Said.PART_NETWORK,
    "queue": Said.PART_QUEUE,
    "generation after first token": Said.PART_GENERATION,
    "unmetered calls": Said.PART_UNMETERED,
    "tools": Said.PART_TOOLS,
    "retrieval": Said.PART_RETRIEVAL,
    "gaps": Said.PART_GAPS,
}


def _shares(parts: Sequence[tuple[str, float]]) -> list[Param]:
    return [Said.SHARE(part=_PARTS[k](), share=v) for k, v in parts]
