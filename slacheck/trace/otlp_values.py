"""OTLP JSON values as the engine reads them: an attribute's ``AnyValue`` (which variant, its
text), numbers and timestamps as ``numbers`` specifies them, and span and trace ids. Each is the
Ibis twin of what the Python reader (``otlp``, ``records``) does to one value, compiled to
DuckDB's or Spark's own functions, so both readers give the same row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from slacheck.engine import Engine
from slacheck.trace import numbers
from slacheck.trace.normalise import stripped_expr

# -- attribute values ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """An attribute's value as the Python reader would see it: which variant it is, and its
    text when it is a scalar."""

    present: ir.BooleanValue
    text: ir.StringValue  # null unless a scalar (string, bool, int, double, bytes)
    is_array: ir.BooleanValue
    first: ir.StringValue  # the array's first element as text
    array_empty: ir.BooleanValue
    variant: ir.StringValue  # "string", "bool", "int", "double", "array", "kvlist", "bytes"


def scalar_text(v: ir.StructValue) -> ir.StringValue:
    """A scalar ``AnyValue``'s text, whichever variant holds it; null for an array or kvlist."""
    return ibis.coalesce(v.stringValue, v.boolValue, v.intValue, v.doubleValue, v.bytesValue)


def _json_string(text: ir.StringValue, engine: Engine) -> ir.StringValue:
    """The string a JSON-encoded string holds; null when ``text`` is not JSON."""
    return json_get(text, [], engine)


def json_get(text: ir.StringValue, path: list[str], engine: Engine) -> ir.StringValue:
    """The value at ``path`` (keys) of the JSON in ``text``, as text (a string unquoted, a
    number as written, an object as JSON); null when absent, JSON null or not JSON."""
    if engine is Engine.DUCKDB:
        where = "$" + "".join('."' + p.replace('"', '\\"') + '"' for p in path)
        return ibis.ifelse(
            _JSON_VALID(text).fill_null(False),
            _JSON_EXTRACT_STRING(text, where),
            ibis.null(dt.string),
        )
    where = "$" + "".join("['" + p.replace("'", "\\'") + "']" for p in path)
    return _GET_JSON_OBJECT(text, where)


def value_of(v: ir.StructValue, engine: Engine) -> Value:
    """An ``AnyValue`` struct as the Python reader sees it (``Value``)."""
    # the first key present wins, in the Python reader's order
    variant = ibis.cases(
        (v.stringValue.notnull(), "string"),
        (v.boolValue.notnull(), "bool"),
        (v.intValue.notnull(), "int"),
        (v.doubleValue.notnull(), "double"),
        (v.arrayValue.notnull(), "array"),
        (v.kvlistValue.notnull(), "kvlist"),
        (v.bytesValue.notnull(), "bytes"),
        else_=ibis.null(dt.string),
    )
    values = v.arrayValue["values"]
    is_array = (variant == "array").fill_null(False)
    text = scalar_text(v)
    # a JSON-encoded string ("\"chat\"") decoded once, as normalise.unquoted does
    quoted = (variant == "string") & (text.length() > 1) & text.startswith('"') & text.endswith('"')
    decoded = _json_string(text, engine)
    text = ibis.ifelse(quoted.fill_null(False), ibis.coalesce(decoded, text), text)
    return Value(
        present=variant.notnull(),
        text=ibis.ifelse(variant.isin(["array", "kvlist"]), ibis.null(dt.string), text),
        is_array=is_array,
        first=scalar_text(values[0]),
        array_empty=values.fill_null(ibis.literal([], type=values.type())).length() == 0,
        variant=variant,
    )


# -- numbers and timestamps, as ``numbers`` specifies them ------------------------------------

_INT64 = 2.0**63
#: JSON whitespace as a regular-expression class body (``numbers.JSON_WS``)
_WS = numbers.JSON_WS.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


@dataclass(frozen=True)
class Spelling:
    """A scalar's text as ``numbers.number`` spells it. Every read of a number or a timestamp
    below refers to these several times: a caller that makes them columns of a stage of their
    own (``spelling`` on its text, then the columns) keeps each read's expression small, where
    inlined they are repeated at every use (tens of kilobytes of SQL per timestamp)."""

    text: ir.StringValue  # JSON whitespace stripped
    is_int: ir.BooleanValue  # ``numbers.INTEGER``
    is_dec: ir.BooleanValue  # ``numbers.DECIMAL`` and not an integer


def spelling(raw: ir.StringValue) -> Spelling:
    """How ``raw`` is spelled as a number (``Spelling``)."""
    text = raw.re_replace(f"^[{_WS}]+|[{_WS}]+$", "")
    is_int = text.re_search(f"^{numbers.INTEGER}$").fill_null(False)
    is_dec = ~is_int & text.re_search(f"^{numbers.DECIMAL}$").fill_null(False)
    return Spelling(text, is_int, is_dec)


@dataclass(frozen=True)
class _Number:
    """A scalar's text read as ``numbers.number`` reads it: which spelling, and its value."""

    text: ir.StringValue  # JSON whitespace stripped
    is_int: ir.BooleanValue  # ``numbers.INTEGER``
    is_dec: ir.BooleanValue  # ``numbers.DECIMAL`` and not an integer
    exact: ir.IntegerValue  # an ``INTEGER`` within int64, else null
    double: ir.FloatingValue  # a ``DECIMAL`` as float64, else null


