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
from slacheck.prepare.claim import prepare_claim
from slacheck.render.claim import render_letter
from slacheck.render.documents import (
    DocFormat,
    render_accept,
    render_draft,
    render_memo,
    render_report,
)
from slacheck.render.glossary import TERMS
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces
from tests.langcheck import rejected_terms, stray_words

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
    """Text the contract supplies and the documents quote as it is: names, ids, descriptions,
    and every other value it gives (providers, models, regions, jurisdictions, tiers)."""
    out: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)

    walk(contract.model_dump(mode="json"))
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
        # the draft holds clauses only (its review findings are the memo's, translated); the
        # glossary, whose English column is meant, is cut
        return _cut_section(text, "术语表") if doc == "draft" else text
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


# ---- the glossary (术语表): one Chinese term per concept, no English word outside identifiers


def _zh_msgstrs() -> list[tuple[str, str]]:
    from babel.messages.pofile import read_po

    po = ROOT / "slacheck" / "locale" / "zh_CN" / "LC_MESSAGES" / "slacheck.po"
    with po.open("rb") as fh:
        catalog = read_po(fh)
    out = []
    for m in catalog:
        if not m.id:
            continue
        key = m.context or (m.id if isinstance(m.id, str) else m.id[0])
        for s in m.string if isinstance(m.string, tuple) else (m.string,):
            out.append((key[:80], s))
    return out


def test_the_glossary_is_one_term_per_concept() -> None:
    zh = [t.zh for t in TERMS]
    assert len(set(zh)) == len(zh)
    assert len({t.en for t in TERMS}) == len(TERMS)
    for t in TERMS:
        for variant in t.rejected:
            assert variant != t.zh and variant not in zh, (t.en, variant)


def test_every_zh_msgstr_uses_the_glossary_and_no_english_word() -> None:
    """Every Chinese string the documents and the terminal say: no rejected variant of a
    glossary term, and no English word outside code, identifiers, commands and the glossary's
    allowed words."""
    rejected = [(key, r) for key, s in _zh_msgstrs() for r in rejected_terms(s)]
    assert rejected == []
    stray = [(key, w, s) for key, s in _zh_msgstrs() if (w := stray_words(s))]
    assert stray == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("§6.1 免责调用不计入", ["免责调用 → 排除调用"]),
        ("由故障转移地域提供服务", ["故障转移地域 → 备用地域"]),
        ("高峰期实测", ["高峰 → 峰值"]),
        ("无法从链路数据中观测", ["链路数据 → 追踪数据"]),
        ("维护窗口内的调用", []),
        ("`免责调用` 为代码", []),
    ],
)
def test_rejected_terms_finds_the_drift_the_issue_names(text: str, found: list[str]) -> None:
    assert rejected_terms(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("峰值时 waiting 策略", ["waiting"]),
        ("traffic.parquet: row 12", ["row"]),
        ("无根 span 的任务", ["span"]),
        ("字段 `queue_ms`、readings.model_scope、OpenTelemetry、p95、slacheck traces inspect", []),
        ("条款 L2-ttft-p95、cross_region: never、completionStartTime", []),
    ],
)
def test_stray_words_flags_a_single_english_word(text: str, found: list[str]) -> None:
    assert stray_words(text) == found


def _glossary_cut(text: str) -> str:
    """``text`` without the draft's glossary section, whose English column is meant."""
    return re.sub(r"(?ms)^## 术语表.*?(?=^由 slacheck|\Z)", "", text)


def _demo_contract() -> Contract:
    from importlib import resources

    from slacheck.contract.load import load_contract_text

    starters = resources.files("slacheck.contract").joinpath("starters/demo.yaml")
    return load_contract_text(starters.read_text("utf-8"), "contract.yaml")


@pytest.fixture(scope="module")
def zh_documents(traces: Traces) -> dict[str, dict[str, str]]:
    """The demo contract's and a second contract's zh documents, on the same traces."""
    out = {}
    for name, contract in [
        ("demo", _demo_contract()),
        ("strong", load_contract(CONTRACTS / "strong-cn-task-e2e.yaml")),
    ]:
        report = prepare_report(contract, traces, period="2026-Q3", issued=dt.date(2026, 9, 30))
        accept = prepare_accept(contract, traces, period="2026-07")
        out[name] = {
            "draft": render_draft(contract, lang="zh", fmt=DocFormat.MD).decode(),
            "accept": render_accept(accept, lang="zh", fmt=DocFormat.MD).decode(),
            "report": render_report(report, lang="zh", fmt=DocFormat.MD).decode(),
            "report.html": render_report(report, lang="zh", fmt=DocFormat.HTML).decode(),
            "claim": render_letter(prepare_claim(contract, traces, period="2026-07"), "zh"),
        }
    return out


@pytest.mark.parametrize("name", ["demo", "strong"])
@pytest.mark.parametrize("doc", ["draft", "accept", "report", "report.html", "claim"])
def test_zh_documents_use_the_glossary(
    zh_documents: dict[str, dict[str, str]], name: str, doc: str
) -> None:
    contract = (
        _demo_contract() if name == "demo" else load_contract(CONTRACTS / "strong-cn-task-e2e.yaml")
    )
    text = _glossary_cut(zh_documents[name][doc])
    assert rejected_terms(text) == []
    assert sorted(set(stray_words(text, allowed=tuple(contract_values(contract))))) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", [DocFormat.MD, DocFormat.HTML])
