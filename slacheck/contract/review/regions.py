"""Regions, residency and routing (SLA201–SLA206): where a call may be served, and who says so."""

# Serving a call in a region sends its prompt there: the region list, the residency limits and
# the routing rights must agree (SLA201, SLA202), be written at all (SLA205, SLA206), and name
# who decides a move and with what notice (SLA203, SLA204).

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import (
    Contract,
    Region,
    Residency,
    RoutingPermission,
    region_allowed_by_residency,
)
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.contract.review.wording import num, task_steps
from slacheck.messages import NC_, Message, MessageCode, Param

__all__ = ["RegionSays"]


class RegionSays(MessageCode):
    """What the region and routing rules say, and how they name a region and a residency limit."""

    # a region and a residency limit, as the sentences below name them
    REGION_IN = NC_("review.region.in", "{region} ({country})")
    REGION_IN_PROVINCE = NC_("review.region.in_province", "{region} ({country}, {province})")
    RESIDENCY_COUNTRIES = NC_("review.residency.countries", "{countries}")
    RESIDENCY_PROVINCES = NC_("review.residency.provinces", "provinces {provinces}")
    RESIDENCY_BOTH = NC_("review.residency.both", "{countries}; provinces {provinces}")
    RESIDENCY_NONE = NC_("review.residency.none", "none")

    SLA201_TITLE = NC_("SLA201.title", "A region that may serve lies outside the residency limits.")
    SLA201_SERVES = NC_("SLA201.serves", "serves normally")
    SLA201_MAY_SERVE = NC_("SLA201.may_serve", "may serve when routing allows ({routing})")
    SLA201_WHY_MOVES = NC_(
        "SLA201.why.moves",
        "{region} {how}, but residency allows only {residency}. routing.data_may_move is "
        "true, so data may go there.",
    )
    SLA201_WHY_STAYS = NC_(
        "SLA201.why.stays",
        "{region} {how}, but residency allows only {residency}. data_may_move is false, yet "
        "serving a call there sends its prompt there.",
    )
    SLA201_FIX_PRIMARY = NC_(
        "SLA201.fix.primary",
        "Remove {region} from regions.primary or replace it with a region inside {residency}.",
    )
    SLA201_FIX_FAILOVER = NC_(
        "SLA201.fix.failover",
        "Remove {region} from regions.failover or replace it with a region inside "
        "{residency}; or set routing.cross_region: never.",
    )
    SLA202_TITLE = NC_(
        "SLA202.title",
        "Routing may use failover regions, but no residency limit is written.",
    )
    SLA202_WHY = NC_(
        "SLA202.why",
        "routing.cross_region is {routing}, so calls may be served in {places}, and no "
        "residency limit says whether your data may be processed there.",
    )
    SLA202_FIX = NC_(
        "SLA202.fix",
        "Add regions.residency (countries, and provinces if bound to one) listing where data "
        "may be processed, or set routing.cross_region: never.",
    )
    SLA203_TITLE = NC_(
        "SLA203.title", "Cross-region routing is allowed but nobody is named to decide it."
    )
    SLA203_WHY = NC_(
        "SLA203.why",
        "routing.cross_region is {routing} with decided_by unset, so in practice the vendor "
        "decides. At +200 ms a round trip, a task of {steps} gains {seconds} s when its calls "
        "are routed away.",
    )
    SLA203_FIX = NC_(
        "SLA203.fix",
        "Set routing.decided_by to customer or joint (or vendor, knowingly), with notice_minutes.",
    )
    SLA204_TITLE = NC_(
        "SLA204.title", "Calls may be routed to another region at any time, with no notice."
    )
    SLA204_WHY = NC_(
        "SLA204.why",
        "routing.cross_region is always and notice_minutes is unset: the vendor may route "
        "calls to another region at any time without telling you.",
    )
    SLA204_FIX = NC_(
        "SLA204.fix", "Add routing.notice_minutes (e.g. 15), or narrow cross_region to peak_only."
    )
    SLA205_TITLE = NC_("SLA205.title", "The contract lists no regions.")
    SLA205_WHY = NC_(
        "SLA205.why",
        "No regions section: calls may be served from any region. In the worked example, model "
        "calls crossing a region turn a 3.0 s task into 5.4 s; for a task of {steps} that is "
        "+{seconds} s at 200 ms a round trip.",
    )
    SLA205_FIX = NC_(
        "SLA205.fix",
        "Add regions.primary (names as traces report them in cloud.region, with "
        "jurisdiction), any failover regions, and regions.residency if data must stay in a "
        "country.",
    )
    SLA206_TITLE = NC_(
        "SLA206.title",
        "Failover regions are listed but no routing clause says when they may serve.",
    )
    SLA206_WHY = NC_(
        "SLA206.why",
        "regions.failover lists {places}, but no routing section says when calls may go "
        "there, who decides, or whether data may move.",
    )
    SLA206_FIX = NC_(
        "SLA206.fix",
        "Add routing with cross_region (never, peak_only or always), decided_by, data_may_move "
        "and notice_minutes.",
    )


def _routes(contract: Contract) -> bool:
    r = contract.routing
    return r is not None and r.cross_region is not RoutingPermission.NEVER


def _where(region: Region) -> Param:
    j = region.jurisdiction
    if j is None:
        return region.name
    if j.province:
        return RegionSays.REGION_IN_PROVINCE(
            region=region.name, country=j.country, province=j.province
        )
    return RegionSays.REGION_IN(region=region.name, country=j.country)


