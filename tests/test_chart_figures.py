"""Charts are drawn from the figures the JSON reports, against what each criterion compares."""

from __future__ import annotations

import datetime as dt
import math
import re
from importlib import resources

import pytest

from slacheck.checks.latency import check_term, period_values
from slacheck.contract.load import load_contract_text
from slacheck.contract.model import Contract, OccurrenceObjective, TimeSliceObjective
from slacheck.evaluation import evaluate
from slacheck.metering.context import CheckContext
from slacheck.prepare import prepare_report
from slacheck.render import charts
from slacheck.render.documents import monthly_points
from slacheck.render.format import Formatter
from slacheck.render.inputs import ReportInputs
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces


@pytest.fixture(scope="module")
def demo_contract() -> Contract:
    text = resources.files("slacheck.contract").joinpath("starters/demo.yaml").read_text("utf-8")
    return load_contract_text(text, "demo.yaml")


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Traces:
    path = tmp_path_factory.mktemp("charts") / "traffic.parquet"
    start = dt.datetime(2026, 6, 30, 16, tzinfo=dt.UTC)
    write(generate(TrafficProfile(tasks=600, days=31, seed=3, start=start)), path, "parquet")
    return ingest([path])


@pytest.fixture(scope="module")
def inputs(demo_contract: Contract, traces: Traces) -> ReportInputs:
    return prepare_report(
        demo_contract,
        traces,
        period="2026-Q3",
        evaluation=evaluate(demo_contract, traces, period="2026-Q3"),
    )


def _json_terms(inputs: ReportInputs) -> dict[tuple[str, str], dict[str, object]]:
    return {(t["id"], t["window"]): t for t in inputs.evaluation.to_dict()["terms"]}


def test_monthly_chart_compares_what_the_criterion_compares(
    demo_contract: Contract, inputs: ReportInputs
) -> None:
    reported = _json_terms(inputs)
    terms = {t.id: t for t in demo_contract.latency}
    points = monthly_points(demo_contract, inputs.evaluation.results)
    assert {(p.term_id, p.window) for p in points} == {k for k in reported if k[0] in terms}
    fmt = Formatter("en", demo_contract.zone)
    windows = sorted({p.window for p in points})
    svg = charts.monthly_compliance(points, windows, fmt)
    labels = re.findall(r">(\d+(?:\.\d+)?)%<", svg.replace("\n", ""))
    checked = 0
    for p in points:
        t = reported[(p.term_id, p.window)]
        assert p.observed == t["observed"]  # the very figure the JSON reports
        if p.observed is None:
            continue
        obj = terms[p.term_id].objective
        if isinstance(obj, TimeSliceObjective):
            # a share of slices against the share required — never against tokens/s
            assert t["unit"] == "% of slices"
            assert p.target == obj.slices_passing_percent and not p.at_most
        else:
            assert p.target == obj.threshold
        share = 100.0 * float(p.observed) / p.target
        assert p.share == pytest.approx(share)
        assert charts.share_label(share) in (f"{x}%" for x in labels), (p, labels)
        checked += 1
    assert checked


def test_time_slice_bar_is_near_its_share(demo_contract: Contract, inputs: ReportInputs) -> None:
    tps = [
        p for p in monthly_points(demo_contract, inputs.evaluation.results) if p.term_id == "L4-tps"
    ]
    for p in tps:
        if p.share is not None:
            assert p.share <= 100.0 / 0.99 + 1e-9  # at most 100 % of slices ÷ 99 %


def test_speed_histogram_marks_a_lower_bound(inputs: ReportInputs) -> None:
    fmt = Formatter("en", inputs.contract.zone)
    for d in inputs.distributions:
        svg = charts.latency_distribution(d, fmt)
        if d.unit == "tokens/s":
            assert not d.at_most and d.monthly == ()
            assert "upper bound" not in svg
            assert "tokens/s" in svg
            if d.bound == "mixed":  # generation speed where recorded, else its lower bound
                assert "a bound where not recorded" in svg
            elif d.bound is not None:
                assert d.bound == "lower" and "lower bound" in svg
        elif d.bound == "mixed":  # each call's own figure where recorded, else a later point's
            assert "a bound where not recorded" in svg and "upper bound" not in svg
        elif d.bound is not None:
            assert d.bound == "upper" and "upper bound" in svg


def test_every_chart_axis_names_its_unit(inputs: ReportInputs) -> None:
    fmt = Formatter("en", inputs.contract.zone)
    monthly = charts.monthly_compliance(
        monthly_points(inputs.contract, inputs.evaluation.results), ["2026-07"], fmt
    )
    assert "observed ÷ threshold (%)" in monthly and "calendar month" in monthly
    for d in inputs.distributions:
        svg = charts.latency_distribution(d, fmt)
        assert ("tasks (n =" in svg) or ("calls (n =" in svg)


def test_a_distribution_holds_the_figures_its_window_counts(
    demo_contract: Contract, traces: Traces
) -> None:
    # a chart's figures over one window are the check's units for that window: as many as it
    # counts, read at the point it reports, with its nearest-rank value at rank k
    ctx = CheckContext(demo_contract, traces)
    compared = 0
    for term in demo_contract.latency:
        obj = term.objective
        for window, result in zip(ctx.windows(term.window), check_term(ctx, term), strict=True):
            assert result.window == window.label
            figures = period_values(ctx, term, window.start_us, window.end_us)
            if figures.values.size == 0:
                assert result.observed is None
                continue
            assert figures.point.name == result.measured_at
            assert list(figures.values) == sorted(figures.values)
            if not isinstance(obj, OccurrenceObjective) or result.observed is None:
                continue
            assert figures.values.size == result.total
            k = math.ceil(obj.percentile / 100 * result.total)
            assert figures.values[k - 1] == result.observed
            compared += 1
    assert compared


@pytest.mark.parametrize(
    ("share", "label"),
    [(118.4, "118%"), (100.0, "100%"), (100.2, "100.2%"), (99.96, "99.96%"), (99.4, "99%")],
)
def test_a_bar_that_is_not_the_threshold_is_never_labelled_100(share: float, label: str) -> None:
    """A breach by 0.2 % is not "100%" on a bar beside the threshold's 100 % line."""
    assert charts.share_label(share) == label
