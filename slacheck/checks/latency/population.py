"""The units of every latency term that counts the same things in the same windows (one
population: the calls of one scope, or the tasks holding them), as one table the terms share,
and their counts from one grouped pass over it.

A population's table has one row per unit in a window: ``task_id``, ``start_us``, ``_w`` (the
window's position), ``_ex`` (exclusion reason), ``_state`` (``STATE_CODES``), and per term the
columns of its figures (``Member.p``, ``f``, ``a``). Call populations stay a projection of the
calls (each pass reads only the columns it needs); a task population is computed once, as a
table: a task's figures come from an aggregate over every span, and tasks are few.

The counting pass crosses the units with the terms (a few rows: one per term, and one per
alternative figure an occurrence term states) and groups by term, window, exclusion, state and
the millisecond bucket of the contracted figure and of each unit's own figure (``_m``, the
stand-in where the contracted one is missing): every ``Counts`` is a sum of those groups, and
the order statistics' bucket counts are their sizes (``Histogram``), whichever point a window
is measured at."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ibis
import ibis.expr.types as ir
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from slacheck.checks.latency.counting import (
    COUNTED,
    NULL_FLOAT,
    STATE_CODES,
    is_answered,
    passes_test,
    within_at_limit,
)
from slacheck.contract.model import LatencyTerm, MeasurementPoint, OccurrenceObjective
from slacheck.metering import derive
from slacheck.metering.context import CheckContext
from slacheck.metering.rank import bucket
from slacheck.metering.units import (
    ANSWERED,
    Counts,
    Units,
    UnitState,
    call_figures,
    call_state,
    task_units,
)
from slacheck.metering.windowexpr import window_index_expr
from slacheck.windows import CalendarWindow

_SUMMED = ("n_p", "good_p", "n_f", "good_f", "n_m", "good_m", "n_a")


@dataclass(frozen=True, slots=True)
class Member:
    """One term of a population: what it counts (``units``: its points, and its own view of the
    population as a ``Units`` table) and its figures' columns in the population's table."""

    term: LatencyTerm
    units: Units
    p: str
    f: str | None
    a: str | None

    @property
    def occurrence(self) -> bool:
        return isinstance(self.term.objective, OccurrenceObjective)

    def column(self, name: str) -> str:
        """The population's column holding this term's ``_p``, ``_f`` or ``_a``."""
        col = {"_p": self.p, "_f": self.f, "_a": self.a}[name]
        if col is None:
            raise KeyError(name)
        return col

    def value(self, t: ir.Table, column: str) -> ir.FloatingValue:
        """The term's figure ``column`` (``_p``, ``_f``, ``_m`` or ``_a``) on population rows."""
        if column == "_m":
            return t[self.p] if self.f is None else ibis.coalesce(t[self.p], t[self.f])
        name = {"_p": self.p, "_f": self.f, "_a": self.a}[column]
        return NULL_FLOAT if name is None else t[name]


@dataclass(frozen=True, slots=True)
class Population:
    """Terms counting the same units in the same windows, and the table of those units."""

    table: ir.Table
    windows: list[CalendarWindow]
    members: list[Member]


def population_key(ctx: CheckContext, term: LatencyTerm) -> tuple[str, str, str]:
    """Terms with equal keys count the same units in the same windows: one population."""
    scope = derive.effective_scope(ctx.contract, term).model_dump_json()
    tasks = term.measurement_point is MeasurementPoint.TASK_END_TO_END
    return (str(term.window), "tasks" if tasks else "calls", scope)


def build(
    ctx: CheckContext, terms: Sequence[LatencyTerm], calls: ir.Table, windows: list[CalendarWindow]
) -> Population:
    """The population of ``terms`` (equal ``population_key``) over ``calls`` (``call_base``)."""
    scoped = calls.filter(derive.scoped(calls, ctx.contract, terms[0]))
    state_of = {str(s): code for s, code in STATE_CODES.items()}
    if terms[0].measurement_point is MeasurementPoint.TASK_END_TO_END:
        u = task_units(ctx, scoped)
        src = u.table
        state: ir.Value = _state_code(src._state, state_of)
        cols: dict[str, ir.Value] = {"_p0": src._p, "_f0": src._f}
        members = [
            Member(term, u, "_p0", "_f0" if u.fallback is not None else None, None)
            for term in terms
        ]
    else:
        src = scoped
        state = _state_code(call_state(scoped), state_of)
        cols, members = {}, []
        for i, term in enumerate(terms):
            fig = call_figures(scoped, term)
            cols[f"_p{i}"] = fig.p
            f = a = None
            if fig.fallback is not None:
                cols[f := f"_f{i}"] = fig.f
            if fig.alternative is not None:
                cols[a := f"_a{i}"] = fig.a
            u = Units(src, "calls", fig.primary, fig.fallback, fig.alternative)
            members.append(Member(term, u, f"_p{i}", f, a))
    t = src.select(
        task_id=src.task_id,
        start_us=src.start_us,
        _ex=src._ex,
        _state=state,
        _w=window_index_expr(src.start_us, windows),
        **cols,
    )
    t = t.filter(t._w.notnull())
    if terms[0].measurement_point is MeasurementPoint.TASK_END_TO_END:
        t = t.cache()  # a row per task, from an aggregate over every span: computed once
    pop = Population(t, windows, members)
    return Population(t, windows, [_with_view(pop, m) for m in members])


