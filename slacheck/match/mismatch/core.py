"""The mismatch finders' core: what a mismatch is, and how many units each term can meter."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import ibis.expr.types as ir

from slacheck.contract.model import Contract, LatencyTerm, MeasurementPoint, TokensPerSecondBasis
from slacheck.match.findings import Code, Mismatch
from slacheck.messages import NC_, MessageCode
from slacheck.metering.derive import point_value, scoped, succeeded

__all__ = [
    "Code",
    "Mismatch",
    "Range",
    "Shared",
    "TermCoverage",
    "UnitSaid",
    "aggregate_row",
    "as_float",
    "as_int",
    "coverage_aggregates",
    "coverage_columns",
    "coverage_from",
    "task_scope",
    "term_coverage",
]

#: first start → last end of some calls, in µs; None when there are none
Range = tuple[int, int] | None


class UnitSaid(MessageCode):
    """The units a mismatch counts in (several finders say them)."""

    UNIT_CALLS = NC_("mismatch.unit.calls", "calls")
    UNIT_TASKS = NC_("mismatch.unit.tasks", "tasks")


@dataclass(frozen=True, slots=True)
class TermCoverage:
    """How many in-scope units (successful calls, or tasks) can be metered at a term's point.

    ``recorded + derived`` units are measurable; ``client_only`` (server processing only) are
    measured at the client, an upper bound. For tokens/s, ``whole_request`` and
    ``after_first_token`` count the calls measurable on each reading and ``recorded`` counts
    those measurable on the contracted one (both readings when the basis is unstated).
    """

    term_id: str
    point: MeasurementPoint
    unit: str  # "calls" or "tasks"
    in_scope: int
    recorded: int
    derived: int
    client_only: int = 0
    basis: TokensPerSecondBasis | None = None
    whole_request: int | None = None
    after_first_token: int | None = None
    median_whole_request: float | None = None
    median_after_first_token: float | None = None

    @property
    def measurable(self) -> int:
        return self.recorded + self.derived

    @property
    def basis_unstated(self) -> bool:
        return self.point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND and self.basis in (
            None,
            TokensPerSecondBasis.UNSTATED,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "term_id": self.term_id,
            "measurement_point": str(self.point),
            "unit": self.unit,
            "in_scope": self.in_scope,
            "recorded": self.recorded,
            "derived": self.derived,
            "measurable": self.measurable,
        }
        if self.point is MeasurementPoint.SERVER_PROCESSING:
            out["client_only"] = self.client_only
        if self.point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            out |= {
                "basis": str(self.basis) if self.basis is not None else None,
                "whole_request": self.whole_request,
                "after_first_token": self.after_first_token,
                "median_whole_request": self.median_whole_request,
                "median_after_first_token": self.median_after_first_token,
            }
        return out


# ---------------------------------------------------------------------------------------------
# shared aggregates


def aggregate_row(t: ir.Table, **aggs: ir.Scalar) -> dict[str, Any]:
    """One aggregate row as Python values (None, never NaN, for an empty input)."""
    rows: list[dict[str, Any]] = t.aggregate(**aggs).to_pyarrow().to_pylist()
    return rows[0]


class Shared:
    """Aggregates over one table that several readers ask for, computed in one query: each
    ``ask`` (made before any row is read) gives a key; the first ``row`` runs the query for
    every ask, so a dozen readers cost one scan and one compilation instead of a dozen."""

    def __init__(self, table: ir.Table) -> None:
        self.table = table
        self._asks: list[dict[str, ir.Scalar]] = []
        self._rows: list[dict[str, Any]] | None = None

    def ask(self, **aggs: ir.Scalar) -> int:
        if self._rows is not None:
            raise RuntimeError("an aggregate asked for after the shared query ran")
        self._asks.append(aggs)
        return len(self._asks) - 1

    def row(self, key: int) -> dict[str, Any]:
        if self._rows is None:
            named = {f"a{i}_{k}": v for i, aggs in enumerate(self._asks) for k, v in aggs.items()}
            got = aggregate_row(self.table, **named) if named else {}
            self._rows = [{k: got[f"a{i}_{k}"] for k in aggs} for i, aggs in enumerate(self._asks)]
        return self._rows[key]


def as_int(v: Any) -> int:
    return 0 if v is None else int(v)


def as_float(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def task_scope(
    calls: ir.Table, tasks: ir.Table, contract: Contract, term: LatencyTerm | None = None
) -> ir.Table:
    """``tasks`` joined with ``in_scope_calls``: how many of the task's calls the scope covers.

    Tasks without a model call are left out: an inference contract has nothing to say of them.
    """
    per = calls.group_by("task_id").aggregate(in_scope_calls=scoped(calls, contract, term).sum())
    return tasks.join(per, "task_id")


def term_coverage(
    contract: Contract,
    calls: ir.Table,
    tasks: ir.Table,
    excluded: ir.BooleanValue | None = None,
) -> tuple[TermCoverage, ...]:
    """For every latency term, how many in-scope units its metric can be computed for.

    ``excluded``: per call of ``calls``, the contract excludes it (``Metering.exclusion_reason``
    is set); a per-call term then counts the calls its check counts, answered and not excluded.
    (``coverage_columns``, ``coverage_aggregates`` and ``coverage_from`` are its steps, for a
    caller that computes the per-call counts in a query of its own.)
    """
    c = coverage_columns(contract, calls, excluded)
    aggs = coverage_aggregates(contract, c)
    row = aggregate_row(c, **aggs) if aggs else {}
    return coverage_from(contract, row, calls, tasks)


def _per_call(contract: Contract) -> dict[int, LatencyTerm]:
    """The per-call latency terms, by their place in the contract."""
    return {
        i: term
        for i, term in enumerate(contract.latency)
        if term.measurement_point is not MeasurementPoint.TASK_END_TO_END
    }


def coverage_columns(
    contract: Contract, calls: ir.Table, excluded: ir.BooleanValue | None = None
) -> ir.Table:
    """``calls`` with each per-call term's unit test (``_ts<i>``) and source (``_src<i>``) as
    columns, computed once per call: inlined in every aggregate, the exclusion's case tree alone
    was most of the query's time."""
    ok = succeeded(calls)
    if excluded is not None:
        ok = ok & ~excluded
    per_call = _per_call(contract)
    c = calls.mutate(
        _ok=ok,
        **{
            f"_src{i}": point_value(calls, t.measurement_point, t.tokens_per_second_basis)[1]
            for i, t in per_call.items()
        },
    )
    return c.mutate(**{f"_ts{i}": scoped(c, contract, t) & c._ok for i, t in per_call.items()})


