"""A converted folder's record (``trace.record``): a run on the folder with the record gives
exactly what ingesting the folder without it gives; a record that does not hold (a data file
changed, added or removed, the record edited, corrupt or of another version) is refused,
said, and the passes run again."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from slacheck.cli import app
from slacheck.contract.load import load_contract_text
from slacheck.contract.model import Contract
from slacheck.evaluation import evaluate
from slacheck.messages import render
from slacheck.metering import context, recorded
from slacheck.trace import record
from slacheck.trace.convert import convert
from slacheck.trace.generate import TrafficProfile, generate
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces

STARTERS = Path(__file__).resolve().parents[1] / "slacheck" / "contract" / "starters"
runner = CliRunner()


def _demo(zone: str = "Asia/Shanghai") -> Contract:
    text = (STARTERS / "demo.yaml").read_text(encoding="utf-8").replace("Asia/Shanghai", zone)
    return load_contract_text(text, "demo.yaml")


def _trace(
    seed: int, malformed: int, orphan_every: int, wrap_every: int, odd: bool = False
) -> pa.Table:
    """Generated traffic with rows set aside (``malformed``), orphans (every n-th task span
    removed, so its children lose their parent) and wrapper llm spans (every n-th llm call
    under a wrapper llm span). ``odd``: usable rows whose values ingestion normalises (blank
    text, an `ok` with a 404, a generic `error` with a class, a root of kind `other`), which a
    converted folder holds already normalised."""
    table = generate(
        TrafficProfile(
            tasks=30,
            days=20,
            seed=seed,
            malformed=malformed,
            start=dt.datetime(2026, 6, 25, tzinfo=dt.UTC),
        )
    )
    rows = table.to_pylist()
    if orphan_every:
        roots = [i for i, r in enumerate(rows) if r["kind"] == "task"][::orphan_every]
        rows = [r for i, r in enumerate(rows) if i not in set(roots)]
    if wrap_every:
        llm = [
            r for r in rows if r["kind"] == "llm" and r["span_id"] and r["start_us"] and r["end_us"]
        ]
        for r in llm[::wrap_every]:
            w = dict(r, span_id=f"{r['span_id']}-w", source_ref=f"{r['source_ref']} w")
            w["start_us"] -= 1000
            w["end_us"] += 1000
            r["parent_span_id"] = w["span_id"]
            rows.append(w)
    if odd:
        llm = [r for r in rows if r["kind"] == "llm"]
        for r in llm[::7]:
            r.update(region="  ", endpoint="", service_tier="\t")
        for r in llm[3::11]:
            r.update(status="ok", http_status=404, error_type=None)
        for r in llm[5::13]:
            r.update(status="error", error_type="RateLimitError", http_status=None)
        for r in [r for r in rows if r["kind"] == "task"][::9]:
            r.update(kind="other")
    return pa.Table.from_pylist(rows, schema=table.schema)


def _converted(tmp: Path, table: pa.Table) -> Path:
    src = tmp / "t.parquet"
    pq.write_table(table, src)
    out = tmp / "by-day"
    convert(ingest([src]), out, recorded.DERIVED)  # as ``slacheck traces convert`` does
    assert (out / record.RECORD_DIR / record.RECORD_NAME).is_file()
    return out


def _rows(t: Any) -> tuple[list[str], list[str]]:
    """A table's columns and its rows as a sorted list (row order is no result)."""
    return t.columns, sorted(map(repr, t.to_pyarrow().to_pylist()))


def _facts(t: Traces) -> dict[str, Any]:
    """Everything a run reads of ingestion, as plain values."""
    rows = t.spans.to_pyarrow().to_pylist()
    bad = t.set_aside_rows.to_pyarrow().to_pylist()
    by_quarter = None
    if t.llm_by_quarter is not None:
        by_quarter = sorted(map(repr, t.llm_by_quarter.to_pyarrow().to_pylist()))
    return {
        "quality": t.quality.to_dict(),
        "sources": t.sources,
        "extent": t.extent,
        "llm_wrappers": t.llm_wrappers,
        "spans": sorted(map(repr, rows)),
        "columns": t.spans.columns,
        "set_aside_rows": sorted(map(repr, bad)),
        "set_aside_columns": t.set_aside_rows.columns,
        "by_quarter": by_quarter,
    }


