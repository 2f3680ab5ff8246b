"""Issue 14: hostile input gives no forged report, no false "met", no traceback, no hang and
loses nothing. Every class of the issue is a case of the corpus (tests/hostile/corpus.py),
run through the real command line in a subprocess with a timeout; the fast cases run in
parallel once per module, the slow ones (``-m slow``) one by one."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slacheck.errors import Reason, TraceInputError
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from tests.hostile.corpus import VALID, Case, build, otlp_doc, otlp_span
from tests.hostile.run import Outcome, run, run_all

_FOLDER = Path(tempfile.mkdtemp(prefix="slacheck-hostile-"))
atexit.register(shutil.rmtree, _FOLDER, ignore_errors=True)
CASES = {c.name: c for c in build(_FOLDER)}


@pytest.fixture(scope="module")
def fast_outcomes() -> dict[str, Outcome]:
    return run_all([c for c in CASES.values() if not c.slow], workers=4)


def _check(o: Outcome) -> None:
    c = o.case
    text = o.stdout + o.stderr
    assert o.code is not None, f"{c.name}: hung (no exit within {c.timeout} s)"
    assert o.code in c.exits, f"{c.name}: exit {o.code}, want {sorted(c.exits)}\n{o.stderr}"
    for bad in c.forbidden:
        assert bad not in text, f"{c.name}: printed {bad!r}\n{text[-2000:]}"
    if o.code == 2:
        assert o.stderr.startswith("error: "), f"{c.name}: {o.stderr}"
        for want in c.says:
            assert want in o.stderr, f"{c.name}: message lacks {want!r}\n{o.stderr}"
    assert not o.changed, f"{c.name}: changed {o.changed}"


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if c.slow else n for n, c in CASES.items()]
)
def test_hostile_case(name: str, request: pytest.FixtureRequest) -> None:
    case = CASES[name]
    # a slow case runs alone: selecting one (-k) does not run every fast case first
    _check(run(case) if case.slow else request.getfixturevalue("fast_outcomes")[name])


@pytest.mark.parametrize(
    ("prelude", "stopped"),
    [("while True: pass", "cpu"), ("import time; time.sleep(600)", "wall")],
    ids=["spinning", "waiting"],
)
def test_the_runner_says_a_command_that_never_ends_hung(prelude: str, stopped: str) -> None:
    """The hang detector itself: a command spinning on the CPU is stopped by its CPU limit
    (not by the wall, which a loaded machine stretches), one that waits by the wall."""
    case = Case("never_ends", 26, ("validate", "-"), VALID, prelude=prelude, timeout=1)
    o = run(case)
    assert (o.code, o.stopped) == (None, stopped), o.stderr


def test_every_class_of_the_issue_has_cases() -> None:
    assert {c.item for c in CASES.values()} >= {3, 4, 5, 6, 7, 8}


# -- 3: rows read = spans in the file -----------------------------------------------------------


def test_resource_with_both_scope_keys_reads_both(tmp_path: Path) -> None:
    doc = {
        "resourceSpans": [
            {
                "scopeSpans": [{"spans": [otlp_span(0)]}],
                "instrumentationLibrarySpans": [{"spans": [otlp_span(1), otlp_span(2)]}],
            }
        ]
    }
    path = tmp_path / "both.json"
    path.write_text(json.dumps(doc))
    assert ingest([path]).quality.rows_read == 3


def test_langfuse_with_observations_and_data_reads_both(tmp_path: Path) -> None:
    def obs(i: int) -> dict[str, object]:
        return {
            "id": f"o{i}",
            "traceId": "t1",
            "type": "GENERATION",
            "startTime": f"2026-07-01T00:00:0{i}Z",
            "endTime": f"2026-07-01T00:00:0{i}.5Z",
        }

    path = tmp_path / "lf.json"
    path.write_text(json.dumps({"observations": [obs(0), obs(1)], "data": [obs(2)]}))
    q = ingest([path]).quality
    assert q.rows_read == 3 == q.rows_used + q.rows_set_aside


def test_duplicate_key_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    spans = json.dumps([otlp_span(0)])
    head = '{"resourceSpans": [{"scopeSpans": [{"spans": ' + spans + "}]}],"
    path.write_text(head + '\n"resourceSpans": []}')
    with pytest.raises(TraceInputError) as info:
        ingest([path])
    (p,) = info.value.problems
    assert (p.code, p.line) == (Reason.DUPLICATE_KEY, 2)


def test_one_file_by_two_paths_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps(otlp_doc([otlp_span(i) for i in range(4)])))
    (tmp_path / "link.json").symlink_to(path)
    monkeypatch.chdir(tmp_path)
    q = ingest(["a.json", str(path), "./a.json", "link.json"]).quality
    assert (q.rows_read, q.rows_set_aside) == (4, 0)


# -- 6: outputs never destroy data --------------------------------------------------------------


def test_failed_generate_keeps_the_old_file(tmp_path: Path) -> None:
    keep = tmp_path / "keep.json"
    keep.write_text("precious")
    broken = pa.table({"task_id": ["t"]})  # the writer fails part way: no span columns
    with pytest.raises(Exception):  # noqa: B017 - any failure; what matters is the file
        write(broken, keep, "otlp")
    assert keep.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]  # no temporary left


def test_generate_replaces_atomically(tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    out.write_text("old")
    write(generate(TrafficProfile(tasks=3, days=1)), out, "parquet")
    assert out.read_bytes()[:4] == b"PAR1"
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


# -- fuzzing each reader from a valid seed ------------------------------------------------------

_SEED = otlp_doc([otlp_span(i) for i in range(3)])
_WEIRD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(value: object, at: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*at, i))
    return out


def _replace(doc: object, at: tuple[object, ...], new: object) -> object:
    if not at:
        return new
    copy = json.loads(json.dumps(doc))
    node = copy
    for key in at[:-1]:
        node = node[key]
    node[at[-1]] = new
    return copy


_PATHS = _paths(_SEED)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    swaps=st.lists(st.tuples(st.sampled_from(_PATHS), _WEIRD), min_size=1, max_size=3),
    cut=st.one_of(st.none(), st.integers(min_value=0, max_value=2000)),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"]),
)
def test_fuzzed_otlp_is_read_or_refused_with_a_location(
    tmp_path: Path, swaps: list[tuple[tuple[object, ...], object]], cut: int | None, encoding: str
) -> None:
    doc: object = _SEED
    for at, new in swaps:
        try:
            doc = _replace(doc, at, new)
        except (KeyError, IndexError, TypeError):
            continue
    text = json.dumps(doc, allow_nan=True)
    data = text.encode(encoding, "replace")
    if cut is not None:
        data = data[:cut]
    path = tmp_path / "fuzz.json"
    path.write_bytes(data)
    try:
        traces = ingest([path])
    except TraceInputError as exc:
        assert exc.problems and all(p.file == str(path) for p in exc.problems)
        return
    q = traces.quality
    assert q.rows_read == q.rows_used + q.rows_set_aside
