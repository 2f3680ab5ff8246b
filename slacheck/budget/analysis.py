"""The measured latency budget: where agent task time goes in traces, computed in the engine."""

from __future__ import annotations

import math
from dataclasses import replace

import ibis
import ibis.expr.types as ir

from slacheck.budget.model import PARTS, Budget, BudgetSays, Part, Spread, ToolParallelism
from slacheck.messages import Message
from slacheck.metering.context import Metering
from slacheck.metering.derive import FAILURE_STATES, calls, lower_bound, sum_ms, tasks
from slacheck.metering.rank import nearest_rank
from slacheck.trace.keys import exact_key, hash_key
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
    traces: Traces,
    *,
    all_tasks: ir.Table | None = None,
    model_calls: ir.Table | None = None,
    parents: ir.Table | None = None,
) -> ir.Table:
    """One row per task with a task time: its time split into ``PARTS`` (``<part>_ms``).

    ``all_tasks`` and ``model_calls``: the run's ``derive.tasks`` and ``derive.calls`` of
    ``traces`` when it has computed them (``Metering.tasks``, ``Metering.calls``): the same
    rows, read instead of derived again. ``parents``: ``_work_parents(traces)`` computed once
    (``analyse`` keeps it as a table): both the work spans and the model calls are joined with
    it, and a query that derived it twice would read every span twice.

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

    The work spans of a task are taken in the order of (start, end, kind): spans that tie on
    all three are alike for every figure here, so the figures do not depend on span ids. Tasks
    are told apart by a 64-bit hash of their id where it is exact over these tasks
    (``trace.keys``), else by the id.
    """
    timed = tasks(traces) if all_tasks is None else all_tasks
    # a lower bound (a subtree's time, a task with a span still open) is not the task's time:
    # where it went is not where the task's went
    whole = timed.task_ms.notnull() & ~lower_bound(timed.task_source)
    timed = timed.filter(whole).select("task_id", "task_ms")
    engine = traces.engine
    hashed = exact_key(engine, timed, "task_id")

    def keyed(t: ir.Table) -> ir.Table:
        return t.mutate(_k=hash_key(engine, t.task_id) if hashed else t.task_id)

    p = _work_parents(traces) if parents is None else parents
    # every step below is per task (windows and groups by its key), so the work spans of tasks
    # without a time need no join to leave them out: their rows are dropped by the left joins
    # onto ``timed`` at the end
    s = traces.spans
    work = s.filter(s.kind.isin(_WORK))
    work = work.left_join(p, [work.task_id == p.p_task, work.span_id == p.p_span])
    work = keyed(work.mutate(_parent=work.p_task.notnull()))
    spans = _span_parts(_ordered(work))
    c = calls(traces) if model_calls is None else model_calls
    # the leaf calls: every call is an llm span, so the calls that are leaves are the calls
    # that are no parent
    c = c.anti_join(p, [c.task_id == p.p_task, c.span_id == p.p_span])
    llm = _llm_parts(keyed(c))

    j = keyed(timed)
    j = j.left_join(llm, j._k == llm._k).drop("_k_right")
    j = j.left_join(spans, j._k == spans._k).drop("_k_right", "_k")
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


def _work_parents(traces: Traces) -> ir.Table:
    """(``p_task``, ``p_span``): each span that is the parent of an llm, tool or retrieval
    span, once (the wrappers among the work spans are the work spans in it)."""
    s = traces.spans
    child = s.filter(s.kind.isin(_WORK) & s.parent_span_id.notnull())
    return child.select(p_task="task_id", p_span="parent_span_id").distinct()


