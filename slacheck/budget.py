"""The latency budget: where agent task time goes, and what a change to it would save."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.errors import UsageError
from slacheck.messages import NC_, NPC_, Message, MessageCode, format_number, render
from slacheck.metering.derive import FAILURE_STATES, calls, lower_bound, tasks
from slacheck.metering.rank import nearest_rank
from slacheck.textsafe import visible
from slacheck.trace.traces import Traces

__all__ = [
    "PARTS",
    "Budget",
    "BudgetSays",
    "Part",
    "Scenario",
    "Spread",
    "StepProfile",
    "ToolParallelism",
    "WhatIf",
    "analyse",
    "parse_what_if",
    "queue_factor",
    "queue_wait_ms",
    "task_breakdown",
    "task_time_ms",
    "to_markdown",
    "what_if",
]

# ---------------------------------------------------------------------------------------------
# what the budget says


class BudgetSays(MessageCode):
    """Every sentence, label and heading of the budget and its what-ifs."""

    # the parts of task time
    PART_MODEL = NC_("budget.part.model", "model (server processing)")
    PART_NETWORK = NC_("budget.part.network", "network round trip")
    PART_QUEUE = NC_("budget.part.queue", "queue wait")
    PART_UNSPLIT = NC_("budget.part.unsplit", "model call, not split (no server or network figure)")
    PART_TOOL = NC_("budget.part.tool", "tool calls")
    PART_RETRIEVAL = NC_("budget.part.retrieval", "retrieval")
    PART_RETRIES = NC_("budget.part.retries", "retries (retried failures, retry attempts, backoff)")
    PART_GAPS = NC_("budget.part.gaps", "unaccounted gaps")
    # notes on the budget
    NO_TASKS = NC_(
        "budget.note.no_tasks",
        "no task has a task time (no root span, and no task complete): no budget",
    )
    TASKS_LEFT_OUT = NPC_(
        "budget.note.tasks_left_out",
        "{n} task left out: rows set aside leave its task time unknown, or only a subtree of "
        "the task is in the export",
        "{n} tasks left out: rows set aside leave their task time unknown, or only a subtree of "
        "the task is in the export",
    )
    CALLS_SET_ASIDE = NPC_(
        "budget.note.calls_set_aside",
        "{n} model call was set aside at ingestion and is in no task's budget (see slacheck "
        "traces inspect for the reasons)",
        "{n} model calls were set aside at ingestion and are in no task's budget (see slacheck "
        "traces inspect for the reasons)",
    )
    CLAMPED = NPC_(
        "budget.note.clamped",
        "in {n} task the parts add up to more than the task time (spans ran concurrently): "
        "gaps clamped at 0, {excess_ms:.0f} ms counted twice; shares are of the parts' sum",
        "in {n} tasks the parts add up to more than the task time (spans ran concurrently): "
        "gaps clamped at 0, {excess_ms:.0f} ms counted twice; shares are of the parts' sum",
    )
    UNSPLIT = NPC_(
        "budget.note.unsplit",
        "{n} model call records neither server nor network time: its time is shown whole as "
        "'not split'",
        "{n} model calls record neither server nor network time: their time is shown whole as "
        "'not split'",
    )
    CONTAINERS = NPC_(
        "budget.note.containers",
        "{n} model, tool or retrieval span that wraps others (e.g. an SDK call around the HTTP "
        "call) left out, so its children are not counted twice",
        "{n} model, tool or retrieval spans that wrap others (e.g. an SDK call around the HTTP "
        "call) left out, so their children are not counted twice",
    )
    BACKOFF = NC_(
        "budget.note.backoff",
        "retries include {ms:.0f} ms of backoff (a failed call's end → its retry's start)",
    )
    OVERLAP = NC_(
        "budget.note.overlap",
        "{ms:.0f} ms of span time ran concurrently with other spans and is counted in each "
        "part, so the gaps are that much smaller than the idle time",
    )
    # scenarios and their notes
    SCENARIO = NC_("budget.scenario", "{changes}")
    STEPS_TIMES = NC_("budget.scenario.steps", "steps × {factor}")
    PARALLEL_TOOLS = NC_("budget.scenario.parallel_tools", "each step's tools in parallel")
    NETWORK_PER_CALL = NC_("budget.scenario.network", "network {ms} ms per call")
    UTILISATION = NC_("budget.scenario.utilisation", "utilisation {before} % → {after} %")
    NO_CHANGE = NC_("budget.scenario.no_change", "no change")
    NOTHING_SERIAL = NC_(
        "budget.what_if.nothing_serial",
        "no step ran two or more tools one after another: nothing to save",
    )
    MEASURED_NETWORK = NC_(
        "budget.what_if.measured_network", "measured network time: {ms:.1f} ms per call"
    )
    NO_NETWORK = NC_(
        "budget.what_if.no_network",
        "no call records or derives a network time: nothing to replace",
    )
    KEEP_TIME = NPC_(
        "budget.what_if.keep_time",
        "{n} call without a network figure keeps its time",
        "{n} calls without a network figure keep their time",
    )
    QUEUE_RATIO = NC_("budget.what_if.queue_ratio", "queue wait × {ratio:.2f} (M/M/1 ρ/(1−ρ))")
    NOTHING_TO_PROJECT = NC_(
        "budget.what_if.no_tasks", "no tasks with a task time: nothing to project"
    )
    # the Markdown
    WHERE = NC_("budget.md.where", "Where task time goes")
    TASKS_LINE = NPC_(
        "budget.md.tasks",
        "{n} task with a task time. Mean {mean:.0f} ms, p50 {p50:.0f} ms, p95 {p95:.0f} ms "
        "(nearest rank).",
        "{n} tasks with a task time. Mean {mean:.0f} ms, p50 {p50:.0f} ms, p95 {p95:.0f} ms "
        "(nearest rank).",
    )
    COL_PART = NC_("budget.md.col.part", "part")
    COL_TOTAL_MS = NC_("budget.md.col.total_ms", "total ms")
    COL_PER_TASK_MS = NC_("budget.md.col.per_task_ms", "per task ms")
    COL_SHARE = NC_("budget.md.col.share", "share")
    COUNTED_TWICE = NC_("budget.md.counted_twice", "counted twice (concurrent spans)")
    TASK_TIME = NC_("budget.md.task_time", "task time")
    PERCENT = NC_("budget.md.percent", "{x:.1f} %")
    STEPS = NC_("budget.md.steps", "Steps")
    COL_PER_TASK = NC_("budget.md.col.per_task", "per task")
    COL_MEAN = NC_("budget.md.col.mean", "mean")
    STEPS_ROW = NC_("budget.md.steps_row", "steps (model calls, retries not counted)")
    CALLS_LINE = NC_("budget.md.calls", "{calls}, {retries} ({failed}); {tools}.")
    MODEL_CALLS = NPC_("budget.count.model_calls", "{n} model call", "{n} model calls")
    RETRIES_OF_THEM = NPC_(
        "budget.count.retries_of_them", "{n} of them a retry", "{n} of them retries"
    )
    FAILED_RETRIED = NPC_(
        "budget.count.failed_retried",
        "{n} failed attempt retried",
        "{n} failed attempts retried",
    )
    TOOL_CALLS = NPC_("budget.count.tool_calls", "{n} tool call", "{n} tool calls")
    CALLS = NPC_("budget.count.calls", "{n} call", "{n} calls")
    STEP_COUNT = NPC_("budget.count.steps", "{n} step", "{n} steps")
    PARALLELISM = NC_("budget.md.parallelism", "Parallelism")
    SUM_TO_TASK = NC_(
        "budget.md.sum_to_task",
        "span time / task time: {ratio:.2f} (Σ model, tool and retrieval span time over the "
        "task time)",
    )
    TO_CRITICAL_PATH = NC_(
        "budget.md.to_critical_path",
        "span time / critical path: {ratio:.2f} (1.00: every span ran alone; the critical path "
        "is the union of the spans)",
    )
    SERIAL_TOOLS = NC_(
        "budget.md.serial_tools",
        "serial tool calls: {calls} in {steps} ran one after another; run in parallel they "
        "would save about {ms:.0f} ms per task ({share})",
    )
    NO_SERIAL_TOOLS = NC_(
        "budget.md.no_serial_tools",
        "serial tool calls: no step ran two or more tools one after another",
    )
    ALREADY_PARALLEL = NPC_(
        "budget.md.already_parallel",
        "{n} step already runs its tools concurrently",
        "{n} steps already run their tools concurrently",
    )
    WHAT_IF = NC_("budget.md.what_if", "What if")
    COL_SCENARIO = NC_("budget.md.col.scenario", "scenario")
    COL_MEAN_TASK_MS = NC_("budget.md.col.mean_task_ms", "mean task ms")
    COL_CHANGE_MS = NC_("budget.md.col.change_ms", "change ms")
    COL_CHANGE = NC_("budget.md.col.change", "change")
    AS_MEASURED = NC_("budget.md.as_measured", "as measured")
    FORMULA = NC_(
        "budget.md.formula",
        "Projected from the measured means per task as steps × (model + network + tool + "
        "queue) + retries + gaps: a change moves the per-step parts; retries keep their "
        "measured cost and scale with the step count; gaps stay.",
    )
    SCENARIO_NOTE = NC_("budget.md.scenario_note", "{scenario}: {note}")
    NOTES = NC_("budget.md.notes", "Notes:")


# ---------------------------------------------------------------------------------------------
# the pure model


@dataclass(frozen=True, slots=True)
class StepProfile:
    """One agent step: a model call, its network round trip, the tools it triggers.

    ``queue_ms`` is the mean queue wait of each step's call. The DOMAIN formula has a single
    first-queue wait (``task_time_ms(first_queue_ms=…)``); a measured profile queues every call.
    """

    model_ms: float
    network_ms: float
    tool_ms: float
    queue_ms: float = 0.0

    @property
    def step_ms(self) -> float:
        return self.model_ms + self.network_ms + self.tool_ms + self.queue_ms

    def to_dict(self) -> dict[str, float]:
        return {
            "model_ms": self.model_ms,
            "network_ms": self.network_ms,
            "tool_ms": self.tool_ms,
            "queue_ms": self.queue_ms,
            "step_ms": self.step_ms,
        }


def task_time_ms(
    steps: float, step: StepProfile, retries: float = 0.0, first_queue_ms: float = 0.0
) -> float:
    """steps × (model + network + tool [+ queue]) + retries × step_time + first_queue_wait.

    ``steps`` and ``retries`` may be fractional: a measured profile uses means per task.
    """
    if steps < 0 or retries < 0 or first_queue_ms < 0:
        raise ValueError("steps, retries and first_queue_ms must be ≥ 0")
    return steps * step.step_ms + retries * step.step_ms + first_queue_ms


def queue_factor(utilisation: float) -> float:
    """Mean M/M/1 queue wait in service times: ρ/(1−ρ). 50 % → 1, 85 % → 5.67, 95 % → 19."""
    if not 0.0 <= utilisation < 1.0:  # also rejects NaN
        raise ValueError(f"utilisation must be in [0, 1), got {utilisation!r}")
    return utilisation / (1.0 - utilisation)


def queue_wait_ms(service_ms: float, utilisation: float) -> float:
    """Mean queue wait at ``utilisation`` for a mean service time of ``service_ms``."""
    if service_ms < 0:
        raise ValueError(f"service time must be ≥ 0, got {service_ms!r}")
    return service_ms * queue_factor(utilisation)


# ---------------------------------------------------------------------------------------------
# measured: per-task breakdown in the engine

#: The parts task time is split into, in report order, with their labels.
PARTS: tuple[tuple[str, BudgetSays], ...] = (
    ("model", BudgetSays.PART_MODEL),
    ("network", BudgetSays.PART_NETWORK),
    ("queue", BudgetSays.PART_QUEUE),
    ("unsplit", BudgetSays.PART_UNSPLIT),
    ("tool", BudgetSays.PART_TOOL),
    ("retrieval", BudgetSays.PART_RETRIEVAL),
    ("retries", BudgetSays.PART_RETRIES),
    ("gaps", BudgetSays.PART_GAPS),
)
_LABELS = dict(PARTS)

_FAILED = tuple(str(s) for s in FAILURE_STATES)
_WORK = ("llm", "tool", "retrieval")


def _f(x: ir.Value) -> ir.FloatingValue:
    return x.cast("float64")


def _count(cond: ir.BooleanValue) -> ir.IntegerScalar:
    return cond.fill_null(False).cast("int64").sum()


def task_breakdown(traces: Traces) -> ir.Table:
    """One row per task with a task time: its time split into ``PARTS`` (``<part>_ms``).

    Per model call: a retry attempt (``attempt`` > 1) and a failed attempt that was retried
    count whole under ``retries``, with the backoff before the retry (its start − the previous
    call's end). Every other call splits into ``queue_ms`` (null → 0), ``model_ms`` and
    ``network_d`` from ``calls``; a call with neither figure counts under ``unsplit``.
    ``tool`` and ``retrieval`` are their span durations. ``gaps`` = task time − the parts,
    clamped at 0; ``excess_ms`` is what the clamp removed (spans that ran concurrently).

    Only leaf work spans count: an llm, tool or retrieval span that is the parent of another
    one (a wrapper such as ``ai.generateText`` around ``doGenerate``) would count its child's
    time twice, so it is left out and counted in ``container_spans``.

    Also per task: ``steps`` (model calls that are not retries), ``span_sum_ms`` (all llm, tool
    and retrieval span time) and ``busy_ms`` (the union of those spans: the critical path), and
    serial tools: tool calls after the same model call ended (same step) that ran one after
    another, and ``tool_saving_ms`` = Σ(sum − max) over such steps.
    """
    timed = tasks(traces)
    # a lower bound (a subtree's time, a task with a span still open) is not the task's time:
    # where it went is not where the task's went
    whole = timed.task_ms.notnull() & ~lower_bound(timed.task_source)
    timed = timed.filter(whole).select("task_id", "task_ms")
    keys = timed.select(k_task="task_id")

    s = traces.spans
    work = s.filter(s.kind.isin(_WORK))
    work = work.semi_join(keys, work.task_id == keys.k_task)
    has_child = work.filter(work.parent_span_id.notnull())
    parents = has_child.select(p_task="task_id", p_span="parent_span_id").distinct()
    container = [work.task_id == parents.p_task, work.span_id == parents.p_span]
    leaves = work.anti_join(parents, container)
    wrappers = work.semi_join(parents, container)
    wrappers = wrappers.group_by("task_id").aggregate(container_spans=wrappers.count())
    c = calls(traces)
    leaf_keys = leaves.select(l_task="task_id", l_span="span_id")
    c = c.semi_join(leaf_keys, [c.task_id == leaf_keys.l_task, c.span_id == leaf_keys.l_span])
    llm = _llm_parts(c)
    ordered = _ordered(leaves)
    spans = _span_parts(ordered)
    tools = _tool_steps(ordered)

    j = timed.left_join(llm, timed.task_id == llm.task_id).drop("task_id_right")
    j = j.left_join(spans, j.task_id == spans.task_id).drop("task_id_right")
    j = j.left_join(tools, j.task_id == tools.task_id).drop("task_id_right")
    j = j.left_join(wrappers, j.task_id == wrappers.task_id).drop("task_id_right")
    zero_f = [c for c, t in j.schema().items() if t.is_floating() and c != "task_ms"]
    zero_i = [c for c, t in j.schema().items() if t.is_integer()]
    j = j.mutate(
        **{c: j[c].fill_null(0.0) for c in zero_f}, **{c: j[c].fill_null(0) for c in zero_i}
    )
    parts_sum = sum(
        (j[f"{name}_ms"] for name, _ in PARTS if name != "gaps"), start=ibis.literal(0.0)
    )
    rest = j.task_ms - parts_sum
    return j.mutate(
        gaps_ms=ibis.greatest(rest, 0.0),
        excess_ms=ibis.greatest(-rest, 0.0),
    )


def _llm_parts(c: ir.Table) -> ir.Table:
    """Per task: the model-call parts, retries, steps and call counts."""
    w = ibis.window(group_by=c.task_id, order_by=[c.start_us, c.span_id])
    c = c.mutate(_next_attempt=c.attempt.lead().over(w), _prev_end=c.end_us.lag().over(w))
    is_retry = (c.attempt > 1).fill_null(False)
    # a failed call whose next call (in start order) is a retry was retried
    retried = (c.state.isin(_FAILED) & (c._next_attempt > 1)).fill_null(False)
    backoff = ibis.ifelse(
        is_retry & c._prev_end.notnull(),
        ibis.greatest(_f(c.start_us - c._prev_end) / 1000.0, 0.0),
        0.0,
    )
    plain = ~(is_retry | retried)
    split = plain & c.model_ms.notnull() & c.network_d.notnull()
    queue = c.queue_ms.fill_null(0.0)
    c = c.mutate(
        _retry=is_retry,
        _retried=retried,
        _backoff=backoff,
        _retry_ms=ibis.ifelse(plain, 0.0, c.duration_ms + backoff),
        _model=ibis.ifelse(split, ibis.greatest(c.model_ms, 0.0), 0.0),
        _network=ibis.ifelse(split, ibis.greatest(c.network_d, 0.0), 0.0),
        _queue=ibis.ifelse(plain, queue, 0.0),
        _unsplit=ibis.ifelse(plain & ~split, ibis.greatest(c.duration_ms - queue, 0.0), 0.0),
        _split=split,
        _unsplit_call=plain & ~split,
    )
    return c.group_by("task_id").aggregate(
        model_ms=c._model.sum(),
        network_ms=c._network.sum(),
        queue_ms=c._queue.sum(),
        unsplit_ms=c._unsplit.sum(),
        retries_ms=c._retry_ms.sum(),
        backoff_ms=c._backoff.sum(),
        llm_calls=c.count(),
        steps=_count(~c._retry),
        retry_attempts=_count(c._retry),
        retried_failures=_count(c._retried),
        network_calls=_count(c._split),
        unsplit_calls=_count(c._unsplit_call),
    )


def _ordered(work: ir.Table) -> ir.Table:
    """Work spans with running figures over their task, in start order (one sort for both).

    ``_prev_run``: the latest end among the spans started earlier (the union so far);
    ``_step_end``: the latest end of a model call started so far (the step a tool follows).
    """
    order = ["start_us", "end_us", "span_id"]
    running = ibis.window(group_by="task_id", order_by=order, preceding=None, following=0)
    llm_end = ibis.ifelse(work.kind == "llm", work.end_us, None)
    t = work.mutate(_run_end=work.end_us.max().over(running), _step_end=llm_end.max().over(running))
    return t.mutate(
        _prev_run=t._run_end.lag().over(ibis.window(group_by="task_id", order_by=order))
    )


def _span_parts(t: ir.Table) -> ir.Table:
    """Per task: tool and retrieval time, the sum of all work-span time and its union."""
    # each span adds to the union only what reaches beyond every span started before it
    from_us = ibis.greatest(t.start_us, t._prev_run.fill_null(t.start_us))
    new_us = ibis.greatest(t.end_us - from_us, 0)
    is_tool = t.kind == "tool"
    return t.group_by("task_id").aggregate(
        tool_ms=ibis.ifelse(is_tool, t.duration_ms, 0.0).sum(),
        retrieval_ms=ibis.ifelse(t.kind == "retrieval", t.duration_ms, 0.0).sum(),
        tool_calls=_count(is_tool),
        span_sum_ms=t.duration_ms.sum(),
        busy_ms=_f(new_us.sum()) / 1000.0,
    )


def _tool_steps(t: ir.Table) -> ir.Table:
    """Per task: tools grouped by the model call they follow, serial ones and the saving."""
    # a tool belongs to the step whose model call ended before it started
    t = t.filter((t.kind == "tool") & t._step_end.notnull() & (t.start_us >= t._step_end))
    ws = ibis.window(group_by=["task_id", "_step_end"], order_by=["start_us", "span_id"])
    t = t.mutate(_gap_us=t.start_us - t.end_us.lag().over(ws))
    g = t.group_by(["task_id", "_step_end"]).aggregate(
        n=t.count(), total=t.duration_ms.sum(), longest=t.duration_ms.max(), gap=t._gap_us.min()
    )
    g = g.filter(g.n >= 2)
    serial = g.gap >= 0
    return g.group_by("task_id").aggregate(
        serial_tool_steps=_count(serial),
        serial_tool_calls=ibis.ifelse(serial, g.n, 0).sum(),
        parallel_tool_steps=_count(~serial),
        tool_saving_ms=ibis.ifelse(serial, g.total - g.longest, 0.0).sum(),
    )


# ---------------------------------------------------------------------------------------------
# measured: the budget


@dataclass(frozen=True, slots=True)
class Part:
    """One part of task time: total over the tasks, mean per task, share of the parts.

    ``label`` is the English label (JSON); ``to_markdown`` words it in the reader's language."""

    name: str
    label: str
    total_ms: float
    per_task_ms: float
    share: float  # of Σ parts (= task time + excess), 0..1

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "total_ms": self.total_ms,
            "per_task_ms": self.per_task_ms,
            "share": self.share,
        }


