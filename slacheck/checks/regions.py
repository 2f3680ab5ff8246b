"""Regions: calls served outside the region list, cross-region routing rights, data residency.

Three results per calendar month, all over in-scope model calls whose serving region is known
(``region`` as recorded, else derived from a model resource path); region names compare case-
insensitively.

- ``regions``: served in a primary or failover region.
- ``routing``: a call served in a failover region is a cross-region routing event; it is allowed
  when ``routing.cross_region`` is ``always``, or ``peak_only`` and the call started in a peak
  minute (see ``metering.peak``). No routing section means no rights (``never``). Who decided to
  route, and whether notice was given, is in no trace.
- ``residency`` (when the contract sets limits): served in a region whose jurisdiction the
  limits allow. A region the contract does not list, or lists without a jurisdiction, has an
  unknown jurisdiction: such calls make the verdict indeterminate unless another call breached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.types as ir

from slacheck.checks.registry import check
from slacheck.contract.model import (
    Region,
    Regions,
    RoutingPermission,
    Window,
    region_allowed_by_residency,
)
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param
from slacheck.metering.calls import RegionRole, region_role_expr
from slacheck.metering.context import CheckContext
from slacheck.metering.derive import region_key
from slacheck.metering.peak import at_peak_expr
from slacheck.metering.windowed import (
    as_count,
    by_window,
    examples_by_window,
    scoped_calls,
    top_by_window,
)
from slacheck.verdict import TermKind, TermResult, Verdict
from slacheck.windows import CalendarWindow


class RegionSays(MessageCode):
    """What the regions, routing and residency results say: criteria and notes."""

    CRITERION_REGIONS = NC_(
        "check.regions.criterion", "every call served in a listed region ({regions})"
    )
    ROUTING_NEVER = NC_(
        "check.routing.criterion.never",
        "no call served in a failover region (cross_region: never)",
    )
    ROUTING_PEAK_ONLY = NC_(
        "check.routing.criterion.peak_only",
        "failover regions serve only in peak minutes (cross_region: peak_only)",
    )
    ROUTING_ALWAYS = NC_(
        "check.routing.criterion.always",
        "failover regions may serve at any time (cross_region: always)",
    )
    CRITERION_RESIDENCY = NC_(
        "check.residency.criterion",
        "every call served in a region within the residency limits: {where}",
    )
    WHERE = NC_("check.residency.where", "{countries}")
    WHERE_PROVINCES = NC_("check.residency.where_provinces", "{countries} ({provinces})")
    ANY_COUNTRY = NC_("check.residency.any_country", "any country")
    NO_CALLS = NC_("check.regions.no_calls", "no in-scope model calls in the window")
    NO_REGION_RECORDED = NPC_(
        "check.regions.no_region_recorded",
        "the {calls} call does not record its serving region (cloud.region or a "
        "locations/<region>/ model path)",
        "none of the {calls} calls records its serving region (cloud.region or a "
        "locations/<region>/ model path)",
        count="calls",
    )
    UNRECORDED = NPC_(
        "check.regions.unrecorded",
        "{n} call records no serving region and was not checked",
        "{n} calls record no serving region and were not checked",
    )
    NO_ROUTING_SECTION = NC_(
        "check.routing.no_section",
        "the contract has no routing section: treated as never (no cross-region rights)",
    )
    WHO_DECIDED = NC_(
        "check.routing.who_decided", "who decided to route cannot be observed in traces"
    )
    WHO_DECIDES = NC_(
        "check.routing.who_decides",
        "who decides to route (decided_by: {decided_by}) cannot be observed in traces",
    )
    NOTICE = NC_(
        "check.routing.notice",
        "whether notice was given before routing cannot be observed in traces",
    )
    DATA_MOVED = NPC_(
        "check.routing.data_moved",
        "data_may_move is false, yet {n} call was served in failover regions: its request data "
        "left the primary regions",
        "data_may_move is false, yet {n} calls were served in failover regions: their request "
        "data left the primary regions",
    )
    NO_PEAK = NPC_(
        "check.routing.no_peak",
        "{n} call was served in failover regions, but the contract defines no peak, so peak_only "
        "routing cannot be judged",
        "{n} calls were served in failover regions, but the contract defines no peak, so "
        "peak_only routing cannot be judged",
    )
    UNKNOWN_JURISDICTION = NPC_(
        "check.residency.unknown_jurisdiction",
        "{n} call was served in regions whose jurisdiction the contract does not state, so "
        "residency cannot be decided for it",
        "{n} calls were served in regions whose jurisdiction the contract does not state, so "
        "residency cannot be decided for them",
    )


def _names(regions: list[Region]) -> list[str]:
    return sorted({region_key(r.name) for r in regions})


def _marked(ctx: CheckContext, spec: Regions, windows: list[CalendarWindow]) -> ir.Table:
    """In-scope calls with ``reg`` and the booleans every result below is counted from."""
    c = scoped_calls(ctx, windows)
    reg = c.region_key
    answers = [
        (region_key(r.name), region_allowed_by_residency(r, spec.residency))
        for r in [*spec.primary, *spec.failover]
    ]
    # A region listed twice with different jurisdictions: the stricter answer wins.
    denied = sorted({n for n, ok in answers if ok is False})
    allowed = sorted({n for n, ok in answers if ok is True} - set(denied))
    none = ibis.literal(False)
    # the region's role as every consumer reads it (``metering.calls.region_role_expr``)
    role = region_role_expr(ctx.contract, reg)
    c = c.mutate(
        reg=reg,
        known=reg.notnull(),
        listed=role.isin([str(RegionRole.PRIMARY), str(RegionRole.FAILOVER)]),
        routed=role == str(RegionRole.FAILOVER),
        at_peak=at_peak_expr(ctx, c),
        res_ok=reg.isin(allowed).fill_null(False) if allowed else none,
        res_bad=reg.isin(denied).fill_null(False) if denied else none,
    )
    allowed_route = _routing_allowed(ctx, c)
    return c.mutate(
        route_bad=c.routed & ~allowed_route if allowed_route is not None else none,
        route_undecided=c.routed if allowed_route is None else none,
    )


def _routing_allowed(ctx: CheckContext, c: ir.Table) -> ir.BooleanValue | None:
    """Per call: a routing event there would be allowed. None when that cannot be decided."""
    routing = ctx.contract.routing
    perm = routing.cross_region if routing is not None else RoutingPermission.NEVER
    if perm is RoutingPermission.ALWAYS:
        return ibis.literal(True)
    if perm is RoutingPermission.NEVER:
        return ibis.literal(False)
    if ctx.contract.peak is None:
        return None
    return c.at_peak


@dataclass(frozen=True, slots=True)
class _Window:
    """One window's counts and the per-window lookups the three results draw on."""

    w: CalendarWindow
    row: dict[str, Any]
    examples: dict[str, tuple[str, ...]]
    tops: dict[str, dict[str, int]]

    def n(self, key: str) -> int:
        return as_count(self.row.get(key))


