"""Read contract YAML with ruamel.yaml and turn every problem into a located, fixable message."""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from slacheck.contract.model import Contract, FieldError, nested_models
from slacheck.errors import MAX_PROBLEMS, ContractInvalid, Problem, Reason, changed_while_read
from slacheck.inputs import (
    MAX_DEPTH,
    MAX_SPEC_BYTES,
    YamlAliasBound,
    bounded_yaml,
    decode_utf8,
    depth_problem,
    read_bounded,
    reading,
    sha256_if_readable,
)

Loc = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class LoadedContract:
    """A validated contract with where it came from, so later findings can cite lines."""

    contract: Contract
    file: str
    raw: Any  # the ruamel round-trip document, which knows every node's line
    #: SHA-256 of the bytes parsed (what ``sha256sum`` printed of the file then); None for text
    sha256: str | None = None

    def position(self, loc: Loc) -> tuple[int | None, int | None]:
        """1-based (line, column) of the YAML node nearest to ``loc``."""
        return _position(self.raw, _yaml_loc(self.raw, loc), want_key=True)

    def field_line(self, loc: Loc) -> int:
        """The 1-based line that writes the field at ``loc``; 0 when the file leaves the field
        out (``position`` then gives the nearest enclosing field's line)."""
        kept = _yaml_loc(self.raw, loc)
        if not loc or not kept or kept[-1] != loc[-1]:
            return 0
        return self.position(loc)[0] or 0


def load_contract(path: str | Path) -> Contract:
    """Load and validate one contract file; raise ``ContractInvalid`` listing every problem."""
    return read_contract(path).contract


def read_contract(path: str | Path) -> LoadedContract:
    """Like ``load_contract``, keeping the source positions."""
    p = Path(path)
    with reading(p):
        data = read_bounded(p, ContractInvalid, what="contract file")
        loaded = read_contract_text(decode_utf8(data, p, ContractInvalid), str(p))
    return replace(loaded, sha256=hashlib.sha256(data).hexdigest())


def verify_contract_file(path: Path, sha256: str) -> None:
    """Raise ``ContractInvalid`` when the file at ``path`` no longer holds the bytes whose
    SHA-256 is ``sha256`` (those the contract was read from): a document stating that hash
    and verdicts from that contract would not match the file beside it."""
    if sha256_if_readable(path) != sha256:
        would = "the document would state terms and a SHA-256 the file no longer holds"
        fix = "run again once the contract file is saved"
        raise ContractInvalid([changed_while_read(str(path), would=would, fix=fix)])


def load_contract_text(text: str, filename: str = "<string>") -> Contract:
    """Validate contract YAML given as text; ``filename`` is used in messages."""
    return read_contract_text(text, filename).contract


def read_contract_text(text: str, filename: str = "<string>") -> LoadedContract:
    """Like ``load_contract_text``, keeping the source positions."""
    if len(text) > MAX_SPEC_BYTES:
        raise ContractInvalid(
            [Problem(filename, f"longer than {MAX_SPEC_BYTES:,} characters", Reason.TOO_LARGE)]
        )
    data = _parse_yaml(text, filename)
    try:
        return LoadedContract(Contract.model_validate(data), filename, data)
    except ValidationError as exc:
        errors = exc.errors()
        # locating and explaining each error costs time: a file of 100,000 unknown keys gets
        # the first MAX_PROBLEMS and a count, in well under a second
        problems = [_problem(err, data, filename) for err in errors[:MAX_PROBLEMS]]
        problems.sort(key=lambda p: (p.line or 0, p.column or 0))
        raise ContractInvalid(problems, more=len(errors) - len(problems)) from None