def _without_record(folder: Path) -> Traces:
    shutil.rmtree(folder / record.RECORD_DIR)
    t = ingest([folder])
    assert not t.record_used and t.record_refused is None
    return t


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],
)
@given(
    seed=st.integers(min_value=0, max_value=1000),
    malformed=st.sampled_from([0, 9]),
    orphan_every=st.sampled_from([0, 4]),
    wrap_every=st.sampled_from([0, 5]),
    zone=st.sampled_from(["UTC", "Asia/Kathmandu"]),
    odd=st.booleans(),
)
@example(seed=3, malformed=0, orphan_every=0, wrap_every=0, zone="UTC", odd=False)
@example(seed=4, malformed=9, orphan_every=4, wrap_every=5, zone="Asia/Kathmandu", odd=True)
def test_the_record_gives_what_ingesting_the_folder_gives(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    malformed: int,
    orphan_every: int,
    wrap_every: int,
    zone: str,
    odd: bool,
) -> None:
    folder = _converted(
        tmp_path_factory.mktemp("rec"), _trace(seed, malformed, orphan_every, wrap_every, odd)
    )
    c = _demo(zone)
    fast = ingest([folder])
    assert fast.record_used and fast.record_refused is None
    assert fast.quality.set_aside if malformed else not fast.quality.set_aside
    assert bool(fast.quality.orphans) == bool(orphan_every)
    # the calls and tasks the record keeps are what a check reads, and what it would derive
    kept, kept_tasks = fast.derived[recorded.CALLS], fast.derived[recorded.TASKS]
    assert context.Metering(c, fast).calls is kept.table
    assert context.Metering(c, fast).tasks is kept_tasks.table
    with_record = evaluate(c, fast).to_dict()
    with mock.patch.object(context, "VIEW_FROM_ROWS", 0):  # the calls as a view, too
        as_view = evaluate(c, ingest([folder])).to_dict()
    facts = _facts(fast)
    kept_calls, tasks = _rows(kept.table), _rows(kept_tasks.table)
    slow = _without_record(folder)
    assert not slow.derived
    assert _facts(slow) == facts
    assert _rows(context.Metering(c, slow).calls) == kept_calls
    assert _rows(context.Metering(c, slow).tasks) == tasks
    general = evaluate(c, slow).to_dict()
    assert with_record == general
    assert as_view == general
    assert len(general["terms"]) > 5


def _flip_one_id_char(path: Path) -> None:
    """One hexadecimal character of an id in the file changed to another: the same size, the
    same footer, still readable Parquet; only the hash can tell."""
    data = bytearray(path.read_bytes())
    found = re.search(rb"[0-9a-f]{16}", bytes(data[4:-64]))
    assert found is not None
    at = 4 + found.start() + 8
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    path.write_bytes(bytes(data))


def _edit_count(folder: Path) -> None:
    at = folder / record.RECORD_DIR / record.RECORD_NAME
    doc = json.loads(at.read_text())
    doc["body"]["quality"]["rows_used"] += 1
    at.write_text(json.dumps(doc))


def _consistent(folder: Path, edit: Any) -> None:
    """The record's body changed by ``edit``, its checksum made anew (a crafted record)."""
    at = folder / record.RECORD_DIR / record.RECORD_NAME
    doc = json.loads(at.read_text())
    edit(doc["body"])
    doc["sha256"] = record._digest(doc["body"])
    at.write_text(json.dumps(doc))


def _other_version(folder: Path) -> None:
    """A consistent record, of another version."""
    _consistent(folder, lambda body: body.__setitem__("slacheck", "0.0.1"))


def _day(folder: Path) -> Path:
    return sorted(folder.glob("day=2026-*/*.parquet"))[1]


