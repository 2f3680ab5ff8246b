"""The review's core: a finding, its severity, and the registry every rule is added through."""

# A rule is a small function registered with `@rule(code, severity, title=...)`; its docstring
# is its user documentation (first line: the title). A rule yields `Hit`s (where, why with the
# contract's own numbers, and the clause change that fixes it); the registry turns them into
# `Finding`s. The built-in rules live one group to a module beside this one and register here
# exactly as an outside plugin would.

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from slacheck.contract.model import Contract
from slacheck.messages import Message, MessageCode

__all__ = ["RULES", "Finding", "Hit", "Loc", "Rule", "Severity", "review", "rule"]

Loc = tuple[str | int, ...]


class Severity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """0 for the most severe, so findings sort HIGH first."""
        return list(Severity).index(self)


@dataclass(frozen=True, slots=True)
class Finding:
    """One weak clause: which rule, where in the contract, why it matters, what to write.

    ``headline``, ``why`` and ``fix`` are messages (codes with parameters); ``title``,
    ``explanation`` and ``suggestion`` are their English text.
    """

    code: str
    severity: Severity
    field: Loc
    headline: Message
    why: Message
    fix: Message

    @property
    def path(self) -> str:
        """`latency[0].measurement_point`, for people."""
        out = ""
        for seg in self.field:
            out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else seg)
        return out

    @property
    def title(self) -> str:
        return self.headline.text

    @property
    def explanation(self) -> str:
        return self.why.text

    @property
    def suggestion(self) -> str:
        return self.fix.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "field": list(self.field),
            "path": self.path,
            "title": self.title,
            "explanation": self.explanation,
            "suggestion": self.suggestion,
            "messages": {
                "title": self.headline.to_dict(),
                "explanation": self.why.to_dict(),
                "suggestion": self.fix.to_dict(),
            },
        }


@dataclass(frozen=True, slots=True)
class Hit:
    """What a rule function yields; the registry adds the rule's code, severity and title."""

    field: Loc
    why: Message
    fix: Message


RuleFunc = Callable[[Contract], Iterable[Hit]]


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: Severity
    title: str
    doc: str
    check: Callable[[Contract], Iterable[Finding]]


RULES: dict[str, Rule] = {}
_CODE = re.compile(r"SLA[1-9]\d\d")


def rule(
    code: str, severity: Severity, *, title: MessageCode | None = None
) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule; built-in rules use this exactly as an outside plugin would.

    The title is the docstring's first line, said through the message ``title``, whose English
    template must be that line (each rule group declares its ``<code>.title`` messages beside
    its rules).
    """

    def register(fn: RuleFunc) -> RuleFunc:
        if not _CODE.fullmatch(code):
            raise ValueError(f"rule code {code!r} must look like SLA101")
        if code in RULES:
            raise ValueError(f"rule code {code} is registered twice")
        doc = inspect.getdoc(fn)
        if not doc:
            raise TypeError(f"rule {code} needs a docstring: it is the rule's documentation")
        first = doc.splitlines()[0].strip()
        if title is None or title.template != first:
            raise ValueError(f"rule {code} needs a title message whose template is {first!r}")
        headline = title()

        def check(contract: Contract) -> Iterator[Finding]:
            for hit in fn(contract):
                yield Finding(code, severity, hit.field, headline, hit.why, hit.fix)

        RULES[code] = Rule(code, severity, first, doc, check)
        # re-insert in code order so documentation and `lint --rules` list rules predictably
        ordered = sorted(RULES.items())
        RULES.clear()
        RULES.update(ordered)
        return fn

    return register


def review(contract: Contract) -> tuple[Finding, ...]:
    """Run every registered rule; findings sorted by severity (high first), then code."""
    found = [finding for r in RULES.values() for finding in r.check(contract)]
    return tuple(sorted(found, key=lambda f: (f.severity.rank, f.code)))
