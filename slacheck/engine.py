"""Where trace computations run: one engine session owning an Ibis backend, its configuration
and the tables slacheck makes in it, released at the end.

DuckDB (default) runs in memory or in a file, bounded in memory, spilling to a scratch folder.
PySpark runs on a master (``local[*]`` unless told: ``--spark-master`` or SLACHECK_SPARK_MASTER,
e.g. ``spark://host:7077`` or ``yarn``) or, for an ``sc://`` URL, through Spark Connect; further
Spark settings come from SLACHECK_SPARK_CONF (``key=value`` pairs separated by ``;``). A Spark
run is silent on stderr (no JVM log lines, no stage progress bars) unless ``verbose``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import tempfile
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from slacheck.errors import UsageError
from slacheck.interrupts import add_interrupter, remove_interrupter

if TYPE_CHECKING:  # ibis costs a third of a second to import: only commands that query load it
    import ibis.expr.types as ir
    import pyarrow as pa
    from ibis.backends import BaseBackend


class Engine(StrEnum):
    DUCKDB = "duckdb"
    SPARK = "spark"


#: a Spark master when none is given: every core of this machine
DEFAULT_SPARK_MASTER = "local[*]"
#: DuckDB's memory bound when none is given: a 10-million-span month stays under 1.5 GiB
DEFAULT_DUCKDB_MEMORY = "1GB"
#: Spark settings slacheck relies on; SLACHECK_SPARK_CONF may override any of them
_SPARK_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "2g",
    # tables made from Python data (a file the Python reader parsed, metrics) go to the JVM as
    # Arrow, so no executor needs a Python worker (of the driver's version: a cluster's may not)
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """What an engine session is made of; ``from_env`` reads the environment once."""

    engine: Engine = Engine.DUCKDB
    #: a DuckDB file instead of memory, for inputs larger than memory
    duckdb_file: str | None = None
    duckdb_memory: str = DEFAULT_DUCKDB_MEMORY
    #: where scratch folders go (DuckDB spill, Spark warehouse); the system's temp otherwise
    scratch_root: str | None = None
    spark_master: str = DEFAULT_SPARK_MASTER
    spark_conf: tuple[tuple[str, str], ...] = ()
    verbose: bool = False

    @classmethod
    def from_env(
        cls,
        engine: Engine | str = Engine.DUCKDB,
        *,
        database: str | None = None,
        spark_master: str | None = None,
        verbose: bool = False,
        environ: Mapping[str, str] | None = None,
    ) -> EngineConfig:
        """Arguments first, then SLACHECK_DUCKDB_FILE, SLACHECK_DUCKDB_MEMORY, SLACHECK_SCRATCH,
        SLACHECK_SPARK_MASTER, SLACHECK_SPARK_CONF."""
        env = os.environ if environ is None else environ
        try:
            which = Engine(engine)
        except ValueError:
            raise UsageError(f"unknown engine {engine!r}; use duckdb or spark") from None
        return cls(
            engine=which,
            duckdb_file=database or env.get("SLACHECK_DUCKDB_FILE") or None,
            duckdb_memory=env.get("SLACHECK_DUCKDB_MEMORY") or DEFAULT_DUCKDB_MEMORY,
            scratch_root=env.get("SLACHECK_SCRATCH") or None,
            spark_master=spark_master or env.get("SLACHECK_SPARK_MASTER") or DEFAULT_SPARK_MASTER,
            spark_conf=parse_spark_conf(env.get("SLACHECK_SPARK_CONF", "")),
            verbose=verbose,
        )


def parse_spark_conf(text: str) -> tuple[tuple[str, str], ...]:
    """``"spark.a=1; spark.b=x y"`` → ``(("spark.a", "1"), ("spark.b", "x y"))``."""
    pairs: list[tuple[str, str]] = []
    for item in text.split(";"):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"SLACHECK_SPARK_CONF: {item.strip()!r} is not key=value "
                "(pairs are separated by ';')"
            )
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


class _SharedScratch:
    """One private folder (``slacheck-XXXXXXXX``, mode 0700) per scratch root for the open
    sessions of this process, each session in a subfolder of it; removed when the last of them
    closes. A command therefore leaves nothing in the temp folder when it ends, and a process
    that dies before its sessions close (killed, ``os._exit``) leaves one empty folder, never
    one per session. Removed at exit too, as a backstop."""

    def __init__(self) -> None:
        self._folders: dict[str | None, str] = {}
        self._users: dict[str | None, int] = {}
        self._lock = threading.Lock()

    def take(self, root: str | None) -> str:
        """A new subfolder for one session under ``root`` (None: the system's temp folder)."""
        with self._lock:
            return self._take(root)

    def _take(self, root: str | None) -> str:
        folder = self._folders.get(root)
        if folder is None or not os.path.isdir(folder):
            folder = tempfile.mkdtemp(prefix="slacheck-", dir=root)
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            self._folders[root] = folder
            self._users.setdefault(root, 0)
        mine = os.path.join(folder, f"session-{uuid.uuid4().hex[:12]}")
        os.mkdir(mine, 0o700)
        self._users[root] += 1
        return mine

    def give_back(self, root: str | None, path: str) -> None:
        """Remove one session's subfolder; the shared folder goes with the last one."""
        shutil.rmtree(path, ignore_errors=True)
        with self._lock:
            self._release(root)

    def _release(self, root: str | None) -> None:
        if root not in self._users:
            return
        self._users[root] -= 1
        if self._users[root] <= 0:
            shutil.rmtree(self._folders.pop(root), ignore_errors=True)
            del self._users[root]


_SCRATCH = _SharedScratch()


@dataclass
class EngineSession:
    """One engine for one run: the backend (made on first use), and every table slacheck makes
    in it, dropped by ``close`` with the scratch folder. Use as a context manager."""

    config: EngineConfig = field(default_factory=EngineConfig)
    _backend: BaseBackend | None = field(default=None, init=False, repr=False)
    _tables: list[str] = field(default_factory=list, init=False, repr=False)
    _views: list[str] = field(default_factory=list, init=False, repr=False)
    _held: list[str] = field(default_factory=list, init=False, repr=False)
    _scratch: str | None = field(default=None, init=False, repr=False)
    _owns_backend: bool = field(default=True, init=False, repr=False)
    _interrupter: int | None = field(default=None, init=False, repr=False)

    @classmethod
    def around(cls, backend: BaseBackend) -> EngineSession:
        """A session over a backend someone else made (and releases): ``close`` drops only the
        tables this session made."""
        session = cls(EngineConfig(engine=engine_of(backend)))
        session._backend = backend
        session._owns_backend = False
        return session

    @property
    def engine(self) -> Engine:
        return self.config.engine

    @property
    def backend(self) -> BaseBackend:
        if self._backend is None:
            self._backend = self._duckdb() if self.config.engine is Engine.DUCKDB else self._spark()
        return self._backend

    def scratch(self) -> str:
        """This session's scratch folder (inside the process's shared ``slacheck-*`` folder),
        removed by ``close`` (and at exit, as a backstop)."""
        if self._scratch is None:
            self._scratch = _SCRATCH.take(self.config.scratch_root)
        return self._scratch

    def materialise(self, t: ir.Table) -> ir.Table:
        """Compute ``t`` once and keep it as a table of this session's (dropped at close)."""
        name = self._name()
        # Spark has no session-temporary tables through Ibis: its tables go to the warehouse
        table = self.backend.create_table(name, t, temp=self.config.engine is Engine.DUCKDB)
        self._tables.append(name)
        return table

    def hold(self, t: ir.Table) -> ir.Table:
        """``t`` computed once and kept as Arrow columns that DuckDB scans in place, under a
        name of this session's (released by ``close``); on Spark, ``materialise``.

        Writing rows into a DuckDB table costs more CPU than computing them: the calls of a
        1 M-span trace (508 k rows, 37 columns) took 1.35 s of CPU as a table and 0.71 s as
        Arrow, and later queries read either as fast. But Arrow takes about twice a compressed
        table's memory and cannot spill: for inputs small enough to copy into the engine
        (``copy_up_to_rows``), where memory is not what limits a run."""
        if self.config.engine is not Engine.DUCKDB:
            return self.materialise(t)
        import pyarrow as pa

        arrow = self.backend.to_pyarrow(t)
        # batches of a row group's size: DuckDB scans one batch per thread at a time
        batches = arrow.to_batches(max_chunksize=_HELD_BATCH_ROWS)
        name = self._name()
        self.backend.con.register(name, pa.Table.from_batches(batches, schema=arrow.schema))
        self._held.append(name)
        return self.backend.table(name)

    def view(self, t: ir.Table) -> ir.Table:
        """``t`` as a view of this session's (dropped at close): a name later expressions refer
        to, so that the engine computes its columns once instead of inlining them."""
        name = self._name()
        if self.config.engine is not Engine.DUCKDB:
            view = self.backend.create_view(name, t, overwrite=True)
            self._views.append(name)
            return view
        # Ibis's ``create_view`` asks DuckDB for the view's schema (DESCRIBE binds the whole chain
        # of views beneath it again, and each type comes back as text to parse: 3 of the OTLP
        # reader's 12 s on a small file); the expression's own schema is the same, every column
        # nullable as DESCRIBE says of a view's
        import ibis
        import ibis.expr.operations as ops

        self.backend.raw_sql(f'CREATE OR REPLACE TEMP VIEW "{name}" AS {self.backend.compile(t)}')
        self._views.append(name)
        schema = ibis.schema({col: typ.copy(nullable=True) for col, typ in t.schema().items()})
        namespace = ops.Namespace(catalog=None, database=None)
        table = ops.DatabaseTable(name, schema=schema, source=self.backend, namespace=namespace)
        return table.to_expr()

    def new_table_name(self) -> str:
        """A name for a table made outside Ibis (raw SQL), to ``adopt`` once it exists."""
        return self._name()

    def adopt(self, name: str) -> ir.Table:
        """A table made under ``name`` (from ``new_table_name``) as a table of this session's
        (dropped at close)."""
        self._tables.append(name)
        return self.backend.table(name)

    def register(self, table: pa.Table) -> ir.Table:
        """An Arrow table in the engine, as a table of this session's."""
        import ibis

        name = self._name()
        if self.config.engine is Engine.SPARK:
            # PySpark has no Arrow ingest through Ibis; go through pandas with explicit types.
            t = self.backend.create_table(name, table.to_pandas(), schema=ibis.schema(table.schema))
        else:
            t = self.backend.create_table(name, table, temp=True)
        self._tables.append(name)
        return t

    def drop(self, t: ir.Table) -> None:
        """Drop a table this session made, once nothing refers to it any more."""
        name = t.get_name()
        if name in self._held:
            self.backend.con.unregister(name)
            self._held.remove(name)
            return
        self.backend.drop_table(name, force=True)
        if name in self._tables:
            self._tables.remove(name)

    def close(self) -> None:
        """Drop every table this session made, release DuckDB, remove the scratch folder. The
        Spark session stays for the process (a JVM starts once); its tables are dropped."""
        if self._backend is not None:
            made = (
                (self._held, self._unregister),
                (self._views, self._backend.drop_view),
                (self._tables, self._backend.drop_table),
            )
            for names, drop in made:
                for name in reversed(names):
                    try:
                        drop(name, force=True)
                    except Exception:  # best effort: the engine may already be gone
                        continue
                names.clear()
            if self._owns_backend and self.config.engine is Engine.DUCKDB:
                self._backend.disconnect()
            if self._interrupter is not None:
                remove_interrupter(self._interrupter)
                self._interrupter = None
            self._backend = None
        if self._scratch is not None:
            _SCRATCH.give_back(self.config.scratch_root, self._scratch)
            self._scratch = None

    def _unregister(self, name: str, force: bool = True) -> None:
        self.backend.con.unregister(name)

    def __enter__(self) -> EngineSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _name(self) -> str:
        return f"slacheck_t_{uuid.uuid4().hex}"

    def _duckdb(self) -> BaseBackend:
        con = duckdb_connect(self.config.duckdb_file or ":memory:")
        limit = self.config.duckdb_memory
        try:
            con.raw_sql(f"SET memory_limit = '{limit}'")
        except Exception:  # DuckDB's own parser error type
            raise UsageError(
                f"SLACHECK_DUCKDB_MEMORY={limit!r} is not a memory size such as 4GB"
            ) from None
        # Bounded memory spills here instead of failing
        con.raw_sql(f"SET temp_directory = '{self.scratch()}'")
        # SIGINT and SIGTERM stop a running query (the handler alone waits for it to return)
        self._interrupter = add_interrupter(con.con.interrupt)
        return con

    def _spark(self) -> BaseBackend:
        session = spark_session(
            self.config.spark_master, self.config.spark_conf, self.config.verbose
        )
        import ibis  # after PySpark: without it, ibis.pyspark itself fails to import

        return unfused(ibis.pyspark.connect(session))


_FUSING = threading.RLock()
#: each Ibis compiler class, subclassed once to compile unfused
_UNFUSED: dict[type[Any], Any] = {}


def unfused(backend: BaseBackend) -> BaseBackend:
    """``backend`` compiling each expression without merging nested selects into one.

    Ibis merges a select over a select by substituting the inner expressions into the outer
    ones, judging each merge by walking both expression trees: about an eighth of the CPU of a
    whole-contract check on a small trace (1.52 → 1.33 s), for the same rows and, on the 10 M
    bench trace, the same CPU (the engines' planners do that merge themselves). Only the
    backends slacheck makes are changed; Ibis's global option is turned off only while this
    backend compiles (under a lock, so two threads compiling restore it alike). With an Ibis
    that has no such option the backend is left as it is."""
    import ibis

    if not hasattr(ibis.options.sql, "fuse_selects"):  # an Ibis without the option: as it is
        return backend
    base = type(backend.compiler)
    with _FUSING:
        if base not in _UNFUSED:
            _UNFUSED[base] = _unfused_compiler(base)
        backend.compiler = _UNFUSED[base]
    return backend


def _unfused_compiler(base: Any) -> Any:
    class Unfused(base):  # type: ignore[misc]
        def translate(self, op: Any, *args: Any, **kwargs: Any) -> Any:
            import ibis

            with _FUSING:
                was = ibis.options.sql.fuse_selects
                ibis.options.sql.fuse_selects = False
                try:
                    return super().translate(op, *args, **kwargs)
                finally:
                    ibis.options.sql.fuse_selects = was

    Unfused.__name__ = Unfused.__qualname__ = f"Unfused{base.__name__}"
    return Unfused()


def duckdb_connect(path: str = ":memory:") -> BaseBackend:
    """An Ibis DuckDB connection that reads the SQL Ibis writes.

    Ibis 12 (through sqlglot < 28) writes array lambdas as ``x -> ...``; DuckDB 2 refuses that
    spelling unless ``lambda_syntax`` allows it, and DuckDB before 1.3 has no such setting (and
    accepts the arrow). pyproject.toml keeps DuckDB below the release that drops the arrow.
    """
    import ibis

    con = unfused(ibis.duckdb.connect(path))
    # DuckDB draws a progress bar on stdout for a query of more than two seconds, even into a
    # pipe: it went into the middle of ``check --format json`` on a folder of Parquet
    con.raw_sql("SET enable_progress_bar = false")
    # DuckDB < 1.3 has no such setting, and the arrow is its only spelling
    with contextlib.suppress(Exception):
        con.raw_sql("SET lambda_syntax = 'ENABLE_SINGLE_ARROW'")
    return con


@functools.cache
def spark_session(master: str, conf: tuple[tuple[str, str], ...], verbose: bool) -> Any:
    """The process's Spark session (a JVM starts once per process)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError(
            "the spark engine needs PySpark: pip install 'slacheck[spark]' (and a Java runtime)"
        ) from None
    builder: Any = SparkSession.builder.appName("slacheck")
    settings = dict(_SPARK_DEFAULTS)
    if master.startswith("sc://"):
        builder = builder.remote(master)
        for static in ("spark.driver.memory", "spark.ui.enabled"):  # the server's own
            settings.pop(static)
    else:
        builder = builder.master(master)
        # tables slacheck materialises are scratch: keep them out of the working directory
        warehouse = tempfile.mkdtemp(prefix="slacheck-spark-")
        atexit.register(shutil.rmtree, warehouse, ignore_errors=True)
        settings["spark.sql.warehouse.dir"] = warehouse
        if not verbose:
            settings["spark.ui.showConsoleProgress"] = "false"
    settings.update(conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    if not verbose and not master.startswith("sc://"):
        _quiet_gateway(settings, Path(settings["spark.sql.warehouse.dir"]))
    try:
        session = builder.getOrCreate()
    except ImportError as exc:  # Spark Connect needs grpcio and friends
        raise UsageError(f"Spark Connect needs pyspark[connect]: {exc}") from None
    if not verbose and not master.startswith("sc://"):
        session.sparkContext.setLogLevel("ERROR")
    return session


def _quiet_gateway(settings: dict[str, str], folder: Path) -> None:
    """Start the JVM with its stderr going to ``folder/spark-jvm.log``: the JVM's own warnings
    and Spark's log lines (printed before any log level can be set) never reach the terminal.
    A Spark failure still reaches slacheck as an exception."""
    import logging

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:  # a JVM this process already started
        return
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    log = (folder / "spark-jvm.log").open("ab")
    gateway = launch_gateway(conf, popen_kwargs={"stderr": log})  # type: ignore[no-untyped-call]
    SparkContext._ensure_initialized(gateway=gateway)
    # PySpark's own logger repeats every engine error as JSON on stderr; slacheck reports it
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)


def connect(engine: Engine | str = Engine.DUCKDB, database: str | None = None) -> BaseBackend:
    """A backend for ``engine`` in a session of its own, configured from the environment
    (for callers that need no more than a backend; the session ends with the process)."""
    return EngineSession(EngineConfig.from_env(engine, database=database)).backend


#: DuckDB's words for a file that is not there (any more): deleted or moved while it was read
_GONE = re.compile(
    r'No files found that match the pattern "(?P<a>[^"]+)"|'
    r'Cannot open file "(?P<b>[^"]+)": No such file or directory'
)


def file_system_problem(exc: BaseException) -> str | None:
    """What an engine's error says about the file system, in the words of an error message
    naming the path (a trace file deleted or moved while the engine still read it, a disk
    full, a file too large), or None when the error is not the file system's. DuckDB reads
    files lazily, so an input can vanish long after ingestion opened it."""
    kind = type(exc)
    if kind.__name__ != "IOException" or kind.__module__.lstrip("_") != "duckdb":
        return None
    text = (str(exc).splitlines() or [""])[0].removeprefix("IO Error: ").strip()
    gone = _GONE.search(text)
    if gone is not None:
        path = gone.group("a") or gone.group("b")
        return (
            f"{path}: no such file any more: it was deleted or moved while slacheck was "
            "reading it (run the command again on files that stay in place)"
        )
    return f"the DuckDB engine could not read or write a file: {text}"


def engine_of(backend: BaseBackend) -> Engine:
    return Engine.SPARK if backend.name == "pyspark" else Engine.DUCKDB


#: rows per Arrow batch of a held table (``EngineSession.hold``)
_HELD_BATCH_ROWS = 122_880

#: DuckDB copies inputs of at most this many spans into the engine once (``copy_up_to_rows``)
COPY_UP_TO_ROWS = 2_000_000


def copy_up_to_rows() -> int:
    """Up to how many spans DuckDB copies the input into the engine once, read and normalised,
    instead of scanning the files in place at each query: SLACHECK_COPY_UP_TO_ROWS, default
    ``COPY_UP_TO_ROWS`` (``0``: never). Each query of a file in place reads its columns through
    the mapping again (trimming, typing, classifying every row), some ten queries a run; below
    a few million spans one copy costs less than those reads (the demo contract at 1 M spans:
    about a fifth less CPU), above it the copy's memory would not pay for itself."""
    raw = os.environ.get("SLACHECK_COPY_UP_TO_ROWS", "").strip()
    try:
        return int(raw) if raw else COPY_UP_TO_ROWS
    except ValueError:
        raise UsageError(f"SLACHECK_COPY_UP_TO_ROWS={raw!r} is not a number of spans") from None
