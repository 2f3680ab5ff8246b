"""Messages and their catalogues: every code is worded in every language, with the parameters
its emitters pass, and the Chinese carries no English prose."""

# The sweep runs the clause review over every review case and sample contract, the field
# check (with the mismatch finder) over generated traffic for the sample contracts, and the
# term checks over generated traffic; every message they emit (criteria and notes, nested ones
# included) is checked against its templates in both languages (``tests/wording.py``), as each
# evaluate case checks its own results' messages.

from __future__ import annotations

import importlib
import io
import json
import pkgutil
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

import slacheck
import slacheck.budget
import slacheck.checks  # registers every check, and with them their message codes
import slacheck.cli  # the terminal's own words (with slacheck.console and slacheck.demo)
import slacheck.console
import slacheck.contract.review
import slacheck.demo
import slacheck.match.fields
import slacheck.match.mismatch
import slacheck.metering.context
import slacheck.metering.peak
import slacheck.render.charts
import slacheck.render.claim
import slacheck.render.words
from slacheck.contract.load import load_contract, load_contract_text
from slacheck.contract.review import review
from slacheck.evaluation import evaluate
from slacheck.match.fields import DERIVABLE_NOW, SCHEMA_CHANGE, FieldSays, check_fields
from slacheck.messages import (
    LOCALES,
    Message,
    MessageCode,
    format_number,
    placeholders,
    plural_forms,
    render,
    template_for,
)
from slacheck.trace.ingest import ingest
from tests.langcheck import english_runs
from tests.wording import assert_worded, result_messages, walk

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = sorted((ROOT / "contracts").glob("*.yaml")) + sorted(
    (ROOT / "slacheck" / "contract" / "starters").glob("*.yaml")
)
CASES = sorted((ROOT / "tests" / "cases" / "review").glob("SLA*.yaml"))
IDENTITY = {"id": "T-1", "vendor": "V", "customer": "C", "effective": {"start": "2026-01-01"}}


def _import_every_module() -> None:
    """Every module of the package, so every ``MessageCode`` class is defined: a code lives in
    the module that says it (the doctor, the PDF writer, …), and one that no test happens to
    import would otherwise be missed by the catalogue checks."""
    for info in pkgutil.walk_packages(slacheck.__path__, "slacheck."):
        importlib.import_module(info.name)


def _codes() -> list[MessageCode]:
    _import_every_module()
    return [m for kind in MessageCode.__subclasses__() for m in kind]


def _catalogue() -> Any:
    path = ROOT / "slacheck" / "locale" / "zh_CN" / "LC_MESSAGES" / "slacheck.po"
    with path.open("rb") as fh:
        return read_po(fh)


# ---------------------------------------------------------------------------------------------
# the catalogues


def test_codes_are_unique_across_modules() -> None:
    values = [str(c) for c in _codes()]
    assert len(values) == len(set(values))
    assert len(values) > 300  # review, mismatch, field check, term checks and metering
    modules = {type(c).__module__ for c in _codes()}
    assert {"slacheck.checks.latency.wording", "slacheck.metering.context"} <= modules


@pytest.mark.parametrize("code", _codes(), ids=str)
def test_every_code_has_an_english_template_and_a_chinese_translation(code: MessageCode) -> None:
    assert code.template.strip()
    if code.plural is not None:
        # a counting message: every form in both languages names the same parameters as the
        # English plural (the singular may spell the count out), with the same format specs
        forms = plural_forms(code, "zh")
        assert forms, f"{code}: no current zh translation (run `make messages` and translate it)"
        assert code.count_param in code.params
        for form in (code.template, *forms):
            assert placeholders(form) <= placeholders(code.plural) | {code.count_param}
        for zh in forms:
            assert placeholders(zh) == placeholders(code.plural)
            assert _specs(zh) == _specs(code.plural)
        return
    zh = template_for(code, "zh")
    assert zh, f"{code}: no current zh translation (run `make messages` and translate it)"
    # the same parameters in both languages, with the same format specs
    assert placeholders(zh) == placeholders(code.template)
    assert _specs(zh) == _specs(code.template)


def _specs(template: str) -> set[tuple[str, str]]:
    import string

    return {(n, s or "") for _, n, s, _ in string.Formatter().parse(template) if n}


