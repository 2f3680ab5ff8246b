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

from slacheck.contract.model import (
    BusiestMinutesPeak,
    Degradation,
    MaintenanceWindow,
    PeakDefinition,
    RequestRatePeak,
    UtilisationPeak,
)
from slacheck.messages import Message
from slacheck.messages import render as render_message

__all__ = [
    "LABELS",
    "LANGS",
    "NAMES",
    "POINT_DEFINITIONS",
    "Formatter",
    "Lang",
    "check_lang",
    "md_cell",
]

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")


def check_lang(lang: str) -> Lang:
    """``lang`` as a ``Lang``; a ``UsageError`` for anything else."""
    from slacheck.errors import UsageError

    if lang == "en":
        return "en"
    if lang == "zh":
        return "zh"
    raise UsageError(f"unknown language {lang!r}; use en or zh")


# ---------------------------------------------------------------------------------------------
# Names of enum values and codes, per language

NAMES: dict[str, dict[str, dict[str, str]]] = {
    "verdict": {
        "en": {
            "met": "met",
            "breached": "breached",
            "indeterminate": "indeterminate",
            "not_measurable": "not measurable",
            "no_data": "no data",
        },
        "zh": {
            "met": "达标",
            "breached": "未达标",
            "indeterminate": "无法判定",
            "not_measurable": "无法计量",
            "no_data": "无数据",
        },
    },
    "point": {
        "en": {
            "server_processing": "server processing time",
            "time_to_first_token": "time to first token (TTFT)",
            "full_response": "full response time",
            "task_end_to_end": "agent task end-to-end time",
            "output_tokens_per_second": "output speed (tokens per second)",
        },
        "zh": {
            "server_processing": "服务端处理时间",
            "time_to_first_token": "首 Token 时延（TTFT）",
            "full_response": "完整响应时间",
            "task_end_to_end": "智能体任务端到端时间",
            "output_tokens_per_second": "输出速度（每秒输出 Token 数）",
        },
    },
    "tps_basis": {
        "en": {
            "whole_request": "output tokens over the whole request (duration)",
            "after_first_token": "output tokens over the generation after the first token "
            "(duration − time to first token)",
            "unstated": "not stated",
        },
        "zh": {
            "whole_request": "输出 Token 数除以整个请求时长",
            "after_first_token": "输出 Token 数除以首 Token 之后的生成时长（时长 − 首 Token 时延）",
            "unstated": "未约定",
        },
    },
    "window": {
        "en": {
            "calendar_month": "calendar month",
            "calendar_quarter": "calendar quarter",
            "rolling_30_days": "rolling 30 days",
        },
        "zh": {
            "calendar_month": "自然月",
            "calendar_quarter": "自然季度",
            "rolling_30_days": "滚动 30 天",
        },
    },
    "method": {
        "en": {"nearest_rank": "nearest rank", "linear": "linear interpolation"},
        "zh": {"nearest_rank": "最近秩法", "linear": "线性插值法"},
    },
    "routing": {
        "en": {
            "never": "never",
            "peak_only": "at peak only",
            "always": "at any time",
        },
        "zh": {"never": "不得跨区调度", "peak_only": "仅限峰值时段", "always": "任何时段均可"},
    },
    "decider": {
        "en": {"vendor": "the vendor", "customer": "the customer", "joint": "both parties jointly"},
        "zh": {"vendor": "供应商", "customer": "客户", "joint": "双方共同"},
    },
    "basis": {
        "en": {
            "per_request": "per request",
            "per_task": "per agent task",
            "per_token": "per token",
        },
        "zh": {"per_request": "按请求计", "per_task": "按智能体任务计", "per_token": "按 Token 计"},
    },
    "unit_of_basis": {
        "en": {"per_request": "requests", "per_task": "tasks", "per_token": "tokens"},
        "zh": {"per_request": "次请求", "per_task": "个任务", "per_token": "个 Token"},
    },
    "period": {
        "en": {"second": "second", "minute": "minute", "hour": "hour", "day": "day"},
        "zh": {"second": "秒", "minute": "分钟", "hour": "小时", "day": "天"},
    },
    "policy": {
        "en": {
            "smaller_model": "serve a smaller model",
            "cache": "serve cached answers",
            "queue": "queue calls",
            "none": "no policy written",
        },
        "zh": {
            "smaller_model": "切换至较小模型",
            "cache": "返回缓存结果",
            "queue": "请求排队",
            "none": "未约定降级策略",
        },
    },
    "severity": {
        "en": {"high": "high", "medium": "medium", "low": "low"},
        "zh": {"high": "高", "medium": "中", "low": "低"},
    },
    "status": {
        "en": {
            "measurable": "measurable",
            "derivable": "derivable",
            "partial": "partial",
            "not_measurable": "not measurable",
            "no_data": "no data",
            "not_applicable": "not applicable",
        },
        "zh": {
            "measurable": "可计量",
            "derivable": "可推导",
            "partial": "部分可计量",
            "not_measurable": "无法计量",
            "no_data": "无数据",
            "not_applicable": "不适用",
        },
    },
    "item": {
        "en": {
            "1": "model time per step",
            "2": "network round trip per step",
            "3": "tool wait per step",
            "4": "task total time",
            "5": "contracted measurement point",
            "6": "region list and cross-region rights",
            "7": "peak degradation",
            "8": "rate-limit basis",
        },
        "zh": {
            "1": "每步模型时间",
            "2": "每步网络往返时间",
            "3": "每步工具等待时间",
            "4": "任务总时长",
            "5": "合同计量点",
            "6": "地域清单与跨区调度权",
            "7": "峰值降级",
            "8": "限流口径",
        },
    },
    "kind": {
        "en": {
            "latency": "latency",
            "time_slice": "latency (time slices)",
            "peak": "peak degradation",
            "regions": "region list",
            "routing": "cross-region routing",
            "residency": "data residency",
            "rate_limit": "rate limit",
            "availability": "availability",
        },
        "zh": {
            "latency": "时延",
            "time_slice": "时延（时间片）",
            "peak": "峰值降级",
            "regions": "地域清单",
            "routing": "跨区调度",
            "residency": "数据驻留",
            "rate_limit": "限流",
            "availability": "服务可用性",
        },
    },
    "part": {
        "en": {
            "model": "model (server processing)",
            "network": "network round trip",
            "queue": "queue wait",
            "unsplit": "model call, not split",
            "tool": "tool calls",
            "retrieval": "retrieval",
            "retries": "retries and backoff",
            "gaps": "unaccounted gaps",
        },
        "zh": {
            "model": "模型（服务端处理）",
            "network": "网络往返",
            "queue": "排队等待",
            "unsplit": "模型调用（未拆分）",
            "tool": "工具调用",
            "retrieval": "检索",
            "retries": "重试与退避",
            "gaps": "未归属间隙",
        },
    },
    "set_aside": {
        "en": {
            "missing_id": "missing task or span id",
            "missing_timestamp": "missing timestamp",
            "unparseable_timestamp": "unparseable timestamp",
            "unparseable_number": "unparseable number",
            "end_before_start": "end before start",
            "duplicate_span_id": "duplicate span id",
            "negative_tokens": "negative token count",
            "impossible_value": "impossible value",
        },
        "zh": {
            "missing_id": "缺少任务或 Span 标识",
            "missing_timestamp": "缺少时间戳",
            "unparseable_timestamp": "时间戳无法解析",
            "unparseable_number": "数值无法解析",
            "end_before_start": "结束时间早于开始时间",
            "duplicate_span_id": "Span 标识重复",
            "negative_tokens": "Token 数为负",
            "impossible_value": "数值不可能成立",
        },
    },
    "exclusion": {
        "en": {
            "maintenance": "maintenance window",
            "long_input": "input over the token limit",
            "downgraded_tier": "downgraded service tier",
            "customer_error": "customer-caused error",
        },
        "zh": {
            "maintenance": "维护窗口",
            "long_input": "输入超出 Token 上限",
            "downgraded_tier": "降级服务等级",
            "customer_error": "客户原因错误",
        },
    },
    "role": {
        "en": {
            "primary": "primary",
            "failover": "failover",
            "unlisted": "not in the contract's list",
            "unknown": "not recorded",
        },
        "zh": {
            "primary": "主地域",
            "failover": "备用地域",
            "unlisted": "不在合同清单内",
            "unknown": "未记录",
        },
    },
    "day": {
        "en": {
            "mon": "Monday",
            "tue": "Tuesday",
            "wed": "Wednesday",
            "thu": "Thursday",
            "fri": "Friday",
            "sat": "Saturday",
            "sun": "Sunday",
        },
        "zh": {
            "mon": "周一",
            "tue": "周二",
            "wed": "周三",
            "thu": "周四",
            "fri": "周五",
            "sat": "周六",
            "sun": "周日",
        },
    },
}

