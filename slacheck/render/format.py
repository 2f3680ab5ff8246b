"""Jinja filters that format contract and result values by type, in English or Chinese."""

# Templates never type a number, region, date or policy: they pass the contract's value through
# one of these filters. Every filter takes the raw value (ms, percent, microseconds, enum) and
# returns text in the document's language; datetimes are shown in the contract's time zone.
# Nothing here reads the clock, so the same inputs always give the same text.

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal
from zoneinfo import ZoneInfo

from markupsafe import Markup

from slacheck.contract.criterion import (
    denominator,
    latency_rule,
    numerator,
    pass_rule,
    prose,
    readings_of,
    windowed,
)
from slacheck.contract.model import (
    BusiestMinutesPeak,
    Contract,
    Degradation,
    LatencyTerm,
    MaintenanceWindow,
    PeakDefinition,
    RequestRatePeak,
    UtilisationPeak,
)
from slacheck.messages import LOCALES, Message
from slacheck.messages import render as render_message
from slacheck.render.figure import apart
from slacheck.render.words import LABELS, NAMES, POINT_DEFINITIONS

__all__ = [
    "LABELS",
    "LANGS",
    "NAMES",
    "POINT_DEFINITIONS",
    "Formatter",
    "Lang",
    "check_lang",
    "md_cell",
    "window_kind",
]

Lang = Literal["en", "zh"]


def window_kind(label: Any) -> str:
    """The kind of window a result's label names (``windows.py`` writes them): "2026-07" a
    calendar month, "2026-Q3" a calendar quarter, "2026-07-01/30d" a rolling 30-day window."""
    text = str(label)
    if text.endswith("/30d"):
        return "rolling_30_days"
    if "-Q" in text:
        return "calendar_quarter"
    return "calendar_month"


LANGS: tuple[Lang, ...] = ("en", "zh")


def check_lang(lang: str) -> Lang:
    """``lang`` as a ``Lang``; a ``UsageError`` for anything else."""
    from slacheck.errors import UsageError

    if lang == "en":
        return "en"
    if lang == "zh":
        return "zh"
    raise UsageError(f"unknown language {lang!r}; use en or zh")


_MONTHS_EN = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


_ENTITY_START = re.compile(r"&(?=#?\w+;)")


def md_text(value: object) -> Markup:
    """Untrusted text made inert in Markdown prose: no tag or entity a viewer would render.

    ``<`` and ``>`` become entities, and so does an ``&`` that would open one; quotes and
    other ``&`` stay as they are, so the Markdown reads as plain text. Markup (our own
    escaped output, e.g. a macro's) passes unchanged. The Markdown template family runs every
    ``{{ … }}`` through this (the environment's ``finalize``).
    """
    if isinstance(value, Markup):
        return value
    text = "" if value is None else str(value)
    text = _ENTITY_START.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")
    # terminal control characters (a Markdown table is often read in a terminal) written out
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return Markup(text)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def md_cell(value: object) -> Markup:
    """Untrusted text made inert in a Markdown table cell: no HTML, links, code or cell break.

    :func:`md_text`, then backslash-escapes what would open a link, code span or table cell,
    and folds newlines into spaces. Every Markdown table cell escapes through this.
    """
    text = str(md_text(value))
    for ch in ("\\", "|", "[", "]", "`"):
        text = text.replace(ch, "\\" + ch)
    return Markup(text.replace("\r", " ").replace("\n", " "))


def _trim(x: float, digits: int) -> str:
    """``x`` with up to ``digits`` decimals, trailing zeros dropped, thousands separated."""
    text = f"{x:,.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _value(v: Any) -> str:
    return str(v.value) if isinstance(v, Enum) else str(v)