@dataclass(frozen=True, slots=True)
class Spread:
    """Mean and nearest-rank p50 / p95 over tasks; None when there are none."""

    mean: float | None
    p50: float | None
    p95: float | None

    def to_dict(self) -> dict[str, float | None]:
        return {"mean": self.mean, "p50": self.p50, "p95": self.p95}


@dataclass(frozen=True, slots=True)
class ToolParallelism:
    """Tool calls of one step (after the same model call) that ran one after another."""

    serial_steps: int  # steps with ≥ 2 tools, all one after another
    serial_tool_calls: int  # the tool calls in those steps
    parallel_steps: int  # steps with ≥ 2 tools that already overlap
    saving_ms: float  # Σ over serial steps of (sum − longest)
    saving_per_task_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "serial_steps": self.serial_steps,
            "serial_tool_calls": self.serial_tool_calls,
            "parallel_steps": self.parallel_steps,
            "saving_ms": self.saving_ms,
            "saving_per_task_ms": self.saving_per_task_ms,
        }


@dataclass(frozen=True, slots=True)
class Budget:
    """Where task time goes, over the tasks that have a task time."""

    tasks: int
    tasks_without_time: int
    task_ms: Spread
    task_total_ms: float
    parts: tuple[Part, ...]
    #: time the parts counted beyond the task time (concurrent spans), clamped out of gaps
    excess_ms: float
    tasks_clamped: int
    steps: Spread  # model calls per task, retries not counted
    steps_total: int
    llm_calls: int
    tool_calls: int
    retry_attempts: int
    retried_failures: int
    backoff_ms: float  # included in the retries part
    network_calls: int  # calls split into model + network
    unsplit_calls: int
    container_spans: int  # llm/tool/retrieval spans left out as parents of others
    span_sum_ms: float  # Σ llm, tool and retrieval span time
    busy_ms: float  # Σ per task of the union of those spans (the critical path)
    tools: ToolParallelism
    #: model-call rows set aside at ingestion: in no task's budget
    calls_set_aside: int = 0
    notes: tuple[Message, ...] = field(default=())

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def sum_to_task(self) -> float | None:
        """Σ span time / task time: below 1 the task waits outside spans, above 1 overlaps."""
        return self.span_sum_ms / self.task_total_ms if self.task_total_ms > 0 else None

    @property
    def parallelism(self) -> float | None:
        """Σ span time / critical path: 1.0 when every span ran alone."""
        return self.span_sum_ms / self.busy_ms if self.busy_ms > 0 else None

    def profile(self) -> tuple[float, StepProfile, float, float]:
        """The measured profile in the formula's terms, per task: (steps, step, retries, rest).

        ``retries`` is the retry time in step times; ``rest`` is mean task time minus the
        formula (gaps, less any excess), so ``task_time_ms(steps, step, retries) + rest`` is the
        measured mean task time.
        """
        n = max(self.steps_total, 1)
        step = StepProfile(
            model_ms=(self.part("model").total_ms + self.part("unsplit").total_ms) / n,
            network_ms=self.part("network").total_ms / n,
            tool_ms=(self.part("tool").total_ms + self.part("retrieval").total_ms) / n,
            queue_ms=self.part("queue").total_ms / n,
        )
        steps = self.steps_total / self.tasks if self.tasks else 0.0
        retry_ms = self.part("retries").per_task_ms
        retries = retry_ms / step.step_ms if step.step_ms > 0 else 0.0
        base = task_time_ms(steps, step, retries)
        mean = self.task_ms.mean or 0.0
        return steps, step, retries, mean - base

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "tasks_without_time": self.tasks_without_time,
            "task_ms": self.task_ms.to_dict(),
            "task_total_ms": self.task_total_ms,
            "parts": [p.to_dict() for p in self.parts],
            "excess_ms": self.excess_ms,
            "tasks_clamped": self.tasks_clamped,
            "steps": self.steps.to_dict(),
            "steps_total": self.steps_total,
            "llm_calls": self.llm_calls,
            "tool_calls": self.tool_calls,
            "retry_attempts": self.retry_attempts,
            "retried_failures": self.retried_failures,
            "backoff_ms": self.backoff_ms,
            "network_calls": self.network_calls,
            "unsplit_calls": self.unsplit_calls,
            "container_spans": self.container_spans,
            "calls_set_aside": self.calls_set_aside,
            "span_sum_ms": self.span_sum_ms,
            "busy_ms": self.busy_ms,
            "sum_to_task": self.sum_to_task,
            "parallelism": self.parallelism,
            "tools": self.tools.to_dict(),
            "notes": [n.to_dict() for n in self.notes],
        }