_CHANGES = {
    "data file changed, same size": (lambda f: _flip_one_id_char(_day(f)), "changed"),
    "data file rewritten": (
        lambda f: pq.write_table(pq.read_table(_day(f)).slice(1), _day(f)),
        "changed",
    ),
    "file added": (
        lambda f: shutil.copy(_day(f), _day(f).parent / "more.parquet"),
        "was added",
    ),
    "file removed": (lambda f: _day(f).unlink(), "was removed"),
    "record edited": (_edit_count, "checksum differs"),
    "record corrupt": (
        lambda f: (f / record.RECORD_DIR / record.RECORD_NAME).write_text('{"body": {'),
        "cannot be read",
    ),
    "record of another version": (_other_version, "another slacheck version"),
    "kept calls changed, same size": (
        lambda f: _flip_one_id_char(f / record.RECORD_DIR / "calls.parquet"),
        "changed",
    ),
    "kept calls removed": (
        lambda f: (f / record.RECORD_DIR / "calls.parquet").unlink(),
        "was removed",
    ),
}


_RULES = '''"""Rules."""

LIMIT = 5  # five

def f(x):
    return x + "#not a comment"
'''


@pytest.mark.parametrize(
    ("edited", "same"),
    [
        (_RULES.replace("# five", "# five, measured again 2026-12-07"), True),
        ("# a note\n" + _RULES.replace("def f", "\n\ndef f") + "   \n# the end\n", True),
        (_RULES.replace("    return", "    # why: the tail\n    return"), True),
        (_RULES.replace("\n", "\r\n"), True),
        (_RULES.replace("LIMIT = 5", "LIMIT = 6"), False),
        (_RULES.replace("#not a comment", "# not a comment"), False),  # a string, not a comment
        (_RULES.replace('"""Rules."""', '"""The rules."""'), False),
        (_RULES.replace("LIMIT = 5  # five", "LIMIT = 5 if True else 4  # five"), False),
        (_RULES.replace('"""Rules."""', '"""Rules.\n\n"""'), False),  # a string's blank line
    ],
    ids=[
        "a comment edited",
        "comments and blank lines added",
        "a comment line in a function",
        "CRLF line ends",
        "a constant",
        "a string holding a hash sign",
        "a docstring",
        "an expression",
        "a blank line inside a string",
    ],
)
def test_the_rules_digest_reads_code_not_comments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: str, same: bool
) -> None:
    """A comment-only edit of a rule module (the comments here carry measurements) keeps the
    rules digest, so no record is refused for it; any edit of code, strings or docstrings
    changes it."""
    import importlib

    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "slacheck_probe_rules.py"

    def digest(text: str) -> str:
        module.write_bytes(text.encode("utf-8"))
        importlib.invalidate_caches()
        record.rules_digest.cache_clear()
        return record.rules_digest(("slacheck_probe_rules",))

    try:
        assert (digest(edited) == digest(_RULES)) is same
        assert digest(_RULES) != record.rules_digest(("slacheck_probe_absent",))
    finally:
        record.rules_digest.cache_clear()


def test_the_rules_digest_leaves_out_nothing_python_reads() -> None:
    """Of every rule module a record or a kept table names, what the digest reads parses to the
    same syntax tree as the module: only comments and empty lines are left out."""
    import ast
    import importlib.util

    modules = {*record._RULE_MODULES, *(m for m in recorded.RULES if ":" not in m)}
    assert len(modules) >= 10
    for name in sorted(modules):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        source = Path(spec.origin).read_bytes()
        code = record._code(source)
        assert len(code) < len(source), name  # each has comments or blank lines to leave out
        assert ast.dump(ast.parse(code)) == ast.dump(ast.parse(source)), name


@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_a_record_that_does_not_hold_is_refused_and_the_passes_run(
    tmp_path: Path, change: str
) -> None:
    folder = _converted(tmp_path, _trace(5, 9, 4, 5))
    alter, why = _CHANGES[change]
    alter(folder)
    t = ingest([folder])
    assert not t.record_used
    assert t.record_refused is not None and why in render(t.record_refused, "en")
    c = _demo()
    refused = evaluate(c, t).to_dict()
    facts = _facts(t)
    fresh = _without_record(folder)
    assert _facts(fresh) == facts
    assert evaluate(c, fresh).to_dict() == refused


def _calls_rules(folder: Path, rules: list[str], digest: str | None = None) -> None:
    """The record, consistent (its checksum made anew), saying the kept tables were derived
    under ``rules`` with ``digest`` (their digest today when None)."""

    def edit(body: dict[str, Any]) -> None:
        for entry in body["derived"].values():
            entry["rules"] = rules
            entry["digest"] = digest or record.rules_digest(tuple(rules))

    _consistent(folder, edit)


