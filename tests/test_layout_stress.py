"""Layout at real size: the stress corpus (tests/cases/stress/: 14 and 22 terms, monthly,
rolling 30-day and quarterly windows side by side, long ids, a very long contract id, long
Chinese names and descriptions) laid out as the clause draft, the acceptance criteria and the
quarterly report in both languages. Every page: no two words overlap or leave the page, the
footer is one line, no page ends on a heading, the signatures stand with their sign-off; the
verdict grids never mix window kinds and the latency panels come in the contract's order."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from slacheck.contract.load import load_contract_text
from slacheck.prepare import prepare_accept, prepare_report
from slacheck.render.documents import DocFormat, render_accept, render_draft, render_report
from slacheck.render.pdf import html_to_pdf
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces
from tests.layoutcheck import (
    footer_problems,
    layout_problems,
    signoff_problems,
    stranded_headings,
)

STRESS = Path(__file__).parent / "cases" / "stress"
CONTRACTS = sorted(p.stem for p in STRESS.glob("*.yaml"))
#: the 22-term contract takes minutes to check and lay out: `make test-all` runs it, `make test`
#: the 14-term one (every window kind, long ids, the same checks)
_SLOW = {"stress-twenty-terms-zh"}
DOCS = ("draft", "accept", "report")
LANGS = ("en", "zh")


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    """A quarter of traffic (Q3 2026 in Shanghai time): three months, four rolling windows."""
    path = tmp_path_factory.mktemp("stress") / "traffic.parquet"
    start = dt.datetime(2026, 6, 30, 16, tzinfo=dt.UTC)
    write(generate(TrafficProfile(tasks=600, days=92, seed=5, start=start)), path, "parquet")
    return ingest([path])


@pytest.fixture(
    scope="module",
    params=[pytest.param(n, marks=[pytest.mark.slow] if n in _SLOW else []) for n in CONTRACTS],
)
def laid_out(
    request: pytest.FixtureRequest, traces: Traces, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], tuple[Path, str]]:
    """Each document of one stress contract in each language: its PDF and its HTML."""
    name = str(request.param)
    path = STRESS / f"{name}.yaml"
    contract = load_contract_text(path.read_text(encoding="utf-8"), str(path))
    report = prepare_report(
        contract, traces, period="2026-Q3", contract_file=path, issued=dt.date(2026, 9, 30)
    )
    accept = prepare_accept(contract, traces, contract_file=path, period="2026-07")
    out = tmp_path_factory.mktemp(name)
    docs: dict[tuple[str, str], tuple[Path, str]] = {}
    for lang in LANGS:
        for doc in DOCS:
            if doc == "draft":
                page_html = render_draft(contract, lang=lang, fmt=DocFormat.HTML)
            elif doc == "accept":
                page_html = render_accept(accept, lang=lang, fmt=DocFormat.HTML)
            else:
                page_html = render_report(report, lang=lang, fmt=DocFormat.HTML)
            pdf = out / f"{doc}.{lang}.pdf"
            # the PDF is the HTML laid out (render_* with DocFormat.PDF does just this)
            pdf.write_bytes(html_to_pdf(page_html.decode("utf-8")))
            docs[(doc, lang)] = (pdf, page_html.decode("utf-8"))
    return docs


def test_the_corpus_is_real_size() -> None:
    assert len(CONTRACTS) >= 2
    for name in CONTRACTS:
        text = (STRESS / f"{name}.yaml").read_text(encoding="utf-8")
        contract = load_contract_text(text, name)
        assert len(contract.latency) >= 12
        assert {t.window.value for t in contract.latency} == {
            "calendar_month",
            "rolling_30_days",
            "calendar_quarter",
        }
        assert max(len(t.id) for t in contract.latency) >= 40
    assert any(
        re.search(r"[\u4e00-\u9fff]{20,}", (STRESS / f"{n}.yaml").read_text()) for n in CONTRACTS
    )


def test_every_page_holds_together(laid_out: dict[tuple[str, str], tuple[Path, str]]) -> None:
    problems: list[str] = []
    for (doc, lang), (pdf, page_html) in laid_out.items():
        for p in (
            layout_problems(pdf)
            + footer_problems(pdf)
            + stranded_headings(pdf, page_html)
            + signoff_problems(pdf, page_html)
        ):
            problems.append(f"{doc}.{lang}: {p}")
    assert problems == [], "\n".join(problems[:40])


_GRID = re.compile(r'<table class="data summary fixed">.*?</table>', re.S)


def test_verdict_grids_hold_one_window_kind_each(
    laid_out: dict[tuple[str, str], tuple[Path, str]],
) -> None:
    for lang in LANGS:
        _, page_html = laid_out[("report", lang)]
        grids = _GRID.findall(page_html)
        assert len(grids) == 3  # calendar months, rolling 30-day windows, the quarter
        for grid in grids:
            heads = re.findall(r'<th class="win">(.*?)</th>', grid)
            rolling = ["/" in h for h in heads]
            quarter = ["季度" in h or re.search(r"\bQ\d", h) is not None for h in heads]
            assert all(rolling) or not any(rolling), heads
            assert all(quarter) or not any(quarter), heads
            assert len(heads) <= 4


def test_latency_panels_follow_the_contract(
    laid_out: dict[tuple[str, str], tuple[Path, str]],
) -> None:
    _, page_html = laid_out[("report", "en")]
    ids = re.findall(r"<h3>([^<]+?) · ", page_html)  # the latency sections, contract order
    svg = page_html[page_html.index('id="latency"') :]
    svg = svg[: svg.index("</figure>")]
    # each panel's title starts with its term id (cut after 30 columns)
    titles = [t for t in re.findall(r">([^<>]+)</text>", svg) if re.match(r"[LT]\d\d-", t)]
    assert [t[:12] for t in titles] == [i[:12] for i in ids]


# The detectors see what they are meant to: a tiny page laid out with each fault.

_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 18mm 16mm 20mm 16mm;
  @bottom-right {{ content: "Page " counter(page) " of " counter(pages); width: {foot}; }} }}
body {{ font-family: "DejaVu Sans", sans-serif; font-size: 10pt; }}
</style></head><body>{body}</body></html>"""


