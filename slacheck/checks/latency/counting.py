"""A latency term's units in its windows, computed once as a compact table that every later query
of the term reads, and counted per window in one scan: states, figure coverage, passing counts
and exclusions (``metering.units.Counts``), with the tests of a figure against the threshold."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import ibis
import ibis.expr.types as ir

from slacheck.contract.criterion import Comparison
from slacheck.contract.model import AtTheLimit, Direction
from slacheck.metering.context import CheckContext
from slacheck.metering.rank import bucket
from slacheck.metering.units import ANSWERED, Counts, Units, UnitState
from slacheck.metering.windowexpr import window_index_expr
from slacheck.windows import CalendarWindow

NULL_FLOAT = ibis.null().cast("float64")
#: a unit's state as the compact table stores it, the answered states first
STATE_CODES = {UnitState.OK: 0, UnitState.UNKNOWN: 1, UnitState.FAILED: 2}
_ANSWERED_CODES = [STATE_CODES[s] for s in ANSWERED]


def compact(
    units: Units,
    windows: list[CalendarWindow],
    passes: Callable[[ir.FloatingValue], ir.BooleanValue] | None,
) -> ir.Table:
    """The term's units in its windows, computed once as a table that every later query of the
    term reads. Per unit it holds what those queries read, compactly: ``_w`` is the window's
    position in ``windows`` and ``_state`` a code of ``STATE_CODES`` (small integers, not a
    label per call); a figure the term has no stand-in or alternative for is left out of the
    table and put back as the constant it is.

    ``passes``: an occurrence objective's test of one figure. The task id (a long string, most
    of the table's size) is kept only for units that fail it at some figure they have, the
    only ones an example can be; a unit that passes at every figure keeps none. Without it
    (time slices: an example is any unit of a failing slice) every unit keeps its id, and the
    start that places it in its slice."""
    u = units.table
    state = ibis.cases(
        *(
            (u._state == str(name), ibis.literal(code, "int8"))
            for name, code in STATE_CODES.items()
        ),
        else_=ibis.literal(STATE_CODES[UnitState.FAILED], "int8"),
    )
    task_id = u.task_id
    if passes is not None:
        fails = [f.notnull() & ~passes(f) for f in (u._p, u._f)]
        task_id = ibis.ifelse(fails[0] | fails[1], u.task_id, ibis.null().cast("string"))
    cols: dict[str, ir.Value] = {
        "task_id": task_id,
        "_ex": u._ex,
        "_state": state,
        "_w": window_index_expr(u.start_us, windows),
        "_p": u._p,
    }
    if passes is None:
        cols["start_us"] = u.start_us
    if units.fallback is not None:
        cols |= {"_f": u._f, "_m": u._m}
    if units.alternative is not None:
        cols["_a"] = u._a
    t = u.select(**cols)
    t = t.filter(t._w.notnull()).cache()
    constants: dict[str, ir.Value] = {}
    if units.fallback is None:  # no stand-in: _f is null, so _m = coalesce(_p, _f) is _p
        constants |= {"_f": NULL_FLOAT, "_m": t._p}
    if units.alternative is None:
        constants["_a"] = NULL_FLOAT
    return t.mutate(**constants)


def is_answered(t: ir.Table) -> ir.BooleanValue:
    """Whether a unit of a ``compact`` table is measured (ok, or no status recorded)."""
    return t._state.isin(_ANSWERED_CODES)


def position(windows: list[CalendarWindow]) -> dict[str, int]:
    """Window label → its position in ``windows``: the ``_w`` of a ``compact`` table."""
    return {w.label: i for i, w in enumerate(windows)}


def passes_test(
    direction: Direction, threshold: float, inclusive: bool = True
) -> Callable[[ir.FloatingValue], ir.BooleanValue]:
    """Per value: within the threshold (``inclusive``: a value at the limit is within)."""

    def passes(v: ir.FloatingValue) -> ir.BooleanValue:
        if direction is Direction.AT_MOST:
            cmp = v <= threshold if inclusive else v < threshold
        else:
            cmp = v >= threshold if inclusive else v > threshold
        return cmp.fill_null(False)

    return passes


def meets(direction: Direction, value: float, threshold: float, inclusive: bool = True) -> bool:
    """The comparison the term's rule names (``contract.criterion.Comparison``), applied."""
    reading = AtTheLimit.WITHIN if inclusive else AtTheLimit.BEYOND
    return Comparison.of(direction, reading).holds(value, threshold)


