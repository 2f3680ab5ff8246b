"""The compliance report in both languages from one template per format: what it must state
(claims per window as of the issue date, credits in money, coverage as decided vs no-data,
one calls-per-task figure), formatted by the locale, with charts worded from the catalogue."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from babel.dates import format_date
from babel.numbers import get_group_symbol
from hypothesis import given
from hypothesis import strategies as st

from slacheck.checks.availability import AvailabilitySays
from slacheck.contract.load import load_contract
from slacheck.contract.model import Contract
from slacheck.prepare import prepare_report
from slacheck.render import charts
from slacheck.render.documents import DocFormat, money, render_report
from slacheck.render.format import Formatter
from slacheck.render.inputs import ReportInputs
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.verdict import TermResult, Verdict
from tests.langcheck import english_runs

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "contracts" / "hyperscaler-availability-credits.yaml"
ISSUED = dt.date(2026, 11, 15)
UTC = ZoneInfo("UTC")


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract(CONTRACT)


@pytest.fixture(scope="module")
def base(contract: Contract, tmp_path_factory: pytest.TempPathFactory) -> ReportInputs:
    path = tmp_path_factory.mktemp("report-i18n") / "traffic.parquet"
    start = dt.datetime(2026, 7, 20, tzinfo=dt.UTC)
    write(generate(TrafficProfile(tasks=80, days=10, seed=11, start=start)), path, "parquet")
    return prepare_report(contract, ingest([path]), period="2026-Q3", issued=ISSUED)


def _availability(
    window: str, verdict: str, observed: float | None, **details: object
) -> TermResult:
    return TermResult(
        "availability",
        "availability",
        window,
        Verdict(verdict),
        observed,
        "%",
        AvailabilitySays.CRITERION(target=99.9, failures=[AvailabilitySays.TIMEOUTS()]),
        990,
        1000,
        details=dict(details),
    )


@pytest.fixture(scope="module")
def claimed(base: ReportInputs) -> ReportInputs:
    """Three credited months as of 15 November 2026: July's deadline has passed, August's
    has not, September's contract states none; and one window with no data."""
    results = (
        _availability(
            "2026-07", "breached", 99.1, credit_percent=25.0, claim_deadline="2026-09-29"
        ),
        _availability(
            "2026-08", "breached", 99.5, credit_percent=10.0, claim_deadline="2026-11-29"
        ),
        _availability("2026-09", "breached", 99.6, credit_percent=10.0),
        dataclasses.replace(
            _availability("2026-09", "no_data", None), term_id="other", partial_window=True
        ),
    )
    ev = dataclasses.replace(base.evaluation, results=results)
    return dataclasses.replace(base, evaluation=ev)


def _claims_rows(md: str) -> list[list[str]]:
    heading = re.search(r"^### .*$", md, re.M)
    assert heading is not None
    after = md[heading.end() :]
    assert after.startswith("\n\n| "), "a Markdown table needs a blank line after the heading"
    lines = after.strip().splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


@pytest.mark.parametrize(
    ("lang", "status"),
    [
        (
            "en",
            {
                "2026-07": "expired — the deadline, 29 September 2026, passed before this report "
                "was issued",
                "2026-08": "due — claim by 29 November 2026",
                "2026-09": "due — the contract states no deadline",
            },
        ),
        (
            "zh",
            {
                "2026-07": "已过期：申请截止日 2026年9月29日 已在本报告签发前届满",
                "2026-08": "待申请：须于 2026年11月29日 前提出申请",
                "2026-09": "待申请：合同未约定申请期限",
            },
        ),
    ],
)
def test_claims_per_window_as_of_the_issue_date_in_money(
    claimed: ReportInputs, contract: Contract, lang: str, status: dict[str, str]
) -> None:
    fmt = Formatter(lang, contract.zone)  # type: ignore[arg-type]
    md = render_report(claimed, lang=lang, fmt=DocFormat.MD).decode()
    rows = _claims_rows(md)
    assert [r[0] for r in rows] == [fmt.window_short(w) for w in status]
    fees = contract.fees
    assert fees is not None
    for row, (window, want) in zip(rows, status.items(), strict=True):
        percent = {"2026-07": 25.0}.get(window, 10.0)
        assert row[1] == fmt.pct(percent)
        assert row[2] == money(fees.monthly * percent / 100, fees.currency, lang)  # via `fees`
        assert row[4] == want, (window, row)
    html = render_report(claimed, lang=lang, fmt=DocFormat.HTML).decode()
    assert fmt.date(ISSUED) in html.split("claims fixed", 1)[0].rsplit("<h3>", 1)[1]
    assert money(fees.monthly, fees.currency, lang) in html  # the fee the amounts derive from


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_yen_contract_s_credits_are_whole_yen(
    claimed: ReportInputs, contract: Contract, lang: str
) -> None:
    """JPY has no minor unit: 25 % of ¥1,234 (308.5) is owed as ¥309 and 10 % (123.4) as ¥123,
    and neither the amounts nor the fee they derive from are written with decimals."""
    from slacheck.contract.credits import Fees

    yen = contract.model_copy(update={"fees": Fees(monthly=1_234, currency="JPY")})
    inputs = dataclasses.replace(claimed, contract=yen)
    rows = _claims_rows(render_report(inputs, lang=lang, fmt=DocFormat.MD).decode())
    assert [r[2] for r in rows] == ["JPY\u00a0309", "JPY\u00a0123", "JPY\u00a0123"]
    html = render_report(inputs, lang=lang, fmt=DocFormat.HTML).decode()
    assert "JPY\u00a01,234" in html and "JPY\u00a01,234.00" not in html
    assert "JPY\u00a0309<" in html


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_coverage_counts_decided_and_no_data_windows(claimed: ReportInputs, lang: str) -> None:
    for fmt in (DocFormat.MD, DocFormat.HTML):
        text = render_report(claimed, lang=lang, fmt=fmt).decode()
        text = re.sub(r"</?strong>|\*\*", "", text)
        if lang == "en":
            want = "Of 4 term-windows in the period, 3 were decided (3 breached, 0 met)"
            assert want in text and "1 have no data" in text
            assert "were checked" not in text
        else:
            assert "报告期内共 4 个“条款 × 统计周期”，其中 3 个已得出结论" in text
            assert "无数据 1 个" in text