def _pdf(tmp_path: Path, body: str, foot: str = "40mm") -> tuple[Path, str]:
    page_html = _PAGE.format(body=body, foot=foot)
    pdf = tmp_path / "page.pdf"
    pdf.write_bytes(html_to_pdf(page_html))
    return pdf, page_html


def test_the_detectors_see_each_fault(tmp_path: Path) -> None:
    # a heading let go of what follows it (the UA stylesheet would keep them together)
    stranded = '<h2 style="break-after: auto">3. Stranded heading</h2>'
    pdf, page_html = _pdf(
        tmp_path, f'<div style="height: 236mm"></div>{stranded}<p>{"text " * 40}</p>'
    )
    assert stranded_headings(pdf, page_html) == ["page 1 ends on the heading '3.Strandedheading'"]
    assert footer_problems(pdf) == []
    # a page-number box too narrow for "Page 1 of 1"
    pdf, _ = _pdf(tmp_path, "<p>one page</p>", foot="9mm")
    assert "the footer takes more than one line" in " ".join(footer_problems(pdf))
    # signature lines pushed past their sign-off's page
    sign = '<div class="line"></div><div class="label">Name</div>'
    body = (
        '<h2>9. Sign-off</h2><p>We agree.</p><div style="height: 240mm"></div>'
        f'<table class="signoff"><tr><td>{sign}</td></tr></table>'
    )
    pdf, page_html = _pdf(tmp_path, body)
    assert signoff_problems(pdf, page_html) == [
        "page 1: the sign-off '9.Sign-off' is without its 1 × 'Name'",
        "'Name' of the sign-off '9.Sign-off' on later pages [2]",
    ]