def test_the_draft_prints_the_glossary_last(lang: str, fmt: DocFormat) -> None:
    contract = load_contract(CONTRACTS / "strong-cn-task-e2e.yaml")
    text = render_draft(contract, lang=lang, fmt=fmt).decode()
    heading = "Glossary" if lang == "en" else "术语表（中英文对照）"
    at = text.index(heading)
    rest = text[at:]
    for t in TERMS:
        row = f"| {t.en} | {t.zh} |" if fmt is DocFormat.MD else f">{t.en}</td>"
        assert row in rest, row
    # its own section, after every clause and before the closing line only
    assert re.search(r"(?m)^## |<h2", rest[len(heading) :]) is None


def test_the_zh_draft_names_excluded_calls_as_its_definition_does() -> None:
    """§1.4 defines 排除调用; §6.1 and the heading of 第七条 use it, never 免责调用 / 免责条款."""
    text = render_draft(
        load_contract(CONTRACTS / "strong-cn-task-e2e.yaml"), lang="zh", fmt=DocFormat.MD
    ).decode()
    assert "排除调用" in text and "第七条　排除情形" in text
    assert "免责" not in text


def test_the_zh_report_says_failover_peak_and_trace_as_the_draft(
    zh_documents: dict[str, dict[str, str]],
) -> None:
    report, draft = zh_documents["strong"]["report"], zh_documents["strong"]["draft"]
    for term in ("备用地域", "峰值", "追踪数据"):
        assert term in report and term in draft, term
    for variant in ("故障转移地域", "高峰", "链路数据"):
        assert variant not in report and variant not in draft, variant


def test_the_zh_summary_names_built_in_terms_in_chinese(
    zh_documents: dict[str, dict[str, str]],
) -> None:
    """A built-in term (regions, routing, …) is named in words in the Chinese summary; a term
    the contract names keeps its id, an identifier."""
    report = zh_documents["strong"]["report"]
    summary = report[: report.index("\n## ", report.index("## ") + 1)]
    assert (
        re.search(r"(?m)^- \*\*(regions|routing|residency|peak|availability)\*\*", summary) is None
    )
    assert re.search(r"(?m)^- \*\*(地域清单|跨区调度|数据驻留)\*\*，", summary)


def test_the_field_checks_peak_item_names_the_policy_in_chinese(
    zh_documents: dict[str, dict[str, str]],
) -> None:
    """Item 7 of the field check said "queue 可观察的…": the policy is named in words."""
    accept = zh_documents["strong"]["accept"]
    assert "queue 可观察" not in accept
    assert "排队可观察" in accept


def test_set_aside_rows_are_said_in_chinese(tmp_path: Path) -> None:
    path = tmp_path / "traffic.parquet"
    start = dt.datetime(2026, 6, 30, 16, tzinfo=dt.UTC)
    write(
        generate(TrafficProfile(tasks=30, days=2, seed=4, start=start, malformed=4)),
        path,
        "parquet",
    )
    contract = load_contract(CONTRACTS / "strong-cn-task-e2e.yaml")
    inputs = prepare_report(contract, ingest([path]), period="2026-07", issued=dt.date(2026, 8, 10))
    zh = render_report(inputs, lang="zh", fmt=DocFormat.MD).decode()
    assert ": row " not in zh
    assert re.search(r"traffic\.parquet 第 \d+ 行", zh)
    en = render_report(inputs, lang="en", fmt=DocFormat.MD).decode()
    assert re.search(r"traffic\.parquet: row \d+", en)  # English unchanged


STRESS = Path(__file__).resolve().parent / "cases" / "stress"


@pytest.mark.parametrize("path", sorted(STRESS.glob("*.yaml")), ids=lambda p: p.stem)
def test_the_stress_corpus_zh_documents_use_the_glossary(path: Path) -> None:
    """The stress contracts (a dozen terms and more, mixed windows, long ids, long Chinese names):
    their Chinese draft, review memo and acceptance criteria use the glossary's terms and leave
    no English word outside identifiers and the contract's own values."""
    contract = load_contract(path)
    fmt = DocFormat.MD  # the same catalogue words as the HTML and the PDF, without markup
    # the contract's own values, quoted as they are; a two-letter lower-case value (a language
    # code) would be cut out of the middle of words, so only country codes of that length count
    allowed = tuple(v for v in contract_values(contract) if len(v) >= 3 or v.isupper())
    docs = {
        "draft": _glossary_cut(render_draft(contract, lang="zh", fmt=fmt).decode()),
        "memo": render_memo(contract, lang="zh", fmt=fmt).decode(),
        "accept": render_accept(prepare_accept(contract, None), lang="zh", fmt=fmt).decode(),
    }
    for doc, text in docs.items():
        assert rejected_terms(text) == [], doc
        assert sorted(set(stray_words(text, allowed=allowed))) == [], doc
