"""The metering model: the contract compiled against the spans, once, for every consumer.

Checks, the field check, the mismatch finder and the documents read calls, tasks, windows,
coverage, exclusions and peak minutes from here, and from nowhere else: one reading of the
contract, the same everywhere. Rules:

- windows are calendar months or quarters in the contract's zone, or 30-day windows laid end to
  end from the effective start (with or without ``--period``), each clipped to the effective
  period: no window before its start or after its end, and a window the period cuts is partial;
- a window's coverage comes from the in-scope calls in it: the local days with a call, and how
  near its edges the first and last call fall (``COVER_SLACK_US``); a window is partial when a
  day has no call, an edge is uncovered, or the effective period cuts it;
- a claim deadline is counted in calendar days from the day after the window's last day, in the
  contract's zone (30 days after a July window: 30 August).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any

import ibis
import ibis.expr.types as ir
import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from slacheck.contract.model import CacheHits, Contract, Credits, UnclassifiedFailures, Window
from slacheck.engine import Engine, copy_up_to_rows, engine_of
from slacheck.messages import NC_, NPC_, Message, MessageCode
from slacheck.metering import derive, recorded
from slacheck.metering.derive import CallState
from slacheck.metering.metrics import MetricsEvidence
from slacheck.metering.recorded import UNREAD as _UNREAD
from slacheck.metering.windowexpr import in_intervals_expr, window_label_expr
from slacheck.results import EffectiveSpan, Losses
from slacheck.trace.schema import QUARTER_HOUR_US
from slacheck.trace.traces import Traces
from slacheck.verdict import MAX_EXAMPLES
from slacheck.windows import (
    COVER_SLACK_US,
    CalendarWindow,
    from_us,
    local_midnight,
    maintenance_intervals,
    split,
    windows_for,
)

_QUARTER_HOUR = QUARTER_HOUR_US
#: spans above which a plain input's calls stay a view of it (``Metering.calls_are_view``).
#: Measured on the 10 M-span bench trace (demo contract, quiet 2-core machine): calls as a table
#: took 50 s of CPU for ``check`` and 110 s for ``report``, against 75 s and 230 s as a view, at
#: 1.4 and 1.7 GiB of peak memory against 1.0 and 1.5 GiB; above 20 M spans the table's memory
#: (about 0.1 GiB per million spans) is not spent, and 100 M-span runs read the view as before
VIEW_FROM_ROWS = 20_000_000
_YEAR_2200_US = 7_258_118_400_000_000  # beyond any timestamp ingestion keeps
_EPOCH = dt.date(1970, 1, 1)


class Exclusion(StrEnum):
    """Why a call does not count against the vendor, in the order the reasons are tried: a
    call excluded for several is counted once, under the first."""

    MAINTENANCE = "maintenance"
    LONG_INPUT = "long_input"
    DOWNGRADED_TIER = "downgraded_tier"
    CUSTOMER_ERROR = "customer_error"
    #: answered by a gateway's response cache (``readings.cache_hits: excluded``)
    CACHE_HIT = "cache_hit"
    #: a failure nothing classified (``readings.unclassified_failures: excluded``)
    UNCLASSIFIED_FAILURE = "unclassified_failure"


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of one window the in-scope calls cover."""

    window: str
    days: int  # local days in the window (after clipping to the effective period)
    days_with_calls: int
    first_us: int | None  # first in-scope call in the window
    last_us: int | None
    edges_covered: bool  # first and last call within COVER_SLACK_US of the window's edges
    clipped: bool  # the effective period cuts the window

    @property
    def partial(self) -> bool:
        return self.clipped or self.days_with_calls < self.days or not self.edges_covered

    def to_dict(self) -> dict[str, object]:
        return {
            "days": self.days,
            "days_with_calls": self.days_with_calls,
            "edges_covered": self.edges_covered,
            "clipped": self.clipped,
            "partial": self.partial,
        }


