"""One text-safety rule for every output (issue 26): a control, format or bidirectional character
from a contract or a trace never reaches an output raw, and every output still parses.

A contract with a hostile string in every string field that takes one, and traces with it in
every trace string field, are checked and rendered in every format and both languages:
terminal table, check Markdown, JSON and JUnit; draft, memo, acceptance criteria and report in
HTML and Markdown; the PDF
(its text, by pdftotext); OpenSLO YAML; the claim pack's JSON and letters. Hypothesis then
draws arbitrary Unicode for the term ids, windows and examples of the results and for the
contract's parties, and renders the cheap formats again."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from rich.console import Console
from ruamel.yaml import YAML

from slacheck import textsafe
from slacheck.console import evaluation_table
from slacheck.contract.load import load_contract
from slacheck.contract.model import Contract
from slacheck.evaluation import evaluate
from slacheck.prepare import prepare_accept, prepare_claim, prepare_report
from slacheck.render import jsonout
from slacheck.render.claim import ClaimPack, render_letter
from slacheck.render.documents import (
    DocFormat,
    render_accept,
    render_draft,
    render_memo,
    render_report,
)
from slacheck.render.junit import to_junit
from slacheck.render.markdown import evaluation_markdown
from slacheck.render.openslo import to_openslo
from slacheck.results import Evaluation
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces
from tests.hostile.corpus import otlp_doc, otlp_span

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "contracts" / "strong-cn-task-e2e.yaml"
LANGS = ("en", "zh")

#: every kind of character the rule covers: bidi controls, C0 and C1 controls, DEL, the line
#: and paragraph separators, zero-width and byte-order marks, XML 1.0's non-characters and a
#: tag character (a lone surrogate, which no contract can hold, is in the unit tests)
TRACE_HOSTILE = (
    "Evil\u202eCorp\u2066x\u2067y\u2068z\u2069\u202a\u202b\u202c\u202d\u200e\u200f\u061c"
    "\x00\x01\x07\x08\x0b\x0c\r\x1b[31m\x7f\x85\x9f\u2028\u2029\ufeff\u200b\u200d\u2060"
    "\ufffe\uffff\U000e0001end"
)
#: a contract refuses NUL (``contract.load``: it would end the engine's SQL string)
HOSTILE = TRACE_HOSTILE.replace("\x00", "")


def _raw(text: str) -> list[str]:
    """The characters of ``text`` the rule forbids."""
    return sorted({c for c in text if textsafe.unsafe(c)})


# -- the rule itself ----------------------------------------------------------------------------


def test_the_safe_ranges_hold_no_unsafe_character() -> None:
    for lo, hi in textsafe.SAFE_RANGES:
        bad = [hex(n) for n in range(ord(lo), ord(hi) + 1) if textsafe.unsafe(chr(n))]
        assert bad == [], (lo, hi)


def test_every_bidi_control_is_unsafe() -> None:
    bidi = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]
    assert all(textsafe.unsafe(chr(n)) for n in bidi)
    assert not any(textsafe.unsafe(c) for c in "\t\n a名\u3000é")


def test_a_lone_surrogate_is_escaped() -> None:
    assert textsafe.visible("a\ud800b") == "a\\ud800b"
    assert json.loads(textsafe.json_text('"a\ud800b"')) == "a\ud800b"


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_escaped_text_holds_no_unsafe_character_and_parses(text: str) -> None:
    assert _raw(textsafe.visible(text)) == []
    serialised = json.dumps({"v": text}, ensure_ascii=False)
    assert json.loads(textsafe.json_text(serialised)) == {"v": text}
    assert _raw(textsafe.json_text(serialised)) == []
    element = ET.Element("a", v=text)
    element.text = text
    xml = textsafe.xml_text(ET.tostring(element, encoding="unicode"))
    ET.fromstring(xml)
    assert _raw(xml) == []


# -- every output -------------------------------------------------------------------------------


def _strings(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _strings(v, (*path, k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _strings(v, (*path, i))]
    return [path] if isinstance(data, str) else []


def _hostile_contract(text: str) -> tuple[Contract, int]:
    """The strong contract with ``text`` appended to every string field that takes it."""
    data = load_contract(CONTRACT).model_dump(mode="json", exclude_none=True)
    taken = 0
    for path in _strings(data):
        trial = json.loads(json.dumps(data))
        node = trial
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = node[path[-1]] + text
        try:
            Contract.model_validate(trial)
        except ValidationError:
            continue
        data, taken = trial, taken + 1
    return Contract.model_validate(data), taken


def _hostile_traces(folder: Path) -> Traces:
    spans = []
    for i in range(12):
        span = otlp_span(i, name=f"chat {TRACE_HOSTILE}")
        span["attributes"] = [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": f"gpt-4o{TRACE_HOSTILE}"}},
            {"key": "gen_ai.provider.name", "value": {"stringValue": f"openai{TRACE_HOSTILE}"}},
            {"key": "server.address", "value": {"stringValue": f"api{TRACE_HOSTILE}.example"}},
            {"key": "cloud.region", "value": {"stringValue": f"cn-shanghai{TRACE_HOSTILE}"}},
        ]
        if i % 3 == 0:
            span["status"] = {"code": 2, "message": f"Boom{TRACE_HOSTILE}"}
            span["attributes"].append(
                {"key": "error.type", "value": {"stringValue": f"RateLimit{TRACE_HOSTILE}"}}
            )
        if i % 4 == 0:
            span["traceId"] = f"task{TRACE_HOSTILE}{i}"
        spans.append(span)
    path = folder / "hostile.json"
    path.write_text(json.dumps(otlp_doc(spans)), encoding="utf-8")
    return ingest([path])


def _terminal(evaluation: Evaluation, lang: str, *, tty: bool) -> str:
    buf = io.StringIO()
    Console(file=buf, force_terminal=tty, width=200, color_system=None).print(
        evaluation_table(evaluation, lang)
    )
    return buf.getvalue()


def _cheap_outputs(contract: Contract, evaluation: Evaluation) -> dict[str, str]:
    """The outputs that render in milliseconds, both languages; each parsed where it can be."""
    out: dict[str, str] = {"check.json": jsonout.dumps(evaluation.to_dict())}
    json.loads(out["check.json"])
    out["openslo.yaml"] = to_openslo(contract).text
    list(YAML(typ="safe").load_all(out["openslo.yaml"]))
    for lang in LANGS:
        out[f"junit.{lang}.xml"] = to_junit(evaluation, lang)
        ET.fromstring(out[f"junit.{lang}.xml"].encode("utf-8"))
        out[f"check.{lang}.md"] = evaluation_markdown(evaluation, lang)
        out[f"terminal.{lang}.pty"] = _terminal(evaluation, lang, tty=True)
        out[f"terminal.{lang}.pipe"] = _terminal(evaluation, lang, tty=False)
        accept = prepare_accept(contract, None)
        for fmt in (DocFormat.HTML, DocFormat.MD):
            out[f"draft.{lang}.{fmt}"] = render_draft(contract, lang=lang, fmt=fmt).decode("utf-8")
            out[f"memo.{lang}.{fmt}"] = render_memo(contract, lang=lang, fmt=fmt).decode("utf-8")
            out[f"accept.{lang}.{fmt}"] = render_accept(accept, lang=lang, fmt=fmt).decode()
    return out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Contract, Traces, Evaluation]:
    contract, taken = _hostile_contract(HOSTILE)
    assert taken >= 10  # vendor, customer, ids, notes, regions, scope lists…
    assert HOSTILE in contract.contract.vendor
    assert HOSTILE in contract.latency[0].id
    traces = _hostile_traces(tmp_path_factory.mktemp("textsafe"))
    return contract, traces, evaluate(contract, traces)


@pytest.fixture(scope="module")
def pack(hostile: tuple[Contract, Traces, Evaluation]) -> ClaimPack:
    contract, traces, _ = hostile
    return prepare_claim(contract, traces, period="2026-07")


def _claim_outputs(pack: ClaimPack) -> dict[str, str]:
    """The claim pack's JSON (parsed) and its letters, both languages."""
    out = {"claim.json": jsonout.dumps(pack.to_dict())}
    json.loads(out["claim.json"])
    for lang in LANGS:
        out[f"letter.{lang}.md"] = render_letter(pack, lang)
    return out


