"""How much of the task time each call-level term's point covers, and what it leaves out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import ibis.expr.types as ir

from slacheck.contract.model import Contract, MeasurementPoint
from slacheck.contract.review import Severity
from slacheck.match.mismatch.core import Code, Mismatch, aggregate_row, as_float, as_int
from slacheck.messages import NC_, NPC_, MessageCode, Param
from slacheck.metering.derive import point_value, scoped, succeeded, sum_ms

__all__ = ["TaskTimeSaid", "find_task_time"]

#: a component of task time below this share is left out of a title (still in the numbers)
_SHARE_SHOWN = 0.005


class TaskTimeSaid(MessageCode):
    """What the task-time finder says: the parts of task time and their shares."""

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


_TIME_POINTS = (
    MeasurementPoint.SERVER_PROCESSING,
    MeasurementPoint.TIME_TO_FIRST_TOKEN,
    MeasurementPoint.FULL_RESPONSE,
)


def find_task_time(contract: Contract, c: ir.Table, tasks: ir.Table) -> Iterable[Mismatch]:
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
    # the tool and retrieval time per task from the tasks' own aggregate: no scan of the spans
    tt = tasks.filter(tasks.task_ms.notnull()).select(
        "task_id", "task_ms", tools_ms=tasks.tool_span_ms, retrieval_ms=tasks.retrieval_span_ms
    )
    j = tt.left_join(by_call, "task_id").drop("task_id_right")
    # the totals exact (``sum_ms``), so the shares come out the same at every run: a task's
    # own sums are µs figures added in any order, which the µs rounding gives back exactly
    sums: dict[str, ir.Scalar] = {"tasks": j.count(), "task_ms": sum_ms(j.task_ms)}
    for name in ("llm_ms", "tools_ms", "retrieval_ms", *list(per_call)[1:]):
        column = j[name].fill_null(0)
        sums[name] = column.sum() if column.type().is_integer() else sum_ms(column)
    r = aggregate_row(j, **sums)
    total = as_float(r["task_ms"]) or 0.0
    if total <= 0:
        return
    llm, tools, retrieval = (as_float(r[k]) or 0.0 for k in ("llm_ms", "tools_ms", "retrieval_ms"))
    for i, term in terms:
        covered, metered = as_float(r[f"cov{i}"]) or 0.0, as_float(r[f"met{i}"]) or 0.0
        if metered <= 0:
            continue  # nothing metered at this point: point_not_recorded / scope say why
        parts: dict[str, float] = {}
        if term.measurement_point is MeasurementPoint.SERVER_PROCESSING:
            parts["network"] = as_float(r[f"net{i}"]) or 0.0
            parts["queue"] = as_float(r[f"que{i}"]) or 0.0
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
            TaskTimeSaid.TASK_TIME_TITLE_PARTS(
                term=term.id, point=point, share=cov_share, parts=_shares(shown)
            )
            if shown
            else TaskTimeSaid.TASK_TIME_TITLE(term=term.id, point=point, share=cov_share)
        )
        detail = TaskTimeSaid.TASK_TIME_DETAIL(
            tasks=as_int(r["tasks"]),
            point=point,
            share=cov_share,
            parts=_shares(shown or list(shares.items())),
        )
        notes: list[Param] = []
        if rest < 0:
            notes.append(TaskTimeSaid.TASK_TIME_OVERLAP())
        if as_int(r.get(f"cli{i}")):
            notes.append(TaskTimeSaid.TASK_TIME_CLIENT(calls=as_int(r[f"cli{i}"])))
        yield Mismatch(
            Code.UNCOVERED_TASK_TIME,
            Severity.MEDIUM if cov_share < 0.5 else Severity.LOW,
            term.id,
            title,
            TaskTimeSaid.TASK_TIME_WITH_NOTES(detail=detail, notes=notes) if notes else detail,
            {
                "tasks": as_int(r["tasks"]),
                "task_ms": total,
                "covered": cov_share,
                "shares": shares,
                "point": str(term.measurement_point),
            },
        )


#: the parts of task time a point leaves out, keyed as the JSON numbers name them
_PARTS = {
    "network": TaskTimeSaid.PART_NETWORK,
    "queue": TaskTimeSaid.PART_QUEUE,
    "generation after first token": TaskTimeSaid.PART_GENERATION,
    "unmetered calls": TaskTimeSaid.PART_UNMETERED,
    "tools": TaskTimeSaid.PART_TOOLS,
    "retrieval": TaskTimeSaid.PART_RETRIEVAL,
    "gaps": TaskTimeSaid.PART_GAPS,
}


def _shares(parts: Sequence[tuple[str, float]]) -> list[Param]:
    return [TaskTimeSaid.SHARE(part=_PARTS[k](), share=v) for k, v in parts]