def _nearest_rank(t: ir.Table, column: str, n: int, ps: tuple[float, ...]) -> list[float | None]:
    """Nearest-rank percentiles of ``column`` over ``n`` rows, picked in the engine."""
    if n == 0:
        return [None for _ in ps]
    # the one nearest-rank rule (exact: p99.9 of 1,000 is rank 999); row_number is 0-based
    ranks = [nearest_rank(n, p) - 1 for p in ps]
    col = t[column]
    r = t.mutate(_rank=ibis.row_number().over(ibis.window(order_by=[col, t.task_id])))
    df = r.filter(r._rank.isin(sorted(set(ranks)))).select("_rank", column).execute()
    at = {int(k): float(v) for k, v in zip(df["_rank"], df[column], strict=True)}
    return [at[k] for k in ranks]


_SUMS = (
    *(f"{name}_ms" for name, _ in PARTS),
    "task_ms",
    "excess_ms",
    "backoff_ms",
    "span_sum_ms",
    "busy_ms",
    "tool_saving_ms",
)
_COUNTS = (
    "steps",
    "llm_calls",
    "tool_calls",
    "retry_attempts",
    "retried_failures",
    "network_calls",
    "unsplit_calls",
    "serial_tool_steps",
    "serial_tool_calls",
    "parallel_tool_steps",
    "container_spans",
)


