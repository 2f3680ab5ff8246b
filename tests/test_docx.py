"""Word documents (issue 24): the clause draft of every shipped contract and the demo's
acceptance criteria, in English and Chinese, written as DOCX for counsel to redline.

Each DOCX opens with python-docx; its headings are Heading styles; its paragraphs — clause
numbers and sentences, definitions, list items with their numbers — are the PDF's text, in
the PDF's order (``pdftotext`` of the PDF rendered from the same inputs, white space left
out), and nothing more or less: the two hold the same characters. Its tables are Word tables
with the HTML's cells. Chinese text has an East Asian font on every style. Arbitrary Unicode
in a contract's strings leaves the package well-formed with no control, format or bidi
character raw.

The checks read the documents generically (paragraphs, styles, tables), never today's
sentences, so a change of wording or structure in the templates keeps them meaningful."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import subprocess
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import lxml.etree
import lxml.html
import pytest
from docx import Document
from docx.document import Document as WordDocument
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from slacheck import textsafe
from slacheck.contract.load import load_contract, load_contract_text
from slacheck.contract.model import Contract
from slacheck.errors import UsageError
from slacheck.prepare import prepare_accept
from slacheck.render.documents import DocFormat, render_accept, render_draft, render_report
from slacheck.render.docx import CJK_FALLBACK, CJK_FONT, html_to_docx
from slacheck.render.inputs import AcceptInputs
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = sorted((ROOT / "contracts").glob("*.yaml"))
LANGS = ("en", "zh")
CASES = [("draft", c.stem) for c in CONTRACTS] + [("accept", "demo")]


# ---------------------------------------------------------------------------------------------
# the documents: HTML, PDF text and DOCX from the same inputs


@pytest.fixture(scope="module")
def demo_accept(tmp_path_factory: pytest.TempPathFactory) -> AcceptInputs:
    """The demo's acceptance criteria (its contract, its month) from a small demo trace."""
    folder = tmp_path_factory.mktemp("docx-demo")
    text = resources.files("slacheck.contract").joinpath("starters/demo.yaml").read_text("utf-8")
    (folder / "contract.yaml").write_text(text, encoding="utf-8")
    contract = load_contract_text(text, str(folder / "contract.yaml"))
    profile = TrafficProfile(
        tasks=300, days=31, seed=1, start=dt.datetime(2026, 6, 30, 16, tzinfo=dt.UTC), malformed=6
    )
    write(generate(profile), folder / "traffic.parquet", "parquet")
    traces = ingest([folder / "traffic.parquet"])
    return prepare_accept(
        contract, traces, contract_file=folder / "contract.yaml", period="2026-07"
    )


@dataclass(frozen=True)
class Rendered:
    html: str
    pdf_text: str  # the page bodies' text, running header and footer left out
    docx: bytes

    @property
    def word(self) -> WordDocument:
        return Document(io.BytesIO(self.docx))


def _pdf_body_text(pdf: bytes, folder: Path) -> str:
    """``pdftotext`` of the pages without their margins' 40 points (the footer, any header)."""
    path = folder / "doc.pdf"
    path.write_bytes(pdf)
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, check=True, text=True)
    size = re.search(r"Page size:\s+([0-9.]+) x ([0-9.]+)", info.stdout)
    assert size is not None
    width, height = (int(float(v)) for v in size.groups())
    crop = ["-x", "0", "-y", "40", "-W", str(width), "-H", str(height - 80)]
    done = subprocess.run(
        ["pdftotext", *crop, str(path), "-"], capture_output=True, check=True, text=True
    )
    return done.stdout


@pytest.fixture(scope="module")
def rendered(
    demo_accept: AcceptInputs, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, str, str], Rendered]:
    cache: dict[tuple[str, str, str], Rendered] = {}

    def get(doc: str, name: str, lang: str) -> Rendered:
        key = (doc, name, lang)
        if key not in cache:
            if doc == "draft":
                contract = load_contract(ROOT / "contracts" / f"{name}.yaml")

                def make(fmt: DocFormat) -> bytes:
                    return render_draft(contract, lang=lang, fmt=fmt)
            else:

                def make(fmt: DocFormat) -> bytes:
                    return render_accept(demo_accept, lang=lang, fmt=fmt)

            folder = tmp_path_factory.mktemp(f"docx-{doc}-{name}-{lang}")
            cache[key] = Rendered(
                make(DocFormat.HTML).decode("utf-8"),
                _pdf_body_text(make(DocFormat.PDF), folder),
                make(DocFormat.DOCX),
            )
        return cache[key]

    return get


