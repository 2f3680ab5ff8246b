"""Rich tables for the terminal: one function per result type, no logic beyond layout.

Every word they show comes from the message catalogue (``TerminalSays``), in the language the
command was given (``--lang``; English where a command has none); values from the inputs (ids,
field names, file names, contract values) are shown as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text

from slacheck.messages import NC_, NPC_, Message, MessageCode, format_number, render
from slacheck.render.figure import apart, figure_of, limit_of
from slacheck.render.words import Name
from slacheck.textsafe import visible

if TYPE_CHECKING:
    from slacheck.contract.load import LoadedContract
    from slacheck.contract.review import Finding
    from slacheck.match.fields import FieldCheck
    from slacheck.results import Evaluation
    from slacheck.trace.inspect import TraceSummary


def safe(text: object) -> str:
    """Untrusted text made inert for a terminal (``textsafe``, the rule of every output):
    control, format and bidirectional characters shown as ``\\x1b``, ``\\u202e``, lone
    surrogates as ``\\udc80``; a caller that prints it as rich ``Text`` (never markup) also
    keeps ``[/]`` literal."""
    return visible(text)


def plain(text: object, style: str = "") -> Text:
    """``text`` as a rich ``Text``: literal (no markup), terminal-safe."""
    return Text(safe(text), style=style)


class TerminalSays(MessageCode):
    """What the terminal says around the results: titles, column headers, labels, names,
    summary lines and hints (the command line's own lines among them)."""

    # clause review (lint)
    REVIEW_TITLE = NPC_(
        "terminal.review.title",
        "Clause review: {file} — {n} finding",
        "Clause review: {file} — {n} findings",
    )
    WHOLE_CONTRACT = NC_("terminal.review.whole_contract", "(contract)")
    AT_LINE = NC_("terminal.review.at_line", "{where} (line {line})")
    # field check
    FIELDS_TITLE = NC_("terminal.fields.title", "Eight-item field check")
    COLUMN_ITEM = NC_("terminal.fields.column.item", "item")
    COLUMN_COUNTS = NC_("terminal.fields.column.counts", "numerator / denominator")
    COLUMN_RATIO = NC_("terminal.fields.column.ratio", "ratio")
    COLUMN_STATUS = NC_("terminal.fields.column.status", "status")
    GAPS_TITLE = NC_("terminal.fields.gaps", "How to close the gaps (schema changes first)")
    CRITERION = NC_("terminal.criterion", "criterion: {text}")
    MISMATCHES_TITLE = NC_("terminal.fields.mismatches", "Metering mismatches")
    # check
    CHECK_TITLE = NC_("terminal.check.title", "{contract}: {counts} ({engine})")
    VERDICT_COUNT = NC_("terminal.check.verdict_count", "{n} {verdict}")
    COLUMN_TERM = NC_("terminal.check.column.term", "term")
    COLUMN_WINDOW = NC_("terminal.check.column.window", "window")
    COLUMN_VERDICT = NC_("terminal.check.column.verdict", "verdict")
    COLUMN_OBSERVED = NC_("terminal.check.column.observed", "observed")
    COLUMN_GOOD_TOTAL = NC_("terminal.check.column.good_total", "good / total")
    PARTIAL_WINDOW = NC_(
        "terminal.check.partial_window", "* the traces cover only part of this window"
    )
    READINGS = NC_("terminal.check.readings", "readings: {readings}")
    READING = NC_("terminal.check.reading", "{name}={value}")
    READING_DEFAULT = NC_("terminal.check.reading_default", "{name}={value} (default)")
    OBSERVED_MS = NC_("terminal.observed.ms", "{value:.2f} ms")
    OBSERVED_PERCENT = NC_("terminal.observed.percent", "{value:.2f} %")
    OBSERVED_TPS = NC_("terminal.observed.tokens_per_second", "{value:.2f} tokens/s")
    OBSERVED_CALLS = NPC_("terminal.observed.calls", "{value} call", "{value} calls", count="value")
    OBSERVED_SLICES = NC_("terminal.observed.slices", "{value:.2f} % of slices")
    OBSERVED_OTHER = NC_("terminal.observed.other", "{value:.2f} {unit}")
    IN_SCOPE_CALLS = NPC_(
        "terminal.check.in_scope_calls", "{n} in-scope call", "{n} in-scope calls"
    )
    OUTSIDE_EFFECTIVE = NC_(
        "terminal.check.outside_effective",
        "Not counted: {before} before the effective start {start} and {after} after its end {end}",
    )
    OPEN_ENDED = NC_("terminal.check.open_ended", "(open-ended)")
    NOTE = NC_("terminal.note", "note: {text}")
    EXCLUDED = NC_("terminal.check.excluded", "excluded: {items}")
    EXCLUDED_ITEM = NC_("terminal.check.excluded_item", "{reason} {n}")
    EXAMPLES = NC_("terminal.check.examples", "examples: {ids}")
    # traces inspect
    TRACES_TITLE = NC_("terminal.traces.title", "Traces")
    COLUMN_WHAT = NC_("terminal.traces.column.what", "what")
    COLUMN_VALUE = NC_("terminal.traces.column.value", "value")
    SPANS = NC_("terminal.traces.spans", "spans")
    TASKS = NC_("terminal.traces.tasks", "tasks (distinct task ids)")
    TIME_RANGE = NC_("terminal.traces.time_range", "time range")
    ROOT_SPANS = NC_("terminal.traces.root_spans", "task (root spans)")
    ROWS_READ = NC_("terminal.traces.rows_read", "rows read")
    ROWS_USED = NC_("terminal.traces.rows_used", "rows used")
    ROWS_SET_ASIDE = NC_("terminal.traces.rows_set_aside", "rows set aside")
    SET_ASIDE_EXAMPLES = NC_("terminal.traces.set_aside_examples", "{n}  e.g. {examples}")
    ORPHANS = NC_("terminal.traces.orphans", "orphans (kept)")
    COVERAGE_TITLE = NC_(
        "terminal.traces.coverage.title", "Field coverage (non-null / applicable spans)"
    )
    COLUMN_FIELD = NC_("terminal.traces.column.field", "field")
    COLUMN_NON_NULL = NC_("terminal.traces.column.non_null", "non-null")
    COLUMN_APPLICABLE = NC_("terminal.traces.column.applicable", "applicable")
    COLUMN_COVERAGE = NC_("terminal.traces.column.coverage", "coverage")
    FILES_TITLE = NC_("terminal.traces.files.title", "Files ({n})")
    FACTS_TITLE = NC_(
        "terminal.traces.facts.title",
        "Where each fact came from (kind: every span; the rest: model calls)",
    )
    COLUMN_FACT = NC_("terminal.traces.column.fact", "fact")
    COLUMN_SOURCES = NC_("terminal.traces.column.sources", "sources (spans)")
    COLUMN_MISSING = NC_("terminal.traces.column.missing", "missing")
    SOURCE_COLUMN = NC_("terminal.traces.source.column", "a table column")
    SOURCE_SPAN = NC_("terminal.traces.source.span", "the span's own timestamps")
    SOURCE_UNCLAIMED = NC_(
        "terminal.traces.source.unclaimed", "no kind row (other, or a task at a root)"
    )
    SOURCE_DERIVED = NC_("terminal.traces.source.derived", "derived from the endpoint host")
    SOURCE_FIRST_TOKEN = NC_(
        "terminal.traces.source.first_token", "its first token, recorded after the span's end"
    )
    SOURCE_STREAM_LOG = NC_(
        "terminal.traces.source.stream_log", "the log written when its stream ended"
    )
    COLUMN_FILE = NC_("terminal.traces.column.file", "file")
    COLUMN_FORMAT = NC_("terminal.traces.column.format", "format")
    COLUMN_ROWS = NC_("terminal.traces.column.rows", "rows")
    STATUS_TITLE = NC_("terminal.traces.status.title", "Model calls by status class")
    COLUMN_STATUS_CLASS = NC_("terminal.traces.column.status_class", "status class")
    COLUMN_CLASSIFIED_BY = NC_("terminal.traces.column.classified_by", "classified by")
    COLUMN_CALLS = NC_("terminal.traces.column.calls", "calls")
    # traces conventions
    CONVENTIONS_TITLE = NC_(
        "terminal.conventions.title", "Trace conventions (first matching row wins)"
    )
    COLUMN_CONVENTION = NC_("terminal.conventions.column.convention", "convention")
    COLUMN_SOURCE = NC_("terminal.conventions.column.source", "source")
    COLUMN_CANONICAL = NC_("terminal.conventions.column.canonical", "canonical")
    COLUMN_UNIT = NC_("terminal.conventions.column.unit", "unit")
    COLUMN_NOTE = NC_("terminal.conventions.column.note", "note")


VERDICT_NAMES = {
    "met": Name.VERDICT_MET,
    "breached": Name.VERDICT_BREACHED,
    "indeterminate": Name.VERDICT_INDETERMINATE,
    "not_measurable": Name.VERDICT_NOT_MEASURABLE,
    "no_data": Name.VERDICT_NO_DATA,
}
STATUS_NAMES = {
    "measurable": Name.STATUS_MEASURABLE,
    "derivable": Name.STATUS_DERIVABLE,
    "partial": Name.STATUS_PARTIAL,
    "not_measurable": Name.STATUS_NOT_MEASURABLE,
    "no_data": Name.STATUS_NO_DATA,
    "not_applicable": Name.STATUS_NOT_APPLICABLE,
}
SEVERITY_NAMES = {
    "high": Name.SEVERITY_HIGH,
    "medium": Name.SEVERITY_MEDIUM,
    "low": Name.SEVERITY_LOW,
}
# names of verdicts, field-check statuses, severities and the eight items: the documents' own
# names (render.words), so the terminal and the report can never word a verdict differently
ITEM_NAMES = {
    1: Name.ITEM_1,
    2: Name.ITEM_2,
    3: Name.ITEM_3,
    4: Name.ITEM_4,
    5: Name.ITEM_5,
    6: Name.ITEM_6,
    7: Name.ITEM_7,
    8: Name.ITEM_8,
}


def say(message: Message | MessageCode, lang: str = "en") -> str:
    """A message (or a code without parameters) in ``lang``, terminal-safe."""
    return safe(render(message if isinstance(message, Message) else message(), lang))


def _named(names: Mapping[str, MessageCode], value: object, lang: str) -> str:
    """An enum value's name in ``lang``; an unknown value as it is."""
    code = names.get(str(value))
    return str(value) if code is None else say(code, lang)


def verdict_name(verdict: object, lang: str = "en") -> str:
    return _named(VERDICT_NAMES, verdict, lang)


def status_name(status: object, lang: str = "en") -> str:
    return _named(STATUS_NAMES, status, lang)


def severity_name(severity: object, lang: str = "en") -> str:
    return _named(SEVERITY_NAMES, severity, lang)


def item_name(number: int, lang: str = "en") -> str:
    return say(ITEM_NAMES[number], lang)


def observed(value: float | None, unit: str, limit: float | None = None) -> Message | None:
    """A result's observed figure with its unit; None when nothing was observed. Two decimals,
    or more where two would show ``limit`` for a figure that is not it (``render.figure.apart``:
    the figure then goes in written out, which a template's format does not round again)."""
    if value is None:
        return None
    t = TerminalSays
    if limit is not None and unit != "calls":
        shown = apart(value, limit, lambda x, d: format_number(x, "en", f".{d}f"), 2)
        if shown != format_number(value, "en", ".2f"):
            value = shown  # type: ignore[assignment]
    fixed = {
        "ms": t.OBSERVED_MS,
        "%": t.OBSERVED_PERCENT,
        "tokens/s": t.OBSERVED_TPS,
        "% of slices": t.OBSERVED_SLICES,
        "slices %": t.OBSERVED_SLICES,
    }
    if unit in fixed:
        return fixed[unit](value=value)
    if unit == "calls":
        return t.OBSERVED_CALLS(value=value)
    return t.OBSERVED_OTHER(value=value, unit=unit)


def _columns(table: Table, lang: str, *codes: TerminalSays, **options: object) -> None:
    for code in codes:
        table.add_column(Text(say(code, lang)), **options)  # type: ignore[arg-type]


_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}


