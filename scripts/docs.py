"""Regenerate the generated parts of README.md (contract fields, canonical columns, trace
conventions)."""

from __future__ import annotations

import sys
from pathlib import Path

from slacheck.contract.docs import reference_markdown
from slacheck.trace.conventions import reference_markdown as conventions_markdown
from slacheck.trace.schema import reference_markdown as canonical_markdown

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = {
    "contract-fields": reference_markdown,
    "canonical-columns": canonical_markdown,
    "trace-conventions": conventions_markdown,
}


def main() -> int:
    text = README.read_text(encoding="utf-8")
    for name, make in BLOCKS.items():
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        head, _, rest = text.partition(start)
        _, _, tail = rest.partition(end)
        text = f"{head}{start}\n{make().strip()}\n{end}{tail}"
    README.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
