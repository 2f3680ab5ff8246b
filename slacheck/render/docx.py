"""HTML to DOCX with python-docx: the Word document counsel redlines, from the very HTML the
PDF is laid out from, so the two cannot say different things.

The converter knows HTML, not the documents: it walks the element tree and maps each element
to its Word counterpart, whatever the templates put in it —

* ``h1``–``h4`` → the paragraph styles *Heading 1*–*Heading 4*;
* ``p`` → a paragraph (*Clause* when its class is ``clause``: the clause number, ``span.no``,
  in bold, then a tab to the hanging indent);
* ``ol`` / ``ul`` → *List Number* / *List Bullet* paragraphs, each list numbered from its own
  start (a Word numbering instance per list, so a list never continues the one before);
* ``dl`` → *Definition Term* and *Definition* paragraphs;
* ``table`` → a Word table in the *Table Grid* style, header rows repeated on every page,
  rows kept whole, column widths from the ``colgroup`` when it gives them, else by content;
* ``strong`` / ``em`` / ``code`` / ``sup`` / ``sub`` / ``br`` → bold, italic, the *Code*
  character style, superscript, subscript, a line break;
* ``section``, ``header``, ``div``, ``aside``, ``figure`` → their content, block by block (an
  ``aside`` in the *Note* style); ``svg``, ``style``, ``script`` and ``wbr`` → nothing;
* the running ``.doc-id`` → the page header, and the footer says "Page N of M" with the
  words of the PDF's footer (read from the document's stylesheet; Word fields for the numbers).

Text: the HTML reaching here has passed the text-safety rule (``textsafe.visible``, applied by
``render.documents`` to every document); each run goes through it again after the entities
are decoded, so no control, format or bidi character is written raw and nothing XML 1.0
forbids reaches the package. Chinese: every style's East Asian font is set explicitly
(``w:eastAsia`` on ``w:rFonts``, theme fonts removed, since a theme font overrides it), the font
table names a fallback Word substitutes when the font is absent, and a Chinese document's
East Asian language is zh-CN.

The package is deterministic: the same HTML gives the same bytes (no dates in the core
properties, fixed ZIP timestamps).
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from typing import Any

from docx import Document
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.oxml import serialize_part_xml
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import qn
from docx.shared import Cm, Emu, Mm, Pt, RGBColor
from docx.table import _Cell
from docx.text.paragraph import Paragraph

from slacheck.messages import translations
from slacheck.textsafe import visible

__all__ = ["CJK_FALLBACK", "CJK_FONT", "LATIN_FONT", "MONO_FONT", "html_to_docx"]

#: the document's fonts, as the stylesheet names them, and what Word takes when one is absent
LATIN_FONT = "Noto Sans"
CJK_FONT = "Noto Sans CJK SC"
MONO_FONT = "DejaVu Sans Mono"
CJK_FALLBACK = "SimSun"
_FALLBACKS = {LATIN_FONT: "Arial", CJK_FONT: CJK_FALLBACK, MONO_FONT: "Courier New"}
_ACCENT = RGBColor(0x0B, 0x3D, 0x91)

# ---------------------------------------------------------------------------------------------
# The HTML as a tree

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_SKIP = frozenset({"head", "style", "script", "svg", "template", "colgroup", "title"})
_BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "dd",
        "div",
        "dl",
        "dt",
        "figcaption",
        "figure",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "ul",
    }
)


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> frozenset[str]:
        return frozenset(self.attrs.get("class", "").split())

    def find(self, tag: str) -> Node | None:
        for n in self.iter():
            if n.tag == tag:
                return n
        return None

    def iter(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class _TreeBuilder(HTMLParser):
    """The element tree of an HTML document; an end tag closes every element it encloses."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        if tag == "p" and self.stack[-1].tag == "p":  # a <p> ends the open one, as in HTML
            self.stack.pop()
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


# ---------------------------------------------------------------------------------------------
# Styles, fonts, numbering


def _plain_fonts(rpr: Any, east_asian: bool) -> None:
    """The run properties' fonts set explicitly: Latin and East Asian faces, no theme font
    (a theme attribute overrides the explicit one)."""
    fonts = rpr.find(qn("w:rFonts"))
    if fonts is None:
        fonts = OxmlElement("w:rFonts")
        rpr.insert(0, fonts)
    for attr in ("w:asciiTheme", "w:hAnsiTheme", "w:eastAsiaTheme", "w:cstheme"):
        fonts.attrib.pop(qn(attr), None)
    if fonts.get(qn("w:ascii")) is None:
        for attr in ("w:ascii", "w:hAnsi", "w:cs"):
            fonts.set(qn(attr), LATIN_FONT)
    fonts.set(qn("w:eastAsia"), CJK_FONT)
    if east_asian:  # punctuation shared by both scripts (quotes, dashes) in the CJK face
        fonts.set(qn("w:hint"), "eastAsia")


