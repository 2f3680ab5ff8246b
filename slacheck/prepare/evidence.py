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

import ibis.expr.types as ir

from slacheck.contract.model import Contract, Window
from slacheck.metering.calls import metered
from slacheck.metering.context import Metering
from slacheck.render.claim import AFFECTED_COLUMNS
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


def affected_calls(ctx: Metering, windows: Sequence[CalendarWindow]) -> list[dict[str, Any]]:
    """The calls the availability check counts as failed in ``windows``, oldest first."""
    m = metered(ctx, windows)
    m = m.filter(m.excluded.isnull() & m.failed)
    cols = ["start_us", "task_id", "span_id", "region_key", "provider", "request_model"]
    return list(_stream(m, [*cols, "endpoint", "status", "http_status"]))


def affected_csv(rows: Sequence[dict[str, Any]], contract: Contract) -> bytes:
    """The claim pack's affected calls as CSV (``AFFECTED_COLUMNS``), UTC and local times."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(AFFECTED_COLUMNS)
    for r in rows:
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
    return buf.getvalue().encode("utf-8")


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