def _make(
    ctx: CheckContext,
    d: _Window,
    term: str,
    verdict: Verdict,
    observed: float | None,
    unit: str,
    criterion: Message,
    good: int,
    total: int,
    examples: tuple[str, ...],
    notes: list[Message],
    details: dict[str, Any],
) -> TermResult:
    return TermResult(
        term_id=term,
        kind=TermKind(term),
        window=d.w.label,
        verdict=verdict,
        observed=observed,
        unit=unit,
        criterion_message=criterion,
        good=good,
        total=total,
        examples=examples,
        notes=tuple(notes),
        partial_window=ctx.partial(d.w),
        details=details,
    )


def _empty(calls: int, known: int) -> tuple[Verdict, Message] | None:
    if calls == 0:
        return Verdict.NO_DATA, RegionSays.NO_CALLS()
    if known == 0:
        return Verdict.NOT_MEASURABLE, RegionSays.NO_REGION_RECORDED(calls=calls)
    return None


def _regions_result(ctx: CheckContext, spec: Regions, d: _Window) -> TermResult:
    calls, known, listed = d.n("calls"), d.n("known"), d.n("listed")
    criterion = RegionSays.CRITERION_REGIONS(regions=_names([*spec.primary, *spec.failover]))
    details: dict[str, Any] = {
        "calls": calls,
        "unknown_region_calls": calls - known,
        "outside_list_calls": known - listed,
        "outside_list_regions": d.tops.get("outside", {}),
    }
    empty = _empty(calls, known)
    if empty is not None:
        return _make(
            ctx, d, "regions", empty[0], None, "%", criterion, 0, known, (), [empty[1]], details
        )
    notes: list[Message] = []
    if calls > known:
        notes.append(RegionSays.UNRECORDED(n=calls - known))
    verdict = Verdict.BREACHED if listed < known else Verdict.MET
    examples = d.examples.get("outside", ()) if verdict is Verdict.BREACHED else ()
    observed = 100.0 * listed / known
    return _make(
        ctx,
        d,
        "regions",
        verdict,
        observed,
        "%",
        criterion,
        listed,
        known,
        examples,
        notes,
        details,
    )


