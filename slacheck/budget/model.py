"""The latency budget's pure model: its words, the DOMAIN formula, the frozen result types and
the what-if projection. No engine here: the render layer reads these types, and the measured
budget (``slacheck.budget.analysis``) fills them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from slacheck.errors import UsageError
from slacheck.messages import NC_, NPC_, Message, MessageCode, render

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
    "queue_factor",
    "queue_wait_ms",
    "task_time_ms",
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
# the parts of task time

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


# ---------------------------------------------------------------------------------------------
# the measured budget's types (``slacheck.budget.analysis`` fills them)


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
