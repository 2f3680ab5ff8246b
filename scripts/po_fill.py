"""Fill zh_CN msgstr entries from a JSON list of [context, msgid, msgstr] (context may be null).

Used when moving wording that already has a reviewed translation into the catalogue; clears the
fuzzy flag on the entries it fills. ``python scripts/po_fill.py FILE.json``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from babel.messages.pofile import read_po, write_po

PO = Path(__file__).resolve().parents[1] / "slacheck/locale/zh_CN/LC_MESSAGES/slacheck.po"


def main(source: str) -> None:
    wanted = {(c or None, m): z for c, m, z in json.loads(Path(source).read_text(encoding="utf-8"))}
    with PO.open("rb") as fh:
        cat = read_po(fh, locale="zh_CN", domain="slacheck")
    filled = 0
    for msg in cat:
        key = (msg.context, msg.id if isinstance(msg.id, str) else msg.id[0])
        if key in wanted:
            z = wanted[key]
            msg.string = tuple(z) if isinstance(msg.id, tuple) and isinstance(z, list) else z
            msg.flags.discard("fuzzy")
            filled += 1
    with PO.open("wb") as fh:
        write_po(fh, cat, width=0, sort_by_file=True, ignore_obsolete=True)
    print(f"filled {filled} of {len(wanted)}")


if __name__ == "__main__":
    main(sys.argv[1])
