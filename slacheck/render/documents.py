"""The documents — clause draft, review memo, acceptance criteria, compliance report — in any
format."""

# Each document is prepared once (the expensive part: evaluation, field check, budget, the
# measured distributions) and rendered per language and format from a Jinja template in
# slacheck/templates. Formats are a registry (`FORMATS`): a format names its template family,
# whether it embeds charts, and how the rendered text becomes bytes (PDF lays out the HTML).
# Nothing reads the clock, every collection is sorted, and SVG ids are salted deterministically,
# so the same inputs give byte-identical HTML and Markdown.

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from slacheck.contract.model import (
    DEFAULT_EVIDENCE_RETENTION_MONTHS,
    Contract,
    Direction,
    EvidenceKeeper,
    MeasurementPoint,
    OccurrenceObjective,
    RateLimitBasis,
)
from slacheck.contract.review import Finding, review
from slacheck.errors import UsageError
from slacheck.extras import ExtraSays, PartMissing
from slacheck.inputs import sha256_if_readable
from slacheck.messages import LOCALES, render, translations
from slacheck.render import charts, glossary
from slacheck.render.credit import credit_claims
from slacheck.render.details import PeakDetails, details_of
from slacheck.render.figure import figure_of, limit_of
from slacheck.render.format import LABELS, Formatter, Lang, check_lang, md_text, window_kind
from slacheck.render.inputs import (
    EVIDENCE_COLUMNS,
    AcceptInputs,
    ReportInputs,
    acceptance_window_kind,
    evidence_name,
)
from slacheck.render.outline import ClauseRef, Numbering, draft_outline
from slacheck.render.words import Label
from slacheck.textsafe import visible
from slacheck.verdict import TermResult
from slacheck.version import __version__

if TYPE_CHECKING:
    from slacheck.trace.results import SourceFile

__all__ = [
    "ASSUMED_STEPS_PER_TASK",
    "FORMATS",
    "WRITES",
    "DocFormat",
    "MemoEntry",
    "Renderer",
    "environment",
    "format_for",
    "memo_entries",
    "monthly_points",
    "register_format",
    "render_accept",
    "render_draft",
    "render_memo",
    "render_report",
]

#: DOMAIN.md's worked example: an agent task of 12 model calls. Used to restate a rate limit per
#: task only when the contract gives no steps_per_task, and always labelled as assumed (never in
#: the clause draft, which restates a limit only at the contract's own steps per task).
ASSUMED_STEPS_PER_TASK = 12.0


class DocFormat(StrEnum):
    HTML = "html"
    MD = "md"
    PDF = "pdf"
    DOCX = "docx"


@dataclass(frozen=True, slots=True)
class Renderer:
    """How a format is made: which template family, with charts or not, and the final bytes."""

    family: str  # the template suffix: "html" → draft.en.html.j2
    charts: bool
    finish: Callable[[str], bytes]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


def _pdf(html: str) -> bytes:
    try:  # weasyprint loads only when a PDF is asked for
        from slacheck.render.pdf import html_to_pdf
    except OSError as exc:  # weasyprint is there, its system libraries (Pango) are not
        raise PartMissing(ExtraSays.NO_PANGO(error=str(exc).splitlines()[0][:200])) from None

    return html_to_pdf(html)


def _docx(html: str) -> bytes:
    # python-docx loads only when a Word document is asked for; it is built from the very
    # HTML the PDF is laid out from, so both say the same
    from slacheck.render.docx import html_to_docx

    return html_to_docx(html)


FORMATS: dict[DocFormat, Renderer] = {}


def register_format(fmt: DocFormat, renderer: Renderer) -> None:
    """Add or replace a format; the built-in ones register through here too."""
    FORMATS[fmt] = renderer


register_format(DocFormat.HTML, Renderer("html", charts=True, finish=_utf8))
register_format(DocFormat.MD, Renderer("md", charts=False, finish=_utf8))
register_format(DocFormat.PDF, Renderer("html", charts=True, finish=_pdf))
register_format(DocFormat.DOCX, Renderer("html", charts=False, finish=_docx))

