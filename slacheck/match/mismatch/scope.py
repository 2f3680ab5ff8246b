"""Does the contract's scope (and each term's own) match any call the traces hold?"""

from __future__ import annotations

from collections.abc import Iterable

import ibis.expr.types as ir

from slacheck.contract.model import Contract, Scope
from slacheck.contract.review import Severity
from slacheck.match.mismatch.core import Code, Mismatch
from slacheck.messages import NC_, NPC_, MessageCode, Param
from slacheck.metering.derive import scope_match
from slacheck.results import ScopeMatch

__all__ = ["ScopeSaid", "find_scope"]


class ScopeSaid(MessageCode):
    """What the scope finder says."""

    CONTRACT_SCOPE = NC_("mismatch.scope.contract", "the contract's scope")
    TERM_SCOPE = NC_("mismatch.scope.term", "term {terms}'s scope")
    EVERY_VALUE = NC_("mismatch.scope.every_value", "every value")
    NO_CALLS_TITLE = NC_("mismatch.no_calls.title", "the traces hold no model calls")
    NO_CALLS_DETAIL = NC_(
        "mismatch.no_calls.detail",
        "No span is a model call (kind llm), so no call-level term can be checked; check the "
        "trace format and mapping (slacheck traces inspect).",
    )
    NO_MATCH_TITLE = NPC_(
        "mismatch.no_match.title",
        "{whose} does not match the {calls} model call",
        "{whose} matches none of the {calls} model calls",
        count="calls",
    )
    NO_MATCH_DETAIL = NC_(
        "mismatch.no_match.detail",
        "No call matches {whose} ({values}); every term would be 'no data'. Compare the "
        "scope's providers, models and endpoints with what the traces record (slacheck traces "
        "inspect).",
    )
    # one listed value no call has, by its field (metering.derive.scope_match: "model gpt-4o")
    VALUE_PROVIDER = NC_("mismatch.scope.value.provider", "provider {value}")
    VALUE_MODEL = NC_("mismatch.scope.value.model", "model {value}")
    VALUE_ENDPOINT = NC_("mismatch.scope.value.endpoint", "endpoint {value}")
    SOME_UNMATCHED_TITLE = NC_(
        "mismatch.some_unmatched.title", "{whose} names values no call has: {values}"
    )
    SOME_UNMATCHED_DETAIL = NPC_(
        "mismatch.some_unmatched.detail",
        "{matched} of {calls} call is in scope, but {values} match no call: a misspelling, or "
        "traffic the traces do not hold.",
        "{matched} of {calls} calls are in scope, but {values} match no call: a misspelling, or "
        "traffic the traces do not hold.",
        count="calls",
    )


def find_scope(
    contract: Contract, c: ir.Table, contract_match: ScopeMatch | None = None
) -> Iterable[Mismatch]:
    """The contract's scope (and each term's own) against the calls the traces hold.

    ``contract_match``: ``scope_match`` of the contract's own scope over ``c``, when the caller
    has it (the field check states it too): not computed again."""
    scopes: dict[str, tuple[Scope, list[str]]] = {
        contract.scope.model_dump_json(): (contract.scope, [])
    }
    for term in contract.latency:
        if term.scope is not None:
            scopes.setdefault(term.scope.model_dump_json(), (term.scope, []))[1].append(term.id)
    for scope, term_ids in scopes.values():
        sm = (
            contract_match
            if contract_match is not None and scope is contract.scope
            else scope_match(c, scope, contract.readings.model_scope)
        )
        who = ", ".join(term_ids) if term_ids else None
        whose = ScopeSaid.TERM_SCOPE(terms=term_ids) if who else ScopeSaid.CONTRACT_SCOPE()
        values: list[Param] = [_value(v) for v in sm.unmatched_values]
        numbers = {"calls": sm.calls, "matched": sm.matched, "unmatched": list(sm.unmatched_values)}
        if sm.calls == 0:
            yield Mismatch(
                Code.SCOPE_UNMATCHED,
                Severity.HIGH,
                who,
                ScopeSaid.NO_CALLS_TITLE(),
                ScopeSaid.NO_CALLS_DETAIL(),
                numbers,
            )
            return
        if sm.matched == 0:
            yield Mismatch(
                Code.SCOPE_UNMATCHED,
                Severity.HIGH,
                who,
                ScopeSaid.NO_MATCH_TITLE(whose=whose, calls=sm.calls),
                ScopeSaid.NO_MATCH_DETAIL(whose=whose, values=values or ScopeSaid.EVERY_VALUE()),
                numbers,
            )
        elif sm.unmatched_values:
            yield Mismatch(
                Code.SCOPE_UNMATCHED,
                Severity.MEDIUM,
                who,
                ScopeSaid.SOME_UNMATCHED_TITLE(whose=whose, values=values),
                ScopeSaid.SOME_UNMATCHED_DETAIL(matched=sm.matched, calls=sm.calls, values=values),
                numbers,
            )


def _value(unmatched: str) -> Param:
    """An unmatched scope value ("model gpt-4o") said by its field, in the reader's language."""
    field, _, value = unmatched.partition(" ")
    said = {
        "provider": ScopeSaid.VALUE_PROVIDER,
        "model": ScopeSaid.VALUE_MODEL,
        "endpoint": ScopeSaid.VALUE_ENDPOINT,
    }.get(field)
    return unmatched if said is None else said(value=value)
