"""The acceptance test plan says what the check does (issue 24, item 8), in both languages.

- the scope: a list the contract leaves empty matches every call, as the matcher reads it
  (never "endpoints none");
- a call without its contracted figure counts with its own stand-in, a bound, call by call
  (never "for every call of the window");
- each term says when its verdict is met, breached, indeterminate and no data, as the check
  decides; the bound rule the plan states is the one ``mixed_verdict`` and ``decide`` apply;
- every file name the plan cites is one the commands it gives write.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slacheck.checks.latency.assembly import decide
from slacheck.checks.latency.occurrence import mixed_verdict
from slacheck.cli import app
from slacheck.contract.load import load_contract, load_contract_text
from slacheck.contract.model import Contract, Direction, Scope
from slacheck.metering.units import Bound, Counts, Point
from slacheck.prepare import prepare_accept
from slacheck.render.documents import DocFormat, render_accept
from slacheck.render.inputs import AcceptInputs
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.verdict import Verdict

ROOT = Path(__file__).resolve().parents[1]
STRONG = ROOT / "contracts" / "strong-cn-task-e2e.yaml"


def _demo() -> Contract:
    text = resources.files("slacheck.contract").joinpath("starters/demo.yaml").read_text("utf-8")
    return load_contract_text(text, "contract.yaml")


def _accept(contract: Contract, lang: str, period: str | None = "2026-07") -> str:
    inputs = prepare_accept(contract, None, period=period)
    return render_accept(inputs, lang=lang, fmt=DocFormat.MD).decode("utf-8")


def _term(text: str, term_id: str) -> str:
    """The Markdown section of one latency term."""
    start = text.index(f"### {term_id} ")
    end = text.find("\n##", start + 1)
    return text[start:end]


# ---- the scope: empty means any


@pytest.mark.parametrize(
    ("lang", "any_endpoint", "wrong"),
    [
        ("en", "endpoints: any endpoint", "endpoints none"),
        ("zh", "接入端点：不限（任一端点）", "接入端点 无"),
    ],
)
def test_an_empty_endpoint_list_reads_as_any_endpoint(
    lang: str, any_endpoint: str, wrong: str
) -> None:
    demo = _demo()
    assert demo.scope.endpoints == []  # the demo contract leaves endpoints open
    text = _accept(demo, lang)
    assert any_endpoint in text
    assert wrong not in text
    # every field left empty reads "any"; a listed one is listed
    c = demo.model_copy(update={"scope": Scope()})
    text = _accept(c, lang)
    for phrase in (
        ("providers: any provider", "models: any model", "endpoints: any endpoint")
        if lang == "en"
        else ("服务商：不限", "模型：不限", "接入端点：不限（任一端点）")
    ):
        assert phrase in text


def test_the_matcher_reads_an_empty_list_as_any() -> None:
    """What the plan says is what the matcher does: a call to any endpoint is in scope."""
    import ibis

    from slacheck.metering.derive import scope_miss

    calls = ibis.memtable(
        {
            "provider_key": ["openai", "openai"],
            "model": ["gpt-4o", "gpt-4o"],
            "requested": ["gpt-4o", "gpt-4o"],
            "served_model": ["gpt-4o", "gpt-4o"],
            "endpoint": ["https://a.example/v1", None],
            "start_us": [1, 2],
        }
    )
    miss = scope_miss(calls, Scope(providers=["openai"], models=["gpt-4o"], endpoints=[]))
    assert calls.select(m=miss).execute()["m"].isna().all()


# ---- a stand-in counts call by call


@pytest.mark.parametrize(
    ("lang", "each", "wrong"),
    [
        (
            "en",
            "A successful call that lacks it counts with its own `duration_ms` (full response), "
            "an upper bound of its time to first token; every other call keeps its own `ttft_ms`.",
            "for every call of the window",
        ),
        (
            "zh",
            "缺少该字段的成功调用，按其自身的 `duration_ms`（完整响应时间）计入，作为其首 Token "
            "时延的上界；其余调用仍按各自的 `ttft_ms` 计入。",
            "该统计周期的全部调用",
        ),
    ],
)
def test_first_token_time_is_bounded_call_by_call(lang: str, each: str, wrong: str) -> None:
    text = _term(_accept(_demo(), lang), "L2-ttft-p95")
    assert each in text
    assert wrong not in text


# ---- every verdict has its path


_ROWS = {
    "en": ("**Pass rule:**", "**Indeterminate:**", "**No data:**"),
    "zh": ("**判定规则：**", "**无法判定：**", "**无数据：**"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("contract", [_demo(), load_contract(STRONG)], ids=["demo", "strong"])
def test_each_term_says_when_each_verdict_falls(lang: str, contract: Contract) -> None:
    text = _accept(contract, lang)
    for t in contract.latency:
        section = _term(text, t.id)
        for row in _ROWS[lang]:
            assert section.count(row) == 1, (t.id, row)
    # regions, peak, rate limit and availability: one row each, in their sections
    kinds = [contract.regions, contract.peak, contract.rate_limit, contract.availability]
    for row in _ROWS[lang][1:]:
        assert text.count(row) == len(contract.latency) + sum(k is not None for k in kinds)


@pytest.mark.parametrize(
    ("lang", "met", "breached", "straddle"),
    [
        (
            "en",
            "met when at least ⌈95 × n / 100⌉ of the n units are within the threshold by their "
            "own figure or by their bound",
            "breached when more than n − ⌈95 × n / 100⌉ are beyond it by their own recorded figure",
            "otherwise indeterminate (the bounds straddle the threshold)",
        ),
        (
            "zh",
            "按自身数值或界值可证明在阈值以内的不少于 ⌈95 × n / 100⌉ 个时，判定为达标",
            "按自身记录的数值超出阈值的多于 n − ⌈95 × n / 100⌉ 个时，判定为未达标",
            "其他情形判定为无法判定（上下界分处阈值两侧）",
        ),
    ],
)
def test_the_demo_ttft_term_has_a_path_to_indeterminate(
    lang: str, met: str, breached: str, straddle: str
) -> None:
    """The demo's TTFT verdict is indeterminate: the plan says when that happens."""
    section = _term(_accept(_demo(), lang), "L2-ttft-p95")
    for phrase in (met, breached, straddle):
        assert phrase in section


