"""How a call ended: its status class, read by the rule of ``conventions.yaml``'s ``status``
section, once for the Python JSON readers (``classify``) and once as Ibis expressions for the
engine's reader and for legacy statuses (``findings_expr``, decided by ``Findings.decided``).
Both are generated from the same ``StatusRules``, and a property test holds them to the same
answer per span.

The order of the sources is documented in ``conventions.yaml``: a specific exception class
(error type, exception event, a class written in a message), then an HTTP status code (recorded,
the error type itself, or written in a message), then a generic class, then keywords; nothing
decides: ``unclassified``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from slacheck.trace.conventions import StatusTable, class_key, table
from slacheck.trace.schema import LEGACY_ERROR, Status, StatusSource

#: whitespace as every engine reads it (Python's ``\\s`` and ``str.strip`` know more of Unicode)
_SPACE = " \t\r\n"
_CODE = r"^[1-5][0-9][0-9]$"
_SQUASH = r"[ \t\r\n_.\-]"


@dataclass(frozen=True)
class StatusRules:
    """The ``status`` section, ready to apply: classes by key, split into specific and generic."""

    table: StatusTable
    specific: dict[str, Status]
    generic: dict[str, Status]

    @classmethod
    def of(cls, t: StatusTable) -> StatusRules:
        return cls(
            t,
            {r.key: r.status for r in t.classes if not r.generic},
            {r.key: r.status for r in t.classes if r.generic},
        )


@functools.cache
def rules() -> StatusRules:
    return StatusRules.of(table().status)


def _src(source: StatusSource, rule: str) -> str:
    return f"{source}:{rule}"


# -- Python ---------------------------------------------------------------------------------


def _key(name: str | None) -> str | None:
    if not name or not name.strip(_SPACE):
        return None
    return class_key(name.strip(_SPACE))


def classify(
    *,
    failed: bool,
    error_type: str | None,
    http_status: int | None,
    exception_type: str | None = None,
    exception_message: str | None = None,
    message: str | None = None,
    r: StatusRules | None = None,
) -> tuple[Status, str | None]:
    """A call's status class and what classified it (null for a call that did not fail)."""
    r = r or rules()
    error_type = error_type if error_type and error_type.strip(_SPACE) else None
    failed = failed or error_type is not None or (http_status is not None and http_status >= 400)
    if not failed:
        return Status.OK, None
    messages = [m.lstrip(_SPACE) for m in (exception_message, message) if m]
    candidates: list[tuple[str | None, StatusSource]] = [
        (_key(error_type), StatusSource.ERROR_TYPE),
        (_key(exception_type), StatusSource.EXCEPTION_TYPE),
    ]
    for text in messages:
        for pattern in r.table.class_patterns:
            found = re.search(pattern, text, re.ASCII)
            candidates.append((_key(found.group(1)) if found else None, StatusSource.MESSAGE))
    for key, source in candidates:
        if key is not None and key in r.specific:
            return r.specific[key], _src(source, "class")
    if http_status is not None and (by_http := r.table.http_status(http_status)) is not None:
        return by_http, _src(StatusSource.HTTP_STATUS, "code")
    if error_type is not None and re.search(_CODE, error_type.strip(_SPACE), re.ASCII):
        by_code = r.table.http_status(int(error_type.strip(_SPACE)))
        if by_code is not None:
            return by_code, _src(StatusSource.ERROR_TYPE, "code")
    for text in messages:
        low = text.lower()
        for pattern in r.table.code_patterns:
            found = re.search(pattern, low, re.ASCII)
            if found and (by_code := r.table.http_status(int(found.group(1)))) is not None:
                return by_code, _src(StatusSource.MESSAGE, "code")
    for key, source in candidates:
        if key is not None and key in r.generic:
            return r.generic[key], _src(source, "generic")
    texts: list[tuple[str | None, StatusSource]] = [
        (error_type, StatusSource.ERROR_TYPE),
        (exception_type, StatusSource.EXCEPTION_TYPE),
        *((m, StatusSource.MESSAGE) for m in messages),
    ]
    for keyword in r.table.keywords:
        for said, where in texts:
            if said and re.search(keyword.pattern, re.sub(_SQUASH, "", said.lower()), re.ASCII):
                return keyword.status, _src(where, "keyword")
    return Status.UNCLASSIFIED, str(StatusSource.FAILURE_ONLY)


