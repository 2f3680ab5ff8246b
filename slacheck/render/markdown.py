"""Plain Markdown renderings of results for terminals, CI logs and pull requests."""

from __future__ import annotations

from slacheck.evaluate import Evaluation


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", "<br>")


def evaluation_markdown(evaluation: Evaluation) -> str:
    c = evaluation.counts()
    lines = [
        f"## {evaluation.contract.contract.id}: verdicts",
        "",
        ", ".join(f"{n} {v}" for v, n in c.items() if n) or "no terms checked",
        "",
        "| term | window | verdict | observed | good / total | criterion | examples |",
        "|---|---|---|---:|---:|---|---|",
    ]
    for r in evaluation.results:
        observed = "—" if r.observed is None else f"{r.observed:,.2f} {r.unit}"
        window = r.window + (" (partial)" if r.partial_window else "")
        crit = r.criterion + ("<br>" + "<br>".join(r.notes) if r.notes else "")
        lines.append(
            f"| {_cell(r.term_id)} | {window} | **{r.verdict}** | {observed} | "
            f"{r.good:,} / {r.total:,} | {_cell(crit)} | {_cell(', '.join(r.examples))} |"
        )
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
    return "\n".join(lines)