#: The precise definition of each measurement point: where the clock starts and stops.
POINT_DEFINITIONS: dict[str, dict[str, str]] = {
    "en": {
        "server_processing": (
            "the time the vendor's service spends on one call, from receipt of the complete "
            "request at the vendor's edge to dispatch of the last byte of the response, as the "
            "vendor reports it per call (for example the openai-processing-ms response header); "
            "network transit and any queueing before the vendor's edge are not included"
        ),
        "time_to_first_token": (
            "the time from the moment the customer's client sends a request to the moment it "
            "receives the first content chunk of the response, measured at the client; it "
            "applies to streaming calls only"
        ),
        "full_response": (
            "the time from the moment the customer's client sends a request to the moment it "
            "receives the last byte of the response, measured at the client; network round trip "
            "and queueing on either side are included"
        ),
        "task_end_to_end": (
            "the time one agent task takes from its start to its end, over all of its steps: "
            "every model call, network round trip, tool call, retry and queue wait is included; "
            "it is measured by the task's root span or, where there is none, from the start of "
            "the task's first span to the end of its last"
        ),
        "output_tokens_per_second": (
            "the output tokens of one call divided by its generation time in seconds"
        ),
    },
    "zh": {
        "server_processing": (
            "供应商服务处理单次调用所用的时间：自供应商接入端收到完整请求起，至发出响应最后一个字节止，"
            "以供应商逐次上报的数值为准（例如响应头 openai-processing-ms）；不含网络传输时间，"
            "亦不含请求到达供应商接入端之前的排队时间"
        ),
        "time_to_first_token": (
            "自客户端发出请求起，至客户端收到响应的首个内容块止的时间，在客户端计量；仅适用于流式调用"
        ),
        "full_response": (
            "自客户端发出请求起，至客户端收到响应最后一个字节止的时间，在客户端计量；"
            "包含网络往返时间及双方的排队时间"
        ),
        "task_end_to_end": (
            "一次智能体任务自开始至结束的全部时间，涵盖其所有步骤：每次模型调用、网络往返、工具调用、"
            "重试及排队等待均计入；以任务根 Span 的时长计量，无根 Span 时以任务首个 Span 的开始"
            "至最后一个 Span 的结束计量"
        ),
        "output_tokens_per_second": "单次调用的输出 Token 数除以其生成时间（秒）",
    },
}

