"""The document commands (draft, memo, accept, report, claim), the demo and the doctor."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from slacheck.cli.helpers import (
    EXIT_FINDINGS,
    EXIT_OK,
    Lang,
    OutputFormat,
    _inputs,
    handles_input_errors,
    load_contract_and_period,
    read_contract_and_period,
)
from slacheck.cli.helptext import _Command
from slacheck.cli.options import (
    ContractArg,
    EngineOpt,
    FormatOpt,
    MappingOpt,
    SparkMasterOpt,
    TracesArg,
    VerboseOpt,
    _ingest,
)
from slacheck.cli.root import app
from slacheck.cli.says import CliSays
from slacheck.cli.terminal import _working, err, out
from slacheck.console import plain, say
from slacheck.errors import UsageError
from slacheck.messages import NC_, MessageCode
from slacheck.outputs import check_target, write_folder, write_output
from slacheck.render import jsonout
from slacheck.version import __version__

# --------------------------------------------------------------------------------------------
# Documents and the demo

LangOpt = Annotated[Lang, typer.Option("--lang", help="en or zh.")]
# the draft and the acceptance criteria are also written for Word (.docx, for redlining); the
# report, with its charts, as PDF, HTML or Markdown (render.documents.WRITES)
OutOpt = Annotated[
    Path, typer.Option("-o", "--output", help="File to write (.pdf, .docx, .html, .md).")
]
DocFormatOpt = Annotated[
    str | None,
    typer.Option("--format", help="pdf, docx, html or md (default: from the extension)."),
]
ReportOutOpt = Annotated[
    Path, typer.Option("-o", "--output", help="File to write (.pdf, .html, .md).")
]
ReportFormatOpt = Annotated[
    str | None, typer.Option("--format", help="pdf, html or md (default: from the extension).")
]
IssuedOpt = Annotated[
    str | None,
    typer.Option(
        "--issued",
        help="Issue date YYYY-MM-DD (claim status is stated as of it); default today in "
        "the contract's time zone.",
    ),
]
ClaimedOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--claimed",
        metavar="WINDOW",
        help="An availability window (2026-07) whose credit was already claimed; its claim "
        "status is then 'claimed'. Repeat for each window.",
    ),
]


def _no_window(run: Any, period: str | None, lang: str = "en") -> bool:
    """Say (on the terminal, in ``lang``) when no window of the effective period overlaps the
    traces or the period: both date ranges, and every term as no data. True when it did.
    ``run``: the command's metering run (``prepare.metering_run``), asked, never rebuilt."""
    from slacheck.console import TerminalSays, verdict_counts
    from slacheck.prepare import no_window
    from slacheck.results import Evaluation

    said = no_window(run, period)
    if said is None:
        return False
    contract, loaded = run.contract, run.traces
    ev = Evaluation(
        contract, (), loaded.sources, loaded.quality, str(loaded.engine), period, no_window=said
    )
    title = TerminalSays.CHECK_TITLE(
        contract=contract.contract.id, counts=verdict_counts(ev), engine=ev.engine
    )
    out.print(say(title, lang), highlight=False)
    out.print(say(said, lang), style="yellow", highlight=False)
    return True


def _write_document(output: Path, data: bytes, inputs: list[Path], lang: str = "en") -> None:
    write_output(output, data, inputs, make_parents=True)
    err.print(say(CliSays.WROTE(path=str(output)), lang), highlight=False)


@app.command(cls=_Command)
@handles_input_errors
def draft(
    contract: ContractArg, output: OutOpt, lang: LangOpt = Lang.en, fmt: DocFormatOpt = None
) -> None:
    """Clause draft from the contract: contract language only, every clause from a contract field.

    Clauses the contract leaves open are not drafted; the review's findings are in
    `slacheck memo`. Writes PDF, Word (.docx, for redlining: the same clauses, headings, lists
    and tables as Word styles), HTML or Markdown."""
    from slacheck.contract.load import load_contract
    from slacheck.render.documents import format_for, render_draft

    kind = format_for(output, fmt, "draft")
    check_target(output, [contract])
    data = render_draft(load_contract(contract), lang=lang.value, fmt=kind)
    _write_document(output, data, [contract], lang.value)