def within_at_limit(ctx: CheckContext) -> bool:
    """The contract's reading of a value exactly at the limit (``readings.at_the_limit``): the
    comparison every latency rule names lets the limit itself pass."""
    return Comparison.of(Direction.AT_MOST, ctx.contract.readings.at_the_limit).inclusive


def count_units(
    t: ir.Table,
    units: Units,
    passes: Callable[[ir.FloatingValue], ir.BooleanValue],
    windows: list[CalendarWindow],
) -> tuple[dict[str, Counts], ir.Table]:
    """Per window: units not excluded, their states, figure coverage and passing counts, and
    the excluded units per reason. With them, from the same scan of the units: the answered
    units' contracted figures counted per window (``_win``) and bucket (``_b``,
    ``rank.bucket``), as ``rank.order_stats`` counts them.

    The units are counted per window, exclusion, state and bucket of the contracted figure
    (null when it is missing), so most counts are sums of those groups' sizes; only what a
    bucket cannot say is summed per unit: passing the threshold, and the stand-in's and the
    alternative's figures where the term has them."""
    per_unit: dict[str, ir.Value] = {"n": t.count(), "good_p": passes(t._p).sum()}
    if units.fallback is not None:
        per_unit |= {
            "n_f": t._f.notnull().sum(),
            "n_m": t._m.notnull().sum(),
            "good_f": passes(t._f).sum(),
            "good_m": passes(t._m).sum(),
        }
    if units.alternative is not None:
        per_unit["n_a"] = t._a.notnull().sum()
    b = t.group_by(["_w", "_ex", "_state", bucket(t._p).name("_b")]).aggregate(**per_unit)
    b = b.cache()  # a few rows per window, state and millisecond
    summed = b.group_by(["_w", "_ex", "_state", b._b.notnull().name("_has_p")]).aggregate(
        **{c: b[c].sum() for c in per_unit}
    )
    kept: dict[str, dict[str, int]] = {}
    excluded: dict[str, dict[str, int]] = {}
    for row in summed.to_pyarrow().to_pylist():
        label, reason, n = windows[int(row["_w"])].label, row["_ex"], int(row["n"])
        if reason is not None:
            ex = excluded.setdefault(label, {})
            ex[str(reason)] = ex.get(str(reason), 0) + n
            continue
        c = kept.setdefault(label, dict.fromkeys(_COUNTED, 0))
        c["units"] += n
        state = int(row["_state"])
        if state == STATE_CODES[UnitState.FAILED]:
            c["failed"] += n
            continue
        if state == STATE_CODES[UnitState.UNKNOWN]:
            c["unknown"] += n
        c["ok"] += n
        c["n_p"] += n if row["_has_p"] else 0
        for k in ("good_p", "n_f", "n_m", "good_f", "good_m", "n_a"):
            c[k] += int(row.get(k) or 0)
    for c in kept.values():
        if units.fallback is None:  # no stand-in: _m is _p
            c["n_m"], c["good_m"] = c["n_p"], c["good_p"]
    counts = {
        label: Counts(**kept.get(label, {}), excluded=excluded.get(label, {}))
        for label in kept.keys() | excluded.keys()
    }
    mine = b.filter(b._ex.isnull() & b._state.isin(_ANSWERED_CODES) & b._b.notnull())
    counted = mine.group_by(_win=mine._w, _b=mine._b).aggregate(_n=mine.n.sum())
    return counts, counted


#: the per-window counts of ``Counts`` (all but ``excluded``)
_COUNTED = (
    "units",
    "ok",
    "failed",
    "unknown",
    "n_p",
    "n_f",
    "n_a",
    "n_m",
    "good_p",
    "good_f",
    "good_m",
)


def by_window(
    t: ir.Table, columns: Mapping[str, str], windows: list[CalendarWindow]
) -> ir.FloatingValue:
    """Each window's chosen column (null in a window measured at no point)."""
    if not columns:
        return NULL_FLOAT
    if set(columns) == {w.label for w in windows} and len(set(columns.values())) == 1:
        return t[next(iter(columns.values()))]  # the same column everywhere: no case per row
    at = position(windows)
    return ibis.cases(
        *[(t._w == at[label], t[col]) for label, col in columns.items()], else_=NULL_FLOAT
    )


__all__ = [
    "NULL_FLOAT",
    "STATE_CODES",
    "by_window",
    "compact",
    "count_units",
    "is_answered",
    "meets",
    "passes_test",
    "position",
    "within_at_limit",
]
