"""The metered-call table: per in-scope model call of a run's windows, what it counts as.

One table, once per question, for every consumer: the availability check, the regions check, the
field check, the report's evidence appendix and the claim pack read these columns and restate no
rule. Per call (``metered``):

- ``window``: the label of the window it starts in (calls outside every window are left out);
- ``excluded``: why it does not count against the vendor (``Exclusion``), or null;
- ``failed``: it counts as failed under the contract's failure definition
  (``availability.failures``; the defaults when the contract has no availability term):
  a vendor error, a timeout, throttling while traffic was within the rate limit, and an
  unclassified failure when ``readings.unclassified_failures: vendor`` says so. A call with no
  recorded status, a customer error and throttling above the limit are not failures;
- ``undecided``: an unclassified failure read both ways (``readings.unclassified_failures:
  bounds``): neither failed nor proven good;
- ``region_role``: ``RegionRole`` of the region that served it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import ibis
import ibis.expr.types as ir

from slacheck.contract.model import Contract, FailureDefinition, UnclassifiedFailures
from slacheck.metering.context import Metering
from slacheck.metering.derive import CallState
from slacheck.metering.ratelimit import under_limit_expr
from slacheck.metering.windowed import scoped_calls
from slacheck.names import region_key
from slacheck.windows import CalendarWindow

__all__ = [
    "RegionRole",
    "failed_expr",
    "failures",
    "metered",
    "region_role_expr",
    "region_roles",
    "undecided_expr",
]


class RegionRole(StrEnum):
    """What the contract's region list makes of the region a call was served in."""

    PRIMARY = "primary"  # listed as primary (a region listed both ways is primary)
    FAILOVER = "failover"  # listed as failover only: serving there is a routing event
    UNLISTED = "unlisted"  # named, but in neither list
    UNKNOWN = "unknown"  # no region recorded or derived


def region_roles(contract: Contract) -> tuple[list[str], list[str]]:
    """The primary and the failover-only region keys, sorted (``names.region_key``)."""
    spec = contract.regions
    if spec is None:
        return [], []
    primary = sorted({region_key(r.name) for r in spec.primary})
    failover = sorted({region_key(r.name) for r in spec.failover} - set(primary))
    return primary, failover


def region_role_expr(contract: Contract, key: ir.StringValue) -> ir.StringValue:
    """Per call, from its ``region_key``: its ``RegionRole``."""
    primary, failover = region_roles(contract)
    cases: list[tuple[ir.BooleanValue, ir.StringValue]] = [
        (key.isnull(), ibis.literal(str(RegionRole.UNKNOWN)))
    ]
    if primary:
        cases.append((key.isin(primary), ibis.literal(str(RegionRole.PRIMARY))))
    if failover:
        cases.append((key.isin(failover), ibis.literal(str(RegionRole.FAILOVER))))
    return ibis.cases(*cases, else_=ibis.literal(str(RegionRole.UNLISTED)))


def failures(contract: Contract) -> FailureDefinition:
    """What counts as a failed call: the availability term's definition, else the defaults."""
    spec = contract.availability
    return spec.failures if spec is not None else FailureDefinition()


def failed_expr(ctx: Metering, c: ir.Table) -> ir.BooleanValue:
    """Per call: it counts as failed under the contract's failure definition (``failures``)."""
    f = failures(ctx.contract)
    failed: ir.BooleanValue = ibis.literal(False)
    if f.server_errors:
        failed |= c.state == str(CallState.VENDOR_ERROR)
        if ctx.contract.readings.unclassified_failures is UnclassifiedFailures.VENDOR:
            failed |= c.state == str(CallState.UNCLASSIFIED)
    if f.timeouts:
        failed |= c.state == str(CallState.TIMEOUT)
    if f.throttling_below_limit:
        failed |= (c.state == str(CallState.THROTTLED)) & under_limit_expr(ctx, c).fill_null(False)
    return failed.fill_null(False)


def undecided_expr(ctx: Metering, c: ir.Table) -> ir.BooleanValue:
    """Per call: an unclassified failure read both ways (``readings.unclassified_failures:
    bounds``, when server errors count): not among ``failed_expr``'s failures, and not proven
    good either."""
    if (
        not failures(ctx.contract).server_errors
        or ctx.contract.readings.unclassified_failures is not UnclassifiedFailures.BOUNDS
    ):
        return ibis.literal(False)
    return (c.state == str(CallState.UNCLASSIFIED)).fill_null(False)


def metered(ctx: Metering, windows: Sequence[CalendarWindow]) -> ir.Table:
    """The in-scope calls that start in one of ``windows``, with the columns above."""
    c = scoped_calls(ctx, windows)
    return c.mutate(
        excluded=ctx.exclusion_reason(c),
        failed=failed_expr(ctx, c),
        undecided=undecided_expr(ctx, c),
        region_role=region_role_expr(ctx.contract, c.region_key),
    )