def _number(raw: ir.StringValue, spelled: Spelling | None = None) -> _Number:
    """``raw`` read as a number; ``spelled``: its ``Spelling`` when the caller has it."""
    s = spelling(raw) if spelled is None else spelled
    exact = ibis.ifelse(s.is_int, s.text.try_cast("int64"), ibis.null(dt.int64))
    double = ibis.ifelse(s.is_dec, s.text.try_cast("float64"), ibis.null(dt.float64))
    return _Number(s.text, s.is_int, s.is_dec, exact, double)


def _integral(f: ir.FloatingValue) -> ir.BooleanValue:
    # not ``floor() == f``: Ibis's floor is an integer, which a float beyond int64 overflows
    return f.notnull() & ~f.isnan() & ~f.isinf() & ((f % 1.0) == 0)


def _to_int64(f: ir.FloatingValue, ok: ir.BooleanValue) -> ir.IntegerValue:
    """``f`` as int64 where ``ok`` (the caller's range check), else null: the engine casts
    every row, so the others are cast from 0."""
    return ibis.ifelse(ok, ibis.ifelse(ok, f, 0.0).cast("int64"), ibis.null(dt.int64))


def as_int(text: ir.StringValue, spelled: Spelling | None = None) -> ir.IntegerValue:
    """``records.as_int`` (``numbers.count``) on a scalar's text: an integer within int64, an
    integral float within int64; null otherwise (the caller adds the defect). ``spelled``:
    ``text``'s ``Spelling`` when the caller has it (as a stage's columns)."""
    n = _number(text, spelled)
    fits = _integral(n.double) & (n.double >= -_INT64) & (n.double < _INT64)
    return ibis.coalesce(n.exact, _to_int64(n.double, fits.fill_null(False)))


def as_float(text: ir.StringValue, spelled: Spelling | None = None) -> ir.FloatingValue:
    """``records.as_float``: a number of either spelling as float64, null otherwise."""
    n = _number(text, spelled)
    a_number = n.is_int | n.is_dec | n.text.isin(list(numbers.NOT_FINITE))
    return ibis.ifelse(a_number, n.text.try_cast("float64"), ibis.null(dt.float64))


@dataclass(frozen=True)
class Nanos:
    """``numbers.nanos`` on a text, before blanks and ISO-8601 text are told apart. Like
    ``Spelling``, a caller may make these columns of a stage of their own, which
    ``nanos_us`` and ``first_token_us`` then refer to."""

    text: ir.StringValue  # JSON whitespace stripped
    us: ir.IntegerValue  # µs of a number of nanoseconds 0 ≤ n ≤ 2⁶⁴−1, else null
    zero: ir.BooleanValue  # the number is 0
    numeric: ir.BooleanValue  # a number at all