def findings_table(loaded: LoadedContract, findings: Sequence[Finding], lang: str = "en") -> Group:
    """One block per finding: code, severity, where, then the why and the suggested clause."""
    head = say(TerminalSays.REVIEW_TITLE(file=str(loaded.file), n=len(findings)), lang)
    parts: list[Text] = [Text(head + "\n", style="bold")]
    for f in findings:
        line, _ = loaded.position(f.field)
        where = f.path or render(TerminalSays.WHOLE_CONTRACT(), lang)
        if line is not None:
            where = render(TerminalSays.AT_LINE(where=where, line=line), lang)
        style = _SEVERITY_STYLE.get(str(f.severity), "")
        severity = severity_name(f.severity, lang)
        block = Text()
        block.append(safe(f"{f.code} "), style="bold")
        block.append(f"{severity:<6}", style=style)
        block.append(safe(f"  {where}\n"))
        block.append(safe(f"  {render(f.headline, lang)}\n"), style="bold")
        block.append(safe(f"  {render(f.why, lang)}\n"))
        block.append(safe(f"  → {render(f.fix, lang)}\n"), style="green")
        parts.append(block)
    return Group(*parts)


def summary_tables(summary: TraceSummary, lang: str = "en") -> list[Table]:
    d = summary.to_dict()
    t = TerminalSays
    head = Table(title=say(t.TRACES_TITLE, lang), show_header=False)
    _columns(head, lang, t.COLUMN_WHAT, t.COLUMN_VALUE)
    head.add_row(say(t.SPANS, lang), f"{summary.spans:,}")
    head.add_row(say(t.TASKS, lang), f"{summary.tasks:,}")
    time_range = f"{d['time_range']['start']} → {d['time_range']['end']}"
    head.add_row(say(t.TIME_RANGE, lang), plain(time_range))
    for kind, n in d["kinds"].items():
        # a task may have several root spans: the task kind counts spans, not tasks
        label = say(t.ROOT_SPANS, lang) if kind == "task" else safe(kind)
        head.add_row(Text(f"  {label}"), f"{n:,}")
    q = summary.quality
    head.add_row(say(t.ROWS_READ, lang), f"{q.rows_read:,}")
    head.add_row(say(t.ROWS_USED, lang), f"{q.rows_used:,}")
    head.add_row(say(t.ROWS_SET_ASIDE, lang), f"{q.rows_set_aside:,}")
    for reason, n in sorted(q.set_aside.items()):
        examples = list(q.examples.get(reason, ()))
        head.add_row(
            plain(f"  {reason}"), Text(say(t.SET_ASIDE_EXAMPLES(n=n, examples=examples), lang))
        )
    head.add_row(say(t.ORPHANS, lang), f"{q.orphans:,}")
    cov = Table(title=say(t.COVERAGE_TITLE, lang))
    cov.add_column(say(t.COLUMN_FIELD, lang))
    _columns(cov, lang, t.COLUMN_NON_NULL, t.COLUMN_APPLICABLE, t.COLUMN_COVERAGE, justify="right")
    for c in summary.coverage:
        frac = "—" if c.fraction is None else f"{c.fraction:.1%}"
        cov.add_row(plain(c.field), f"{c.non_null:,}", f"{c.applicable:,}", frac)
    files = Table(title=Text(say(t.FILES_TITLE(n=len(summary.sources)), lang)))
    files.add_column(say(t.COLUMN_FILE, lang), overflow="fold")
    files.add_column(say(t.COLUMN_FORMAT, lang))
    files.add_column(say(t.COLUMN_ROWS, lang), justify="right")
    for source in summary.sources:
        files.add_row(plain(source.path), source.format, f"{source.rows:,}")
    facts = Table(title=say(t.FACTS_TITLE, lang))
    facts.add_column(say(t.COLUMN_FACT, lang))
    facts.add_column(say(t.COLUMN_SOURCES, lang), overflow="fold")
    _columns(facts, lang, t.COLUMN_APPLICABLE, t.COLUMN_MISSING, justify="right")
    words = {
        "column": t.SOURCE_COLUMN,
        "span": t.SOURCE_SPAN,
        "unclaimed": t.SOURCE_UNCLAIMED,
        "derived:endpoint": t.SOURCE_DERIVED,
        "stream_log": t.SOURCE_STREAM_LOG,
        "first_token": t.SOURCE_FIRST_TOKEN,
    }
    for f in summary.facts:
        named = [f"{say(words[s], lang) if s in words else s} {n:,}" for s, n in f.sources]
        facts.add_row(
            plain(f.field), plain("; ".join(named) or "—"), f"{f.spans:,}", f"{f.missing:,}"
        )
    return [files, head, cov, facts, _status_table(summary, lang)]


