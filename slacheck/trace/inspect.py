"""Summarise ingested traces: counts, time range, kinds, field coverage, rows set aside."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import ibis
import ibis.expr.datatypes as idt

from slacheck.trace.results import Quality, SourceFile
from slacheck.trace.schema import COLUMNS
from slacheck.trace.status import status_of
from slacheck.trace.traces import Traces

_SKIP = {"source_file", "source_ref", "defect", "evidence"}


@dataclass(frozen=True, slots=True)
class Coverage:
    field: str
    non_null: int
    applicable: int

    @property
    def fraction(self) -> float | None:
        return self.non_null / self.applicable if self.applicable else None


#: the facts ``traces inspect`` traces to their sources: kind over every span, the rest over
#: the model-call spans
FACTS: tuple[str, ...] = (
    "kind",
    "provider",
    "endpoint",
    "request_model",
    "response_model",
    "ttft_ms",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "start_us",
    "end_us",
)
#: the source of a value no convention supplied: a table's column (a mapping, canonical Parquet)
FROM_COLUMN = "column"
#: the source of a timestamp the span itself carries
FROM_SPAN = "span"
#: a span no kind row claimed (other, or the task at a root), or a table's kind column
UNCLAIMED = "unclaimed"


@dataclass(frozen=True, slots=True)
class FactSources:
    """Which source supplied one fact, on how many spans, and how many lack it."""

    field: str
    spans: int
    missing: int
    sources: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"spans": self.spans, "missing": self.missing, "sources": dict(self.sources)}


@dataclass(frozen=True, slots=True)
class TraceSummary:
    spans: int
    tasks: int
    kinds: dict[str, int]
    start_us: int | None
    end_us: int | None
    coverage: tuple[Coverage, ...]
    quality: Quality
    sources: tuple[SourceFile, ...]
    #: model calls per status class, and per class what classified how many (``status_source``)
    statuses: dict[str, dict[str, int]] = field(default_factory=dict)
    facts: tuple[FactSources, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        def iso(us: int | None) -> str | None:
            if us is None:
                return None
            return dt.datetime.fromtimestamp(us / 1e6, tz=dt.UTC).isoformat().replace("+00:00", "Z")

        return {
            "spans": self.spans,
            "tasks": self.tasks,
            "kinds": dict(sorted(self.kinds.items())),
            "time_range": {"start": iso(self.start_us), "end": iso(self.end_us)},
            "coverage": {c.field: c.fraction for c in self.coverage},
            "coverage_counts": {
                c.field: {"non_null": c.non_null, "applicable": c.applicable} for c in self.coverage
            },
            "set_aside": dict(sorted(self.quality.set_aside.items())),
            "statuses": {
                k: {"calls": sum(v.values()), "by_source": dict(sorted(v.items()))}
                for k, v in sorted(self.statuses.items())
            },
            "facts": {f.field: f.to_dict() for f in self.facts},
            "quality": self.quality.to_dict(),
            "sources": [
                {
                    "path": s.path,
                    "format": s.format,
                    "sha256": s.sha256,
                    "rows": s.rows,
                    "read_by": s.read_by,
                    "fallback": s.fallback,
                }
                for s in self.sources
            ],
        }


def _statuses(t: Any) -> dict[str, dict[str, int]]:
    """Model calls per status class (the legacy ``error`` read as the metering reads it; a
    gateway cache hit is its own class, ``cached``; no status: ``unknown``) and per class the
    source that classified them (``none`` for a call that did not fail)."""
    llm = t.filter(t.kind == "llm")
    cls, src = status_of(llm.status, llm.http_status, llm.error_type, llm.status_source)
    cls = ibis.cases(
        (llm.response_cached.fill_null(False), "cached"),
        (cls.isnull(), "unknown"),
        else_=cls,
    )
    x = llm.select(c=cls, s=src.fill_null("none"))
    rows = x.group_by(["c", "s"]).aggregate(n=x.count()).to_pyarrow().to_pylist()
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(str(r["c"]), {})[str(r["s"])] = int(r["n"])
    return out


def summarize(traces: Traces) -> TraceSummary:
    t = traces.spans
    metrics: dict[str, Any] = {
        "spans": t.count(),
        "tasks": t.task_id.nunique(),
        "start_us": t.start_us.min(),
        "end_us": t.end_us.max(),
    }
    for col in COLUMNS:
        if col.name in _SKIP:
            continue
        if col.applies_to is None:
            metrics[f"nn_{col.name}"] = t[col.name].notnull().sum()
            metrics[f"ap_{col.name}"] = t.count()
        else:
            applicable = t.kind.isin([str(k) for k in col.applies_to])
            metrics[f"nn_{col.name}"] = (applicable & t[col.name].notnull()).sum()
            metrics[f"ap_{col.name}"] = applicable.sum()
    row = t.aggregate(**metrics).execute().iloc[0]
    kinds_df = t.group_by("kind").aggregate(n=t.count()).execute()

    def as_int(v: Any) -> int | None:
        return None if v is None or v != v else int(v)  # v != v: NaN

    coverage = tuple(
        Coverage(c.name, as_int(row[f"nn_{c.name}"]) or 0, as_int(row[f"ap_{c.name}"]) or 0)
        for c in COLUMNS
        if c.name not in _SKIP
    )
    summary = TraceSummary(
        statuses=_statuses(t),
        facts=fact_sources(t),
        spans=int(row["spans"]),
        tasks=int(row["tasks"]),
        kinds={str(k): int(n) for k, n in zip(kinds_df["kind"], kinds_df["n"], strict=True)},
        start_us=as_int(row["start_us"]),
        end_us=as_int(row["end_us"]),
        coverage=coverage,
        quality=traces.quality,
        sources=traces.sources,
    )
    traces.verify_unchanged()  # no summary of a file written while it was read
    return summary


def fact_sources(t: Any) -> tuple[FactSources, ...]:
    """Per fact: the spans it applies to (every span for ``kind``, model calls for the rest),
    how many lack it, and how many took it from each source (the ``evidence`` column; a value
    without evidence came from a table's column, a timestamp from the span itself)."""
    out: list[FactSources] = []
    calls = t.filter(t.kind == "llm")
    for name in FACTS:
        of = t if name == "kind" else calls
        named = of.evidence.re_extract(rf"(?:^|;){name}=([^;]*)", 1)
        fallback = {"start_us": FROM_SPAN, "end_us": FROM_SPAN, "kind": UNCLAIMED}.get(
            name, FROM_COLUMN
        )
        source = ibis.cases(
            (of[name].isnull(), ibis.null(idt.string)),
            (named.notnull() & (named != ""), named),
            else_=ibis.literal(fallback),
        )
        counts = of.select(s=source).group_by("s").aggregate(n=ibis._.count()).to_pyarrow()
        found = {
            s: int(n) for s, n in zip(counts["s"].to_pylist(), counts["n"].to_pylist(), strict=True)
        }
        missing = found.pop(None, 0)
        ranked = tuple(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
        out.append(FactSources(name, missing + sum(found.values()), missing, ranked))
    return tuple(out)