# ---------------------------------------------------------------------------------------------
# reading a Word document


_GAP = re.compile(r"\s+")


def norm(text: str) -> str:
    """Text as compared: white space left out (the PDF breaks lines where it must, Chinese has
    none between words), and hyphens (``pdftotext`` drops one that ends a line: an id breaks
    after its hyphens)."""
    return _GAP.sub("", text).replace("\u00ad", "").replace("-", "")


def _shown(paragraph: Paragraph) -> str:
    """A paragraph's text as a reader sees it: capitals where the run is set in capitals."""
    return "".join(r.text.upper() if r.font.all_caps else r.text for r in paragraph.runs)


def blocks(word: WordDocument) -> Iterator[Paragraph | Table]:
    """The body's paragraphs and tables, in order."""
    for child in word.element.body.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, word)
        elif child.tag == qn("w:tbl"):
            yield Table(child, word)


def _style(paragraph: Paragraph) -> str:
    return paragraph.style.name if paragraph.style is not None else ""


class Markers:
    """The numbers Word shows before list paragraphs: n., n+1., … per numbering instance from
    its start (each list has its own: see ``test_each_list_numbers_from_one``), • for
    bullets."""

    def __init__(self, word: WordDocument) -> None:
        self.numbering = word.part.numbering_part.element
        self.count: Counter[str] = Counter()

    def __call__(self, paragraph: Paragraph) -> str:
        style = _style(paragraph)
        if style.startswith("List Bullet"):
            return "•"
        if style.startswith("List Number"):
            num = paragraph._p.pPr.numPr.numId.val
            if num not in self.count:
                start = self.numbering.num_having_numId(num).xpath(
                    "w:lvlOverride[@w:ilvl='0']/w:startOverride/@w:val"
                )
                self.count[num] = int(start[0]) - 1 if start else 0
            self.count[num] += 1
            return f"{self.count[num]}."
        return ""


def cells(table: Table) -> list[list[str]]:
    """A table's rows of cell texts, a merged cell once."""
    out = []
    for row in table.rows:
        seen: list[object] = []
        texts = []
        for cell in row.cells:
            if any(cell._tc is s for s in seen):
                continue
            seen.append(cell._tc)
            texts.append(norm("".join(_shown(p) for p in cell.paragraphs)))
        out.append(texts)
    return out


def word_text(word: WordDocument) -> tuple[list[tuple[str, str]], list[list[list[str]]]]:
    """The body's paragraphs (style, marker + shown text) and tables, in order."""
    marker = Markers(word)
    paragraphs: list[tuple[str, str]] = []
    tables: list[list[list[str]]] = []
    for block in blocks(word):
        if isinstance(block, Paragraph):
            text = marker(block) + _shown(block)
            if norm(text):
                paragraphs.append((_style(block), text))
        else:
            tables.append(cells(block))
    return paragraphs, tables


# reading the HTML with another parser than the converter's


def _html(html: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(html.encode("utf-8"))


def _text_of(element: lxml.html.HtmlElement) -> str:
    for skip in element.xpath(".//style|.//script|.//svg"):
        skip.drop_tree()
    return norm(element.text_content())


def html_headings(html: str) -> list[tuple[int, str]]:
    root = _html(html)
    return [
        (int(h.tag[1]), norm(h.text_content()))
        for h in root.xpath("//body//*[self::h1 or self::h2 or self::h3 or self::h4]")
        if not h.xpath("ancestor::table")
    ]


def html_tables(html: str) -> list[list[list[str]]]:
    root = _html(html)
    out = []
    for table in root.xpath("//body//table[not(ancestor::table)]"):
        rows = table.xpath("./tr|./thead/tr|./tbody/tr|./tfoot/tr")
        out.append([[_text_of(c) for c in row.xpath("./th|./td")] for row in rows])
    return [t for t in out if any(t)]


def html_clause_numbers(html: str) -> list[str]:
    root = _html(html)
    return [
        norm(n.text_content())
        for n in root.xpath("//p[contains(@class, 'clause')]/span[@class = 'no']")
    ]


# ---------------------------------------------------------------------------------------------
# every shipped contract's draft and the demo's acceptance criteria, in both languages


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("doc", "name"), CASES)
def test_headings_are_heading_styles(rendered: Callable[..., Rendered], doc, name, lang) -> None:
    r = rendered(doc, name, lang)
    paragraphs, _ = word_text(r.word)
    headings = [
        (int(style.rsplit(" ", 1)[1]), norm(text))
        for style, text in paragraphs
        if style.startswith("Heading ")
    ]
    assert headings == html_headings(r.html)
    assert len(headings) >= 5 and headings[0][0] == 1


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("doc", "name"), CASES)
def test_paragraphs_are_the_pdfs_text_in_order(
    rendered: Callable[..., Rendered], doc, name, lang
) -> None:
    """Clause by clause: each paragraph (its clause number or list number with it) is found in
    the PDF's text after the one before it."""
    r = rendered(doc, name, lang)
    pdf = norm(r.pdf_text)
    paragraphs, _ = word_text(r.word)
    at = 0
    for style, text in paragraphs:
        found = pdf.find(norm(text), at)
        assert found >= 0, (style, text, pdf[at : at + 300])
        at = found + len(norm(text))
    clauses = [norm(t) for s, t in paragraphs if s == "Clause"]
    numbers = html_clause_numbers(r.html)
    assert len(clauses) == len(numbers)
    assert numbers or doc != "draft"
    for text, number in zip(clauses, numbers, strict=True):
        assert text.startswith(number), (number, text)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("doc", "name"), CASES)