#: the formats each document is written in: Word for the documents counsel redlines (the
#: clause draft, the acceptance criteria); the report's charts have no Word form
WRITES: dict[str, tuple[DocFormat, ...]] = {
    "draft": (DocFormat.PDF, DocFormat.DOCX, DocFormat.HTML, DocFormat.MD),
    "accept": (DocFormat.PDF, DocFormat.DOCX, DocFormat.HTML, DocFormat.MD),
    "report": (DocFormat.PDF, DocFormat.HTML, DocFormat.MD),
}

_EXTENSIONS = {
    ".html": DocFormat.HTML,
    ".htm": DocFormat.HTML,
    ".md": DocFormat.MD,
    ".markdown": DocFormat.MD,
    ".pdf": DocFormat.PDF,
    ".docx": DocFormat.DOCX,
}


def format_for(path: Path, override: str | None, doc: str | None = None) -> DocFormat:
    """The output format: ``override`` (``--format``) if given, else from the file's extension;
    with ``doc`` ("draft", "accept", "report"), one that document is written in (``WRITES``)."""
    # a document WRITES does not name is written in every format
    formats = WRITES.get(doc, tuple(DocFormat)) if doc is not None else tuple(DocFormat)
    known = ", ".join(f.value for f in formats)
    if override is not None:
        try:
            fmt = DocFormat(override.strip().lower())
        except ValueError:
            raise UsageError(f"unknown format {override!r}; use one of {known}") from None
    else:
        found = _EXTENSIONS.get(path.suffix.lower())
        if found is None:
            names = ", ".join(f".{f.value}" for f in formats[:-1]) + f" or .{formats[-1].value}"
            raise UsageError(
                f"cannot tell the format of {path} from its extension; name it {names}, "
                f"or pass --format ({known})"
            )
        fmt = found
    if fmt not in formats:
        word = [d for d, f in WRITES.items() if fmt in f]
        also = f" ({fmt.value} is written for the {' and '.join(word)})" if word else ""
        raise UsageError(f"the {doc} is not written as {fmt.value}{also}; use one of {known}")
    return fmt


# ---------------------------------------------------------------------------------------------
# Jinja