@app.command(cls=_Command)
@handles_input_errors
def memo(
    contract: ContractArg, output: OutOpt, lang: LangOpt = Lang.en, fmt: DocFormatOpt = None
) -> None:
    """Review memo (not part of the contract): each finding of `slacheck lint`, with the draft
    clause it concerns, the issue and the change to the contract file.

    Exit 1 when the review finds anything, as `slacheck lint` does."""
    from slacheck.contract.load import read_contract
    from slacheck.contract.review import review
    from slacheck.render.documents import format_for, render_memo

    kind = format_for(output, fmt)
    check_target(output, [contract])
    loaded = read_contract(contract)
    findings = review(loaded.contract)
    # a field the file writes is cited by its line; one it leaves out (0), as not written
    lines = {f.path: loaded.field_line(f.field) for f in findings}
    data = render_memo(
        loaded.contract,
        lang=lang.value,
        fmt=kind,
        contract_file=contract,
        lines=lines,
        contract_sha256=loaded.sha256,  # of the bytes reviewed
    )
    _write_document(output, data, [contract], lang.value)
    raise typer.Exit(EXIT_FINDINGS if findings else EXIT_OK)


@app.command(cls=_Command)
@handles_input_errors
def accept(
    contract: ContractArg,
    output: OutOpt,
    traces: Annotated[
        list[str] | None, typer.Argument(help="Optional trace files for the field check.")
    ] = None,
    lang: LangOpt = Lang.en,
    fmt: DocFormatOpt = None,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    period: Annotated[
        str | None,
        typer.Option(
            "--period",
            help="The test period, a month (2026-07) or quarter (2026-Q3); default: the windows "
            "the traces cover.",
        ),
    ] = None,
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Acceptance criteria per term: test period and traffic, who runs it, how each verdict
    counts, re-test and evidence; with traces, the eight-item field check; a sign-off block.

    Writes PDF, Word (.docx, for redlining), HTML or Markdown."""
    from slacheck.render.documents import format_for, render_accept

    kind = format_for(output, fmt, "accept")
    inputs = _inputs(contract, traces, mapping)
    check_target(output, inputs)
    c = load_contract_and_period(contract, period)
    # the engine's imports come after the contract is read: a refused contract answers at once
    from slacheck.prepare import metering_run, prepare_accept

    loaded = (
        _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
        if traces
        else None
    )
    # one metering run over all the traces: the field check's, the windows' traffic and the
    # no-window notice
    run = metering_run(c, loaded) if loaded is not None else None
    prepared = prepare_accept(c, loaded, contract_file=contract, period=period, metering=run)
    data = render_accept(prepared, lang=lang.value, fmt=kind)
    _write_document(output, data, inputs, lang.value)
    # the criteria stand; the traces given cannot test them in the effective period
    if run is not None and _no_window(run, period, lang.value):
        raise typer.Exit(EXIT_FINDINGS)


@app.command(cls=_Command)
@handles_input_errors
def report(
    contract: ContractArg,
    traces: TracesArg,
    output: ReportOutOpt,
    period: Annotated[str, typer.Option("--period", help="Quarter (2026-Q3) or month.")],
    lang: LangOpt = Lang.en,
    fmt: ReportFormatOpt = None,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    issued: IssuedOpt = None,
    claimed: ClaimedOpt = None,
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Quarterly compliance report: verdicts per term and month, charts, credits, evidence.

    Writes PDF, HTML or Markdown (no Word form: the draft and the acceptance criteria are the
    documents to redline), and the evidence appendix (CSV: every call counted as failed,
    undecided or excluded) beside the report."""
    from slacheck.render.documents import format_for

    kind = format_for(output, fmt, "report")
    issue_date = _issue_date(issued)
    inputs = _inputs(contract, traces, mapping)
    check_target(output, inputs)
    read = read_contract_and_period(contract, period)
    c = read.contract
    # the engine's imports come after the contract is read: a refused contract answers at once
    from slacheck.prepare import metering_run, prepare_report
    from slacheck.render.claim import ClaimSays
    from slacheck.render.credit import credit_claims
    from slacheck.render.documents import render_report
    from slacheck.render.inputs import evidence_path

    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose, lang.value)
    run = metering_run(c, loaded, period)  # the command's one metering run
    if _no_window(run, period, lang.value):
        raise typer.Exit(EXIT_FINDINGS)  # nothing in the effective period to report on
    with _working(say(CliSays.CHECKING_RENDERING, lang.value), lang.value):
        prepared = prepare_report(
            c,
            loaded,
            period=period,
            contract_file=contract,
            issued=issue_date,
            claimed=claimed or (),
            metering=run,
            contract_sha256=read.sha256,  # the report states the hash of the bytes read
        )
        data = render_report(prepared, lang=lang.value, fmt=kind)
    csv_path = evidence_path(output, prepared)
    check_target(csv_path, inputs)
    _write_document(output, data, inputs, lang.value)
    _write_document(csv_path, prepared.evidence.data, inputs, lang.value)
    # each earned credit's claim status, as the report and `slacheck claim` state it
    for k in credit_claims(
        c, prepared.evaluation.results, as_of=prepared.issued, claimed=prepared.claimed
    ):
        if k.earned:
            said = ClaimSays.STATUS(window=k.window, as_of=k.as_of.isoformat(), status=k.word)
            out.print(say(said, lang.value), highlight=False)


