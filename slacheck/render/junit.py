"""JUnit XML: one test case per term and window, so CI systems show breaches as failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from slacheck.messages import render
from slacheck.render.figure import apart, figure_of, limit_of
from slacheck.results import Evaluation, contract_terms
from slacheck.textsafe import xml_text
from slacheck.verdict import Verdict


def to_junit(evaluation: Evaluation, lang: str = "en") -> str:
    """One test case per result; criteria and notes in ``lang`` (the frame stays English)."""
    suite = ET.Element(
        "testsuite",
        name=f"slacheck {evaluation.contract.contract.id}",
        tests=str(len(evaluation.results)),
        failures=str(sum(r.verdict is Verdict.BREACHED for r in evaluation.results)),
        errors=str(
            sum(
                r.verdict in (Verdict.INDETERMINATE, Verdict.NOT_MEASURABLE)
                for r in evaluation.results
            )
        ),
        skipped=str(sum(r.verdict is Verdict.NO_DATA for r in evaluation.results)),
    )
    for r in evaluation.results:
        case = ET.SubElement(
            suite, "testcase", classname=f"{r.kind}.{r.term_id}", name=f"{r.term_id} {r.window}"
        )
        limit = limit_of(r, evaluation.contract)
        observed = (
            "—"
            if r.observed is None
            else apart(r.observed, limit, _significant(r.unit), 6, most=17)
        )
        if r.observed is not None:  # a bound or a figure at the limit says so
            said = figure_of(r, evaluation.contract).message(observed)
            observed = said if isinstance(said, str) else render(said, lang)
        text = (
            f"{r.verdict}: observed {observed}; criterion {render(r.criterion_message, lang)}; "
            f"{r.good}/{r.total}; examples: {', '.join(r.examples) or 'none'}"
        )
        if r.notes:
            text += "\n" + "\n".join(render(n, lang) for n in r.notes)
        if r.verdict is Verdict.BREACHED:
            ET.SubElement(
                case, "failure", message=f"{r.term_id} breached in {r.window}"
            ).text = text
        elif r.verdict in (Verdict.INDETERMINATE, Verdict.NOT_MEASURABLE):
            ET.SubElement(case, "error", message=f"{r.term_id} {r.verdict}").text = text
        elif r.verdict is Verdict.NO_DATA:
            ET.SubElement(case, "skipped", message=f"{r.term_id}: no data").text = text
        else:
            ET.SubElement(case, "system-out").text = text
    if evaluation.no_window is not None and not evaluation.results:
        # no window to check: each term is no data, and says why
        said = render(evaluation.no_window, lang)
        terms = contract_terms(evaluation.contract)
        suite.set("tests", str(len(terms)))
        suite.set("skipped", str(len(terms)))
        for term in terms:
            case = ET.SubElement(suite, "testcase", classname=term, name=f"{term} (no window)")
            ET.SubElement(case, "skipped", message=f"{term}: no data").text = said
    ET.indent(suite)
    # control characters and XML 1.0's forbidden ones written out: CI parses the file
    return xml_text(ET.tostring(suite, encoding="unicode", xml_declaration=True)) + "\n"


def _significant(unit: str) -> Callable[[float, int], str]:
    """A figure with ``d`` significant digits and ``unit``."""
    return lambda x, d: f"{x:.{d}g} {unit}"