def test_the_docx_holds_the_pdfs_text_no_more_no_less(
    rendered: Callable[..., Rendered], doc, name, lang
) -> None:
    """Every character of the PDF's pages is in the DOCX and the other way round (paragraphs,
    list numbers and table cells: a multiset, so table layout does not matter)."""
    r = rendered(doc, name, lang)
    paragraphs, tables = word_text(r.word)
    word = "".join(norm(t) for _, t in paragraphs) + "".join(
        c for table in tables for row in table for c in row
    )
    pdf = Counter(norm(r.pdf_text))
    docx = Counter(word)
    extra = pdf - docx
    # the PDF repeats a table's header row on each page the table runs onto
    for table in r.word.tables:
        for row in table.rows:
            if row._tr.trPr is None or row._tr.trPr.find(qn("w:tblHeader")) is None:
                continue
            head = Counter("".join("".join(cells(table)[row._index])))
            while head and head <= extra:
                extra -= head
    assert (extra, docx - pdf) == (Counter(), Counter())


def _appears(cell: str, pdf: str, reach: int = 400) -> bool:
    """``cell`` is in the PDF's text: whole, or (a cell that wraps, its lines read between its
    neighbours' lines) its characters in order within ``reach`` characters — or, for a long
    cell, within twice its length plus ``reach``."""
    if cell in pdf:
        return True
    reach = max(reach, 2 * len(cell) + reach)
    head = cell[: min(3, len(cell))]
    start = pdf.find(head)
    while start >= 0:
        at = start
        for ch in cell:
            at = pdf.find(ch, at, start + reach)
            if at < 0:
                break
            at += 1
        else:
            return True
        start = pdf.find(head, start + 1)
    return False


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("doc", "name"), CASES)
def test_tables_are_word_tables_with_the_same_cells(
    rendered: Callable[..., Rendered], doc, name, lang
) -> None:
    r = rendered(doc, name, lang)
    word = r.word
    _, tables = word_text(word)
    assert tables == html_tables(r.html)
    assert tables
    pdf = norm(r.pdf_text)
    for table in word.tables:
        assert table.style is not None and table.style.name == "Table Grid"
        for row in cells(table):
            for cell in row:
                assert _appears(cell, pdf), cell


@pytest.mark.parametrize(("doc", "name"), [("draft", "strong-cn-task-e2e"), ("accept", "demo")])
def test_each_list_numbers_from_one(rendered: Callable[..., Rendered], doc, name) -> None:
    """A numbered list is its own numbering instance, restarted at 1 on a decimal format, so
    Word shows the numbers the PDF shows (and a list never continues the one before)."""
    word = rendered(doc, name, "en").word
    numbering = word.part.numbering_part.element
    lists = [
        p._p.pPr.numPr.numId.val for p in word.paragraphs if _style(p).startswith("List Number")
    ]
    starts = list(dict.fromkeys(lists))
    assert starts
    for num_id in starts:
        num = numbering.num_having_numId(num_id)
        start = num.find(qn("w:lvlOverride")).find(qn("w:startOverride"))
        assert start.get(qn("w:val")) == "1"
        abstract = numbering.xpath(
            f"w:abstractNum[@w:abstractNumId='{num.abstractNumId.val}']/w:lvl[@w:ilvl='0']"
        )[0]
        assert abstract.find(qn("w:numFmt")).get(qn("w:val")) == "decimal"
    # the items of one list (a run of list paragraphs) share one instance; two lists never do
    runs: list[set[str]] = []
    open_run = False
    for p in word.paragraphs:
        style = _style(p)
        if style == "List Number":
            if not open_run:
                runs.append(set())
            runs[-1].add(p._p.pPr.numPr.numId.val)
        open_run = style.startswith("List") and (open_run or style == "List Number")
    assert all(len(r) == 1 for r in runs)
    assert len({next(iter(r)) for r in runs}) == len(runs) == len(starts)


