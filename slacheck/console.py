"""Rich tables for the terminal: one function per result type, no logic beyond layout."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text

from slacheck.messages import Message, render

if TYPE_CHECKING:
    from slacheck.contract.load import LoadedContract
    from slacheck.contract.review import Finding
    from slacheck.evaluate import Evaluation
    from slacheck.match.fields import FieldCheck
    from slacheck.trace.inspect import TraceSummary

#: C0 and C1 control characters (but tab and newline), DEL, and the bidirectional overrides
#: that reorder what a terminal shows ("Trojan Source"): none reaches the terminal raw.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(text: object) -> str:
    """Untrusted text made inert for a terminal: control characters shown as ``\\x1b``,
    lone surrogates as ``\\udc80``; a caller that prints it as rich ``Text`` (never markup)
    also keeps ``[/]`` literal."""
    value = _CONTROL.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}"
        ),
        str(text),
    )
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def plain(text: object, style: str = "") -> Text:
    """``text`` as a rich ``Text``: literal (no markup), terminal-safe."""
    return Text(safe(text), style=style)


_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}

#: the few words around the findings, per language (the findings come from the catalogue)
_FRAME = {
    "en": {
        "review": "Clause review: {file} — {n} finding(s)",
        "contract": "(contract)",
        "line": " (line {line})",
        "fields": "Eight-item field check",
        "item": "item",
        "counts": "numerator / denominator",
        "ratio": "ratio",
        "status": "status",
        "gaps": "How to close the gaps (schema changes first)",
        "criterion": "criterion",
        "mismatches": "Metering mismatches",
        "note": "note",
        "excluded": "excluded",
        "examples": "examples",
    },
    "zh": {
        "review": "条款审阅：{file}，共 {n} 条审阅意见",
        "contract": "（合同）",
        "line": "（第 {line} 行）",
        "fields": "八项字段检查",
        "item": "检查项",
        "counts": "分子 / 分母",
        "ratio": "比例",
        "status": "状态",
        "gaps": "缺口的补齐方式（需变更数据结构的在前）",
        "criterion": "判定标准",
        "mismatches": "计量口径差异",
        "note": "说明",
        "excluded": "已排除",
        "examples": "示例",
    },
}


def findings_table(loaded: LoadedContract, findings: Sequence[Finding], lang: str = "en") -> Group:
    """One block per finding: code, severity, where, then the why and the suggested clause."""
    words = _FRAME[lang]
    head = words["review"].format(file=loaded.file, n=len(findings))
    parts: list[Text] = [plain(head + "\n", style="bold")]
    for f in findings:
        line, _ = loaded.position(f.field)
        where = f.path or words["contract"]
        if line is not None:
            where += words["line"].format(line=line)
        style = _SEVERITY_STYLE.get(str(f.severity), "")
        block = Text()
        block.append(safe(f"{f.code} "), style="bold")
        block.append(safe(f"{_name('severity', f.severity, lang):<6}"), style=style)
        block.append(safe(f"  {where}\n"))
        block.append(safe(f"  {render(f.headline, lang)}\n"), style="bold")
        block.append(safe(f"  {render(f.why, lang)}\n"))
        block.append(safe(f"  → {render(f.fix, lang)}\n"), style="green")
        parts.append(block)
    return Group(*parts)


def _name(group: str, value: object, lang: str) -> str:
    """An enum value's label: the raw value in English (as before), the label in Chinese."""
    if lang == "en":
        return str(value)
    from slacheck.render.format import NAMES

    return NAMES[group][lang].get(str(value), str(value))