@pytest.mark.parametrize(("lang", "never"), [("en", "never: every unit"), ("zh", "不适用：")])
def test_an_exact_point_is_never_indeterminate(lang: str, never: str) -> None:
    """full_response has no stand-in: the plan says indeterminate cannot happen."""
    c = load_contract(STRONG)
    full = next(t for t in c.latency if t.measurement_point == "full_response")
    assert never in _term(_accept(c, lang), full.id)


def _plan_rule(provable_pass: bool, n: int, k: int, good: int, exact_pass: int, exact_fail: int):
    """The verdict as the plan's nearest-rank bound rule words it."""
    if provable_pass:
        if good >= k:
            return Verdict.MET
        return Verdict.BREACHED if exact_fail > n - k else Verdict.INDETERMINATE
    if n - good > n - k:
        return Verdict.BREACHED
    return Verdict.MET if exact_pass >= k else Verdict.INDETERMINATE


@pytest.mark.parametrize("bound", [Bound.UPPER, Bound.LOWER])
@pytest.mark.parametrize("direction", [Direction.AT_MOST, Direction.AT_LEAST])
def test_the_plans_bound_rule_is_the_checks(bound: Bound, direction: Direction) -> None:
    """Over every small window (n units, p exact, bounds passing or not), the rule the plan
    states for a mixed window is the one ``mixed_verdict`` applies, and a stand-in-only
    window (``decide``) proves only the side the plan says."""
    point = Point("time_to_first_token", "_m", "ttft_ms", bound)
    provable_pass = (bound is Bound.UPPER) == (direction is Direction.AT_MOST)
    for n in range(1, 7):
        for k in range(1, n + 1):
            for n_p in range(n + 1):
                for good_p in range(n_p + 1):
                    for good_f in range(n - n_p + 1):
                        good = good_p + good_f
                        c = Counts(n_p=n_p, good_p=good_p, n_m=n, good_m=good)
                        got = mixed_verdict(point, direction, n, good, c, k)
                        want = _plan_rule(provable_pass, n, k, good, good_p, n_p - good_p)
                        assert got is want, (n, k, n_p, good_p, good_f)
    proven = Verdict.MET if provable_pass else Verdict.BREACHED
    assert decide(provable_pass, bound, direction) is proven
    assert decide(not provable_pass, bound, direction) is Verdict.INDETERMINATE


# ---- every file name the plan cites is written by the commands it gives


_FILE = re.compile(r"[\w.\-]+\.(?:json|xml|csv|parquet|pdf|html|md|yaml)\b")
_COMMAND = re.compile(r"`(slacheck (?:check|report) [^`]+)`")


def _plan(inputs: AcceptInputs, lang: str) -> str:
    return render_accept(inputs, lang=lang, fmt=DocFormat.MD).decode("utf-8")


@pytest.fixture(scope="module")
def plan_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[AcceptInputs, Path, list[str]]:
    """Traces, and a folder where the commands the plan gives were run as given."""
    folder = tmp_path_factory.mktemp("plan")
    traces = folder / "traffic.parquet"
    start = dt.datetime(2026, 6, 30, 16, tzinfo=dt.UTC)
    write(generate(TrafficProfile(tasks=40, days=3, seed=5, start=start)), traces, "parquet")
    contract = load_contract(STRONG)
    inputs = prepare_accept(contract, ingest([traces]), contract_file=STRONG, period="2026-07")
    commands = _COMMAND.findall(_plan(inputs, "en"))
    assert {c.split()[1] for c in commands} == {"check", "report"}, commands
    run = folder / "run"
    run.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(run)
        for command in commands:
            args = [
                {"CONTRACT": str(STRONG), "TRACES": str(traces)}.get(a, a)
                for a in shlex.split(command)[1:]
            ]
            result = CliRunner().invoke(app, args, catch_exceptions=False)
            assert result.exit_code in (0, 1), result.output  # 1: findings; files written
    return inputs, run, commands


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_file_the_plan_names_is_written_by_its_commands(
    lang: str, plan_run: tuple[AcceptInputs, Path, list[str]]
) -> None:
    inputs, run, commands = plan_run
    text = _plan(inputs, lang)
    assert _COMMAND.findall(text) == commands  # the same commands in every language
    cited = set(_FILE.findall(_COMMAND.sub(" ", text)))
    assert "check.json" in cited and "check.junit.xml" in cited
    assert any(name.endswith("_2026-07_evidence.csv") for name in cited), cited
    written = {p.name for p in run.iterdir()} | {Path(s.path).name for s in inputs.sources}
    missing = cited - written
    assert not missing, (missing, sorted(written))


def test_without_a_period_the_evidence_csv_is_named_by_its_pattern() -> None:
    """No test period yet: the plan gives the file name's pattern, not a name no run writes."""
    c = load_contract(STRONG)
    text = render_accept(AcceptInputs(c), lang="en", fmt=DocFormat.MD).decode()
    assert "`<contract id>_<PERIOD>_evidence.csv`" in text
    assert "slacheck report CONTRACT TRACES --period PERIOD -o report.pdf" in text