def _parse_yaml(text: str, filename: str) -> Any:
    yaml = bounded_yaml("rt")
    try:
        data = yaml.load(text)
    except YamlAliasBound as exc:
        raise ContractInvalid([_alias_problem(filename, exc)]) from None
    except RecursionError:
        raise ContractInvalid([_too_deep(filename)]) from None
    except ValueError as exc:
        # ruamel builds dates as it parses, so 2026-02-30 fails here, without a mark
        line, col = _first_impossible_date(text)
        raise ContractInvalid(
            [
                Problem(
                    filename,
                    f"a date or time that does not exist: {exc}",
                    Reason.INVALID_VALUE,
                    line=line,
                    column=col,
                    fix="check the day and month (YYYY-MM-DD)",
                )
            ]
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        what = exc.problem or str(exc)
        raise ContractInvalid(
            [
                Problem(
                    filename,
                    f"YAML syntax error: {what}",
                    Reason.YAML_SYNTAX,
                    line=line,
                    column=col,
                    fix="check indentation, colons and quotes on this line",
                )
            ]
        ) from None
    except YAMLError as exc:
        raise ContractInvalid(
            [Problem(filename, f"YAML error: {exc}", Reason.YAML_SYNTAX)]
        ) from None
    deep = depth_problem(data, filename)
    if deep is not None:
        raise ContractInvalid([deep])
    nul = _first_nul(data)
    if nul is not None:
        line, col = _position(data, nul, want_key=False)
        raise ContractInvalid(
            [
                Problem(
                    filename,
                    "a NUL character (\\0) in a value; no contract value holds one",
                    Reason.INVALID_VALUE,
                    field=_dotted(nul, data),
                    line=line,
                    column=col,
                    fix="remove the \\0 escape",
                )
            ]
        )
    if not isinstance(data, Mapping):
        raise ContractInvalid(
            [
                Problem(
                    filename,
                    "a contract is a YAML mapping with at least a `contract:` section",
                    Reason.NOT_A_MAPPING,
                    line=1,
                    column=1,
                    fix="run `slacheck init` for a starting contract",
                )
            ]
        )
    return data


def _first_nul(data: Any) -> Loc | None:
    """Where the first key or string value holding a NUL is (a NUL ends a string in the engine's
    SQL, so a scope list holding one would fail the check instead of reading as input)."""
    stack: list[tuple[Any, Loc]] = [(data, ())]
    while stack:
        node, loc = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                return loc
        elif isinstance(node, Mapping):
            for key, value in node.items():
                if isinstance(key, str) and "\x00" in key:
                    return (*loc, key)
                stack.append((value, (*loc, key)))
        elif isinstance(node, Sequence):
            stack.extend((v, (*loc, i)) for i, v in enumerate(node))
    return None


_DATE = re.compile(r"(?<![\w.])(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ]+(\d{1,2}):(\d{2}))?")


def _first_impossible_date(text: str) -> tuple[int | None, int | None]:
    """Line and column of the first date-like scalar that is no date (2026-02-30)."""
    for m in _DATE.finditer(text):
        y, mo, d = (int(g) for g in m.group(1, 2, 3))
        try:
            dt.date(y, mo, d)
            if m.group(4) is not None:
                dt.time(int(m.group(4)), int(m.group(5)))
        except ValueError:
            before = text[: m.start()]
            return before.count("\n") + 1, m.start() - (before.rfind("\n") + 1) + 1
    return None, None


def _alias_problem(filename: str, exc: YamlAliasBound) -> Problem:
    """The problem of a YAML file refused for its aliases, at the alias that crossed the bound."""
    mark = exc.problem_mark
    return Problem(
        filename,
        exc.message,
        Reason.TOO_LARGE,
        line=mark.line + 1 if mark is not None else None,
        column=mark.column + 1 if mark is not None else None,
        fix="write the values out; an anchor (&name) is for a few repeated blocks",
    )


def _too_deep(filename: str) -> Problem:
    return Problem(
        filename,
        f"nested more than {MAX_DEPTH} levels deep",
        Reason.TOO_DEEP,
        fix="no contract nests this deep",
    )


def _problem(err: Any, data: Any, filename: str) -> Problem:
    loc: Loc = tuple(err["loc"])
    ctx = err.get("ctx") or {}
    original = ctx.get("error")
    if isinstance(original, FieldError):
        loc = loc + original.path
    etype: str = err["type"]
    node_loc = _yaml_loc(data, loc)
    line, col = _position(data, node_loc, want_key=etype in ("extra_forbidden", "missing"))
    field = _dotted(loc, data)
    msg: str = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if etype == "extra_forbidden":
        known = _fields_at(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
        hint = f"did you mean `{close[0]}`?" if close else ""
        allowed = f"known fields here: {', '.join(known)}" if known else ""
        return Problem(
            filename,
            f"unknown field `{loc[-1]}`",
            Reason.UNKNOWN_FIELD,
            field=field,
            line=line,
            column=col,
            fix=" ".join(x for x in (hint, allowed) if x),
        )
    if etype == "missing":
        return Problem(
            filename,
            "required field is missing",
            Reason.MISSING_FIELD,
            field=field,
            line=line,
            column=col,
            fix=f"add `{loc[-1]}:` here",
        )
    cross = isinstance(original, FieldError) and original.cross_field
    reason = Reason.CROSS_FIELD if cross else Reason.INVALID_VALUE
    fix = ""
    if etype in ("enum", "literal_error"):
        fix = "use one of the values listed"
    elif etype.startswith(("greater_than", "less_than")):
        fix = "change the number to be within the range"
    return Problem(filename, msg, reason, field=field, line=line, column=col, fix=fix)


def _yaml_loc(data: Any, loc: Loc) -> Loc:
    """The part of ``loc`` that exists in the YAML (drops union tags such as `occurrence`)."""
    node = data
    kept: list[str | int] = []
    for seg in loc:
        if isinstance(node, Mapping) and seg in node:
            kept.append(seg)
            node = node[seg]
        elif isinstance(node, Sequence) and not isinstance(node, str) and isinstance(seg, int):
            if 0 <= seg < len(node):
                kept.append(seg)
                node = node[seg]
            else:
                break
        elif isinstance(node, Mapping):
            # a union tag or a key that is absent (missing field): keep walking for the former
            continue
        else:
            break
    return tuple(kept)


def _position(data: Any, loc: Loc, *, want_key: bool) -> tuple[int | None, int | None]:
    """1-based line and column of the node at ``loc``: its key, or its value."""
    if not loc:
        return 1, 1
    parent = data
    for seg in loc[:-1]:
        parent = parent[seg]
    last = loc[-1]
    lc = getattr(parent, "lc", None)
    if lc is None:
        return None, None
    try:
        if isinstance(last, int):
            line, col = lc.item(last)
        elif want_key:
            line, col = lc.key(last)
        else:
            line, col = lc.value(last)
    except (KeyError, IndexError, TypeError):
        return None, None
    return int(line) + 1, int(col) + 1


def _dotted(loc: Loc, data: Any) -> str:
    """`latency[0].objective.percentile`, without union tags that are not in the YAML."""
    kept = set(range(len(loc)))
    node = data
    for i, seg in enumerate(loc):
        if isinstance(node, Mapping) and seg in node:
            node = node[seg]
        elif isinstance(node, Sequence) and not isinstance(node, str) and isinstance(seg, int):
            node = node[seg] if 0 <= seg < len(node) else None
        elif isinstance(node, Mapping) and i < len(loc) - 1 and _is_tag(seg):
            kept.discard(i)
    out = ""
    for i, seg in enumerate(loc):
        if i not in kept:
            continue
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else str(seg))
    return out


def _is_tag(seg: str | int) -> bool:
    tags = {"occurrence", "time_slice", "request_rate", "utilisation", "busiest_minutes"}
    return isinstance(seg, str) and seg in tags


def _fields_at(loc: Loc) -> list[str]:
    """Field names of the model that ``loc`` points into, for "did you mean"."""
    models: list[type[BaseModel]] = [Contract]
    for seg in loc:
        if isinstance(seg, int):
            continue
        nxt: list[type[BaseModel]] = []
        for m in models:
            if seg in m.model_fields:
                nxt.extend(nested_models(m.model_fields[seg].annotation))
        if not nxt:
            # a union tag: pick the member whose `kind` default is the tag
            nxt = [
                m
                for m in models
                if "kind" in m.model_fields and m.model_fields["kind"].default == seg
            ]
        if not nxt:
            return []
        models = nxt
    names: list[str] = []
    for m in models:
        names.extend(n for n in m.model_fields if n not in names)
    return names