@pytest.mark.parametrize(
    "rules",
    [
        pytest.param("older", id="derived under other sources"),
        pytest.param("fewer", id="derived under fewer modules"),
        pytest.param("outside", id="naming a module outside slacheck"),
    ],
)
def test_kept_calls_derived_under_other_rules_are_derived_again(tmp_path: Path, rules: str) -> None:
    """The record's facts stand, but the calls and tasks kept under rules other than today's
    are not read: the check derives them from the rows, with the same verdicts as without any
    record."""
    folder = _converted(tmp_path, _trace(10, 9, 4, 5, odd=True))
    today = list(recorded.RULES)
    if rules == "older":
        _calls_rules(folder, today, digest="0" * 32)
    elif rules == "fewer":
        _calls_rules(folder, today[:-1])
    else:
        _calls_rules(folder, [*today, "os.path"])
    t = ingest([folder])
    assert t.record_used and t.record_refused is None
    if rules == "fewer":  # still a digest that holds, of another list: the check passes it by
        assert t.derived[recorded.CALLS].rules != recorded.RULES
    else:
        assert not t.derived
    c = _demo()
    if t.derived:
        assert context.Metering(c, t).calls is not t.derived[recorded.CALLS].table
        assert context.Metering(c, t).tasks is not t.derived[recorded.TASKS].table
    result = evaluate(c, t).to_dict()
    assert result == evaluate(c, _without_record(folder)).to_dict()


