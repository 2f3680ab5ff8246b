"""The bilingual glossary (术语表): one Chinese term for each concept the documents name.

The Chinese text of every document (the clause draft, the acceptance criteria, the compliance
report, the claim letter) and of the terminal comes from the zh catalogue; each concept below is
written there with its one ``zh`` term, never with a ``rejected`` variant. The draft prints the
glossary as its own section. ``ALLOWED_LATIN`` are the Latin-script words a Chinese sentence
may keep outside code type: product and standard names, units and abbreviations (term ids,
field names and contract values are identifiers, and set as such). The tests read this module:
a zh msgstr or a rendered zh document with a rejected variant, or with an English word that is
neither an identifier nor allowed here, fails them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALLOWED_LATIN", "TERMS", "Term"]


@dataclass(frozen=True, slots=True)
class Term:
    """One concept: its English term, its one Chinese term, and the Chinese variants refused."""

    en: str
    zh: str
    rejected: tuple[str, ...] = ()


TERMS: tuple[Term, ...] = (
    Term("service level", "服务等级"),
    Term("service credit", "服务赔偿", ("服务抵扣", "服务积分", "服务信用")),
    Term("availability", "可用性", ("可用率",)),
    Term("excluded call", "排除调用", ("免责调用",)),
    Term("excluded task", "排除任务", ("免责任务",)),
    Term("exclusions", "排除情形", ("免责条款", "免责情形")),
    Term("maintenance window", "维护窗口"),
    Term("calendar month", "自然月", ("日历月",)),
    Term("in-scope call", "适用范围内的调用"),
    Term("primary region", "主地域", ("首选地域",)),
    Term("failover region", "备用地域", ("故障转移地域", "灾备地域")),
    Term("cross-region routing", "跨区调度"),
    Term("data residency", "数据驻留"),
    Term("peak", "峰值", ("高峰",)),
    Term("peak minute", "峰值分钟", ("高峰分钟",)),
    Term("queue wait", "排队等待时间"),
    Term("throttling", "限流", ("节流",)),
    Term("time to first token (TTFT)", "首 Token 时延（TTFT）", ("首字时延", "首令牌时间")),
    Term("token", "Token", ("令牌",)),
    Term("trace data", "追踪数据", ("链路数据", "跟踪数据")),
    Term("span", "跨度", ("链路片段",)),
    Term("root span", "根跨度"),
    Term("row (of a trace file)", "行"),
    Term("upper bound / lower bound", "上界 / 下界"),
    Term("minimum sample size", "最低样本量", ("最小样本量",)),
    Term("nearest rank", "最近秩法"),
    Term("met", "达标"),
    Term("breached", "未达标"),
    Term("indeterminate", "无法判定"),
    Term("not measurable", "无法计量"),
    Term("no data", "无数据"),
    Term("acceptance criteria", "验收标准", ("验收准则",)),
    Term("compliance report", "合规报告"),
    Term("evidence package", "证据包"),
)

#: Latin-script words a Chinese sentence may keep outside code type
ALLOWED_LATIN: frozenset[str] = frozenset(
    {
        # products, formats and standards the documents name
        "slacheck", "OpenTelemetry", "Langfuse", "LangSmith", "OTLP", "Parquet", "JSON", "CSV",
        "PDF", "HTML", "Markdown", "JUnit", "YAML", "HTTP", "SDK", "IANA", "UTC", "SHA",
        "Python", "Java", "Spark", "Pango", "weasyprint", "fontconfig", "Noto", "DejaVu",
        "Sans", "CJK", "Debian", "Ubuntu", "Fedora", "macOS", "duckdb", "DuckDB",
        # abbreviations of the trade, and units
        "SLA", "SLO", "AI", "ID", "TTFT", "Token", "ms", "s", "CNY", "USD", "GB",
        # order-statistic notation: p95, n values, the k-th
        "p", "n", "k",
    }
)  # fmt: skip
