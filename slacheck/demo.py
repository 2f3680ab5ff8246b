"""The demo: a month of synthetic agent traffic against a bundled contract, every output written."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from slacheck.contract.load import load_contract_text
from slacheck.contract.review import review
from slacheck.evaluate import Evaluation, evaluate
from slacheck.match.fields import FieldCheck, check_fields
from slacheck.render import jsonout
from slacheck.render.junit import to_junit
from slacheck.render.markdown import evaluation_markdown, fields_markdown
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest

#: the month the demo's traffic fills (in the contract's zone) and the quarter the report covers
MONTH, QUARTER = "2026-07", "2026-Q3"
#: the report's issue date: the quarter's last day, so `make demo` writes the same documents
#: whatever day it runs (the CLI's `report --issued` still defaults to today)
ISSUED = dt.date(2026, 9, 30)


@dataclass(frozen=True, slots=True)
class DemoResult:
    out: Path
    files: tuple[Path, ...]
    fields: FieldCheck
    evaluation: Evaluation


def run_demo(
    out: Path,
    *,
    tasks: int = 4000,
    days: int = 31,
    seed: int = 1,
    issued: dt.date = ISSUED,
    progress: Callable[[str], None] = lambda _: None,
) -> DemoResult:
    """Generate traffic, check the demo contract, and write every document in en and zh."""
    from slacheck.budget import analyse
    from slacheck.budget import to_markdown as budget_markdown
    from slacheck.render.documents import (
        DocFormat,
        evidence_name,
        prepare_accept,
        prepare_report,
        render_draft,
        render_prepared_accept,
        render_prepared_report,
    )

    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []

    def save(name: str, data: str | bytes) -> None:
        path = out / name
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
        files.append(path)

    text = resources.files("slacheck.contract").joinpath("starters/demo.yaml").read_text("utf-8")
    save("contract.yaml", text)
    contract = load_contract_text(text, str(out / "contract.yaml"))

    progress(f"generating {tasks} agent tasks over {days} days")
    trace_path = out / "traffic.parquet"
    profile = TrafficProfile(
        tasks=tasks,
        days=days,
        seed=seed,
        # midnight, 1 July, in the contract's zone (Asia/Shanghai): the month is covered whole
        start=dt.datetime(2026, 6, 30, 16, tzinfo=dt.UTC),
        malformed=12,
    )
    write(generate(profile), trace_path, "parquet")
    files.append(trace_path)
    traces = ingest([trace_path])

    progress("clause review and eight-item field check")
    findings = review(contract)
    save("lint.json", jsonout.dumps({"findings": [f.to_dict() for f in findings]}))
    fields = check_fields(contract, traces)
    save("fields.md", fields_markdown(fields))
    save("fields.json", jsonout.dumps(fields.to_dict()))

    progress("verdicts per term and month")
    evaluation = evaluate(contract, traces, period=MONTH)
    save("check.md", evaluation_markdown(evaluation))
    save("check.json", jsonout.dumps(evaluation.to_dict()))
    save("check.junit.xml", to_junit(evaluation))
    save("budget.md", budget_markdown(analyse(traces)))

    progress("preparing documents")
    contract_file = out / "contract.yaml"
    report_inputs = prepare_report(
        contract, traces, period=QUARTER, contract_file=contract_file, issued=issued
    )
    save(evidence_name(contract, QUARTER), report_inputs.evidence.data)
    accept_inputs = prepare_accept(contract, traces, contract_file=contract_file, period=MONTH)
    for lang in ("en", "zh"):
        progress(f"documents ({lang})")
        for fmt in (DocFormat.HTML, DocFormat.MD, DocFormat.PDF):
            save(f"draft.{lang}.{fmt.value}", render_draft(contract, lang=lang, fmt=fmt))
            save(
                f"accept.{lang}.{fmt.value}",
                render_prepared_accept(accept_inputs, lang=lang, fmt=fmt),
            )
            save(
                f"report.{lang}.{fmt.value}",
                render_prepared_report(report_inputs, lang=lang, fmt=fmt),
            )
    return DemoResult(out, tuple(files), fields, evaluation)


def headlines(result: DemoResult) -> list[str]:
    """A few sentences a reader should take away, from the results themselves."""
    lines: list[str] = []
    e = result.evaluation
    counts = ", ".join(f"{n} {v}" for v, n in e.counts().items() if n)
    lines.append(f"{e.contract.contract.id}, {e.period}: {counts} (term × month).")
    for r in e.results:
        if r.verdict != "no_data":
            observed = "" if r.observed is None else f" observed {r.observed:,.1f} {r.unit};"
            lines.append(f"{r.term_id} {r.window}: {r.verdict} —{observed} {r.criterion}")
    gaps = result.fields.gaps()
    if gaps:
        lines.append(
            "field check gaps: " + "; ".join(f"item {g.item} {g.name} ({g.status})" for g in gaps)
        )
    for m in result.fields.mismatches:
        if m.code == "uncovered_task_time":
            lines.append(f"metering: {m.title}")
    q = e.quality
    lines.append(
        f"rows read {q.rows_read:,} = used {q.rows_used:,} + set aside {q.rows_set_aside:,}"
    )
    return lines