@pytest.mark.parametrize(("doc", "name"), [("draft", "strong-cn-task-e2e"), ("accept", "demo")])
def test_chinese_has_an_east_asian_font_on_every_style(
    rendered: Callable[..., Rendered], doc, name
) -> None:
    docx = rendered(doc, name, "zh").docx
    word = Document(io.BytesIO(docx))
    styles = word.styles.element
    for fonts in styles.iter(qn("w:rFonts")):
        assert fonts.get(qn("w:eastAsia")) == CJK_FONT, lxml.etree.tostring(fonts)
        assert not [a for a in fonts.attrib if a.endswith("Theme") or a.endswith("theme")]
    default = styles.find(qn("w:docDefaults")).find(qn("w:rPrDefault")).find(qn("w:rPr"))
    assert default.find(qn("w:rFonts")) is not None
    assert default.find(qn("w:lang")).get(qn("w:eastAsia")) == "zh-CN"
    # no run overrides the face with another East Asian font or a theme font
    for fonts in word.element.body.iter(qn("w:rFonts")):
        assert fonts.get(qn("w:eastAsia")) in (None, CJK_FONT)
        assert fonts.get(qn("w:eastAsiaTheme")) is None
    table = zipfile.ZipFile(io.BytesIO(docx)).read("word/fontTable.xml").decode("utf-8")
    assert re.search(
        rf'w:name="{CJK_FONT}"><w:altName w:val="{CJK_FALLBACK}"/><w:charset w:val="86"/>', table
    )
    # the Chinese is there, in the body
    assert any("条" in p.text for p in word.paragraphs)


def test_the_page_carries_the_running_id_and_the_page_number(
    rendered: Callable[..., Rendered],
) -> None:
    for lang, words in (("en", ("Page", "of")), ("zh", ("第", "页"))):
        word = rendered("draft", "strong-cn-task-e2e", lang).word
        section = word.sections[0]
        assert "CN-AGENT-2026-017" in section.header.paragraphs[0].text
        footer = section.footer.paragraphs[0]
        instructions = [t.text.strip() for t in footer._p.iter(qn("w:instrText"))]
        assert instructions == ["PAGE", "NUMPAGES"]
        assert all(w in footer.text for w in words), footer.text
        assert round(section.page_width.mm) == 210 and round(section.page_height.mm) == 297


def test_the_same_html_gives_the_same_bytes(rendered: Callable[..., Rendered]) -> None:
    r = rendered("draft", "weak-vendor-draft", "en")
    assert html_to_docx(r.html) == html_to_docx(r.html) == r.docx
    core = zipfile.ZipFile(io.BytesIO(r.docx)).read("docProps/core.xml").decode("utf-8")
    assert "dcterms:created" not in core and "slacheck" in core


def test_the_converter_is_generic_over_the_html() -> None:
    """Markup the templates may come to use converts too: nested lists, a list's start, colspan,
    headings in a cell, inline styles, entities; unknown tags keep their text."""
    html = (
        '<html lang="en"><head><title>T</title><style>p{}</style></head><body>'
        "<h2>2. Two</h2><ol start='3'><li>three<ul><li>inner</li></ul></li><li>four</li></ol>"
        "<p class='clause'><span class='no'>2.1</span>A <em>b</em> <code>c</code> "
        "d<sup>*</sup>&amp;&lt;x&gt;</p><table><tr><th colspan='2'>wide</th></tr>"
        "<tr><td><h3>in</h3>cell<br>two</td><td><custom>kept</custom></td></tr></table>"
        "<svg><text>never</text></svg><dl><dt>Term</dt><dd>meaning</dd></dl></body></html>"
    )
    word = Document(io.BytesIO(html_to_docx(html)))
    paragraphs, tables = word_text(word)
    assert [(s, norm(t)) for s, t in paragraphs] == [
        ("Heading 2", "2.Two"),
        ("List Number", "3.three"),
        ("List Bullet 2", "•inner"),
        ("List Number", "4.four"),
        ("Clause", "2.1Abcd*&<x>"),
        ("Definition Term", "Term"),
        ("Definition", "meaning"),
    ]
    numbering = word.part.numbering_part.element
    num_id = word.paragraphs[1]._p.pPr.numPr.numId.val
    start = numbering.num_having_numId(num_id).find(qn("w:lvlOverride"))
    assert start.find(qn("w:startOverride")).get(qn("w:val")) == "3"
    assert tables == [[["wide"], ["incelltwo", "kept"]]]
    assert "never" not in "".join(t for _, t in paragraphs)
    runs = {r.text.strip(): r for p in word.paragraphs for r in p.runs}
    assert runs["b"].italic and runs["2.1"].bold and runs["*"].font.superscript
    assert runs["c"].style.name == "Code"


