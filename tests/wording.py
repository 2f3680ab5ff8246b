"""Messages as their readers get them: every message a check emits (criteria and notes, nested
ones included) has the parameters its code declares and renders in every language, the Chinese
without English prose. The evaluate cases check their own results with it, and
``test_messages`` the other emitters'."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from slacheck.messages import LANGUAGES, Message, render
from slacheck.verdict import TermResult
from tests.langcheck import english_runs


def walk(message: Message) -> Iterator[Message]:
    """``message`` and the messages among its parameters, depth first."""
    yield message
    for value in message.params.values():
        for v in value if isinstance(value, list | tuple) else [value]:
            if isinstance(v, Message):
                yield from walk(v)


def result_messages(results: Iterable[TermResult]) -> list[Message]:
    """Every message of ``results``: each criterion and note, nested ones included."""
    return [m for r in results for top in (r.criterion_message, *r.notes) for m in walk(top)]


def assert_worded(messages: Iterable[Message]) -> None:
    """Each message has its code's parameters and renders in every language; the Chinese
    carries no English prose."""
    for m in messages:
        assert set(m.params) == m.code.params, m.code
        for lang in LANGUAGES:
            text = render(m, lang)
            assert text.strip() and "{" not in text, (m.code, lang, text)
        runs = english_runs(render(m, "zh"))
        assert runs == [], (m.code, runs, render(m, "zh"))