def _set_fonts(doc: Any, lang: str) -> None:
    styles = doc.styles.element
    defaults = styles.find(qn("w:docDefaults"))
    rpr = defaults.find(qn("w:rPrDefault")).find(qn("w:rPr"))
    language = rpr.find(qn("w:lang"))
    language.set(qn("w:val"), "zh-CN" if lang == "zh" else "en-US")
    language.set(qn("w:eastAsia"), "zh-CN")
    for props in styles.iter(qn("w:rPr")):
        if props.find(qn("w:rFonts")) is not None or props is rpr:
            _plain_fonts(props, lang == "zh")
    _font_table(doc)


def _font_table(doc: Any) -> None:
    """The font table names each face with the font Word substitutes when it is absent."""
    part = next(rel.target_part for rel in doc.part.rels.values() if rel.reltype == RT.FONT_TABLE)
    tree = parse_xml(part.blob)
    for font in tree.findall(qn("w:font")):
        if font.get(qn("w:name")) in _FALLBACKS:
            tree.remove(font)
    for name, alt in _FALLBACKS.items():
        font = OxmlElement("w:font", {qn("w:name"): name})
        font.append(OxmlElement("w:altName", {qn("w:val"): alt}))
        if name == CJK_FONT:
            font.append(OxmlElement("w:charset", {qn("w:val"): "86"}))  # GB2312
        mono = name == MONO_FONT
        font.append(OxmlElement("w:family", {qn("w:val"): "modern" if mono else "swiss"}))
        font.append(OxmlElement("w:pitch", {qn("w:val"): "fixed" if mono else "variable"}))
        tree.append(font)
    part._blob = serialize_part_xml(tree)


def _add_styles(doc: Any) -> None:
    styles = doc.styles
    normal = styles["Normal"]
    normal.font.size = Pt(10)
    normal.paragraph_format.space_after = Pt(4)
    normal.paragraph_format.line_spacing = 1.15
    for level, size in ((1, 18), (2, 13), (3, 11), (4, 10)):
        h = styles[f"Heading {level}"]
        h.font.size = Pt(size)
        h.font.color.rgb = _ACCENT if level < 3 else RGBColor(0x24, 0x29, 0x2F)
    clause = styles.add_style("Clause", WD_STYLE_TYPE.PARAGRAPH)
    clause.base_style = normal
    clause.paragraph_format.left_indent = Cm(1.2)
    clause.paragraph_format.first_line_indent = Cm(-1.2)
    clause.paragraph_format.space_after = Pt(6)
    term = styles.add_style("Definition Term", WD_STYLE_TYPE.PARAGRAPH)
    term.base_style = normal
    term.font.bold = True
    term.paragraph_format.keep_with_next = True
    term.paragraph_format.space_after = Pt(0)
    definition = styles.add_style("Definition", WD_STYLE_TYPE.PARAGRAPH)
    definition.base_style = normal
    definition.paragraph_format.left_indent = Cm(0.5)
    note = styles.add_style("Note", WD_STYLE_TYPE.PARAGRAPH)
    note.base_style = normal
    note.font.size = Pt(9)
    note.paragraph_format.left_indent = Cm(0.5)
    # as the PDF sets a reviewer note apart: a rule on its left, a light band
    _border(note.element.get_or_add_pPr(), "left", "AFB8C1", size=18)
    _shade(note.element.get_or_add_pPr(), "F6F8FA")
    code = styles.add_style("Code", WD_STYLE_TYPE.CHARACTER)
    code.font.name = MONO_FONT  # Latin runs; East Asian ones keep the CJK face
    code.font.size = Pt(8.5)


