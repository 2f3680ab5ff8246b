"""One text-safety rule for every output: text from a contract or a trace cannot steer what a
reader sees.

The characters that are never written as they are, in any output:

* control characters (Unicode category Cc) but tab and newline: escape sequences that
  rewrite a terminal, a bare CR that overwrites a line, NUL;
* format characters (Cf), among them the bidirectional controls U+202A–U+202E, U+2066–U+2069,
  U+200E/U+200F and U+061C, which reorder what is shown ("Trojan Source": a vendor named
  ``Evil Corp \\u202egnp.exe Ltd`` reads as "Evil Corp exe.png Ltd"), zero-width characters
  and the byte-order mark;
* the line and paragraph separators U+2028/U+2029 (Zl, Zp), which end a line in some viewers
  and not in others;
* lone surrogates (Cs), which no UTF-8 file can hold, and the non-characters U+FFFE/U+FFFF,
  which XML 1.0 forbids.

Each is written as its escape, ``\\x1b``, ``\\u202e``, ``\\U000e0001`` (``\\u00XX`` and
surrogate pairs in JSON, where that is the string's own escape): visible, ASCII, and valid
in every format slacheck writes (XML 1.0, JSON, YAML, HTML, Markdown, a terminal). The rule is
applied where an output is made: the terminal (``console.safe``), every document template's
text (``render.documents``: HTML, Markdown, and the PDF and DOCX made from the HTML; the DOCX
converter applies it again to each run after decoding entities), claim letters,
JUnit XML, OpenSLO YAML and JSON.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["UNSAFE_CATEGORIES", "escape", "json_text", "unsafe", "visible", "xml_text"]

#: the Unicode categories never written raw (tab and newline excepted)
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NONCHARACTERS = frozenset({"\ufffe", "\uffff"})
_KEEP = frozenset({"\t", "\n"})

#: Characters that might be unsafe: everything outside ranges that hold none (printable
#: ASCII, Latin to Hebrew, CJK punctuation and ideographs, full-width forms). Each candidate is
#: decided by its category; ``tests/test_textsafe.py`` checks these ranges hold no unsafe one.
SAFE_RANGES = (
    ("\x20", "\x7e"),
    ("\xa0", "\xac"),
    ("\xae", "\u05ff"),
    ("\u3000", "\u303f"),
    ("\u4e00", "\u9fff"),
    ("\uff01", "\uffef"),
)
_CANDIDATE = re.compile(
    "[^\t\n" + "".join(f"{re.escape(a)}-{re.escape(b)}" for a, b in SAFE_RANGES) + "]"
)


def unsafe(ch: str) -> bool:
    """Whether the character ``ch`` is never written as it is."""
    if ch in _KEEP:
        return False
    return ch in _NONCHARACTERS or unicodedata.category(ch) in UNSAFE_CATEGORIES


def escape(ch: str) -> str:
    """``ch`` as a visible escape: ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    if n <= 0xFFFF:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def _json_escape(ch: str) -> str:
    n = ord(ch)
    if n <= 0xFFFF:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def _sub(text: str, how: object) -> str:
    def one(m: re.Match[str]) -> str:
        ch = m.group()
        return how(ch) if unsafe(ch) else ch  # type: ignore[operator]

    return _CANDIDATE.sub(one, text)


def visible(text: object) -> str:
    """``text`` with every unsafe character written as its escape (terminal, HTML, Markdown,
    YAML, PDF)."""
    return _sub(str(text), escape)


def xml_text(text: object) -> str:
    """``visible`` for XML 1.0: what remains is a well-formed document's text (the XML
    serialiser still escapes ``<``, ``&`` and quotes)."""
    return visible(text)


def json_text(text: str) -> str:
    """Serialised JSON with every unsafe character as a JSON ``\\u`` escape: the same JSON
    value, and no such character in the text."""
    return _sub(text, _json_escape)