def coverage_aggregates(contract: Contract, c: ir.Table) -> dict[str, ir.Scalar]:
    """The per-call terms' counts over ``coverage_columns``' table."""
    aggs: dict[str, ir.Scalar] = {}
    for i, term in _per_call(contract).items():
        point = term.measurement_point
        ts, src = c[f"_ts{i}"], c[f"_src{i}"]
        aggs[f"n{i}"] = ts.sum()
        aggs[f"der{i}"] = (ts & (src == "derived").fill_null(False)).sum()
        aggs[f"cli{i}"] = (ts & (src == "client").fill_null(False)).sum()
        if point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            whole, gen = ts & c.tps_whole.notnull(), ts & c.tps_gen.notnull()
            aggs[f"whole{i}"] = whole.sum()
            aggs[f"gen{i}"] = gen.sum()
            aggs[f"both{i}"] = (whole & gen).sum()
            # a null-masked column, not `where=`: the PySpark backend applies `where` to the
            # percentile's fraction too, which Spark rejects as not foldable
            aggs[f"mwhole{i}"] = whole.ifelse(c.tps_whole, None).median()
            aggs[f"mgen{i}"] = gen.ifelse(c.tps_gen, None).median()
        aggs[f"rec{i}"] = (ts & (src == "recorded").fill_null(False)).sum()
    return aggs


def coverage_from(
    contract: Contract, row: dict[str, Any], calls: ir.Table, tasks: ir.Table
) -> tuple[TermCoverage, ...]:
    """Every term's coverage: the per-call terms' from ``row`` (``coverage_aggregates``'
    values), the task terms' counted here."""
    task_rows: dict[int, dict[str, Any]] = {}
    for i, term in enumerate(contract.latency):
        if term.measurement_point is not MeasurementPoint.TASK_END_TO_END:
            continue
        j = task_scope(calls, tasks, contract, term)
        has = j.in_scope_calls > 0
        task_rows[i] = aggregate_row(
            j,
            n=has.sum(),
            rec=(has & (j.task_source == "root_span").fill_null(False)).sum(),
            der=(has & (j.task_source == "roots_envelope")).fill_null(False).sum(),
        )

    out: list[TermCoverage] = []
    for i, term in enumerate(contract.latency):
        point = term.measurement_point
        if i in task_rows:
            r = task_rows[i]
            out.append(
                TermCoverage(
                    term.id, point, "tasks", as_int(r["n"]), as_int(r["rec"]), as_int(r["der"])
                )
            )
            continue
        rec = as_int(row[f"rec{i}"])
        extra: dict[str, Any] = {}
        if point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            extra = {
                "basis": term.tokens_per_second_basis,
                "whole_request": as_int(row[f"whole{i}"]),
                "after_first_token": as_int(row[f"gen{i}"]),
                "median_whole_request": as_float(row[f"mwhole{i}"]),
                "median_after_first_token": as_float(row[f"mgen{i}"]),
            }
            if term.tokens_per_second_basis in (None, TokensPerSecondBasis.UNSTATED):
                # measure both readings: a call counts only when both can be computed
                rec = as_int(row[f"both{i}"])
        out.append(
            TermCoverage(
                term.id,
                point,
                "calls",
                as_int(row[f"n{i}"]),
                rec,
                as_int(row[f"der{i}"]),
                client_only=as_int(row[f"cli{i}"]),
                **extra,
            )
        )
    return tuple(out)
