"""One rule per term: the check evaluates ``contract.criterion.Rule`` and every document says it.

Issue 24, items 1 and 2: a speed term ``percentile: 90, direction: at_least`` read in the
documents as "the p90 is at least 20" while the check decided "p10 ≥ 20"; a contract stating
``at_the_limit: beyond`` still read "at most 30,000 ms" while the check applied "strictly below";
stated readings appeared in no document. Here: the rule's words change whenever any field of it
changes (property), the check's JSON carries the very rule its criterion states, the comparison
the words name is the one the check applies at the limit, and the draft, the acceptance criteria
and the report print each term's rule and every reading.
"""

from __future__ import annotations

import copy
import datetime as dt
import html
import io
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from slacheck.checks.latency import latency
from slacheck.contract.criterion import (
    Comparison,
    compact,
    latency_rule,
    prose,
    readings_of,
    windowed,
)
from slacheck.contract.load import load_contract, load_contract_text
from slacheck.contract.model import Contract
from slacheck.messages import Message, render
from slacheck.metering.context import CheckContext
from slacheck.prepare import prepare_accept, prepare_report
from slacheck.render.documents import DocFormat, render_accept, render_draft, render_report
from slacheck.trace import schema
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.verdict import Verdict

ROOT = Path(__file__).resolve().parents[1]
IDENTITY = {
    "id": "T-rule",
    "vendor": "Example Cloud",
    "customer": "Example Customer",
    "effective": {"start": "2026-01-01"},
}


def contract_of(doc: dict[str, Any]) -> Contract:
    """Through the real loader, as a user's YAML would be read."""
    data = copy.deepcopy(doc)
    data["contract"] = {**IDENTITY, **data.get("contract", {})}
    buf = io.StringIO()
    YAML(typ="safe").dump(data, buf)
    return load_contract_text(buf.getvalue(), "<test>")


def _plain(text: str) -> str:
    """Document text compared with a message: Markdown escapes, entities and spacing undone."""
    return re.sub(r"\s+", " ", html.unescape(text.replace("\\", ""))).strip()


# ---------------------------------------------------------------------------------------------
# Property: every field of the rule is in its words


POINTS = [
    "server_processing",
    "time_to_first_token",
    "full_response",
    "task_end_to_end",
    "output_tokens_per_second",
]


@st.composite
def term_docs(draw: st.DrawFn) -> dict[str, Any]:
    point = draw(st.sampled_from(POINTS))
    if draw(st.booleans()):
        objective: dict[str, Any] = {
            "kind": "occurrence",
            "percentile": draw(st.sampled_from([50, 90, 95, 99, 99.9])),
            "threshold": draw(st.integers(1, 60_000)),
            "direction": draw(st.sampled_from(["at_most", "at_least"])),
            "method": draw(st.sampled_from(["nearest_rank", "linear"])),
        }
    else:
        objective = {
            "kind": "time_slice",
            "slice_minutes": draw(st.sampled_from([1, 5, 15])),
            "statistic": draw(st.sampled_from(["p50", "p95", "mean", "min"])),
            "threshold": draw(st.integers(1, 60_000)),
            "direction": draw(st.sampled_from(["at_most", "at_least"])),
            "slices_passing_percent": draw(st.sampled_from([90, 95, 99])),
            "min_calls_per_slice": draw(st.integers(1, 20)),
        }
    term: dict[str, Any] = {"id": "L1", "measurement_point": point, "objective": objective}
    term["window"] = draw(
        st.sampled_from(["calendar_month", "calendar_quarter", "rolling_30_days"])
    )
    if draw(st.booleans()):
        term["min_samples"] = draw(st.integers(1, 5000))
    if point == "output_tokens_per_second":
        term["tokens_per_second_basis"] = draw(
            st.sampled_from(["whole_request", "after_first_token", "unstated"])
        )
    return {
        "contract": {"time_zone": draw(st.sampled_from(["UTC", "Asia/Shanghai"]))},
        "scope": {"models": ["gpt-4o"]},
        "exclusions": {"max_input_tokens": 100_000},
        "latency": [term],
        "readings": {
            "at_the_limit": draw(st.sampled_from(["within", "beyond"])),
            "model_scope": draw(st.sampled_from(["requested", "served", "either"])),
            "excluded_calls_in_task_terms": draw(st.sampled_from(["remove_task", "remove_call"])),
            "cache_hits": draw(st.sampled_from(["excluded", "counted"])),
        },
    }


