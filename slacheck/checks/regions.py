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
from slacheck.metering.calls import region_roles
from slacheck.metering.context import CheckContext
from slacheck.metering.derive import region_key
from slacheck.metering.peak import at_peak_expr
from slacheck.metering.windowed import as_count, scoped_calls
from slacheck.verdict import MAX_EXAMPLES, TermKind, TermResult, Verdict
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


@dataclass(frozen=True)
class _Reading:
    """What the contract makes of a region key (``names.region_key``) and a call's peak minute:
    the flags every count, top list and example below is read from, decided in Python once per
    distinct (region key, at peak) of the grouped pass, never per call."""

    primary: frozenset[str]
    failover: frozenset[str]  # failover only (a region listed both ways is primary)
    allowed: frozenset[str]  # residency: the jurisdiction is within the limits
    denied: frozenset[str]  # residency: outside them (the stricter answer of a region twice)
    permission: RoutingPermission
    has_peak: bool

    @classmethod
    def of(cls, ctx: CheckContext, spec: Regions) -> _Reading:
        primary, failover = region_roles(ctx.contract)
        answers = [
            (region_key(r.name), region_allowed_by_residency(r, spec.residency))
            for r in [*spec.primary, *spec.failover]
        ]
        denied = {n for n, ok in answers if ok is False}
        allowed = {n for n, ok in answers if ok is True} - denied
        routing = ctx.contract.routing
        return cls(
            frozenset(primary),
            frozenset(failover),
            frozenset(allowed),
            frozenset(denied),
            routing.cross_region if routing is not None else RoutingPermission.NEVER,
            ctx.contract.peak is not None,
        )

    def flags(self, reg: str | None, at_peak: bool) -> dict[str, bool]:
        """The flags of a call served in ``reg`` (None: unknown), at a peak minute or not."""
        known = reg is not None
        listed = reg in self.primary or reg in self.failover
        routed = reg in self.failover
        # a routing event there would be allowed; None when that cannot be decided
        allowed_route: bool | None = {
            RoutingPermission.ALWAYS: True,
            RoutingPermission.NEVER: False,
        }.get(self.permission, at_peak if self.has_peak else None)
        res_ok, res_bad = reg in self.allowed, reg in self.denied
        return {
            "calls": True,
            "known": known,
            "listed": known and listed,
            "routed": routed,
            "routed_at_peak": routed and at_peak,
            "route_bad": routed and allowed_route is False,
            "route_undecided": routed and allowed_route is None,
            "res_ok": res_ok,
            "res_bad": res_bad,
            # the conditions the top lists and examples are of
            "outside": known and not listed,
            "res_unknown": known and not res_ok and not res_bad,
        }


#: the counts a window states, and the conditions its top lists and examples are drawn from
_COUNTS = (
    "calls",
    "known",
    "listed",
    "routed",
    "routed_at_peak",
    "route_bad",
    "route_undecided",
    "res_ok",
    "res_bad",
)
_TOPS = ("outside", "routed", "res_bad", "res_unknown")
_EXAMPLES = ("outside", "route_bad", "route_undecided", "res_bad", "res_unknown")
_TOP_N = 10


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
    """Per month: region list, routing rights and residency (when the contract states it).

    One grouped pass over the in-scope calls (per window, region key and peak minute or not)
    gives every count and top list; one more, over the calls of the few region keys an example
    is needed from, gives every example; the rest is read in Python from those small tables."""
    spec = ctx.contract.regions
    if spec is None:
        return []
    windows = ctx.windows(Window.CALENDAR_MONTH)
    reading = _Reading.of(ctx, spec)
    c = scoped_calls(ctx, windows)
    c = c.select("window", "task_id", reg=c.region_key, at_peak=at_peak_expr(ctx, c))
    groups = c.group_by(["window", "reg", "at_peak"]).aggregate(n=c.count())
    flagged = [
        (str(r["window"]), r["reg"], bool(r["at_peak"]), int(r["n"]))
        for r in groups.to_pyarrow().to_pylist()
    ]
    flags = [reading.flags(reg, p) for _, reg, p, _ in flagged]
    rows: dict[str, dict[str, Any]] = {}
    tops: dict[str, dict[str, dict[str, int]]] = {}
    for (label, reg, _, n), f in zip(flagged, flags, strict=True):
        row = rows.setdefault(label, dict.fromkeys(_COUNTS, 0))
        for k in _COUNTS:
            row[k] += n if f[k] else 0
        for k in _TOPS:
            if f[k]:
                per = tops.setdefault(k, {}).setdefault(label, {})
                per[str(reg)] = per.get(str(reg), 0) + n
    kinds = _EXAMPLES if spec.residency is not None else _EXAMPLES[:3]
    examples = _examples(
        c, [(lb, reg, p, f) for (lb, reg, p, _), f in zip(flagged, flags, strict=True)], kinds
    )
    out: list[TermResult] = []
    for w in windows:
        d = _Window(
            w,
            rows.get(w.label, {}),
            {k: examples.get((k, w.label), ()) for k in kinds},
            {k: _top(tops.get(k, {}).get(w.label, {})) for k in _TOPS},
        )
        out.append(_regions_result(ctx, spec, d))
        out.append(_routing_result(ctx, d))
        if spec.residency is not None:
            out.append(_residency_result(ctx, spec, d))
    return out


def _top(counts: dict[str, int]) -> dict[str, int]:
    """The ``_TOP_N`` most frequent region keys, most calls first, then by key."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return dict(ranked[:_TOP_N])


def _examples(
    c: ir.Table,
    flagged: list[tuple[str, str | None, bool, dict[str, bool]]],
    kinds: tuple[str, ...],
) -> dict[tuple[str, str], tuple[str, ...]]:
    """A few task ids per example kind and window, lowest ids first: one query for the first
    few distinct ids of each (window, region key, peak minute) group a needed kind holds in
    (the first ids of a union of groups are among each group's first), none when no window
    has a call of such a kind."""
    keys = sorted({reg for _, reg, _, f in flagged if reg is not None and any(f[k] for k in kinds)})
    if not keys:
        return {}
    hits = c.filter(c.reg.isin(keys)).select("window", "reg", "at_peak", "task_id").distinct()
    order = ibis.window(group_by=[hits.window, hits.reg, hits.at_peak], order_by=hits.task_id)
    ranked = hits.mutate(_i=ibis.row_number().over(order))
    first = ranked.filter(ranked._i < MAX_EXAMPLES).select("window", "reg", "at_peak", "task_id")
    ids: dict[tuple[str, str | None, bool], list[str | None]] = {}
    for r in first.to_pyarrow().to_pylist():
        ids.setdefault((str(r["window"]), r["reg"], bool(r["at_peak"])), []).append(r["task_id"])
    out: dict[tuple[str, str], set[str | None]] = {}
    for w, reg, p, f in flagged:
        for k in kinds:
            if f[k]:
                out.setdefault((k, w), set()).update(ids.get((w, reg, p), []))
    return {
        key: tuple(str(t) for t in sorted(found, key=lambda t: (t is None, t or ""))[:MAX_EXAMPLES])
        for key, found in out.items()
    }


__all__ = ["RegionSays", "regions"]