#: an error class at the head of an error text: ``RateLimitError(`` or ``openai.APIError:``
_ERROR_CLASS = re.compile(r"([A-Za-z_][\w.]*)\s*[(:]")


def set_status(
    fields: dict[str, Any],
    *,
    failed: bool,
    message: str | None,
    exception: tuple[str | None, str | None] = (None, None),
) -> None:
    """Fill ``status`` and ``status_source`` (and ``error_type``, for a failed call without
    one, from its exception event's type or its message's class).

    One rule for every reader: the source's failure flag, error class, HTTP status, exception
    event (``exception``: its type and message) and messages.
    """
    exception_type, exception_message = exception
    status, source = classify(
        failed=failed,
        error_type=fields.get("error_type"),
        http_status=fields.get("http_status"),
        exception_type=exception_type,
        exception_message=exception_message,
        message=message,
    )
    if fields.get("error_type") is None and status is not Status.OK:
        fields["error_type"] = exception_type or error_class(message)
    fields["status"] = str(status)
    fields["status_source"] = source


def error_class(text: object) -> str | None:
    """A short error class from an error text: ``RateLimitError('...')`` → ``RateLimitError``;
    a short one-line message as it is; a long message without a class → None."""
    if not isinstance(text, str) or not text.strip():
        return None
    line = text.strip().splitlines()[0].strip()
    match = _ERROR_CLASS.match(line)
    if match:
        return match.group(1)
    return line if len(line) <= 100 else None


# -- the engine -------------------------------------------------------------------------------


def _blank_null(text: ir.StringValue) -> ir.StringValue:
    stripped = text.re_replace(r"^[ \t\r\n]+|[ \t\r\n]+$", "")
    return ibis.ifelse(stripped == "", ibis.null(dt.string), stripped)


def _key_expr(name: ir.StringValue) -> ir.StringValue:
    """``class_key`` in the engine: the last dotted part, lower case (null stays null)."""
    return name.re_extract(r"([^.]*)$", 1).lower()


def _lookup(key: ir.StringValue, mapping: dict[str, Status]) -> ir.StringValue:
    if not mapping:
        return ibis.null(dt.string)
    return key.substitute({k: str(v) for k, v in mapping.items()}, else_=ibis.null(dt.string))


def _http_expr(code: ir.IntegerValue, t: StatusTable) -> ir.StringValue:
    cases: list[tuple[ir.BooleanValue, ir.StringValue]] = []
    for rule in t.http:
        if rule.codes:
            hit = code.isin(list(rule.codes))
        else:
            hit = (code >= rule.from_) & (code <= rule.to)
        cases.append((hit.fill_null(False), ibis.literal(str(rule.status))))
    return ibis.cases(*cases, else_=ibis.null(dt.string))


def _extracted(text: ir.StringValue, pattern: str) -> ir.StringValue:
    found = text.re_extract(pattern, 1)
    return ibis.ifelse(found == "", ibis.null(dt.string), found)


@dataclass(frozen=True)
class Findings:
    """What ``classify`` looks at, as Ibis expressions: whether the call failed, and each rule's
    finding in the order the rules are tried (a status, null when the rule finds none) with
    the ``status_source`` it gives. ``decided`` makes them (status, status_source).

    A caller may compute the findings as columns first (a stage of its own) and decide over
    those: each finding is a lookup over the error texts, and the decision refers to each twice,
    so inlined they make statements of hundreds of kilobytes."""

    failed: ir.BooleanValue
    found: tuple[tuple[ir.StringValue, str], ...]

    def decided(self) -> tuple[ir.StringValue, ir.StringValue]:
        """(status, status_source): OK for a call that did not fail, else the first finding."""
        none = ibis.null(dt.string)
        # the first finding, each written once: as ``cases((v.notnull(), v), …)`` every finding
        # was written twice, and a finding holds the others' sub-expressions (the trimmed error
        # type, its class key), so the query grew to tens of kilobytes per use
        first = ibis.coalesce(
            *(value for value, _ in self.found), ibis.literal(str(Status.UNCLASSIFIED))
        )
        status = ibis.cases((~self.failed, ibis.literal(str(Status.OK))), else_=first)
        source = ibis.cases(
            (~self.failed, none),
            *((value.notnull(), ibis.literal(label)) for value, label in self.found),
            else_=ibis.literal(str(StatusSource.FAILURE_ONLY)),
        )
        return status, source