def analyse(traces: Traces) -> Budget:
    """The latency budget of ``traces``: over tasks with a task time, where that time goes."""
    b = task_breakdown(traces).cache()
    all_tasks = tasks(traces)
    row = (
        b.aggregate(
            tasks=b.count(),
            clamped=_count(b.excess_ms > 0.001),
            **{c: b[c].sum() for c in (*_SUMS, *_COUNTS)},
        )
        .execute()
        .iloc[0]
    )
    n = int(row["tasks"])
    total_tasks = int(all_tasks.count().execute())

    def num(c: str) -> float:
        v = row[c]
        return 0.0 if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    def cnt(c: str) -> int:
        return int(num(c))

    totals = {name: num(f"{name}_ms") for name, _ in PARTS}
    attributed = sum(totals.values())
    parts = tuple(
        Part(
            name=name,
            label=label.template,
            total_ms=totals[name],
            per_task_ms=totals[name] / n if n else 0.0,
            share=totals[name] / attributed if attributed > 0 else 0.0,
        )
        for name, label in PARTS
    )
    task_p50, task_p95 = _nearest_rank(b, "task_ms", n, (50.0, 95.0))
    steps_p50, steps_p95 = _nearest_rank(b, "steps", n, (50.0, 95.0))
    task_total = num("task_ms")
    steps_total = cnt("steps")
    saving = num("tool_saving_ms")
    budget = Budget(
        tasks=n,
        tasks_without_time=total_tasks - n,
        task_ms=Spread(task_total / n if n else None, task_p50, task_p95),
        task_total_ms=task_total,
        parts=parts,
        excess_ms=num("excess_ms"),
        tasks_clamped=cnt("clamped"),
        steps=Spread(steps_total / n if n else None, steps_p50, steps_p95),
        steps_total=steps_total,
        llm_calls=cnt("llm_calls"),
        tool_calls=cnt("tool_calls"),
        retry_attempts=cnt("retry_attempts"),
        retried_failures=cnt("retried_failures"),
        backoff_ms=num("backoff_ms"),
        network_calls=cnt("network_calls"),
        unsplit_calls=cnt("unsplit_calls"),
        container_spans=cnt("container_spans"),
        span_sum_ms=num("span_sum_ms"),
        busy_ms=num("busy_ms"),
        tools=ToolParallelism(
            serial_steps=cnt("serial_tool_steps"),
            serial_tool_calls=cnt("serial_tool_calls"),
            parallel_steps=cnt("parallel_tool_steps"),
            saving_ms=saving,
            saving_per_task_ms=saving / n if n else 0.0,
        ),
    )
    bad = traces.set_aside_rows
    lost = int(bad.filter((bad.kind == "llm").fill_null(False)).count().execute())
    return _with_notes(replace(budget, calls_set_aside=lost))