@lru_cache(maxsize=16)
def environment(lang: Lang, zone: str, family: str = "html") -> Environment:
    """The template environment for one language, time zone and template family.

    Every template is autoescaped, whatever its file name: partials shared by the HTML and
    Markdown families (``_criteria.*.j2``) are compiled per family, so contract text reaches
    no document as live markup. In the Markdown family every value first goes through
    ``md_text`` (and table cells through the ``md`` filter), which return inert Markup.
    """
    env = Environment(
        loader=PackageLoader("slacheck", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # Markdown: entities only where a viewer would see markup, so the text stays readable
        finalize=md_text if family == "md" else None,
    )
    install_translations(env, lang)
    fmt = Formatter(lang, ZoneInfo(zone))
    env.filters.update(fmt.filters())
    env.filters["breakable"] = breakable if family == "html" else str
    if family == "html":
        env.filters["window_short"] = lambda label: window_cell(fmt.window_short(label))
    # `code` in translated prose: a code span in Markdown as it stands, <code> in HTML
    env.filters["ticks"] = code_spans if family == "html" else md_text
    env.filters["money"] = lambda amount, currency: money(amount, currency, lang)
    env.globals.update(
        L=LABELS[lang],
        lang=lang,
        family=family,
        f=fmt,
        verdict_colours=charts.VERDICT_COLOURS,
        version=__version__,
        # what joins two sentences: a space in English, nothing in Chinese
        sp="" if lang == "zh" else " ",
    )
    return env


_TICKS = re.compile(r"`([^`]+)`")


def code_spans(value: Any) -> Markup:
    """HTML: each `…` span of a sentence becomes <code>…</code>. The sentence is escaped first
    (Markup, e.g. from the catalogue, is already), so only our own tags are live."""
    escaped = str(Markup.escape(value))
    return Markup(_TICKS.sub(r"<code>\1</code>", escaped))


def install_translations(env: Environment, lang: str) -> None:
    """Document prose in ``env``: ``{% trans %}`` blocks from the same catalogue as every
    message code. Newstyle gettext escapes the parameters (and reads a literal % as %%, as
    ``make messages`` extracts it); trimmed whitespace matches the extraction too."""
    env.add_extension("jinja2.ext.i18n")
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_translations(translations(lang), newstyle=True)  # type: ignore[attr-defined]


_RUN = re.compile(r"[0-9A-Fa-f]{9,}")
_JOINT = re.compile(r"(?<=[-_/:.])")


def breakable(value: Any) -> Markup:
    """An id or hash as HTML that may break only where marked: ``<wbr>`` every 8 characters
    of a long run of hex digits (a hash or a task id) and after ``- _ / : .``.
    Nowhere else — the stylesheet forbids breaks inside words, so a hash never splits at an
    arbitrary digit."""
    text = str(value)
    pieces: list[str] = []
    for part in _JOINT.split(text):
        pieces.append(
            _RUN.sub(
                lambda m: "\x00".join(m.group(0)[i : i + 8] for i in range(0, len(m.group(0)), 8)),
                part,
            )
        )
    escaped = str(Markup.escape("\x00".join(pieces)))
    return Markup(escaped.replace("\x00", "<wbr>"))


def window_cell(text: str) -> Markup | str:
    """A window's short label in a table cell. A rolling window's ("2026-07-01/30d") may
    break after its slash and a Chinese quarter's ("2026年第三季度") after its year, so they fit
    a narrow column; nothing else breaks ("Jul 2026", "2026年7月")."""
    for joint in ("/", "年第"):
        if joint in text:
            head, tail = text.split(joint, 1)
            cut = joint[:1]
            return Markup('<span class="brk">{}<wbr>{}</span>').format(head + cut, joint[1:] + tail)
    return text


def _css() -> Markup:
    from slacheck.render.assets import ASSETS

    # our own stylesheet, inlined so the HTML stands alone and the PDF fetches nothing
    return Markup((ASSETS / "report.css").read_text(encoding="utf-8"))


def _as_format(fmt: DocFormat | str) -> DocFormat:
    """A format as the library's callers may name it: the enum, or its value ("md", "pdf")."""
    try:
        return DocFormat(fmt)
    except ValueError:
        known = ", ".join(f.value for f in DocFormat)
        raise UsageError(f"unknown format {fmt!r}; use one of {known}") from None


def _render(doc: str, lang: str, fmt: DocFormat | str, context: dict[str, Any]) -> bytes:
    language = check_lang(lang)
    fmt = _as_format(fmt)
    renderer = FORMATS.get(fmt)
    if renderer is None:
        raise UsageError(f"no renderer registered for format {fmt!r}")
    contract: Contract = context["contract"]
    env = environment(language, contract.contract.time_zone or "UTC", renderer.family)
    # one template per document and format ({doc}.{family}.j2, prose from the catalogue);
    # a document not yet moved keeps its per-language template
    template = env.select_template(
        [f"{doc}.{renderer.family}.j2", f"{doc}.{language}.{renderer.family}.j2"]
    )
    text = template.render(css=_css() if renderer.family == "html" else "", **context)
    # one text-safety rule (``textsafe``): no control, format or bidi character from a
    # contract or a trace reaches the HTML, the PDF made from it or the Markdown raw
    return renderer.finish(visible(text))


# ---------------------------------------------------------------------------------------------
# Views shared by the documents


def contract_sha256(contract: Contract) -> str:
    """SHA-256 of the contract's canonical JSON: what was checked, whatever the YAML looked like."""
    # a contract that leaves `acceptance` unset hashes as it did before the section existed
    exclude = {"acceptance"} if contract.acceptance is None else None
    return hashlib.sha256(contract.model_dump_json(exclude=exclude).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Input:
    """One input in the evidence appendix: shown by file name, identified by its hash."""

    name: str
    kind: str
    rows: int | None
    sha256: str


def _inputs(
    contract: Contract,
    contract_file: Path | None,
    sources: Sequence[SourceFile],
    file_sha256: str | None = None,
) -> tuple[Input, ...]:
    """The evidence appendix's inputs, each with a hash anyone can reproduce: the contract
    file's and each trace file's SHA-256 of its bytes as given (``sha256sum`` gives the same).
    The contract's is that of the bytes it was read from (``file_sha256``), when known; else
    the file's as it is now. Without a readable contract file, the contract's canonical JSON
    hash, labelled as such."""
    digest = file_sha256
    if digest is None and contract_file is not None:
        digest = sha256_if_readable(contract_file)
    if contract_file is not None and digest is not None:
        first = Input(contract_file.name, "contract", None, digest)
    else:
        first = Input(contract.contract.id, "contract_canonical", None, contract_sha256(contract))
    names = trace_names([s.path for s in sources])
    traces = sorted(
        (Input(names[s.path], s.format, s.rows, s.sha256) for s in sources),
        key=lambda i: (i.name, i.sha256),
    )
    return (first, *traces)


#: a URL's scheme (``s3a://``, ``file:``): two letters at least, never a drive letter
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


def trace_names(paths: Sequence[str]) -> dict[str, str]:
    """Each trace file as the documents name it: its path from the folder that holds them all,
    with ``/`` (its file name alone when every file is in one folder; ``day=2026-07-01/
    data_0.parquet`` for a folder ``traces convert`` wrote, whose day files share a name). A
    URL is named by its last part."""
    names = {p: p.rstrip("/").rsplit("/", 1)[-1] for p in paths if _SCHEME.match(p)}
    local = {p: os.path.abspath(p) for p in paths if p not in names}
    if local:
        base = os.path.commonpath([os.path.dirname(f) for f in local.values()])
        names.update({p: Path(os.path.relpath(f, base)).as_posix() for p, f in local.items()})
    return names


def reproduce_command(inputs: ReportInputs, lang: str, fmt: DocFormat) -> str:
    """The command that recomputes every figure of the report, run in the folder that holds
    the inputs (named as the inputs table names them): the same contract and trace files, the
    same period, issue date, claimed windows, engine and language."""
    contract = inputs.contract_file.name if inputs.contract_file is not None else "CONTRACT"
    names = trace_names([s.path for s in inputs.evaluation.sources])
    traces = sorted(set(names.values())) or ["TRACES"]
    words = ["slacheck", "report", contract, *traces, "--period", inputs.period]
    words += ["--issued", inputs.issued.isoformat()]
    for window in sorted(inputs.claimed):
        words += ["--claimed", window]
    if inputs.evaluation.engine != "duckdb":
        words += ["--engine", inputs.evaluation.engine]
    if lang != "en":
        words += ["--lang", lang]
    words += ["-o", f"report.{fmt.value}"]
    return shlex.join(words)


_ROW_REF = re.compile(r"(?s)(.+): row (\d+)")


def _short_example(text: str, names: Mapping[str, str], lang: str = "en") -> str:
    """A set-aside example ("<path>: row 12") with the file named as the evidence table does
    (``names``: ``trace_names`` of the sources), and the row said in ``lang`` (Chinese: 第 12
    行)."""
    for path, name in names.items():
        if text.startswith(path + ":"):
            text = name + text[len(path) :]
            break
    ref = _ROW_REF.fullmatch(text)
    if ref is None:
        return text
    return render(Label.ROW_REF(file=ref.group(1), row=ref.group(2)), lang)


@dataclass(frozen=True, slots=True)
class RateEquivalent:
    """A rate limit restated on the other basis, at the contract's (or an assumed) task size."""

    steps: float
    assumed: bool
    value: float
    unit: str  # "tasks" or "requests"


def rate_equivalent(contract: Contract, measured: float | None = None) -> RateEquivalent | None:
    """The limit on the other basis: at ``measured`` calls per task when given (the report's
    one figure), else at the contract's steps per task, else at the assumed task size."""
    rl = contract.rate_limit
    if rl is None or rl.basis is RateLimitBasis.PER_TOKEN:
        return None
    if measured is not None and measured > 0:
        steps, assumed = measured, False
    else:
        steps = rl.steps_per_task if rl.steps_per_task is not None else ASSUMED_STEPS_PER_TASK
        assumed = rl.steps_per_task is None
    if rl.basis is RateLimitBasis.PER_REQUEST:
        return RateEquivalent(steps, assumed, rl.limit / steps, "tasks")
    return RateEquivalent(steps, assumed, rl.limit * steps, "requests")


def _identity(contract: Contract) -> dict[str, Any]:
    return {
        "contract": contract,
        "c": contract.contract,
        "rate_eq": rate_equivalent(contract),
        "contract_sha": contract_sha256(contract),
    }


# ---------------------------------------------------------------------------------------------
# Draft


def render_draft(contract: Contract, *, lang: str, fmt: DocFormat | str) -> bytes:
    """The clause draft: contract language only. Each clause states what its contract fields
    say; a clause the contract leaves open is not drafted, and the clauses left are numbered
    without gaps (``outline``). The review's findings are in the review memo (``render_memo``)."""
    context = {
        **_identity(contract),
        "o": Numbering(draft_outline(contract), check_lang(lang)),
        "credit_tiers": sorted(
            contract.credits.tiers if contract.credits else [],
            key=lambda t: -t.from_percent,
        ),
        # the bilingual glossary, printed as the draft's own last section
        "glossary": glossary.TERMS,
    }
    return _render("draft", lang, fmt, context)


# ---------------------------------------------------------------------------------------------
# Review memo


@dataclass(frozen=True, slots=True)
class MemoEntry:
    """One review finding in the memo: the finding, where the draft holds (or omits) the
    clause it concerns, and the contract file's line of the field (when read from a file)."""

    finding: Finding
    where: ClauseRef
    line: int | None  # 0: the file does not write the field; None: made without the file


def memo_entries(
    contract: Contract, lines: Mapping[str, int | None] | None = None
) -> tuple[MemoEntry, ...]:
    """Every finding of ``review(contract)``, each placed in the draft's outline; in the review's
    order (severity, then code). ``lines``: a field path's line in the contract file, 0 for a
    field the file does not write."""
    outline = draft_outline(contract)
    return tuple(
        MemoEntry(f, outline.locate(f.field), (lines or {}).get(f.path)) for f in review(contract)
    )


def _clause_order(entry: MemoEntry) -> tuple[int, int, int, str]:
    """The memo's order by clause: as the draft runs, a point it omits after its section's
    clauses, a point with no section last."""
    w = entry.where
    section = w.section if w.section is not None else 99
    clause = int(w.clause.rsplit(".", 1)[1]) if w.clause else (0 if w.drafted else 99)
    return (section, clause, entry.finding.severity.rank, entry.finding.code)


def render_memo(
    contract: Contract,
    *,
    lang: str,
    fmt: DocFormat | str,
    contract_file: Path | None = None,
    lines: Mapping[str, int | None] | None = None,
    contract_sha256: str | None = None,
) -> bytes:
    """The review memo: a non-contractual document listing each finding of the clause review
    (what ``slacheck lint`` finds) with the draft clause it concerns, the issue and the change
    to the contract file that resolves it. ``lines`` gives each field path's line in the file."""
    entries = memo_entries(contract, lines)
    context = {
        **_identity(contract),
        "o": Numbering(draft_outline(contract), check_lang(lang)),
        "entries": entries,
        "by_clause": sorted(entries, key=_clause_order),
        "source": _inputs(contract, contract_file, (), contract_sha256)[0],
    }
    return _render("memo", lang, fmt, context)


# ---------------------------------------------------------------------------------------------
# Acceptance criteria


@dataclass(frozen=True, slots=True)
class Retention:
    """How long and by whom the acceptance evidence package is kept, and whether the contract
    says so or the default applies (the document states which)."""

    months: int
    months_stated: bool
    keeper: EvidenceKeeper
    keeper_stated: bool


def _retention(contract: Contract) -> Retention:
    a = contract.acceptance
    months = a.evidence_retention_months if a is not None else None
    keeper = a.evidence_kept_by if a is not None else None
    return Retention(
        months if months is not None else DEFAULT_EVIDENCE_RETENTION_MONTHS,
        months is not None,
        keeper if keeper is not None else EvidenceKeeper.BOTH,
        keeper is not None,
    )


def _per_task(term: Any) -> bool:
    return bool(term.measurement_point is MeasurementPoint.TASK_END_TO_END)


def render_accept(inputs: AcceptInputs, *, lang: str, fmt: DocFormat | str) -> bytes:
    """Acceptance criteria per term: test period and traffic, who runs it, how each verdict
    counts, re-test and evidence; with traces, the eight-item field check; a sign-off."""
    fc = inputs.fields
    contract = inputs.contract
    traces = _inputs(contract, inputs.contract_file, inputs.sources)[1:]
    context = {
        **_identity(contract),
        "fields": fc,
        "items": tuple(sorted(fc.items, key=lambda i: i.item)) if fc else (),
        "gaps": fc.gaps() if fc else (),
        # the contract is identified once, by its labelled canonical hash; this table: traces
        "inputs": traces,
        "quality": inputs.quality,
        "set_aside": sorted(inputs.quality.set_aside.items()) if inputs.quality else [],
        "period": inputs.period,
        "windows": inputs.windows,
        "window_kind": acceptance_window_kind(contract),
        "evidence_name": evidence_name(contract, inputs.period) if inputs.period else None,
        "retention": _retention(contract),
        # the traffic a window must carry: the largest minimum sample size per unit
        "need_calls": max(
            [t.min_samples or 0 for t in contract.latency if not _per_task(t)]
            + [contract.availability.min_samples or 0 if contract.availability else 0]
        ),
        "need_tasks": max([t.min_samples or 0 for t in contract.latency if _per_task(t)] + [0]),
    }
    return _render("accept", lang, fmt, context)


# ---------------------------------------------------------------------------------------------
# Compliance report


_KIND_ORDER = (
    "latency",
    "time_slice",
    "regions",
    "routing",
    "residency",
    "peak",
    "rate_limit",
    "availability",
)


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One term in the summary table: its result in each window (by window label)."""

    term_id: str
    kind: str
    cells: Mapping[str, TermResult]


def _term_key(contract: Contract) -> Callable[[TermResult], tuple[int, int, str, str]]:
    latency = {t.id: i for i, t in enumerate(contract.latency)}

    def key(r: TermResult) -> tuple[int, int, str, str]:
        kind = _KIND_ORDER.index(r.kind) if r.kind in _KIND_ORDER else len(_KIND_ORDER)
        return (kind, latency.get(r.term_id, 0), r.term_id, r.window)

    return key


def _summary(
    contract: Contract, results: Sequence[TermResult]
) -> tuple[list[str], list[SummaryRow]]:
    ordered = sorted(results, key=_term_key(contract))
    cells: dict[str, dict[str, TermResult]] = {}
    kinds: dict[str, str] = {}
    for r in ordered:
        cells.setdefault(r.term_id, {})[r.window] = r
        kinds.setdefault(r.term_id, r.kind)
    rows = [SummaryRow(term, kinds[term], by_window) for term, by_window in cells.items()]
    return sorted({r.window for r in ordered}), rows


@dataclass(frozen=True, slots=True)
class SummaryGrid:
    """The summary's terms of one window kind (calendar months, rolling 30-day windows, the
    quarter), one column per window of that kind: a grid never mixes kinds, so it holds as
    many terms as the contract has and at most the windows one period holds of one kind."""

    kind: str  # a ``Window`` value
    windows: list[str]
    rows: list[SummaryRow]


#: the order the summary's grids come in
_GRID_ORDER = ("calendar_month", "rolling_30_days", "calendar_quarter")


def _grids(contract: Contract, results: Sequence[TermResult]) -> list[SummaryGrid]:
    grids: list[SummaryGrid] = []
    for kind in _GRID_ORDER:
        windows, rows = _summary(contract, [r for r in results if window_kind(r.window) == kind])
        if rows:
            grids.append(SummaryGrid(kind, windows, rows))
    return grids


#: the executive summary's order: what needs action first
_SEVERITY = ("breached", "indeterminate", "not_measurable", "no_data", "met")


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many term-windows were decided, and why the others were not."""

    total: int
    met: int
    breached: int
    indeterminate: int
    not_measurable: int
    no_data: int
    no_data_partial: int  # of the no-data ones, windows the traces cover only in part

    @property
    def decided(self) -> int:
        return self.met + self.breached


def _coverage(results: Sequence[TermResult]) -> Coverage:
    n = {v: sum(1 for r in results if str(r.verdict) == v) for v in _SEVERITY}
    partial = sum(1 for r in results if str(r.verdict) == "no_data" and r.partial_window)
    return Coverage(
        len(results),
        n["met"],
        n["breached"],
        n["indeterminate"],
        n["not_measurable"],
        n["no_data"],
        partial,
    )


def _by_severity(contract: Contract, results: Sequence[TermResult]) -> list[TermResult]:
    key = _term_key(contract)
    return sorted(results, key=lambda r: (_SEVERITY.index(str(r.verdict)), key(r)))


def money(amount: Any, currency: Any, lang: str = "en") -> str:
    """An amount with its ISO currency code, in the language's number format (Babel):
    "CNY 45,000.00"; the code, not a symbol, so "¥" can never be read as yen or yuan. As many
    decimals as the currency's minor unit ("JPY 45,000", "KWD 1,234.500"), more only where the
    amount as written has them (a fee of USD 0.125 is never shown as 0.13)."""
    if amount is None:
        return "—"
    from babel.numbers import format_currency

    from slacheck.contract.base import as_written
    from slacheck.render.credit import minor_units

    code = str(currency or "").upper() or "XXX"
    digits = minor_units(code)
    exact = as_written(amount)
    while digits < 9 and (exact * 10**digits).denominator != 1:
        digits += 1
    pattern = "¤¤\u00a0#,##0" + ("." + "0" * digits if digits else "")
    locale = LOCALES[check_lang(lang)]
    return format_currency(amount, code, format=pattern, locale=locale, currency_digits=False)


def observed_text(r: TermResult, contract: Contract, fmt: Formatter, family: str) -> Markup:
    """A result's observed figure as a row shows it (``render.figure``): the statistic, or the
    bound on it ("> 1,000 ms"), and whether it sits at the limit. Our own words and numbers
    only, so Markup: escaped for HTML; in Markdown inert but for the comparison signs."""
    said = figure_of(r, contract).message(fmt.observed(r.observed, r.unit, limit_of(r, contract)))
    text = said if isinstance(said, str) else fmt.message(said)
    if family == "md":
        return Markup(str(md_text(text)).replace("&gt;", ">"))
    return Markup.escape(text)


def render_report(inputs: ReportInputs, *, lang: str, fmt: DocFormat | str) -> bytes:
    """The compliance report from its prepared inputs (``slacheck.prepare.prepare_report``):
    one evaluation rendered in every language and format."""
    language = check_lang(lang)
    fmt = _as_format(fmt)
    renderer = FORMATS.get(fmt)
    if renderer is None:
        raise UsageError(f"no renderer registered for format {fmt!r}")
    if fmt not in WRITES["report"]:
        known = ", ".join(f.value for f in WRITES["report"])
        raise UsageError(f"the report is not written as {fmt.value}; it is written as {known}")
    contract = inputs.contract
    ev = inputs.evaluation
    names = trace_names([s.path for s in ev.sources])
    results = sorted(ev.results, key=_term_key(contract))
    windows, rows = _summary(contract, results)
    by_kind: dict[str, list[TermResult]] = {}
    for r in results:
        by_kind.setdefault(r.kind, []).append(r)
    latency_ids = {t.id for t in contract.latency}
    latency_results = [r for r in results if r.term_id in latency_ids]
    fc = inputs.fields
    claims = credit_claims(contract, results, as_of=inputs.issued, claimed=inputs.claimed)
    words = Formatter(language, contract.zone)
    context: dict[str, Any] = {
        **_identity(contract),
        "period": inputs.period,
        "period_start_us": inputs.period_start_us,
        "period_last_us": inputs.period_end_us - 1,
        "data_start_us": inputs.data_start_us,
        "data_end_us": inputs.data_end_us,
        "evaluation": ev,
        "counts": ev.counts(),
        "windows": windows,
        "rows": rows,
        "grids": _grids(contract, results),
        "results": results,
        "by_kind": by_kind,
        "latency_results": latency_results,
        "other_results": [r for r in results if r.kind not in _KIND_ORDER],
        # a result's figures by its kind's type (``render.details``), never the dict's keys
        "details": details_of,
        "figure": lambda r: observed_text(r, contract, words, renderer.family),
        "mismatches": sorted(
            fc.mismatches, key=lambda m: (m.severity.rank, str(m.code), m.term_id or "")
        ),
        "fields": fc,
        "budget": inputs.budget,
        "quality": ev.quality,
        "set_aside": sorted(ev.quality.set_aside.items()),
        "examples": {
            k: [_short_example(x, names, language) for x in v]
            for k, v in sorted(ev.quality.examples.items())
        },
        "inputs": _inputs(contract, inputs.contract_file, ev.sources, inputs.contract_sha256),
        "reproduce": reproduce_command(inputs, lang, fmt),
        "traffic": inputs.traffic,
        "issued": inputs.issued,
        "doc_version": "1.0",
        "coverage": _coverage(results),
        "ranked": _by_severity(contract, results),
        # one claim status per window (``render.credit``), as the claim pack and the terminal
        # state it: the summary, the claims table and section 7 all read these
        "claims": [k for k in claims if k.earned],
        "claim_of": {k.window: k for k in claims},
        "fees": contract.fees,
        # one calls-per-task figure for the whole report: the budget's mean over every task
        "calls_per_task": inputs.budget.steps.mean,
        "rate_at_measured": rate_equivalent(contract, inputs.budget.steps.mean),
        "evidence": inputs.evidence,
        "evidence_name": evidence_name(contract, inputs.period),
        "evidence_columns": EVIDENCE_COLUMNS,
        "charts": _charts(inputs, results, windows, language) if renderer.charts else {},
    }
    return _render("report", language, fmt, context)


def monthly_points(contract: Contract, results: Sequence[TermResult]) -> list[charts.MonthlyPoint]:
    """The monthly chart's figures: each latency term-window's observed figure (as the JSON
    reports it) against what its criterion compares it with."""
    terms = {t.id: t for t in contract.latency}
    out: list[charts.MonthlyPoint] = []
    for r in results:
        term = terms.get(r.term_id)
        if term is None:
            continue
        obj = term.objective
        if isinstance(obj, OccurrenceObjective):
            target, at_most = obj.threshold, obj.direction is Direction.AT_MOST
        else:  # time slices: the share of slices passing against the share required
            target, at_most = obj.slices_passing_percent, False
        out.append(
            charts.MonthlyPoint(r.term_id, r.window, str(r.verdict), r.observed, target, at_most)
        )
    # the contract's order (the results come time-slice terms after occurrence terms)
    order = {t.id: i for i, t in enumerate(contract.latency)}
    return sorted(out, key=lambda p: (order[p.term_id], p.window))


def _charts(
    inputs: ReportInputs, results: Sequence[TermResult], windows: Sequence[str], lang: Lang
) -> dict[str, Any]:
    contract = inputs.contract
    fmt = Formatter(lang, contract.zone)
    monthly = monthly_points(contract, results)
    peak = [
        charts.PeakPoint(r.window, d.p95_ms_at_peak, d.p95_ms_off_peak, d.peak_minutes)
        for r in results
        if r.kind == "peak"
        for d in (PeakDetails.of(r),)
    ]
    parts = [(p.name, p.per_task_ms, p.share) for p in inputs.budget.parts]
    latency_windows = sorted({p.window for p in monthly})
    return {
        "latency": {d.term_id: charts.latency_distribution(d, fmt) for d in inputs.distributions},
        "breakdown": charts.time_breakdown(parts, fmt),
        "monthly": charts.monthly_compliance(monthly, latency_windows, fmt) if monthly else None,
        "peak": charts.peak_vs_off_peak(peak, fmt) if contract.peak is not None else None,
    }
