"""The Chinese documents carry no English sentence outside identifiers, codes and contract values.

A run of three or more English words is a sentence a Chinese reader should not meet. Allowed:
code spans (field names, commands), ids and codes (SLA101, L2-ttft-p95), hashes, units and
quoted contract values (the parties' names, a term's description marked 原文).

Check notes, field-check criteria and fixes, metering mismatches and clause-review findings are
still English sentences built in the checks (a message catalogue is being added on another
branch); until it lands, those parts are cut out here by where they appear (`_template_text`),
and everything else — the templates' own text — is checked.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from slacheck.contract.load import load_contract
from slacheck.contract.model import Contract
from slacheck.prepare import prepare_accept, prepare_report
from slacheck.render.documents import (
    DocFormat,
    render_accept,
    render_draft,
    render_memo,
    render_report,
)
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ROOT / "contracts"

_WORD = r"[A-Za-z][A-Za-z'’]*"
#: three or more words, apart only by spaces and light punctuation
_RUN = re.compile(rf"(?<![\w.\-/]){_WORD}(?:[ \t]*[,;:()&/]?[ \t]+{_WORD}(?![\w\-])){{2,}}")


def english_runs(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """Runs of three or more English words in ``text``, outside code spans, HTML code
    elements and the ``allowed`` strings (contract values quoted as the contract gives them).
    A token with a digit, underscore, dot or hyphen inside (an id, a code, a hash, a field
    name) is not a word and breaks a run."""
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"<code[^>]*>.*?</code>", " ", text, flags=re.S)
    for value in sorted(allowed, key=len, reverse=True):
        if value:
            text = text.replace(value, " ")
    return [m.group(0) for m in _RUN.finditer(text)]


def contract_values(contract: Contract) -> list[str]:
    """Text the contract supplies and the documents quote as it is."""
    c = contract.contract
    out = [c.vendor, c.customer, c.id]
    out += [t.description or "" for t in contract.latency]
    if contract.availability is not None:
        out.append(getattr(contract.availability, "description", None) or "")
    return out


def test_english_runs_flags_sentences_and_spares_codes() -> None:
    assert english_runs("注：the rest is not protected by this term。") == [
        "the rest is not protected by this term"
    ]
    fine = (
        "条款 L2-ttft-p95 第 95 百分位不超过 1,500 ms（1.5 s），SHA-256 4104ecfd0d11fd0c；"
        "代码 SLA101；字段 `gen_ai.response.time_to_first_chunk`；命令 `slacheck check A B`；"
        "<code>start_us</code>；时区 Asia/Shanghai；HTTP 4xx；OpenTelemetry 的 Langfuse。"
    )
    assert english_runs(fine) == []
    assert english_runs("供应商 Example Cloud Inference Co., Ltd.") != []
    assert (
        english_runs(
            "供应商 Example Cloud Inference Co., Ltd.", ["Example Cloud Inference Co., Ltd."]
        )
        == []
    )


def _cut_section(text: str, heading: str) -> str:
    """``text`` without the Markdown section whose level-2 heading starts with ``heading``."""
    return re.sub(rf"(?ms)^## {re.escape(heading)}.*?(?=^## |\Z)", "", text)


def _template_text(doc: str, text: str) -> str:
    """The parts of a zh document that are template text today (see the module docstring)."""
    if doc in ("draft", "memo"):
        # the draft holds clauses only; its review findings are the memo's, translated
        return text
    if doc == "accept":
        return _cut_section(text, "十四、")  # the field check's criteria and fixes
    # the report: check notes follow <br> in a result cell; 八 lists metering mismatches
    text = _cut_section(text, "八、")
    return re.sub(r"<br>[^|]*", " ", text)


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    # one quiet week, whole days, no malformed rows: few notes
    path = tmp_path_factory.mktemp("zh") / "traffic.parquet"
    start = dt.datetime(2026, 6, 30, 16, tzinfo=dt.UTC)
    write(generate(TrafficProfile(tasks=60, days=7, seed=3, start=start)), path, "parquet")
    return ingest([path])


@pytest.mark.parametrize("name", ["strong-cn-task-e2e.yaml", "weak-vendor-draft.yaml"])
def test_zh_draft_memo_and_acceptance_are_chinese(name: str, traces: Traces) -> None:
    contract = load_contract(CONTRACTS / name)
    allowed = contract_values(contract)
    draft = render_draft(contract, lang="zh", fmt=DocFormat.MD).decode()
    assert english_runs(_template_text("draft", draft), allowed) == []
    memo = render_memo(contract, lang="zh", fmt=DocFormat.MD).decode()
    assert english_runs(_template_text("memo", memo), allowed) == []
    for t in (None, traces):
        inputs = prepare_accept(contract, t, period="2026-07")
        accept = render_accept(inputs, lang="zh", fmt=DocFormat.MD).decode()
        assert english_runs(_template_text("accept", accept), allowed) == []


def test_zh_report_is_chinese(traces: Traces) -> None:
    contract = load_contract(CONTRACTS / "strong-cn-task-e2e.yaml")
    inputs = prepare_report(contract, traces, period="2026-07", issued=dt.date(2026, 8, 10))
    report = render_report(inputs, lang="zh", fmt=DocFormat.MD).decode()
    assert english_runs(_template_text("report", report), contract_values(contract)) == []
