"""Messages: a code with parameters, put into words in the reader's language only at the edge.

A finding, a mismatch or a fix is data until something shows it to a person, exactly as an
input error is a ``Problem`` with a ``Reason``. Each module that says something defines its
codes as a ``MessageCode`` enum, every member declared with ``NC_(code, english_template)``:
the English template is the gettext msgid and the code its msgctxt, so adding a code is one
line in one place and ``make messages`` extracts it into ``slacheck/locale/slacheck.pot``.
Translations live in ``slacheck/locale/<locale>/LC_MESSAGES/slacheck.po``, read directly
(no compile step) the first time a language is asked for.

A message that counts something is declared with ``NPC_(code, singular, plural, count="n")``:
the English singular and plural templates (msgid and msgid_plural) and the name of the
parameter that chooses between them. Rendering picks the form the language's plural rule gives
for that count (English: the singular for exactly 1; Chinese has one form), so no sentence
says "1 calls" or "finding(s)".

Templates use ``str.format`` fields. A parameter is a plain value (str, int, float, bool,
None), a nested ``Message`` (rendered in the same language) or a list of these. How a value
becomes text is decided here, per locale (Babel): numbers through ``format_decimal``, the
``{x:percent}`` spec through ``format_percent`` (``x`` a share, 0.38 → "38 %"), ``{x:.1f}``
with that many decimals, lists joined with the language's comma (``{x:semi}``: semicolon;
``{x:and}``: semicolon and "and"; ``{x:sentences}``: one sentence after another).
"""

from __future__ import annotations

import gettext
import io
import re
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Self, TypeAlias

from babel.numbers import format_decimal, format_percent

if TYPE_CHECKING:  # the catalogue reader is loaded by the first non-English message only
    from babel.messages.catalog import Catalog

__all__ = [
    "LANGUAGES",
    "LOCALES",
    "NC_",
    "NPC_",
    "CodeIndex",
    "Message",
    "MessageCode",
    "Param",
    "format_number",
    "placeholders",
    "plural_forms",
    "render",
    "template_for",
    "translations",
]

Param: TypeAlias = "str | int | float | bool | Message | Sequence[Param] | None"

#: the languages slacheck writes, and the locale whose catalogue and number rules each uses
LOCALES: dict[str, str] = {"en": "en", "zh": "zh_CN"}
LANGUAGES = tuple(LOCALES)
_DOMAIN = "slacheck"


def NC_(code: str, template: str) -> tuple[str, str]:
    """Declare a message: its code (the msgctxt) and English template (the msgid).

    Only a marker for extraction (``pybabel extract -k NC_:1c,2``); returns both unchanged.
    """
    return code, template


def NPC_(code: str, singular: str, plural: str, count: str = "n") -> tuple[str, str, str, str]:
    """Declare a counting message: its code, English singular and plural templates, and the
    parameter whose value chooses the form.

    Only a marker for extraction (``pybabel extract -k NPC_:1c,2,3``); returns all four.
    """
    return code, singular, plural, count


class MessageCode(StrEnum):
    """Base of every module's message codes; a member is ``NAME = NC_("code", "template")``.

    The member's value is the code (stable: JSON consumers and tests match on it); its
    ``template`` is the English wording. Calling a member makes a ``Message``. A member
    declared with ``NPC_`` also has a ``plural`` template and, as ``count_param``, the name of
    the parameter that counts.
    """

    template: str
    plural: str | None
    count_param: str | None

    def __new__(
        cls, code: str, template: str, plural: str | None = None, count: str | None = None
    ) -> Self:
        member = str.__new__(cls, code)
        member._value_ = code
        member.template = template
        member.plural = plural
        member.count_param = count
        return member

    @property
    def templates(self) -> tuple[str, ...]:
        """The English templates: the one, or the singular and the plural."""
        return (self.template,) if self.plural is None else (self.template, self.plural)

    @property
    def params(self) -> frozenset[str]:
        """The parameters a message of this code takes (the count among them)."""
        names = frozenset().union(*(placeholders(t) for t in self.templates))
        return names if self.count_param is None else names | {self.count_param}

    def __call__(self, **params: Param) -> Message:
        """The message with these parameters: exactly the fields its templates name."""
        wanted = self.params
        if set(params) != wanted:
            raise TypeError(f"message {self.value} takes {sorted(wanted)}, not {sorted(params)}")
        return Message(self, params)


