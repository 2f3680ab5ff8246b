"""The conventions table (conventions.yaml): which attributes of which SDK fill which canonical
fields and span kinds, and reading a span's attributes through it."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, model_validator
from ruamel.yaml import YAML

from slacheck.trace.normalise import glob_regex, host_of, unquoted
from slacheck.trace.records import (
    USAGE_SPELLINGS,
    Unparseable,
    as_bool,
    as_float,
    as_int,
    as_text,
    decode_embedded,
    lookup,
)
from slacheck.trace.schema import BY_NAME, Kind, SetAside, Status

Format = Literal["otlp", "langfuse", "langsmith", "openai_agents"]
Unit = Literal["s", "ms", "us", "ns", "tokens", "timestamp"]
#: how a source's value is normalised before it fills its column (see ``normalise.py``):
#: ``host`` an endpoint URL to its host; ``provider`` a framework's own name is no provider;
#: ``usage`` the value is a usage object (records.USAGE_SPELLINGS name the count)
Normaliser = Literal["host", "provider", "usage"]

#: duration unit → factor to milliseconds
_TO_MS = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 0.000001}
#: the pseudo-field a ``timestamp`` row fills: the first token's arrival, not a column
FIRST_TOKEN = "first_token_time"
#: columns a reader computes itself and no row may fill
_NOT_FILLED = frozenset(
    {"task_id", "span_id", "parent_span_id", "kind", "name", "status", "status_source"}
    | {"start_us", "end_us"}
    | {"duration_ms", "source_file", "source_ref", "defect", "evidence"}
)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Convention(_Row):
    """Who writes the attributes, and where their names are documented."""

    title: str
    format: Format
    source: str


class KindRule(_Row):
    """A span is ``kind`` (and, unless it names its own, ``operation``) when ``attribute`` has
    ``value`` (compared without case), or is present when no value is given; with
    ``name_suffix``, only a span whose name ends so (compared without case): a framework's
    helper method that its instrumentation records with a model call's kind."""

    convention: str
    attribute: str
    value: str | None = None
    name_suffix: str | None = None
    kind: Kind
    operation: str | None = None

    def names(self, name: str | None) -> bool:
        """Whether the span name ``name`` meets the row's ``name_suffix`` (always, without)."""
        if self.name_suffix is None:
            return True
        return (name or "").lower().endswith(self.name_suffix.lower())


class FieldRule(_Row):
    """``attribute`` (or the time of the span's first event named ``event``) fills the
    canonical ``field``, converted from ``unit`` after its ``normalise`` step. A source whose
    normaliser finds nothing in it (a framework's name as the provider, a placeholder host, a
    usage object without that count) counts as absent: the next source is tried."""

    convention: str
    attribute: str = ""
    event: str | None = None
    field: str
    unit: Unit | None = None
    normalise: Normaliser | None = None
    offset: int = 0
    deprecated: bool = False
    note: str = ""

    @property
    def source(self) -> str:
        """The source as ``traces inspect`` names it: the attribute, or ``event:<name>``."""
        return f"event:{self.event}" if self.event is not None else self.attribute

    @model_validator(mode="after")
    def _fits_the_column(self) -> FieldRule:
        if (self.event is None) == (not self.attribute):
            raise ValueError("a field row names an attribute or an event, not both")
        if self.event is not None and self.unit != "timestamp":
            raise ValueError("an event row gives the event's time: unit timestamp")
        if self.normalise == "usage" and self.unit != "tokens":
            raise ValueError("a usage object fills a token count")
        if self.normalise in ("host", "provider") and self.field not in ("endpoint", "provider"):
            raise ValueError(f"normalise {self.normalise} is for endpoint or provider")
        if self.field not in BY_NAME or self.field in _NOT_FILLED:
            raise ValueError(f"{self.field!r} is not a canonical column a convention can fill")
        numeric = pa.types.is_floating(BY_NAME[self.field].type)
        if self.unit == "timestamp" and self.field != "ttft_ms":
            raise ValueError("unit timestamp is for ttft_ms: the first token's arrival")
        if self.unit in _TO_MS and not numeric:
            raise ValueError(f"{self.field} is not a duration; unit {self.unit} does not apply")
        if self.unit == "tokens" and BY_NAME[self.field].unit != "tokens":
            raise ValueError(f"{self.field} is not a token count")
        if numeric and self.unit is None:
            raise ValueError(f"{self.field} is a duration: give its unit (s, ms, us, ns)")
        return self


