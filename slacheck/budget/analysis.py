"""The measured latency budget: where agent task time goes in traces, computed in the engine."""

from __future__ import annotations

import math
from dataclasses import replace

import ibis
import ibis.expr.types as ir

from slacheck.budget.model import PARTS, Budget, BudgetSays, Part, Spread, ToolParallelism
from slacheck.messages import Message
from slacheck.metering.context import Metering
from slacheck.metering.derive import FAILURE_STATES, calls, lower_bound, tasks
from slacheck.metering.rank import nearest_rank
from slacheck.trace.traces import Traces

__all__ = ["analyse", "task_breakdown"]

# ---------------------------------------------------------------------------------------------
# measured: per-task breakdown in the engine

_FAILED = tuple(str(s) for s in FAILURE_STATES)
_WORK = ("llm", "tool", "retrieval")


def _f(x: ir.Value) -> ir.FloatingValue:
    return x.cast("float64")


def _count(cond: ir.BooleanValue) -> ir.IntegerScalar:
    return cond.fill_null(False).cast("int64").sum()


def task_breakdown(
    traces: Traces, *, all_tasks: ir.Table | None = None, model_calls: ir.Table | None = None
) -> ir.Table:
    """One row per task with a task time: its time split into ``PARTS`` (``<part>_ms``).

    ``all_tasks`` and ``model_calls``: the run's ``derive.tasks`` and ``derive.calls`` of
    ``traces`` when it has computed them (``Metering.tasks``, ``Metering.calls``): the same
    rows, read instead of derived again.

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
    timed = tasks(traces) if all_tasks is None else all_tasks
    # a lower bound (a subtree's time, a task with a span still open) is not the task's time:
    # where it went is not where the task's went
    whole = timed.task_ms.notnull() & ~lower_bound(timed.task_source)
    timed = timed.filter(whole).select("task_id", "task_ms")

    s = traces.spans
    work = s.filter(s.kind.isin(_WORK))
    # every step below is per task (joins on the task id, windows and groups by it), so the
    # work spans of tasks without a time need no join to leave them out: their rows are
    # dropped by the left joins onto ``timed`` at the end
    has_child = work.filter(work.parent_span_id.notnull())
    parents = has_child.select(p_task="task_id", p_span="parent_span_id").distinct()
    container = [work.task_id == parents.p_task, work.span_id == parents.p_span]
    leaves = work.anti_join(parents, container)
    wrappers = work.semi_join(parents, container)
    wrappers = wrappers.group_by("task_id").aggregate(container_spans=wrappers.count())
    c = calls(traces) if model_calls is None else model_calls
    # the leaf calls: every call is an llm span, so the calls that are leaves are the calls
    # that are no parent (an anti-join against the few parents, not a semi-join against
    # every leaf span)
    c = c.anti_join(parents, [c.task_id == parents.p_task, c.span_id == parents.p_span])
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
    # the rows before this one: the same partition and order, so one sort serves both frames
    before = ibis.window(group_by="task_id", order_by=order, rows=(None, -1))
    llm_end = ibis.ifelse(work.kind == "llm", work.end_us, None)
    return work.mutate(
        _prev_run=work.end_us.max().over(before), _step_end=llm_end.max().over(running)
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


def _nearest_ranks(
    t: ir.Table, n: int, ps: tuple[float, ...], *columns: str
) -> dict[str, list[float | None]]:
    """Nearest-rank percentiles ``ps`` of each of ``columns`` over ``n`` rows, picked in the
    engine in one query (each column ranked on its own, ties by task id)."""
    if n == 0:
        return {c: [None for _ in ps] for c in columns}
    # the one nearest-rank rule (exact: p99.9 of 1,000 is rank 999); row_number is 0-based
    ranks = [nearest_rank(n, p) - 1 for p in ps]
    wanted = sorted(set(ranks))
    r = t.mutate(
        **{
            f"_r{i}": ibis.row_number().over(ibis.window(order_by=[t[c], t.task_id]))
            for i, c in enumerate(columns)
        }
    )
    hit = ibis.or_(*(r[f"_r{i}"].isin(wanted) for i in range(len(columns))))
    df = r.filter(hit).select(*(f"_r{i}" for i in range(len(columns))), *columns).execute()
    out: dict[str, list[float | None]] = {}
    for i, c in enumerate(columns):
        at = {int(k): float(v) for k, v in zip(df[f"_r{i}"], df[c], strict=True)}
        out[c] = [at[k] for k in ranks]
    return out


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


def analyse(traces: Traces, metering: Metering | None = None) -> Budget:
    """The latency budget of ``traces``: over tasks with a task time, where that time goes.

    ``metering``: the run over ``traces`` whose checks have computed the tasks and the model
    calls (``Metering.tasks``, ``Metering.calls``): the budget reads those tables, the same
    task times the task latency terms count, instead of deriving them again. Without it the
    tasks are computed once here (kept). Then the per-task breakdown (kept), its sums and
    counts, the tasks counted, both percentiles in one query, and the model calls set aside
    (only when rows were)."""
    if metering is not None and metering.traces is not traces:
        raise ValueError("the metering run is over other traces")
    all_tasks = tasks(traces).cache() if metering is None else metering.tasks
    model_calls = None if metering is None else metering.calls
    b = task_breakdown(traces, all_tasks=all_tasks, model_calls=model_calls).cache()
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
    picked = _nearest_ranks(b, n, (50.0, 95.0), "task_ms", "steps")
    task_p50, task_p95 = picked["task_ms"]
    steps_p50, steps_p95 = picked["steps"]
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
    lost = 0
    if traces.quality.rows_set_aside:  # else there is nothing to count
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