def _template_msgids() -> set[tuple[str | None, str | tuple[str, ...]]]:
    """What `make messages` extracts from the document templates, extracted afresh."""
    from babel.messages.extract import extract_from_dir

    keywords = {"_": None, "gettext": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2)}
    found = extract_from_dir(
        str(ROOT / "slacheck" / "templates"),
        method_map=[("**.j2", "jinja2")],
        options_map={
            "**.j2": {
                "trimmed": "true",
                "extensions": "jinja2.ext.i18n",
                "newstyle_gettext": "true",
            }
        },
        keywords=keywords,
    )
    out: set[tuple[str | None, str | tuple[str, ...]]] = set()
    for _file, _line, message, _comments, context in found:
        out.add((context, message if isinstance(message, str) else tuple(message)))
    return out


def test_catalogue_has_no_stale_fuzzy_or_empty_entries() -> None:
    cat = _catalogue()
    current = {
        (str(c), c.template if c.plural is None else (c.template, c.plural)) for c in _codes()
    } | _template_msgids()
    entries = [m for m in cat if m.id]
    found = {(m.context, m.id if isinstance(m.id, str) else tuple(m.id)) for m in entries}
    assert found == current, "run `make messages`"
    untranslated = [m.id for m in entries if m.fuzzy or not all(_strings(m))]
    assert not untranslated, f"translate these (no fuzzy, no empty msgstr): {untranslated[:10]}"


def _strings(m: Any) -> tuple[str, ...]:
    return tuple(m.string) if isinstance(m.string, tuple | list) else (m.string,)


def test_template_prose_has_the_same_parameters_in_every_language() -> None:
    cat = _catalogue()
    import re

    fields = re.compile(r"%\((\w+)\)s")
    for m in cat:
        if not m.id or m.context:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        want = set(fields.findall(ids[0]))
        for text in _strings(m):
            assert set(fields.findall(text)) == want, (m.id, text)
            assert not english_runs(text), (m.id, text)


def test_catalogue_ships_with_the_package() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "locale/*/LC_MESSAGES/*.po" in data["tool"]["setuptools"]["package-data"]["slacheck"]
    po = resources.files("slacheck").joinpath("locale/zh_CN/LC_MESSAGES/slacheck.po")
    assert po.is_file()


def test_a_code_refuses_parameters_its_template_does_not_name() -> None:
    with pytest.raises(TypeError, match="takes"):
        FieldSays.FIX_FOR_TERM(term="L1")
    with pytest.raises(TypeError, match="takes"):
        FieldSays.NO_TASKS(extra=1)


def test_fix_kinds_start_as_the_constants_say() -> None:
    assert FieldSays.FIX_SCHEMA.template.startswith(SCHEMA_CHANGE + ":")
    assert FieldSays.FIX_DERIVABLE.template.startswith(DERIVABLE_NOW + " ")


# ---------------------------------------------------------------------------------------------
# rendering


def test_numbers_follow_the_locale() -> None:
    share = slacheck.match.mismatch.Said.SHARE(part="x", share=0.383)
    assert render(share, "en") == "x 38 %"
    assert render(share, "zh") == "x 38%"
    medians = slacheck.match.mismatch.Said.MEDIANS(whole=1234.56, generation=80.0)
    assert "1,234.6 tokens/s" in render(medians, "en")
    assert "1,234.6 Token/秒" in render(medians, "zh")
    says = slacheck.contract.review.Says
    assert render(says.MINUTES(n=128000), "en") == "128,000 min"
    assert render(says.MINUTES(n=99.95), "zh") == "99.95 分钟"


@given(st.integers(min_value=-2000, max_value=2000), st.sampled_from(sorted(LOCALES)))
def test_small_integers_read_as_babel_writes_them(n: int, lang: str) -> None:
    # the formatter writes an integer under a thousand without Babel; it must agree with it
    expected = format_decimal(n, format="#,##0.######", locale=LOCALES[lang])
    assert format_number(n, lang) == expected


def test_lists_join_in_the_language() -> None:
    said = FieldSays.CRIT_REGION(allowed=["cn-north-1", "cn-east-2"])
    assert render(said, "en").endswith("allowed: cn-north-1, cn-east-2")
    assert render(said, "zh").endswith("允许的地域：cn-north-1、cn-east-2")


