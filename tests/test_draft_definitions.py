"""The draft's definitions (issue 24, item 7): each from a contract field, stated the way the
check applies it; where the contract leaves one open, the draft says nothing invented and the
review flags it (SLA701–SLA707). Both languages, both document families."""

from __future__ import annotations

import io
from typing import Any

import pytest
from ruamel.yaml import YAML

from slacheck.contract.load import load_contract_text
from slacheck.contract.model import Contract
from slacheck.contract.review import review
from slacheck.render.documents import DocFormat, render_draft

IDENTITY = {
    "id": "T-1",
    "vendor": "Example Cloud",
    "customer": "Example Customer",
    "effective": {"start": "2026-01-01"},
    "time_zone": "Asia/Shanghai",
}
AVAILABILITY = {"target_percent": 99.9}
CREDITS = {"tiers": [{"from_percent": 0, "to_percent": 99.9, "credit_percent": 10}]}
TASK_TERM = {
    "id": "L1",
    "measurement_point": "task_end_to_end",
    "objective": {"kind": "occurrence", "percentile": 95, "threshold": 30000},
}
FAILOVER = {
    "primary": [{"name": "cn-shanghai"}],
    "failover": [{"name": "cn-beijing", "jurisdiction": {"country": "CN"}}],
}


def _contract(**sections: Any) -> Contract:
    data = {"contract": IDENTITY, **sections}
    buf = io.StringIO()
    YAML(typ="safe").dump(data, buf)
    return load_contract_text(buf.getvalue(), "definitions.yaml")


def _draft(contract: Contract, lang: str, fmt: DocFormat = DocFormat.MD) -> str:
    return render_draft(contract, lang=lang, fmt=fmt).decode()


def _clauses(contract: Contract, lang: str) -> str:
    """The Markdown draft's clause text: without the reviewer notes (quoted blocks) and the
    notes table, which quote the findings."""
    lines = _draft(contract, lang).splitlines()
    return "\n".join(ln for ln in lines if not ln.startswith((">", "| ")))


def _codes(contract: Contract) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in review(contract):
        out.setdefault(f.code, []).append(f.path)
    return out


# ---------------------------------------------------------------------------------------------
# Timeout


@pytest.mark.parametrize("fmt", [DocFormat.MD, DocFormat.HTML])
def test_timeout_states_the_client_timeout(fmt: DocFormat) -> None:
    c = _contract(availability={**AVAILABILITY, "failures": {"timeout_ms": 45000}})
    en, zh = _draft(c, "en", fmt), _draft(c, "zh", fmt)
    assert "within the client timeout of 45,000 ms (45 s); it counts as a failure" in en
    assert "客户端超时时长 45,000 毫秒（45 秒）内收到完整响应" in zh and "计为失败" in zh
    assert "in time" not in en
    assert "SLA701" not in _codes(c)


def test_timeout_without_a_duration_says_none_and_is_flagged() -> None:
    c = _contract(availability=AVAILABILITY)
    en, zh = _clauses(c, "en"), _clauses(c, "zh")
    assert "a call recorded in its trace as timed out (HTTP 408 or 504, or the client's " in en
    assert "client timeout of" not in en and "in time" not in en
    assert "客户端超时时长" not in zh and "时限内" not in zh
    assert _codes(c)["SLA701"] == ["availability.failures.timeout_ms"]


def test_timeout_that_does_not_count_says_so() -> None:
    c = _contract(availability={**AVAILABILITY, "failures": {"timeouts": False}})
    assert "; it does not count as a failure." in _draft(c, "en")
    assert "，不计为失败。" in _draft(c, "zh")
    assert "SLA701" not in _codes(c)


# ---------------------------------------------------------------------------------------------
# A call with no recorded status, a successful task


def test_status_less_call_is_defined_as_the_metering_counts_it() -> None:
    c = _contract()
    assert (
        "**Call with no recorded status**: a call whose trace records neither success nor "
        "failure (OpenTelemetry leaves the status of a successful call unset); it counts as a "
        "success in every clause." in _draft(c, "en")
    )
    assert "**未记录状态的调用**：" in _draft(c, "zh") and "在各条款中均计为成功" in _draft(c, "zh")


