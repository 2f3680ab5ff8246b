"""What a page of a PDF document must look like, read back with poppler's `pdftotext
-bbox-layout`: no two words overlap and none leaves its page, the footer is one line, no page
ends on a heading, and the signature blocks stand on the page of their sign-off heading.
Used by tests/test_layout.py (the demo) and tests/test_layout_stress.py (the stress corpus)."""

from __future__ import annotations

import functools
import html
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

_NS = "{http://www.w3.org/1999/xhtml}"
#: the page's bottom margin (report.css: `@page { margin: … 20mm … }`), where the footer is
FOOTER_PT = 20 / 25.4 * 72


@dataclass(frozen=True, slots=True)
class Word:
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str

    def overlaps(self, other: Word) -> bool:
        """True when the boxes share more than a sliver: a point across, and 40 % of the
        shorter box's height (a font's ascent and descent make adjacent lines touch)."""
        dx = min(self.x1, other.x1) - max(self.x0, other.x0)
        dy = min(self.y1, other.y1) - max(self.y0, other.y0)
        return dx > 1.0 and dy > 0.4 * min(self.y1 - self.y0, other.y1 - other.y0)


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text as pdftotext groups it: its top and bottom, and its words."""

    y0: float
    y1: float
    words: tuple[Word, ...]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def _box(e: ET.Element) -> tuple[float, float, float, float]:
    return tuple(float(e.get(k) or 0) for k in ("xMin", "yMin", "xMax", "yMax"))  # type: ignore[return-value]


def _read(pdf: Path) -> ET.Element:
    stat = pdf.stat()
    return _parsed(str(pdf), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _parsed(pdf: str, _mtime_ns: int, _size: int) -> ET.Element:
    """A PDF's words as pdftotext boxes them, read once per version of the file."""
    out = subprocess.run(
        ["pdftotext", "-bbox-layout", pdf, "-"], capture_output=True, check=True, text=True
    ).stdout
    return ET.fromstring(out)


def pages(pdf: Path) -> Iterator[tuple[int, float, float, list[Word]]]:
    """Each page's size and word boxes, as `pdftotext -bbox-layout` reads them."""
    for n, page in enumerate(_read(pdf).iter(_NS + "page"), 1):
        words = [Word(n, *_box(w), w.text or "") for w in page.iter(_NS + "word")]
        yield n, float(page.get("width") or 0), float(page.get("height") or 0), words


def page_lines(pdf: Path) -> list[tuple[float, list[Line]]]:
    """Each page's height and its lines, top to bottom."""
    out: list[tuple[float, list[Line]]] = []
    for n, page in enumerate(_read(pdf).iter(_NS + "page"), 1):
        lines = [
            Line(
                _box(line)[1],
                _box(line)[3],
                tuple(Word(n, *_box(w), w.text or "") for w in line.iter(_NS + "word")),
            )
            for line in page.iter(_NS + "line")
        ]
        out.append((float(page.get("height") or 0), sorted(lines, key=lambda x: x.y0)))
    return out


def layout_problems(pdf: Path) -> list[str]:
    found: list[str] = []
    for n, width, height, words in pages(pdf):
        for w in words:
            if w.x0 < -0.5 or w.y0 < -0.5 or w.x1 > width + 0.5 or w.y1 > height + 0.5:
                found.append(f"page {n}: {w.text!r} leaves the page")
        words.sort(key=lambda w: w.x0)
        for i, a in enumerate(words):
            for b in words[i + 1 :]:
                if b.x0 >= a.x1:
                    break
                if a.overlaps(b):
                    found.append(
                        f"page {n}: {a.text!r} at ({a.x0:.0f}, {a.y0:.0f}) overlaps "
                        f"{b.text!r} at ({b.x0:.0f}, {b.y0:.0f})"
                    )
    return found


def footer_problems(pdf: Path) -> list[str]:
    """Every page's footer (the running title and "Page n of N") is one line, and it carries
    the page's number and the page count."""
    found: list[str] = []
    numbered = page_lines(pdf)
    total = len(numbered)
    for n, (height, lines) in enumerate(numbered, 1):
        foot = [w for line in lines if line.y0 >= height - FOOTER_PT for w in line.words]
        if not foot:
            found.append(f"page {n}: no footer")
            continue
        tops = [w.y0 for w in foot]
        if max(tops) - min(tops) > 2.0:
            text = " / ".join(line.text for line in lines if line.y0 >= height - FOOTER_PT)
            found.append(f"page {n}: the footer takes more than one line: {text!r}")
        numbers = {w.text.strip("第页，共") for w in foot}
        if str(n) not in numbers or str(total) not in numbers:
            found.append(f"page {n}: the footer does not say page {n} of {total}")
    return found


_HEADING = re.compile(r"<h([1-4])\b[^>]*>(.*?)</h\1>", re.S)
_TAG = re.compile(r"<[^>]+>")


def _flat(text: str) -> str:
    """Text with every space removed: pdftotext and the HTML split words differently."""
    return re.sub(r"\s+", "", text)


def _text(markup: str) -> str:
    return html.unescape(_TAG.sub("", markup))


def headings(document_html: str) -> list[str]:
    """The text of every heading (h1–h4) of a document's HTML."""
    return [_text(m.group(2)) for m in _HEADING.finditer(document_html)]


def stranded_headings(pdf: Path, document_html: str) -> list[str]:
    """Headings that end a page (the last text above its footer): a heading must stand on the
    page of what follows it. A heading may wrap, so the last one, two and three lines are
    compared with each heading's text."""
    wanted = {_flat(h) for h in headings(document_html)}
    found: list[str] = []
    numbered = page_lines(pdf)
    for n, (height, lines) in enumerate(numbered, 1):
        body = [line for line in lines if line.y1 < height - FOOTER_PT]
        if n == len(numbered) or not body:
            continue
        # the lowest lines of the page, whatever column they are in
        lowest = sorted(body, key=lambda x: x.y1)
        for k in (1, 2, 3):
            tail = lowest[-k:]
            text = _flat("".join(line.text for line in sorted(tail, key=lambda x: x.y0)))
            if text in wanted:
                found.append(f"page {n} ends on the heading {text!r}")
                break
    return found


_SIGNOFF = re.compile(r'<table class="signoff">(.*?)</table>', re.S)
_LABEL = re.compile(r'<div class="label">(.*?)</div>', re.S)


def signoff_problems(pdf: Path, document_html: str) -> list[str]:
    """The signature blocks (`table.signoff`) stand on the page of the heading before them,
    and no page after it holds a signature line's label."""
    found: list[str] = []
    for m in _SIGNOFF.finditer(document_html):
        before = headings(document_html[: m.start()])
        labels = [_flat(_text(x)) for x in _LABEL.findall(m.group(1))]
        if not before or not labels:
            continue
        heading = _flat(before[-1])
        texts = [
            _flat("".join(line.text for line in lines if line.y1 < height - FOOTER_PT))
            for height, lines in page_lines(pdf)
        ]
        on = [i for i, t in enumerate(texts) if heading in t]
        if not on:
            found.append(f"the sign-off heading {heading!r} is on no page")
            continue
        page = on[-1]
        for label in dict.fromkeys(labels):
            if texts[page].count(label) < labels.count(label):
                found.append(
                    f"page {page + 1}: the sign-off {heading!r} is without its "
                    f"{labels.count(label)} × {label!r}"
                )
            later = [i + 1 for i, t in enumerate(texts[page + 1 :], page + 1) if label in t]
            if later:
                found.append(f"{label!r} of the sign-off {heading!r} on later pages {later}")
    return found
