"""What ingestion reports besides the spans: each file it read (``SourceFile``) and the row
accounting of the whole input (``Quality``: rows read, used and set aside, with examples).

Plain data, the standard library only: the report and the terminal read these without
importing an engine or the readers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: how a file was read: scanned by the engine, or parsed in Python into columns
READ_BY_ENGINE = "engine"
READ_BY_PYTHON = "python"


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str
    format: str
    sha256: str
    rows: int
    #: ``READ_BY_ENGINE`` or ``READ_BY_PYTHON``
    read_by: str = READ_BY_ENGINE
    #: why a file the engine was to read was parsed in Python instead (the engine failed)
    fallback: str | None = None


@dataclass(frozen=True, slots=True)
class Quality:
    """rows_read = rows_used + sum(set_aside.values()); orphans are used but flagged."""

    rows_read: int
    rows_used: int
    set_aside: dict[str, int]
    examples: dict[str, tuple[str, ...]]  # reason → a few "file: ref" strings
    orphans: int
    orphan_examples: tuple[str, ...]

    @property
    def rows_set_aside(self) -> int:
        return sum(self.set_aside.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows_read": self.rows_read,
            "rows_used": self.rows_used,
            "rows_set_aside": self.rows_set_aside,
            "set_aside": dict(sorted(self.set_aside.items())),
            "examples": {k: list(v) for k, v in sorted(self.examples.items())},
            "orphans": self.orphans,
            "orphan_examples": list(self.orphan_examples),
        }