def test_successful_task_says_which_tasks_are_left_out() -> None:
    removed = _contract(latency=[TASK_TERM])
    en, zh = _draft(removed, "en"), _draft(removed, "zh")
    assert "**Successful task**" in en
    assert "a task whose root span records a failure counts as failed and is left out" in en
    # this contract's draft has three sections (parties, the latency term, exclusions): the
    # definition cites them by the numbers the draft gives them
    assert "left out of the task-level terms of clause 2" in en
    assert "a task with an excluded call (clause 3) is left out of them as well" in en
    assert "**成功任务**" in zh and "含排除调用（第三条）的任务同样不予计入" in zh
    kept = _contract(latency=[TASK_TERM], readings={"excluded_calls_in_task_terms": "remove_call"})
    assert "stays in, its time including that call" in _draft(kept, "en")
    assert "仍予计入，其耗时包含该调用" in _draft(kept, "zh")


def test_successful_task_only_with_a_task_term() -> None:
    c = _contract()
    assert "Successful task" not in _draft(c, "en") and "成功任务" not in _draft(c, "zh")


# ---------------------------------------------------------------------------------------------
# Peak


def test_ex_ante_peak_is_known_as_the_minute_ends() -> None:
    c = _contract(
        regions=FAILOVER,
        routing={"cross_region": "peak_only"},
        peak={
            "definition": {"kind": "request_rate", "requests_per_minute": 300},
            "degradation": {"queue": {"max_wait_ms": 2000}},
        },
    )
    en = _draft(c, "en")
    assert "**Peak minute**: a clock minute, from second 0 to the next minute in UTC" in en
    assert "whether a minute is peak is known when it ends" in en
    assert "在该分钟结束时即可确定" in _draft(c, "zh")
    assert "SLA706" not in _codes(c)


@pytest.mark.parametrize("fmt", [DocFormat.MD, DocFormat.HTML])
def test_busiest_minutes_peak_is_known_only_after_the_month_and_flagged(fmt: DocFormat) -> None:
    c = _contract(
        regions=FAILOVER,
        routing={"cross_region": "peak_only"},
        peak={"definition": {"kind": "busiest_minutes", "percent": 5}},
    )
    en, zh = _draft(c, "en", fmt), _draft(c, "zh", fmt)
    assert (
        "which minutes are peak is known only once the calendar month (in the time zone "
        "Asia/Shanghai) has ended" in en
    )
    assert "须待自然月（按时区 Asia/Shanghai）结束后依整月流量方可确定" in zh
    assert _codes(c)["SLA706"] == ["peak.definition"]


def test_no_peak_no_peak_minute() -> None:
    assert "Peak minute" not in _draft(_contract(), "en")


# ---------------------------------------------------------------------------------------------
# The rate-limit clock


def test_rate_limit_minute_is_a_utc_minute() -> None:
    c = _contract(rate_limit={"basis": "per_task", "limit": 60, "period": "minute"})
    en, zh = _draft(c, "en"), _draft(c, "zh")
    assert (
        "**Rate-limit period**: each clock minute, from second 0 to the next minute in UTC "
        "(minute boundaries are the same in every time zone); a task with an in-scope call "
        "counts once, in the period in which it starts." in en
    )
    assert "**限流周期**：按 UTC 划分、自第 0 秒起至下一分钟止的每一自然分钟" in zh
    assert "SLA707" not in _codes(c)


def test_rate_limit_day_is_a_utc_day_and_flagged_in_another_zone() -> None:
    c = _contract(
        rate_limit={"basis": "per_request", "limit": 10000, "period": "day"},
    )
    assert "each day, from 00:00 to 24:00 UTC; each in-scope call counts in the period" in (
        _draft(c, "en")
    )
    assert "按 UTC 划分、自 00:00 至 24:00 的每一天" in _draft(c, "zh")
    assert _codes(c)["SLA707"] == ["rate_limit.period"]
    (f,) = [f for f in review(c) if f.code == "SLA707"]
    assert "in Asia/Shanghai (UTC+08:00)" in f.explanation


def test_rate_limit_counts_active_tasks_in_every_period() -> None:
    c = _contract(
        rate_limit={"basis": "per_task", "limit": 60},
        readings={"per_task_rate_counts": "active"},
    )
    assert "counts in every period from the one it starts in to the one it ends in" in (
        _draft(c, "en")
    )


# ---------------------------------------------------------------------------------------------
# Notices and claims, remedies and precedence


def test_notice_and_claim_channels_are_the_contracts_words() -> None:
    c = _contract(
        availability=AVAILABILITY,
        credits=CREDITS,
        notices={"channel": "by email to sla@vendor.example", "claims": "through the portal"},
    )
    en, zh = _draft(c, "en"), _draft(c, "zh")
    assert "**Notice**: a notice under these clauses is given by email to sla@vendor.example." in en
    assert "**Claim**: a claim for a service credit is sent through the portal." in en
    assert "本条款项下的通知按以下方式发出（原文）：by email to sla@vendor.example" in zh
    assert "服务赔偿申请按以下方式提交（原文）：through the portal" in zh
    assert "SLA702" not in _codes(c)