def test_one_calls_per_task_figure(base: ReportInputs) -> None:
    figure = Formatter("en", UTC).number(base.budget.steps.mean, 1)
    for fmt in (DocFormat.MD, DocFormat.HTML):
        text = render_report(base, lang="en", fmt=fmt).decode()
        stated = re.findall(r"([\d.,]+) model calls (?:on average|per task)", text)
        assert stated and set(stated) == {figure}, stated


@pytest.mark.parametrize("fmt", [DocFormat.MD, DocFormat.HTML], ids=str)
def test_chinese_report_with_claims_has_no_english_sentence(
    claimed: ReportInputs, contract: Contract, fmt: DocFormat
) -> None:
    text = render_report(claimed, lang="zh", fmt=fmt).decode()
    text = re.sub(r"<svg.*?</svg>", " ", text, flags=re.S)
    data = (
        contract.contract.vendor,
        contract.contract.customer,
        *(t.description for t in contract.latency if t.description),
    )
    assert english_runs(text, allowed=data) == []
    if fmt is DocFormat.HTML:  # the page footer, from the catalogue too
        assert 'content: "第 " counter(page) " 页，共 " counter(pages) " 页";' in text


# ---------------------------------------------------------------------------------------------
# formatting by locale


@given(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2999, 12, 31)))
def test_dates_follow_the_locale(d: dt.date) -> None:
    assert Formatter("zh", UTC).date(d) == format_date(d, "long", locale="zh_CN")
    assert dt.datetime.strptime(Formatter("en", UTC).date(d), "%d %B %Y").date() == d


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_counts_group_digits_by_the_locale(n: int) -> None:
    for lang, locale in (("en", "en"), ("zh", "zh_CN")):
        text = Formatter(lang, UTC).count(n)  # type: ignore[arg-type]
        assert int(text.replace(get_group_symbol(locale), "")) == n
        assert all(len(g) == 3 for g in text.lstrip("-").split(get_group_symbol(locale))[1:])


def test_share_of_slices_is_worded_in_each_language() -> None:
    assert Formatter("en", UTC).observed(99.43, "% of slices") == "99.43 % of slices"
    zh = Formatter("zh", UTC).observed(99.43, "% of slices")
    assert zh.startswith("99.43%") and not re.search(r"[A-Za-z]", zh)


# ---------------------------------------------------------------------------------------------
# charts: every word from the catalogue, in the document's language


def _svg_text(svg: str) -> str:
    return (
        " ".join(re.findall(r">([^<>]+)</text>", svg))
        + " "
        + re.findall(r'aria-label="([^"]*)"', svg)[0]
    )


def test_chart_words_are_chinese_in_a_chinese_document() -> None:
    zh, en = Formatter("zh", UTC), Formatter("en", UTC)
    rng = np.random.default_rng(5)
    d = charts.Distribution(
        term_id="L4-tps",
        values=np.sort(rng.uniform(10, 90, 400)),
        threshold=40.0,
        at_most=False,
        unit="tokens/s",
        percentile=None,
        measured_at="output_tokens_per_second",
        bound="mixed",
        monthly=(),
        unit_word="tasks",
    )
    peak = [charts.PeakPoint("2026-07", 1200.0, None, 0)]
    drawn = {
        lang: [
            charts.latency_distribution(d, f),
            charts.time_breakdown([("model", 900.0, 0.6), ("tool", 600.0, 0.4)], f),
            charts.time_breakdown([], f),
            charts.monthly_compliance([], [], f),
            charts.peak_vs_off_peak(peak, f),
            charts.peak_vs_off_peak([], f),
        ]
        for lang, f in (("zh", zh), ("en", en))
    }
    for svg in drawn["zh"]:
        words = _svg_text(svg).replace("L4-tps", " ")
        assert not re.search(r"[A-Za-z]{3,}", words.replace("Token", "")), words
    # the same charts in English carry the English wording
    english = " ".join(_svg_text(s) for s in drawn["en"])
    for phrase in ("(a bound where not recorded) (tokens/s)", "tasks (n = 400)", "off-peak"):
        assert phrase in english