class _Numbering:
    """A fresh Word numbering instance per list, so each list numbers from its own start."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.numbering = doc.part.numbering_part.element
        self.abstract: dict[str, str] = {}

    def _abstract_of(self, style: str) -> str:
        if style not in self.abstract:
            num_pr = self.doc.styles[style].element.pPr.numPr
            num = self.numbering.num_having_numId(num_pr.numId.val)
            self.abstract[style] = num.abstractNumId.val
        return self.abstract[style]

    def new(self, style: str, start: int) -> int:
        num = self.numbering.add_num(self._abstract_of(style))
        num.add_lvlOverride(ilvl=0).add_startOverride(start)
        return int(num.numId)


def _number(paragraph: Paragraph, num_id: int) -> None:
    ppr = paragraph._p.get_or_add_pPr()
    num_pr = ppr.get_or_add_numPr()
    num_pr.get_or_add_ilvl().val = 0
    num_pr.get_or_add_numId().val = num_id


# ---------------------------------------------------------------------------------------------
# Inline content


@dataclass(frozen=True)
class _Look:
    bold: bool = False
    italic: bool = False
    code: bool = False
    caps: bool = False
    sup: bool = False
    sub: bool = False


_SPACE = re.compile(r"[ \t\n\r\f]+")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 4, "h6": 4}


def _look_of(node: Node, look: _Look) -> _Look:
    tag, cls = node.tag, node.classes
    if tag in ("strong", "b", "th") or "no" in cls or "head" in cls:
        look = replace(look, bold=True)
    if tag in ("em", "i", "cite") or "missing" in cls:
        look = replace(look, italic=True)
    if tag in ("code", "kbd", "samp", "tt") or "mono" in cls or "hash" in cls:
        look = replace(look, code=True)
    if "doc-type" in cls:  # the stylesheet writes it in capitals
        look = replace(look, caps=True)
    if tag == "sup":
        look = replace(look, sup=True)
    if tag == "sub":
        look = replace(look, sub=True)
    return look


class _Inline:
    """Writes inline content into one paragraph: HTML white space collapsed, one run per
    stretch of text with the same look."""

    def __init__(self, paragraph: Paragraph) -> None:
        self.paragraph = paragraph
        self.space = False  # a collapsed space is pending
        self.started = False

    def text(self, data: str, look: _Look) -> None:
        text = _SPACE.sub(" ", data)
        if not text:
            return
        if text.startswith(" "):
            self.space = True
            text = text[1:]
        trailing = text.endswith(" ")
        text = text.rstrip(" ")
        if text:
            self.write((" " if self.space and self.started else "") + text, look)
            self.space = False
        if trailing:
            self.space = True

    def write(self, text: str, look: _Look) -> None:
        run = self.paragraph.add_run(visible(text))
        if look.bold:
            run.bold = True
        if look.italic:
            run.italic = True
        if look.code:
            run.style = "Code"
        if look.caps:
            run.font.all_caps = True
        if look.sup:
            run.font.superscript = True
        if look.sub:
            run.font.subscript = True
        self.started = True

    def tab(self) -> None:
        self.paragraph.add_run().add_tab()
        self.space = False
        self.started = False

    def line_break(self) -> None:
        self.paragraph.add_run().add_break(WD_BREAK.LINE)
        self.space = False
        self.started = False

    def node(self, node: Node, look: _Look) -> None:
        if node.tag in _SKIP or node.tag == "wbr":
            return
        if node.tag == "br":
            self.line_break()
            return
        inner = _look_of(node, look)
        for child in node.children:
            if isinstance(child, str):
                self.text(child, inner)
            else:
                self.node(child, inner)
        if "no" in node.classes:
            if _style_name(self.paragraph) == "Clause":
                self.tab()  # the clause number hangs in the indent
            else:
                self.space = True


# ---------------------------------------------------------------------------------------------
# Blocks


def _style_name(paragraph: Paragraph) -> str:
    style = paragraph.style
    return style.name or "" if style is not None else ""


def _is_block(node: Node | str) -> bool:
    return isinstance(node, Node) and node.tag in _BLOCKS


def _blank(node: Node | str) -> bool:
    return isinstance(node, str) and not node.strip()


class _Writer:
    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.numbering = _Numbering(doc)

    # a container: the document body or a table cell
    def blocks(self, where: Any, nodes: list[Node | str], style: str | None, look: _Look) -> None:
        """Each block element as its own paragraphs; consecutive inline content as one."""
        run: list[Node | str] = []
        for child in nodes:
            if _is_block(child):
                self.inline_paragraph(where, run, style, look)
                run = []
                self.block(where, child, style, look)  # type: ignore[arg-type]
            else:
                run.append(child)
        self.inline_paragraph(where, run, style, look)

    def inline_paragraph(
        self, where: Any, nodes: list[Node | str], style: str | None, look: _Look
    ) -> Paragraph | None:
        if all(_blank(n) or (isinstance(n, Node) and n.tag in _SKIP) for n in nodes):
            return None
        paragraph: Paragraph = where.add_paragraph(style=style)
        writer = _Inline(paragraph)
        for n in nodes:
            if isinstance(n, str):
                writer.text(n, look)
            else:
                writer.node(n, look)
        return paragraph

    def block(self, where: Any, node: Node, style: str | None, look: _Look) -> None:
        tag = node.tag
        if tag in _SKIP or "doc-id" in node.classes:
            return
        inner = _look_of(node, look) if tag not in ("table", "ol", "ul", "dl") else look
        if tag in _HEADINGS:
            if isinstance(where, _Cell):
                self.inline_paragraph(where, node.children, style, replace(inner, bold=True))
            else:
                self.inline_paragraph(where, node.children, f"Heading {_HEADINGS[tag]}", look)
        elif tag == "p":
            own = "Clause" if "clause" in node.classes and style is None else style
            self.blocks(where, node.children, own, inner)
        elif tag in ("ol", "ul"):
            self.list(where, node, look, depth=1)
        elif tag == "dl":
            for child in node.children:
                if isinstance(child, Node) and child.tag == "dt":
                    self.blocks(where, child.children, style or "Definition Term", look)
                elif isinstance(child, Node) and child.tag == "dd":
                    self.blocks(where, child.children, style or "Definition", look)
        elif tag == "table":
            self.table(where, node)
        elif tag == "aside":
            self.blocks(where, node.children, style or "Note", inner)
        elif tag == "hr":
            return
        elif "line" in node.classes and not node.text().strip():
            _rule(where.add_paragraph(style=style))  # a line to sign on
        else:  # section, header, div, figure, li outside a list, ...
            self.blocks(where, node.children, style, inner)

    def list(self, where: Any, node: Node, look: _Look, depth: int) -> None:
        kind = "List Number" if node.tag == "ol" else "List Bullet"
        style = kind if depth == 1 else f"{kind} 2"
        start = int(node.attrs["start"]) if node.attrs.get("start", "").isdigit() else 1
        num_id = self.numbering.new(style, start) if node.tag == "ol" else None
        for item in node.children:
            if not isinstance(item, Node) or item.tag != "li":
                continue
            inline: list[Node | str] = []
            rest: list[Node] = []
            for child in item.children:
                if rest or _is_block(child):
                    if isinstance(child, Node):
                        rest.append(child)
                else:
                    inline.append(child)
            paragraph = self.inline_paragraph(where, inline, style, look)
            if paragraph is None:  # an item that starts with a block: its first paragraph
                paragraph = where.add_paragraph(style=style)
            if num_id is not None:
                _number(paragraph, num_id)
            for child in rest:
                if child.tag in ("ol", "ul"):
                    self.list(where, child, look, depth + 1)
                else:
                    self.block(where, child, "List Continue", look)

    def table(self, where: Any, node: Node) -> None:
        rows: list[tuple[Node, bool]] = []
        for part in node.children:
            if not isinstance(part, Node):
                continue
            if part.tag == "tr":
                rows.append((part, False))
            elif part.tag in ("thead", "tbody", "tfoot"):
                rows += [
                    (tr, part.tag == "thead")
                    for tr in part.children
                    if isinstance(tr, Node) and tr.tag == "tr"
                ]
        cells = [
            [c for c in tr.children if isinstance(c, Node) and c.tag in ("td", "th")]
            for tr, _ in rows
        ]
        width = max((sum(_span(c) for c in row) for row in cells), default=0)
        if width == 0:
            return
        table = where.add_table(rows=len(rows), cols=width)
        table.style = self.doc.styles["Table Grid"]
        for (_, head), row, word_row in zip(rows, cells, table.rows, strict=True):
            _keep_row(word_row, head)
            col = 0
            for cell in row:
                span = _span(cell)
                target = word_row.cells[col]
                if span > 1:
                    target = target.merge(word_row.cells[col + span - 1])
                self.cell(target, cell, head)
                col += span
        # the colgroup's shares of the text width (A4 less the margins), else shares by content
        widths = _widths(node, width) or _content_widths(cells, width)
        if widths:
            table.autofit = False
            total = Mm(210 - 2 * 16)
            for column, share in zip(table.columns, widths, strict=True):
                column.width = Emu(int(total * share))
                for c in column.cells:
                    c.width = Emu(int(total * share))
        if isinstance(where, _Cell):
            return
        # a paragraph after every table: Word joins two tables that touch
        self.doc.add_paragraph()

    def cell(self, cell: _Cell, node: Node, head: bool) -> None:
        first = cell.paragraphs[0]
        look = _look_of(node, _Look(bold=head))
        before = len(cell.paragraphs)
        self.blocks(cell, node.children, None, look)
        if len(cell.paragraphs) > before:  # the cell's own empty first paragraph goes
            first._p.getparent().remove(first._p)


#: what follows ``w:pBdr`` and ``w:shd`` in a ``w:pPr`` (the schema's order, which Word holds to)
_AFTER_BORDER = (
    "w:shd",
    "w:tabs",
    "w:suppressAutoHyphens",
    "w:kinsoku",
    "w:wordWrap",
    "w:overflowPunct",
    "w:topLinePunct",
    "w:autoSpaceDE",
    "w:autoSpaceDN",
    "w:bidi",
    "w:adjustRightInd",
    "w:snapToGrid",
    "w:spacing",
    "w:ind",
    "w:contextualSpacing",
    "w:mirrorIndents",
    "w:suppressOverlap",
    "w:jc",
    "w:textDirection",
    "w:textAlignment",
    "w:textboxTightWrap",
    "w:outlineLvl",
    "w:divId",
    "w:cnfStyle",
    "w:rPr",
    "w:sectPr",
    "w:pPrChange",
)


def _border(ppr: Any, side: str, colour: str, size: int = 6) -> None:
    """A border on one side of a paragraph (or a paragraph style), in the schema's place."""
    borders = ppr.find(qn("w:pBdr"))
    if borders is None:
        borders = OxmlElement("w:pBdr")
        ppr.insert_element_before(borders, *_AFTER_BORDER)
    line = OxmlElement(
        f"w:{side}",
        {qn("w:val"): "single", qn("w:sz"): str(size), qn("w:space"): "4", qn("w:color"): colour},
    )
    borders.append(line)


