"""Rich tables for the terminal: one function per result type, no logic beyond layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:
    from slacheck.contract.load import LoadedContract
    from slacheck.contract.review import Finding

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
