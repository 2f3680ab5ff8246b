"""slacheck: check AI-inference SLA contracts against your own agent traces.

The public API, one function per stage::

    contract = load_contract("contract.yaml")       # ContractInvalid on bad input
    traces = ingest(["traces.json"])                  # TraceInputError on bad input
    fields = check_fields(contract, traces)           # the eight-item field check
    result = evaluate(contract, traces, period="2026-Q3")

Names are imported on first use, so the command line starts without loading the engines.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name → (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "Contract": ("slacheck.contract.model", "Contract"),
    "ContractInvalid": ("slacheck.errors", "ContractInvalid"),
    "Evaluation": ("slacheck.evaluate", "Evaluation"),
    "FieldCheck": ("slacheck.match.fields", "FieldCheck"),
    "InputError": ("slacheck.errors", "InputError"),
    "Message": ("slacheck.messages", "Message"),
    "MessageCode": ("slacheck.messages", "MessageCode"),
    "Problem": ("slacheck.errors", "Problem"),
    "Reason": ("slacheck.errors", "Reason"),
    "SlacheckError": ("slacheck.errors", "SlacheckError"),
    "TermResult": ("slacheck.verdict", "TermResult"),
    "TraceInputError": ("slacheck.errors", "TraceInputError"),
    "Traces": ("slacheck.trace.traces", "Traces"),
    "UsageError": ("slacheck.errors", "UsageError"),
    "Verdict": ("slacheck.verdict", "Verdict"),
    "analyse_budget": ("slacheck.budget", "analyse"),
    "check_fields": ("slacheck.match.fields", "check_fields"),
    "evaluate": ("slacheck.evaluate", "evaluate"),
    "ingest": ("slacheck.trace.ingest", "ingest"),
    "load_contract": ("slacheck.contract.load", "load_contract"),
    "load_contract_text": ("slacheck.contract.load", "load_contract_text"),
    "render_message": ("slacheck.messages", "render"),
    "review": ("slacheck.contract.review", "review"),
}

__all__ = ["__version__", *sorted(_EXPORTS)]


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