def _state_code(state: ir.StringValue, codes: dict[str, int]) -> ir.IntegerValue:
    failed = STATE_CODES[UnitState.FAILED]
    cases = [(state == name, ibis.literal(code, "int8")) for name, code in codes.items()]
    return ibis.cases(*cases, else_=ibis.literal(failed, "int8"))


def _with_view(pop: Population, m: Member) -> Member:
    """``m`` with its ``Units`` table: the population's rows with this term's figures as
    ``_p``, ``_f``, ``_a`` and ``_m``."""
    t = pop.table
    view = t.select(
        "task_id",
        "start_us",
        "_w",
        "_ex",
        "_state",
        _p=t[m.p],
        _f=m.value(t, "_f"),
        _a=m.value(t, "_a"),
        _m=m.value(t, "_m"),
    )
    u = m.units
    return Member(m.term, Units(view, u.noun, u.primary, u.fallback, u.alternative), m.p, m.f, m.a)


@dataclass(frozen=True, slots=True)
class Histogram:
    """Answered, not excluded units counted per bucket (``rank.bucket``) of a figure, per
    window position: ascending buckets and their sizes."""

    buckets: dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]

    def where(self, w: int, rank: int) -> tuple[int, int] | None:
        """The bucket holding the ``rank``-th smallest value (1-based) in window ``w``, and
        how many values lie below it; None past the last value."""
        got = self.buckets.get(w)
        if got is None:
            return None
        b, n = got
        cum = np.cumsum(n)
        i = int(np.searchsorted(cum, rank))
        if i >= len(b):
            return None
        return int(b[i]), int(cum[i] - n[i])

    def size(self, w: int, b: int) -> int:
        got = self.buckets.get(w)
        if got is None:
            return 0
        i = np.searchsorted(got[0], b)
        return int(got[1][i]) if i < len(got[0]) and got[0][i] == b else 0

    def beyond(self, w: int, upward: bool, enough: int) -> tuple[int, int] | None:
        """The bucket nearest the top (``upward``) or the bottom at which at least ``enough``
        values are reached counting from that end, and how many that is; None without values."""
        got = self.buckets.get(w)
        if got is None or not len(got[0]):
            return None
        b, n = (got[0][::-1], got[1][::-1]) if upward else got
        cum = np.cumsum(n)
        i = min(int(np.searchsorted(cum, enough)), len(b) - 1)
        return int(b[i]), int(cum[i])


@dataclass(frozen=True, slots=True)
class Counted:
    """A member's counts per window label, and the histograms of its figures: ``"_p"`` (the
    contracted figure), ``"_m"`` (each unit's own: the stand-in where it lacks the contracted
    one, so also the stand-in's where no unit has it) and ``"_a"`` (the alternative basis)."""

    counts: dict[str, Counts]
    histograms: dict[str, Histogram]

    def histogram(self, column: str) -> Histogram:
        return self.histograms["_m" if column == "_f" else column]