class HttpRule(_Row):
    """HTTP status codes (listed, or the range ``from``–``to``) that mean ``status``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    codes: tuple[int, ...] = ()
    from_: int | None = Field(default=None, alias="from")
    to: int | None = None
    status: Status

    @model_validator(mode="after")
    def _one_way(self) -> HttpRule:
        if bool(self.codes) == (self.from_ is not None or self.to is not None):
            raise ValueError("give either codes or from/to")
        if (self.from_ is None) != (self.to is None):
            raise ValueError("give both from and to")
        return self

    def matches(self, code: int) -> bool:
        if self.codes:
            return code in self.codes
        assert self.from_ is not None and self.to is not None
        return self.from_ <= code <= self.to


class ClassRule(_Row):
    """An SDK's exception class (its name without the module path) and the status it means.
    ``generic``: a family of codes; a code recorded with it decides first."""

    sdk: str
    class_: str = Field(alias="class")
    status: Status
    generic: bool = False
    note: str = ""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @property
    def key(self) -> str:
        """The class as compared: without its module path, lower case."""
        return class_key(self.class_)


class KeywordRule(_Row):
    """A pattern of words (searched in squashed, lower-cased text) that means ``status``."""

    pattern: str
    status: Status


class StatusTable(_Row):
    """How a call's status class is read (``conventions.yaml``'s ``status`` section)."""

    http: tuple[HttpRule, ...]
    code_patterns: tuple[str, ...]
    class_patterns: tuple[str, ...]
    classes: tuple[ClassRule, ...]
    keywords: tuple[KeywordRule, ...]

    @model_validator(mode="after")
    def _consistent(self) -> StatusTable:
        import re

        for pattern in (
            *self.code_patterns,
            *self.class_patterns,
            *(k.pattern for k in self.keywords),
        ):
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
            if pattern in (*self.code_patterns, *self.class_patterns) and compiled.groups != 1:
                raise ValueError(f"pattern {pattern!r} needs exactly one group")
        seen: dict[str, ClassRule] = {}
        for rule in self.classes:
            if rule.status is Status.OK:
                raise ValueError(f"class {rule.class_}: a failure class cannot mean ok")
            other = seen.get(rule.key)
            if other is not None:
                raise ValueError(f"class {rule.class_} is listed twice ({other.sdk}, {rule.sdk})")
            seen[rule.key] = rule
        return self

    def http_status(self, code: int) -> Status | None:
        """The status an HTTP code means, or None (below 400)."""
        for rule in self.http:
            if rule.matches(code):
                return rule.status
        return None


def class_key(name: str) -> str:
    """An exception class as compared: the last part of a dotted path, lower case."""
    return name.strip().rsplit(".", 1)[-1].lower()


class VendorHost(_Row):
    """An endpoint host (``*`` matches any run of characters) that names its vendor."""

    host: str
    provider: str

    @property
    def regex(self) -> str:
        return glob_regex(self.host)


class StreamLog(_Row):
    """A zero-length log record written after a streamed call: ``attribute`` = ``value`` and a
    name starting ``name_prefix``. It is no call; its time is when the stream ended, so it
    completes the model call of its task that ended last before it (same requested model)."""

    convention: str
    attribute: str
    value: str
    name_prefix: str
    duration: str
    unit: Literal["s", "ms"]


class Table(_Row):
    """The whole table, rows in the order they are tried."""

    conventions: dict[str, Convention]
    kinds: tuple[KindRule, ...]
    fields: tuple[FieldRule, ...] = Field(default=())
    status: StatusTable
    #: names frameworks write where the provider belongs (never the vendor; lower case)
    frameworks: tuple[str, ...] = Field(default=())
    #: endpoint values that name no host (lower case)
    placeholders: tuple[str, ...] = Field(default=())
    #: the vendor an endpoint host names, for a call whose sources name no provider
    vendor_hosts: tuple[VendorHost, ...] = Field(default=())
    stream_logs: tuple[StreamLog, ...] = Field(default=())

    @model_validator(mode="after")
    def _known_conventions(self) -> Table:
        for convention in (
            *(r.convention for r in self.kinds),
            *(r.convention for r in self.fields),
            *(r.convention for r in self.stream_logs),
        ):
            if convention not in self.conventions:
                raise ValueError(f"a row names an unknown convention: {convention!r}")
        return self

    def rows_for(self, fmt: Format) -> tuple[tuple[KindRule, ...], tuple[FieldRule, ...]]:
        """The kind and field rows of the conventions written in ``fmt``."""
        of = {name for name, c in self.conventions.items() if c.format == fmt}
        return (
            tuple(r for r in self.kinds if r.convention in of),
            tuple(r for r in self.fields if r.convention in of),
        )


#: the table's source, and its data as JSON beside it (``write_twin``): the same data, read in a
#: millisecond where parsing the YAML takes 0.15–0.3 s of every process that reads traces
SOURCE = "conventions.yaml"
TWIN = "conventions.json"


@functools.cache
def table() -> Table:
    """The table shipped in the package, validated once."""
    text = resources.files("slacheck.trace").joinpath(SOURCE).read_text("utf-8")
    return Table.model_validate(parsed(text))


def parsed(text: str) -> Any:
    """The data of ``text`` (the YAML source): from the JSON twin when the twin was written
    from these very bytes (its ``source_sha256``), else parsed here. A twin left stale by an
    edit of the YAML is never read, so it can cost time, never a rule."""
    digest = source_sha256(text)
    try:
        twin = json.loads(resources.files("slacheck.trace").joinpath(TWIN).read_text("utf-8"))
    except (OSError, ValueError):
        twin = None
    if isinstance(twin, dict) and twin.get("source_sha256") == digest:
        return twin["data"]
    return YAML(typ="safe").load(text)


def source_sha256(text: str) -> str:
    """The hash a twin names its source by: SHA-256 of the text as UTF-8 (the twin's writer and
    its reader take it alike)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_twin(folder: Path) -> Path:
    """Write ``TWIN`` for the ``SOURCE`` in ``folder`` (``make docs``): its data, which JSON
    must give back exactly (no dates, no keys that are not strings), and the source's hash."""
    text = (folder / SOURCE).read_text("utf-8")
    data = YAML(typ="safe").load(text)
    if json.loads(json.dumps(data)) != data:
        raise ValueError(f"{SOURCE} holds values JSON cannot give back; no twin written")
    twin = {"source_sha256": source_sha256(text), "data": data}
    out = folder / TWIN
    out.write_text(json.dumps(twin, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return out


# -- reading a span through the table ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reading:
    """Canonical fields read from one span's attributes."""

    fields: dict[str, Any]
    #: when the first token arrived, as the source wrote it (for ``SpanRows.add``)
    first_token: object = None
    #: which source filled each field (``traces inspect``): an attribute, ``event:<name>``
    sources: dict[str, str] = dataclasses.field(default_factory=dict)


#: what a normaliser returns for a value that names nothing: the source counts as absent
_ABSENT = object()


def _converter(rule: FieldRule) -> Callable[[object], object]:
    column = BY_NAME[rule.field]
    if rule.unit == "timestamp":
        return _timestamp
    if pa.types.is_floating(column.type):
        factor = _TO_MS[rule.unit or "ms"]
        return lambda v: _first(v) * factor
    if pa.types.is_integer(column.type):
        return lambda v: as_int(v) + rule.offset
    if pa.types.is_boolean(column.type):
        return as_bool
    return as_text


def _first(value: object) -> float:
    # HTTP headers are recorded as string arrays; one value per response
    if isinstance(value, list):
        if not value:
            raise Unparseable(value)
        value = value[0]
    return as_float(value)


def _timestamp(value: object) -> object:
    # some SDKs JSON-encode the string once more: "\"2025-01-01T00:00:00Z\""
    if isinstance(value, str) and len(value) > 1 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def normalised(rule: FieldRule, value: object) -> object:
    """``value`` after the rule's normaliser; ``_ABSENT`` when it names nothing."""
    if rule.normalise == "host":
        host = host_of(as_text(value), table().placeholders)
        return _ABSENT if host is None else host
    if rule.normalise == "provider":
        text = as_text(value)
        return _ABSENT if text is not None and text.lower() in table().frameworks else value
    if rule.normalise == "usage":
        usage = decode_embedded(value)
        if not isinstance(usage, Mapping):
            return _ABSENT
        for path in USAGE_SPELLINGS[rule.field]:
            count = lookup(usage, path)
            if count is not None:
                return count
        return _ABSENT
    return value


def classify(
    attributes: Mapping[str, object], rules: Collection[KindRule], name: str | None = None
) -> tuple[Kind, str | None] | None:
    """The kind (and operation) of the first rule that matches, or None."""
    found = classify_rule(attributes, rules, name)
    return None if found is None else (found.kind, found.operation)


def classify_rule(
    attributes: Mapping[str, object], rules: Collection[KindRule], name: str | None = None
) -> KindRule | None:
    """The first kind rule that matches ``attributes`` (and the span name ``name``), or None."""
    for rule in rules:
        value = unquoted(lookup(attributes, rule.attribute))
        if value is None or not rule.names(name):
            continue
        if rule.value is None or str(value).lower() == rule.value.lower():
            return rule
    return None


def read_fields(
    attributes: Mapping[str, object],
    rules: Collection[FieldRule],
    defects: list[str],
    skip: Collection[str] = (),
    events: Mapping[str, object] | None = None,
) -> Reading:
    """Canonical fields (but those in ``skip``) from ``attributes`` (flat, or nested for dotted
    JSON keys) and the span's ``events`` (name → time of the first of that name): for each field
    the first rule whose source is present (after its normaliser). A present value of the wrong
    type is null and adds an ``unparseable_number:<field>`` defect."""
    fields: dict[str, Any] = {}
    sources: dict[str, str] = {}
    first_token: object = None
    done: set[str] = set(skip)
    for rule in rules:
        if rule.field in done:
            continue
        if rule.event is not None:
            value = (events or {}).get(rule.event)
        else:
            value = unquoted(lookup(attributes, rule.attribute))
        if value is None:
            continue
        value = normalised(rule, value)
        if value is _ABSENT:
            continue
        done.add(rule.field)
        sources[rule.field] = rule.source
        try:
            converted = _converter(rule)(value)
        except Unparseable:
            defects.append(f"{SetAside.UNPARSEABLE_NUMBER}:{rule.field}")
            continue
        if rule.unit == "timestamp":
            first_token = converted
        else:
            fields[rule.field] = converted
    return Reading(fields, first_token, sources)


def read_span(
    attributes: Mapping[str, object],
    fmt: Format,
    defects: list[str],
    skip: Collection[str] = (),
    events: Mapping[str, object] | None = None,
    name: str | None = None,
) -> tuple[Reading, tuple[Kind, str | None] | None]:
    """A span's fields and its kind (None when no convention claims it) by the ``fmt`` rows;
    ``name`` is the span's name, for the rows that ask for one.

    What ``read_fields`` and ``classify_rule`` give over ``table().rows_for(fmt)``, through the
    rows compiled once per format (``span_reader``): the readers call this for every span."""
    return span_reader(fmt).read(attributes, defects, skip, events, name)


def _get(attributes: Mapping[str, object], path: str, parts: tuple[str, ...]) -> object:
    """``lookup(attributes, path)`` with the path split once."""
    if path in attributes:
        return attributes[path]
    node: object = attributes
    for part in parts:
        if not (type(node) is dict or isinstance(node, Mapping)) or part not in node:
            return None
        node = node[part]
    return node


@dataclass(frozen=True, slots=True)
class _FieldStep:
    rule: FieldRule
    field: str
    attribute: str
    parts: tuple[str, ...]
    event: str | None
    source: str
    normalise: bool
    convert: Callable[[object], object]
    timestamp: bool


@dataclass(frozen=True, slots=True)
class _KindStep:
    rule: KindRule
    attribute: str
    parts: tuple[str, ...]
    value: str | None
    suffix: str | None


def _by_key(attributes: list[str]) -> dict[str, tuple[int, ...]]:
    """Each key a span may hold → the rows (by index) it may fill: the rows that name it, and
    the rows whose dotted name starts with it (looked up inside its value)."""
    found: dict[str, list[int]] = {}
    for index, attribute in enumerate(attributes):
        if not attribute:
            continue
        found.setdefault(attribute, []).append(index)
        head = attribute.split(".", 1)[0]
        if head != attribute:
            found.setdefault(head, []).append(index)
    return {key: tuple(sorted(set(rows))) for key, rows in found.items()}


class SpanReader:
    """One format's rows of the table, compiled once (paths split, converters chosen, rows
    indexed by the keys they read); ``read`` is ``read_fields`` then ``classify_rule`` over
    them, to the same result: a row whose key the span does not hold finds nothing, so only the
    rows of the keys it holds are tried, in the table's order."""

    def __init__(self, fmt: Format) -> None:
        kinds, fields = table().rows_for(fmt)
        self._fields = tuple(
            _FieldStep(
                rule,
                rule.field,
                rule.attribute,
                tuple(rule.attribute.split(".")),
                rule.event,
                rule.source,
                rule.normalise is not None,
                _converter(rule),
                rule.unit == "timestamp",
            )
            for rule in fields
        )
        self._kinds = tuple(
            _KindStep(
                rule,
                rule.attribute,
                tuple(rule.attribute.split(".")),
                None if rule.value is None else rule.value.lower(),
                None if rule.name_suffix is None else rule.name_suffix.lower(),
            )
            for rule in kinds
        )
        self._field_keys = _by_key([r.attribute for r in fields])
        self._event_rows = tuple(i for i, r in enumerate(fields) if r.event is not None)
        self._kind_keys = _by_key([r.attribute for r in kinds])

    def _rows(
        self, attributes: Mapping[str, object], keys: dict[str, tuple[int, ...]]
    ) -> list[int]:
        """The rows that may find a value in ``attributes``, in order."""
        common = attributes.keys() & keys.keys()  # in C: most keys name no row
        if not common:
            return []
        if len(common) == 1:
            return list(keys[next(iter(common))])
        rows: list[int] = []
        for key in common:
            rows.extend(keys[key])
        return sorted(set(rows))

    def read(
        self,
        attributes: Mapping[str, object],
        defects: list[str],
        skip: Collection[str] = (),
        events: Mapping[str, object] | None = None,
        name: str | None = None,
    ) -> tuple[Reading, tuple[Kind, str | None] | None]:
        fields: dict[str, Any] = {}
        sources: dict[str, str] = {}
        first_token: object = None
        done: set[str] = set(skip)
        rows = self._rows(attributes, self._field_keys)
        if events and self._event_rows:
            rows = sorted({*rows, *self._event_rows})
        steps = self._fields
        for index in rows:
            step = steps[index]
            if step.field in done:
                continue
            if step.event is not None:
                value = events.get(step.event) if events else None
            else:
                value = _get(attributes, step.attribute, step.parts)
                if isinstance(value, str) and value[:1] == '"':
                    value = unquoted(value)
            if value is None:
                continue
            if step.normalise:
                value = normalised(step.rule, value)
                if value is _ABSENT:
                    continue
            done.add(step.field)
            sources[step.field] = step.source
            try:
                converted = step.convert(value)
            except Unparseable:
                defects.append(f"{SetAside.UNPARSEABLE_NUMBER}:{step.field}")
                continue
            if step.timestamp:
                first_token = converted
            else:
                fields[step.field] = converted
        reading = Reading(fields, first_token, sources)
        kinds = self._kinds
        for index in self._rows(attributes, self._kind_keys):
            kind = kinds[index]
            value = _get(attributes, kind.attribute, kind.parts)
            if isinstance(value, str) and value[:1] == '"':
                value = unquoted(value)
            if value is None:
                continue
            if kind.suffix is not None and not (name or "").lower().endswith(kind.suffix):
                continue
            if kind.value is None or str(value).lower() == kind.value:
                sources["kind"] = kind.attribute
                return reading, (kind.rule.kind, kind.rule.operation)
        return reading, None


@functools.cache
def span_reader(fmt: Format) -> SpanReader:
    """The ``fmt`` rows compiled, once per process."""
    return SpanReader(fmt)


def vendor_of(host: object) -> str | None:
    """The vendor an endpoint host names (``vendor_hosts``), or None."""
    if not isinstance(host, str):
        return None
    for row in table().vendor_hosts:
        if re.search(row.regex, host):
            return row.provider
    return None


#: the source ``traces inspect`` names for a provider derived from the endpoint host
DERIVED_PROVIDER = "derived:endpoint"


def is_stream_log(attributes: Mapping[str, object], name: str | None) -> bool:
    """Whether a span is a log record written after a streamed call (``stream_logs``)."""
    for row in table().stream_logs:
        value = unquoted(lookup(attributes, row.attribute))
        if (
            value is not None
            and str(value).lower() == row.value.lower()
            and (name or "").startswith(row.name_prefix)
            and lookup(attributes, row.duration) is not None
        ):
            return True
    return False


def derive_provider(fields: dict[str, Any], sources: dict[str, str]) -> None:
    """A call whose sources name no provider: the vendor its endpoint host names, if any,
    recorded as derived (every reader, after all its sources)."""
    if fields.get("provider") is not None:
        return
    vendor = vendor_of(fields.get("endpoint"))
    if vendor is not None:
        fields["provider"] = vendor
        sources["provider"] = DERIVED_PROVIDER


# -- the table for people ----------------------------------------------------------------------


def rows() -> list[dict[str, str]]:
    """One flat record per row of the table, for the CLI and the README."""
    t = table()
    out: list[dict[str, str]] = []
    for k in t.kinds:
        match = k.attribute + (f" = {k.value}" if k.value is not None else " (present)")
        if k.name_suffix is not None:
            match += f", span name ending {k.name_suffix}"
        target = f"kind {k.kind}" + (f", operation {k.operation}" if k.operation else "")
        out.append(_record(t, k.convention, match, target, "", ""))
    for f in t.fields:
        note = "; ".join(n for n in ("deprecated" if f.deprecated else "", f.note) if n)
        unit: str = f.unit or ""
        if f.offset:
            unit = f"{unit} + {f.offset}".strip()
        out.append(_record(t, f.convention, f.attribute, f.field, unit, note))
    return out


def _record(
    t: Table, convention: str, source: str, target: str, unit: str, note: str
) -> dict[str, str]:
    return {
        "convention": convention,
        "format": t.conventions[convention].format,
        "source": source,
        "canonical": target,
        "unit": unit,
        "note": note,
    }


def reference_markdown() -> str:
    """The conventions and their rows as Markdown, for the README."""
    t = table()
    lines = ["| convention | format | documented in |", "|---|---|---|"]
    for name, c in t.conventions.items():
        lines.append(f"| `{name}`: {c.title} | {c.format} | {c.source} |")
    lines += [
        "",
        "| convention | attribute or key | canonical | unit | note |",
        "|---|---|---|---|---|",
    ]
    for r in rows():
        lines.append(
            f"| `{r['convention']}` | `{r['source']}` | {r['canonical']} | "
            f"{r['unit'] or '—'} | {r['note']} |"
        )
    return "\n".join(lines) + "\n" + status_reference_markdown()


def status_reference_markdown() -> str:
    """The ``status`` section as Markdown: HTTP codes, exception classes, patterns, keywords."""
    st = table().status
    lines = ["", "Status classes (section `status`, tried in the order its comment gives):", ""]
    lines += ["| HTTP status | status class |", "|---|---|"]
    for h in st.http:
        codes = ", ".join(str(c) for c in h.codes) if h.codes else f"{h.from_}–{h.to}"
        lines.append(f"| {codes} | `{h.status}` |")
    lines += ["", "| SDK | exception class | status class | note |", "|---|---|---|---|"]
    for c in st.classes:
        generic = "generic: a recorded code decides first; " if c.generic else ""
        lines.append(f"| {c.sdk} | `{c.class_}` | `{c.status}` | {generic}{c.note} |")
    lines += ["", "| read from messages | pattern |", "|---|---|"]

    def cell(pattern: str) -> str:
        return "`" + pattern.replace("|", "\\|") + "`"

    lines += [f"| HTTP code | {cell(p)} |" for p in st.code_patterns]
    lines += [f"| exception class | {cell(p)} |" for p in st.class_patterns]
    lines += [f"| keyword → `{k.status}` | {cell(k.pattern)} |" for k in st.keywords]
    return "\n".join(lines) + "\n"
