"""Is each term's contracted point in the trace: recorded, derivable, only at the client, and
for tokens/s, on a stated and measurable basis?"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from slacheck.contract.model import (
    Contract,
    LatencyTerm,
    MeasurementPoint,
    OccurrenceObjective,
    TokensPerSecondBasis,
)
from slacheck.contract.review import Severity
from slacheck.match.mismatch.core import Code, Mismatch, TermCoverage, UnitSaid
from slacheck.messages import NC_, NPC_, Message, MessageCode, Param

__all__ = ["PointSaid", "find_points"]


class PointSaid(MessageCode):
    """What the point finder says, and how it quotes a term's objective."""

    OBJECTIVE_MS = NC_("mismatch.objective.ms", "p{percentile} {op} {threshold} ms")
    OBJECTIVE_TPS = NC_("mismatch.objective.tps", "p{percentile} {op} {threshold} tokens/s")
    SLICES_MS = NC_(
        "mismatch.objective.slices_ms",
        "{statistic} per {minutes}-minute slice {op} {threshold} ms in {passing} % of slices",
    )
    SLICES_TPS = NC_(
        "mismatch.objective.slices_tps",
        "{statistic} per {minutes}-minute slice {op} {threshold} tokens/s in {passing} % of slices",
    )
    ONLY_MET_TITLE = NPC_(
        "mismatch.only_met_provable.title",
        "{term}: server processing is measured only at the client for {client} of {calls} call: "
        "only 'met' is provable",
        "{term}: server processing is measured only at the client for {client} of {calls} calls: "
        "only 'met' is provable",
        count="calls",
    )
    ONLY_MET_DETAIL = NC_(
        "mismatch.only_met_provable.detail",
        "The points nest: the client's full response ≥ the vendor's server processing. A "
        "client-side figure within the cap ({objective}) proves the cap met; a client figure "
        "beyond it proves nothing, so a breach can only be 'indeterminate — measured at a "
        "later point'. Record the vendor's processing time "
        "(http.response.header.openai-processing-ms) or the network time (slacheck.network_ms) "
        "to decide both ways.",
    )
    LACKS_TTFT = NC_(
        "mismatch.lacks.time_to_first_token",
        "time to first token (gen_ai.response.time_to_first_chunk; Langfuse "
        "completionStartTime; LangSmith first_token_time)",
    )
    LACKS_FULL_RESPONSE = NC_(
        "mismatch.lacks.full_response", "client duration (span start and end)"
    )
    LACKS_SERVER = NC_(
        "mismatch.lacks.server_processing",
        "server processing (http.response.header.openai-processing-ms)",
    )
    LACKS_TASK = NC_(
        "mismatch.lacks.task_end_to_end",
        "task time (an invoke_agent root span, or every span of the task)",
    )
    NOT_RECORDED_TITLE = NC_(
        "mismatch.point_not_recorded.title",
        "{term}: {point} is measurable for {measurable} of {n} in-scope {unit}",
    )
    NOT_RECORDED_DETAIL = NC_(
        "mismatch.point_not_recorded.detail",
        "The contract meters {point}; the traces lack {what} for {missing} of {n} in-scope "
        "{unit}. Those cannot count for or against the vendor.",
    )
    MEDIANS = NC_(
        "mismatch.tps.medians",
        " Medians: {whole:.1f} tokens/s over the whole request, {generation:.1f} after the "
        "first token.",
    )
    TPS_UNSTATED_TITLE = NC_(
        "mismatch.tps_basis_unstated.title",
        "{term}: the tokens/s basis is unstated; measured both ways",
    )
    TPS_UNSTATED_DETAIL = NPC_(
        "mismatch.tps_basis_unstated.detail",
        "The contract does not say whether output tokens/s divides by the whole request or only "
        "by the generation after the first token; the second is always faster, so the verdict can "
        "depend on the reading. Whole request: {whole} of {n} call measurable; after the first "
        "token: {generation} of {n}.{medians} State tokens_per_second_basis in the contract.",
        "The contract does not say whether output tokens/s divides by the whole request or only "
        "by the generation after the first token; the second is always faster, so the verdict can "
        "depend on the reading. Whole request: {whole} of {n} calls measurable; after the first "
        "token: {generation} of {n}.{medians} State tokens_per_second_basis in the contract.",
    )
    LACKS_OUTPUT_TOKENS = NC_(
        "mismatch.lacks.output_tokens", "output tokens (gen_ai.usage.output_tokens)"
    )
    LACKS_TOKENS_AND_TTFT = NC_(
        "mismatch.lacks.output_tokens_and_ttft",
        "output tokens and time to first token (gen_ai.usage.output_tokens, "
        "gen_ai.response.time_to_first_chunk)",
    )
    TPS_UNMEASURABLE_TITLE = NPC_(
        "mismatch.tps_basis_unmeasurable.title",
        "{term}: tokens/s {basis} is measurable for {measurable} of {n} call",
        "{term}: tokens/s {basis} is measurable for {measurable} of {n} calls",
    )
    TPS_UNMEASURABLE_DETAIL = NPC_(
        "mismatch.tps_basis_unmeasurable.detail",
        "The contract states the {basis} basis, which needs {lacks}; {missing} in-scope call "
        "lacks them. Whole-request readings exist for {whole} of the calls.{medians}",
        "The contract states the {basis} basis, which needs {lacks}; {missing} in-scope calls "
        "lack them. Whole-request readings exist for {whole} of the calls.{medians}",
        count="missing",
    )