class EffectiveSays(MessageCode):
    """What is said when the effective period and the traces do not meet."""

    NO_WINDOW = NC_(
        "metering.effective.no_window",
        "no window of the effective period ({effective}) overlaps the traces ({traces}): "
        "no term can be checked",
    )
    OUTSIDE = NC_(
        "metering.effective.outside",
        "of the traces' in-scope calls, {before} fall before the effective period "
        "({effective}) and {after} after it: the checks count none of them",
    )
    RANGE = NC_("metering.effective.range", "{start} – {end}")
    OPEN_RANGE = NC_("metering.effective.open_range", "{start} – (open-ended)")
    NO_SPANS = NC_("metering.effective.no_spans", "no dated spans")
    CALLS = NPC_("metering.effective.calls", "{n} call", "{n} calls")


@dataclass(frozen=True)
class Metering:
    contract: Contract
    traces: Traces
    #: restricts windows to this period (e.g. 2026-Q3); None: every window the traces touch
    period: CalendarWindow | None = None
    #: server-side OTLP metrics, a second evidence source (``metering.metrics``)
    metrics: MetricsEvidence | None = None

    @cached_property
    def calls(self) -> ir.Table:
        """All model calls with derived columns (see ``derive.calls``), not yet scoped.

        Where the spans are the input as read, no llm span wraps another (``Traces.plain``,
        ``Traces.llm_wrappers``) and the input is large (``calls_are_view``), the calls are a
        view of the input: each query reads only the columns it needs, and the name lookups
        behind it are computed once. Otherwise (a small input, rows filtered or joined,
        wrappers to unwrap, or Spark, which recomputes a view at every action) they are
        computed once, as a table in the engine. A converted folder whose record keeps the
        calls (``metering.recorded``), derived under today's rules, gives them as kept: read
        in place, each query reading the columns it needs, nothing derived again."""
        kept = recorded.kept(self.traces, recorded.CALLS)
        if kept is not None:
            return kept
        wrappers = self.traces.llm_wrappers
        llm = self._llm
        if self.calls_are_view:
            # the region keys once per distinct recorded region: one scan of two columns
            regions = derive.region_keys_of(llm.select("region").distinct(), keep=self._table)
            calls = derive.calls_of(
                llm, wrappers, keep=self._table, names=self._names, regions=regions
            ).drop(*_UNREAD)
            # a view in the engine, under a name: what each query then compiles is its own
            # few steps, not the derivation's long chain again (the engine expands the view
            # and reads the columns each query uses, as before)
            session = self.traces.session
            return calls if session is None else session.view(calls)
        # the llm spans are copied first: the derivation joins them with themselves, and each
        # read of the span view scans and classifies every row of the input again
        if wrappers != 0:
            llm = self._table(llm)
        # the name lookups from ingestion's per-quarter counts when it made them (every usable
        # llm span's names, a few rows): put into the query as constants, where the derivation
        # would otherwise scan every span again for its distinct names
        names = None if self.traces.llm_by_quarter is None else self._names
        calls = self._table(derive.calls_of(llm, wrappers, names=names).drop(*_UNREAD))
        if wrappers != 0:
            self._drop(llm)
        # the region keys once per distinct region of the table (``derive.RegionKeys``)
        regions = derive.region_keys_of(calls.select("region").distinct(), keep=self._table)
        return derive.with_region_key(calls, regions)

    @property
    def _llm(self) -> ir.Table:
        # provenance columns are long strings no check reads: leave them out of the copies
        return recorded.llm_spans(self.traces.spans)

    @cached_property
    def _by_name(self) -> ir.Table:
        """Where ``calls`` is a view: the calls (the llm spans) counted per UTC quarter hour and
        the names the contract's scope reads (models, provider, endpoint when it lists any),
        with their first and last start. From ingestion's pass where it counted them
        (``Traces.llm_by_quarter``), else kept in the engine from one scan; either serves
        both the name lookups (``_names``) and the quarter-hour counts (``_quarters``)."""
        if self.traces.llm_by_quarter is not None:
            return self.traces.llm_by_quarter
        c = self._llm
        c = c.filter(c.start_us.notnull())
        keys = ["request_model", "response_model", "provider"]
        if self.contract.scope.endpoints:
            keys.append("endpoint")
        g = c.group_by([(c.start_us // _QUARTER_HOUR).name("q"), *keys]).aggregate(
            n=c.count(), lo=c.start_us.min(), hi=c.start_us.max()
        )
        return self._table(g)

    @cached_property
    def _names(self) -> derive.Names:
        """The name lookups of a view's calls, from the distinct names in ``_by_name``."""
        g = self._by_name
        seen = g.select("request_model", "response_model", "provider").distinct()
        return derive.names_of(seen, keep=self._table)

    @property
    def calls_are_view(self) -> bool:
        """Whether ``calls`` is a view of the input rather than a table computed once: on
        DuckDB, for plain inputs without wrappers, of more than ``VIEW_FROM_ROWS`` spans. Below
        that, the table costs less than the view it replaces: every query of a view binds and
        optimises the derivation's whole chain again (a fixed ~0.2 s of CPU per query, some
        sixty queries per run) and derives again the columns it reads (a report's queries read
        many), while the table is derived once."""
        t = self.traces
        return (
            t.plain
            and t.llm_wrappers == 0
            and t.engine is Engine.DUCKDB
            and t.quality.rows_used > VIEW_FROM_ROWS
        )

    @cached_property
    def _kept(self) -> dict[str, ir.Table]:
        return {}

    def kept(self, key: str, make: Callable[[], ir.Table]) -> ir.Table:
        """A small derived table (peak minutes, rate buckets) computed once per run under
        ``key``: every query of every consumer that filters calls by it reads the same rows,
        and none recomputes the aggregate behind them."""
        if key not in self._kept:
            self._kept[key] = self._table(make())
        return self._kept[key]

    def _table(self, t: ir.Table) -> ir.Table:
        """``t`` computed once: held as Arrow columns in the traces' session for an input small
        enough to copy into the engine (``EngineSession.hold``), else as a table in the engine
        (session-temporary on DuckDB)."""
        con = self.traces.backend
        name = f"slacheck_calls_{uuid.uuid4().hex}"
        if engine_of(con) is Engine.SPARK:
            return con.create_table(name, t)
        session = self.traces.session
        if session is not None and self.traces.quality.rows_read <= copy_up_to_rows():
            return session.hold(t)
        return con.create_table(name, t, temp=True)

    def _drop(self, t: ir.Table) -> None:
        """Let go of a table ``_table`` made."""
        session = self.traces.session
        if session is not None:
            session.drop(t)
        else:
            self.traces.backend.drop_table(t.get_name(), force=True)

    @cached_property
    def tasks(self) -> ir.Table:
        """One row per task (``derive.tasks``), computed once per run as a table: the task
        terms, the per-task rate limit, the field check, the budget and the charts read the
        same rows instead of grouping every span again each. A converted folder's record may
        keep them (``metering.recorded``): they are read as kept."""
        kept = recorded.kept(self.traces, recorded.TASKS)
        return kept if kept is not None else self.kept("tasks", lambda: derive.tasks(self.traces))

    @cached_property
    def data_range(self) -> tuple[int | None, int | None]:
        """The first start and the last end of the usable spans (from ingestion when known)."""
        if self.traces.extent is not None:
            return self.traces.extent
        s = self.traces.spans
        row = s.aggregate(lo=s.start_us.min(), hi=s.end_us.max()).execute().iloc[0]
        lo, hi = row["lo"], row["hi"]
        return (
            None if lo is None or lo != lo else int(lo),
            None if hi is None or hi != hi else int(hi),
        )

    # ---- the effective period

    @cached_property
    def effective_us(self) -> tuple[int, int | None]:
        """[start, end) of the effective period in UTC µs (end exclusive: the day after)."""
        return effective_us(self.contract)

    def in_effect(self, ts_us: ir.IntegerValue) -> ir.BooleanValue:
        start, end = self.effective_us
        cond = ts_us >= start
        return cond if end is None else cond & (ts_us < end)

    @cached_property
    def outside_effective(self) -> EffectiveSpan:
        start, end = self.effective_us
        before = self._starting(None, start).inside_count()
        after = 0 if end is None else self._starting(end, None).inside_count()
        return EffectiveSpan(before, after)

    def effective_range(self) -> Message:
        """The effective period as dates (contract zone), both ends inclusive."""
        eff = self.contract.contract.effective
        if eff.end is None:
            return EffectiveSays.OPEN_RANGE(start=eff.start.isoformat())
        return EffectiveSays.RANGE(start=eff.start.isoformat(), end=eff.end.isoformat())

    def traces_range(self) -> Message:
        """The traces' first and last day in the contract's zone (the usable spans' extent)."""
        lo, hi = self.data_range
        if lo is None or hi is None:
            return EffectiveSays.NO_SPANS()
        zone = self.contract.zone
        first, last = from_us(lo, zone).date(), from_us(max(lo, hi - 1), zone).date()
        return EffectiveSays.RANGE(start=first.isoformat(), end=last.isoformat())

    def no_window(self) -> Message | None:
        """Said when no window of any kind, clipped to the effective period, overlaps the
        traces (or the requested period): the checks then have nothing to count, and that is
        said with both date ranges rather than shown as an empty table."""
        if any(self.windows(kind) for kind in Window):
            return None
        return EffectiveSays.NO_WINDOW(effective=self.effective_range(), traces=self.traces_range())

    def outside_said(self) -> Message | None:
        """How many in-scope calls fall before and after the effective period, when any do."""
        out = self.outside_effective
        if not out.outside:
            return None
        return EffectiveSays.OUTSIDE(
            before=EffectiveSays.CALLS(n=out.before),
            after=EffectiveSays.CALLS(n=out.after),
            effective=self.effective_range(),
        )

    # ---- the calls by quarter hour

    @cached_property
    def _quarters(self) -> _Summary:
        """The calls counted per UTC quarter hour (``q``), whether in the contract's scope and
        if not why (``derive.scope_miss``), with the first and last start: a few thousand rows
        from one scan of the calls. Every zone's offset is a whole number of quarter hours, so
        a local midnight (every window's edge, the effective period's) is a quarter-hour edge:
        local days, a window's coverage, the calls outside the effective period and the calls
        whose scope cannot be decided are all read from these rows."""
        if not self.calls_are_view:
            return self._summary(self.calls, by_quarter=True)
        # the calls by quarter hour and name, their names read as the calls' are: the scope
        # is decided per row of that small table, as it would be per call
        g = derive.with_names(self._by_name, self._names)
        g = g.mutate(start_us=g.lo)  # the scope rule reads the start (never null here)
        x = g.select(
            "q",
            "n",
            "lo",
            "hi",
            inside=derive.scoped(g, self.contract),
            miss=derive.scope_miss(g, self.contract.scope, self.contract.readings.model_scope),
        )
        s = x.group_by(["q", "inside", "miss"]).aggregate(n=x.n.sum(), lo=x.lo.min(), hi=x.hi.max())
        return _Summary.of(s.to_pyarrow())

    def _summary(self, c: ir.Table, *, by_quarter: bool) -> _Summary:
        cols = {
            "inside": derive.scoped(c, self.contract),
            "miss": derive.scope_miss(c, self.contract.scope, self.contract.readings.model_scope),
        }
        if by_quarter:
            cols = {"q": c.start_us // _QUARTER_HOUR, **cols}
        x = c.filter(c.start_us.notnull()).select(start_us=c.start_us, **cols)
        g = x.group_by(list(cols)).aggregate(n=x.count(), lo=x.start_us.min(), hi=x.start_us.max())
        return _Summary.of(g.to_pyarrow())

    def _starting(self, lo: int | None, hi: int | None) -> _Summary:
        """The summary rows of the calls starting in [lo, hi) (None: unbounded): from the
        quarter hours when both edges are quarter-hour edges, else counted anew."""
        if all(e is None or e % _QUARTER_HOUR == 0 for e in (lo, hi)):
            return self._quarters.between(
                None if lo is None else lo // _QUARTER_HOUR,
                None if hi is None else hi // _QUARTER_HOUR,
            )
        c = self.calls
        if lo is not None:
            c = c.filter(c.start_us >= lo)
        if hi is not None:
            c = c.filter(c.start_us < hi)
        return self._summary(c, by_quarter=False)

    # ---- windows

    def windows(self, kind: Window) -> list[CalendarWindow]:
        """The term's windows, clipped to the effective period: inside the requested period,
        else those the traces overlap."""
        return contract_windows(
            self.contract, kind, self.period, None if self.period else self.data_range
        )

    @cached_property
    def local_days(self) -> npt.NDArray[np.int64]:
        """The distinct local dates (days since 1970-01-01, contract zone) with in-scope calls,
        from the quarter hours holding one (no quarter hour straddles a local midnight)."""
        qs = self._quarters
        q = np.unique(qs.q[qs.inside])
        if q.size == 0:
            return np.empty(0, dtype=np.int64)
        stamps = pd.to_datetime(q * _QUARTER_HOUR, unit="us", utc=True).tz_convert(
            self.contract.zone.key
        )
        local_midnights = stamps.tz_localize(None).normalize()
        days = (local_midnights - pd.Timestamp(0)) // pd.Timedelta(days=1)
        return np.unique(np.asarray(days, dtype=np.int64))

    @cached_property
    def _coverage_cache(self) -> dict[tuple[int, int], Coverage]:
        return {}

    def coverage(self, w: CalendarWindow) -> Coverage:
        """How much of ``w`` the in-scope calls cover (see the module doc); computed once."""
        key = (w.start_us, w.end_us)
        if key not in self._coverage_cache:
            self._coverage_cache[key] = self._coverage(w)
        return self._coverage_cache[key]

    def _coverage(self, w: CalendarWindow) -> Coverage:
        zone = self.contract.zone
        first_day = (from_us(w.start_us, zone).date() - _EPOCH).days
        last_day = (from_us(w.end_us - 1, zone).date() - _EPOCH).days
        d = self.local_days
        with_calls = int(((d >= first_day) & (d <= last_day)).sum())
        first, last = self._starting(w.start_us, w.end_us).inside_range()
        edges = (
            first is not None
            and last is not None
            and first <= w.start_us + COVER_SLACK_US
            and last >= w.end_us - COVER_SLACK_US
        )
        return Coverage(
            window=w.label,
            days=last_day - first_day + 1,
            days_with_calls=with_calls,
            first_us=first,
            last_us=last,
            edges_covered=edges,
            clipped=w.clipped,
        )

    def partial(self, w: CalendarWindow) -> bool:
        """The calls cover only part of the window, or the effective period cuts it."""
        return self.coverage(w).partial

    # ---- what could not be counted

    @cached_property
    def _losses_cache(self) -> dict[tuple[tuple[str, int, int], ...], dict[str, Losses]]:
        return {}

    def losses(self, windows: list[CalendarWindow]) -> dict[str, Losses]:
        """Per window label: model calls set aside at ingestion (those without a start time
        under ``""``: they could fall in any window) and in-effect calls the contract's scope
        cannot be decided for (a scope field missing on the call). Computed once per set of
        windows: every term over the same windows reads the same losses."""
        key = tuple((w.label, w.start_us, w.end_us) for w in windows)
        if key not in self._losses_cache:
            self._losses_cache[key] = self._losses(windows)
        return self._losses_cache[key]

    def _losses(self, windows: list[CalendarWindow]) -> dict[str, Losses]:
        out: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
        if not windows:
            return {}
        if self.traces.quality.set_aside:  # else there is nothing to look for
            bad = self.traces.set_aside_rows
            bad = bad.filter((bad.kind == "llm").fill_null(False))
            label = window_label_expr(bad.start_us, windows)
            bad = bad.mutate(_w=ibis.ifelse(bad.start_us.isnull(), "", label))
            bad = bad.filter(bad._w.notnull())
            df = bad.group_by(["_w", "_reason"]).aggregate(n=bad.count()).execute()
            for w, reason, n in zip(df["_w"], df["_reason"], df["n"], strict=True):
                out.setdefault(str(w), ({}, {}))[0][str(reason)] = int(n)
        for w in windows:
            for name, n in self._starting(w.start_us, w.end_us).undecided().items():
                out.setdefault(w.label, ({}, {}))[1][name] = n
        return {w: Losses(a, b) for w, (a, b) in out.items()}

    @cached_property
    def total_losses(self) -> Losses:
        """``losses`` over the whole effective period; calls set aside without a start time
        are counted in too, as they may fall anywhere."""
        start, end = self.effective_us
        every = CalendarWindow("all", start, _YEAR_2200_US if end is None else end, "UTC")
        by = self.losses([every])
        whole = by.get("all", Losses({}, {}))
        undated = by.get("", Losses({}, {}))
        merged = dict(whole.set_aside)
        for k, v in undated.set_aside.items():
            merged[k] = merged.get(k, 0) + v
        return Losses(merged, dict(whole.scope_field_missing))

    # ---- credits

    def claim_deadline(self, credits: Credits, w: CalendarWindow) -> dt.date | None:
        """The last day to claim a credit for ``w``: calendar days counted from the day after
        the window's last day, in the contract's zone."""
        if credits.claim_deadline_days is None:
            return None
        last_day = from_us(w.end_us - 1, self.contract.zone).date()
        return last_day + dt.timedelta(days=credits.claim_deadline_days)

    @cached_property
    def maintenance(self) -> list[tuple[int, int]]:
        lo, hi = self.data_range
        if lo is None or hi is None:
            return []
        return maintenance_intervals(self.contract.exclusions, self.contract.zone, lo, hi)

    def exclusion_reason(self, c: ir.Table) -> ir.StringValue:
        """Why a call does not count against the vendor, or null. First reason wins."""
        ex = self.contract.exclusions
        cases: list[tuple[ir.BooleanValue, ir.StringValue]] = []
        if self.maintenance:
            cases.append(
                (
                    in_intervals_expr(c.start_us, self.maintenance),
                    ibis.literal(str(Exclusion.MAINTENANCE)),
                )
            )
        if ex.max_input_tokens is not None:
            cases.append(
                (
                    (c.input_tokens > ex.max_input_tokens).fill_null(False),
                    ibis.literal(str(Exclusion.LONG_INPUT)),
                )
            )
        if ex.downgraded_service_tiers:
            tiers = [t.lower() for t in ex.downgraded_service_tiers]
            cases.append(
                (
                    c.service_tier.lower().isin(tiers).fill_null(False),
                    ibis.literal(str(Exclusion.DOWNGRADED_TIER)),
                )
            )
        if ex.customer_errors:
            # the status class, whatever classified it: an HTTP 4xx, an SDK's exception class
            customer = c.state == str(CallState.CUSTOMER_ERROR)
            cases.append((customer.fill_null(False), ibis.literal(str(Exclusion.CUSTOMER_ERROR))))
        readings = self.contract.readings
        if readings.cache_hits is CacheHits.EXCLUDED:
            cached = c.state == str(CallState.CACHED)
            cases.append((cached.fill_null(False), ibis.literal(str(Exclusion.CACHE_HIT))))
        if readings.unclassified_failures is UnclassifiedFailures.EXCLUDED:
            unclassified = c.state == str(CallState.UNCLASSIFIED)
            cases.append(
                (unclassified.fill_null(False), ibis.literal(str(Exclusion.UNCLASSIFIED_FAILURE)))
            )
        if not cases:
            return ibis.null().cast("string")
        return ibis.cases(*cases, else_=ibis.null().cast("string"))


def example_ids(
    t: ir.Table, cond: ir.BooleanValue, worst_first: str | None = None
) -> tuple[str, ...]:
    """A few task ids where ``cond`` holds: by the largest ``worst_first`` column, then by id."""
    hits = t.filter(cond)
    if worst_first is None:
        ids = hits.select("task_id").distinct().order_by("task_id")
    else:
        ids = (
            hits.group_by("task_id")
            .aggregate(_w=hits[worst_first].max())
            .order_by([ibis.desc("_w"), "task_id"])
        )
    df = ids.limit(MAX_EXAMPLES).select("task_id").execute()
    return tuple(str(x) for x in df["task_id"])


@dataclass(frozen=True)
class _Summary:
    """Calls counted by (quarter hour,) in scope, why not: ``Metering._quarters``."""

    q: npt.NDArray[np.int64]
    inside: npt.NDArray[np.bool_]
    miss: npt.NDArray[np.object_]
    n: npt.NDArray[np.int64]
    lo: npt.NDArray[np.int64]
    hi: npt.NDArray[np.int64]

    @classmethod
    def of(cls, t: pa.Table) -> _Summary:
        def col(name: str, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
            if name not in t.column_names:
                return np.zeros(t.num_rows, dtype=dtype)
            return np.asarray(t.column(name).to_numpy(zero_copy_only=False), dtype=dtype)

        inside = t.column("inside").fill_null(False)
        return cls(
            q=col("q", np.int64),
            inside=np.asarray(inside.to_numpy(zero_copy_only=False), dtype=np.bool_),
            miss=np.asarray(t.column("miss").to_pylist(), dtype=object),
            n=col("n", np.int64),
            lo=col("lo", np.int64),
            hi=col("hi", np.int64),
        )

    def between(self, lo: int | None, hi: int | None) -> _Summary:
        """The rows of quarter hours in [lo, hi) (None: unbounded)."""
        keep = np.ones(self.q.size, dtype=np.bool_)
        if lo is not None:
            keep &= self.q >= lo
        if hi is not None:
            keep &= self.q < hi
        return _Summary(
            self.q[keep],
            self.inside[keep],
            self.miss[keep],
            self.n[keep],
            self.lo[keep],
            self.hi[keep],
        )

    def inside_count(self) -> int:
        return int(self.n[self.inside].sum())

    def inside_range(self) -> tuple[int | None, int | None]:
        """The first and last start of the in-scope calls (None, None when there are none)."""
        if not self.inside.any():
            return None, None
        return int(self.lo[self.inside].min()), int(self.hi[self.inside].max())

    def undecided(self) -> dict[str, int]:
        """Calls per scope field they lack (``provider_missing`` → ``provider``)."""
        out: dict[str, int] = {}
        for miss, n in zip(self.miss, self.n, strict=True):
            if isinstance(miss, str) and miss.endswith("_missing"):
                name = miss.removesuffix("_missing")
                out[name] = out.get(name, 0) + int(n)
        return out


#: What a check is handed: the metering model.
CheckContext = Metering


def effective_us(contract: Contract) -> tuple[int, int | None]:
    """[start, end) of the contract's effective period in UTC µs (end exclusive: the day after)."""
    eff = contract.contract.effective
    zone = contract.zone
    start = local_midnight(eff.start, zone)
    end = None if eff.end is None else local_midnight(eff.end + dt.timedelta(days=1), zone)
    return start, end


def contract_windows(
    contract: Contract,
    kind: Window,
    period: CalendarWindow | None,
    data_range: tuple[int | None, int | None] | None = None,
) -> list[CalendarWindow]:
    """Windows of ``kind`` inside ``period`` (else overlapping ``data_range``), clipped to the
    effective period; a window the period cuts is marked ``clipped``. The one reading of "which
    windows", for the checks (``Metering.windows``) and the acceptance document alike."""
    zone = contract.zone
    anchor = contract.contract.effective.start
    if period is not None:
        if kind is Window.ROLLING_30_DAYS:
            laid = windows_for(kind, zone, period.start_us, period.end_us, anchor=anchor)
        else:
            laid = split(period, kind, zone)
    else:
        lo, hi = data_range if data_range is not None else (None, None)
        if lo is None or hi is None:
            return []
        laid = windows_for(kind, zone, lo, hi, anchor=anchor)
    start, end = effective_us(contract)
    out: list[CalendarWindow] = []
    for w in laid:
        lo_us = max(w.start_us, start)
        hi_us = w.end_us if end is None else min(w.end_us, end)
        if hi_us <= lo_us:
            continue
        if (lo_us, hi_us) == (w.start_us, w.end_us):
            out.append(w)
        else:
            out.append(CalendarWindow(w.label, lo_us, hi_us, w.zone, clipped=True))
    return out
