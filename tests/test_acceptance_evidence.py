"""The acceptance document's evidence package: how long it is kept and by whom (contract field
`acceptance`, or the stated default), and how each verdict counts; the draft's remedies per
term kind, in both languages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slacheck.contract.load import load_contract
from slacheck.contract.model import (
    DEFAULT_EVIDENCE_RETENTION_MONTHS,
    Acceptance,
    Contract,
    EvidenceKeeper,
)
from slacheck.render.documents import DocFormat, contract_sha256, render_accept, render_draft
from slacheck.render.inputs import AcceptInputs
from tests.langcheck import english_runs

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "contracts" / "strong-cn-task-e2e.yaml"


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract(CONTRACT)


def _with(contract: Contract, **acceptance: Any) -> Contract:
    return contract.model_copy(update={"acceptance": Acceptance(**acceptance)})


def _accept(contract: Contract, lang: str, fmt: DocFormat = DocFormat.MD) -> str:
    return render_accept(AcceptInputs(contract), lang=lang, fmt=fmt).decode("utf-8")


def _evidence_section(text: str, lang: str) -> str:
    start = text.index("## 13." if lang == "en" else "## 十三、")
    end = text.index("## 14." if lang == "en" else "## 十四、", start)
    return text[start:end]


def test_unset_acceptance_states_the_default_and_keeps_the_contract_hash(
    contract: Contract,
) -> None:
    assert contract.acceptance is None
    en = _evidence_section(_accept(contract, "en"), "en")
    assert f"and {DEFAULT_EVIDENCE_RETENTION_MONTHS} months after it ends" in en
    assert "Both parties keep" in en
    assert "so the defaults apply" in en
    zh = _evidence_section(_accept(contract, "zh"), "zh")
    assert f"届满后 {DEFAULT_EVIDENCE_RETENTION_MONTHS} 个月内" in zh
    assert "适用默认规则" in zh
    # a contract without the section hashes as before it existed; with it, the hash covers it
    stated = _with(contract, evidence_retention_months=DEFAULT_EVIDENCE_RETENTION_MONTHS)
    assert contract_sha256(stated) != contract_sha256(contract)
    assert contract_sha256(contract) == contract_sha256(
        _with(contract).model_copy(update={"acceptance": None})
    )


@pytest.mark.parametrize(
    ("keeper", "en_phrase", "zh_phrase"),
    [
        (EvidenceKeeper.CUSTOMER, "The Customer keeps", "客户应在"),
        (EvidenceKeeper.VENDOR, "The Vendor keeps", "供应商应在"),
        (EvidenceKeeper.BOTH, "Both parties keep", "双方应在"),
    ],
)
def test_stated_retention_and_keeper_are_the_contracts(
    contract: Contract, keeper: EvidenceKeeper, en_phrase: str, zh_phrase: str
) -> None:
    c = _with(contract, evidence_retention_months=84, evidence_kept_by=keeper)
    en = _evidence_section(_accept(c, "en"), "en")
    assert en_phrase in en and "84 months after it ends" in en
    assert "those the contract states" in en and "default" not in en
    zh = _evidence_section(_accept(c, "zh"), "zh")
    assert zh_phrase in zh and "届满后 84 个月内" in zh and "依合同约定" in zh
    assert "默认" not in zh


def test_one_stated_field_names_the_default_of_the_other(contract: Contract) -> None:
    months_only = _evidence_section(
        _accept(_with(contract, evidence_retention_months=1), "en"), "en"
    )
    assert "1 month after it ends" in months_only  # singular
    assert "`acceptance.evidence_retention_months`" in months_only
    assert "so both parties do (the default)" in months_only
    keeper_only = _evidence_section(
        _accept(_with(contract, evidence_kept_by=EvidenceKeeper.VENDOR), "en"), "en"
    )
    assert "The Vendor keeps" in keeper_only
    assert f"the default of {DEFAULT_EVIDENCE_RETENTION_MONTHS} months" in keeper_only


@settings(max_examples=25, deadline=None)
@given(
    months=st.one_of(st.none(), st.integers(1, 1200)),
    keeper=st.one_of(st.none(), st.sampled_from(list(EvidenceKeeper))),
)
def test_the_chinese_evidence_section_has_no_english_sentence(
    contract: Contract, months: int | None, keeper: EvidenceKeeper | None
) -> None:
    c = _with(contract, evidence_retention_months=months, evidence_kept_by=keeper)
    zh = _evidence_section(_accept(c, "zh"), "zh")
    want = months if months is not None else DEFAULT_EVIDENCE_RETENTION_MONTHS
    assert f" {want:,} 个月" in zh
    assert english_runs(zh) == [], english_runs(zh)


@pytest.mark.parametrize("bad", [0, 1201, "two years"])
def test_retention_months_out_of_range_is_refused(contract: Contract, bad: object) -> None:
    with pytest.raises(ValueError, match="evidence_retention_months"):
        Contract.model_validate(
            {**contract.model_dump(mode="json"), "acceptance": {"evidence_retention_months": bad}}
        )


def test_an_unknown_keeper_is_refused(contract: Contract) -> None:
    with pytest.raises(ValueError, match="evidence_kept_by"):
        Contract.model_validate(
            {**contract.model_dump(mode="json"), "acceptance": {"evidence_kept_by": "auditor"}}
        )


@pytest.mark.parametrize(
    ("lang", "rows"),
    [
        ("en", ["| met | pass |", "| breached | fail |", "| no data | not accepted |"]),
        ("zh", ["| 达标 | 通过 |", "| 未达标 | 不通过 |", "| 无数据 | 不予验收 |"]),
    ],
)
def test_acceptance_says_how_each_verdict_counts(
    contract: Contract, lang: str, rows: list[str]
) -> None:
    text = _accept(contract, lang)
    for row in rows:
        assert row in text, row


@pytest.mark.parametrize(
    ("lang", "phrases", "unsaid"),
    [
        ("en", ["the service credit of the tier in clause 6.3"], "agreed case by case"),
        ("zh", ["按第 6.3 条所属档位给予服务赔偿"], "须由双方另行协商"),
    ],
)
@pytest.mark.parametrize("fmt", [DocFormat.MD, DocFormat.HTML])
def test_the_draft_states_only_the_remedy_the_contract_gives(
    contract: Contract, lang: str, phrases: list[str], unsaid: str, fmt: DocFormat
) -> None:
    """The availability credit is the contract's remedy; for the other term kinds the contract
    states none, and the draft (contract language only) invents none: the gap is the memo's."""
    text = render_draft(contract, lang=lang, fmt=fmt).decode("utf-8")
    for phrase in phrases:
        assert phrase in text, phrase
    assert unsaid not in text