@pytest.fixture(scope="module")
def every_output(hostile: tuple[Contract, Traces, Evaluation], pack: ClaimPack) -> dict[str, str]:
    """Every output but the report (slow: see below), both languages."""
    contract, _, evaluation = hostile
    return {**_cheap_outputs(contract, evaluation), **_claim_outputs(pack)}


def _safe_and_shown(outputs: dict[str, str]) -> None:
    """No raw unsafe character, and the hostile text escaped, not dropped: a reader sees that
    the name holds an override."""
    for name, text in outputs.items():
        assert _raw(text) == [], name
        assert "\\u202e" in text, name


def test_no_output_holds_a_raw_unsafe_character(every_output: dict[str, str]) -> None:
    assert len(every_output) == 25
    _safe_and_shown(every_output)


@pytest.mark.slow
def test_the_report_holds_no_raw_unsafe_character(
    hostile: tuple[Contract, Traces, Evaluation],
) -> None:
    contract, traces, _ = hostile
    report = prepare_report(contract, traces, period="2026-07", contract_file=CONTRACT)
    _safe_and_shown(
        {
            f"report.{lang}.{fmt}": render_report(report, lang=lang, fmt=fmt).decode()
            for lang in LANGS
            for fmt in (DocFormat.HTML, DocFormat.MD)
        }
    )