def findings_expr(
    *,
    failed: ir.BooleanValue,
    error_type: ir.StringValue,
    http_status: ir.IntegerValue,
    exception_type: ir.StringValue | None = None,
    exception_message: ir.StringValue | None = None,
    message: ir.StringValue | None = None,
    r: StatusRules | None = None,
) -> Findings:
    """``classify``'s findings as Ibis expressions (``Findings.decided`` decides)."""
    r = r or rules()
    t = r.table
    none = ibis.null(dt.string)
    error_type = _blank_null(error_type)
    exc_type = none if exception_type is None else _blank_null(exception_type)
    msgs = [
        m.re_replace(r"^[ \t\r\n]+", "").nullif("")
        for m in (exception_message, message)
        if m is not None
    ]
    failed = failed.fill_null(False) | error_type.notnull() | (http_status >= 400).fill_null(False)
    candidates: list[tuple[ir.StringValue, StatusSource]] = [
        (_key_expr(error_type), StatusSource.ERROR_TYPE),
        (_key_expr(exc_type), StatusSource.EXCEPTION_TYPE),
    ]
    for text in msgs:
        for pattern in t.class_patterns:
            found = _extracted(text, pattern)
            candidates.append(
                (_key_expr(found.re_replace(r"^[ \t\r\n]+|[ \t\r\n]+$", "")), StatusSource.MESSAGE)
            )
    cases: list[tuple[ir.StringValue, str]] = []
    for key, source in candidates:
        cases.append((_lookup(key, r.specific), _src(source, "class")))
    cases.append((_http_expr(http_status, t), _src(StatusSource.HTTP_STATUS, "code")))
    is_code = error_type.re_search(_CODE).fill_null(False)
    by_type = _http_expr(ibis.ifelse(is_code, error_type, none).cast("int64"), t)
    cases.append((by_type, _src(StatusSource.ERROR_TYPE, "code")))
    for text in msgs:
        low = text.lower()
        for pattern in t.code_patterns:
            by_msg = _http_expr(_extracted(low, pattern).cast("int64"), t)
            cases.append((by_msg, _src(StatusSource.MESSAGE, "code")))
    for key, source in candidates:
        cases.append((_lookup(key, r.generic), _src(source, "generic")))
    texts = [
        (error_type, StatusSource.ERROR_TYPE),
        (exc_type, StatusSource.EXCEPTION_TYPE),
        *((m, StatusSource.MESSAGE) for m in msgs),
    ]
    for keyword in t.keywords:
        for text, source in texts:
            hit = text.lower().re_replace(_SQUASH, "").re_search(keyword.pattern).fill_null(False)
            cases.append(
                (ibis.ifelse(hit, ibis.literal(str(keyword.status)), none), _src(source, "keyword"))
            )
    return Findings(failed, tuple(cases))


#: every status a canonical table may hold, the legacy one included
KNOWN = frozenset({*(str(s) for s in Status), LEGACY_ERROR})


def status_class_expr(
    status: ir.StringValue, http_status: ir.IntegerValue, error_type: ir.StringValue
) -> ir.StringValue:
    """The status class of a canonical row: its ``status`` when it is one of ``Status``; the
    legacy ``error`` (or any other failure word a mapping wrote) classified by its HTTP status
    and error type as a reader would, else ``unclassified``; null stays null (not recorded)."""
    return status_of(status, http_status, error_type)[0]


def status_of(
    status: ir.StringValue,
    http_status: ir.IntegerValue,
    error_type: ir.StringValue,
    status_source: ir.StringValue | None = None,
) -> tuple[ir.StringValue, ir.StringValue]:
    """``status_class_expr`` and what classified the row: its ``status_source`` as a reader
    wrote it, or for a legacy status ``legacy:`` and the source the rule found."""
    legacy, source = findings_expr(
        failed=ibis.literal(True), error_type=error_type, http_status=http_status
    ).decided()
    none = ibis.null(dt.string)
    current = status.isin([str(s) for s in Status])
    cls = ibis.cases((status.isnull(), none), (current, status), else_=legacy)
    recorded = none if status_source is None else status_source
    src = ibis.cases(
        (status.isnull(), none),
        (current, recorded),
        else_=ibis.literal(f"{StatusSource.LEGACY}:") + source,
    )
    return cls, src


__all__ = [
    "KNOWN",
    "Findings",
    "StatusRules",
    "classify",
    "error_class",
    "findings_expr",
    "rules",
    "set_status",
    "status_class_expr",
    "status_of",
]
