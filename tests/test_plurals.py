"""Counting messages: a count never stands before a plural noun that cannot agree with it.

A template that puts a number before a plural noun ("{n} calls", "{tiers} tier(s)") must be
declared with ``NPC_`` (singular and plural English templates, a count parameter), so that
"1 calls" cannot be written; each language then picks its form by the count (Chinese has one).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import slacheck
from slacheck.checks.availability import AvailabilitySays
from slacheck.checks.latency import LatencySays
from slacheck.messages import MessageCode, plural_forms, render, template_for

for _module in pkgutil.walk_packages(slacheck.__path__, "slacheck."):
    importlib.import_module(_module.name)  # every module's message codes

#: plural nouns slacheck counts; a placeholder before one of them (at most two words apart,
#: "{n} model calls", "{n} off-peak calls") is a count before a plural noun
_NOUNS = (
    "calls|tasks|spans|rows|files|findings|terms|slices|minutes|seconds|days|hours|months|"
    "windows|tiers|regions|requests|tokens|steps|incidents|items|values|failures|errors|"
    "retries|points|bytes|levels|examples|mismatches|gaps|samples|answers|traces|models|"
    "periods|buckets|weeks|times|records|ids|tools|parts|credits|units|fields|kinds|clauses|"
    "entries|sources|attempts|chunks|languages|contracts|presets|documents|letters|SLOs|"
    "lines|problems|notes|results|verdicts|checks"
)
#: a placeholder followed by up to two words and a plural noun; not "{x} of the calls"
#: (partitive) nor "{x} calls/min" (a rate's unit); "{minutes}-minute slices" has a hyphen
_COUNT_NOUN = re.compile(
    r"\{(\w+)(?::[^}]*)?\} ((?:(?!of )[A-Za-z\-{}]+ ){0,2}?)(" + _NOUNS + r")\b(?!/)"
)
#: placeholders that are never a number (a name, a period's unit, an id)
_NOT_COUNTS = {"term", "region", "whose", "what", "period", "file", "output", "folder", "kind"}


def count_before_plural(template: str) -> list[str]:
    """Where ``template`` puts a count before a plural noun, or says "(s)"."""
    hits = [m.group(0) for m in _COUNT_NOUN.finditer(template) if m.group(1) not in _NOT_COUNTS]
    return hits + re.findall(r"\w+\(s\)", template)


def _codes() -> list[MessageCode]:
    out: list[MessageCode] = []
    todo = list(MessageCode.__subclasses__())
    while todo:
        kind = todo.pop()
        todo += kind.__subclasses__()
        out += list(kind)
    return out


def test_the_sweep_finds_what_it_looks_for() -> None:
    assert count_before_plural("{n} calls were set aside") == ["{n} calls"]
    assert count_before_plural("{n} model calls record no region") == ["{n} model calls"]
    assert count_before_plural("Clause review: {file} — {n} finding(s)") == ["finding(s)"]
    assert count_before_plural("{tiers} tier(s)") == ["tier(s)"]
    assert count_before_plural("{empty} of {spanned} {minutes}-minute slices") != []
    # not counts: a compound, a partitive, a rate, a name
    assert count_before_plural("{minutes}-minute slices") == []
    assert count_before_plural("for {whole} of the calls") == []
    assert count_before_plural("{rate} calls/min") == []
    assert count_before_plural("{term} counts slices") == []


def test_no_code_counts_a_plural_noun_without_a_plural_form() -> None:
    codes = _codes()
    assert len(codes) > 300
    plural = [c for c in codes if c.plural is not None]
    assert len(plural) > 60  # the conversion covered the checks, review, mismatch, console
    bad = {
        str(c): count_before_plural(c.template)
        for c in codes
        if c.plural is None and count_before_plural(c.template)
    }
    assert bad == {}, "declare these with NPC_(code, singular, plural, count=...)"
    # and a counting code's singular is singular
    still = {str(c): c.template for c in plural if "(s)" in c.template + c.plural}
    assert still == {}


@pytest.mark.parametrize("code", [c for c in _codes() if c.plural is not None], ids=str)
def test_a_counting_code_picks_its_form_by_the_count(code: MessageCode) -> None:
    assert code.count_param is not None
    assert template_for(code, "en", 1) == code.template
    for n in (0, 2, 5, 1.5):
        assert template_for(code, "en", n) == code.plural
    zh_forms = plural_forms(code, "zh")
    assert zh_forms is not None and len(zh_forms) == 1  # Chinese: one form for every count
    assert template_for(code, "zh", 1) == template_for(code, "zh", 2) == zh_forms[0]
    params: dict[str, Any] = dict.fromkeys(code.params, 7)
    for n in (1, 2):
        message = code(**{**params, code.count_param: n})
        for lang in ("en", "zh"):
            assert "{" not in render(message, lang)


def test_one_call_two_calls_in_english_and_chinese() -> None:
    one = AvailabilitySays.BELOW_MIN(n=1, min=10)
    two = AvailabilitySays.BELOW_MIN(n=2, min=10)
    assert render(one, "en") == "1 call, fewer than the minimum of 10"
    assert render(two, "en") == "2 calls, fewer than the minimum of 10"
    assert render(one, "zh") == render(two, "zh").replace("2", "1", 1)
    assert "calls" not in render(one, "zh") and "call" not in render(one, "zh")
    # a whole float counts as its number; a fraction takes the plural
    assert render(AvailabilitySays.BELOW_MIN(n=1.0, min=10), "en").startswith("1 call,")
    assert render(AvailabilitySays.BELOW_MIN(n=1.5, min=10), "en").startswith("1.5 calls,")
    # the noun and the verb agree with the count, also where the noun is a nested message
    calls = LatencySays.CALLS
    assert (
        render(LatencySays.NEITHER(n=1, noun=calls(n=1)), "en")
        == "1 answered call has neither and is left out"
    )
    assert (
        render(LatencySays.NEITHER(n=3, noun=calls(n=3)), "en")
        == "3 answered calls have neither and are left out"
    )
    assert render(LatencySays.NEITHER(n=1, noun=calls(n=1)), "zh").startswith("1 个已应答的调用")


@given(st.integers(min_value=0, max_value=10**9))
def test_english_is_singular_exactly_for_one(n: int) -> None:
    text = render(AvailabilitySays.BELOW_MIN(n=n, min=10), "en")
    assert ("call," in text.split()) == (n == 1)
    assert ("calls," in text.split()) == (n != 1)


def test_a_count_must_be_a_number() -> None:
    with pytest.raises(TypeError, match="count"):
        render(AvailabilitySays.BELOW_MIN(n="many", min=10), "en")
    with pytest.raises(TypeError, match="takes"):
        AvailabilitySays.BELOW_MIN(min=10)