@dataclass(frozen=True, slots=True)
class Message:
    """Something slacheck says: a code and its parameters, words only when rendered."""

    code: MessageCode
    params: Mapping[str, Param] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The English rendering (what JSON carries as ``text``)."""
        return render(self, "en")

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "params": {k: _plain(v) for k, v in self.params.items()},
            "text": self.text,
        }


class CodeIndex:
    """Several ``MessageCode`` classes read by member name as one (``index.SLA101_WHY``).

    A module split into a package keeps each group's codes beside the code that says them; the
    package exports an index under the old single class's name, so callers that named a code
    through it still do. Not a ``MessageCode`` itself: each code stays declared once.
    """

    __slots__ = ("_codes",)

    def __init__(self, *kinds: type[MessageCode]) -> None:
        codes: dict[str, MessageCode] = {}
        for kind in kinds:
            for name, code in kind.__members__.items():
                if name in codes:
                    raise ValueError(f"{name} is declared by {type(codes[name]).__name__} too")
                codes[name] = code
        self._codes = codes

    def __getattr__(self, name: str) -> MessageCode:
        if name.startswith("_"):  # never a code; and `_codes` itself before it is set
            raise AttributeError(name)
        try:
            return self._codes[name]
        except KeyError:
            raise AttributeError(name) from None

    def __iter__(self) -> Iterator[MessageCode]:
        return iter(self._codes.values())

    def __len__(self) -> int:
        return len(self._codes)


def _plain(value: Param) -> Any:
    if isinstance(value, Message):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# catalogues


@dataclass(frozen=True, slots=True)
class _Catalogue:
    #: (code, English template) → translated template
    singles: dict[tuple[str, str], str]
    #: (code, English singular, English plural) → the translated forms
    plurals: dict[tuple[str, str, str], tuple[str, ...]]
    #: the count → the index of its form (the catalogue's Plural-Forms expression)
    form: Any


@lru_cache(maxsize=len(LOCALES))
def _po(lang: str) -> Catalog:
    """``lang``'s ``.po`` file, parsed once: message codes and template prose both read it."""
    path = resources.files("slacheck").joinpath(f"locale/{LOCALES[lang]}/LC_MESSAGES/{_DOMAIN}.po")
    with path.open("rb") as fh:
        from babel.messages.pofile import read_po

        return read_po(fh, locale=LOCALES[lang], domain=_DOMAIN)


@lru_cache(maxsize=len(LOCALES))
def _catalogue(lang: str) -> _Catalogue:
    """The complete, non-fuzzy entries of ``lang``'s catalogue."""
    if lang == "en":
        return _Catalogue({}, {}, lambda n: 0 if n == 1 else 1)
    catalog = _po(lang)
    singles: dict[tuple[str, str], str] = {}
    plurals: dict[tuple[str, str, str], tuple[str, ...]] = {}
    for m in catalog:
        if m.fuzzy or not m.context or not m.id:
            continue
        if isinstance(m.id, str) and isinstance(m.string, str) and m.string:
            singles[(m.context, m.id)] = m.string
        elif isinstance(m.id, tuple | list) and isinstance(m.string, tuple | list):
            forms = tuple(str(f) for f in m.string)
            if len(forms) == catalog.num_plurals and all(forms):
                plurals[(m.context, str(m.id[0]), str(m.id[1]))] = forms
    return _Catalogue(singles, plurals, gettext.c2py(catalog.plural_expr))


@lru_cache(maxsize=len(LOCALES))
def translations(lang: str) -> gettext.NullTranslations:
    """The whole catalogue for ``lang`` as a gettext object (contexts and plural forms included),
    for Jinja's i18n extension: document prose in ``{% trans %}`` blocks is translated from the
    same ``.po`` file as every message code. English is the msgid itself (plurals by n == 1)."""
    if _check(lang) == "en":
        return gettext.NullTranslations()
    catalog = _po(lang)
    buf = io.BytesIO()
    from babel.messages.mofile import write_mo

    write_mo(buf, catalog, use_fuzzy=False)  # a fuzzy entry is no translation: English shows
    buf.seek(0)
    return gettext.GNUTranslations(buf)


