"""A converted folder's record: what ingestion established about the rows ``traces convert``
wrote, kept beside them (``.slacheck/record.json``, written in the same atomic rename), so that
a later run on the folder need not establish it again.

The record holds the row accounting (rows read, used, set aside per reason, with examples),
the orphans with examples, the usable spans' extent, the wrapper count, the usable llm spans
per UTC quarter hour and names (``.slacheck/llm_by_quarter.parquet``, on DuckDB) and, for each
data file, its path in the folder, size, rows and SHA-256. Rows set aside are in
``day=set-aside``; the orphan flag is a column of the data (``orphan``).

It may also hold tables a later stage derives from the usable rows alone, whatever the contract
(``Derived``: the model calls and the tasks with their derived columns, ``metering.recorded``),
written on
DuckDB as ``.slacheck/<name>.parquet`` and listed like the data files, with the names of the
modules whose rules derive them and a digest of their source. A run uses such a table only when
that digest still holds (and the stage asking for it names the same modules); otherwise it
derives the table again from the rows, as for any input, and the record's other facts stand.

A run given the folder trusts the record only when every check holds: its checksum (an edit
of the record, or a truncated one, is refused), the record format, slacheck version and
ingestion's rules (a digest of the source of the modules that establish the facts) it was
written by, the same data files (none added, none removed, each the same size) and each
file's SHA-256. The hash is what cannot be fooled by an edit of a data file (Parquet footers
and sizes can stay the same while a page's bytes change), and it costs nothing extra: every
run states each source's SHA-256, so it reads every byte anyway. When a check fails the run
says why (``RecordSays``) and ingestion's passes run as for any input: never stale facts.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import tokenize
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir
import pyarrow.parquet as pq
import sqlglot as sg
from ibis.backends.sql.datatypes import DuckDBType

from slacheck.engine import Engine, EngineSession, engine_of
from slacheck.inputs import Stamp, regular_file_problem, sha256_of, stamp_of
from slacheck.messages import NC_, Message, MessageCode
from slacheck.progress import Stage, Step, report
from slacheck.trace.reasons import reason_expr
from slacheck.trace.results import READ_BY_ENGINE, Quality, SourceFile
from slacheck.trace.schema import SetAside
from slacheck.trace.tabular import (
    identity_mapping,
    read_canonical_files,
    read_parquet_files,
    read_table,
)
from slacheck.trace.traces import Kept, Traces
from slacheck.version import __version__

#: the folder inside a converted folder that holds the record (hidden: no trace file)
RECORD_DIR = ".slacheck"
RECORD_NAME = "record.json"
BY_QUARTER_NAME = "llm_by_quarter.parquet"
#: the partition of rows ingestion set aside (``trace.convert``)
SET_ASIDE_PARTITION = "set-aside"
#: the record's own layout; a record of another is refused
FORMAT = 1
#: no record of any folder is this large: a larger file is not one
_MAX_BYTES = 64 * 2**20
#: the modules whose rules establish the facts the record holds: a change to any of them
#: (a new set-aside rule, another reading of canonical Parquet) refuses records written before
_RULE_MODULES = (
    "slacheck.trace.ingest",
    "slacheck.trace.keys",
    "slacheck.trace.reasons",
    "slacheck.trace.record",
    "slacheck.trace.schema",
    "slacheck.trace.tabular",
    "slacheck.trace.status",
    "slacheck.trace.convert",
)
_EXAMPLES = 3
#: what a derived table's name may be (its file is ``<name>.parquet`` in ``RECORD_DIR``)
_DERIVED_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")
#: what a derived table's rule may name: one of slacheck's modules, or a data file one of its
#: packages ships (``package:file``); a record naming anything else keeps no table a run uses
_RULE_NAME = re.compile(r"slacheck(\.[a-z_][a-z0-9_]*)*(:[A-Za-z0-9_.-]+)?")


@dataclass(frozen=True)
class Derived:
    """A table a later stage derives from the usable rows alone (no contract, no option), kept
    in the record so that a run on the folder reads it instead of deriving it again.

    ``make``: the table, from the traces as a run on the folder reads them (the usable rows
    and the rows set aside as written, ingestion's facts). ``rules``: the modules whose
    source decides its rows (``slacheck.…``): a change to any of them makes the kept table
    stale, and unused."""

    name: str
    make: Callable[[Traces], ir.Table]
    rules: tuple[str, ...]


class RecordSays(MessageCode):
    """Why a converted folder's record is not trusted (``Traces.record_refused``)."""

    UNREADABLE = NC_("trace.record.unreadable", "the record cannot be read ({detail})")
    EDITED = NC_(
        "trace.record.edited", "the record was changed after it was written (its checksum differs)"
    )
    OTHER_VERSION = NC_(
        "trace.record.other_version",
        "the record was written by another slacheck version or rule set ({version})",
    )
    ADDED = NC_("trace.record.added", "{file} was added after the conversion")
    REMOVED = NC_("trace.record.removed", "{file} was removed after the conversion")
    CHANGED = NC_("trace.record.changed", "{file} changed after the conversion")


@dataclass(frozen=True, slots=True)
class _File:
    path: str  # within the folder, with ``/``
    size: int
    sha256: str
    rows: int

    def row(self) -> list[Any]:
        return [self.path, self.size, self.sha256, self.rows]

    @classmethod
    def of(cls, row: Sequence[Any]) -> _File:
        """The file a record's row (``row()``) names."""
        return cls(str(row[0]), int(row[1]), str(row[2]), int(row[3]))


@dataclass(frozen=True)
class Recorded:
    """A run's use of a folder's record: the traces built from it, or why it was refused
    (both None: the input is not one converted folder with a record)."""

    traces: Traces | None = None
    refused: Message | None = None


# ---------------------------------------------------------------------------------------------
# writing


def write_record(
    traces: Traces, out: Path, files: Sequence[Path], derived: Sequence[Derived] = ()
) -> None:
    """Record what ingestion established about ``traces`` beside the data ``traces convert``
    wrote under ``out`` (its trace files: ``files``). The examples and the per-reason counts
    are read back from the written files (their paths and row numbers are those a later run
    names), and must be ingestion's. ``derived``: tables to keep beside them (DuckDB only;
    each made from the rows as read back, as a run on the folder would make it)."""
    listed = [_File(_rel(p, out), p.stat().st_size, h, _rows(p)) for p, h in _hashes(files)]
    rows = {f.path: f.rows for f in listed}
    q = traces.quality
    used, bad = _tables(traces.backend, None, files, out, orphans=q.orphans > 0)
    set_aside, examples = _set_aside(bad, out)
    orphan_examples = _orphan_examples(used, out) if q.orphans else []
    if (
        set_aside != q.set_aside
        or sum(rows.values()) != q.rows_read
        or sum(n for p, n in rows.items() if _aside(p)) != q.rows_set_aside
    ):  # a bug, never bad input: the record would state other facts than the data hold
        raise AssertionError(f"the converted rows do not read back as ingested: {q}")
    (out / RECORD_DIR).mkdir(parents=True, exist_ok=True)
    by_quarter = None
    if traces.llm_by_quarter is not None:
        path = out / RECORD_DIR / BY_QUARTER_NAME
        pq.write_table(traces.llm_by_quarter.to_pyarrow(), path)
        by_quarter = _File(_rel(path, out), path.stat().st_size, sha256_of(path), _rows(path))
    kept: dict[str, Any] = {}
    if engine_of(traces.backend) is Engine.DUCKDB:
        as_read = replace(traces, spans=used, set_aside_rows=bad, plain=True)
        for d in derived:
            kept[d.name] = _write_derived(as_read, d, out)
    lo, hi = traces.extent if traces.extent is not None else (None, None)
    body = {
        "format": FORMAT,
        "slacheck": __version__,
        "rules": rules_digest(),
        "files": [f.row() for f in sorted(listed, key=lambda f: f.path)],
        "quality": {
            "rows_read": q.rows_read,
            "rows_used": q.rows_used,
            "set_aside": dict(sorted(q.set_aside.items())),
            "examples": {k: [list(e) for e in v] for k, v in sorted(examples.items())},
            "orphans": q.orphans,
            "orphan_examples": [list(e) for e in orphan_examples],
        },
        "extent": [lo, hi],
        "llm_wrappers": traces.llm_wrappers,
        "llm_by_quarter": None if by_quarter is None else by_quarter.row(),
        "derived": kept,
    }
    text = json.dumps({"body": body, "sha256": _digest(body)}, indent=1, sort_keys=True)
    (out / RECORD_DIR / RECORD_NAME).write_text(text + "\n", encoding="utf-8")


def _write_derived(traces: Traces, d: Derived, out: Path) -> dict[str, Any]:
    """``d`` made from ``traces`` and written to ``RECORD_DIR/<name>.parquet``: its record entry."""
    if not _DERIVED_NAME.fullmatch(d.name) or not all(_RULE_NAME.fullmatch(m) for m in d.rules):
        raise ValueError(f"not a derived table a record can keep: {d.name!r}, {d.rules!r}")
    path = out / RECORD_DIR / f"{d.name}.parquet"
    con = traces.backend
    table = d.make(traces)
    # each column as the expression types it: the engine may compute a wider type (DuckDB sums
    # integers as HUGEINT, which Parquet holds as a double), and a run reads the file as written
    cols = ", ".join(
        f"CAST({_ident(c)} AS {DuckDBType.from_ibis(t).sql('duckdb')}) AS {_ident(c)}"
        for c, t in table.schema().items()
    )
    sql = f"SELECT {cols} FROM ({con.compile(table)})"
    target = sg.exp.Literal.string(str(path)).sql("duckdb")
    con.raw_sql(f"COPY ({sql}) TO {target} (FORMAT parquet)")
    listed = _File(_rel(path, out), path.stat().st_size, sha256_of(path), _rows(path))
    return {"file": listed.row(), "rules": list(d.rules), "digest": rules_digest(d.rules)}


def _ident(name: str) -> str:
    return str(sg.to_identifier(name, quoted=True).sql("duckdb"))


def _set_aside(bad: ir.Table, out: Path) -> tuple[dict[str, int], dict[str, list[tuple[str, str]]]]:
    """The rows set aside per reason, and the first few of each (by file and row), as
    ingestion counts and chooses them."""
    counts = bad.group_by("_reason").aggregate(n=bad.count()).to_pyarrow().to_pylist()
    ew = ibis.window(group_by=bad._reason, order_by=[bad.source_file, bad.source_ref])
    ex = bad.mutate(_i=ibis.row_number().over(ew)).filter(lambda x: x._i < _EXAMPLES)
    examples: dict[str, list[tuple[str, str]]] = {}
    for r in ex.select("_reason", "source_file", "source_ref").to_pyarrow().to_pylist():
        at = (_rel(Path(r["source_file"]), out), str(r["source_ref"]))
        examples.setdefault(str(r["_reason"]), []).append(at)
    return {str(r["_reason"]): int(r["n"]) for r in counts}, {
        k: sorted(v) for k, v in examples.items()
    }


def _orphan_examples(used: ir.Table, out: Path) -> list[tuple[str, str]]:
    lone = used.filter(used.orphan)
    first = lone.order_by([lone.source_file, lone.source_ref]).limit(_EXAMPLES)
    rows = first.select("source_file", "source_ref").to_pyarrow().to_pylist()
    return [(_rel(Path(r["source_file"]), out), str(r["source_ref"])) for r in rows]


# ---------------------------------------------------------------------------------------------
# reading


def from_record(session: EngineSession, folder: Path, files: Sequence[Path]) -> Recorded:
    """The traces of ``folder`` (a folder ``traces convert`` wrote, whose trace files are
    ``files``) from its record, when the record holds; else why not (or nothing, when the
    folder has no record or a file is not one a run can read: ingestion then says so)."""
    at = folder / RECORD_DIR / RECORD_NAME
    if not at.is_file():
        return Recorded()
    if any(not p.is_file() or regular_file_problem(p) is not None for p in files):
        return Recorded()
    body = _body(at)
    if isinstance(body, Message):
        return Recorded(refused=body)
    refused = _refused(folder, files, body)
    if isinstance(refused, Message):
        return Recorded(refused=refused)
    hashes, stamps = refused
    traces = _traces(session, folder, files, body, hashes)
    return Recorded(traces=replace(traces, stamps=stamps))


def _body(at: Path) -> dict[str, Any] | Message:
    try:
        if at.stat().st_size > _MAX_BYTES:
            return RecordSays.UNREADABLE(detail=f"larger than {_MAX_BYTES:,} bytes")
        doc = json.loads(at.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as exc:
        return RecordSays.UNREADABLE(detail=(str(exc).splitlines() or [""])[0][:200])
    if not isinstance(doc, dict) or not isinstance(doc.get("body"), dict):
        return RecordSays.UNREADABLE(detail="not a record")
    body: dict[str, Any] = doc["body"]
    if doc.get("sha256") != _digest(body):
        return RecordSays.EDITED()
    written = (body.get("format"), body.get("slacheck"), body.get("rules"))
    if written != (FORMAT, __version__, rules_digest()):
        return RecordSays.OTHER_VERSION(version=str(body.get("slacheck")))
    if not _extras_hold(body):
        return RecordSays.UNREADABLE(detail="not a record")
    return body


def _extras_hold(body: dict[str, Any]) -> bool:
    """The files the record lists beside the data are where, and named as, a record writes
    them (in ``RECORD_DIR``: no run hashes or reads a file elsewhere because a record names
    it), and each derived table's entry has its parts."""
    try:
        extra = body.get("llm_by_quarter")
        if extra is not None and _File.of(extra).path != f"{RECORD_DIR}/{BY_QUARTER_NAME}":
            return False
        derived = body.get("derived") or {}
        for name, entry in derived.items():
            if not _DERIVED_NAME.fullmatch(name):
                return False
            if _File.of(entry["file"]).path != f"{RECORD_DIR}/{name}.parquet":
                return False
            rules, digest = entry["rules"], entry["digest"]
            if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
                return False
            if not isinstance(digest, str):
                return False
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return False
    return True


def _refused(
    folder: Path, files: Sequence[Path], body: dict[str, Any]
) -> Message | tuple[dict[str, str], dict[str, Stamp | None]]:
    """Why the data files are not those recorded, or (they are) each one's SHA-256 and the
    ``Stamp`` of each file a run reads (data and kept tables), taken before it was hashed."""
    recorded = {f.path: f for f in map(_File.of, body["files"])}
    here = {_rel(p, folder): p for p in files}
    for rel in sorted(here):
        if rel not in recorded:
            return RecordSays.ADDED(file=str(here[rel]))
    for rel in sorted(recorded):
        if rel not in here:
            return RecordSays.REMOVED(file=str(folder / rel))
    checked = dict(here)
    for extra in _extras(body):
        recorded[extra.path] = extra
        checked[extra.path] = folder / extra.path
    # each file as it is before a byte of it is read (``Traces.verify_unchanged``)
    stamps: dict[str, Stamp | None] = {}
    for rel, path in checked.items():  # sizes first: a changed size needs no hash
        stamp = stamps[str(path)] = stamp_of(path)
        if stamp is None:
            return RecordSays.REMOVED(file=str(path))
        if stamp[2] != recorded[rel].size:
            return RecordSays.CHANGED(file=str(path))
    report(Step(Stage.READ, 0, len(files), 0, 0, sum(f.size for f in recorded.values())))
    hashes: dict[str, str] = {}
    for path, h in _hashes(list(checked.values())):
        rel = _rel(path, folder)
        if h != recorded[rel].sha256:
            return RecordSays.CHANGED(file=str(path))
        hashes[rel] = h
    return hashes, stamps


def _traces(
    session: EngineSession,
    folder: Path,
    files: Sequence[Path],
    body: dict[str, Any],
    hashes: dict[str, str],
) -> Traces:
    """``Traces`` as ingestion of ``files`` gives them, from the record: the usable rows are
    the data files' (their orphan flag as written), the rows set aside the ``day=set-aside``
    files' (with the reason the rules give, else a duplicate id's)."""
    rows = {str(r[0]): int(r[3]) for r in body["files"]}
    named = {_rel(p, folder): str(p) for p in files}

    def where(e: list[str]) -> str:
        return f"{named[e[0]]}: {e[1]}"

    q = body["quality"]
    quality = Quality(
        rows_read=int(q["rows_read"]),
        rows_used=int(q["rows_used"]),
        set_aside={str(k): int(v) for k, v in q["set_aside"].items()},
        examples={k: tuple(sorted(where(e) for e in v)) for k, v in q["examples"].items()},
        orphans=int(q["orphans"]),
        orphan_examples=tuple(where(e) for e in q["orphan_examples"]),
    )
    sources = tuple(
        SourceFile(str(p), "canonical", hashes[rel], rows[rel], READ_BY_ENGINE)
        for p, rel in ((p, _rel(p, folder)) for p in files)
    )
    report(Step(Stage.QUALITY, 0, rows=quality.rows_read))
    # the data files are read in place at each query, whatever their size: unlike a raw input
    # (which ingestion copies into the engine when small, ``copy_up_to_rows``) canonical Parquet
    # needs no mapping, typing or classifying on a read, and with the kept calls and tasks few
    # queries read the spans. Copying 1 M spans cost more than it saved: the demo contract's
    # check 5.0 → 3.5 s of CPU (2.8 → 2.4 s at 200 k spans; 6.5 → 5.5 s without kept tables)
    spans, bad = _tables(session.backend, session, files, folder, orphans=quality.orphans > 0)
    by_quarter = None
    derived: dict[str, Kept] = {}
    extra = body.get("llm_by_quarter")
    if engine_of(session.backend) is Engine.DUCKDB:
        if extra is not None:
            by_quarter = session.register(pq.read_table(folder / str(extra[0])))
        for name, entry in _derived(body).items():  # their shape checked (``_extras_hold``)
            rules = tuple(entry["rules"])
            if not all(_RULE_NAME.fullmatch(r) for r in rules):
                continue
            if entry["digest"] == rules_digest(rules):  # else derived again, by today's rules
                table = session.backend.read_parquet(folder / str(entry["file"][0]))
                # a view under a name: each query compiles a reference to it, not the read
                derived[name] = Kept(session.view(table), rules)
    lo, hi = body["extent"]
    return Traces(
        spans=spans,
        backend=session.backend,
        sources=sources,
        quality=quality,
        set_aside_rows=bad,
        session=session,
        extent=(None if lo is None else int(lo), None if hi is None else int(hi)),
        llm_wrappers=int(body["llm_wrappers"]),
        # the usable rows are the data files as read: nothing filtered, nothing joined
        plain=True,
        llm_by_quarter=by_quarter,
        record_used=True,
        derived=derived,
    )


def _tables(
    con: Any,
    session: EngineSession | None,
    files: Sequence[Path],
    folder: Path,
    *,
    orphans: bool,
) -> tuple[ir.Table, ir.Table]:
    """The usable rows (the files of each day, with ``orphan``) and the rows set aside (the
    ``day=set-aside`` files, with ``_reason``) of a converted folder, as ingestion's ``spans``
    and ``set_aside_rows`` have them. Each of the two is read as ingestion reads the folder:
    on DuckDB one scan of its files (``tabular.read_parquet_files``), never a union of one
    projection per file, which every later query would compile again; on Spark a table per
    file, materialised (Spark recomputes a plan at every action, as ingestion's input is)."""
    ident = identity_mapping("parquet")
    keep = ("orphan",) if orphans else ()
    spark = engine_of(con) is Engine.SPARK

    def read(paths: list[Path], keep: tuple[str, ...] = ()) -> ir.Table:
        if not spark:
            return read_parquet_files(con, paths, ident, keep=keep)
        parts = [read_table(con, p, ident, keep=keep) for p in paths]
        return parts[0] if len(parts) == 1 else ibis.union(*parts, distinct=False)

    used = [p for p in files if not _aside(_rel(p, folder))]
    aside = [p for p in files if _aside(_rel(p, folder))]
    if used:
        # the usable rows as written: the record holds, so they are canonical already
        u = read_canonical_files(con, used, keep=keep) if not spark else read(used, keep)
        spans = u if orphans else u.mutate(orphan=ibis.literal(False))
    else:
        spans = read(aside).mutate(orphan=ibis.literal(False)).filter(ibis.literal(False))
    if aside:
        a = read(aside)
        duplicate = ibis.literal(str(SetAside.DUPLICATE_SPAN_ID))
        bad = a.mutate(_reason=reason_expr(a).fill_null(duplicate))
    else:
        s = spans.drop("orphan")
        bad = s.mutate(_reason=reason_expr(s)).filter(ibis.literal(False))
    if spark and session is not None:
        spans, bad = session.materialise(spans), session.materialise(bad)
    return spans, bad


# ---------------------------------------------------------------------------------------------
# shared


def _extras(body: dict[str, Any]) -> list[_File]:
    """The record's files beside the data files: the quarter-hour counts, the derived tables."""
    extra = body.get("llm_by_quarter")
    out = [] if extra is None else [_File.of(extra)]
    return out + [_File.of(e["file"]) for e in _derived(body).values()]


def _derived(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    derived: dict[str, dict[str, Any]] = body.get("derived") or {}
    return derived


@lru_cache(maxsize=8)
def rules_digest(modules: tuple[str, ...] = _RULE_MODULES) -> str:
    """A digest of the source of ``modules``: by default those whose rules establish the facts
    a record holds (``_RULE_MODULES``; a record written under other rules is refused), else a
    derived table's (``Derived.rules``; a table derived under other rules is not used)."""
    h = hashlib.sha256()
    for name in modules:
        h.update(name.encode())
        h.update(_source(name))
    return h.hexdigest()[:32]


def _source(name: str) -> bytes:
    """The bytes of module ``name`` as ``_code`` keeps them, or of a data file a package ships
    (``package:file``)."""
    try:
        if ":" in name:
            package, file = name.split(":", 1)
            return resources.files(package).joinpath(file).read_bytes()
        spec = importlib.util.find_spec(name)
    except (ImportError, OSError, ValueError):
        return b"?"
    origin = None if spec is None else spec.origin
    return _code(Path(origin).read_bytes()) if origin and os.path.isfile(origin) else b"?"


def _code(source: bytes) -> bytes:
    """Python source without its comments and the lines only a comment or nothing held: the
    rules, not the notes on them. A comment-only edit (the comments here carry measurements)
    then refuses no record and derives no kept table again; every other edit, of code, strings
    (a blank line inside one too) or docstrings, still does. Line ends are read as Python reads
    them (CRLF as LF). Source that does not tokenize is taken whole."""
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
        text = source.decode(tokens[0].string)  # the ENCODING token
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError, IndexError):
        return source
    # lines as tokenize numbers them (split at \n only: a form feed is no line end there)
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    for tok in tokens:
        if tok.type == tokenize.COMMENT:  # never inside a string, never over two lines
            (row, col), (_, end) = tok.start, tok.end
            lines[row - 1] = lines[row - 1][:col].rstrip() + lines[row - 1][end:]
    # NL ends a line that ends no statement: blank, a comment's, or inside brackets (which
    # hold code, so stay); a line inside a string is never one
    gone = {
        t.start[0] for t in tokens if t.type == tokenize.NL and not lines[t.start[0] - 1].strip()
    }
    return "\n".join(line for row, line in enumerate(lines, 1) if row not in gone).encode("utf-8")


def _digest(body: dict[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _hashes(files: Sequence[Path]) -> list[tuple[Path, str]]:
    """Each file's SHA-256, two at a time (hashing releases the interpreter's lock)."""
    if len(files) < 2:
        return [(p, sha256_of(p)) for p in files]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(zip(files, pool.map(sha256_of, files), strict=True))


def _rows(path: Path) -> int:
    return int(pq.read_metadata(path).num_rows)


def _rel(path: Path, folder: Path) -> str:
    return Path(os.path.relpath(path, folder)).as_posix()


def _aside(rel: str) -> bool:
    return rel.split("/", 1)[0] == f"day={SET_ASIDE_PARTITION}"
