"""The model calls and the tasks as a converted folder keeps them (``trace.record.Derived``).

The calls with their derived columns (``derive.calls_of``: the call state, the region and its
key, network and model time with their sources, the model names as read, tokens per second)
and the tasks (``derive.tasks``: envelope, roots, task time and its source) depend on the
traces alone, never on the contract or a run's options. ``traces convert`` keeps them in the
folder's record, so that a run on the folder reads them (``Metering.calls``,
``Metering.tasks``) instead of deriving them from every span again: at 10 M spans the calls'
derivation, written as the run's calls table, was about 10 s of CPU of a check's 27.

The tables kept are those ``Metering`` makes for any input; ``RULES`` names every module (and
data file) whose source decides their rows, and a kept table derived under other sources is
not read (it is derived again)."""

from __future__ import annotations

import ibis.expr.types as ir

from slacheck.metering import derive
from slacheck.trace.record import Derived
from slacheck.trace.traces import Traces

__all__ = [
    "CALLS",
    "DERIVED",
    "KEEP_UP_TO_ROWS",
    "PROVENANCE",
    "RULES",
    "TASKS",
    "UNREAD",
    "calls_table",
    "derived",
    "kept",
    "llm_spans",
]

#: the kept tables' names in a record (``Traces.derived``)
CALLS = "calls"
TASKS = "tasks"
#: the modules and data files whose source decides the kept tables' rows and columns
RULES = (
    "slacheck.metering.derive",
    "slacheck.metering.recorded",
    "slacheck.names",
    "slacheck.trace.conventions",
    "slacheck.trace:conventions.yaml",
    "slacheck.trace.normalise",
    "slacheck.trace.schema",
    "slacheck.trace.status",
)
#: span columns that say where a row came from: long strings no consumer of calls reads
#: (``error_type`` stays: the legacy status ``error`` is classified by it, ``trace.status``)
PROVENANCE = ("source_file", "source_ref", "defect", "status_source")
#: span columns the calls carry from the llm spans that no reader of the calls reads (every
#: call is an llm span; which call a wrapper wraps is settled by ``derive.calls_of``): left out
#: of the table, whose writing costs per column (at 10 M spans, 5 M calls: ~1.5 s of CPU for
#: these five)
UNREAD = ("parent_span_id", "kind", "name", "operation", "evidence")


def llm_spans(spans: ir.Table) -> ir.Table:
    """The llm spans, without the provenance columns (``PROVENANCE``)."""
    return spans.filter(spans.kind == "llm").drop(*PROVENANCE)


def calls_table(traces: Traces) -> ir.Table:
    """The calls of ``traces`` as ``Metering.calls`` has them, each derived column computed:
    what a converted folder keeps."""
    llm = llm_spans(traces.spans)
    calls = derive.calls_of(llm, traces.llm_wrappers).drop(*UNREAD)
    return derive.with_region_key(calls, derive.region_keys_of(llm.select("region").distinct()))


#: what ``traces convert`` keeps in a folder's record beside ingestion's facts
DERIVED = (Derived(CALLS, calls_table, RULES), Derived(TASKS, derive.tasks, RULES))
#: usable spans above which a folder keeps no table and a run reads none. The kept tables
#: replace the calls and tasks tables a run computes; above 20 M spans a run reads the calls
#: as a view of the input instead (``Metering.calls_are_view``), and reading them kept saved
#: nothing: measured on the 100 M-span bench folder (2 cores, DuckDB's 1 GB bound), the check
#: took 124 s of wall time with the kept calls alone, 126 s with the kept tasks alone (114–118 s
#: with neither), and with both ran out of memory in the task-time population's join. Keeping
#: them there cost ``traces convert`` 85 s and 4.4 GB more.
KEEP_UP_TO_ROWS = 20_000_000


def derived(traces: Traces) -> tuple[Derived, ...]:
    """What ``traces convert`` keeps for ``traces``: ``DERIVED``, up to ``KEEP_UP_TO_ROWS``."""
    return DERIVED if traces.quality.rows_used <= KEEP_UP_TO_ROWS else ()


def kept(traces: Traces, name: str) -> ir.Table | None:
    """The table ``name`` the traces' record keeps, derived under today's ``RULES`` (and
    the folder within ``KEEP_UP_TO_ROWS``); else None (derive it)."""
    found = traces.derived.get(name)
    if found is None or found.rules != RULES or traces.quality.rows_used > KEEP_UP_TO_ROWS:
        return None
    return found.table
