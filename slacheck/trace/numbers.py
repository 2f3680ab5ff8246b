"""One reading of a number, a timestamp and a JSON line, for every trace reader.

The Python readers (``records.as_int``, ``records.SpanRows``, ``otlp._nanos``) follow the
functions here; the engine reader (``otlp_values.as_int``, ``otlp_values.nanos_us``) follows the
same table with the same regular expressions, so both read a file the same way
(``tests/test_reader_differential.py`` holds them to it).

**Which spellings are numbers.** A value is a number when it is a JSON number, or a string that,
after JSON whitespace (space, tab, CR, LF) is stripped from both ends, is written in ASCII as

======================  ====================================  ==========================
spelling                example                               reads as
======================  ====================================  ==========================
``INTEGER``             ``12``, ``+5``, ``-3``, ``007``       that integer, exactly
``DECIMAL``             ``12.0``, ``1e5``, ``1.7E+18``, ``.5``  a float64 (then the rules)
anything else           ``0x10``, ``1_000``, ``１２``, ``١٢``,   not a number
                        ``inf``, ``nan``, ``" "``, ``true``
======================  ====================================  ==========================

**Counts** (token counts, HTTP status, any integer field): an integer within int64; a float64
counts when it is finite, integral and within int64 (``12.0`` is 12, ``12.5`` is no count). A
JSON boolean is no count. Anything else is ``unparseable_number:<field>``.

**Floats** (durations, rates): either spelling as float64, and proto3 JSON's ``NaN``,
``Infinity`` and ``-Infinity`` (``NOT_FINITE``; set aside later as impossible values).

**Timestamps** (OTLP ``*UnixNano``, and an ``intValue`` first-token time): nanoseconds since
the epoch as an unsigned 64-bit integer, 0 ≤ n ≤ 2⁶⁴−1 (the proto type is ``fixed64``); 0 is
unset; µs = n // 1000 (exact, also for floats). Negative, fractional, beyond 2⁶⁴−1, not finite,
a boolean, a list or an object: ``unparseable_timestamp:<field>``. A string that is not a number
is ISO-8601 (no offset means UTC); a blank string is unset. Beyond the years the calendars cover
is a separate reason, ``out_of_range``, decided after reading (``schema.PLAUSIBLE_US``).

**Lines.** A JSON-lines file is split on ``\\n`` only (``\\r\\n`` is ``\\n`` with JSON whitespace
before it): U+2028, U+0085, a form feed or a bare CR are no line ends.

**Bounds.** A JSON value nests at most ``MAX_JSON_DEPTH`` lists and objects (counted as
brackets outside strings); one line of JSON lines is at most ``MAX_LINE_BYTES`` bytes. Both
readers refuse more, with the file and the line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

#: JSON's own whitespace; nothing else is stripped from a number (U+3000, U+00A0 stay)
JSON_WS = " \t\n\r"
#: the two spellings of a number, as regular expressions both Python and the engines read
INTEGER = r"[+-]?[0-9]+"
DECIMAL = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_INTEGER = re.compile(INTEGER, re.ASCII)
_DECIMAL = re.compile(DECIMAL, re.ASCII)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1

#: lists and objects nested deeper than this in one JSON value are refused by both readers
MAX_JSON_DEPTH = 128
#: the longest line of JSON lines either reader reads (one export request)
MAX_LINE_BYTES = 64 * 2**20


def number(value: object) -> int | float | None:
    """The number ``value`` spells (a JSON number, or a string per the table), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip(JSON_WS)
    if _INTEGER.fullmatch(text):
        return int(text)
    if _DECIMAL.fullmatch(text):
        return float(text)
    return None


#: proto3 JSON's spellings of a double that is not finite (a float field's only other words)
NOT_FINITE = ("NaN", "Infinity", "-Infinity")


def real(value: object) -> float | None:
    """The float64 ``value`` spells (either spelling, or proto3 JSON's ``NaN``, ``Infinity``,
    ``-Infinity``; beyond float64 is infinite, as the engines cast it), or None."""
    if isinstance(value, str) and value.strip(JSON_WS) in NOT_FINITE:
        return float(value.strip(JSON_WS))
    n = number(value)
    if n is None or isinstance(n, float):
        return n
    try:
        return float(n)
    except OverflowError:
        return math.copysign(math.inf, n)