#: Short labels used by shared partials (table headers, captions), per language.
LABELS: dict[str, dict[str, str]] = {
    "en": {
        "term": "Term",
        "kind": "Kind",
        "window": "Window",
        "verdict": "Verdict",
        "observed": "Observed",
        "good_total": "Good / total",
        "criterion": "Criterion",
        "examples": "Example task ids",
        "where_rows": "Examples (file: row)",
        "notes": "Notes",
        "partial": "partial window",
        "item": "Item",
        "numerator": "Numerator",
        "denominator": "Denominator",
        "ratio": "Ratio",
        "status": "Status",
        "fix": "How to close the gap",
        "schema_change": "needs a trace-schema change",
        "computation": "a computation from recorded fields",
        "file": "File",
        "format": "Format",
        "rows": "Rows",
        "sha256": "SHA-256",
        "contract": "Contract",
        "vendor": "Vendor",
        "customer": "Customer",
        "period": "Period",
        "time_zone": "Time zone",
        "effective": "Effective",
        "open_ended": "open-ended",
        "none": "none",
        "not_stated": "not stated",
        "yes": "yes",
        "no": "no",
        "page": "Page",
        "of": "of",
        "code": "Code",
        "severity": "Severity",
        "where": "Clause",
        "finding": "Finding",
        "suggestion": "Suggested wording",
        "part": "Part",
        "per_task": "Per task (mean)",
        "share": "Share",
        "reason": "Reason",
        "count": "Rows",
        "credit": "Credit owed",
        "claim_by": "Claim by",
        "availability": "Availability",
        "no_results": "No results in the period.",
        "model": "Model (as recorded)",
        "calls": "Model calls",
        "in_scope": "In scope",
        "region": "Serving region",
        "role": "Role",
    },
    "zh": {
        "term": "条款",
        "kind": "类别",
        "window": "统计周期",
        "verdict": "结论",
        "observed": "实测值",
        "good_total": "合格数 / 总数",
        "criterion": "判定标准",
        "examples": "示例任务 ID",
        "where_rows": "示例（文件：行）",
        "notes": "说明",
        "partial": "周期数据不完整",
        "item": "检查项",
        "numerator": "分子",
        "denominator": "分母",
        "ratio": "比例",
        "status": "状态",
        "fix": "补齐方式",
        "schema_change": "需变更追踪数据结构（新增埋点）",
        "computation": "可由现有字段计算",
        "file": "文件",
        "format": "格式",
        "rows": "行数",
        "sha256": "SHA-256",
        "contract": "合同编号",
        "vendor": "供应商",
        "customer": "客户",
        "period": "报告期",
        "time_zone": "时区",
        "effective": "有效期",
        "open_ended": "无固定终止日",
        "none": "无",
        "not_stated": "未约定",
        "yes": "是",
        "no": "否",
        "page": "第",
        "of": "页，共",
        "code": "编号",
        "severity": "严重程度",
        "where": "对应条款",
        "finding": "问题",
        "suggestion": "建议措辞",
        "part": "组成部分",
        "per_task": "每任务平均",
        "share": "占比",
        "reason": "原因",
        "count": "行数",
        "credit": "可申请服务赔偿",
        "claim_by": "索赔截止日",
        "availability": "可用性",
        "no_results": "报告期内无检查结果。",
        "model": "模型（追踪记录原值）",
        "calls": "模型调用数",
        "in_scope": "其中在适用范围内",
        "region": "服务地域",
        "role": "角色",
    },
}

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

    def count(self, n: Any) -> str:
        """1347 → "1,347"."""
        if n is None:
            return "—"
        return f"{int(n):,}"

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

    def observed(self, v: Any, unit: str) -> str:
        """A result's observed figure with its unit."""
        if v is None:
            return "—"
        if unit == "ms":
            return self.duration(v)
        if unit == "%":
            return self.pct(v, 3)
        if unit == "tokens/s":
            return f"{self.number(v, 1)} Token/秒" if self.zh else f"{self.number(v, 1)} tokens/s"
        if unit == "calls":
            return f"{self.count(v)} 次调用" if self.zh else f"{self.count(v)} calls"
        if unit == "slices %":
            return self.pct(v, 2)
        return f"{self.number(v)} {unit}"

    def percentile(self, p: Any) -> str:
        """95 → "p95"; 99.9 → "p99.9"."""
        return f"p{_trim(float(p), 3)}"

    # ---- time

    def date(self, d: Any) -> str:
        """A calendar date: en "1 July 2026", zh "2026年7月1日"."""
        if d is None:
            return "—"
        if isinstance(d, str):
            d = dt.date.fromisoformat(d)
        if isinstance(d, dt.datetime):
            d = d.date()
        if self.zh:
            return f"{d.year}年{d.month}月{d.day}日"
        return f"{d.day} {_MONTHS_EN[d.month - 1]} {d.year}"

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

    def listing(self, items: Any) -> str:
        values = [str(x) for x in items]
        if not values:
            return LABELS[self.lang]["none"]
        return ("、" if self.zh else ", ").join(values)

    # ---- the registry Jinja sees

    def filters(self) -> Mapping[str, Callable[..., str]]:
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
            # every other name group as `<group>_name`: {{ rl.basis | basis_name }}
            **{
                f"{group}_name": (lambda v, _g=group: self.name(_g, v))
                for group in NAMES
                if group not in ("verdict", "point")
            },
        }
