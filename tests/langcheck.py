"""A checker for text meant for a Chinese reader: no English prose left in it.

Identifiers (snake_case, dotted names, paths, ``code``, ids with digits or hyphens, slacheck
command lines), quoted
values and markup are allowed; a run of three or more plain English words is not.
"""

from __future__ import annotations

import html
import re

# what may stay in Latin script: markup, code, quotes, identifiers, units
_TAG = re.compile(r"<(style|script|svg)\b.*?</\1>|<[^>]+>", re.S | re.I)
_CODE = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|“[^”]*”")
_COMMAND = re.compile(r"\bslacheck(?: [a-z]+)+")  # a command line is code
_IDENT = re.compile(r"[\w.\-/<>:=@]*[_./<>=@\d\-][\w.\-/<>:=@]*")
_WORD = re.compile(r"[A-Za-z]+")
#: English words in a run, separated only by spaces and light punctuation
_RUN = re.compile(r"[A-Za-z]+(?:[ ,;()'’\-]+[A-Za-z]+){2,}")


def english_runs(text: str, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """Runs of three or more English words in ``text`` (HTML tags dropped), identifiers and
    quoted values aside. ``allowed``: phrases to accept (names, product terms)."""
    plain = html.unescape(_TAG.sub(" ", text))
    for phrase in allowed:
        plain = plain.replace(phrase, " ")
    plain = _CODE.sub(" ", plain)
    plain = _COMMAND.sub(" ", plain)
    plain = _IDENT.sub(" ", plain)
    return [m.group() for m in _RUN.finditer(plain) if len(_WORD.findall(m.group())) >= 3]


__all__ = ["english_runs"]


# ---- the glossary rule: one Chinese term per concept, no English word outside identifiers

_WORD_TOKEN = re.compile(r"[A-Za-z]+")
#: command lines a Chinese sentence may quote bare: slacheck's, pip's, a package manager's
_COMMANDS = re.compile(
    r"\b(?:slacheck|pip|apt-get|dnf|brew)(?: (?:install|[a-z][a-z\-]*|'[^']*'|--?[\w\-]+))+"
)


#: a catalogue's placeholders ({n}, %(n)s): filled with numbers, names or other messages
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%\([^)]*\)[sd]")
#: a field name another tool spells in camelCase (completionStartTime, traceId)
_CAMEL = re.compile(r"\b[a-z]+[A-Z][A-Za-z]*\b")


def _schema_names() -> frozenset[str]:
    """The contract's and the traces' own names: field names and enum values, identifiers a
    Chinese sentence may cite as they are."""
    import enum
    import inspect

    import slacheck.contract.model as contract_model
    import slacheck.contract.readings as readings
    import slacheck.trace.schema as trace_schema
    from slacheck.contract.model import Contract

    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    names.update(value)
                elif key == "enum" and isinstance(value, list):
                    names.update(str(v) for v in value)
                elif key == "const":
                    names.add(str(value))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(Contract.model_json_schema())
    for mod in (contract_model, readings, trace_schema):
        for obj in vars(mod).values():
            if inspect.isclass(obj) and issubclass(obj, enum.Enum):
                names.update(str(e.value) for e in obj)
    names.update(c.name for c in trace_schema.COLUMNS)
    names.update(("true", "false"))  # YAML's
    from slacheck.trace.ingest import FORMATS

    names.update(FORMATS)  # the trace formats, as the inputs table names them
    from slacheck.render.inputs import EVIDENCE_COLUMNS

    names.update(EVIDENCE_COLUMNS)  # the evidence CSV's columns, as the report lists them
    return frozenset(n for n in names if _WORD_TOKEN.fullmatch(n))


SCHEMA_NAMES = _schema_names()


def stray_words(text: str, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """Every Latin-script word a Chinese reader would meet in ``text``: outside markup, code
    spans, quotes, identifiers and command lines; not one of the glossary's ``ALLOWED_LATIN``
    (products, units, abbreviations) nor a name of the contract's or the traces' schema (field
    names, enum values); ``allowed``: phrases to accept (contract values: names, ids)."""
    from slacheck.render.glossary import ALLOWED_LATIN

    text = re.sub(r"<wbr\s*/?>|\u00ad", "", text)  # break hints inside an identifier
    text = re.sub(r"<code[^>]*>.*?</code>", " ", text, flags=re.S)
    plain = html.unescape(_TAG.sub(" ", text))
    for phrase in sorted(allowed, key=len, reverse=True):
        if phrase:
            plain = plain.replace(phrase, " ")
    plain = _PLACEHOLDER.sub(" ", plain)
    plain = _CODE.sub(" ", plain)
    plain = _COMMANDS.sub(" ", plain)
    plain = _IDENT.sub(" ", plain)
    plain = _CAMEL.sub(" ", plain)
    return [
        w for w in _WORD_TOKEN.findall(plain) if w not in ALLOWED_LATIN and w not in SCHEMA_NAMES
    ]


def rejected_terms(text: str) -> list[str]:
    """The glossary's rejected Chinese variants ``text`` uses (outside code), each with the
    term to use instead. A variant inside a glossary term (窗口 in 维护窗口) is not counted."""
    from slacheck.render.glossary import TERMS

    plain = _CODE.sub(" ", html.unescape(_TAG.sub(" ", text)))
    found = []
    for term in TERMS:
        for variant in term.rejected:
            masked = plain
            for other in TERMS:
                if variant in other.zh and other.zh != variant:
                    masked = masked.replace(other.zh, " ")
            if variant in masked:
                found.append(f"{variant} → {term.zh}")
    return found


__all__ += ["SCHEMA_NAMES", "rejected_terms", "stray_words"]
