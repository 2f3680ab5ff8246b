"""A checker for text meant for a Chinese reader: no English prose left in it.

Identifiers (snake_case, dotted names, paths, ``code``, ids with digits or hyphens, slacheck
command lines), quoted
values and markup are allowed; a run of three or more plain English words is not.
"""

from __future__ import annotations

import html
import re

# what may stay in Latin script: markup, code, quotes, identifiers, units
_TAG = re.compile(r"<(style|script|svg)\b.*?</\1>|<[^>]+>", re.S | re.I)
_CODE = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|“[^”]*”")
_COMMAND = re.compile(r"\bslacheck(?: [a-z]+)+")  # a command line is code
_IDENT = re.compile(r"[\w.\-/<>:=@]*[_./<>=@\d\-][\w.\-/<>:=@]*")
_WORD = re.compile(r"[A-Za-z]+")
#: English words in a run, separated only by spaces and light punctuation
_RUN = re.compile(r"[A-Za-z]+(?:[ ,;()'’\-]+[A-Za-z]+){2,}")


def english_runs(text: str, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """Runs of three or more English words in ``text`` (HTML tags dropped), identifiers and
    quoted values aside. ``allowed``: phrases to accept (names, product terms)."""
    plain = html.unescape(_TAG.sub(" ", text))
    for phrase in allowed:
        plain = plain.replace(phrase, " ")
    plain = _CODE.sub(" ", plain)
    plain = _COMMAND.sub(" ", plain)
    plain = _IDENT.sub(" ", plain)
    return [m.group() for m in _RUN.finditer(plain) if len(_WORD.findall(m.group())) >= 3]


__all__ = ["english_runs"]