def _shade(ppr: Any, fill: str) -> None:
    shade = OxmlElement("w:shd", {qn("w:val"): "clear", qn("w:color"): "auto", qn("w:fill"): fill})
    ppr.insert_element_before(shade, *_AFTER_BORDER[1:])


def _rule(paragraph: Paragraph) -> None:
    """A paragraph drawn as a line to write on: its bottom border, no text."""
    _border(paragraph._p.get_or_add_pPr(), "bottom", "24292F")
    paragraph.paragraph_format.space_before = Pt(14)


def _span(cell: Node) -> int:
    span = cell.attrs.get("colspan", "1")
    return int(span) if span.isdigit() and int(span) > 0 else 1


def _keep_row(row: Any, head: bool) -> None:
    """A row is never split across pages (as the stylesheet keeps a table row whole); a header
    row is repeated at the top of each page the table runs onto."""
    tr_pr = row._tr.get_or_add_trPr()
    tr_pr.append(OxmlElement("w:cantSplit", {qn("w:val"): "true"}))
    if head:
        tr_pr.append(OxmlElement("w:tblHeader", {qn("w:val"): "true"}))


_WIDTH = re.compile(r"width:\s*([0-9.]+)%")


def _width_of(text: str) -> int:
    """Text's width in half-ems, roughly: a CJK (wide) character counts two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _content_widths(rows: list[list[Node]], columns: int) -> list[float] | None:
    """Columns' shares as an autofit would size them: by their longest cell (a label column
    narrow, a sentence column wide), each between a floor and a cap."""
    longest = [4] * columns
    for row in rows:
        col = 0
        for cell in row:
            span = _span(cell)
            if span == 1:
                text = _SPACE.sub(" ", cell.text()).strip()
                longest[col] = max(longest[col], min(_width_of(text), 60))
            col += span
    total = sum(longest)
    return [n / total for n in longest] if columns > 1 else None


def _widths(table: Node, columns: int) -> list[float] | None:
    """The columns' shares of the width from a ``colgroup``; unset ones share what is left."""
    group = table.find("colgroup")
    if group is None:
        return None
    shares: list[float | None] = []
    for col in group.children:
        if isinstance(col, Node) and col.tag == "col":
            m = _WIDTH.search(col.attrs.get("style", ""))
            shares.append(float(m.group(1)) / 100 if m else None)
    if len(shares) != columns:
        return None
    given = sum(s for s in shares if s is not None)
    free = [s for s in shares if s is None]
    rest = max(0.0, 1.0 - given) / len(free) if free else 0.0
    return [s if s is not None else rest for s in shares]


