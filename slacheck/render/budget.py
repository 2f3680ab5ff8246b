"""The latency budget as Markdown, in the reader's language."""

from __future__ import annotations

from slacheck.budget.model import PARTS, Budget, BudgetSays, WhatIf
from slacheck.messages import Message, MessageCode, format_number, render
from slacheck.textsafe import visible

__all__ = ["to_markdown"]

#: each part's label, by its name
_LABELS = dict(PARTS)


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
