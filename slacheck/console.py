"""Rich tables for the terminal: one function per result type, no logic beyond layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from slacheck.contract.load import LoadedContract
    from slacheck.contract.review import Finding
    from slacheck.trace.inspect import TraceSummary

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}


def findings_table(loaded: LoadedContract, findings: Sequence[Finding]) -> Group:
    """One block per finding: code, severity, where, then the why and the suggested clause."""
    parts: list[Text] = [
        Text(f"Clause review: {loaded.file} — {len(findings)} finding(s)\n", style="bold")
    ]
    for f in findings:
        line, _ = loaded.position(f.field)
        where = f.path or "(contract)"
        if line is not None:
            where += f" (line {line})"
        style = _SEVERITY_STYLE.get(str(f.severity), "")
        block = Text()
        block.append(f"{f.code} ", style="bold")
        block.append(f"{f.severity:<6}", style=style)
        block.append(f"  {where}\n")
        block.append(f"  {f.title}\n", style="bold")
        block.append(f"  {f.explanation}\n")
        block.append(f"  → {f.suggestion}\n", style="green")
        parts.append(block)
    return Group(*parts)


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
