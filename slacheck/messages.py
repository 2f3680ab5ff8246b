"""Messages: a code with parameters, put into words in the reader's language only at the edge.

A finding, a mismatch or a fix is data until something shows it to a person, exactly as an
input error is a ``Problem`` with a ``Reason``. Each module that says something defines its
codes as a ``MessageCode`` enum, every member declared with ``NC_(code, english_template)``:
the English template is the gettext msgid and the code its msgctxt, so adding a code is one
line in one place and ``make messages`` extracts it into ``slacheck/locale/slacheck.pot``.
Translations live in ``slacheck/locale/<locale>/LC_MESSAGES/slacheck.po``, read directly
(no compile step) the first time a language is asked for.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any, Self, TypeAlias

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent

__all__ = [
    "LANGUAGES",
    "LOCALES",
    "NC_",
    "Message",
    "MessageCode",
    "Param",
    "placeholders",
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


class MessageCode(StrEnum):
    """Base of every module's message codes; a member is ``NAME = NC_("code", "template")``.

    The member's value is the code (stable: JSON consumers and tests match on it); its
    ``template`` is the English wording. Calling a member makes a ``Message``.
    """

    template: str

    def __new__(cls, code: str, template: str) -> Self:
        member = str.__new__(cls, code)
        member._value_ = code
        member.template = template
        return member

    def __call__(self, **params: Param) -> Message:
        """The message with these parameters: exactly the fields its template names."""
        wanted = placeholders(self.template)
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


@lru_cache(maxsize=len(LOCALES))
def _catalogue(lang: str) -> dict[tuple[str, str], str]:
    """(code, English template) → translated template, for complete, non-fuzzy entries."""
    if lang == "en":
        return {}
    path = resources.files("slacheck").joinpath(f"locale/{LOCALES[lang]}/LC_MESSAGES/{_DOMAIN}.po")
    with path.open("rb") as fh:
        catalog = read_po(fh, locale=LOCALES[lang], domain=_DOMAIN)
    out: dict[tuple[str, str], str] = {}
    for m in catalog:
        complete = isinstance(m.id, str) and isinstance(m.string, str) and m.id and m.string
        if complete and not m.fuzzy and m.context:
            out[(m.context, str(m.id))] = str(m.string)
    return out


@lru_cache(maxsize=len(LOCALES))
def translations(lang: str) -> gettext.NullTranslations:
    """The whole catalogue for ``lang`` as a gettext object (contexts and plural forms included),
    for Jinja's i18n extension: document prose in ``{% trans %}`` blocks is translated from the
    same ``.po`` file as every message code. English is the msgid itself (plurals by n == 1)."""
    if _check(lang) == "en":
        return gettext.NullTranslations()
    path = resources.files("slacheck").joinpath(f"locale/{LOCALES[lang]}/LC_MESSAGES/{_DOMAIN}.po")
    with path.open("rb") as fh:
        catalog = read_po(fh, locale=LOCALES[lang], domain=_DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)  # a fuzzy entry is no translation: English shows
    buf.seek(0)
    return gettext.GNUTranslations(buf)


def template_for(code: MessageCode, lang: str) -> str | None:
    """The template for ``code`` in ``lang``; None when the catalogue lacks a current one."""
    if lang == "en":
        return code.template
    return _catalogue(_check(lang)).get((str(code), code.template))


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
    template = template_for(message.code, _check(lang)) or message.code.template
    return _Formatter(lang).vformat(template, (), message.params)


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
        # up to six significant digits, float noise trimmed: 99.95 → "99.95", 128000 → "128,000"
        trimmed = float(f"{x:.6g}") if isinstance(x, float) else x
        return format_decimal(trimmed, format="#,##0.######", locale=self.locale)
