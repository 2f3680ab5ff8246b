"""The JSON document readers (Langfuse, LangSmith, OTLP) made faster read every file exactly as
before (issue 27): the same canonical rows, values, defects and order, or the same located
problems, on hostile generated documents, the hostile corpus and every fixture
(``json_corpus.DIGESTS`` pins what the readers gave before the change)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slacheck.trace.conventions import Format, classify_rule, read_fields, span_reader, table
from tests.json_corpus import CASES, DIGESTS, MAKERS, digests, write_corpus


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return digests(tmp_path_factory.mktemp("json-corpus"))


def test_every_file_reads_as_before(found: dict[str, str]) -> None:
    pinned = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert found.keys() == pinned.keys()
    changed = sorted(name for name in pinned if found[name] != pinned[name])
    assert not changed, f"read differently than before: {changed}"


def test_the_corpus_holds_every_hostile_value(tmp_path: Path) -> None:
    """The generated files reach the readers' edges: rows set aside for every reason numbers
    and timestamps give, in each format; refused files; every shape."""
    from slacheck.errors import TraceInputError
    from slacheck.trace.ingest import _json_readers

    reasons: dict[str, set[str]] = {fmt: set() for fmt in MAKERS}
    refused: dict[str, int] = dict.fromkeys(MAKERS, 0)
    for fmt, path in write_corpus(tmp_path):
        try:
            table = _json_readers()[fmt](path)
        except TraceInputError:
            refused[fmt] += 1
            continue
        for defect in table.column("defect").to_pylist():
            reasons[fmt] |= {d.split(":")[0] for d in (defect or "").split(";") if d}
    for fmt in MAKERS:
        assert reasons[fmt] >= {"unparseable_timestamp", "unparseable_number"}, fmt
        assert 0 < refused[fmt] < CASES // 2, fmt


# -- the compiled rows give what the rows give -------------------------------------------------

_KEYS = sorted(
    {r.attribute for r in table().fields if r.attribute}
    | {r.attribute for r in table().kinds}
    | {r.attribute.split(".", 1)[0] for r in table().fields if "." in r.attribute}
    | {"x", "usage", "inputs", "extra", "outputs"}
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.floats(allow_nan=True),
    st.sampled_from(["chat", '"chat"', "LLM", "llm", "openai", "langchain", "12", " 7 ", "1e3"]),
    st.sampled_from(["http://GW.local:4000/v1/", "localhost", "2026-07-01T00:00:00Z", '"x"']),
    st.text(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*_KEYS, "input", "prompt_tokens", "model"]), inner),
    ),
    max_leaves=6,
)


_DOTTED = sorted(
    {r.attribute for r in table().fields if "." in r.attribute}
    | {r.attribute for r in table().kinds if "." in r.attribute}
)


@st.composite
def _attributes(draw: st.DrawFn) -> dict[str, Any]:
    """Flat attributes, and some rows' dotted names written as nested objects (a LangSmith
    run's ``extra.metadata.ls_provider``), sometimes cut short or holding a non-object."""
    attributes: dict[str, Any] = draw(st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=8))
    for dotted in draw(st.lists(st.sampled_from(_DOTTED), max_size=4)):
        parts = dotted.split(".")
        cut = draw(st.integers(min_value=1, max_value=len(parts)))
        node = attributes
        for part in parts[: cut - 1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[cut - 1]] = draw(_VALUES)
    return attributes


@settings(max_examples=400, deadline=None)
@given(
    fmt=st.sampled_from(["otlp", "langfuse", "langsmith", "openai_agents"]),
    attributes=_attributes(),
    skip=st.sets(st.sampled_from(["input_tokens", "provider", "request_model", "ttft_ms"])),
    events=st.none() | st.dictionaries(st.sampled_from(["x", "new_token", "exception"]), _SCALARS),
    name=st.none() | st.sampled_from(["chat", "Agent._prepare_chat_with_tools", "x"]),
)
def test_the_compiled_rows_read_as_the_rows_do(
    fmt: Format,
    attributes: dict[str, Any],
    skip: set[str],
    events: dict[str, Any] | None,
    name: str | None,
) -> None:
    """``span_reader`` (rows indexed by key, paths split once) against ``read_fields`` and
    ``classify_rule`` over ``rows_for``, the definition: the same fields, sources, first token,
    defects and kind for any attributes, nested or JSON-quoted values included."""
    kinds, fields = table().rows_for(fmt)
    want_defects: list[str] = []
    want = read_fields(attributes, fields, want_defects, skip, events)
    rule = classify_rule(attributes, kinds, name)
    got_defects: list[str] = []
    got, claimed = span_reader(fmt).read(attributes, got_defects, skip, events, name)
    if rule is not None:
        want.sources["kind"] = rule.attribute
    assert claimed == (None if rule is None else (rule.kind, rule.operation))
    assert got.sources == want.sources
    assert _same(got.fields, want.fields)
    assert _same(got.first_token, want.first_token)
    assert got_defects == want_defects


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN, of the same types."""
    return repr(a) == repr(b)