def test_the_command_keeps_the_tables_up_to_the_bound_and_a_run_reads_them_only_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``traces convert`` keeps the calls and tasks up to ``KEEP_UP_TO_ROWS`` usable spans,
    none above; a run on a folder above the bound reads none it finds, with the same result."""
    src = tmp_path / "t.parquet"
    pq.write_table(_trace(11, 0, 0, 0), src)
    kept_dir = record.RECORD_DIR
    below, above = tmp_path / "below", tmp_path / "above"
    assert runner.invoke(app, ["traces", "convert", str(src), "-o", str(below)]).exit_code == 0
    t = ingest([below])
    assert sorted(p.name for p in (below / kept_dir).glob("*.parquet")) == [
        "calls.parquet",
        "llm_by_quarter.parquet",
        "tasks.parquet",
    ]
    c = _demo()
    assert context.Metering(c, t).calls is t.derived[recorded.CALLS].table
    read = evaluate(c, t).to_dict()
    monkeypatch.setattr(recorded, "KEEP_UP_TO_ROWS", t.quality.rows_used - 1)
    assert runner.invoke(app, ["traces", "convert", str(src), "-o", str(above)]).exit_code == 0
    assert not (above / kept_dir / "calls.parquet").exists()
    assert not ingest([above]).derived
    t = ingest([below])  # kept, but above the bound now: not read
    assert t.record_used and set(t.derived) == {recorded.CALLS, recorded.TASKS}
    assert recorded.kept(t, recorded.CALLS) is None and recorded.kept(t, recorded.TASKS) is None
    assert context.Metering(c, t).calls is not t.derived[recorded.CALLS].table
    assert evaluate(c, t).to_dict() == read


_CRAFTED = {
    "a kept table outside the record's folder": lambda b: b["derived"]["calls"]["file"].__setitem__(
        0, "../t.parquet"
    ),
    "a kept table under another name": lambda b: b["derived"]["calls"]["file"].__setitem__(
        0, ".slacheck/tasks.parquet"
    ),
    "the counts outside the record's folder": lambda b: b["llm_by_quarter"].__setitem__(
        0, "day=2026-06-25/data_0.parquet"
    ),
    "a kept table's entry without its rules": lambda b: b["derived"]["tasks"].pop("rules"),
    "kept tables not a mapping": lambda b: b.__setitem__("derived", ["calls"]),
    "a kept table's file not a row": lambda b: b["derived"]["calls"].__setitem__("file", 7),
}


@pytest.mark.parametrize("craft", sorted(_CRAFTED))
def test_a_record_naming_files_it_does_not_write_is_refused(tmp_path: Path, craft: str) -> None:
    """A record consistent with its checksum that names a file elsewhere than a record writes
    it, or lacks an entry's parts, is refused as unreadable (no file outside is hashed or
    read), and the passes run: never an internal error."""
    folder = _converted(tmp_path, _trace(12, 0, 0, 0))
    _consistent(folder, _CRAFTED[craft])
    t = ingest([folder])
    assert not t.record_used and not t.derived
    assert t.record_refused is not None and "cannot be read" in render(t.record_refused, "en")
    assert _facts(t) == _facts(_without_record(folder))


def test_the_command_says_the_record_is_refused_in_both_languages(tmp_path: Path) -> None:
    folder = _converted(tmp_path, _trace(6, 0, 0, 0))
    demo = str(STARTERS / "demo.yaml")
    quiet = runner.invoke(app, ["check", demo, str(folder), "--format", "json"])
    assert quiet.exit_code in (0, 1) and "note:" not in quiet.stderr
    _flip_one_id_char(_day(folder))
    for lang, said in (("en", "does not hold"), ("zh", "记录不成立")):
        res = runner.invoke(app, ["check", demo, str(folder), "--format", "json", "--lang", lang])
        assert res.exit_code in (0, 1)
        assert said in res.stderr and str(_day(folder)) in res.stderr
        assert json.loads(res.stdout)["quality"] == json.loads(quiet.stdout)["quality"]


def test_the_converted_folder_holds_the_record_and_only_data_files_are_traces(
    tmp_path: Path,
) -> None:
    folder = _converted(tmp_path, _trace(7, 9, 4, 0))
    t = ingest([folder])
    assert t.record_used
    assert all("/.slacheck/" not in s.path for s in t.sources)
    assert sum(s.rows for s in t.sources) == t.quality.rows_read
    assert pq.read_schema(_day(folder)).names[-1] == "orphan"


def test_on_spark_the_record_is_used_with_the_same_verdicts(
    tmp_path: Path, spark_backend: Any
) -> None:
    folder = _converted(tmp_path, _trace(8, 9, 4, 5))
    c = _demo()
    duck = evaluate(c, ingest([folder])).to_dict()
    spark = ingest([folder], backend=spark_backend)
    assert spark.record_used and spark.llm_by_quarter is None and not spark.derived
    on_spark = evaluate(c, spark).to_dict()
    assert on_spark["summary"] == duck["summary"]
    assert on_spark["quality"] == duck["quality"]
    assert on_spark["sources"] == duck["sources"]
    assert [(t["id"], t.get("window"), t["verdict"]) for t in on_spark["terms"]] == [
        (t["id"], t.get("window"), t["verdict"]) for t in duck["terms"]
    ]
    # without the record, Spark establishes the same facts itself (evaluating them again, 40 s
    # here, proves nothing more: test_evaluate runs the same check on Spark without a record,
    # and the property test above evaluates both routes on DuckDB)
    shutil.rmtree(folder / record.RECORD_DIR)
    fresh = ingest([folder], backend=spark_backend)
    assert not fresh.record_used
    assert {**_facts(fresh), "by_quarter": None} == {**_facts(spark), "by_quarter": None}


CONTRACTS = sorted((Path(__file__).resolve().parents[1] / "contracts").glob("*.yaml"))


def test_check_through_the_record_says_what_check_without_it_says(tmp_path: Path) -> None:
    """``slacheck check`` of every contract in contracts/ and the demo contract on a converted
    folder: the same exit code and the same JSON (accounting, set-aside reasons, orphans,
    verdicts) whether the run trusts the record or ingests the folder again."""
    folder = _converted(tmp_path, _trace(9, 9, 4, 5))
    contracts = [*CONTRACTS, STARTERS / "demo.yaml"]
    assert len(contracts) >= 5

    def run_all() -> list[tuple[int, dict[str, Any]]]:
        out = []
        for c in contracts:
            res = runner.invoke(app, ["check", str(c), str(folder), "--format", "json"])
            assert res.exit_code in (0, 1), (c, res.stderr)
            assert "does not hold" not in res.stderr
            out.append((res.exit_code, json.loads(res.stdout)))
        return out

    assert ingest([folder]).record_used
    trusted = run_all()
    shutil.rmtree(folder / record.RECORD_DIR)
    again = run_all()
    assert again == trusted
    assert any(d["quality"]["set_aside"] for _, d in trusted)
    assert all(d["quality"]["orphans"] for _, d in trusted)
