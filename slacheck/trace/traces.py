"""The result of ingestion (``Traces``): the usable spans as an Ibis table on the engine that
holds them, with the files they came from, the row accounting and the facts ingestion learned
on the way. Every later stage reads the trace through it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import ibis.expr.types as ir
from ibis.backends import BaseBackend

from slacheck.engine import Engine, EngineSession, engine_of
from slacheck.errors import TraceInputError, changed_while_read
from slacheck.inputs import Stamp, stamp_of
from slacheck.messages import Message
from slacheck.trace.results import Quality, SourceFile


@dataclass(frozen=True)
class Kept:
    """A table a converted folder's record keeps (``trace.record.Derived``) as a run on the
    folder finds it: read in place, with the modules whose rules derived it, for the stage
    that reads it to compare with its own."""

    table: ir.Table
    rules: tuple[str, ...]


@dataclass(frozen=True)
class Traces:
    """The result of ingestion: the usable spans (an Ibis table), where they came from, quality."""

    spans: ir.Table
    backend: BaseBackend
    sources: tuple[SourceFile, ...]
    quality: Quality
    set_aside_rows: ir.Table = field(repr=False)
    #: the engine session holding the tables behind ``spans``; whoever made it closes it
    session: EngineSession | None = field(default=None, repr=False, compare=False)
    #: Facts ingestion learns in the passes it makes anyway, so no consumer scans for them again.
    #: The first start and last end of the usable spans (None, None when there are none).
    extent: tuple[int | None, int | None] | None = field(default=None, compare=False)
    #: llm spans another llm span lies under (a framework's span around the client's call: see
    #: ``metering.derive.model_calls``); None: not counted, so the calls must be looked for
    llm_wrappers: int | None = field(default=None, compare=False)
    #: ``spans`` is the input as read, no row filtered or joined (nothing was set aside, no
    #: duplicate, no orphan; or a converted folder's record says which files hold the usable
    #: rows, with their orphan flag): a query of it costs one scan of the columns it reads
    plain: bool = field(default=False, compare=False)
    #: how many aggregates the id pass took: 1, or more where DuckDB ran out of memory in one
    #: (the same result, read again per part: the command says so, as a slower path)
    id_pass_parts: int = field(default=1, compare=False)
    #: the usable llm spans counted per UTC quarter hour (``q``) and names (``request_model``,
    #: ``response_model``, ``provider``, ``endpoint``), with their first and last start (``lo``,
    #: ``hi``): a few rows per quarter hour, from the pass that classifies every row (DuckDB;
    #: None on Spark, where it would cost a pass of its own)
    llm_by_quarter: ir.Table | None = field(default=None, repr=False, compare=False)
    #: the input is a folder ``traces convert`` wrote, and these facts are its record's
    #: (``trace.record``): ingestion's passes did not run
    record_used: bool = field(default=False, compare=False)
    #: the input is such a folder, but its record did not hold, so the passes ran: why
    record_refused: Message | None = field(default=None, compare=False)
    #: tables the folder's record keeps, derived from the usable rows (``trace.record.Derived``),
    #: by name, where their rules still hold: a stage reads one instead of deriving it again
    derived: Mapping[str, Kept] = field(default_factory=dict, repr=False, compare=False)
    #: every local file the spans are read from (the inputs, or a converted folder's data and
    #: kept tables), as it was before its first byte was read (``inputs.Stamp``): queries read
    #: files in place, so one written meanwhile would give counts of two versions
    stamps: Mapping[str, Stamp | None] = field(default_factory=dict, repr=False, compare=False)

    @property
    def engine(self) -> Engine:
        return engine_of(self.backend)

    def verify_unchanged(self) -> None:
        """Raise ``TraceInputError`` (one problem per file) when a file the spans are read from
        is not as it was before it was read: written, truncated, replaced or removed since.
        Every stage that returns results calls it last, so no verdict, count or record rests
        on a file that changed under the queries (a trace a collector is still writing, say)."""
        would = "the results would count two versions of the file, so none are given"
        fix = "run again once nothing writes to it, or on a copy of it"
        changed = [
            changed_while_read(path, would=would, fix=fix)
            for path, before in self.stamps.items()
            if stamp_of(Path(path)) != before
        ]
        if changed:
            raise TraceInputError(changed)