def _with_notes(b: Budget) -> Budget:
    says = BudgetSays
    notes: list[Message] = []
    if b.tasks == 0:
        notes.append(says.NO_TASKS())
    if b.tasks_without_time:
        notes.append(says.TASKS_LEFT_OUT(n=b.tasks_without_time))
    if b.calls_set_aside:
        notes.append(says.CALLS_SET_ASIDE(n=b.calls_set_aside))
    if b.tasks_clamped:
        notes.append(says.CLAMPED(n=b.tasks_clamped, excess_ms=b.excess_ms))
    if b.unsplit_calls:
        notes.append(says.UNSPLIT(n=b.unsplit_calls))
    if b.container_spans:
        notes.append(says.CONTAINERS(n=b.container_spans))
    if b.backoff_ms > 0:
        notes.append(says.BACKOFF(ms=b.backoff_ms))
    overlap = b.span_sum_ms - b.busy_ms
    if overlap > 0.5 and not b.tasks_clamped:
        notes.append(says.OVERLAP(ms=overlap))
    return replace(b, notes=tuple(notes))


# ---------------------------------------------------------------------------------------------
# what-ifs


@dataclass(frozen=True, slots=True)
class Scenario:
    """A change to project: any combination of the options; ``spec`` as the user wrote it."""

    steps_factor: float | None = None
    parallel_tools: bool = False
    network_ms_per_call: float | None = None
    utilisation_from: float | None = None
    utilisation_to: float | None = None
    spec: str = ""

    def __post_init__(self) -> None:
        if self.steps_factor is not None and not (
            math.isfinite(self.steps_factor) and self.steps_factor > 0
        ):
            raise UsageError(f"steps factor must be a number > 0, got {self.steps_factor!r}")
        if self.network_ms_per_call is not None and not (
            math.isfinite(self.network_ms_per_call) and self.network_ms_per_call >= 0
        ):
            raise UsageError(
                f"network time per call must be a number ≥ 0 ms, got {self.network_ms_per_call!r}"
            )
        if (self.utilisation_from is None) != (self.utilisation_to is None):
            raise UsageError("a utilisation change needs both a from and a to value")
        for u in (self.utilisation_from, self.utilisation_to):
            if u is not None and not 0.0 <= u < 1.0:
                raise UsageError(f"utilisation must be in [0, 1), e.g. 0.85; got {u!r}")
        if self.utilisation_from == 0.0:
            raise UsageError(
                "utilisation from 0 means no queueing was measured to scale; give the "
                "utilisation the traces ran at (e.g. 0.5)"
            )

    def describe(self) -> Message:
        """The change as a message: its parts joined with the language's comma."""
        bits: list[Message] = []
        if self.steps_factor is not None:
            bits.append(BudgetSays.STEPS_TIMES(factor=self.steps_factor))
        if self.parallel_tools:
            bits.append(BudgetSays.PARALLEL_TOOLS())
        if self.network_ms_per_call is not None:
            bits.append(BudgetSays.NETWORK_PER_CALL(ms=self.network_ms_per_call))
        if self.utilisation_from is not None and self.utilisation_to is not None:
            bits.append(
                BudgetSays.UTILISATION(
                    before=self.utilisation_from * 100, after=self.utilisation_to * 100
                )
            )
        return BudgetSays.SCENARIO(changes=bits or [BudgetSays.NO_CHANGE()])

    def label(self, lang: str = "en") -> str:
        """The change in words (English for JSON)."""
        return render(self.describe(), lang)

    def apply(self, budget: Budget) -> WhatIf:
        return what_if(
            budget,
            steps_factor=self.steps_factor,
            parallel_tools=self.parallel_tools,
            network_ms_per_call=self.network_ms_per_call,
            utilisation_from=self.utilisation_from,
            utilisation_to=self.utilisation_to,
            spec=self.spec,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "label": self.label(),
            "steps_factor": self.steps_factor,
            "parallel_tools": self.parallel_tools,
            "network_ms_per_call": self.network_ms_per_call,
            "utilisation_from": self.utilisation_from,
            "utilisation_to": self.utilisation_to,
        }


