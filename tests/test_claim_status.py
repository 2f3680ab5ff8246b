"""One claim status per window (issue 24, item 4): due, expired, claimed or none, as of the
document's issue date, computed once (``slacheck.render.credit``) and shown the same by the
report's summary, its claims table and section 7, the claim pack (claim.json and both letters)
and the terminal; and a draft claim procedure each month can comply with on its own."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.contract.load import load_contract
from slacheck.prepare import prepare_report
from slacheck.render.documents import DocFormat, render_draft, render_report
from slacheck.render.inputs import ReportInputs
from slacheck.trace.ingest import ingest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "slacheck" / "contract" / "starters" / "demo.yaml"
runner = CliRunner()

#: the status word in each language, as every document and the terminal say it
WORD = {
    "due": {"en": "due", "zh": "待申请"},
    "expired": {"en": "expired", "zh": "已过期"},
    "claimed": {"en": "claimed", "zh": "已申请"},
    "none": {"en": "no credit", "zh": "无服务赔偿"},
}
#: the report summary's sentence for each status (None: no sentence, no claims table)
SUMMARY = {
    "due": {"en": "A service credit is due for 1 month", "zh": "有 1 个月份的服务赔偿待申请"},
    "expired": {
        "en": "The claim deadline for 1 month's credit passed before this report was issued",
        "zh": "有 1 个月份的服务赔偿申请期限已在本报告签发前届满",
    },
    "claimed": {
        "en": "The credit for 1 month has been claimed",
        "zh": "有 1 个月份的服务赔偿已申请",
    },
    "none": None,
}
JULY = {"en": "Jul 2026", "zh": "2026年7月"}

#: (contract, issue date, --claimed, the July status): the July credit of the demo contract
#: (10 %, claim by 30 August 2026) before and after its deadline, claimed, and a contract whose
#: tiers the month never reaches
CASES = [
    ("demo", "2026-08-15", [], "due"),
    ("demo", "2026-08-30", [], "due"),  # the deadline day itself: still due
    ("demo", "2026-08-31", [], "expired"),
    ("demo", "2026-09-30", ["2026-07"], "claimed"),
    ("lenient", "2026-08-15", [], "none"),
]


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("claim-status") / "july.parquet"
    write(generate(TrafficProfile(tasks=150, days=31, seed=11)), path, "parquet")
    return path


@pytest.fixture(scope="module")
def contracts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    lenient = tmp_path_factory.mktemp("lenient") / "lenient.yaml"
    text = DEMO.read_text(encoding="utf-8").replace("target_percent: 99.5", "target_percent: 50")
    text = re.sub(
        r"  tiers:\n(    - .*\n)+",
        "  tiers:\n    - {from_percent: 0, to_percent: 50, credit_percent: 10}\n",
        text,
    )
    lenient.write_text(text, encoding="utf-8")
    return {"demo": DEMO, "lenient": lenient}


@pytest.fixture(scope="module")
def reports(month: Path, contracts: dict[str, Path]) -> dict[str, ReportInputs]:
    """Each contract's quarterly report inputs, prepared once (the status is re-derived from
    the issue date and the claimed windows at render time, so each case replaces only those)."""
    traces = ingest([month])
    return {
        name: prepare_report(
            load_contract(path), traces, period="2026-Q3", issued=dt.date(2026, 8, 15)
        )
        for name, path in contracts.items()
    }


def _cell_rows(md: str, first: str) -> list[list[str]]:
    """Every Markdown table row whose first cell is ``first``, as cells."""
    rows = []
    for line in md.splitlines():
        if line.startswith("| "):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] == first:
                rows.append(cells)
    return rows


def _claim(contract: Path, month: Path, out: Path, issued: str, claimed: list[str]) -> object:
    args = ["claim", str(contract), str(month), "--period", "2026-07", "-o", str(out)]
    args += ["--issued", issued]
    for w in claimed:
        args += ["--claimed", w]
    return runner.invoke(app, args)


@pytest.mark.parametrize(("contract", "issued", "claimed", "status"), CASES)
def test_report_pack_and_terminal_state_one_status(
    month: Path,
    contracts: dict[str, Path],
    reports: dict[str, ReportInputs],
    tmp_path: Path,
    contract: str,
    issued: str,
    claimed: list[str],
    status: str,
) -> None:
    out = tmp_path / "pack"
    result = _claim(contracts[contract], month, out, issued, claimed)
    # exit 1 only when there is a claim to make
    assert result.exit_code == (1 if status == "due" else 0), result.output  # type: ignore[attr-defined]
    stdout = " ".join(result.stdout.split())  # type: ignore[attr-defined]
    assert f"Claim status for 2026-07 as of {issued}: {WORD[status]['en']}." in stdout

    pack = json.loads((out / "claim.json").read_text(encoding="utf-8"))
    credit = pack["credit"]
    assert (credit["status"], credit["as_of"]) == (status, issued)
    assert credit["due"] is (status == "due")
    assert credit["earned"] is (status != "none")

    inputs = dataclasses.replace(
        reports[contract], issued=dt.date.fromisoformat(issued), claimed=frozenset(claimed)
    )
    for lang in ("en", "zh"):
        word = WORD[status][lang]
        letter = (out / f"letter.{lang}.md").read_text(encoding="utf-8")
        assert f"**{word}**" in letter, (lang, status)
        others = [WORD[s][lang] for s in WORD if s != status]
        assert not any(f"**{w}**" in letter for w in others), (lang, status)

        md = render_report(inputs, lang=lang, fmt=DocFormat.MD).decode()
        html = render_report(inputs, lang=lang, fmt=DocFormat.HTML).decode()
        assert "may be claimed" not in md + html
        rows = _cell_rows(md, JULY[lang])
        # section 7: window, verdict, availability, credit, claim status
        (seven,) = [r for r in rows if len(r) == 5 and "%" in r[2]]
        assert seven[4].startswith(word), (lang, seven)
        said = SUMMARY[status]
        claims = [r for r in rows if len(r) == 5 and "CNY" in r[2]]
        if said is None:
            assert claims == []
            assert 'class="data claims' not in html
            continue
        (table,) = claims  # the claims table: window, credit, amount, claim by, status
        assert table[4].startswith(word) and table[4] == seven[4], (lang, table)
        assert said[lang] in md and said[lang] in html, (lang, status)
        assert f'<td class="claim-{status}">{word}' in html
        # the other statuses' sentences are not said
        for other, text in SUMMARY.items():
            if other != status and text is not None:
                assert text[lang] not in md + html, (lang, status, other)
        # the claim-by date is the pack's
        assert credit["claim_by"] == "2026-08-30"


@pytest.mark.parametrize(
    ("issued", "claimed", "status"),
    [("2026-08-31", [], "expired"), ("2026-09-30", ["2026-07"], "claimed")],
)
def test_the_report_command_says_the_status_on_the_terminal(
    month: Path, tmp_path: Path, issued: str, claimed: list[str], status: str
) -> None:
    args = ["report", str(DEMO), str(month), "--period", "2026-Q3", "-o", str(tmp_path / "r.md")]
    args += ["--issued", issued, *[a for w in claimed for a in ("--claimed", w)]]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    stdout = " ".join(result.stdout.split())
    assert f"Claim status for 2026-07 as of {issued}: {WORD[status]['en']}." in stdout
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    (seven,) = [r for r in _cell_rows(md, "Jul 2026") if len(r) == 5 and "%" in r[2]]
    assert seven[4].startswith(WORD[status]["en"])


def test_claimed_must_name_a_window_of_the_period(
    month: Path, contracts: dict[str, Path], tmp_path: Path
) -> None:
    result = _claim(contracts["demo"], month, tmp_path / "p", "2026-08-15", ["2026-13"])
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "--claimed 2026-13" in result.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize("fmt", [DocFormat.MD, DocFormat.HTML])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_draft_claim_procedure_is_per_month(lang: str, fmt: DocFormat) -> None:
    """§6.5: a month's claim attaches that month's own evidence, not the quarterly report (due
    30 days after each month, months 1 and 2 of a quarter could never attach it)."""
    text = render_draft(load_contract(DEMO), lang=lang, fmt=fmt).decode()
    section = text[text.index("6.5") :]
    section = section[: section.index("6.6")] if "6.6" in section else section[:3000]
    if lang == "en":
        assert "attaches the compliance report" not in section
        assert "does not wait for the quarterly compliance report" in section
        assert "attaches that month's own evidence" in section
    else:
        assert "并附合规报告" not in section
        assert "无需等待季度合规报告" in section
        assert "并附该月份自身的证据" in section


# ---------------------------------------------------------------------------------------------
# Item 10: a figure that is a bound, or sits at the limit, says so in every row


def _rows_for(text: str, term: str) -> list[str]:
    return [line for line in text.splitlines() if term in line and "|" in line]


def _figure_everywhere(contract: object, traces: object, ev: object, term: str) -> dict[str, str]:
    """The term's observed figure as the terminal, check.md and the report (en, zh) show it."""
    from rich.console import Console

    from slacheck.console import evaluation_table
    from slacheck.render.junit import to_junit
    from slacheck.render.markdown import evaluation_markdown

    shown: dict[str, str] = {}
    for lang in ("en", "zh"):
        console = Console(width=250, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(evaluation_table(ev, lang))  # type: ignore[arg-type]
        rows = console.export_text().splitlines()
        (row,) = [x for x in rows if term in x and "│" in x]  # the table's row
        shown[f"terminal.{lang}"] = row
    (row,) = _rows_for(evaluation_markdown(ev), term)  # type: ignore[arg-type]
    shown["check.md"] = row
    shown["junit"] = to_junit(ev)  # type: ignore[arg-type]
    inputs = prepare_report(
        contract,  # type: ignore[arg-type]
        traces,  # type: ignore[arg-type]
        period="2026-07",
        evaluation=ev,  # type: ignore[arg-type]
        issued=dt.date(2026, 8, 1),
    )
    for lang in ("en", "zh"):
        md = render_report(inputs, lang=lang, fmt=DocFormat.MD).decode()
        month = {"en": "Jul 2026", "zh": "2026年7月"}[lang]
        (row,) = [x for x in md.splitlines() if x.startswith(f"| {month}") and "|" in x[3:]]
        shown[f"report.{lang}"] = row.split("|")[3].strip()  # window, verdict, observed
        html = render_report(inputs, lang=lang, fmt=DocFormat.HTML).decode()
        shown[f"report.{lang}.html"] = html
    return shown


def test_a_breach_proven_by_a_bucket_edge_at_the_threshold_says_above(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """p95 ≤ 1,000 ms from server metrics: the p95 lies in (1000, 2500] ms, so it is breached;
    the figure shown is the bucket's lower edge, 1,000 ms, with a gap of 0 — beside "≤ 1,000 ms"
    that reads as met unless the row says "> 1,000 ms"."""
    from slacheck.evaluation import evaluate
    from slacheck.metering import metrics as sm
    from slacheck.trace.otlp_metrics import read_otlp_metrics
    from slacheck.verdict import Verdict
    from tests.test_check_latency import contract_of
    from tests.test_server_metrics import CONTRACT, FIXTURE, _p95_term, _traces

    contract = contract_of({**CONTRACT, "latency": [_p95_term("P-limit", 1000)]})
    traces = _traces(tmp_path_factory.mktemp("edge"))
    ev = evaluate(contract, traces, metrics=sm.MetricsEvidence(read_otlp_metrics([FIXTURE])))
    (r,) = ev.results
    assert (r.verdict, r.observed, r.gap) == (Verdict.BREACHED, 1000.0, 0.0)
    assert r.details["metrics"]["observed_is"] == "lower_bound"
    shown = _figure_everywhere(contract, traces, ev, "P-limit")
    assert "│ > 1,000.00 ms │" in shown["terminal.en"], shown["terminal.en"]
    assert "│ > 1,000.00 毫秒 │" in shown["terminal.zh"], shown["terminal.zh"]
    assert "> 1,000.00 ms" in shown["check.md"]
    assert "observed &gt; 1000 ms;" in shown["junit"]
    for lang in ("en", "zh"):
        assert shown[f"report.{lang}"].startswith("> "), shown[f"report.{lang}"]
        assert "&gt; 1" in shown[f"report.{lang}.html"]


@pytest.mark.parametrize(
    ("reading", "verdict", "said"),
    [
        ("beyond", "breached", {"en": "at the limit (counted as beyond)", "zh": "计为超出"}),
        ("within", "met", {"en": "at the limit (counted as within)", "zh": "计为达标"}),
    ],
)
def test_a_figure_equal_to_the_threshold_says_how_the_limit_counts(
    tmp_path_factory: pytest.TempPathFactory, reading: str, verdict: str, said: dict[str, str]
) -> None:
    """Every call's server time is exactly 1,000 ms against p95 ≤ 1,000 ms: the reading alone
    decides, and the row says which way (a gap of 0 says nothing)."""
    from slacheck.evaluation import evaluate
    from tests.test_check_latency import contract_of
    from tests.test_server_metrics import CONTRACT, _p95_term, _traces

    contract = contract_of(
        {
            **CONTRACT,
            "latency": [_p95_term("P-exact", 1000)],
            "readings": {"at_the_limit": reading},
        }
    )
    traces = _traces(tmp_path_factory.mktemp("limit"), server_ms=1000)
    ev = evaluate(contract, traces)
    (r,) = ev.results
    assert (str(r.verdict), r.observed, r.gap) == (verdict, 1000.0, 0.0)
    shown = _figure_everywhere(contract, traces, ev, "P-exact")
    assert said["en"] in shown["terminal.en"] and said["zh"] in shown["terminal.zh"]
    assert said["en"] in shown["check.md"] and said["en"] in shown["junit"]
    assert said["en"] in shown["report.en"] and said["zh"] in shown["report.zh"]


def test_the_report_states_one_calls_per_task_figure(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Section 3's mean (every task in the traces, retries not counted) is the one figure the
    report restates the rate limit with; the rate-limit rows' own figures (each month's
    in-scope calls per task, retries included) are labelled as the month's, never bare."""
    from slacheck.render.format import Formatter
    from slacheck.trace.generate import TrafficProfile, generate, write

    path = tmp_path_factory.mktemp("per-task") / "traffic.parquet"
    start = dt.datetime(2026, 7, 20, tzinfo=dt.UTC)
    write(generate(TrafficProfile(tasks=120, days=20, seed=7, start=start)), path, "parquet")
    contract = load_contract(ROOT / "contracts" / "strong-cn-task-e2e.yaml")
    inputs = prepare_report(contract, ingest([path]), period="2026-Q3", issued=dt.date(2026, 8, 20))
    one = Formatter("en", contract.zone).number(inputs.budget.steps.mean, 1)
    months = [
        r.details["requests_per_task_mean"]
        for r in inputs.evaluation.results
        if r.kind == "rate_limit" and r.details.get("requests_per_task_mean")
    ]
    assert months and all(round(m, 1) != float(one) for m in months)  # the figures differ
    pattern = re.compile(r"(this month(?:'|&#39;)s )?([\d.,]+) (?:in-scope )?model calls? per task")
    for fmt in (DocFormat.MD, DocFormat.HTML):
        text = render_report(inputs, lang="en", fmt=fmt).decode()
        found = pattern.findall(text)
        assert {n for label, n in found if not label} == {one}, found
        labelled = [float(n) for label, n in found if label]
        assert sorted(labelled) == sorted(round(m, 2) for m in months), found
        assert "the one calls-per-task figure this report uses" in text
        assert re.search("labelled as the month(?:'|&#39;)s", text)
        zh = render_report(inputs, lang="zh", fmt=fmt).decode()
        assert (
            f"平均每个任务包含 {one} 次模型调用（不计重试），这是本报告统一采用的每任务调用数" in zh
        )
        assert zh.count("按本月每个任务") == len(months)
        assert "按实测每个任务" not in zh


def test_a_figure_read_at_a_later_point_is_an_upper_bound(reports: dict[str, ReportInputs]) -> None:
    """The demo's TTFT p95 counts calls without a TTFT at their full response (a later point,
    each figure at or above the contracted one): the figure is at most, never the statistic."""
    from slacheck.render.figure import figure_of

    inputs = reports["demo"]
    (r,) = [
        r for r in inputs.evaluation.results if r.term_id == "L2-ttft-p95" and r.window == "2026-07"
    ]
    assert r.bounded and r.details["point_bound"] == "upper"
    assert figure_of(r, inputs.contract).sign == "≤"
    for lang in ("en", "zh"):
        md = render_report(inputs, lang=lang, fmt=DocFormat.MD).decode()
        # the result tables: window (partial: "\\*"), verdict, observed, good / total, …
        rows = [x for x in _cell_rows(md, JULY[lang] + "\\*") if len(x) == 6]
        assert any(x[2].startswith("≤ ") for x in rows), rows


@pytest.mark.parametrize(
    ("monthly", "percent", "want"),
    [
        (180_000, 25, 45_000.00),
        (0.43, 50, 0.22),  # 0.215: as doubles 0.21499999999999997, which rounded down
        (1_234.50, 25, 308.63),  # 308.625 exactly: a half cent goes up, not to the even 308.62
        (12_345.67, 12.5, 1_543.21),  # 1,543.20875
        (99_999.99, 10, 10_000.00),  # 9,999.999
    ],
)
def test_a_credit_is_its_share_of_the_fee_to_the_cent(
    monthly: float, percent: float, want: float
) -> None:
    from slacheck.render.credit import credit_amount

    assert credit_amount(monthly, percent) == want


@pytest.mark.parametrize(
    ("monthly", "percent", "currency", "want"),
    [
        (1_234, 12.5, "JPY", 154),  # ¥154.25: no invoice states a fraction of a yen
        (1_234, 25, "JPY", 309),  # ¥308.5: half a yen goes up
        (99_999, 10, "KRW", 10_000),  # ₩9,999.9
        (1_234.5, 12.5, "KWD", 154.313),  # 154.3125: to the fils, the half up
        (0.43, 50, "USD", 0.22),
        (0.43, 50, "CNY", 0.22),
    ],
)
def test_a_credit_is_its_share_of_the_fee_to_the_currency_s_minor_unit(
    monthly: float, percent: float, currency: str, want: float
) -> None:
    from slacheck.render.credit import credit_amount

    assert credit_amount(monthly, percent, currency) == want


@pytest.mark.parametrize(
    ("amount", "currency", "en", "zh"),
    [
        (45_000, "JPY", "JPY\u00a045,000", "JPY\u00a045,000"),
        (154.313, "KWD", "KWD\u00a0154.313", "KWD\u00a0154.313"),
        (45_000, "CNY", "CNY\u00a045,000.00", "CNY\u00a045,000.00"),
        # a fee written with more decimals than the currency's unit is shown as written
        (0.125, "USD", "USD\u00a00.125", "USD\u00a00.125"),
        (1_234.5, "JPY", "JPY\u00a01,234.5", "JPY\u00a01,234.5"),
    ],
)
def test_money_has_the_currency_s_decimals(amount: float, currency: str, en: str, zh: str) -> None:
    from slacheck.render.documents import money

    assert money(amount, currency, "en") == en
    assert money(amount, currency, "zh") == zh


@settings(max_examples=300, deadline=None)
@given(
    cents=st.integers(1, 10**13),
    percent=st.integers(1, 10_000).map(lambda k: k / 100),  # 0.01 … 100 %
)
def test_a_credit_is_within_half_a_cent_and_a_half_cent_goes_up(cents: int, percent: float) -> None:
    """Against exact rational arithmetic on the fee and the percent as written."""
    from fractions import Fraction

    from slacheck.render.credit import credit_amount

    exact = Fraction(cents, 100) * Fraction(repr(percent)) / 100
    got = credit_amount(cents / 100, percent)
    got_cents = round(got * 100)
    assert abs(got * 100 - got_cents) < 1e-3  # a whole number of cents, as a double
    assert -Fraction(1, 2) < got_cents - exact * 100 <= Fraction(1, 2)


@pytest.mark.parametrize(
    ("server_ms", "limit", "shown"),
    [
        # 2,004 ms is "2 s" in seconds to two decimals, beside a limit of "2,000 ms (2 s)"
        (2004, 2000, {"terminal": "2,004.00", "check.md": "2,004.00 ms", "junit": "2004 ms",
                      "report.en": "2,004 ms", "report.zh": "2,004 毫秒"}),
        # 1,000.004 ms is "1,000.00" to two decimals and "1 s" in seconds
        (1000.004, 1000, {"terminal": "1,000.004", "check.md": "1,000.004 ms",
                          "junit": "1000.004 ms", "report.en": "1,000.004 ms",
                          "report.zh": "1,000.004 毫秒"}),
    ],
)  # fmt: skip
def test_a_figure_beside_the_limit_never_reads_as_the_limit(
    tmp_path_factory: pytest.TempPathFactory,
    server_ms: float,
    limit: float,
    shown: dict[str, str],
) -> None:
    """A breached figure a hair above the threshold is written with the decimals that tell it
    from the threshold, everywhere a row shows it: not "2 s" beside "≤ 2,000 ms (2 s)"."""
    from slacheck.evaluation import evaluate
    from tests.test_check_latency import contract_of
    from tests.test_server_metrics import CONTRACT, _p95_term, _traces

    contract = contract_of({**CONTRACT, "latency": [_p95_term("P-near", limit)]})
    traces = _traces(tmp_path_factory.mktemp("near"), server_ms=server_ms)
    ev = evaluate(contract, traces)
    (r,) = ev.results
    assert (str(r.verdict), r.observed) == ("breached", server_ms)
    got = _figure_everywhere(contract, traces, ev, "P-near")
    assert f"│ {shown['terminal']} ms │" in got["terminal.en"], got["terminal.en"]
    assert f"│ {shown['terminal']} 毫秒 │" in got["terminal.zh"], got["terminal.zh"]
    assert shown["check.md"] in got["check.md"], got["check.md"]
    assert f"observed {shown['junit']};" in got["junit"], got["junit"]
    assert got["report.en"] == shown["report.en"] and got["report.zh"] == shown["report.zh"]


@settings(max_examples=300, deadline=None)
@given(
    limit=st.sampled_from([99.5, 99.9, 95.0, 2000.0, 800.0, 30_000.0, 25.0, 50.0]),
    # figures are whole µs (ms to 3 decimals) or shares of counts: never nearer a limit than
    # 1e-8 (a percent of fewer than 10⁷ calls differs from a 3-decimal limit by more)
    offset=(st.floats(-5e-6, 5e-6) | st.floats(-30, 30)).filter(lambda x: abs(x) >= 1e-8),
    unit=st.sampled_from(["ms", "%", "tokens/s", "% of slices"]),
    lang=st.sampled_from(["en", "zh"]),
)
def test_a_shown_figure_differs_from_its_limit_whenever_it_is_not_the_limit(
    limit: float, offset: float, unit: str, lang: str
) -> None:
    """Every view's figure against the shown limit: a figure that is not the limit never
    shows as it; the limit itself shows as the limit."""
    from zoneinfo import ZoneInfo

    from slacheck.console import observed
    from slacheck.messages import render
    from slacheck.render.figure import apart
    from slacheck.render.format import Formatter

    value = limit + offset
    fmt = Formatter(lang, ZoneInfo("UTC"))  # type: ignore[arg-type]
    views = {
        "document": lambda v: fmt.observed(v, unit, limit),
        "terminal": lambda v: render(observed(v, unit, limit), lang),  # type: ignore[arg-type]
        "markdown": lambda v: apart(v, limit, lambda x, d: f"{x:,.{d}f}", 2),
        "junit": lambda v: apart(v, limit, lambda x, d: f"{x:.{d}g}", 6, most=17),
    }
    for name, show in views.items():
        if value != limit:
            assert show(value) != show(limit), (name, value, show(value))


@pytest.mark.parametrize("kind", ["regions", "residency"])
def test_a_region_share_short_of_every_call_never_reads_100(kind: str) -> None:
    """The region list and residency are met only by every call of known region: 99,999 of
    100,000 is breached, and no view may round it to "100.00 %"."""
    from slacheck.checks.availability import AvailabilitySays
    from slacheck.console import observed
    from slacheck.messages import render
    from slacheck.render.figure import limit_of
    from slacheck.render.format import Formatter
    from slacheck.verdict import TermKind, TermResult, Verdict

    contract = load_contract(ROOT / "slacheck" / "contract" / "starters" / "demo.yaml")
    r = TermResult(
        kind,
        TermKind(kind),
        "2026-07",
        Verdict.BREACHED,
        100.0 * 99_999 / 100_000,
        "%",
        AvailabilitySays.NOTHING(),  # any criterion: only the figure is shown here
        99_999,
        100_000,
    )
    limit = limit_of(r, contract)
    assert limit == 100.0
    assert render(observed(r.observed, r.unit, limit), "en") == "99.999 %"  # type: ignore[arg-type]
    assert Formatter("zh", contract.zone).observed(r.observed, r.unit, limit) == "99.999%"
