"""Peak load (SLA301–SLA303): how peak is recognised, what the vendor may do then, and whether
the calls it serves then stay in scope."""

from __future__ import annotations

from collections.abc import Iterator

from slacheck.contract.model import Contract
from slacheck.contract.review.core import Hit, Severity, rule
from slacheck.messages import NC_, MessageCode
from slacheck.names import model_base

__all__ = ["PeakSays"]


class PeakSays(MessageCode):
    """What the peak rules say."""

    SLA301_TITLE = NC_("SLA301.title", "The contract says nothing about peak load.")
    SLA301_WHY = NC_(
        "SLA301.why",
        "No peak section: how peak is recognised and what the vendor does then are unwritten; "
        "unwritten, the default at peak is usually the worst of the three (a smaller model, "
        "stale cache, or an unbounded queue). At 200 ms service, going from 50 % to 85 % "
        "utilisation moves the mean queue wait from 200 ms to 1.13 s per call.",
    )
    SLA301_FIX = NC_(
        "SLA301.fix",
        "Add peak.definition (request_rate, utilisation or busiest_minutes) and exactly one "
        "peak.degradation policy with its parameter (fallback_model, max_staleness_seconds or "
        "max_wait_ms).",
    )
    SLA302_TITLE = NC_("SLA302.title", "Peak is defined but no degradation policy is written.")
    SLA302_WHY = NC_(
        "SLA302.why",
        "Peak is defined ({definition}) but peak.degradation is unwritten: the vendor may "
        "switch model, serve cached answers or queue without limit, and usually the worst of "
        "the three.",
    )
    SLA302_FIX = NC_(
        "SLA302.fix",
        "Add exactly one of peak.degradation.smaller_model (fallback_model), cache "
        "(max_staleness_seconds) or queue (max_wait_ms).",
    )
    SLA303_TITLE = NC_(
        "SLA303.title", "The peak fallback model is outside the contract's model scope."
    )
    SLA303_WHY = NC_(
        "SLA303.why",
        "At peak the vendor may serve {fallback}, but scope.models covers only {models}: "
        "those calls fall outside every term.",
    )
    SLA303_FIX = NC_(
        "SLA303.fix",
        "Add {fallback} to scope.models, or state that fallback calls count against the terms.",
    )


@rule("SLA301", Severity.HIGH, title=PeakSays.SLA301_TITLE)
def peak_missing(contract: Contract) -> Iterator[Hit]:
    """The contract says nothing about peak load.

    Capacity is bought on average load; latency breaks at peak. Unwritten, the default at peak
    is usually the worst of the three policies (smaller model, cache, queue), chosen by the
    vendor without notice. Queueing theory: at 85 % utilisation the mean wait is 5.7 service
    times.
    """
    if contract.peak is not None:
        return
    yield Hit(("peak",), PeakSays.SLA301_WHY(), PeakSays.SLA301_FIX())


@rule("SLA302", Severity.HIGH, title=PeakSays.SLA302_TITLE)
def peak_without_degradation(contract: Contract) -> Iterator[Hit]:
    """Peak is defined but no degradation policy is written.

    Knowing when peak starts is of little use without what happens then: unwritten, the default
    at peak is usually the worst of smaller model, cache and queue.
    """
    peak = contract.peak
    if peak is None or peak.degradation is not None:
        return
    yield Hit(
        ("peak", "degradation"),
        PeakSays.SLA302_WHY(definition=str(peak.definition.kind)),
        PeakSays.SLA302_FIX(),
    )


@rule("SLA303", Severity.LOW, title=PeakSays.SLA303_TITLE)
def fallback_model_out_of_scope(contract: Contract) -> Iterator[Hit]:
    """The peak fallback model is outside the contract's model scope.

    Calls served by the fallback model at peak are then not covered by any term: the slowest
    hour of the month drops out of the figures exactly when it matters.
    """
    peak = contract.peak
    if peak is None or peak.degradation is None or peak.degradation.smaller_model is None:
        return
    models = contract.scope.models
    fallback = peak.degradation.smaller_model.fallback_model
    # the checks' rule (slacheck.names): a name covers its snapshots and aliases
    # (`gpt-4o` covers `gpt-4o-2024-08-06`, `gpt-4o-20240806`, `gpt-4o@20240806`, `gpt-4o-latest`)
    if not models or model_base(fallback) in {model_base(m) for m in models}:
        return
    yield Hit(
        ("peak", "degradation", "smaller_model", "fallback_model"),
        PeakSays.SLA303_WHY(fallback=fallback, models=list(models)),
        PeakSays.SLA303_FIX(fallback=fallback),
    )