def nanos(raw: ir.StringValue, spelled: Spelling | None = None) -> Nanos:
    """``Nanos`` of ``raw`` (``spelled``: its ``Spelling`` when the caller has it). µs = n //
    1000 exactly: from the digits of an integer, and from a float beyond int64 in two steps."""
    n = _number(raw, spelled)
    digits = n.text.re_replace("^[+-]?0*", "")
    size = digits.length()
    fits = (size < 20) | ((size == 20) & (digits <= str(numbers.UINT64_MAX)))
    int_zero = n.is_int & (size == 0)
    int_ok = n.is_int & ~n.text.startswith("-") & fits
    int_us = ibis.ifelse(size > 3, digits.substr(0, size - 3), "0").try_cast("int64")
    f = n.double
    dec_ok = _integral(f) & (f >= 0) & (f < 2.0**64)
    dec_zero = dec_ok & (f == 0)
    # (2⁶³ + x) // 1000 = 2⁶³ // 1000 + (x + 2⁶³ % 1000) // 1000, each part exact in int64
    low = (dec_ok & (f < _INT64)).fill_null(False)
    above = (dec_ok & (f >= _INT64)).fill_null(False)
    high = ibis.literal(2**63 // 1000) + (_to_int64(f - _INT64, above) + 2**63 % 1000) // 1000
    dec_us = ibis.ifelse(low, _to_int64(f, low) // 1000, high)
    us = ibis.cases((int_ok, int_us), (dec_ok, dec_us), else_=ibis.null(dt.int64))
    return Nanos(n.text, us, int_zero | dec_zero, n.is_int | n.is_dec)


def as_bool(text: ir.StringValue) -> ir.BooleanValue:
    """``true`` or ``false`` in any case, whitespace around allowed; null otherwise."""
    low = stripped_expr(text).lower()
    return ibis.cases((low == "true", True), (low == "false", False), else_=ibis.null(dt.boolean))


def nanos_us(
    raw: ir.StringValue, engine: Engine, parts: Nanos | None = None
) -> tuple[ir.IntegerValue, ir.BooleanValue]:
    """``*UnixNano`` text → (µs, unparseable) as ``numbers.nanos`` and ``SpanRows`` read it:
    a number is nanoseconds (0 means unset), blank is unset, other text is ISO-8601.
    ``parts``: ``nanos(raw)`` when the caller has it (as a stage's columns)."""
    n = nanos(raw) if parts is None else parts
    blank = raw.isnull() | (n.text == "")
    value = ibis.cases(
        (blank | n.zero, ibis.null(dt.int64)),
        (n.numeric, n.us),
        else_=_iso_us(n.text, engine),
    )
    bad = ~blank & ~n.zero & value.isnull()
    return value, bad


def first_token_us(
    text: ir.StringValue | None,
    variant: ir.StringValue | None,
    engine: Engine,
    parts: Nanos | None = None,
) -> tuple[ir.IntegerValue, ir.BooleanValue]:
    """A ``timestamp`` rule's value → (µs, unparseable): an ``intValue`` is nanoseconds, a
    string ISO-8601 (a JSON-encoded string is unwrapped first); anything else unparseable.
    ``parts``: ``nanos(text)`` when the caller has it (as a stage's columns)."""
    if text is None or variant is None:
        return ibis.null(dt.int64), ibis.literal(False)
    quoted = (text.length() > 1) & text.startswith('"') & text.endswith('"')
    unq = ibis.ifelse(quoted, text.substr(1, text.length() - 2), text)
    stripped = stripped_expr(unq)
    n = nanos(text) if parts is None else parts
    from_int = ibis.ifelse(n.zero, ibis.literal(0, type=dt.int64), n.us)
    iso = ibis.ifelse(stripped == "", ibis.null(dt.int64), _iso_us(stripped, engine))
    value = ibis.cases(
        (variant.isin(["string", "bytes"]), iso),
        (variant == "int", from_int),
        else_=ibis.null(dt.int64),
    )
    blank = variant.isin(["string", "bytes"]) & (stripped == "")
    bad = variant.notnull() & ~blank.fill_null(False) & value.isnull()
    return value, bad


# -- ids ----------------------------------------------------------------------------------------


def otlp_id(raw: ir.StringValue, size: int, engine: Engine) -> ir.StringValue:
    """``otlp._otlp_id``, lower-cased: hex as written, base64 of ``size`` bytes as hex."""
    b64 = r"^[A-Za-z0-9+/]{22}==$" if size == 16 else r"^[A-Za-z0-9+/]{11}=$"
    hex_ok = (raw.length() == 2 * size) & raw.re_search(r"^[0-9a-fA-F]+$")
    decoded = _HEX(_DECODE[engine](raw))
    return ibis.cases(
        (raw.isnull() | (raw == ""), ibis.null(dt.string)),
        (hex_ok, raw),
        (raw.re_search(b64), decoded),
        else_=raw,
    ).lower()


# -- the engines' functions ---------------------------------------------------------------------


def _hex(x: dt.binary) -> str:  # type: ignore[empty-body]
    """The engine's hex of a blob (DuckDB and Spark: ``hex``)."""


def _from_base64(x: str) -> dt.binary:
    """DuckDB's base64 decoding."""


def _unbase64(x: str) -> dt.binary:
    """Spark's base64 decoding."""


def _epoch_us(x: dt.timestamp) -> dt.int64:
    """DuckDB's microseconds since the epoch."""


def _unix_micros(x: dt.timestamp) -> dt.int64:
    """Spark's microseconds since the epoch."""


def _json_valid(x: str) -> bool:  # type: ignore[empty-body]
    """DuckDB's JSON check."""


def _json_extract_string(x: str, path: str) -> str:  # type: ignore[empty-body]
    """DuckDB's JSON value as text."""


def _get_json_object(x: str, path: str) -> str:  # type: ignore[empty-body]
    """Spark's JSON value as text."""


_builtin: Any = ibis.udf.scalar.builtin
_JSON_VALID = _builtin(_json_valid, name="json_valid")
_JSON_EXTRACT_STRING = _builtin(_json_extract_string, name="json_extract_string")
_GET_JSON_OBJECT = _builtin(_get_json_object, name="get_json_object")
_HEX = _builtin(_hex, name="hex")
_EPOCH_US: dict[Engine, Any] = {
    Engine.DUCKDB: _builtin(_epoch_us, name="epoch_us"),
    Engine.SPARK: _builtin(_unix_micros, name="unix_micros"),
}
_DECODE: dict[Engine, Any] = {
    Engine.DUCKDB: _builtin(_from_base64, name="from_base64"),
    Engine.SPARK: _builtin(_unbase64, name="unbase64"),
}


def epoch_us(ts: ir.TimestampValue, engine: Engine) -> ir.IntegerValue:
    """Microseconds since the epoch of a timestamp, by the engine's own function (Ibis has no
    microsecond extraction on Spark)."""
    result: ir.IntegerValue = _EPOCH_US[engine](ts)
    return result


def _iso_us(text: ir.StringValue, engine: Engine) -> ir.IntegerValue:
    """ISO-8601 text (no offset means UTC) → µs since the epoch; null when it does not parse."""
    return epoch_us(text.try_cast("timestamp('UTC')"), engine)