_ROUTING_CRITERION = {
    RoutingPermission.NEVER: RegionSays.ROUTING_NEVER,
    RoutingPermission.PEAK_ONLY: RegionSays.ROUTING_PEAK_ONLY,
    RoutingPermission.ALWAYS: RegionSays.ROUTING_ALWAYS,
}


def _routing_notes(ctx: CheckContext, events: int) -> list[Message]:
    routing = ctx.contract.routing
    if routing is None:
        return [RegionSays.NO_ROUTING_SECTION(), RegionSays.WHO_DECIDED()]
    notes = []
    if routing.decided_by is not None:
        notes.append(RegionSays.WHO_DECIDES(decided_by=str(routing.decided_by)))
    else:
        notes.append(RegionSays.WHO_DECIDED())
    if routing.notice_minutes is not None:
        notes.append(RegionSays.NOTICE())
    if events and not routing.data_may_move:
        notes.append(RegionSays.DATA_MOVED(n=events))
    return notes


def _routing_result(ctx: CheckContext, d: _Window) -> TermResult:
    routing = ctx.contract.routing
    perm = routing.cross_region if routing is not None else RoutingPermission.NEVER
    calls, known, events = d.n("calls"), d.n("known"), d.n("routed")
    bad, undecided = d.n("route_bad"), d.n("route_undecided")
    criterion = _ROUTING_CRITERION[perm]()
    details: dict[str, Any] = {
        "permission": str(perm),
        "routing_events": events,
        "routing_events_at_peak": d.n("routed_at_peak"),
        "disallowed_events": bad,
        "undecided_events": undecided,
        "failover_regions": d.tops.get("routed", {}),
    }
    notes = _routing_notes(ctx, events)
    empty = _empty(calls, known)
    if empty is not None:
        return _make(
            ctx,
            d,
            "routing",
            empty[0],
            None,
            "calls",
            criterion,
            0,
            known,
            (),
            [empty[1], *notes],
            details,
        )
    if bad:
        return _make(
            ctx,
            d,
            "routing",
            Verdict.BREACHED,
            float(bad),
            "calls",
            criterion,
            known - bad,
            known,
            d.examples.get("route_bad", ()),
            notes,
            details,
        )
    if undecided:
        notes.insert(0, RegionSays.NO_PEAK(n=undecided))
        return _make(
            ctx,
            d,
            "routing",
            Verdict.INDETERMINATE,
            None,
            "calls",
            criterion,
            known - undecided,
            known,
            d.examples.get("route_undecided", ()),
            notes,
            details,
        )
    return _make(
        ctx, d, "routing", Verdict.MET, 0.0, "calls", criterion, known, known, (), notes, details
    )


