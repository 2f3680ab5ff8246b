"""slacheck: check AI-inference SLA contracts against your own agent traces.

The public API, one function per stage — load, ingest, evaluate, prepare, render::

    contract = load_contract("contract.yaml")       # ContractInvalid on bad input
    traces = ingest(["traces.json"])                  # TraceInputError on bad input
    result = evaluate(contract, traces, period="2026-Q3")
    inputs = prepare_report(contract, traces, period="2026-Q3", evaluation=result)
    pdf = render_report(inputs, lang="zh", fmt=DocFormat.PDF)

Names are imported on first use, so the command line starts without loading the engines; type
checkers see each name's own type (the imports below).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from slacheck.budget import analyse as analyse_budget
    from slacheck.contract.load import load_contract, load_contract_text
    from slacheck.contract.model import Contract
    from slacheck.contract.review import review
    from slacheck.errors import (
        ContractInvalid,
        InputError,
        Problem,
        Reason,
        SlacheckError,
        TraceInputError,
        UsageError,
    )
    from slacheck.evaluation import evaluate
    from slacheck.match.fields import FieldCheck, check_fields
    from slacheck.messages import Message, MessageCode
    from slacheck.messages import render as render_message
    from slacheck.prepare import prepare_accept, prepare_claim, prepare_report
    from slacheck.render.claim import ClaimPack, render_letter
    from slacheck.render.documents import DocFormat, render_accept, render_draft, render_report
    from slacheck.render.inputs import AcceptInputs, ReportInputs
    from slacheck.render.junit import to_junit
    from slacheck.results import Evaluation
    from slacheck.trace.ingest import ingest
    from slacheck.trace.traces import Traces
    from slacheck.verdict import TermResult, Verdict

from slacheck.version import __version__

#: public name → (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "AcceptInputs": ("slacheck.render.inputs", "AcceptInputs"),
    "ClaimPack": ("slacheck.render.claim", "ClaimPack"),
    "Contract": ("slacheck.contract.model", "Contract"),
    "DocFormat": ("slacheck.render.documents", "DocFormat"),
    "ContractInvalid": ("slacheck.errors", "ContractInvalid"),
    "Evaluation": ("slacheck.results", "Evaluation"),
    "FieldCheck": ("slacheck.match.fields", "FieldCheck"),
    "InputError": ("slacheck.errors", "InputError"),
    "Message": ("slacheck.messages", "Message"),
    "MessageCode": ("slacheck.messages", "MessageCode"),
    "Problem": ("slacheck.errors", "Problem"),
    "Reason": ("slacheck.errors", "Reason"),
    "ReportInputs": ("slacheck.render.inputs", "ReportInputs"),
    "SlacheckError": ("slacheck.errors", "SlacheckError"),
    "TermResult": ("slacheck.verdict", "TermResult"),
    "TraceInputError": ("slacheck.errors", "TraceInputError"),
    "Traces": ("slacheck.trace.traces", "Traces"),
    "UsageError": ("slacheck.errors", "UsageError"),
    "Verdict": ("slacheck.verdict", "Verdict"),
    "analyse_budget": ("slacheck.budget", "analyse"),
    "check_fields": ("slacheck.match.fields", "check_fields"),
    "evaluate": ("slacheck.evaluation", "evaluate"),
    "ingest": ("slacheck.trace.ingest", "ingest"),
    "load_contract": ("slacheck.contract.load", "load_contract"),
    "load_contract_text": ("slacheck.contract.load", "load_contract_text"),
    "prepare_accept": ("slacheck.prepare", "prepare_accept"),
    "prepare_claim": ("slacheck.prepare", "prepare_claim"),
    "prepare_report": ("slacheck.prepare", "prepare_report"),
    "render_accept": ("slacheck.render.documents", "render_accept"),
    "render_draft": ("slacheck.render.documents", "render_draft"),
    "render_letter": ("slacheck.render.claim", "render_letter"),
    "render_message": ("slacheck.messages", "render"),
    "render_report": ("slacheck.render.documents", "render_report"),
    "review": ("slacheck.contract.review", "review"),
    "to_junit": ("slacheck.render.junit", "to_junit"),
}

__all__ = [
    "AcceptInputs",
    "ClaimPack",
    "Contract",
    "ContractInvalid",
    "DocFormat",
    "Evaluation",
    "FieldCheck",
    "InputError",
    "Message",
    "MessageCode",
    "Problem",
    "Reason",
    "ReportInputs",
    "SlacheckError",
    "TermResult",
    "TraceInputError",
    "Traces",
    "UsageError",
    "Verdict",
    "__version__",
    "analyse_budget",
    "check_fields",
    "evaluate",
    "ingest",
    "load_contract",
    "load_contract_text",
    "prepare_accept",
    "prepare_claim",
    "prepare_report",
    "render_accept",
    "render_draft",
    "render_letter",
    "render_message",
    "render_report",
    "review",
    "to_junit",
]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'slacheck' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