@dataclass(frozen=True, slots=True)
class WhatIf:
    """Projected mean task time under a scenario, by the DOMAIN formula on the measured profile."""

    scenario: Scenario
    baseline_ms: float
    projected_ms: float
    steps_before: float
    steps_after: float
    step_before: StepProfile
    step_after: StepProfile
    retries: float  # retry time in measured step times, per task (scaled with the steps)
    rest_ms: float  # mean task time outside the formula: gaps, less any excess
    notes: tuple[Message, ...] = ()

    @property
    def delta_ms(self) -> float:
        return self.projected_ms - self.baseline_ms

    @property
    def delta_share(self) -> float | None:
        return self.delta_ms / self.baseline_ms if self.baseline_ms > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.to_dict(),
            "baseline_ms": self.baseline_ms,
            "projected_ms": self.projected_ms,
            "delta_ms": self.delta_ms,
            "delta_share": self.delta_share,
            "steps_before": self.steps_before,
            "steps_after": self.steps_after,
            "step_before": self.step_before.to_dict(),
            "step_after": self.step_after.to_dict(),
            "retries": self.retries,
            "rest_ms": self.rest_ms,
            "notes": [n.to_dict() for n in self.notes],
        }


def what_if(
    budget: Budget,
    *,
    steps_factor: float | None = None,
    parallel_tools: bool = False,
    network_ms_per_call: float | None = None,
    utilisation_from: float | None = None,
    utilisation_to: float | None = None,
    spec: str = "",
) -> WhatIf:
    """Project the mean task time of ``budget`` under a change, with ``task_time_ms``.

    The measured profile is (steps, step, retries, rest) per task (``Budget.profile``), and
    the projection is task_time_ms(steps × factor, changed step) + retries × factor × measured
    step time + rest. ``steps_factor`` scales the steps and the retries with them (each step
    can fail and be retried); ``parallel_tools`` takes the
    serial-tool saving off each step's tool time; ``network_ms_per_call`` replaces the mean
    network time of the calls that record one; a utilisation change scales the queue wait by
    queue_factor(to) / queue_factor(from). The rest (gaps) is unchanged.
    """
    scenario = Scenario(
        steps_factor=steps_factor,
        parallel_tools=parallel_tools,
        network_ms_per_call=network_ms_per_call,
        utilisation_from=utilisation_from,
        utilisation_to=utilisation_to,
        spec=spec,
    )
    steps, step, retries, rest = budget.profile()
    n_steps = max(budget.steps_total, 1)
    notes: list[Message] = []
    after = step
    if parallel_tools:
        after = _replace(after, tool_ms=after.tool_ms - budget.tools.saving_ms / n_steps)
        if budget.tools.serial_steps == 0:
            notes.append(BudgetSays.NOTHING_SERIAL())
    if network_ms_per_call is not None:
        after = _replace(after, network_ms=network_ms_per_call * budget.network_calls / n_steps)
        if budget.network_calls:
            mean = budget.part("network").total_ms / budget.network_calls
            notes.append(BudgetSays.MEASURED_NETWORK(ms=mean))
        else:
            notes.append(BudgetSays.NO_NETWORK())
        if budget.unsplit_calls:
            notes.append(BudgetSays.KEEP_TIME(n=budget.unsplit_calls))
    if utilisation_from is not None and utilisation_to is not None:
        ratio = queue_factor(utilisation_to) / queue_factor(utilisation_from)
        after = _replace(after, queue_ms=after.queue_ms * ratio)
        notes.append(BudgetSays.QUEUE_RATIO(ratio=ratio))
    factor = 1.0 if steps_factor is None else steps_factor
    baseline = budget.task_ms.mean or 0.0
    # a retry keeps its measured cost (a throttled call's retry costs mostly backoff, not a
    # step), so only the per-step parts follow the change; retries scale with the step count
    projected = task_time_ms(steps * factor, after) + retries * factor * step.step_ms + rest
    if budget.tasks == 0:
        notes.append(BudgetSays.NOTHING_TO_PROJECT())
    return WhatIf(
        scenario=scenario,
        baseline_ms=baseline,
        projected_ms=projected if budget.tasks else 0.0,
        steps_before=steps,
        steps_after=steps * factor,
        step_before=step,
        step_after=after,
        retries=retries,
        rest_ms=rest,
        notes=tuple(notes),
    )