def _mutations(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each field of the rule changed on its own (where the change is one the rule can see)."""
    term = doc["latency"][0]
    obj = term["objective"]
    out: list[tuple[str, dict[str, Any]]] = []

    def change(name: str, fn: Any) -> None:
        d = copy.deepcopy(doc)
        fn(d, d["latency"][0], d["latency"][0]["objective"])
        out.append((name, d))

    change("threshold", lambda d, t, o: o.update(threshold=o["threshold"] + 1))
    change(
        "direction",
        lambda d, t, o: o.update(
            direction="at_least" if o["direction"] == "at_most" else "at_most"
        ),
    )
    change(
        "at_the_limit",
        lambda d, t, o: d["readings"].update(
            at_the_limit="beyond" if d["readings"]["at_the_limit"] == "within" else "within"
        ),
    )
    change(
        "window",
        lambda d, t, o: t.update(
            window="calendar_quarter" if t["window"] != "calendar_quarter" else "calendar_month"
        ),
    )
    change(
        "zone",
        lambda d, t, o: d["contract"].update(
            time_zone="UTC" if d["contract"]["time_zone"] != "UTC" else "Asia/Shanghai"
        ),
    )
    change(
        "model_scope",
        lambda d, t, o: d["readings"].update(
            model_scope="served" if d["readings"]["model_scope"] != "served" else "requested"
        ),
    )
    change(
        "point",
        lambda d, t, o: (
            t.update(
                measurement_point="full_response"
                if t["measurement_point"] != "full_response"
                else "time_to_first_token"
            )
            or t.pop("tokens_per_second_basis", None)
        ),
    )
    if obj["kind"] == "occurrence":
        change(
            "percentile",
            lambda d, t, o: o.update(percentile=95 if o["percentile"] != 95 else 99),
        )
        change(
            "method",
            lambda d, t, o: o.update(
                method="linear" if o["method"] == "nearest_rank" else "nearest_rank"
            ),
        )
    else:
        change(
            "slices_passing_percent",
            lambda d, t, o: o.update(
                slices_passing_percent=90 if o["slices_passing_percent"] != 90 else 99
            ),
        )
        change(
            "min_calls_per_slice",
            lambda d, t, o: o.update(min_calls_per_slice=o["min_calls_per_slice"] + 1),
        )
        change("slice_minutes", lambda d, t, o: o.update(slice_minutes=o["slice_minutes"] + 1))
    if term["measurement_point"] == "task_end_to_end":
        change(
            "excluded_calls_in_task_terms",
            lambda d, t, o: d["readings"].update(
                excluded_calls_in_task_terms="remove_call"
                if d["readings"]["excluded_calls_in_task_terms"] == "remove_task"
                else "remove_task"
            ),
        )
    return out


def _words(contract: Contract) -> dict[tuple[str, str], str]:
    rule = latency_rule(contract, contract.latency[0])
    return {
        (form, lang): render(say(rule), lang)
        for form, say in (("compact", compact), ("prose", prose), ("windowed", windowed))
        for lang in ("en", "zh")
    }


@settings(max_examples=60, deadline=None)
@given(term_docs())
def test_changing_any_field_of_a_rule_changes_its_words_everywhere(doc: dict[str, Any]) -> None:
    base = contract_of(doc)
    before = _words(base)
    for field, changed in _mutations(doc):
        after = _words(contract_of(changed))
        for key, text in before.items():
            if field == "zone" and key[0] == "compact":
                continue  # the criterion line of one window's result names no zone
            if field == "window" and key[0] == "compact":
                continue  # nor the window kind: the result is that window's
            assert after[key] != text, f"changing {field} leaves the {key} words unchanged: {text}"
    # the draft states the very sentence, in both languages
    for lang in ("en", "zh"):
        draft = _plain(render_draft(base, lang=lang, fmt=DocFormat.MD).decode())
        assert _plain(before[("prose", lang)]) in draft


@settings(max_examples=60, deadline=None)
@given(term_docs())
def test_the_words_carry_the_rules_numbers_comparison_and_statistic(doc: dict[str, Any]) -> None:
    contract = contract_of(doc)
    rule = latency_rule(contract, contract.latency[0])
    line = compact(rule)
    text = line.text
    assert rule.comparison.symbol() in text
    assert f"{rule.threshold:,.0f}" in text
    if rule.percentile is not None:
        assert f"p{rule.percentile:g}" in text
    # an at-least percentile is read from the top: the share of units at or above is stated
    obj = contract.latency[0].objective
    if obj.kind == "occurrence" and obj.direction == "at_least":
        assert rule.percentile == pytest.approx(100 - obj.percentile)
        assert f"{obj.percentile:g} %" in text
    # the comparison follows the reading at the limit
    beyond = contract.readings.at_the_limit == "beyond"
    assert rule.comparison.inclusive is not beyond


# ---------------------------------------------------------------------------------------------
# The check evaluates the rule its words state


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    cols: dict[str, list[Any]] = {name: [] for name in schema.COLUMN_NAMES}
    for n, r in enumerate(rows):
        r = {"kind": "llm", "status": "ok", "span_id": f"s{n}", "source_ref": f"row {n + 1}", **r}
        r.setdefault("duration_ms", (r["end_us"] - r["start_us"]) / 1000.0)
        for name in schema.COLUMN_NAMES:
            cols[name].append(r.get(name))
    return schema.conform(pa.table(cols, schema=schema.ARROW_SCHEMA))


def _calls(durations_ms: list[float], tokens: int | None = None) -> pa.Table:
    start = int(dt.datetime(2026, 7, 1, tzinfo=dt.UTC).timestamp() * 1_000_000)
    rows = []
    for i, ms in enumerate(durations_ms):
        s = start + i * 60_000_000
        rows.append(
            {
                "task_id": f"t{i}",
                "start_us": s,
                "end_us": s + round(ms * 1000),
                "output_tokens": tokens,
            }
        )
    return _table(rows)


def _check(contract: Contract, table: pa.Table, tmp_path: Path) -> list[Any]:
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    return latency(CheckContext(contract, ingest([path])))


@pytest.mark.parametrize("direction", ["at_most", "at_least"])
@pytest.mark.parametrize("at_the_limit", ["within", "beyond"])
def test_at_the_limit_the_check_applies_the_comparison_its_words_name(
    direction: str, at_the_limit: str, tmp_path: Path
) -> None:
    # twenty calls whose figure is exactly the threshold: the verdict is met exactly when the
    # comparison the rule names lets the limit pass
    speed = direction == "at_least"
    term: dict[str, Any] = {
        "id": "L1",
        "measurement_point": "output_tokens_per_second" if speed else "full_response",
        "objective": {
            "kind": "occurrence",
            "percentile": 90,
            "threshold": 20 if speed else 1000,
            "direction": direction,
        },
    }
    if speed:
        term["tokens_per_second_basis"] = "whole_request"
    contract = contract_of({"latency": [term], "readings": {"at_the_limit": at_the_limit}})
    # 1,000 ms per call, and 20 output tokens over one second: 20 tokens/s
    table = _calls([1000.0] * 20, tokens=20 if speed else None)
    (result,) = _check(contract, table, tmp_path)
    rule = latency_rule(contract, contract.latency[0])
    assert result.rule == rule.to_dict()
    assert result.criterion == compact(rule).text
    assert result.observed == pytest.approx(rule.threshold)
    want = Verdict.MET if rule.comparison.inclusive else Verdict.BREACHED
    assert result.verdict is want, (rule.comparison, result)
    assert rule.passes(result.observed) is (want is Verdict.MET)


def test_an_at_least_percentile_is_decided_and_said_from_the_top(tmp_path: Path) -> None:
    # p90 at least 20 tokens/s: half the calls at 30, half at 10. Read as "the 90th percentile
    # is at least 20" it would be met (that percentile is 30); the rule is "90 % of calls at or
    # above 20", which half the calls miss: breached, and every form of its words says so.
    term = {
        "id": "S1",
        "measurement_point": "output_tokens_per_second",
        "tokens_per_second_basis": "whole_request",
        "objective": {
            "kind": "occurrence",
            "percentile": 90,
            "threshold": 20,
            "direction": "at_least",
        },
    }
    contract = contract_of({"latency": [term]})
    table = _calls([1000.0] * 20, tokens=None)
    # output tokens per call: 30 for the first ten, 10 for the rest, over one second each
    tokens = [30] * 10 + [10] * 10
    table = table.set_column(
        table.schema.get_field_index("output_tokens"),
        schema.ARROW_SCHEMA.field("output_tokens"),
        pa.array(tokens, type=schema.ARROW_SCHEMA.field("output_tokens").type),
    )
    (result,) = _check(contract, table, tmp_path)
    assert result.verdict is Verdict.BREACHED
    assert result.rule is not None and result.rule["percentile"] == 10
    assert result.rule["share"] == 90
    en = result.criterion
    assert en.startswith("p10 of output speed") and "90 % of calls at or above" in en
    sentence = prose(latency_rule(contract, contract.latency[0])).text
    assert "for at least 90 % of the answered calls in scope" in sentence
    assert "p90" not in sentence
    draft = _plain(render_draft(contract, lang="en", fmt=DocFormat.MD).decode())
    assert _plain(sentence) in draft and "p90 of" not in draft


# ---------------------------------------------------------------------------------------------
# Every document prints each term's rule and every reading


@pytest.fixture(scope="module")
def stated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Contract, Any, Any]:
    """The strong contract with its readings stated against the defaults (item 2's contract)."""
    base = load_contract(ROOT / "contracts" / "strong-cn-task-e2e.yaml")
    doc = base.model_dump(mode="json", exclude_none=True)
    doc["readings"] = {
        "at_the_limit": "beyond",
        "model_scope": "served",
        "excluded_calls_in_task_terms": "remove_call",
        "per_task_rate_counts": "active",
    }
    buf = io.StringIO()
    YAML(typ="safe").dump(doc, buf)
    contract = load_contract_text(buf.getvalue(), "<stated>")
    path = tmp_path_factory.mktemp("rule") / "traffic.parquet"
    start = dt.datetime(2026, 7, 25, tzinfo=dt.UTC)
    write(generate(TrafficProfile(tasks=60, days=10, seed=3, start=start)), path, "parquet")
    traces = ingest([path])
    report = prepare_report(contract, traces, period="2026-Q3", issued=dt.date(2026, 8, 20))
    accept = prepare_accept(contract, traces, period="2026-Q3")
    return contract, report, accept


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_document_says_each_rule_and_every_reading(
    stated: tuple[Contract, Any, Any], lang: str
) -> None:
    contract, report, accept = stated
    docs = {
        "draft": render_draft(contract, lang=lang, fmt=DocFormat.MD),
        "accept": render_accept(accept, lang=lang, fmt=DocFormat.MD),
        "report": render_report(report, lang=lang, fmt=DocFormat.MD),
    }
    text = {k: _plain(v.decode()) for k, v in docs.items()}
    for term in contract.latency:
        rule = latency_rule(contract, term)
        assert rule.comparison in (Comparison.BELOW, Comparison.ABOVE)  # "beyond" is stated
        assert _plain(render(prose(rule), lang)) in text["draft"], term.id
        for doc in ("accept", "report"):
            assert _plain(render(windowed(rule), lang)) in text[doc], (doc, term.id)
    readings = readings_of(contract.readings)
    assert {r.name for r in readings if r.stated} == {
        "at_the_limit",
        "model_scope",
        "excluded_calls_in_task_terms",
        "per_task_rate_counts",
    }
    for r in readings:
        effect = _plain(render(r.effect, lang))
        for doc, body in text.items():
            assert effect in body, (doc, r.name)
    if lang == "en":
        # the limit is "strictly below" everywhere: no document says "at most 30,000 ms"
        for doc, body in text.items():
            assert "at most 30,000 ms" not in body and "≤ 30,000 ms" not in body, doc
        assert "is below 30,000 ms" in text["draft"]
        assert "< 30,000 ms" in text["report"] and "< 30,000 ms" in text["accept"]


def test_a_reading_says_what_it_changes_for_every_value() -> None:
    from slacheck.contract.readings import Readings

    for name, field in Readings.model_fields.items():
        enum = type(field.default)
        said: set[str] = set()
        for value in enum:
            (r,) = [x for x in readings_of(Readings(**{name: value})) if x.name == name]
            assert isinstance(r.effect, Message) and r.stated and r.value == str(value)
            said.add(r.effect.text)
        assert len(said) == len(enum), f"two values of {name} are said alike"