def _llm_parts(c: ir.Table) -> ir.Table:
    """Per task: the model-call parts, retries, steps and call counts."""
    w = ibis.window(group_by=c._k, order_by=[c.start_us, c.span_id])
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
    return c.group_by("_k").aggregate(
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
    """Work spans with running figures over their task (its leaves, and apart its wrappers),
    in (start, end, kind) order, both from one frame of one sort:

    ``_prev_run``: the latest end among the spans before (the union so far);
    ``_step_end``: the latest end of a model call up to this span (the step a tool follows);
    ``_step``: a tool's step — its ``_step_end`` when it started after that call ended;
    ``_gap_us``: a stepped tool's start − the end of the tool before it in the same step.
    """
    before = ibis.window(
        group_by=["_k", "_parent"], order_by=["start_us", "end_us", "kind"], rows=(None, -1)
    )
    is_llm = work.kind == "llm"
    prev_llm = ibis.ifelse(is_llm, work.end_us, None).max().over(before)
    t = work.mutate(_prev_run=work.end_us.max().over(before), _prev_llm=prev_llm)
    step_end = ibis.ifelse(
        is_llm, ibis.greatest(t._prev_llm.fill_null(t.end_us), t.end_us), t._prev_llm
    )
    stepped = (t.kind == "tool") & ~t._parent & step_end.notnull() & (t.start_us >= step_end)
    t = t.mutate(_step=ibis.ifelse(stepped, step_end, None))
    # the tools of one step, apart from every other span: their own partition
    ws = ibis.window(group_by=["_k", "_step"], order_by=["start_us", "end_us"])
    return t.mutate(_gap_us=t.start_us - t.end_us.lag().over(ws))


def _span_parts(t: ir.Table) -> ir.Table:
    """Per task: tool and retrieval time, the sum of all leaf work-span time and its union,
    the wrappers, and the tools grouped by step: serial steps and their saving."""
    leaf = ~t._parent
    # each span adds to the union only what reaches beyond every span started before it
    from_us = ibis.greatest(t.start_us, t._prev_run.fill_null(t.start_us))
    new_us = ibis.ifelse(leaf, ibis.greatest(t.end_us - from_us, 0), 0)
    is_tool = leaf & (t.kind == "tool")
    # first per (task, step): a step's own figures; the spans of no step sum alike
    g = t.group_by(["_k", "_step"]).aggregate(
        tool_ms=ibis.ifelse(is_tool, t.duration_ms, 0.0).sum(),
        retrieval_ms=ibis.ifelse(leaf & (t.kind == "retrieval"), t.duration_ms, 0.0).sum(),
        tool_calls=_count(is_tool),
        span_sum_ms=ibis.ifelse(leaf, t.duration_ms, 0.0).sum(),
        busy_us=new_us.sum(),
        container_spans=_count(t._parent),
        n=t.count(),
        total=t.duration_ms.sum(),
        longest=t.duration_ms.max(),
        gap=t._gap_us.min(),
    )
    step = g._step.notnull() & (g.n >= 2)
    serial = step & (g.gap >= 0).fill_null(False)
    return g.group_by("_k").aggregate(
        tool_ms=g.tool_ms.sum(),
        retrieval_ms=g.retrieval_ms.sum(),
        tool_calls=g.tool_calls.sum(),
        span_sum_ms=g.span_sum_ms.sum(),
        busy_ms=_f(g.busy_us.sum()) / 1000.0,
        serial_tool_steps=_count(serial),
        serial_tool_calls=ibis.ifelse(serial, g.n, 0).sum(),
        parallel_tool_steps=_count(step & ~serial),
        tool_saving_ms=ibis.ifelse(serial, g.total - g.longest, 0.0).sum(),
        container_spans=g.container_spans.sum(),
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
    parents = _work_parents(traces).cache()
    try:
        b = task_breakdown(
            traces, all_tasks=all_tasks, model_calls=model_calls, parents=parents
        ).cache()
    finally:
        parents.release()  # kept for the breakdown's one query only
    row = (
        b.aggregate(
            tasks=b.count(),
            clamped=_count(b.excess_ms > 0.001),
            # the totals exact (``sum_ms``): the same JSON at every run; a task's own sums are
            # µs figures added in any order, which the µs rounding gives back exactly
            **{c: sum_ms(b[c]) for c in _SUMS},
            **{c: b[c].sum() for c in _COUNTS},
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
    traces.verify_unchanged()  # no budget of a file written while it was read
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