def _replace(step: StepProfile, **changes: float) -> StepProfile:
    values = step.to_dict()
    values.pop("step_ms")
    values.update(changes)
    return StepProfile(**values)


_WHAT_IF_FORMS = (
    "steps=FACTOR (e.g. steps=0.5), parallel-tools, network=MS (e.g. network=20), "
    "utilisation=FROM->TO (e.g. utilisation=0.85->0.5); combine with commas"
)
_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"


def parse_what_if(spec: str) -> Scenario:
    """A scenario from CLI text: ``steps=0.5``, ``parallel-tools``, ``network=20``,
    ``utilisation=0.85->0.5``, or several joined by commas."""
    options: dict[str, Any] = {}
    items = [s.strip() for s in spec.split(",")]
    if not spec.strip() or any(not s for s in items):
        raise UsageError(f"empty what-if {spec!r}; use {_WHAT_IF_FORMS}")
    for item in items:
        key, _, value = (x.strip() for x in item.partition("="))
        key = key.lower().replace("_", "-")
        if key in ("utilization", "util", "rho"):
            key = "utilisation"
        option = _WHAT_IF_KEYS.get(key)
        if option is None:
            raise UsageError(f"unknown what-if {item!r}; use {_WHAT_IF_FORMS}")
        if option in options:
            raise UsageError(f"what-if {spec!r} sets {key} twice")
        options.update(_parse_value(key, item, value))
    return Scenario(**options, spec=spec.strip())


_WHAT_IF_KEYS = {
    "steps": "steps_factor",
    "parallel-tools": "parallel_tools",
    "network": "network_ms_per_call",
    "utilisation": "utilisation_from",
}