def _residency_result(ctx: CheckContext, spec: Regions, d: _Window) -> TermResult:
    res = spec.residency
    assert res is not None
    calls, known, ok, bad = d.n("calls"), d.n("known"), d.n("res_ok"), d.n("res_bad")
    unknown = known - ok - bad
    countries: Param = list(res.countries) or RegionSays.ANY_COUNTRY()
    where = (
        RegionSays.WHERE_PROVINCES(countries=countries, provinces=list(res.provinces))
        if res.provinces
        else RegionSays.WHERE(countries=countries)
    )
    criterion = RegionSays.CRITERION_RESIDENCY(where=where)
    details: dict[str, Any] = {
        "outside_residency_calls": bad,
        "unknown_jurisdiction_calls": unknown,
        "unknown_region_calls": calls - known,
        "outside_residency_regions": d.tops.get("res_bad", {}),
        "unknown_jurisdiction_regions": d.tops.get("res_unknown", {}),
    }
    empty = _empty(calls, known)
    if empty is not None:
        return _make(
            ctx, d, "residency", empty[0], None, "%", criterion, 0, known, (), [empty[1]], details
        )
    observed = 100.0 * ok / known
    if bad:
        return _make(
            ctx,
            d,
            "residency",
            Verdict.BREACHED,
            observed,
            "%",
            criterion,
            ok,
            known,
            d.examples.get("res_bad", ()),
            [],
            details,
        )
    if unknown:
        note = RegionSays.UNKNOWN_JURISDICTION(n=unknown)
        return _make(
            ctx,
            d,
            "residency",
            Verdict.INDETERMINATE,
            observed,
            "%",
            criterion,
            ok,
            known,
            d.examples.get("res_unknown", ()),
            [note],
            details,
        )
    return _make(
        ctx, d, "residency", Verdict.MET, observed, "%", criterion, ok, known, (), [], details
    )


@check("regions")
def regions(ctx: CheckContext) -> list[TermResult]:
    """Per month: region list, routing rights and residency (when the contract states it)."""
    spec = ctx.contract.regions
    if spec is None:
        return []
    windows = ctx.windows(Window.CALENDAR_MONTH)
    m = _marked(ctx, spec, windows)
    rows = by_window(
        m,
        calls=m.count(),
        known=m.known.sum(),
        listed=(m.known & m.listed).sum(),
        routed=m.routed.sum(),
        routed_at_peak=(m.routed & m.at_peak).sum(),
        route_bad=m.route_bad.sum(),
        route_undecided=m.route_undecided.sum(),
        res_ok=m.res_ok.sum(),
        res_bad=m.res_bad.sum(),
    )
    conds = {
        "outside": m.known & ~m.listed,
        "routed": m.routed,
        "res_bad": m.res_bad,
        "res_unknown": m.known & ~m.res_ok & ~m.res_bad,
    }
    example_conds = {
        "outside": conds["outside"],
        "route_bad": m.route_bad,
        "route_undecided": m.route_undecided,
    }
    if spec.residency is not None:
        example_conds |= {"res_bad": conds["res_bad"], "res_unknown": conds["res_unknown"]}
    else:
        del conds["res_bad"], conds["res_unknown"]
    examples = {k: examples_by_window(m, cond) for k, cond in example_conds.items()}
    tops = {k: top_by_window(m, cond, "reg") for k, cond in conds.items()}
    out: list[TermResult] = []
    for w in windows:
        d = _Window(
            w,
            rows.get(w.label, {}),
            {k: v.get(w.label, ()) for k, v in examples.items()},
            {k: v.get(w.label, {}) for k, v in tops.items()},
        )
        out.append(_regions_result(ctx, spec, d))
        out.append(_routing_result(ctx, d))
        if spec.residency is not None:
            out.append(_residency_result(ctx, spec, d))
    return out


__all__ = ["RegionSays", "regions"]
