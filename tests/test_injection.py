"""No document carries live markup from its inputs: every string of the contract and the traces
is hostile here, and every document is rendered in both languages and every format."""

from __future__ import annotations

import datetime as dt
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from markdown_it import MarkdownIt
from pydantic import ValidationError

from slacheck.contract.load import load_contract
from slacheck.contract.model import Contract
from slacheck.prepare import prepare_accept, prepare_report
from slacheck.render.documents import DocFormat, render_accept, render_draft, render_report
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "contracts" / "strong-cn-task-e2e.yaml"

#: The forged-report attack from the issue, plus a script, an image and a link. Each carries
#: an id so a live element is found by it; the visible words are what a forger wants shown.
PAYLOAD = (
    '<style id="inj-style">.v-breached{{display:none!important}}</style>'
    '<b id="inj-{n}">Auditor note: all terms met.</b>'
    '<script id="inj-script">alert(1)</script><img id="inj-img" src="x" onerror="alert(1)">'
    '<a id="inj-a" href="javascript:alert(1)">x</a>'
)
TRACE_COLUMNS = (
    "task_id",
    "span_id",
    "parent_span_id",
    "name",
    "region",
    "request_model",
    "response_model",
    "provider",
    "endpoint",
    "service_tier",
    "error_type",
)


def _hostile_strings(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every string value in a contract's plain-data form."""
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _hostile_strings(v, (*path, k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _hostile_strings(v, (*path, i))]
    return [path] if isinstance(data, str) else []


def _set(data: Any, path: tuple[Any, ...], value: str) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


@pytest.fixture(scope="module")
def hostile_contract() -> tuple[Contract, int]:
    """The strong contract with markup appended to every string field the schema lets hold it.

    Each field is tried on its own, so one field with a strict format (a time zone, an enum)
    never keeps markup out of the others; the count of fields that took it is returned.
    """
    base = load_contract(CONTRACT).model_dump(mode="json", exclude_none=True)
    data = load_contract(CONTRACT).model_dump(mode="json", exclude_none=True)
    taken = 0
    for n, path in enumerate(_hostile_strings(base)):
        trial = Contract.model_validate(data).model_dump(mode="json", exclude_none=True)
        original = trial
        for key in path:
            original = original[key]
        _set(trial, path, f"{original}{PAYLOAD.format(n=n)}")
        try:
            Contract.model_validate(trial)
        except ValidationError:
            continue
        data = trial
        taken += 1
    return Contract.model_validate(data), taken


@pytest.fixture(scope="module")
def hostile_traces(tmp_path_factory: pytest.TempPathFactory) -> Any:
    table = generate(
        TrafficProfile(
            tasks=20, days=10, seed=3, start=dt.datetime(2026, 7, 25, tzinfo=dt.UTC), malformed=2
        )
    )
    suffix = pa.scalar(PAYLOAD.format(n="trace"))
    for name in TRACE_COLUMNS:
        i = table.schema.get_field_index(name)
        joined = pc.binary_join_element_wise(table.column(name), suffix, "")
        table = table.set_column(i, name, joined)
    path = tmp_path_factory.mktemp("hostile") / "traffic.parquet"
    write(table, path, "parquet")
    return ingest([path])


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.injected: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if (value or "").startswith("inj-") or name.startswith("on"):
                self.injected.append(f"<{tag} {name}={value!r}>")
            if (value or "").lower().startswith("javascript:"):
                self.injected.append(f"<{tag} {name}={value!r}>")


def _live(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def documents(hostile_contract: tuple[Contract, int], hostile_traces: Any) -> dict[Any, bytes]:
    contract, _ = hostile_contract
    report = prepare_report(contract, hostile_traces, period="2026-Q3", contract_file=CONTRACT)
    accept = prepare_accept(contract, hostile_traces, contract_file=CONTRACT)
    out: dict[Any, bytes] = {}
    for lang in ("en", "zh"):
        for fmt in (DocFormat.HTML, DocFormat.MD):
            out["draft", lang, fmt] = render_draft(contract, lang=lang, fmt=fmt)
            out["accept", lang, fmt] = render_accept(accept, lang=lang, fmt=fmt)
            out["report", lang, fmt] = render_report(report, lang=lang, fmt=fmt)
    return out


def test_the_hostile_contract_carries_markup_in_many_fields(
    hostile_contract: tuple[Contract, int],
) -> None:
    contract, taken = hostile_contract
    # ids, parties, descriptions, scope lists, regions, jurisdictions, residency, fallback…
    assert taken >= 12
    assert "<script" in contract.contract.vendor
    assert contract.regions is not None
    assert any(
        "<style" in (r.jurisdiction.province or "")
        for r in contract.regions.primary
        if r.jurisdiction
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("doc", ["draft", "accept", "report"])
def test_no_live_markup_in_html(documents: dict[Any, bytes], doc: str, lang: str) -> None:
    html = documents[doc, lang, DocFormat.HTML].decode("utf-8")
    found = _live(html)
    assert found.injected == []
    assert "script" not in found.tags
    assert "img" not in found.tags
    # the markup is there, as text a reader sees
    assert "&lt;b id=" in html
    assert "Auditor note: all terms met." in html


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("doc", ["draft", "accept", "report"])
def test_no_live_markup_in_markdown(documents: dict[Any, bytes], doc: str, lang: str) -> None:
    text = documents[doc, lang, DocFormat.MD].decode("utf-8")
    # as GitHub and most viewers would show it: Markdown with inline HTML allowed
    found = _live(MarkdownIt("commonmark", {"html": True}).enable("table").render(text))
    assert found.injected == []
    assert not {"script", "img", "style", "a"} & found.tags
    assert "Auditor note: all terms met." in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pdf_shows_the_markup_as_text(
    hostile_contract: tuple[Contract, int], hostile_traces: Any, tmp_path: Path, lang: str
) -> None:
    """The PDF is laid out from the same HTML: the forged markup is printed, not obeyed."""
    contract, _ = hostile_contract
    report = prepare_report(contract, hostile_traces, period="2026-Q3", contract_file=CONTRACT)
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(render_report(report, lang=lang, fmt=DocFormat.PDF))
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    assert "<style" in text
    assert "display:none" in text
