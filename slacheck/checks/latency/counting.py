"""What every latency query reads of a unit: its state as a small integer (``STATE_CODES``), the
tests of a figure against the threshold, and each window's chosen column (``by_window``). The
units themselves and their counts are ``population``'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import ibis
import ibis.expr.types as ir

from slacheck.contract.criterion import Comparison
from slacheck.contract.model import AtTheLimit, Direction
from slacheck.metering.context import CheckContext
from slacheck.metering.units import ANSWERED, UnitState
from slacheck.windows import CalendarWindow

NULL_FLOAT = ibis.null().cast("float64")
#: a unit's state as the compact table stores it, the answered states first
STATE_CODES = {UnitState.OK: 0, UnitState.UNKNOWN: 1, UnitState.FAILED: 2}
_ANSWERED_CODES = [STATE_CODES[s] for s in ANSWERED]


def is_answered(t: ir.Table) -> ir.BooleanValue:
    """Whether a unit of a ``compact`` table is measured (ok, or no status recorded)."""
    return t._state.isin(_ANSWERED_CODES)


def position(windows: list[CalendarWindow]) -> dict[str, int]:
    """Window label → its position in ``windows``: the ``_w`` of a ``compact`` table."""
    return {w.label: i for i, w in enumerate(windows)}


def passes_test(
    direction: Direction, threshold: float | ir.NumericValue, inclusive: bool = True
) -> Callable[[ir.NumericValue], ir.BooleanValue]:
    """Per value: within the threshold (``inclusive``: a value at the limit is within). The
    threshold may be an expression (a time slice's mean tests its sum against threshold × n)."""

    def passes(v: ir.NumericValue) -> ir.BooleanValue:
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


#: the per-window counts of ``Counts`` (all but ``excluded``)
COUNTED = (
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
    "is_answered",
    "meets",
    "passes_test",
    "position",
    "within_at_limit",
]