def template_for(code: MessageCode, lang: str, n: float = 1) -> str | None:
    """The template for ``code`` in ``lang`` (for a counting code: the form for count ``n``);
    None when the catalogue lacks a current one."""
    cat = _catalogue(_check(lang))
    if code.plural is None:
        return code.template if lang == "en" else cat.singles.get((str(code), code.template))
    forms: tuple[str, ...] | None = (
        (code.template, code.plural)
        if lang == "en"
        else cat.plurals.get((str(code), code.template, code.plural))
    )
    if forms is None:
        return None
    index: int = cat.form(_whole(n))
    return forms[min(index, len(forms) - 1)]


def plural_forms(code: MessageCode, lang: str) -> tuple[str, ...] | None:
    """Every form of a counting code in ``lang`` (English: singular, plural); None when the
    catalogue lacks them."""
    if code.plural is None:
        raise ValueError(f"{code} is not a counting message")
    if lang == "en":
        return (code.template, code.plural)
    return _catalogue(_check(lang)).plurals.get((str(code), code.template, code.plural))


def _whole(n: float) -> int:
    """The count a plural rule sees: a whole number as it is, anything else as "many"."""
    return int(n) if float(n).is_integer() else 2


def _check(lang: str) -> str:
    if lang not in LOCALES:
        raise ValueError(f"unknown language {lang!r}; use one of {', '.join(LANGUAGES)}")
    return lang


@lru_cache(maxsize=1024)
def placeholders(template: str) -> frozenset[str]:
    """The parameter names a template uses."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


# ---------------------------------------------------------------------------------------------
# rendering


def render(message: Message, lang: str) -> str:
    """``message`` in ``lang`` (falls back to English where the catalogue has no entry)."""
    code = message.code
    n = _count(message)
    template = template_for(code, _check(lang), n) or template_for(code, "en", n) or code.template
    return _Formatter(lang).vformat(template, (), message.params)


def format_number(value: float | None, lang: str, spec: str = "") -> str:
    """A number as a template's field would show it in ``lang`` (``spec``: ``""``,
    ``".Nf"`` or ``"percent"``), for table cells that are figures, not sentences; None is "—"."""
    return _Formatter(_check(lang))._text(value, spec)


def _count(message: Message) -> float:
    if message.code.count_param is None:
        return 1
    value = message.params[message.code.count_param]
    if isinstance(value, bool) or not isinstance(value, int | float):
        name = message.code.count_param
        raise TypeError(f"message {message.code.value}: count {name} is {value!r}")
    return value


_FIXED = re.compile(r"\.(\d)f")
_JOIN = {"en": (", ", "; ", " "), "zh": ("、", "；", "")}
_AND = {"en": "; and ", "zh": "；并"}


class _Formatter(string.Formatter):
    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.locale = LOCALES[lang]

    def format_field(self, value: Any, format_spec: str) -> str:
        return self._text(value, format_spec)

    def _text(self, value: Any, spec: str) -> str:
        if isinstance(value, Message):
            return render(value, self.lang)
        if isinstance(value, list | tuple):
            comma, semi, space = _JOIN[self.lang]
            joiner = {"semi": semi, "and": _AND[self.lang], "sentences": space}.get(spec, comma)
            return joiner.join(self._text(v, "") for v in value)
        if isinstance(value, Enum):
            return str(value.value)
        if isinstance(value, bool) or value is None:
            return str(value).lower() if isinstance(value, bool) else "—"
        if isinstance(value, int | float):
            return self._number(value, spec)
        return str(value)

    def _number(self, x: float, spec: str) -> str:
        if spec == "percent":
            pattern = "#,##0 %" if self.lang == "en" else "#,##0%"
            return format_percent(x, format=pattern, locale=self.locale)
        fixed = _FIXED.fullmatch(spec)
        if fixed:
            digits = int(fixed.group(1))
            pattern = "#,##0" + ("." + "0" * digits if digits else "")
            return format_decimal(x, format=pattern, locale=self.locale)
        if spec:
            raise ValueError(f"unknown format spec {spec!r} for a number")
        if isinstance(x, int) and -1000 < x < 1000:
            # below a thousand no locale here groups digits, so Babel's locale data (about a
            # twentieth of a second to load, most of `validate`'s start-up) is not needed
            return str(x)
        # up to six significant digits, float noise trimmed: 99.95 → "99.95", 128000 → "128,000"
        trimmed = float(f"{x:.6g}") if isinstance(x, float) else x
        return format_decimal(trimmed, format="#,##0.######", locale=self.locale)
