"""PDF layout: no two text boxes on a page overlap and none leaves its page, every footer is one
line, no page ends on a heading and the signatures stand with their sign-off, in every demo
document in both languages (a small demo: the same contract and documents, fewer tasks).
The checks are tests/layoutcheck.py; tests/test_layout_stress.py runs them on a real-size corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from slacheck.demo import run_demo
from tests.layoutcheck import (
    Word,
    footer_problems,
    layout_problems,
    signoff_problems,
    stranded_headings,
)


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


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("doc", ["draft", "accept", "report"])
def test_pages_keep_together(demo: Path, doc: str, lang: str) -> None:
    pdf = demo / f"{doc}.{lang}.pdf"
    page_html = (demo / f"{doc}.{lang}.html").read_text(encoding="utf-8")
    problems = (
        footer_problems(pdf) + stranded_headings(pdf, page_html) + signoff_problems(pdf, page_html)
    )
    assert problems == [], "\n".join(problems[:20])
