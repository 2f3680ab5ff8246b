"""The demo: a month of synthetic agent traffic against a bundled contract, every output written."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from slacheck.console import ITEM_NAMES, STATUS_NAMES, VERDICT_NAMES, observed, verdict_counts
from slacheck.contract.load import read_contract_text
from slacheck.contract.review import review
from slacheck.evaluation import evaluate
from slacheck.match.fields import FieldCheck, check_fields
from slacheck.messages import LANGUAGES, NC_, NPC_, Message, MessageCode, Param, render
from slacheck.render import jsonout
from slacheck.render.junit import to_junit
from slacheck.render.markdown import evaluation_markdown, fields_markdown
from slacheck.results import Evaluation
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest

#: the month the demo's traffic fills (in the contract's zone) and the quarter the report covers
MONTH, QUARTER = "2026-07", "2026-Q3"
#: the report's issue date: the quarter's last day, so `make demo` writes the same documents
#: whatever day it runs (the CLI's `report --issued` still defaults to today)
ISSUED = dt.date(2026, 9, 30)


class DemoSays(MessageCode):
    """The demo's progress steps and headline findings."""

    GENERATING = NPC_(
        "demo.progress.generating",
        "generating {n} agent task over {days}",
        "generating {n} agent tasks over {days}",
    )
    DAYS = NPC_("demo.days", "{n} day", "{n} days")
    REVIEWING = NC_("demo.progress.reviewing", "clause review and eight-item field check")
    CHECKING = NC_("demo.progress.checking", "verdicts per term and month")
    PREPARING = NC_("demo.progress.preparing", "preparing documents")
    DOCUMENTS = NC_("demo.progress.documents", "documents ({lang})")
    SUMMARY = NC_("demo.headline.summary", "{contract}, {period}: {counts} (term × month).")
    RESULT = NC_("demo.headline.result", "{term} {window}: {verdict} — {criterion}")
    RESULT_OBSERVED = NC_(
        "demo.headline.result_observed",
        "{term} {window}: {verdict} — observed {observed}; {criterion}",
    )
    GAPS = NC_("demo.headline.gaps", "field check gaps: {gaps:semi}")
    GAP = NC_("demo.headline.gap", "item {item} {name} ({status})")
    METERING = NC_("demo.headline.metering", "metering: {headline}")
    ROWS = NC_("demo.headline.rows", "rows read {read} = used {used} + set aside {set_aside}")


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
    from slacheck.prepare import prepare_accept, prepare_report
    from slacheck.render.budget import to_markdown as budget_markdown
    from slacheck.render.documents import (
        DocFormat,
        render_accept,
        render_draft,
        render_memo,
        render_report,
    )
    from slacheck.render.inputs import evidence_name

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
    loaded = read_contract_text(text, str(out / "contract.yaml"))
    contract = loaded.contract

    progress(render(DemoSays.GENERATING(n=tasks, days=DemoSays.DAYS(n=days)), "en"))
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

    progress(render(DemoSays.REVIEWING(), "en"))
    findings = review(contract)
    # the review memo cites each finding's line in the contract file (0: a field it leaves out)
    lines = {f.path: loaded.field_line(f.field) for f in findings}
    save("lint.json", jsonout.dumps({"findings": [f.to_dict() for f in findings]}))
    fields = check_fields(contract, traces)
    save("fields.md", fields_markdown(fields))
    save("fields.json", jsonout.dumps(fields.to_dict()))

    progress(render(DemoSays.CHECKING(), "en"))
    evaluation = evaluate(contract, traces, period=MONTH)
    save("check.md", evaluation_markdown(evaluation))
    save("check.json", jsonout.dumps(evaluation.to_dict()))
    save("check.junit.xml", to_junit(evaluation))
    budget = analyse(traces)
    for lang in LANGUAGES:
        save(f"budget.{lang}.md", budget_markdown(budget, (), lang))

    progress(render(DemoSays.PREPARING(), "en"))
    contract_file = out / "contract.yaml"
    report_inputs = prepare_report(
        contract, traces, period=QUARTER, contract_file=contract_file, issued=issued
    )
    save(evidence_name(contract, QUARTER), report_inputs.evidence.data)
    accept_inputs = prepare_accept(contract, traces, contract_file=contract_file, period=MONTH)
    for lang in ("en", "zh"):
        progress(render(DemoSays.DOCUMENTS(lang=lang), "en"))
        for fmt in (DocFormat.HTML, DocFormat.MD, DocFormat.PDF):
            save(f"draft.{lang}.{fmt.value}", render_draft(contract, lang=lang, fmt=fmt))
            memo = render_memo(
                contract, lang=lang, fmt=fmt, contract_file=contract_file, lines=lines
            )
            save(f"memo.{lang}.{fmt.value}", memo)
            save(
                f"accept.{lang}.{fmt.value}",
                render_accept(accept_inputs, lang=lang, fmt=fmt),
            )
            save(
                f"report.{lang}.{fmt.value}",
                render_report(report_inputs, lang=lang, fmt=fmt),
            )
        # Word: the two documents counsel redline
        save(f"draft.{lang}.docx", render_draft(contract, lang=lang, fmt=DocFormat.DOCX))
        save(f"accept.{lang}.docx", render_accept(accept_inputs, lang=lang, fmt=DocFormat.DOCX))
    return DemoResult(out, tuple(files), fields, evaluation)


def headlines(result: DemoResult) -> list[Message]:
    """A few sentences a reader should take away, from the results themselves."""
    says = DemoSays
    e = result.evaluation
    lines = [
        says.SUMMARY(contract=e.contract.contract.id, period=e.period, counts=verdict_counts(e))
    ]
    for r in e.results:
        if r.verdict == "no_data":
            continue
        common: dict[str, Param] = {
            "term": r.term_id,
            "window": r.window,
            "verdict": VERDICT_NAMES[str(r.verdict)](),
            "criterion": r.criterion_message,
        }
        figure = observed(r.observed, r.unit)
        if figure is None:
            lines.append(says.RESULT(**common))
        else:
            lines.append(says.RESULT_OBSERVED(observed=figure, **common))
    gaps = result.fields.gaps()
    if gaps:
        items = [
            says.GAP(item=g.item, name=ITEM_NAMES[g.item](), status=STATUS_NAMES[str(g.status)]())
            for g in gaps
        ]
        lines.append(says.GAPS(gaps=items))
    for m in result.fields.mismatches:
        if m.code == "uncovered_task_time":
            lines.append(says.METERING(headline=m.headline))
    q = e.quality
    lines.append(says.ROWS(read=q.rows_read, used=q.rows_used, set_aside=q.rows_set_aside))
    return lines
