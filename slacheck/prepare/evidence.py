"""Call lists the documents attach, read from the metered-call table (``metering.calls``):

- the report's evidence appendix: every in-scope call of the period's availability windows that
  the availability rule counts as failed, leaves undecided or excludes, one row each, with what
  it was counted as and why;
- the claim pack's affected calls: exactly the calls the availability check counts as failed in
  the claimed window (its ``total − good``).

Both are the same rows of the same table the check counts, so neither can disagree with it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from typing import Any
from zoneinfo import ZoneInfo

import ibis
import ibis.expr.types as ir

from slacheck.contract.model import Contract, Window
from slacheck.metering.calls import metered
from slacheck.metering.context import Metering
from slacheck.render.claim import AFFECTED_COLUMNS, Incident
from slacheck.render.inputs import EVIDENCE_COLUMNS, EvidenceFile
from slacheck.windows import CalendarWindow, from_us

__all__ = [
    "CountedAs",
    "affected_calls",
    "affected_csv",
    "csv_cell",
    "evidence",
    "evidence_windows",
]

_ORDER = ["start_us", "task_id", "span_id"]
_UTC = ZoneInfo("UTC")


class CountedAs:
    """The ``counted_as`` column of the evidence appendix."""

    FAILED = "failed"  # the vendor's failure under availability.failures
    UNCLASSIFIED = "unclassified"  # read both ways: neither failed nor proven good
    EXCLUDED = "excluded"  # not counted against the vendor (``reason``: why)


def evidence_windows(ctx: Metering) -> list[CalendarWindow]:
    """The windows the evidence is listed in: the availability term's, else calendar months."""
    spec = ctx.contract.availability
    return ctx.windows(spec.window if spec is not None else Window.CALENDAR_MONTH)


def evidence(ctx: Metering) -> EvidenceFile:
    """The evidence appendix of the period, oldest first, times in the contract's zone."""
    m = metered(ctx, evidence_windows(ctx))
    m = m.filter(m.excluded.notnull() | m.failed | m.undecided)
    cols = ["window", "start_us", "task_id", "span_id", "region_key", "state", "http_status"]
    zone = ctx.contract.zone
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(EVIDENCE_COLUMNS)
    n = 0
    for r in _stream(m, cols):
        n += 1
        http = _http(r["http_status"])
        # the reason: the exclusion, else the failure
        if r["excluded"] is not None:
            counted, reason = CountedAs.EXCLUDED, str(r["excluded"])
        else:
            counted = CountedAs.FAILED if r["failed"] else CountedAs.UNCLASSIFIED
            reason = str(r["state"]) + (f" (HTTP {http})" if http else "")
        out.writerow(
            (
                r["window"],
                from_us(int(r["start_us"]), zone).isoformat(timespec="milliseconds"),
                csv_cell(r["task_id"]),
                csv_cell(r["span_id"]),
                csv_cell(r["region_key"]),
                r["state"],
                http,
                counted,
                reason,
            )
        )
    return EvidenceFile(buf.getvalue().encode("utf-8"), n)


def affected_calls(ctx: Metering, windows: Sequence[CalendarWindow]) -> ir.Table:
    """The calls the availability check counts as failed in ``windows``."""
    m = metered(ctx, windows)
    return m.filter(m.excluded.isnull() & m.failed)


def incidents(affected: ir.Table, gap_us: int) -> tuple[Incident, ...]:
    """Runs of ``affected`` calls (``affected_calls``) whose starts lie no more than ``gap_us``
    apart, oldest first, computed in the engine: a call more than ``gap_us`` after the one
    before it starts a run, and the running count of such starts numbers the runs. Calls that
    start together fall in one run, whatever order the engine gives them."""
    a = affected.select("start_us", "region_key", "request_model", "endpoint")
    prev = a.start_us.lag().over(ibis.window(order_by=a.start_us))
    a = a.mutate(_new=ibis.ifelse(prev.isnull() | (a.start_us - prev > gap_us), 1, 0))
    running = ibis.cumulative_window(order_by=[a.start_us, a._new.desc()])
    a = a.mutate(_run=a._new.sum().over(running))
    runs = (
        a.group_by("_run")
        .aggregate(
            first=a.start_us.min(),
            last=a.start_us.max(),
            n=a.count(),
            regions=a.region_key.collect(distinct=True),
            models=a.request_model.collect(distinct=True),
            endpoints=a.endpoint.collect(distinct=True),
        )
        .order_by("first")
        .to_pyarrow()
        .to_pylist()
    )
    return tuple(
        Incident(
            int(r["first"]),
            int(r["last"]),
            int(r["n"]),
            *(tuple(sorted(str(v) for v in r[k] or () if v is not None)) for k in _LABELS),
        )
        for r in runs
    )


#: what an incident names: the distinct regions, models and endpoints of its calls
_LABELS = ("regions", "models", "endpoints")


def affected_csv(affected: ir.Table, contract: Contract) -> tuple[bytes, int]:
    """The claim pack's affected calls (``affected_calls``) as CSV (``AFFECTED_COLUMNS``),
    oldest first, UTC and local times; and how many rows it holds."""
    cols = ["start_us", "task_id", "span_id", "region_key", "provider", "request_model"]
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(AFFECTED_COLUMNS)
    n = 0
    for r in _stream(affected, [*cols, "endpoint", "status", "http_status"]):
        n += 1
        us = int(r["start_us"])
        out.writerow(
            (
                from_us(us, _UTC).isoformat(timespec="milliseconds"),
                from_us(us, contract.zone).isoformat(timespec="milliseconds"),
                *(
                    csv_cell(r[k])
                    for k in ("task_id", "span_id", "region_key", "provider", "request_model")
                ),
                csv_cell(r["endpoint"]),
                csv_cell(r["status"]),
                _http(r["http_status"]),
            )
        )
    return buf.getvalue().encode("utf-8"), n


def csv_cell(value: Any) -> str:
    """Trace text as a CSV cell a spreadsheet will not run as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _http(value: Any) -> str:
    return "" if value is None else str(int(value))


#: rows of the evidence held as Python values at a time: a quarter's appendix at 100 M spans is
#: about a million calls, which as one list of dicts would take a gigabyte or more; as Arrow
#: columns a tenth of that
STREAM_ROWS = 20_000


def _stream(m: ir.Table, cols: list[str]) -> Iterator[dict[str, Any]]:
    """``cols`` (with ``excluded`` and ``failed``) of ``m``'s rows, oldest first, fetched as
    Arrow columns and turned into Python values ``STREAM_ROWS`` at a time. (Not
    ``to_pyarrow_batches``: Ibis 12 calls a method DuckDB 2 no longer has.)"""
    extra = [c for c in ("excluded", "failed") if c not in cols]
    table = m.select(*cols, *extra).order_by(_ORDER).to_pyarrow()
    for start in range(0, table.num_rows, STREAM_ROWS):
        yield from table.slice(start, STREAM_ROWS).to_pylist()
