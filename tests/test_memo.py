"""Clause-only drafts and the review memo (issue 24, item 6).

The clause draft holds contract language only: no reviewer note, no suggested wording, no YAML,
no assumed figure, nothing the contract does not state; its clauses are numbered without gaps
and every cross-reference cites a clause that is there. Every finding the review makes is in
the review memo instead, once, with the draft clause it concerns. Checked over every shipped
contract and every review case, in both languages and both template families.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from slacheck.cli.root import app
from slacheck.contract.load import load_contract
from slacheck.contract.model import Contract
from slacheck.contract.review import review
from slacheck.render.documents import DocFormat, memo_entries, render_draft, render_memo
from slacheck.render.outline import chinese_numeral, draft_outline
from tests.test_review import _case_files, _contract, _read

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ROOT / "contracts"
LANGS = ("en", "zh")
FORMATS = (DocFormat.MD, DocFormat.HTML)


def _all_contracts() -> dict[str, Contract]:
    out = {p.stem: load_contract(p) for p in sorted(CONTRACTS.glob("*.yaml"))}
    for path in _case_files():
        for i, case in enumerate(_read(path)["cases"]):
            out[f"{path.stem}-{i}"] = _contract(case, path.name)
    return out


ALL = _all_contracts()

#: what a reviewer writes and a clause never does, in either language
COMMENTARY = re.compile(
    r"Suggested wording|suggested|should say so|assumed|reviewer note|not stated|is not written"
    r"|not paid in cash|No cap on credits|case by case|\bSLA\d{3}\b|readings\.|\w+\.\w+: \w"
    r"|建议|假设|审阅意见一览|合同未约定|未写明|不以现金支付|另行协商|（合同未约定）",
)


def _text(doc: bytes) -> str:
    """What a reader sees: the stylesheet and tags out, entities as they read."""
    text = re.sub(r"(?s)<style>.*?</style>", "", doc.decode("utf-8"))
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _body(text: str, lang: str) -> str:
    """The draft without its preface, which names the review memo."""
    marker = "## 1. " if lang == "en" else "## 第一条"
    if marker in text:
        return text.split(marker, 1)[1]
    return text.split("1. ", 1)[-1] if lang == "en" else text.split("第一条", 1)[-1]


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_draft_is_contract_language_only(name: str) -> None:
    contract = ALL[name]
    for lang in LANGS:
        for fmt in FORMATS:
            text = _body(_text(render_draft(contract, lang=lang, fmt=fmt)), lang)
            found = COMMENTARY.findall(text)
            assert found == [], (lang, fmt, found)


@pytest.mark.parametrize("name", sorted(ALL))
def test_clause_numbers_run_without_gaps_and_references_resolve(name: str) -> None:
    contract = ALL[name]
    outline = draft_outline(contract)
    assert [s.number for s in outline.sections] == list(range(1, len(outline.sections) + 1))
    for lang in LANGS:
        md = render_draft(contract, lang=lang, fmt=DocFormat.MD).decode()
        numbers = re.findall(r"^\*\*(\d+)\.(\d+)\*\*", md, re.M)
        seen: dict[int, int] = {}
        for a, b in ((int(a), int(b)) for a, b in numbers):
            assert b == seen.get(a, 0) + 1, f"{lang}: {a}.{b} follows {a}.{seen.get(a, 0)}"
            seen[a] = b
        assert sorted(seen) == [s.number for s in outline.sections if s.clauses]
        clauses = {f"{a}.{b}" for a, b in numbers}
        sections = {str(s.number) for s in outline.sections}
        if lang == "en":
            heads = [int(n) for n in re.findall(r"^## (\d+)\. ", md, re.M)]
            assert heads == list(range(1, len(heads) + 1))
            for ref in re.findall(r"\bclause (\d+(?:\.\d+)?)", md):
                assert ref in (clauses if "." in ref else sections), f"clause {ref} is cited"
        else:
            heads = re.findall(r"^## 第(\S+)条\u3000", md, re.M)
            assert heads == [chinese_numeral(n) for n in range(1, len(heads) + 1)]
            for ref in re.findall(r"第 (\d+\.\d+) 条", md):
                assert ref in clauses, f"第 {ref} 条 is cited"


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_finding_is_in_the_memo(name: str) -> None:
    """The memo lists each finding of the review once, in the glance table and in full: as many
    as `slacheck lint` finds, each with its code and field."""
    contract = ALL[name]
    findings = review(contract)
    for lang in LANGS:
        md = render_memo(contract, lang=lang, fmt=DocFormat.MD).decode()
        rows = re.findall(r"^\| [^|]+ \| (SLA\d{3}) \| [^|]+ \| `([^`]+)` \|", md, re.M)
        assert sorted(rows) == sorted((f.code, f.path) for f in findings), lang
        assert len(re.findall(r"^### SLA\d{3} · ", md, re.M)) == len(findings)
        html = render_memo(contract, lang=lang, fmt=DocFormat.HTML).decode()
        assert html.count('<aside class="note') == len(findings)
        for f in findings:
            assert f"<code>{f.code}</code>" in html


def test_the_weak_draft_states_only_what_the_contract_says() -> None:
    weak = ALL["weak-vendor-draft"]
    md = render_draft(weak, lang="en", fmt=DocFormat.MD).decode()
    # no assumed task size, no time-zone clause, no peak section, no reviewer table
    assert "model calls per agent task" not in md and "assumed" not in md
    assert "**1.2** The service levels cover calls within this scope" in md
    assert "Peak degradation" not in md and "Reviewer notes" not in md
    assert "## 4. Rate-limit basis" in md and "**4.1**" in md and "**4.2**" not in md
    assert "calls during maintenance: every Wednesday from 10:00 for 120 minutes;" in md
    # the memo has what the draft leaves out, with the clause each point concerns
    memo = render_memo(weak, lang="en", fmt=DocFormat.MD).decode()
    assert "Review memo · not part of the contract" in memo
    assert "| SLA402 | (4) | `rate_limit.steps_per_task` |" in memo
    assert "| SLA301 | — | `peak` |" in memo
    assert "| SLA101 | 2.1 | `latency[0].measurement_point` |" in memo
    assert "clause 2.1 (Measurement point), term S1-server-p99" in memo
    zh = render_memo(weak, lang="zh", fmt=DocFormat.MD).decode()
    assert "审阅备忘录 · 非合同文件" in zh and "| SLA402 | （第四条） |" in zh
    assert "第 2.1 条（计量点），条款 S1-server-p99" in zh


def test_a_stated_task_size_is_restated_and_an_unstated_one_is_not() -> None:
    stated = render_draft(ALL["hyperscaler-availability-credits"], lang="en", fmt=DocFormat.MD)
    assert "**5.2** At 8 model calls per agent task, this limit equals 250 agent tasks" in (
        stated.decode()
    )
    strong = render_draft(ALL["strong-cn-task-e2e"], lang="zh", fmt=DocFormat.MD).decode()
    assert "次模型调用计" not in strong and "假设" not in strong
    assert "**5.2** 客户流量未超过上述上限时发生的限流，计为失败调用（见第六条）。" in strong


def test_memo_entries_place_findings_in_the_outline() -> None:
    weak = ALL["weak-vendor-draft"]
    where = {(e.finding.code, e.finding.path): e.where for e in memo_entries(weak)}
    assert where[("SLA504", "latency[0].min_samples")].clause == "2.1"
    assert where[("SLA604", "credits.claim_deadline_days")].drafted is False
    assert where[("SLA301", "peak")].section is None
    assert where[("SLA605", "exclusions.max_input_tokens")].drafted is True


def test_chinese_numerals() -> None:
    assert [chinese_numeral(n) for n in (1, 7, 10, 11, 20, 23)] == [
        "一",
        "七",
        "十",
        "十一",
        "二十",
        "二十三",
    ]


def test_memo_command_cites_lines_and_exits_as_lint(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    runner = CliRunner()
    out = tmp_path / "memo.md"
    result = runner.invoke(app, ["memo", str(CONTRACTS / "weak-vendor-draft.yaml"), "-o", str(out)])
    assert result.exit_code == 1, result.output
    text = out.read_text(encoding="utf-8")
    assert "`latency[0].measurement_point`, line " in text
    assert "`contract.time_zone` (not written in the contract file)" in text
    assert "SHA-256 `" in text and "of the file's bytes" in text
    zh = tmp_path / "memo.zh.html"
    result = runner.invoke(
        app, ["memo", str(CONTRACTS / "strong-cn-task-e2e.yaml"), "-o", str(zh), "--lang", "zh"]
    )
    assert result.exit_code == 1 and "已写入" in result.output, result.output
    assert "审阅备忘录（非合同文件）" in zh.read_text(encoding="utf-8")
    helped = runner.invoke(app, ["memo", "--help"])
    assert helped.exit_code == 0 and "not part of the contract" in helped.output
    drafted = runner.invoke(app, ["draft", "--help"])
    assert "contract language only" in drafted.output and "reviewer notes" not in drafted.output