# ---------------------------------------------------------------------------------------------
# Page: size, margins, running header and footer


def _field(paragraph: Paragraph, instruction: str) -> None:
    run = paragraph.add_run()
    for kind in ("begin", None, "separate", "end"):
        if kind is None:
            code = OxmlElement("w:instrText")
            code.set(qn("xml:space"), "preserve")
            code.text = f" {instruction} "
            run._r.append(code)
        else:
            char = OxmlElement("w:fldChar")
            char.set(qn("w:fldCharType"), kind)
            run._r.append(char)
        if kind == "separate":
            run._r.append(_text("1"))


def _text(value: str) -> Any:
    t = OxmlElement("w:t")
    t.text = value
    return t


_PLACEHOLDER = re.compile(r"%\((page|pages)\)s")


#: the PDF's page footer in the document's stylesheet: quoted text and page counters
_COUNTER_BOX = re.compile(r"@bottom-right\s*\{[^}]*?content:\s*([^;]+);", re.S)
_CSS_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|counter\((pages?)\)')


def _footer_parts(root: Node, lang: str) -> list[str | None]:
    """The page footer as the PDF prints it, read from the document's own stylesheet (so the
    two cannot differ): text pieces, and "page" / "pages" where a counter goes. Without one,
    the catalogue's "Page %(page)s of %(pages)s"."""
    style = "".join(n.text() for n in root.iter() if n.tag == "style")
    m = _COUNTER_BOX.search(style)
    parts: list[str | None] = []
    if m:
        for text, counter in _CSS_TOKEN.findall(m.group(1)):
            parts.append(counter or re.sub(r"\\(.)", r"\1", text))
        if "page" in parts:
            return parts
    words = translations(lang).gettext("Page %(page)s of %(pages)s")
    at = 0
    parts = []
    for p in _PLACEHOLDER.finditer(words):
        parts += [words[at : p.start()], p.group(1)]
        at = p.end()
    return [*parts, words[at:]]