@app.command(cls=_Command)
@handles_input_errors
def claim(
    contract: ContractArg,
    traces: TracesArg,
    period: Annotated[str, typer.Option("--period", help="The month to claim for (2026-07).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="A folder to write the pack.")],
    issued: IssuedOpt = None,
    claimed: ClaimedOpt = None,
    trace_format: FormatOpt = None,
    mapping: MappingOpt = None,
    engine: EngineOpt = "duckdb",
    spark_master: SparkMasterOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Credit-claim pack for one month: computation, incidents, affected calls, letters (en, zh).

    Writes claim.json, affected_calls.csv, letter.en.md and letter.zh.md into the folder, with
    the credit's claim status as of the issue date: due, expired, claimed or none (the same
    status the report states). Exit 1 when a credit is due (earned, not claimed, its deadline
    not passed), 0 otherwise."""

    issue_date = _issue_date(issued)
    inputs = _inputs(contract, traces, mapping)
    if output.exists() and not output.is_dir():
        raise UsageError(f"{output} is not a folder")
    files = {
        name: output / name
        for name in ("claim.json", "affected_calls.csv", "letter.en.md", "letter.zh.md")
    }
    for path in files.values():
        check_target(path, inputs)
    c = load_contract_and_period(contract, period)
    # the engine's imports come after the contract is read: a refused contract answers at once
    from slacheck.prepare import metering_run, prepare_claim
    from slacheck.render.claim import render_letter

    loaded = _ingest(traces, trace_format, mapping, engine, spark_master, verbose)
    run = metering_run(c, loaded, period)  # the command's one metering run
    if _no_window(run, period):
        raise typer.Exit(EXIT_FINDINGS)  # no window of the effective period to claim for
    with _working(say(CliSays.COMPUTING_CLAIM)):
        pack = prepare_claim(
            c, loaded, period=period, issued=issue_date, claimed=claimed or (), metering=run
        )
    data: dict[str, bytes | str] = {
        "claim.json": jsonout.dumps(pack.to_dict()),
        "affected_calls.csv": pack.affected_csv,
        "letter.en.md": render_letter(pack, "en"),
        "letter.zh.md": render_letter(pack, "zh"),
    }
    write_folder(output, data, inputs)  # the whole pack, or the folder as it was
    out.print(say(pack.status_line), highlight=False)
    out.print(say(pack.message), highlight=False)
    wrote = CliSays.WROTE_CLAIM(
        folder=str(output),
        calls=CliSays.AFFECTED_CALLS(n=pack.affected_rows),
        sha256=pack.affected_sha256,
        incidents=CliSays.INCIDENTS(n=len(pack.incidents)),
    )
    out.print(say(wrote), highlight=False)
    raise typer.Exit(EXIT_FINDINGS if pack.due else EXIT_OK)


def _issue_date(text: str | None) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--issued {text!r} is not a date; write it as YYYY-MM-DD") from None


@app.command(cls=_Command)
@handles_input_errors
def demo(
    output: Annotated[Path, typer.Option("-o", "--output", help="Folder to write.")] = Path(
        "demo-out"
    ),
    tasks: Annotated[int, typer.Option("--tasks", min=10, help="Agent tasks to generate.")] = 4000,
) -> None:
    """A month (31 days) of synthetic traffic checked against a bundled contract; all documents."""
    from slacheck.demo import headlines, run_demo

    with _working(say(CliSays.RUNNING_DEMO)) as status:
        result = run_demo(
            output,
            tasks=tasks,
            progress=lambda step: status.update(say(CliSays.PROGRESS(step=step))),
        )
    title = CliSays.DEMO_TITLE(files=CliSays.FILES(n=len(result.files)), folder=str(output))
    out.print(Text(say(title), style="bold"), highlight=False)
    for path in result.files:
        out.print(plain(f"  {path}"), highlight=False)
    out.print(Text("\n" + say(CliSays.HEADLINES), style="bold"))
    for line in headlines(result):
        out.print(Text(f"  • {say(line)}"), highlight=False)


class DoctorColumn(MessageCode):
    """The doctor table's column headers."""

    WHAT = NC_("cli.doctor.what", "what")
    STATUS = NC_("cli.doctor.status", "status")
    FOUND = NC_("cli.doctor.found", "found")
    FIX = NC_("cli.doctor.fix", "fix")
    TITLE = NC_("cli.doctor.title", "slacheck {version} on Python {python}")


@app.command(cls=_Command)
@handles_input_errors
def doctor(
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = (
        OutputFormat.table
    ),
    lang: Annotated[Lang, typer.Option("--lang", help="Language of the table: en or zh.")] = (
        Lang.en
    ),
) -> None:
    """What this install can do: dependencies and their versions, extras, the PDF engine, a
    font per document language, Java for Spark. Exit 0 when everything the default install
    needs is there, 1 otherwise (each missing part with the command that installs it)."""
    from rich.table import Table

    from slacheck.doctor import Status, checks, exit_code, summary

    with _working(say(CliSays.PROGRESS(step="slacheck doctor"), lang.value), lang.value):
        rows = checks()
    code = exit_code(rows)
    if fmt is OutputFormat.json:
        data = {"ok": code == 0, "checks": [r.to_dict() for r in rows]}
        sys.stdout.write(jsonout.dumps(data))
        raise typer.Exit(code)
    python = ".".join(map(str, sys.version_info[:3]))
    table = Table(title=say(DoctorColumn.TITLE(version=__version__, python=python), lang.value))
    for column in (DoctorColumn.WHAT, DoctorColumn.STATUS, DoctorColumn.FOUND, DoctorColumn.FIX):
        table.add_column(say(column, lang.value))
    styles = {Status.OK: "green", Status.MISSING: "red", Status.UNUSABLE: "red"}
    for r in rows:
        table.add_row(
            plain(say(r.area, lang.value)),
            plain(say(r.status_word, lang.value), styles.get(r.status, "yellow")),
            plain(say(r.detail, lang.value)),
            plain("" if r.fix is None else say(r.fix, lang.value)),
        )
    out.print(table)
    out.print(plain(say(summary(rows), lang.value), "green" if code == 0 else "red"))
    raise typer.Exit(code)
