"""The contract as OpenSLO v1 SLOs, for monitoring tools: what maps, and what was left out.

OpenSLO v1 (OpenSLO/OpenSLO, README.md, "SLO" and "Objectives" sections, spec version
``openslo/v1``): an SLO has ``metadata.name`` (DNS-1123, at most 63 characters), ``spec.service``,
an inline ``spec.indicator`` (``ratioMetric`` good/total or ``thresholdMetric``),
``spec.timeWindow`` (``duration`` shorthand, ``isRolling``, ``calendar``),
``spec.budgetingMethod`` (Occurrences | Timeslices | RatioTimeslices) and ``spec.objectives``
(``target`` in [0, 1); ``op``/``value`` for a threshold metric; ``timeSliceTarget`` and
``timeSliceWindow`` when budgeting by time slices).

What maps: availability and occurrence terms become ratio objectives (good calls / in-scope
calls); a time-slice term on a percentile becomes a time-slice objective whose slice is good
when the share of good calls in it reaches the percentile's share (p50 ≥ N ⇔ at least half the
calls ≥ N); one on ``mean`` or ``min`` becomes a threshold metric compared per slice. Calendar
months and quarters become calendar windows in the contract's zone. What does not map —
measurement point, exclusions, credits, residency, routing, rate-limit basis, readings — rides
along in ``slacheck.*`` annotations; peak, regions, routing and rate-limit terms have no SLO
and are listed as left out. Metric queries are placeholders naming the OpenTelemetry GenAI
metric that would serve: the monitoring side must write its own.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML

from slacheck.contract.model import (
    AtTheLimit,
    Contract,
    Direction,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    TimeSliceObjective,
    Window,
)
from slacheck.textsafe import visible

__all__ = ["API_VERSION", "OpenSloExport", "to_openslo"]

API_VERSION = "openslo/v1"

#: the OpenTelemetry GenAI metric nearest to each point (semantic-conventions gen-ai metrics)
_METRIC = {
    MeasurementPoint.SERVER_PROCESSING: "gen_ai.server.request.duration",
    MeasurementPoint.TIME_TO_FIRST_TOKEN: "gen_ai.server.time_to_first_token",
    MeasurementPoint.FULL_RESPONSE: "gen_ai.client.operation.duration",
    MeasurementPoint.TASK_END_TO_END: "invoke_agent span duration (no GenAI metric)",
    MeasurementPoint.OUTPUT_TOKENS_PER_SECOND: "gen_ai.server.time_per_output_token",
}
_WINDOW = {
    Window.CALENDAR_MONTH: ("1M", False),
    Window.CALENDAR_QUARTER: ("1Q", False),
    Window.ROLLING_30_DAYS: ("30d", True),
}
_PERCENTILE = re.compile(r"p(\d+)")


@dataclass(frozen=True, slots=True)
class OpenSloExport:
    """The SLO documents as YAML text, and the contract parts that have no SLO."""

    text: str
    documents: tuple[dict[str, Any], ...]
    left_out: tuple[str, ...]


def to_openslo(contract: Contract) -> OpenSloExport:
    """Every term that maps, as one OpenSLO v1 SLO document each."""
    docs: list[dict[str, Any]] = []
    for term in contract.latency:
        docs.append(_latency_slo(contract, term))
    if contract.availability is not None:
        docs.append(_availability_slo(contract))
    left_out = _left_out(contract)
    header = [f"# OpenSLO v1 SLOs exported by slacheck from contract {contract.contract.id}."]
    header.append("# Metric queries are placeholders: write your monitoring system's own.")
    header += [f"# left out: {what}" for what in left_out]
    buf = io.StringIO()
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.explicit_start = True
    yaml.dump_all(docs, buf)
    text = visible("\n".join(header) + "\n" + buf.getvalue())  # one rule: ``textsafe``
    return OpenSloExport(text, tuple(docs), tuple(left_out))


def _name(*parts: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    return slug[:63].rstrip("-") or "slo"


def _share(percent: float) -> float:
    return round(percent / 100, 10)


def _base(contract: Contract, term_id: str, description: str) -> dict[str, Any]:
    c = contract.contract
    duration, rolling = _WINDOW[_window(contract, term_id)]
    window: dict[str, Any] = {"duration": duration, "isRolling": rolling}
    if not rolling:
        window["calendar"] = {
            "startTime": f"{c.effective.start.isoformat()} 00:00:00",
            "timeZone": c.time_zone or "UTC",
        }
    return {
        "apiVersion": API_VERSION,
        "kind": "SLO",
        "metadata": {
            "name": _name(c.id, term_id),
            "displayName": f"{c.id} {term_id}",
            "annotations": _annotations(contract),
        },
        "spec": {
            "description": description[:1050],
            "service": _name(c.vendor),
            "timeWindow": [window],
        },
    }


def _window(contract: Contract, term_id: str) -> Window:
    for t in contract.latency:
        if t.id == term_id:
            return t.window
    assert contract.availability is not None
    return contract.availability.window


def _source(metric: str, selector: str, **extra: Any) -> dict[str, Any]:
    return {
        "metricSource": {
            "type": "slacheck",
            "spec": {"metric": metric, "select": selector, **extra},
        }
    }


def _latency_slo(contract: Contract, term: LatencyTerm) -> dict[str, Any]:
    slo = _base(contract, term.id, term.description or f"latency term {term.id}")
    metric = _METRIC[term.measurement_point]
    unit = (
        "tokens/s" if term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND else "ms"
    )
    o = term.objective
    op = _op(o.direction, contract.readings.at_the_limit)
    annotations = slo["metadata"]["annotations"]
    annotations["slacheck.measurement_point"] = str(term.measurement_point)
    if term.tokens_per_second_basis is not None:
        annotations["slacheck.tokens_per_second_basis"] = str(term.tokens_per_second_basis)
    if term.min_samples is not None:
        annotations["slacheck.min_samples"] = str(term.min_samples)
    if term.scope is not None:
        annotations["slacheck.term_scope"] = json.dumps(term.scope.model_dump(mode="json"))
    good_sel = f"in-scope calls with value {op} {o.threshold:g} {unit}"
    spec = slo["spec"]
    if isinstance(o, OccurrenceObjective):
        annotations["slacheck.percentile_method"] = str(o.method)
        spec["indicator"] = _ratio(term.id, metric, good_sel)
        spec["budgetingMethod"] = "Occurrences"
        spec["objectives"] = [
            {
                "displayName": f"p{o.percentile:g} {op} {o.threshold:g} {unit}",
                "target": _share(o.percentile),
            }
        ]
        return slo
    assert isinstance(o, TimeSliceObjective)
    annotations["slacheck.min_calls_per_slice"] = str(o.min_calls_per_slice)
    annotations["slacheck.slice_statistic"] = str(o.statistic)
    objective: dict[str, Any] = {
        "displayName": f"{o.slices_passing_percent:g} % of {o.slice_minutes}-minute slices with "
        f"{o.statistic} {op} {o.threshold:g} {unit}",
        "target": _share(o.slices_passing_percent),
        "timeSliceWindow": f"{o.slice_minutes}m",
    }
    spec["budgetingMethod"] = "Timeslices"
    pct = _PERCENTILE.fullmatch(str(o.statistic))
    if pct:
        # pX at most T ⇔ at least X % of the slice's calls at most T; pX at least N ⇔ at least
        # (100 − X) % of them at least N (nearest rank)
        x = float(pct.group(1))
        share = x if o.direction is Direction.AT_MOST else 100 - x
        spec["indicator"] = _ratio(term.id, metric, good_sel)
        objective["timeSliceTarget"] = _share(share)
    else:
        spec["indicator"] = {
            "metadata": {"name": _name(term.id, "sli")},
            "spec": {
                "thresholdMetric": _source(metric, f"{o.statistic} of in-scope calls per slice")
            },
        }
        objective |= {"op": op, "value": o.threshold, "timeSliceTarget": 1.0}
    spec["objectives"] = [objective]
    return slo


def _ratio(term_id: str, metric: str, good: str) -> dict[str, Any]:
    return {
        "metadata": {"name": _name(term_id, "sli")},
        "spec": {
            "ratioMetric": {
                "counter": True,
                "good": _source(metric, good),
                "total": _source(metric, "in-scope calls, exclusions applied"),
            }
        },
    }


def _op(direction: Direction, at_the_limit: AtTheLimit) -> str:
    within = at_the_limit is AtTheLimit.WITHIN
    if direction is Direction.AT_MOST:
        return "lte" if within else "lt"
    return "gte" if within else "gt"


def _availability_slo(contract: Contract) -> dict[str, Any]:
    a = contract.availability
    assert a is not None
    slo = _base(contract, "availability", f"availability of in-scope calls, {a.target_percent:g} %")
    annotations = slo["metadata"]["annotations"]
    annotations["slacheck.failures"] = json.dumps(a.failures.model_dump(mode="json"))
    if a.min_samples is not None:
        annotations["slacheck.min_samples"] = str(a.min_samples)
    metric = "gen_ai.client.operation.duration"
    slo["spec"] |= {
        "indicator": _ratio("availability", metric, "in-scope calls that did not fail"),
        "budgetingMethod": "Occurrences",
        "objectives": [
            {
                "displayName": f"availability ≥ {a.target_percent:g} %",
                "target": _share(a.target_percent),
            }
        ],
    }
    return slo


def _annotations(contract: Contract) -> dict[str, str]:
    """What OpenSLO has no field for, as strings (annotations are map[string]string)."""
    out = {
        "slacheck.contract": contract.contract.id,
        "slacheck.scope": _dump(contract.scope),
        "slacheck.exclusions": _dump(contract.exclusions),
    }
    for key, part in (
        ("slacheck.credits", contract.credits),
        ("slacheck.fees", contract.fees),
        ("slacheck.residency", contract.regions.residency if contract.regions else None),
        ("slacheck.regions", contract.regions),
        ("slacheck.routing", contract.routing),
        ("slacheck.rate_limit", contract.rate_limit),
        ("slacheck.peak", contract.peak),
    ):
        if part is not None:
            out[key] = _dump(part)
    out["slacheck.readings"] = _dump(contract.readings)
    return out


def _dump(model: Any) -> str:
    return json.dumps(model.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def _left_out(contract: Contract) -> list[str]:
    out = []
    if contract.regions is not None:
        out.append(
            "regions and residency: no SLO (carried in slacheck.regions, slacheck.residency)"
        )
    if contract.routing is not None:
        out.append("routing rights: no SLO (carried in slacheck.routing)")
    if contract.peak is not None:
        out.append("peak definition and degradation: no SLO (carried in slacheck.peak)")
    if contract.rate_limit is not None:
        out.append("rate-limit basis: no SLO (carried in slacheck.rate_limit)")
    if contract.credits is not None:
        out.append("service credits and claim deadline: no SLO (carried in slacheck.credits)")
    if contract.exclusions.maintenance or contract.exclusions.max_input_tokens:
        out.append("exclusions: the queries must apply them (carried in slacheck.exclusions)")
    if any(t.min_samples is not None for t in contract.latency):
        out.append("minimum sample counts: carried in slacheck.min_samples")
    return out