def _page(doc: Any, root: Node, lang: str, running: str) -> None:
    section = doc.sections[0]
    section.page_width, section.page_height = Mm(210), Mm(297)
    section.top_margin, section.bottom_margin = Mm(18), Mm(20)
    section.left_margin = section.right_margin = Mm(16)
    for name in ("Header", "Footer"):  # field results take the paragraph's size
        if name in [st.name for st in doc.styles]:
            doc.styles[name].font.size = Pt(7.5)
    header = section.header.paragraphs[0]
    header.add_run(visible(running)).font.size = Pt(7.5)
    footer = section.footer.paragraphs[0]
    for part in _footer_parts(root, lang):  # the page numbers as Word fields
        if part in ("page", "pages"):
            _field(footer, "PAGE" if part == "page" else "NUMPAGES")
        elif part:
            footer.add_run(visible(part))
    for run in footer.runs:
        run.font.size = Pt(7.5)
    footer.alignment = WD_ALIGN_PARAGRAPH.RIGHT  # as the PDF's page number


# ---------------------------------------------------------------------------------------------


def _language(root: Node) -> str:
    html = root.find("html")
    code = html.attrs.get("lang", "en") if html is not None else "en"
    return "zh" if code.lower().startswith("zh") else "en"


def html_to_docx(html: str) -> bytes:
    """``html`` (a slacheck document) as a Word document, the same text block by block."""
    root = parse(html)
    lang = _language(root)
    doc = Document()
    _add_styles(doc)
    _set_fonts(doc, lang)  # after the styles are added: every one gets the East Asian face
    body = root.find("body") or root
    running = next((n for n in body.iter() if "doc-id" in n.classes), None)
    _page(doc, root, lang, _SPACE.sub(" ", running.text()).strip() if running else "")
    title = root.find("title")
    props = doc.core_properties
    props.title = visible(_SPACE.sub(" ", title.text()).strip()) if title else ""
    props.author = props.last_modified_by = "slacheck"
    props.language = "zh-CN" if lang == "zh" else "en-US"
    props.revision = 1
    element = props._element
    for name in ("dcterms:created", "dcterms:modified", "cp:lastPrinted"):
        for old in element.findall(qn(name)):
            element.remove(old)
    _Writer(doc).blocks(doc, body.children, None, _Look())
    return _deterministic(doc)


def _deterministic(doc: Any) -> bytes:
    """The package's bytes with every ZIP entry dated alike, so equal input gives equal bytes."""
    raw = io.BytesIO()
    doc.save(raw)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(raw.getvalue())) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(fixed, source.read(info.filename))
    return out.getvalue()