def _parse_value(key: str, item: str, value: str) -> dict[str, Any]:
    if key == "parallel-tools":
        if value and value.lower() not in ("true", "yes", "1"):
            raise UsageError(f"what-if {item!r}: parallel-tools takes no value")
        return {"parallel_tools": True}
    if key == "utilisation":
        m = re.fullmatch(rf"({_NUMBER})\s*(?:->|→)\s*({_NUMBER})", value)
        if m is None:
            raise UsageError(
                f"what-if {item!r}: give the change as FROM->TO, e.g. utilisation=0.85->0.5"
            )
        lo, hi = (_fraction(item, g) for g in m.groups())
        return {"utilisation_from": lo, "utilisation_to": hi}
    unit = "ms" if key == "network" else ""
    v = value.removesuffix(unit).strip() if unit else value
    if not re.fullmatch(_NUMBER, v):
        example = "steps=0.5" if key == "steps" else "network=20"
        raise UsageError(f"what-if {item!r}: {key} needs a number, e.g. {example}")
    name = "steps_factor" if key == "steps" else "network_ms_per_call"
    return {name: float(v)}


def _fraction(item: str, text: str) -> float:
    v = float(text)
    if v >= 1.0:
        raise UsageError(
            f"what-if {item!r}: utilisation is a fraction in [0, 1), e.g. 0.85 for 85 %"
        )
    return v


# ---------------------------------------------------------------------------------------------
# rendering


def to_markdown(
    budget: Budget, what_ifs: tuple[WhatIf, ...] | list[WhatIf] = (), lang: str = "en"
) -> str:
    """The budget as Markdown in ``lang``: where task time goes, steps, parallelism, then the
    what-ifs. Every sentence and label comes from the catalogue, every figure is formatted by
    the language's number rules."""
    says = BudgetSays

    def w(message: Message | MessageCode) -> str:
        return render(message if isinstance(message, Message) else message(), lang)

    def ms(v: float | None) -> str:
        return format_number(v, lang, ".0f")

    def num(v: float | None, digits: int = 1) -> str:
        return format_number(v, lang, f".{digits}f")

    def pct(v: float | None, sign: bool = False) -> str:
        if v is None:
            return format_number(None, lang)
        x = v * 100
        text = w(says.PERCENT(x=abs(x) if sign else x))
        return ("+" if x >= 0 else "-") + text if sign else text

    def row(*cells: str) -> str:
        return "| " + " | ".join(cells) + " |"

    b = budget
    t = b.task_ms
    out = [f"## {w(says.WHERE)}", ""]
    out.append(w(says.TASKS_LINE(n=b.tasks, mean=t.mean, p50=t.p50, p95=t.p95)))
    out += [
        "",
        row(w(says.COL_PART), w(says.COL_TOTAL_MS), w(says.COL_PER_TASK_MS), w(says.COL_SHARE)),
        "|---|---:|---:|---:|",
    ]
    for p in b.parts:
        label = _LABELS.get(p.name)
        name = w(label) if label is not None else p.label
        out.append(row(name, ms(p.total_ms), ms(p.per_task_ms), pct(p.share)))
    if b.excess_ms > 0:
        per = b.excess_ms / b.tasks if b.tasks else 0.0
        out.append(row(w(says.COUNTED_TWICE), f"-{ms(b.excess_ms)}", f"-{ms(per)}", ""))
    whole = f"**{pct(1.0)}**" if b.tasks else format_number(None, lang)
    out.append(
        row(f"**{w(says.TASK_TIME)}**", f"**{ms(b.task_total_ms)}**", f"**{ms(t.mean)}**", whole)
    )
    s = b.steps
    out += [
        "",
        f"## {w(says.STEPS)}",
        "",
        row(w(says.COL_PER_TASK), w(says.COL_MEAN), "p50", "p95"),
        "|---|---:|---:|---:|",
        row(w(says.STEPS_ROW), num(s.mean), num(s.p50, 0), num(s.p95, 0)),
        "",
        w(
            says.CALLS_LINE(
                calls=says.MODEL_CALLS(n=b.llm_calls),
                retries=says.RETRIES_OF_THEM(n=b.retry_attempts),
                failed=says.FAILED_RETRIED(n=b.retried_failures),
                tools=says.TOOL_CALLS(n=b.tool_calls),
            )
        ),
        "",
        f"## {w(says.PARALLELISM)}",
        "",
        f"- {w(says.SUM_TO_TASK(ratio=b.sum_to_task))}",
        f"- {w(says.TO_CRITICAL_PATH(ratio=b.parallelism))}",
    ]
    tp = b.tools
    if tp.serial_steps:
        share = tp.saving_per_task_ms / t.mean if t.mean else None
        serial = says.SERIAL_TOOLS(
            calls=says.CALLS(n=tp.serial_tool_calls),
            steps=says.STEP_COUNT(n=tp.serial_steps),
            ms=tp.saving_per_task_ms,
            share=pct(share),
        )
        out.append(f"- {w(serial)}")
    else:
        out.append(f"- {w(says.NO_SERIAL_TOOLS)}")
    if tp.parallel_steps:
        out.append(f"- {w(says.ALREADY_PARALLEL(n=tp.parallel_steps))}")
    if what_ifs:
        out += [
            "",
            f"## {w(says.WHAT_IF)}",
            "",
            row(
                w(says.COL_SCENARIO),
                w(says.COL_MEAN_TASK_MS),
                w(says.COL_CHANGE_MS),
                w(says.COL_CHANGE),
            ),
            "|---|---:|---:|---:|",
            row(w(says.AS_MEASURED), ms(t.mean), "", ""),
        ]
        for wi in what_ifs:
            delta = ("+" if wi.delta_ms >= 0 else "-") + ms(abs(wi.delta_ms))
            out.append(
                row(
                    wi.scenario.label(lang),
                    ms(wi.projected_ms),
                    delta,
                    pct(wi.delta_share, sign=True),
                )
            )
        out += ["", w(says.FORMULA)]
        for wi in what_ifs:
            for note in wi.notes:
                out.append(f"- {w(says.SCENARIO_NOTE(scenario=wi.scenario.describe(), note=note))}")
    if b.notes:
        out += ["", w(says.NOTES), ""]
        out += [f"- {w(n)}" for n in b.notes]
    return visible("\n".join(out)) + "\n"  # one text-safety rule (``textsafe``)