def integer(value: object) -> int | None:
    """The integer ``value`` spells (any size), or None: an integral finite float is one."""
    n = number(value)
    if isinstance(n, float):
        return int(n) if math.isfinite(n) and n.is_integer() else None
    return n


def count(value: object) -> int | None:
    """``value`` as a count: an integer within int64, or None."""
    n = integer(value)
    return n if n is not None and INT64_MIN <= n <= INT64_MAX else None


class _Bad:
    """The reading of a timestamp that is not one (see ``nanos``)."""

    def __repr__(self) -> str:
        return "BAD_TIMESTAMP"


BAD_TIMESTAMP = _Bad()


def nanos(value: object) -> int | str | _Bad | None:
    """A ``*UnixNano`` value: nanoseconds (1 ≤ n ≤ 2⁶⁴−1), None when unset (absent, blank, 0),
    the string itself when it is no number (ISO-8601, parsed later), or ``BAD_TIMESTAMP``."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip(JSON_WS):
            return None
        if number(value) is None:
            return value
    elif isinstance(value, bool) or not isinstance(value, int | float):
        return BAD_TIMESTAMP
    n = integer(value)
    if n is None or not 0 <= n <= UINT64_MAX:
        return BAD_TIMESTAMP
    return n or None


def json_depth(value: object, limit: int = MAX_JSON_DEPTH) -> int:
    """How many lists and objects ``value`` nests (0 for a scalar), counted up to ``limit + 1``
    (deeper is not looked at). Iterative, level by level."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level and depth <= limit:
        depth += 1
        nxt: list[dict[Any, Any] | list[Any]] = []
        for node in level:
            children = node.values() if isinstance(node, dict) else node
            nxt.extend(c for c in children if isinstance(c, dict | list))
        level = nxt
    return depth


#: the bytes of a file are looked at in blocks of about this size (whole lines)
_BLOCK = 4 * 2**20


def bytes_beyond_engine(path: Path) -> str | None:
    """Why the engine's line reader would not read ``path`` as ``numbers`` says, or None.

    DuckDB's line reader also ends a line at a bare CR, and the engines parse a value nested
    deeper than ``MAX_JSON_DEPTH`` without a word: a file with a CR, or with a line that nests
    deeper (brackets outside strings), goes to the Python reader, which reads the CR as this
    module says and refuses the depth at its line. One pass over the bytes, in numpy, a block
    of whole lines at a time; a line broken by an odd quote or bracket goes to Python anyway.
    """
    import numpy as np

    with path.open("rb") as fh:
        rest = b""
        while True:
            block = fh.read(_BLOCK)
            data = rest + block
            if not block:
                rest = b""
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0 and len(data) <= MAX_LINE_BYTES:
                    rest = data
                    continue
                data, rest = (data[:cut], data[cut:]) if cut else (data, b"")
            if not data:
                return None
            a = np.frombuffer(data, dtype=np.uint8)
            if (a == 13).any():
                return "a carriage return"
            if _max_depth(np, a) > MAX_JSON_DEPTH:
                return f"a value nested more than {MAX_JSON_DEPTH} deep"
            if not block:
                return None


def _max_depth(np: Any, a: Any) -> int:
    """The deepest bracket nesting outside strings in the bytes ``a`` (whole, valid lines)."""
    backslash = a == 92
    quote = a == 34
    if backslash.any():
        # a quote preceded by an odd run of backslashes is escaped
        at = np.arange(a.size, dtype=np.int32)
        last_other = np.where(backslash, -1, at)
        np.maximum.accumulate(last_other, out=last_other)
        run = np.zeros(a.size, dtype=np.int32)
        run[1:] = at[:-1] - last_other[:-1]
        quote &= (run & 1) == 0
    inside = (np.cumsum(quote, dtype=np.int32) & 1).astype(bool)
    step = (a == 91).astype(np.int8) + (a == 123) - (a == 93) - (a == 125)
    step[inside] = 0
    return int(np.cumsum(step, dtype=np.int32).max(initial=0))