def test_claims_go_by_the_notice_channel_when_unsaid() -> None:
    c = _contract(availability=AVAILABILITY, credits=CREDITS, notices={"channel": "by email"})
    assert "a claim for a service credit is sent as a notice is given" in _draft(c, "en")
    assert "服务赔偿申请按通知的发出方式提交" in _draft(c, "zh")


def test_no_notice_channel_no_definition_and_flagged() -> None:
    c = _contract(availability=AVAILABILITY, credits=CREDITS)
    en, zh = _clauses(c, "en"), _clauses(c, "zh")
    assert "**Notice**" not in en and "**Claim**" not in en
    assert "**通知**" not in zh and "**赔偿申请**" not in zh
    assert _codes(c)["SLA702"] == ["notices"]


@pytest.mark.parametrize("fmt", [DocFormat.MD, DocFormat.HTML])
def test_sole_remedy_and_precedence_are_stated_in_clause_1_6(fmt: DocFormat) -> None:
    c = _contract(
        availability=AVAILABILITY,
        credits={**CREDITS, "sole_remedy": True},
        precedence=["these clauses", "the master agreement"],
    )
    en, zh = _draft(c, "en", fmt), _draft(c, "zh", fmt)
    assert "1.6" in en and "Remedies and precedence." in en
    assert "Service credits are the Customer's sole and exclusive remedy" in en.replace(
        "&#39;", "'"
    )
    assert "they prevail in this order: (1) these clauses; (2) the master agreement." in en
    assert "唯一且排他的救济方式" in zh
    assert "按以下顺序优先适用（原文）：（1）these clauses；（2）the master agreement。" in zh
    codes = _codes(c)
    assert "SLA703" not in codes and "SLA704" not in codes


def test_credits_not_the_sole_remedy() -> None:
    c = _contract(availability=AVAILABILITY, credits={**CREDITS, "sole_remedy": False})
    assert "Service credits are without prejudice to the Customer's other rights" in _draft(c, "en")
    assert "服务赔偿不影响客户" in _draft(c, "zh")


def test_unstated_remedy_and_precedence_say_nothing_and_are_flagged() -> None:
    c = _contract(availability=AVAILABILITY, credits=CREDITS)
    en, zh = _clauses(c, "en"), _clauses(c, "zh")
    assert "**1.6**" not in en and "Remedies and precedence" not in en
    assert "救济方式与优先顺序" not in zh
    assert "sole remedy" not in en and "sole and exclusive" not in en
    assert "唯一救济" not in zh and "唯一且排他" not in zh
    codes = _codes(c)
    assert codes["SLA703"] == ["credits.sole_remedy"] and codes["SLA704"] == ["precedence"]


# ---------------------------------------------------------------------------------------------
# Indeterminate and no data


def test_undecided_verdicts_mean_what_the_contract_says() -> None:
    c = _contract(verdicts={"indeterminate": "breached", "no_data": "met"})
    en, zh = _draft(c, "en"), _draft(c, "zh")
    assert (
        "on the other; such a window counts as breached: the Vendor owes the credit a breach "
        "earns and the Customer may claim it." in en
    )
    assert (
        "minimum sample; such a window counts as met: the Vendor owes no credit for it and the "
        "Customer has no claim for it." in en
    )
    assert "该统计周期视为未达标" in zh and "该统计周期视为达标" in zh
    assert "SLA705" not in _codes(c)


def test_review_and_not_assessed() -> None:
    c = _contract(verdicts={"indeterminate": "review", "no_data": "not_assessed"})
    en = _draft(c, "en")
    assert "either party may ask the other for a joint review of its evidence" in en
    assert "the term is not assessed for such a window" in en
    zh = _draft(c, "zh")
    assert "共同复核该周期的证据" in zh and "不予评定" in zh


def test_unstated_verdict_meaning_defines_the_verdict_only_and_is_flagged() -> None:
    c = _contract()
    en, zh = _clauses(c, "en"), _clauses(c, "zh")
    assert "**Indeterminate**: the verdict of a window the evidence cannot settle" in en
    assert "**No data**: the verdict of a window with nothing in scope to measure" in en
    assert "such a window" not in en and "not assessed" not in en
    assert "**无法判定**：" in zh and "**无数据**：" in zh and "该统计周期视为" not in zh
    assert _codes(c)["SLA705"] == ["verdicts.indeterminate", "verdicts.no_data"]