def _residency(res: Residency) -> Message:
    countries, provinces = list(res.countries), list(res.provinces)
    if countries and provinces:
        return RegionSays.RESIDENCY_BOTH(countries=countries, provinces=provinces)
    if provinces:
        return RegionSays.RESIDENCY_PROVINCES(provinces=provinces)
    if countries:
        return RegionSays.RESIDENCY_COUNTRIES(countries=countries)
    return RegionSays.RESIDENCY_NONE()


@rule("SLA201", Severity.HIGH, title=RegionSays.SLA201_TITLE)
def regions_outside_residency(contract: Contract) -> Iterator[Hit]:
    """A region that may serve lies outside the residency limits.

    Residency says where data may be processed; the region list and routing rights say where
    calls may be served. Serving a call in a region means sending its prompt there, so a
    primary region, or a failover region that routing allows, outside residency contradicts
    it, whatever `data_may_move` says. The vendor will read the contradiction in its favour.
    """
    regions = contract.regions
    if regions is None or regions.residency is None:
        return
    res = regions.residency
    routing = contract.routing
    serving: list[tuple[str, int, Region, Message]] = [
        ("primary", i, r, RegionSays.SLA201_SERVES()) for i, r in enumerate(regions.primary)
    ]
    if routing is not None and routing.cross_region is not RoutingPermission.NEVER:
        how = RegionSays.SLA201_MAY_SERVE(routing=str(routing.cross_region))
        serving += [("failover", i, r, how) for i, r in enumerate(regions.failover)]
    moves = routing is not None and routing.data_may_move
    for group, i, region, how in serving:
        if region_allowed_by_residency(region, res) is not False:
            continue
        why = RegionSays.SLA201_WHY_MOVES if moves else RegionSays.SLA201_WHY_STAYS
        fix = (
            RegionSays.SLA201_FIX_FAILOVER if group == "failover" else RegionSays.SLA201_FIX_PRIMARY
        )
        yield Hit(
            ("regions", group, i),
            why(region=_where(region), how=how, residency=_residency(res)),
            fix(region=region.name, residency=_residency(res)),
        )


@rule("SLA202", Severity.MEDIUM, title=RegionSays.SLA202_TITLE)
def failover_without_residency(contract: Contract) -> Iterator[Hit]:
    """Routing may use failover regions, but no residency limit is written.

    With routing allowed and no `regions.residency`, nothing in the contract stops request data
    being processed in whatever country the failover regions are in.
    """
    regions = contract.regions
    if regions is None or regions.residency is not None or not regions.failover:
        return
    if contract.routing is None or not _routes(contract):
        return
    yield Hit(
        ("regions", "residency"),
        RegionSays.SLA202_WHY(
            routing=str(contract.routing.cross_region),
            places=[_where(r) for r in regions.failover],
        ),
        RegionSays.SLA202_FIX(),
    )


@rule("SLA203", Severity.MEDIUM, title=RegionSays.SLA203_TITLE)
def routing_decider_unset(contract: Contract) -> Iterator[Hit]:
    """Cross-region routing is allowed but nobody is named to decide it.

    Unwritten, the vendor decides: it can move calls to a distant region at will, and each
    cross-region call adds a network round trip (+200 ms per step in the worked example).
    """
    r = contract.routing
    if r is None or r.cross_region is RoutingPermission.NEVER or r.decided_by is not None:
        return
    steps, how = task_steps(contract)
    yield Hit(
        ("routing", "decided_by"),
        RegionSays.SLA203_WHY(
            routing=str(r.cross_region), steps=how, seconds=num(round(steps * 0.2, 1))
        ),
        RegionSays.SLA203_FIX(),
    )


@rule("SLA204", Severity.LOW, title=RegionSays.SLA204_TITLE)
def routing_always_without_notice(contract: Contract) -> Iterator[Hit]:
    """Calls may be routed to another region at any time, with no notice.

    `cross_region: always` without `notice_minutes` lets the vendor move traffic silently: the
    customer sees only slower tasks and cannot tell a slow vendor from a distant data centre.
    """
    r = contract.routing
    if r is None or r.cross_region is not RoutingPermission.ALWAYS or r.notice_minutes is not None:
        return
    yield Hit(("routing", "notice_minutes"), RegionSays.SLA204_WHY(), RegionSays.SLA204_FIX())


@rule("SLA205", Severity.MEDIUM, title=RegionSays.SLA205_TITLE)
def regions_missing(contract: Contract) -> Iterator[Hit]:
    """The contract lists no regions.

    Without a region list the vendor may serve from anywhere: residency cannot be checked, and
    a distant region adds a round trip to every step of every task.
    """
    if contract.regions is not None:
        return
    steps, how = task_steps(contract)
    yield Hit(
        ("regions",),
        RegionSays.SLA205_WHY(steps=how, seconds=num(round(steps * 0.2, 1))),
        RegionSays.SLA205_FIX(),
    )


@rule("SLA206", Severity.MEDIUM, title=RegionSays.SLA206_TITLE)
def failover_without_routing(contract: Contract) -> Iterator[Hit]:
    """Failover regions are listed but no routing clause says when they may serve.

    Without `routing`, when calls may leave the primary regions, who decides and whether data
    may move are all unwritten.
    """
    regions = contract.regions
    if regions is None or not regions.failover or contract.routing is not None:
        return
    yield Hit(
        ("routing",),
        RegionSays.SLA206_WHY(places=[_where(r) for r in regions.failover]),
        RegionSays.SLA206_FIX(),
    )
