"""Plain Markdown renderings of results for terminals, CI logs and pull requests."""

from __future__ import annotations

from typing import Any

from slacheck.match.items import FieldCheck
from slacheck.messages import render
from slacheck.render.figure import apart, figure_of, limit_of
from slacheck.render.format import md_cell, md_text
from slacheck.results import Evaluation
from slacheck.textsafe import visible

#: units whose observed figure is a whole count: no decimals ("142 calls", not "142.00 calls")
_COUNTS = frozenset({"calls", "tasks", "requests", "minutes"})


def _verdict(v: object) -> str:
    """A verdict as words: ``no_data`` → ``no data`` (the JSON keeps the code)."""
    return str(v).replace("_", " ")


def _observed(value: float | None, unit: str, limit: float | None) -> str:
    if value is None:
        return "—"
    if unit in _COUNTS and float(value).is_integer():
        return f"{int(value):,} {unit}"
    return apart(value, limit, lambda x, d: f"{x:,.{d}f} {unit}", 2)


def evaluation_markdown(evaluation: Evaluation, lang: str = "en") -> str:
    """The verdict table; criteria and notes in ``lang`` (headings and verdicts stay English)."""
    c = evaluation.counts()
    lines = [
        f"## {md_text(evaluation.contract.contract.id)}: verdicts",
        "",
        ", ".join(f"{n} {_verdict(v)}" for v, n in c.items() if n) or "no terms checked",
        "",
    ]
    if evaluation.no_window is not None and not evaluation.results:
        return "\n".join([*lines, md_text(render(evaluation.no_window, lang)), ""])
    lines += [
        "| term | window | verdict | observed | good / total | criterion | examples |",
        "|---|---|---|---:|---:|---|---|",
    ]
    for r in evaluation.results:
        observed = _observed(r.observed, r.unit, limit_of(r, evaluation.contract))
        if r.observed is not None:  # a bound or a figure at the limit says so
            said = figure_of(r, evaluation.contract).message(observed)
            observed = said if isinstance(said, str) else render(said, lang)
        # our own figure and words: inert, but for the comparison sign ("> 1,000.00 ms")
        shown = str(md_cell(observed)).replace("&gt;", ">")
        window = r.window + (" (partial)" if r.partial_window else "")
        # every cell through md_cell: ids and notes quote the other side's traces
        words = (render(m, lang) for m in (r.criterion_message, *r.notes))
        crit = "<br>".join(md_cell(x) for x in words)
        lines.append(
            f"| {md_cell(r.term_id)} | {md_cell(window)} | **{md_cell(_verdict(r.verdict))}** | "
            f"{shown} | {r.good:,} / {r.total:,} | {crit} | "
            f"{md_cell(', '.join(r.examples))} |"
        )
    readings = ", ".join(
        f"`{name}` {r['value']}" + ("" if r["stated"] else " (default)")
        for name, r in evaluation.readings().items()
    )
    lines += ["", f"Readings: {readings}."]
    out = evaluation.outside_effective
    if out.outside:
        eff = evaluation.contract.contract.effective
        lines += [
            "",
            f"{out.before:,} in-scope calls before the effective start {eff.start} and "
            f"{out.after:,} after its end {eff.end or '(open-ended)'} are not counted.",
        ]
    q = evaluation.quality
    lines += [
        "",
        f"Rows read {q.rows_read:,} = used {q.rows_used:,} + set aside {q.rows_set_aside:,}"
        + (
            f" ({', '.join(f'{k} {v}' for k, v in sorted(q.set_aside.items()))})"
            if q.set_aside
            else ""
        )
        + f"; orphans kept {q.orphans:,}. Engine: {evaluation.engine}.",
        "",
    ]
    return visible("\n".join(lines))  # one text-safety rule (``textsafe``)


def fields_markdown(check: FieldCheck, lang: str = "en") -> str:
    """The eight items as a Markdown table: gaps needing a schema change first, then the rest.

    Criteria and fixes in ``lang``; item names and statuses stay as the JSON names them.
    """
    first = [i for i in check.items if i.needs_schema_change]
    rest = [i for i in check.items if not i.needs_schema_change]
    lines = [
        "| # | item | numerator | denominator | ratio | criterion | status | fix |",
        "|---|---|---:|---:|---:|---|---|---|",
    ]
    for i in (*first, *rest):
        ratio = "—" if i.ratio is None else f"{i.ratio * 100:.1f} %"
        cells = (
            i.item,
            i.name,
            i.numerator,
            i.denominator,
            ratio,
            render(i.criterion_message, lang),
            str(i.status).replace("_", " "),
            render(i.fix_message, lang) if i.fix_message is not None else "—",
        )
        lines.append("| " + " | ".join(str(md_cell(v)) for v in cells) + " |")
    if check.outside is not None:
        lines += ["", md_text(render(check.outside, lang))]
    lost = [*check.losses.notes(whole_period=True), *check.status_notes]
    if lost:
        lines += ["", *(f"- {md_text(render(n, lang))}" for n in lost)]
    return visible("\n".join(lines)) + "\n"  # one text-safety rule (``textsafe``)


def metrics_coverage_markdown(rows: list[dict[str, Any]], lang: str = "en") -> str:
    """Which latency terms the server-side metrics cover, as a Markdown table."""
    lines = [
        "| term | point | metric | covered | what the metrics give |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        cells = (
            r["term"],
            r["point"],
            r["metric"] or "—",
            "yes" if r["covered"] else "no",
            render(r["message"], lang),
        )
        lines.append("| " + " | ".join(str(md_cell(v)) for v in cells) + " |")
    return visible("\n".join(lines)) + "\n"  # one text-safety rule (``textsafe``)
