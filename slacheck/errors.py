"""Exceptions for input slacheck cannot process; a breached term is a result, never an exception.

Exception tree::

    SlacheckError
    ├── InputError            input that cannot be processed; carries Problems
    │   ├── ContractInvalid   a contract file fails to parse or validate
    │   └── TraceInputError   a trace file is unreadable, of no known format, or mis-mapped
    └── UsageError            the command line or API call itself is wrong

Every ``Problem`` names the file, the line and column (or row) and the field, says what is
wrong and what would fix it, and carries a ``code`` so tests assert on the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class Reason(StrEnum):
    """Why input was rejected. Stable: tests and JSON consumers match on these."""

    YAML_SYNTAX = "yaml_syntax"
    NOT_A_MAPPING = "not_a_mapping"
    UNKNOWN_FIELD = "unknown_field"
    MISSING_FIELD = "missing_field"
    INVALID_VALUE = "invalid_value"
    CROSS_FIELD = "cross_field"
    FILE_NOT_FOUND = "file_not_found"
    UNKNOWN_FORMAT = "unknown_format"
    MALFORMED_TRACE = "malformed_trace"
    BAD_MAPPING = "bad_mapping"
    NOT_A_FILE = "not_a_file"
    TOO_LARGE = "too_large"
    TOO_DEEP = "too_deeply_nested"
    NOT_UTF8 = "not_utf8"
    DUPLICATE_KEY = "duplicate_key"
    CHANGED_WHILE_READ = "changed_while_read"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one input, located as precisely as the input allows."""

    file: str
    message: str
    code: Reason
    field: str = ""
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    row: int | None = None  # 1-based data row, for tables
    fix: str = ""

    def location(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        elif self.row is not None:
            where += f" row {self.row}"
        return where

    def __str__(self) -> str:
        text = f"{self.location()}: "
        if self.field:
            text += f"{self.field}: "
        text += self.message
        if self.fix:
            text += f" ({self.fix})"
        return text

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["code"] = str(self.code)
        return d


def changed_while_read(file: str, *, would: str, fix: str) -> Problem:
    """The problem with an input that is no longer as it was when slacheck read it: written,
    replaced or removed during the run. ``would``: what a result from it would be."""
    return Problem(
        file,
        f"changed while slacheck read it (written, replaced or removed): {would}",
        Reason.CHANGED_WHILE_READ,
        fix=fix,
    )


class SlacheckError(Exception):
    """Base of every error slacheck raises on purpose."""


#: At most this many problems are kept for one input; the rest are counted (``more``).
MAX_PROBLEMS = 50


class InputError(SlacheckError):
    """Input that cannot be processed. Holds the problems found (at most ``MAX_PROBLEMS``;
    ``more`` counts those left out), not just the first."""

    def __init__(self, problems: Iterable[Problem], *, more: int = 0) -> None:
        found = tuple(problems)
        self.problems: tuple[Problem, ...] = found[:MAX_PROBLEMS]
        self.more: int = more + len(found) - len(self.problems)
        super().__init__(self._text())

    def _text(self) -> str:
        n = len(self.problems) + self.more
        head = f"{n} problem{'s' if n != 1 else ''}:" if n > 1 else ""
        lines = [str(p) for p in self.problems]
        if self.more:
            lines.append(f"… and {self.more:,} more")
        return "\n".join([head, *lines]) if head else "\n".join(lines)


class ContractInvalid(InputError):
    """A contract file that fails to parse or validate."""


class TraceInputError(InputError):
    """A trace file that is unreadable, of no known format, or mis-mapped."""


class UsageError(SlacheckError):
    """The command line or API call is wrong (unknown option value, missing argument)."""


__all__ = [
    "ContractInvalid",
    "InputError",
    "Problem",
    "Reason",
    "SlacheckError",
    "TraceInputError",
    "UsageError",
    "changed_while_read",
]