@pytest.mark.slow
def test_the_pdf_shows_the_override_as_an_escape(
    hostile: tuple[Contract, Traces, Evaluation], tmp_path: Path
) -> None:
    """The PDF is laid out from the HTML: weasyprint never sees the override, so the vendor is
    not shown reordered ("Evil Corp exe.png Ltd")."""
    contract, traces, _ = hostile
    report = prepare_report(contract, traces, period="2026-07", contract_file=CONTRACT)
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(render_report(report, lang="en", fmt=DocFormat.PDF))
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    assert _raw(text.replace("\x0c", "")) == []  # pdftotext's own page breaks aside
    assert "Evil\\u202eCorp" in text


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=16))
def test_arbitrary_unicode_in_results_and_parties(
    hostile: tuple[Contract, Traces, Evaluation], pack: ClaimPack, text: str
) -> None:
    contract, _, evaluation = hostile
    results = tuple(
        dataclasses.replace(r, term_id=f"{r.term_id}{text}", window=text, examples=(text,))
        for r in evaluation.results
    )
    c = contract.contract.model_copy(update={"vendor": text, "customer": text, "id": text})
    changed = contract.model_copy(update={"contract": c})
    outputs = _cheap_outputs(changed, dataclasses.replace(evaluation, results=results))
    # the claim pack's JSON and letters too (preparing a pack takes seconds: the one prepared
    # is given the text in its parties, its term, its window, its incidents and its sources)
    incidents = tuple(
        dataclasses.replace(i, regions=(text,), models=(text,), endpoints=(text,))
        for i in pack.incidents
    )
    claim = dataclasses.replace(
        pack,
        contract=changed,
        window=text,
        result=dataclasses.replace(pack.result, term_id=text, window=text),
        incidents=incidents,
        sources=((text, "0" * 64),),
    )
    outputs |= _claim_outputs(claim)
    assert len(outputs) == 25  # the same outputs as test_no_output_holds_a_raw_unsafe_character
    for name, out in outputs.items():
        assert _raw(out) == [], name


#: the forbidden characters, Latin and CJK letters, digits and spaces
_PDF_ALPHABET = sorted(set(TRACE_HOSTILE.replace("\x00", "")) | set("Ab z9 契约供应商"))


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.sampled_from(_PDF_ALPHABET), min_size=1, max_size=16))
def test_arbitrary_unicode_in_the_parties_never_reaches_a_pdf_raw(text: str) -> None:
    """The PDF's text (by pdftotext), both languages: a party's name of the forbidden
    characters mixed with letters of both languages shows none of them as they are. (A
    character no installed font draws is refused before the PDF is written, ``MissingGlyphs``,
    as test_install holds; the alphabet keeps to what the required fonts draw.)"""
    contract = load_contract(CONTRACT)
    c = contract.contract.model_copy(update={"vendor": text, "customer": text, "id": text})
    changed = contract.model_copy(update={"contract": c})
    for lang in LANGS:
        pdf = render_draft(changed, lang=lang, fmt=DocFormat.PDF)
        shown = subprocess.run(
            ["pdftotext", "-layout", "-", "-"], input=pdf, check=True, capture_output=True
        ).stdout.decode("utf-8")
        assert _raw(shown.replace("\x0c", "")) == [], lang