def _status_table(summary: TraceSummary, lang: str) -> Table:
    """Model calls per status class and, within each, what classified how many of them."""
    t = TerminalSays
    table = Table(title=say(t.STATUS_TITLE, lang))
    _columns(table, lang, t.COLUMN_STATUS_CLASS, t.COLUMN_CLASSIFIED_BY)
    table.add_column(say(t.COLUMN_CALLS, lang), justify="right")
    for cls, by in sorted(summary.statuses.items()):
        for source, n in sorted(by.items()):
            table.add_row(plain(cls), plain(source), f"{n:,}")
    return table


_CONVENTION_COLUMNS = {
    "convention": TerminalSays.COLUMN_CONVENTION,
    "source": TerminalSays.COLUMN_SOURCE,
    "canonical": TerminalSays.COLUMN_CANONICAL,
    "unit": TerminalSays.COLUMN_UNIT,
    "note": TerminalSays.COLUMN_NOTE,
}


def conventions_table(rows: Sequence[Mapping[str, str]], lang: str = "en") -> Table:
    """The conventions table, one row per kind or field rule, in the order they are tried."""
    table = Table(title=say(TerminalSays.CONVENTIONS_TITLE, lang))
    _columns(table, lang, *_CONVENTION_COLUMNS.values(), overflow="fold")
    for r in rows:
        table.add_row(*(plain(r[k]) for k in _CONVENTION_COLUMNS))
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


