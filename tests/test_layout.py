"""PDF layout: no two text boxes on a page overlap and none leaves its page, in every demo
document in both languages (a small demo: the same contract and documents, fewer tasks)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from slacheck.demo import run_demo

_NS = "{http://www.w3.org/1999/xhtml}"


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


def pages(pdf: Path) -> Iterator[tuple[int, float, float, list[Word]]]:
    """Each page's size and word boxes, as `pdftotext -bbox-layout` reads them."""
    out = subprocess.run(
        ["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True, check=True, text=True
    ).stdout
    root = ET.fromstring(out)
    for n, page in enumerate(root.iter(_NS + "page"), 1):
        words = [
            Word(n, *(float(w.get(k) or 0) for k in ("xMin", "yMin", "xMax", "yMax")), w.text or "")
            for w in page.iter(_NS + "word")
        ]
        yield n, float(page.get("width") or 0), float(page.get("height") or 0), words


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


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("layout")
    run_demo(out, tasks=600)
    return out


def test_overlap_detector_sees_an_overlap() -> None:
    a = Word(1, 0, 0, 40, 10, "46,344")
    assert a.overlaps(Word(1, 30, 0, 60, 10, "every"))
    assert not a.overlaps(Word(1, 0, 9.5, 40, 20, "next line"))
    assert not a.overlaps(Word(1, 40.5, 0, 60, 10, "beside"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("doc", ["draft", "memo", "accept", "report"])
def test_no_text_overlaps_or_leaves_the_page(demo: Path, doc: str, lang: str) -> None:
    pdf = demo / f"{doc}.{lang}.pdf"
    assert pdf.is_file()
    problems = layout_problems(pdf)
    assert problems == [], "\n".join(problems[:20])