def test_to_dict_carries_code_params_and_english_text() -> None:
    said = FieldSays.FIX_FOR_TERM(term="L1", fix=FieldSays.NO_TASKS())
    d = json.loads(json.dumps(said.to_dict()))
    assert d == {
        "code": "fields.fix.for_term",
        "params": {
            "term": "L1",
            "fix": {"code": "fields.no_data.tasks", "params": {}, "text": "no tasks in the traces"},
        },
        "text": "L1: no tasks in the traces",
    }


def test_unknown_language_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown language"):
        render(FieldSays.NO_TASKS(), "fr")


def test_english_runs_flags_prose_not_identifiers() -> None:
    assert (
        english_runs("将 measurement_point 改为 full_response（gen_ai.usage.output_tokens）") == []
    )
    assert english_runs("条款 L1-task-p95：`method: nearest_rank`，“no data”") == []
    assert english_runs("<p>合同 The contract does not say</p>") == ["The contract does not say"]
    assert english_runs("Two words 中文") == []


# ---------------------------------------------------------------------------------------------
# the sweep: what the emitters really pass


def _case_contracts() -> Iterator[Any]:
    yaml = YAML(typ="safe")
    for path in CASES:
        for case in yaml.load(path.read_text(encoding="utf-8"))["cases"]:
            buf = io.StringIO()
            yaml.dump({"contract": IDENTITY, **(case["contract"] or {})}, buf)
            yield load_contract_text(buf.getvalue(), f"{path.stem}: {case['name']}")


@cache
def _review_messages() -> tuple[Message, ...]:
    contracts = [*_case_contracts(), *(load_contract(p) for p in CONTRACTS)]
    found = [f for c in contracts for f in review(c)]
    return tuple(m for f in found for top in (f.headline, f.why, f.fix) for m in walk(top))


def test_review_messages_match_their_templates_in_both_languages() -> None:
    messages = _review_messages()
    assert len({m.code for m in messages}) > 90
    assert_worded(messages)


@pytest.mark.parametrize("code", _codes(), ids=str)
def test_every_template_renders_in_chinese_without_english_prose(code: MessageCode) -> None:
    """Each code with stand-in parameters (a number, or a list where the spec joins one)."""
    specs = {n: s for t in code.templates for n, s in _specs(t)}
    if code.count_param is not None:
        specs.setdefault(code.count_param, "")
    params: dict[str, Any] = {
        name: [1, 2] if spec in ("semi", "and", "sentences") else 12.5
        for name, spec in specs.items()
    }
    message = code(**params)
    zh = render(message, "zh")
    assert "{" not in zh and english_runs(zh) == [], zh


def test_field_check_messages_match_their_templates_in_both_languages(
    generated_parquet: Path,
) -> None:
    traces = ingest([generated_parquet])
    messages: list[Message] = []
    for path in CONTRACTS:
        check = check_fields(load_contract(path), traces)
        for item in check.items:
            messages += walk(item.criterion_message)
            if item.fix_message is not None:
                messages += walk(item.fix_message)
        for mm in check.mismatches:
            messages += [*walk(mm.headline), *walk(mm.explanation)]
    assert len({m.code for m in messages}) > 20
    assert_worded(tuple(messages))


def test_check_messages_match_their_templates_in_both_languages(generated_parquet: Path) -> None:
    """Criteria and notes of every check over generated traffic for every sample contract (the
    evaluate cases check their own: ``test_check_latency`` and ``test_check_others``)."""
    traces = ingest([generated_parquet])
    results = [r for path in CONTRACTS for r in evaluate(load_contract(path), traces).results]
    messages = result_messages(results)
    emitted = {m.code for m in messages}
    check_codes = {c for c in _codes() if str(c).startswith(("check.", "metering.losses."))}
    # many check codes are reached by real emitters here (the stand-in sweep above covers all,
    # and the evaluate cases reach most of the rest)
    assert len(check_codes & emitted) >= 0.4 * len(check_codes), sorted(
        map(str, check_codes - emitted)
    )
    assert_worded(messages)