def field_check_tables(check: FieldCheck, lang: str = "en") -> list[Table | Group]:
    """The eight items, then how to close each gap (schema changes first), then mismatches."""
    t = TerminalSays
    items = Table(title=say(t.FIELDS_TITLE, lang))
    items.add_column("#", justify="right")
    items.add_column(say(t.COLUMN_ITEM, lang))
    _columns(items, lang, t.COLUMN_COUNTS, t.COLUMN_RATIO, justify="right")
    items.add_column(say(t.COLUMN_STATUS, lang))
    for it in check.items:
        ratio = "—" if it.ratio is None else f"{it.ratio:.1%}"
        items.add_row(
            str(it.item),
            item_name(it.item, lang),
            f"{it.numerator:,} / {it.denominator:,}",
            ratio,
            Text(status_name(it.status, lang), style=_STATUS_STYLE.get(str(it.status), "")),
        )
    parts: list[Table | Group] = [items]
    gaps = check.gaps()
    if gaps:
        blocks = [Text("\n" + say(t.GAPS_TITLE, lang), style="bold")]
        for it in gaps:
            block = Text()
            block.append(f"{it.item}. {item_name(it.item, lang)}", style="bold")
            status = status_name(it.status, lang)
            block.append(f"  [{status}]\n", style=_STATUS_STYLE.get(str(it.status), ""))
            block.append(f"   {say(t.CRITERION(text=it.criterion_message), lang)}\n")
            fix = say(it.fix_message, lang) if it.fix_message is not None else ""
            block.append(f"   → {fix}\n", style="green")
            blocks.append(block)
        parts.append(Group(*blocks))
    if check.outside is not None:
        parts.append(Group(Text(say(check.outside, lang), style="yellow")))
    lost = [*check.losses.notes(whole_period=True), *check.status_notes]
    if lost:
        parts.append(Group(*[Text(say(n, lang), style="yellow") for n in lost]))
    if check.mismatches:
        blocks = [Text("\n" + say(t.MISMATCHES_TITLE, lang), style="bold")]
        for m in check.mismatches:
            block = Text()
            block.append(safe(f"{m.code} "), style="bold")
            severity = severity_name(m.severity, lang)
            block.append(severity, style=_SEVERITY_STYLE.get(str(m.severity), ""))
            block.append(safe(f"  {m.term_id or ''}\n"))
            block.append(f"   {say(m.headline, lang)}\n", style="bold")
            block.append(f"   {say(m.explanation, lang)}\n")
            blocks.append(block)
        parts.append(Group(*blocks))
    return parts


