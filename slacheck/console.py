"""Rich tables for the terminal: one function per result type, no logic beyond layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:
    from slacheck.contract.load import LoadedContract
    from slacheck.contract.review import Finding
    from slacheck.trace.inspect import TraceSummary

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}


def findings_table(loaded: LoadedContract, findings: Sequence[Finding]) -> Table:
    table = Table(
        title=f"Clause review: {loaded.file} — {len(findings)} finding(s)",
        show_lines=True,
        expand=False,
    )
    table.add_column("code", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("where", no_wrap=True)
    table.add_column("finding")
    table.add_column("suggestion")
    for f in findings:
        line, _ = loaded.position(f.field)
        where = ".".join(str(p) for p in f.field) or "(contract)"
        if line is not None:
            where += f"\nline {line}"
        style = _SEVERITY_STYLE.get(str(f.severity), "")
        table.add_row(
            f.code,
            f"[{style}]{f.severity}[/]",
            where,
            f"[bold]{f.title}[/]\n{f.explanation}",
            f.suggestion,
        )
    return table


def summary_tables(summary: TraceSummary) -> list[Table]:
    d = summary.to_dict()
    head = Table(title="Traces", show_header=False)
    head.add_column("what")
    head.add_column("value")
    head.add_row("spans", f"{summary.spans:,}")
    head.add_row("tasks", f"{summary.tasks:,}")
    head.add_row("time range", f"{d['time_range']['start']} → {d['time_range']['end']}")
    for kind, n in d["kinds"].items():
        head.add_row(f"  {kind}", f"{n:,}")
    q = summary.quality
    head.add_row("rows read", f"{q.rows_read:,}")
    head.add_row("rows used", f"{q.rows_used:,}")
    head.add_row("rows set aside", f"{q.rows_set_aside:,}")
    for reason, n in sorted(q.set_aside.items()):
        head.add_row(f"  {reason}", f"{n:,}  e.g. {', '.join(q.examples.get(reason, ()))}")
    head.add_row("orphans (kept)", f"{q.orphans:,}")
    cov = Table(title="Field coverage (non-null / applicable spans)")
    cov.add_column("field")
    cov.add_column("non-null", justify="right")
    cov.add_column("applicable", justify="right")
    cov.add_column("coverage", justify="right")
    for c in summary.coverage:
        frac = "—" if c.fraction is None else f"{c.fraction:.1%}"
        cov.add_row(c.field, f"{c.non_null:,}", f"{c.applicable:,}", frac)
    return [head, cov]