@dataclass(frozen=True, slots=True)
class Formatter:
    """Formats values for one document: its language and the contract's time zone."""

    lang: Lang
    zone: ZoneInfo

    @property
    def zh(self) -> bool:
        return self.lang == "zh"

    # ---- names

    def name(self, group: str, value: Any) -> str:
        """The label of an enum value or code in this language (the raw value if unknown)."""
        key = _value(value)
        if group == "set_aside" and ":" in key:  # impossible_value:ttft_ms → name (field)
            base, field = key.split(":", 1)
            return f"{self.name(group, base)} ({field})"
        return NAMES[group][self.lang].get(key, key.replace("_", " "))

    def verdict(self, v: Any) -> str:
        return self.name("verdict", v)

    def point(self, v: Any) -> str:
        return self.name("point", v)

    def point_definition(self, v: Any) -> str:
        return POINT_DEFINITIONS[self.lang][_value(v)]

    # ---- numbers

    @property
    def locale(self) -> str:
        """The Babel locale of this document's language: "en", "zh_CN"."""
        return LOCALES[self.lang]

    def count(self, n: Any) -> str:
        """1347 → "1,347" (the locale's grouping, from Babel)."""
        if n is None:
            return "—"
        from babel.numbers import format_decimal

        return str(format_decimal(int(n), format="#,##0", locale=self.locale))

    def number(self, x: Any, digits: int = 2) -> str:
        """A plain number: 99.95 → "99.95", 600.0 → "600"."""
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return "—"
        return _trim(float(x), digits)

    def ms(self, v: Any) -> str:
        """Milliseconds as milliseconds: 1250 → "1,250 ms" (zh "1,250 毫秒")."""
        if v is None:
            return "—"
        x = float(v)
        text = _trim(x, 0 if abs(x) >= 100 else 1)
        return f"{text} 毫秒" if self.zh else f"{text} ms"

    def duration(self, v: Any) -> str:
        """Milliseconds for people: 850 → "850 ms", 1250 → "1.25 s", 32744 → "32.7 s"."""
        if v is None:
            return "—"
        x = float(v)
        if abs(x) < 1000:
            return self.ms(x)
        s = x / 1000
        text = _trim(s, 2 if abs(s) < 10 else 1 if abs(s) < 100 else 0)
        return f"{text} 秒" if self.zh else f"{text} s"

    def ms_long(self, v: Any) -> str:
        """A contract threshold, exact and readable: 30000 → "30,000 ms (30 s)"."""
        if v is None:
            return "—"
        exact = self.ms(v)
        if float(v) < 1000:
            return exact
        return f"{exact}（{self.duration(v)}）" if self.zh else f"{exact} ({self.duration(v)})"

    def pct(self, v: Any, digits: int = 3) -> str:
        """A value already in percent: 99.9 → "99.9 %" (zh "99.9%")."""
        if v is None:
            return "—"
        text = _trim(float(v), digits)
        return f"{text}%" if self.zh else f"{text} %"

    def ratio(self, v: Any, digits: int = 1) -> str:
        """A share 0..1 as a percentage: 0.7995 → "80.0 %"."""
        if v is None:
            return "—"
        text = f"{float(v) * 100:.{digits}f}"
        return f"{text}%" if self.zh else f"{text} %"

    def observed(self, v: Any, unit: str, limit: float | None = None) -> str:
        """A result's observed figure with its unit; ``limit``: what it is judged against
        (``render.figure.limit_of``), from which a figure that is not the limit is always told
        apart, with more decimals where its usual ones would show the limit (``apart``)."""
        if v is None:
            return "—"
        text = self._observed(float(v), unit, None)
        if limit is None or unit == "calls" or float(v) == float(limit):
            return text
        if text != self._observed(float(limit), unit, None):
            return text
        # in ms beside ms, not seconds: a threshold of 2,000 ms reads "2,000 ms (2 s)"
        least = 0 if unit == "ms" else 3 if unit == "%" else 1 if unit == "tokens/s" else 2
        return apart(float(v), float(limit), lambda x, d: self._observed(x, unit, d), least)

    def _observed(self, x: float, unit: str, digits: int | None) -> str:
        """The observed figure ``x`` in ``unit``: with its usual decimals (``digits`` None), or
        with ``digits`` (milliseconds then stay milliseconds)."""
        if unit == "ms":
            if digits is None:
                return self.duration(x)
            text = _trim(x, digits)
            return f"{text} 毫秒" if self.zh else f"{text} ms"
        if unit == "%":
            return self.pct(x, 3 if digits is None else digits)
        if unit == "tokens/s":
            text = self.number(x, 1 if digits is None else digits)
            return f"{text} Token/秒" if self.zh else f"{text} tokens/s"
        if unit == "calls":
            return f"{self.count(x)} 次调用" if self.zh else f"{self.count(x)} calls"
        d = 2 if digits is None else digits
        if unit in ("% of slices", "slices %"):  # a time-slice term: the share of slices passing
            if self.zh:
                return f"{self.pct(x, d)}（时间片）"
            return f"{self.number(x, d)} % of slices"
        return f"{self.number(x, d)} {unit}"

    def percentile(self, p: Any) -> str:
        """95 → "p95"; 99.9 → "p99.9"."""
        return f"p{_trim(float(p), 3)}"

    # ---- time

    def date(self, d: Any) -> str:
        """A calendar date, by the locale (Babel): en "1 July 2026", zh "2026年7月1日"."""
        if d is None:
            return "—"
        if isinstance(d, str):
            d = dt.date.fromisoformat(d)
        if isinstance(d, dt.datetime):
            d = d.date()
        from babel.dates import format_date

        # Babel's long date for Chinese; day-month-year in English, as contracts write it
        return str(format_date(d, "long" if self.zh else "d MMMM y", locale=self.locale))

    def _to_local(self, v: Any) -> dt.datetime:
        if isinstance(v, int):
            base = dt.datetime.fromtimestamp(v // 1_000_000, tz=dt.UTC)
            return base.replace(microsecond=v % 1_000_000).astimezone(self.zone)
        if isinstance(v, str):
            v = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        if not isinstance(v, dt.datetime):
            raise TypeError(f"not a datetime: {v!r}")
        if v.tzinfo is None:  # a naive contract datetime is in the contract's zone
            return v.replace(tzinfo=self.zone)
        return v.astimezone(self.zone)

    def datetime(self, v: Any) -> str:
        """A moment (UTC microseconds, ISO text or datetime) in the contract's zone, to the
        minute, with the UTC offset: "2026-07-21 10:45 (UTC+08:00)"."""
        if v is None:
            return "—"
        local = self._to_local(v)
        off = local.utcoffset() or dt.timedelta(0)
        minutes = int(off.total_seconds() // 60)
        sign = "+" if minutes >= 0 else "−"
        hh, mm = divmod(abs(minutes), 60)
        return f"{local:%Y-%m-%d %H:%M} (UTC{sign}{hh:02d}:{mm:02d})"

    def time(self, t: dt.time) -> str:
        return f"{t:%H:%M}"

    def window(self, label: Any) -> str:
        """A window label: "2026-07" → "July 2026" / "2026年7月"; "2026-Q3" → "Q3 2026" /
        "2026年第三季度"; anything else as it is."""
        text = str(label)
        if len(text) == 7 and text[4] == "-" and text[:4].isdigit() and text[5:].isdigit():
            year, month = int(text[:4]), int(text[5:])
            if 1 <= month <= 12:
                return f"{year}年{month}月" if self.zh else f"{_MONTHS_EN[month - 1]} {year}"
        if len(text) == 7 and text[4:6] == "-Q" and text[6] in "1234":
            if self.zh:
                return f"{text[:4]}年第{'一二三四'[int(text[6]) - 1]}季度"
            return f"{text[5:]} {text[:4]}"
        return text

    def window_short(self, label: Any) -> str:
        """A compact window label for table headers and chart axes: "2026-07" → "Jul 2026"."""
        text = str(label)
        if len(text) == 7 and text[4] == "-" and text[5:].isdigit():
            month = int(text[5:])
            if 1 <= month <= 12:
                if self.zh:
                    return f"{text[:4]}年{month}月"
                return f"{_MONTHS_EN[month - 1][:3]} {text[:4]}"
        return self.window(text)

    def zone_name(self, tz: Any) -> str:
        """The contract's time zone, or UTC with a note that it is unstated."""
        if tz:
            return str(tz)
        return "UTC（合同未约定）" if self.zh else "UTC (not stated in the contract)"

    # ---- clauses

    def peak_definition(self, d: PeakDefinition) -> str:
        """How peak is recognised, in words, from the contract's definition."""
        if isinstance(d, RequestRatePeak):
            n = self.number(d.requests_per_minute)
            if self.zh:
                return f"请求数超过每分钟 {n} 次的任一分钟"
            return f"any minute with more than {n} requests"
        if isinstance(d, UtilisationPeak):
            p, cap = self.pct(d.percent), self.number(d.capacity_requests_per_minute)
            if self.zh:
                return f"利用率超过合同容量（每分钟 {cap} 次请求）{p} 的任一分钟"
            return (
                f"any minute in which utilisation exceeds {p} of the contracted capacity of "
                f"{cap} requests per minute"
            )
        assert isinstance(d, BusiestMinutesPeak)
        p = self.pct(d.percent)
        if self.zh:
            return f"每个自然月内有流量的分钟中，请求数最多的前 {p}"
        return f"the busiest {p} of the minutes with traffic in each calendar month"

    def degradation(self, deg: Degradation | None) -> str:
        """The one peak degradation policy and its parameters, in words."""
        if deg is None:
            return self.name("policy", "none")
        if deg.smaller_model is not None:
            m = deg.smaller_model.fallback_model
            if self.zh:
                return f"切换至较小模型：由 {m} 代为应答"
            return f"serve a smaller model: calls are answered by {m}"
        if deg.cache is not None:
            s = self.count(deg.cache.max_staleness_seconds)
            if self.zh:
                return f"返回缓存结果：缓存应答的时效不超过 {s} 秒"
            return f"serve cached answers no older than {s} seconds"
        assert deg.queue is not None
        w = self.ms_long(deg.queue.max_wait_ms)
        if self.zh:
            return f"请求排队：单次调用排队等待不超过 {w}"
        return f"queue calls: no call waits longer than {w} in the queue"

    def maintenance(self, m: MaintenanceWindow) -> str:
        """A maintenance window in the contract's zone."""
        if m.weekly is not None:
            w = m.weekly
            days = ("、" if self.zh else ", ").join(self.name("day", d) for d in w.days)
            dur = self.count(w.duration_minutes)
            if self.zh:
                return f"每周{days} {self.time(w.start)} 起，持续 {dur} 分钟"
            return f"every {days} from {self.time(w.start)} for {dur} minutes"
        start, end = self.datetime(m.start), self.datetime(m.end)
        return f"{start} 至 {end}" if self.zh else f"{start} to {end}"

    def region(self, r: Any) -> str:
        """A region with its jurisdiction: "cn-shanghai (CN, Shanghai)"."""
        j = r.jurisdiction
        if j is None:
            return str(r.name)
        where = j.country + (f", {j.province}" if j.province else "")
        return f"{r.name}（{where}）" if self.zh else f"{r.name} ({where})"

    def threshold(self, v: Any, point: Any) -> str:
        """A latency term's threshold in its unit: ms (exact and readable) or tokens/s."""
        if _value(point) == "output_tokens_per_second":
            return self.observed(v, "tokens/s")
        return self.ms_long(v)

    def yes_no(self, v: Any) -> str:
        return LABELS[self.lang]["yes" if v else "no"]

    def message(self, m: Message) -> str:
        """A finding, mismatch or fix in this language, from the message catalogue."""
        return render_message(m, self.lang)

    def rule_prose(self, term: LatencyTerm, contract: Contract) -> str:
        """A latency term's rule as its clause states it: the very rule the check evaluates
        (``contract.criterion``), in this language."""
        return self.message(prose(latency_rule(contract, term)))

    def rule_line(self, term: LatencyTerm, contract: Contract) -> str:
        """A latency term's criterion line with its window and zone, as the check states it."""
        return self.message(windowed(latency_rule(contract, term)))

    def listing(self, items: Any) -> str:
        values = [str(x) for x in items]
        if not values:
            return LABELS[self.lang]["none"]
        return ("、" if self.zh else ", ").join(values)

    # ---- the registry Jinja sees

    def filters(self) -> Mapping[str, Callable[..., Any]]:
        return {
            "verdict": self.verdict,
            "point": self.point,
            "point_definition": self.point_definition,
            "count": self.count,
            "number": self.number,
            "ms": self.ms,
            "ms_long": self.ms_long,
            "duration": self.duration,
            "pct": self.pct,
            "ratio": self.ratio,
            "observed": self.observed,
            "percentile": self.percentile,
            "date": self.date,
            "datetime": self.datetime,
            "time": self.time,
            "window": self.window,
            "window_short": self.window_short,
            "zone_name": self.zone_name,
            "peak_definition": self.peak_definition,
            "degradation": self.degradation,
            "maintenance": self.maintenance,
            "region": self.region,
            "yes_no": self.yes_no,
            "listing": self.listing,
            "msg": self.message,
            "md": md_cell,
            "threshold": self.threshold,
            "rule_prose": self.rule_prose,
            "rule_line": self.rule_line,
            "readings": readings_of,
            "rule_numerator": lambda t, c: self.message(numerator(latency_rule(c, t))),
            "rule_denominator": lambda t, c: self.message(denominator(latency_rule(c, t))),
            "rule_pass": lambda t, c: self.message(pass_rule(latency_rule(c, t))),
            # every other name group as `<group>_name`: {{ rl.basis | basis_name }}
            **{
                f"{group}_name": (lambda v, _g=group: self.name(_g, v))
                for group in NAMES
                if group not in ("verdict", "point")
            },
        }