# ---------------------------------------------------------------------------------------------
# untrusted text stays inert

BASE = ROOT / "contracts" / "strong-cn-task-e2e.yaml"


def _raw_in_package(docx: bytes) -> list[str]:
    """Every unsafe character in any XML part's text or attributes (each part must parse)."""
    found: set[str] = set()
    with zipfile.ZipFile(io.BytesIO(docx)) as package:
        for name in package.namelist():
            if not name.endswith((".xml", ".rels")):
                continue
            root = lxml.etree.fromstring(package.read(name))
            for element in root.iter():
                values = [element.text or "", element.tail or "", *element.attrib.values()]
                found |= {c for v in values for c in v if textsafe.unsafe(c)}
    return sorted(found)


def _with(contract: Contract, text: str) -> Contract | None:
    data = contract.model_dump(mode="json", exclude_none=True)
    data["contract"]["vendor"] = text
    data["contract"]["customer"] = f"{text} Ltd"
    data["contract"]["id"] = f"C-{text}"
    for i, term in enumerate(data["latency"]):
        term["id"] = f"L{i}-{text}"
    try:
        return Contract.model_validate(json.loads(json.dumps(data)))
    except ValidationError:
        return None


def test_a_hostile_contract_is_escaped_in_the_docx() -> None:
    hostile = "Evil\u202eCorp\u2066x\u200e\x01\x0b\x1b[31m\x7f\u2028\ufeff\ufffe\U000e0001"
    contract = _with(load_contract(BASE), hostile)
    assert contract is not None
    for lang in LANGS:
        docx = render_draft(contract, lang=lang, fmt=DocFormat.DOCX)
        word = Document(io.BytesIO(docx))
        assert _raw_in_package(docx) == []
        text = "\n".join(p.text for p in word.paragraphs)
        assert "Evil\\u202eCorp" in text and "\\x1b[31m" in text


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(min_size=1, max_size=24))
def test_arbitrary_unicode_in_contract_strings(text: str) -> None:
    contract = _with(load_contract(BASE), text)
    assume(contract is not None)
    assert contract is not None
    for lang in LANGS:
        docx = render_draft(contract, lang=lang, fmt=DocFormat.DOCX)
        word = Document(io.BytesIO(docx))  # opens
        assert _raw_in_package(docx) == []
        body = "".join(p.text for p in word.paragraphs)
        assert norm(textsafe.visible(contract.contract.vendor)) in norm(body)


# ---------------------------------------------------------------------------------------------
# the commands


def test_draft_and_accept_write_word_the_report_says_what_it_writes(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from slacheck.cli import app

    runner = CliRunner()
    for command in ("draft", "accept"):
        out = tmp_path / f"{command}.docx"
        done = runner.invoke(app, [command, str(BASE), "-o", str(out), "--lang", "zh"])
        assert done.exit_code == 0, done.output
        assert Document(str(out)).paragraphs  # opens
        assert ".docx" in runner.invoke(app, [command, "--help"]).output
    traffic = tmp_path / "traffic.parquet"
    traffic.write_bytes(b"PAR1")  # never read: the format is refused first
    done = runner.invoke(
        app,
        ["report", str(BASE), str(traffic), "--period", "2026-Q3", "-o", str(tmp_path / "r.docx")],
    )
    assert done.exit_code == 2
    assert "report is not written as docx" in done.output and "pdf, html, md" in done.output
    assert not (tmp_path / "r.docx").exists()
    assert ".docx" not in runner.invoke(app, ["report", "--help"]).output.split("Options")[1]
    with pytest.raises(UsageError, match="report is not written as docx"):
        render_report(None, lang="en", fmt=DocFormat.DOCX)  # type: ignore[arg-type]