def verdict_counts(evaluation: Evaluation) -> list[Message]:
    """ "3 met", "1 breached": the verdicts that occur, each with its count."""
    return [
        TerminalSays.VERDICT_COUNT(n=n, verdict=VERDICT_NAMES[v]())
        for v, n in evaluation.counts().items()
        if n
    ]


def evaluation_table(evaluation: Evaluation, lang: str = "en") -> Group:
    """A verdict table (term, window, verdict, observed, good / total), then one block per
    result with its criterion, notes and example task ids; everything in ``lang``."""
    t = TerminalSays
    title = t.CHECK_TITLE(
        contract=evaluation.contract.contract.id,
        counts=verdict_counts(evaluation),
        engine=evaluation.engine,
    )
    if evaluation.no_window is not None and not evaluation.results:
        # nothing to tabulate: say why, with both date ranges, and what fell outside
        said = [Text(say(title, lang), style="bold")]
        said.append(Text(say(evaluation.no_window, lang), style="yellow"))
        said.extend(_outside_effective(evaluation, lang))
        return Group(*said)
    table = Table(title=Text(say(title, lang)))
    _columns(table, lang, t.COLUMN_TERM, t.COLUMN_WINDOW, t.COLUMN_VERDICT, no_wrap=True)
    _columns(table, lang, t.COLUMN_OBSERVED, t.COLUMN_GOOD_TOTAL, justify="right", no_wrap=True)
    for r in evaluation.results:
        figure = observed(r.observed, r.unit, limit_of(r, evaluation.contract))
        window = r.window + ("*" if r.partial_window else "")
        # a bound or a figure at the limit says so (``render.figure``): "> 1000.00 ms"
        shown = None if figure is None else figure_of(r, evaluation.contract).message(figure)
        table.add_row(
            plain(r.term_id),
            plain(window),
            Text(verdict_name(r.verdict, lang), style=_STATUS_STYLE.get(str(r.verdict), "")),
            "—" if shown is None else say(shown, lang) if isinstance(shown, Message) else shown,
            f"{r.good:,} / {r.total:,}",
        )
    blocks: list[Table | Text] = [table]
    if any(r.partial_window for r in evaluation.results):
        blocks.append(Text(say(t.PARTIAL_WINDOW, lang), style="dim"))
    readings = [
        (t.READING if r["stated"] else t.READING_DEFAULT)(name=name, value=r["value"])
        for name, r in evaluation.readings().items()
    ]
    blocks.append(Text(say(t.READINGS(readings=readings), lang), style="dim"))
    blocks.extend(_outside_effective(evaluation, lang))
    for r in evaluation.results:
        block = Text()
        block.append(safe(f"\n{r.term_id} {r.window} "), style="bold")
        block.append(verdict_name(r.verdict, lang), style=_STATUS_STYLE.get(str(r.verdict), ""))
        block.append(f"\n   {say(t.CRITERION(text=r.criterion_message), lang)}")
        for note in r.notes:
            block.append(f"\n   {say(t.NOTE(text=note), lang)}", style="dim")
        if r.excluded:
            excluded = [t.EXCLUDED_ITEM(reason=k, n=v) for k, v in sorted(r.excluded.items())]
            block.append(f"\n   {say(t.EXCLUDED(items=excluded), lang)}")
        if r.examples:
            block.append(f"\n   {say(t.EXAMPLES(ids=list(r.examples)), lang)}")
        blocks.append(block)
    return Group(*blocks)


def _outside_effective(evaluation: Evaluation, lang: str) -> list[Text]:
    """The in-scope calls before and after the effective period, when there are any."""
    t = TerminalSays
    out = evaluation.outside_effective
    if not out.outside:
        return []
    eff = evaluation.contract.contract.effective
    outside = t.OUTSIDE_EFFECTIVE(
        before=t.IN_SCOPE_CALLS(n=out.before),
        start=str(eff.start),
        after=t.IN_SCOPE_CALLS(n=out.after),
        end=str(eff.end) if eff.end else t.OPEN_ENDED(),
    )
    return [Text(say(outside, lang), style="yellow")]


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