def summary_tables(summary: TraceSummary) -> list[Table]:
    d = summary.to_dict()
    head = Table(title="Traces", show_header=False)
    head.add_column("what")
    head.add_column("value")
    head.add_row("spans", f"{summary.spans:,}")
    head.add_row("tasks (distinct task ids)", f"{summary.tasks:,}")
    head.add_row("time range", plain(f"{d['time_range']['start']} → {d['time_range']['end']}"))
    for kind, n in d["kinds"].items():
        # a task may have several root spans: the task kind counts spans, not tasks
        label = "task (root spans)" if kind == "task" else kind
        head.add_row(plain(f"  {label}"), f"{n:,}")
    q = summary.quality
    head.add_row("rows read", f"{q.rows_read:,}")
    head.add_row("rows used", f"{q.rows_used:,}")
    head.add_row("rows set aside", f"{q.rows_set_aside:,}")
    for reason, n in sorted(q.set_aside.items()):
        head.add_row(
            plain(f"  {reason}"), plain(f"{n:,}  e.g. {', '.join(q.examples.get(reason, ()))}")
        )
    head.add_row("orphans (kept)", f"{q.orphans:,}")
    cov = Table(title="Field coverage (non-null / applicable spans)")
    cov.add_column("field")
    cov.add_column("non-null", justify="right")
    cov.add_column("applicable", justify="right")
    cov.add_column("coverage", justify="right")
    for c in summary.coverage:
        frac = "—" if c.fraction is None else f"{c.fraction:.1%}"
        cov.add_row(plain(c.field), f"{c.non_null:,}", f"{c.applicable:,}", frac)
    files = Table(title=f"Files ({len(summary.sources)})")
    files.add_column("file", overflow="fold")
    files.add_column("format")
    files.add_column("rows", justify="right")
    for source in summary.sources:
        files.add_row(plain(source.path), source.format, f"{source.rows:,}")
    return [files, head, cov]


def conventions_table(rows: Sequence[Mapping[str, str]]) -> Table:
    """The conventions table, one row per kind or field rule, in the order they are tried."""
    table = Table(title="Trace conventions (first matching row wins)")
    for name in ("convention", "source", "canonical", "unit", "note"):
        table.add_column(name, overflow="fold")
    for r in rows:
        table.add_row(*(plain(r[k]) for k in ("convention", "source", "canonical", "unit", "note")))
    return table


_STATUS_STYLE = {
    "measurable": "green",
    "derivable": "green",
    "partial": "yellow",
    "not_measurable": "bold red",
    "no_data": "yellow",
    "not_applicable": "dim",
    "met": "green",
    "breached": "bold red",
    "indeterminate": "yellow",
}


def _styled(value: str) -> Text:
    return plain(value, _STATUS_STYLE.get(value, ""))


def field_check_tables(check: FieldCheck, lang: str = "en") -> list[Table | Group]:
    """The eight items, then how to close each gap (schema changes first), then mismatches."""
    words = _FRAME[lang]
    items = Table(title=words["fields"])
    items.add_column("#", justify="right")
    items.add_column(words["item"])
    items.add_column(words["counts"], justify="right")
    items.add_column(words["ratio"], justify="right")
    items.add_column(words["status"])
    for it in check.items:
        ratio = "—" if it.ratio is None else f"{it.ratio:.1%}"
        items.add_row(
            str(it.item),
            plain(_item_name(it.item, it.name, lang)),
            f"{it.numerator:,} / {it.denominator:,}",
            ratio,
            plain(_name("status", it.status, lang), _STATUS_STYLE.get(str(it.status), "")),
        )
    parts: list[Table | Group] = [items]
    gaps = check.gaps()
    if gaps:
        blocks = [Text("\n" + words["gaps"], style="bold")]
        for it in gaps:
            block = Text()
            block.append(safe(f"{it.item}. {_item_name(it.item, it.name, lang)}"), style="bold")
            status = _name("status", it.status, lang)
            block.append(safe(f"  [{status}]\n"), style=_STATUS_STYLE.get(str(it.status), ""))
            block.append(safe(f"   {words['criterion']}: {render(it.criterion_message, lang)}\n"))
            fix = render(it.fix_message, lang) if it.fix_message is not None else ""
            block.append(safe(f"   → {fix}\n"), style="green")
            blocks.append(block)
        parts.append(Group(*blocks))
    lost = check.losses.notes(whole_period=True)
    if lost:
        parts.append(Group(*[plain(render(n, lang), style="yellow") for n in lost]))
    if check.mismatches:
        blocks = [Text("\n" + words["mismatches"], style="bold")]
        for m in check.mismatches:
            block = Text()
            block.append(safe(f"{m.code} "), style="bold")
            severity = _name("severity", m.severity, lang)
            block.append(safe(severity), style=_SEVERITY_STYLE.get(str(m.severity), ""))
            block.append(safe(f"  {m.term_id or ''}\n"))
            block.append(safe(f"   {render(m.headline, lang)}\n"), style="bold")
            block.append(safe(f"   {render(m.explanation, lang)}\n"))
            blocks.append(block)
        parts.append(Group(*blocks))
    return parts


