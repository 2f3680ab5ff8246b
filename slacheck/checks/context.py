"""What every check is handed: the contract, the derived views, windows, exclusions."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cached_property

import ibis
import ibis.expr.types as ir

from slacheck.contract.model import Contract, Window
from slacheck.engine import Engine, engine_of
from slacheck.match import derive
from slacheck.trace.ingest import Traces
from slacheck.verdict import MAX_EXAMPLES
from slacheck.windows import (
    COVER_SLACK_US,
    CalendarWindow,
    in_intervals_expr,
    maintenance_intervals,
    split,
    windows_for,
)


@dataclass(frozen=True)
class CheckContext:
    contract: Contract
    traces: Traces
    #: restricts windows to this period (e.g. 2026-Q3); None: every window the traces touch
    period: CalendarWindow | None = None

    @cached_property
    def calls(self) -> ir.Table:
        """All model calls with derived columns (see match.derive.calls), not yet scoped.

        Computed once in the engine: the derived view is costly to compile, and every check
        queries it several times."""
        con = self.traces.backend
        name = f"slacheck_calls_{uuid.uuid4().hex}"
        # provenance columns are long strings no check reads: leave them out of the copy
        view = derive.calls(self.traces).drop("source_file", "source_ref", "defect", "error_type")
        if engine_of(con) is Engine.SPARK:
            return con.create_table(name, view)
        return con.create_table(name, view, temp=True)

    @cached_property
    def tasks(self) -> ir.Table:
        return derive.tasks(self.traces)

    @cached_property
    def data_range(self) -> tuple[int | None, int | None]:
        s = self.traces.spans
        row = s.aggregate(lo=s.start_us.min(), hi=s.end_us.max()).execute().iloc[0]
        lo, hi = row["lo"], row["hi"]
        return (
            None if lo is None or lo != lo else int(lo),
            None if hi is None or hi != hi else int(hi),
        )

    def windows(self, kind: Window) -> list[CalendarWindow]:
        """The term's windows: inside the requested period, else those the traces overlap."""
        zone = self.contract.zone
        if self.period is not None:
            return split(self.period, kind, zone)
        lo, hi = self.data_range
        if lo is None or hi is None:
            return []
        return windows_for(kind, zone, lo, hi, anchor=self.contract.contract.effective.start)

    def partial(self, w: CalendarWindow) -> bool:
        """The traces cover only part of the window (allowing ``COVER_SLACK_US`` at either edge)."""
        lo, hi = self.data_range
        if lo is None or hi is None:
            return True
        return lo > w.start_us + COVER_SLACK_US or hi < w.end_us - COVER_SLACK_US

    @cached_property
    def maintenance(self) -> list[tuple[int, int]]:
        lo, hi = self.data_range
        if lo is None or hi is None:
            return []
        return maintenance_intervals(self.contract.exclusions, self.contract.zone, lo, hi)

    def exclusion_reason(self, c: ir.Table) -> ir.StringValue:
        """Why a call does not count against the vendor, or null. First reason wins."""
        ex = self.contract.exclusions
        cases: list[tuple[ir.BooleanValue, ir.StringValue]] = []
        if self.maintenance:
            cases.append(
                (in_intervals_expr(c.start_us, self.maintenance), ibis.literal("maintenance"))
            )
        if ex.max_input_tokens is not None:
            cases.append(
                (
                    (c.input_tokens > ex.max_input_tokens).fill_null(False),
                    ibis.literal("long_input"),
                )
            )
        if ex.downgraded_service_tiers:
            tiers = [t.lower() for t in ex.downgraded_service_tiers]
            cases.append(
                (
                    c.service_tier.lower().isin(tiers).fill_null(False),
                    ibis.literal("downgraded_tier"),
                )
            )
        if ex.customer_errors:
            client_error = (c.http_status >= 400) & (c.http_status < 500) & (c.http_status != 429)
            cases.append((client_error.fill_null(False), ibis.literal("customer_error")))
        if not cases:
            return ibis.null().cast("string")
        return ibis.cases(*cases, else_=ibis.null().cast("string"))

    def excluded_task_ids(self, calls: ir.Table) -> ir.Table:
        """Tasks holding at least one excluded call (a task-level term excludes the whole task)."""
        marked = calls.mutate(_ex=self.exclusion_reason(calls))
        return marked.filter(marked._ex.notnull()).select("task_id").distinct()


def example_ids(
    t: ir.Table, cond: ir.BooleanValue, worst_first: str | None = None
) -> tuple[str, ...]:
    """A few task ids where ``cond`` holds: by the largest ``worst_first`` column, then by id."""
    hits = t.filter(cond)
    if worst_first is None:
        ids = hits.select("task_id").distinct().order_by("task_id")
    else:
        ids = (
            hits.group_by("task_id")
            .aggregate(_w=hits[worst_first].max())
            .order_by([ibis.desc("_w"), "task_id"])
        )
    df = ids.limit(MAX_EXAMPLES).select("task_id").execute()
    return tuple(str(x) for x in df["task_id"])
