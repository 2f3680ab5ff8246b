"""Why a row of the canonical table cannot be used: the set-aside rules ingestion classifies
every row by (``SetAside``), as one engine expression. A converted folder's record
(``trace.record``) reads its rows set aside by the same rules."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir

from slacheck.trace.schema import (
    MAX_TOKENS_PER_CALL,
    PLAUSIBLE_US,
    TOKEN_FIELDS,
    WITHIN_SPAN_MS,
    WITHIN_SPAN_SLACK_MS,
    SetAside,
)


def reason_expr(t: ir.Table) -> ir.StringValue:
    """Why a row cannot be used, or null. Order matters: the first reason found is reported."""
    tokens_negative = (
        (t.input_tokens < 0) | (t.output_tokens < 0) | (t.cached_tokens < 0)
    ).fill_null(False)
    missing_id = t.task_id.isnull() | t.span_id.isnull() | (t.task_id == "") | (t.span_id == "")
    defect_reason = t.defect.split(":")[0]
    return ibis.cases(
        (t.defect.notnull(), defect_reason),
        (missing_id, ibis.literal(str(SetAside.MISSING_ID))),
        (t.start_us.isnull(), ibis.literal(str(SetAside.MISSING_TIMESTAMP))),
        *_out_of_range(t),
        (t.end_us.isnull(), ibis.literal(str(SetAside.MISSING_END))),
        (t.end_us < t.start_us, ibis.literal(str(SetAside.END_BEFORE_START))),
        (tokens_negative, ibis.literal(str(SetAside.NEGATIVE_TOKENS))),
        *_impossible_values(t),
        else_=ibis.null().cast("string"),
    )


def _out_of_range(t: ir.Table) -> list[tuple[ir.BooleanValue, ir.StringValue]]:
    lo, hi = PLAUSIBLE_US
    return [
        (
            (t[name] < lo) | (t[name] >= hi),
            ibis.literal(f"{SetAside.OUT_OF_RANGE}:{name}"),
        )
        for name in ("start_us", "end_us")
    ]


def _impossible_values(t: ir.Table) -> list[tuple[ir.BooleanValue, ir.StringValue]]:
    """A within-span measurement that is negative, not finite or longer than its span, or a
    token count beyond ``MAX_TOKENS_PER_CALL``.

    Such a value would decide a verdict (a negative time to first token makes any p95 "met"),
    so the row is set aside, never measured; the reason names the field.
    """
    cases: list[tuple[ir.BooleanValue, ir.StringValue]] = []
    # in floats: a row at the int64 limits (set aside above) must not overflow the engine
    span_ms = (t.end_us.cast("float64") - t.start_us.cast("float64")) / 1000.0
    for name in WITHIN_SPAN_MS:
        v = t[name]
        impossible = (
            v.isnan() | v.isinf() | (v < 0) | (v > span_ms + WITHIN_SPAN_SLACK_MS)
        ).fill_null(False)
        cases.append((impossible, ibis.literal(f"{SetAside.IMPOSSIBLE_VALUE}:{name}")))
    for name in TOKEN_FIELDS:  # beyond any call's count, and a sum of them would overflow
        beyond = (t[name] > MAX_TOKENS_PER_CALL).fill_null(False)
        cases.append((beyond, ibis.literal(f"{SetAside.IMPOSSIBLE_VALUE}:{name}")))
    return cases