def _item_name(number: int, name: str, lang: str) -> str:
    if lang == "en":
        return name
    from slacheck.render.format import NAMES

    return NAMES["item"][lang].get(str(number), name)


def evaluation_table(evaluation: Evaluation, lang: str = "en") -> Group:
    """A verdict table (term, window, verdict, observed, good / total), then one block per
    result with its criterion, notes and example task ids; criteria and notes in ``lang``."""
    words = _FRAME[lang]
    c = evaluation.counts()
    title = (
        f"{evaluation.contract.contract.id}: "
        + ", ".join(f"{n} {v}" for v, n in c.items() if n)
        + f" ({evaluation.engine})"
    )
    table = Table(title=plain(title))
    table.add_column("term", no_wrap=True)
    table.add_column("window", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("observed", justify="right", no_wrap=True)
    table.add_column("good / total", justify="right", no_wrap=True)
    for r in evaluation.results:
        observed = "—" if r.observed is None else f"{r.observed:,.2f} {r.unit}"
        window = r.window + ("*" if r.partial_window else "")
        table.add_row(
            plain(r.term_id),
            plain(window),
            _styled(str(r.verdict)),
            observed,
            f"{r.good:,} / {r.total:,}",
        )
    blocks: list[Table | Text] = [table]
    if any(r.partial_window for r in evaluation.results):
        blocks.append(Text("* the traces cover only part of this window", style="dim"))
    readings = ", ".join(
        f"{name}={r['value']}" + ("" if r["stated"] else " (default)")
        for name, r in evaluation.readings().items()
    )
    blocks.append(plain(f"readings: {readings}", style="dim"))
    out = evaluation.outside_effective
    if out.outside:
        eff = evaluation.contract.contract.effective
        blocks.append(
            Text(
                f"{out.before:,} in-scope calls before the effective start {eff.start} and "
                f"{out.after:,} after its end {eff.end or '(open-ended)'} are not counted",
                style="yellow",
            )
        )
    for r in evaluation.results:
        block = Text()
        block.append(safe(f"\n{r.term_id} {r.window} "), style="bold")
        block.append(str(r.verdict), style=_STATUS_STYLE.get(str(r.verdict), ""))
        block.append(safe(f"\n   {words['criterion']}: {render(r.criterion_message, lang)}"))
        for note in r.notes:
            block.append(safe(f"\n   {words['note']}: {render(note, lang)}"), style="dim")
        if r.excluded:
            excluded = ", ".join(f"{k} {v:,}" for k, v in sorted(r.excluded.items()))
            block.append(safe(f"\n   {words['excluded']}: {excluded}"))
        if r.examples:
            block.append(safe(f"\n   {words['examples']}: {', '.join(r.examples)}"))
        blocks.append(block)
    return Group(*blocks)


def metrics_coverage_table(rows: Sequence[Mapping[str, object]], lang: str = "en") -> Table:
    """Which latency terms the server-side metrics cover (``metering.metrics.coverage_rows``)."""
    from slacheck.metering.metrics import MetricsSays

    table = Table(title=render(MetricsSays.COVERAGE_TITLE(), lang))
    for code in (
        MetricsSays.COLUMN_TERM,
        MetricsSays.COLUMN_POINT,
        MetricsSays.COLUMN_METRIC,
        MetricsSays.COLUMN_GIVES,
    ):
        table.add_column(render(code(), lang))
    for r in rows:
        message = r["message"]
        table.add_row(
            plain(r["term"]),
            plain(r["point"]),
            plain(r["metric"] or "—"),
            plain(
                render(message, lang) if isinstance(message, Message) else "",
                "green" if r["covered"] else "yellow",
            ),
        )
    return table