def find_points(contract: Contract, coverage: Sequence[TermCoverage]) -> Iterable[Mismatch]:
    """Point not recorded; server cap measured at the client; tokens/s basis problems."""
    terms = {t.id: t for t in contract.latency}
    for cov in coverage:
        term = terms[cov.term_id]
        n = cov.in_scope
        if n == 0:
            continue  # nothing in scope: the scope finder says why
        missing = n - cov.measurable
        numbers = cov.to_dict()
        if cov.point is MeasurementPoint.SERVER_PROCESSING and cov.client_only:
            yield Mismatch(
                Code.ONLY_MET_PROVABLE,
                Severity.HIGH,
                term.id,
                PointSaid.ONLY_MET_TITLE(term=term.id, client=cov.client_only, calls=n),
                PointSaid.ONLY_MET_DETAIL(objective=_objective_text(term)),
                numbers,
            )
            continue
        if cov.point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
            yield from _tps(term, cov)
            continue
        if missing > 0:
            what = {
                MeasurementPoint.TIME_TO_FIRST_TOKEN: (PointSaid.LACKS_TTFT, UnitSaid.UNIT_CALLS),
                MeasurementPoint.FULL_RESPONSE: (
                    PointSaid.LACKS_FULL_RESPONSE,
                    UnitSaid.UNIT_CALLS,
                ),
                MeasurementPoint.SERVER_PROCESSING: (PointSaid.LACKS_SERVER, UnitSaid.UNIT_CALLS),
                MeasurementPoint.TASK_END_TO_END: (PointSaid.LACKS_TASK, UnitSaid.UNIT_TASKS),
            }[cov.point]
            point, unit = str(cov.point), what[1]()
            yield Mismatch(
                Code.POINT_NOT_RECORDED,
                Severity.HIGH if cov.measurable == 0 else Severity.MEDIUM,
                term.id,
                PointSaid.NOT_RECORDED_TITLE(
                    term=term.id, point=point, measurable=cov.measurable, n=n, unit=unit
                ),
                PointSaid.NOT_RECORDED_DETAIL(
                    point=point, what=what[0](), missing=missing, n=n, unit=unit
                ),
                numbers,
            )


def _tps(term: LatencyTerm, cov: TermCoverage) -> Iterable[Mismatch]:
    n = cov.in_scope
    whole, gen = cov.whole_request or 0, cov.after_first_token or 0
    mw, mg = cov.median_whole_request, cov.median_after_first_token
    medians: Param = (
        PointSaid.MEDIANS(whole=mw, generation=mg) if mw is not None and mg is not None else ""
    )
    if cov.basis_unstated:
        yield Mismatch(
            Code.TPS_BASIS_UNSTATED,
            Severity.HIGH,
            term.id,
            PointSaid.TPS_UNSTATED_TITLE(term=term.id),
            PointSaid.TPS_UNSTATED_DETAIL(whole=whole, n=n, generation=gen, medians=medians),
            cov.to_dict(),
        )
        return
    stated = cov.basis or TokensPerSecondBasis.WHOLE_REQUEST
    if cov.measurable < n:
        lacks = (
            PointSaid.LACKS_OUTPUT_TOKENS()
            if stated is TokensPerSecondBasis.WHOLE_REQUEST
            else PointSaid.LACKS_TOKENS_AND_TTFT()
        )
        yield Mismatch(
            Code.TPS_BASIS_UNMEASURABLE,
            Severity.HIGH if cov.measurable == 0 else Severity.MEDIUM,
            term.id,
            PointSaid.TPS_UNMEASURABLE_TITLE(
                term=term.id, basis=str(stated), measurable=cov.measurable, n=n
            ),
            PointSaid.TPS_UNMEASURABLE_DETAIL(
                basis=str(stated),
                lacks=lacks,
                missing=n - cov.measurable,
                whole=whole,
                medians=medians,
            ),
            cov.to_dict(),
        )


def _objective_text(term: LatencyTerm) -> Message:
    o = term.objective
    tps = term.measurement_point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND
    op = "≤" if o.direction == "at_most" else "≥"
    if isinstance(o, OccurrenceObjective):
        said = PointSaid.OBJECTIVE_TPS if tps else PointSaid.OBJECTIVE_MS
        return said(percentile=o.percentile, op=op, threshold=o.threshold)
    said = PointSaid.SLICES_TPS if tps else PointSaid.SLICES_MS
    return said(
        statistic=str(o.statistic),
        minutes=o.slice_minutes,
        op=op,
        threshold=o.threshold,
        passing=o.slices_passing_percent,
    )
