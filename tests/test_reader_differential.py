"""The two OTLP JSON-lines readers, the Python one and the engine's, read the same hostile files
the same way (issue 26): identical canonical rows, set-aside reasons and counts, for numbers
and timestamps at every edge ``slacheck.trace.numbers`` specifies.

A seeded generator writes ``CASES`` hostile files of a few lines each; every value of a
timestamp or a count is drawn from the extremes below (int64 and uint64 limits, negatives,
floats, strings of digits, spellings that are no number, other JSON types) and a line end the
Python reader once split on (U+2028, U+0085) sits inside a string. In ``make test`` the 200
files are read batched into ``BATCHES`` files (the engine pays per file, not per line); the
slow run reads them as 200 files."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from slacheck.trace import numbers
from slacheck.trace.ingest import ingest
from slacheck.trace.schema import ARROW_SCHEMA
from tests.test_otlp_engine import _same, _sorted

CASES = 200
BATCHES = 4
T0 = 1_782_864_000_000_000_000

#: every value a ``*UnixNano`` or an ``intValue`` takes in the generated files (JSON values)
EDGES: list[Any] = [
    # integers at the limits
    0,
    1,
    -1,
    999,
    1000,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    -(2**63),
    -(2**63) - 1,
    10**21,
    T0,
    T0 + 123_456_789,
    # floats
    1.7e18,
    float(T0),
    1.5,
    -0.0,
    0.0,
    1e300,
    1e19,
    1.8446744073709552e19,
    9.223372036854775e18,
    12.0,
    # strings of digits and other spellings
    str(T0),
    f" {T0} ",
    f"\t{T0}\n",
    f"+{T0}",
    f"-{T0}",
    f"00{T0}",
    "1.782864e18",
    "1.782864E+18",
    "1782864000000000000.0",
    str(2**64 - 1),
    str(2**64),
    str(2**63),
    "9" * 30,
    "0",
    "-0",
    "+0",
    "0.0",
    "1e5",
    "12.0",
    "12.5",
    ".5",
    "5.",
    "0x10",
    " 12 ",
    "+5",
    "-5",
    "1_000",
    "１２",
    "١٢",
    "\u3000" + str(T0),
    "12\u00a0",
    "inf",
    "nan",
    "Infinity",
    "-Infinity",
    "NaN",
    "",
    "   ",
    "abc",
    "2026-07-01T00:00:00Z",
    "2026-07-01T00:00:01.5Z",
    "2026-07-01T08:00:00+08:00",
    # other JSON types
    True,
    False,
    None,
    [1],
    {"a": 1},
]

#: strings with characters ``str.splitlines`` ends a line at, and controls
NAMES = ["chat gpt-4o", "a\u2028b", "x\u0085y", "p\u2029q", "tab\there", "\u202eevil", "名"]


def _value(rng: random.Random) -> Any:
    return rng.choice(EDGES)


def _int_value(rng: random.Random) -> dict[str, Any]:
    v = _value(rng)
    return {"intValue": v} if rng.random() < 0.8 else {"doubleValue": v}


def _span(rng: random.Random, i: int) -> dict[str, Any]:
    start = T0 + i * 60_000_000_000
    attrs: list[dict[str, Any]] = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.request.model", "value": {"stringValue": rng.choice(NAMES)}},
        {"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}},
    ]
    for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
        if rng.random() < 0.7:
            attrs.append({"key": key, "value": _int_value(rng)})
    if rng.random() < 0.3:
        attrs.append({"key": "http.response.status_code", "value": _int_value(rng)})
    span: dict[str, Any] = {
        "traceId": f"{i + 1:032x}",
        "spanId": f"{i + 1:016x}",
        "name": rng.choice(NAMES),
        "startTimeUnixNano": _value(rng) if rng.random() < 0.6 else str(start),
        "endTimeUnixNano": _value(rng) if rng.random() < 0.6 else str(start + 900_000_000),
        "attributes": attrs,
    }
    if rng.random() < 0.1:
        del span["endTimeUnixNano"]
    return span


def _line(rng: random.Random, first: int, n: int) -> str:
    spans = [_span(rng, first + k) for k in range(n)]
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    # ensure_ascii=False: U+2028 and U+0085 are written as they are, inside strings
    return json.dumps(doc, ensure_ascii=False)


def _cases() -> list[str]:
    """The text of each hostile file."""
    rng = random.Random(26)
    out = []
    for _ in range(CASES):
        lines = [_line(rng, 10 * k, rng.randint(1, 3)) for k in range(rng.randint(1, 3))]
        if rng.random() < 0.2:
            lines.insert(1, "")  # a blank line: numbering counts it
        out.append("\n".join(lines) + "\n")
    return out


@pytest.fixture(scope="module")
def batched_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("differential")
    cases = _cases()
    out = []
    for b in range(BATCHES):
        path = folder / f"batch{b}.jsonl"
        path.write_text("".join(cases[b::BATCHES]), encoding="utf-8")
        out.append(path)
    return out


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("differential-files")
    out = []
    for f, text in enumerate(_cases()):
        path = folder / f"f{f:03d}.jsonl"
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out


def test_every_edge_is_drawn(batched_files: list[Path]) -> None:
    text = "".join(p.read_text("utf-8") for p in batched_files)
    for v in EDGES:
        assert json.dumps(v, ensure_ascii=False) in text, v


def test_the_engine_reads_what_python_reads(
    batched_files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_reading(batched_files, monkeypatch)


@pytest.mark.slow
def test_the_engine_reads_what_python_reads_file_by_file(
    hostile_files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_reading(hostile_files, monkeypatch)


def _rows(t: pa.Table) -> pa.Table:
    return _sorted(t.select(ARROW_SCHEMA.names))


def _same_reading(files: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file ingested twice, by the Python reader and by the engine: the same canonical
    rows (used and set aside), the same set-aside reasons, counts and examples."""
    monkeypatch.setenv("SLACHECK_OTLP_ENGINE_BYTES", "-1")  # Python reads every file
    by_python = ingest(files)
    monkeypatch.setenv("SLACHECK_OTLP_ENGINE_BYTES", "0")  # the engine reads every file
    by_engine = ingest(files)
    # the engine read every file itself: the comparison means something
    assert {s.read_by for s in by_engine.sources} == {"engine"}
    assert {s.read_by for s in by_python.sources} == {"python"}
    assert by_engine.quality.to_dict() == by_python.quality.to_dict()
    for part in ("spans", "set_aside_rows"):
        python = _rows(getattr(by_python, part).to_pyarrow())
        engine = _rows(getattr(by_engine, part).to_pyarrow())
        _same(engine.cast(ARROW_SCHEMA), python.cast(ARROW_SCHEMA))
    q = by_python.quality
    assert q.rows_read == q.rows_used + q.rows_set_aside
    # the files hold every kind of reason the readers give numbers and timestamps
    assert {r.split(":")[0] for r in q.set_aside} >= {
        "unparseable_timestamp",
        "unparseable_number",
        "out_of_range",
    }


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (T0, T0),
        (str(T0), T0),
        (f" {T0}\n", T0),
        ("1.7e18", 1_700_000_000_000_000_000),
        (2**64 - 1, 2**64 - 1),
        (2**64, numbers.BAD_TIMESTAMP),
        (-1, numbers.BAD_TIMESTAMP),
        ("-5", numbers.BAD_TIMESTAMP),
        (1.5, numbers.BAD_TIMESTAMP),
        (True, numbers.BAD_TIMESTAMP),
        ({"a": 1}, numbers.BAD_TIMESTAMP),
        (0, None),
        ("-0", None),
        ("  ", None),
        ("１２", "１２"),  # no number: read as ISO-8601 (and refused there)
        ("0x10", "0x10"),
    ],
)
def test_the_timestamp_table(value: object, want: object) -> None:
    assert numbers.nanos(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("1e5", 100_000),
        ("12.0", 12),
        (" 12 ", 12),
        ("+5", 5),
        ("0x10", None),
        ("１２", None),
        ("١٢", None),
        ("1_000", None),
        ("12.5", None),
        ("\u300012", None),
        (2**63 - 1, 2**63 - 1),
        (2**63, None),
        (9.3e18, None),
        (True, None),
    ],
)
def test_the_count_table(value: object, want: object) -> None:
    assert numbers.count(value) == want