def count(ctx: CheckContext, pop: Population) -> list[Counted]:
    """Every member's ``Counted``, from one grouped pass over the population."""
    t = pop.table
    inclusive = within_at_limit(ctx)
    # one entry per term, and one per alternative figure an occurrence term's rank reads
    entries: list[tuple[int, str]] = [(i, "_p") for i in range(len(pop.members))]
    entries += [(i, "_a") for i, m in enumerate(pop.members) if m.occurrence and m.a]
    ids = ibis.memtable({"_i": list(range(len(entries)))}, schema={"_i": "int16"})
    j = t.cross_join(ids)
    kept = is_answered(j) & j._ex.isnull()

    def per_entry(make: Callable[[int, Member, str], ir.Value | None], dtype: str) -> ir.Value:
        cases = []
        for e, (i, col) in enumerate(entries):
            v = make(e, pop.members[i], col)
            if v is not None:
                cases.append((j._i == e, v))
        none = ibis.null().cast(dtype)
        return ibis.cases(*cases, else_=none) if cases else none

    def fig(col: str) -> Callable[[int, Member, str], ir.Value | None]:
        def make(_: int, m: Member, entry: str) -> ir.Value | None:
            if entry == "_a":
                return m.value(j, "_a") if col == "_p" else None
            return m.value(j, col)

        return make

    def good(col: str) -> Callable[[int, Member, str], ir.Value | None]:
        def make(_: int, m: Member, entry: str) -> ir.Value | None:
            if entry == "_a":
                return None
            obj = m.term.objective
            return passes_test(obj.direction, obj.threshold, inclusive)(m.value(j, col))

        return make

    def hist(col: str) -> Callable[[int, Member, str], ir.Value | None]:
        def make(_: int, m: Member, entry: str) -> ir.Value | None:
            if not m.occurrence or (col == "_m" and (entry == "_a" or m.f is None)):
                return None
            return bucket(m.value(j, "_a" if entry == "_a" else col))

        return make

    p, f = per_entry(fig("_p"), "float64"), per_entry(fig("_f"), "float64")
    a = per_entry(lambda _, m, entry: None if entry == "_a" else m.value(j, "_a"), "float64")
    m_ = per_entry(fig("_m"), "float64")
    b = per_entry(hist("_p"), "int64")
    bm = per_entry(hist("_m"), "int64")
    g = j.group_by(
        "_i",
        "_w",
        "_ex",
        "_state",
        _b=ibis.ifelse(kept, b, ibis.null().cast("int64")),
        _bm=ibis.ifelse(kept, bm, ibis.null().cast("int64")),
    ).aggregate(
        n=j.count(),
        n_p=p.notnull().sum(),
        good_p=per_entry(good("_p"), "boolean").sum(),
        n_f=f.notnull().sum(),
        good_f=per_entry(good("_f"), "boolean").sum(),
        n_m=m_.notnull().sum(),
        good_m=per_entry(good("_m"), "boolean").sum(),
        n_a=a.notnull().sum(),
    )
    rows = g.to_pyarrow()
    return [_counted(pop, rows, entries, e, i) for e, (i, col) in enumerate(entries) if col == "_p"]


def _counted(
    pop: Population, rows: pa.Table, entries: list[tuple[int, str]], e: int, i: int
) -> Counted:
    m, windows = pop.members[i], pop.windows
    mine = rows.filter(pc.equal(rows["_i"], e))
    summed = mine.group_by(["_w", "_ex", "_state"]).aggregate(
        [("n", "sum"), *((c, "sum") for c in _SUMMED)]
    )
    kept: dict[str, dict[str, int]] = {}
    excluded: dict[str, dict[str, int]] = {}
    answered = {STATE_CODES[s] for s in ANSWERED}
    for row in summed.to_pylist():
        label, reason, n = windows[int(row["_w"])].label, row["_ex"], int(row["n_sum"])
        if reason is not None:
            ex = excluded.setdefault(label, {})
            ex[str(reason)] = ex.get(str(reason), 0) + n
            continue
        c = kept.setdefault(label, dict.fromkeys(COUNTED, 0))
        c["units"] += n
        state = int(row["_state"])
        if state not in answered:
            c["failed"] += n
            continue
        if state == STATE_CODES[UnitState.UNKNOWN]:
            c["unknown"] += n
        c["ok"] += n
        for k in _SUMMED:
            c[k] += int(row[f"{k}_sum"] or 0)
    for c in kept.values():
        if m.f is None:  # no stand-in: _m is _p
            c["n_m"], c["good_m"] = c["n_p"], c["good_p"]
        if m.a is None:
            c["n_a"] = 0
    counts = {
        label: Counts(**kept.get(label, {}), excluded=dict(sorted(excluded.get(label, {}).items())))
        for label in kept.keys() | excluded.keys()
    }
    histograms = {"_p": _histogram(mine, "_b"), "_m": _histogram(mine, "_bm")}
    if m.f is None:
        histograms["_m"] = histograms["_p"]
    alt = [k for k, (i2, col) in enumerate(entries) if i2 == i and col == "_a"]
    if alt:
        histograms["_a"] = _histogram(rows.filter(pc.equal(rows["_i"], alt[0])), "_b")
    return Counted(counts, histograms)


def _histogram(rows: pa.Table, column: str) -> Histogram:
    """Bucket sizes per window from the grouped rows (the rows with a bucket in ``column``)."""
    have = rows.filter(pc.is_valid(rows[column]))
    g = have.group_by(["_w", column]).aggregate([("n", "sum")])
    g = g.sort_by([("_w", "ascending"), (column, "ascending")])
    w = g["_w"].to_numpy()
    b = g[column].to_numpy().astype(np.int64)
    n = g["n_sum"].to_numpy().astype(np.int64)
    out: dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = {}
    for win in np.unique(w):
        at = w == win
        out[int(win)] = (b[at], n[at])
    return Histogram(out)


__all__ = ["Counted", "Histogram", "Member", "Population", "build", "count", "population_key"]
