"""The whole demo contract by hand: DuckDB SQL computing, per window, the counts every term kind of
``slacheck/contract/starters/demo.yaml`` states, and the same figures read from slacheck's
results, so the bench (and a test) can require them equal.

The SQL is written for that contract (its values are constants here) and for traces as the bench
generates them: canonical Parquet in which every row is usable (the accounting query says so,
and the figures differ otherwise), statuses already classified (no legacy ``error``: the
baseline refuses a trace that has one), the serving region recorded on the span, one root span
per task. Rules, as the checks apply them (``slacheck/checks``, ``slacheck/metering``):

- calls: ``llm`` spans of provider ``openai`` whose requested model (else the served one) is
  ``gpt-4o`` once lower-cased and stripped of a snapshot suffix; a call's window is the calendar
  month of its start in Asia/Shanghai (UTC+8 all year, no daylight saving), inside the effective
  period;
- state: ``cached`` for a response-cache hit, ``unknown`` without a status, else the status;
  answered = ok, cached or unknown;
- exclusion, first reason wins: the weekly maintenance (Sunday 02:00–04:00 local), input tokens
  over 128,000, a customer error, a cache hit;
- latency: answered, non-excluded units; the figure at the contracted point, else its stand-in
  (full response); the exact nearest-rank percentile (``quantile_disc``, the ceil(p·n)-th
  value); a task is a task holding an in-scope call, its time its root span's, windowed by its
  start, excluded under the first reason of any of its calls, failed when its root failed;
  tokens/s after the first token (else over the whole request), p50 per UTC 5-minute slice,
  passing at ≥ 40;
- peak minutes: the busiest 5 % (rounded up) of each month's UTC minutes with in-scope calls,
  ties to the earlier minute; at peak a call complies when it waited ≤ 3,000 ms (or recorded no
  wait), was answered by the model requested and not from a cache;
- rate limit: in-scope calls per UTC minute, over the limit above 600;
- availability: failed = vendor error, timeout, or throttled in a minute within the limit;
  unclassified failures undecided (``readings.unclassified_failures: bounds``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any
from zoneinfo import ZoneInfo

from bench.contract import SQL_CLASSIFIED, SQL_IMPOSSIBLE, SQL_INGEST

#: the term kinds, in the order slacheck reports them
KINDS = ("latency", "regions", "peak", "rate_limit", "availability")

_ZONE = ZoneInfo("Asia/Shanghai")
_US = 1_000_000


def _local_midnight_us(day: dt.date) -> int:
    return int(dt.datetime.combine(day, dt.time(), tzinfo=_ZONE).timestamp()) * _US


#: Asia/Shanghai's offset, the same all year (checked here rather than assumed)
OFFSET_US = 8 * 3600 * _US
assert all(
    dt.datetime(y, m, 1, tzinfo=_ZONE).utcoffset() == dt.timedelta(hours=8)
    for y in range(2020, 2031)
    for m in (1, 7)
)
#: the demo contract's effective period, [start, end) in UTC µs
EFFECTIVE = (_local_midnight_us(dt.date(2026, 7, 1)), _local_midnight_us(dt.date(2027, 7, 1)))
_DAY_US = 86_400 * _US
_MINUTE_US = 60 * _US
_SNAPSHOT = r"(-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-\d{3,4}|-latest|@latest)$"
#: the snapshot pattern inside a template that is formatted again (its braces doubled)
_SNAPSHOT_SQL = _SNAPSHOT.replace("{", "{{").replace("}", "}}")
_EXCLUSIONS = ("maintenance", "long_input", "customer_error", "cache_hit")
_ANSWERED = "state IN ('ok', 'cached', 'unknown')"

#: distinct model names and what they are read as (a few rows: no regex per call)
SQL_NAMES = f"""
CREATE OR REPLACE TEMP TABLE names AS
SELECT n, regexp_replace(regexp_replace(lower(trim(n)), '^.*/', ''), '{_SNAPSHOT_SQL}', '') AS base
FROM (SELECT DISTINCT request_model AS n FROM read_parquet({{source}}) WHERE kind = 'llm'
      UNION SELECT DISTINCT response_model FROM read_parquet({{source}}) WHERE kind = 'llm')
WHERE n IS NOT NULL
"""

#: every in-scope call (``win`` null outside the effective period), with its state, exclusion,
#: minute and region key
SQL_CALLS = f"""
CREATE OR REPLACE TEMP VIEW calls AS
SELECT *,
       CASE WHEN maint THEN 'maintenance'
            WHEN input_tokens > 128000 THEN 'long_input'
            WHEN state = 'customer_error' THEN 'customer_error'
            WHEN state = 'cached' THEN 'cache_hit' END AS ex
FROM (
  SELECT s.task_id, s.start_us, s.duration_ms, s.ttft_ms, s.server_ms, s.queue_ms,
         s.output_tokens, s.input_tokens, s.status, s.response_cached,
         CASE WHEN s.response_cached THEN 'cached' WHEN s.status IS NULL THEN 'unknown'
              ELSE s.status END AS state,
         s.start_us // {_MINUTE_US} AS minute,
         CASE WHEN s.start_us >= {EFFECTIVE[0]} AND s.start_us < {EFFECTIVE[1]}
              THEN strftime(make_timestamp(s.start_us + {OFFSET_US}), '%Y-%m') END AS win,
         ((s.start_us + {OFFSET_US}) // {_DAY_US} + 4) % 7 = 0
           AND (s.start_us + {OFFSET_US}) % {_DAY_US} >= {2 * 3600 * _US}
           AND (s.start_us + {OFFSET_US}) % {_DAY_US} < {4 * 3600 * _US} AS maint,
         nullif(lower(trim(s.region)), '') AS reg,
         rq.base AS requested, rs.base AS served
  FROM read_parquet({{source}}) s
  LEFT JOIN names rq ON rq.n = s.request_model
  LEFT JOIN names rs ON rs.n = s.response_model
  WHERE s.kind = 'llm' AND lower(trim(s.provider)) = 'openai'
    AND coalesce(rq.base, rs.base) = 'gpt-4o'
)
"""

#: in-scope calls per UTC minute (every minute, for the rate limit) and the minute's month
SQL_MINUTES = f"""
CREATE OR REPLACE TEMP TABLE minutes AS
SELECT minute, count(*) AS n,
       CASE WHEN minute * {_MINUTE_US} >= {EFFECTIVE[0]} AND minute * {_MINUTE_US} < {EFFECTIVE[1]}
            THEN strftime(make_timestamp(minute * {_MINUTE_US} + {OFFSET_US}), '%Y-%m') END AS win
FROM calls GROUP BY minute
"""

#: the busiest 5 % of each month's minutes with traffic, rounded up, ties to the earlier minute
SQL_PEAK_MINUTES = """
CREATE OR REPLACE TEMP TABLE peak AS
SELECT minute FROM (
  SELECT minute, row_number() OVER (PARTITION BY win ORDER BY n DESC, minute) AS rn,
         count(*) OVER (PARTITION BY win) AS m
  FROM minutes WHERE win IS NOT NULL)
WHERE rn <= ceil(m * 0.05 - 1e-9)
"""


def _excluded_counts(where: str = "TRUE") -> str:
    return ", ".join(
        f"count(*) FILTER (WHERE ex = '{r}' AND {where}) AS ex_{r}" for r in _EXCLUSIONS
    )


def _call_term(name: str, column: str, threshold: float, q: float) -> str:
    v = f"coalesce({column}, duration_ms)"
    ok = f"ex IS NULL AND {_ANSWERED}"
    return f"""
       count(*) FILTER (WHERE {ok} AND {column} IS NOT NULL) AS {name}_exact,
       count(*) FILTER (WHERE {ok} AND {v} <= {threshold}) AS {name}_good,
       quantile_disc({v}, {q}) FILTER (WHERE {ok}) AS {name}_p"""


#: L2 (time to first token, p95 ≤ 2,500 ms) and L3 (server processing, p99 ≤ 4,000 ms): one scan
SQL_LATENCY_CALLS = f"""
SELECT win,
       count(*) FILTER (WHERE ex IS NULL AND {_ANSWERED}) AS total,
       count(*) FILTER (WHERE ex IS NULL AND NOT {_ANSWERED}) AS failed,
       {_excluded_counts()},
       {_call_term("ttft", "ttft_ms", 2500, 0.95)},
       {_call_term("server", "server_ms", 4000, 0.99)}
FROM calls WHERE win IS NOT NULL GROUP BY win
"""

#: L4: the p50 of tokens/s after the first token (else over the whole request) per 5-minute slice
SQL_LATENCY_SLICES = f"""
SELECT win, count(*) AS slices, count(*) FILTER (WHERE p50 >= 40) AS passing FROM (
  SELECT win, start_us // {5 * _MINUTE_US} AS s, quantile_disc(v, 0.5) AS p50 FROM (
    SELECT win, start_us,
           coalesce(
             CASE WHEN duration_ms - ttft_ms > 0
                  THEN output_tokens::DOUBLE * 1e6 / round((duration_ms - ttft_ms) * 1000.0) END,
             CASE WHEN duration_ms > 0
                  THEN output_tokens::DOUBLE * 1e6 / round(duration_ms * 1000.0) END
           ) AS v
    FROM calls WHERE win IS NOT NULL AND ex IS NULL AND {_ANSWERED})
  WHERE v IS NOT NULL GROUP BY ALL)
GROUP BY win
"""

#: L1: tasks holding an in-scope call (any window), timed by their root span, p95 ≤ 30,000 ms
SQL_LATENCY_TASKS = f"""
WITH c AS (
  SELECT task_id,
         min(CASE ex WHEN 'maintenance' THEN 0 WHEN 'long_input' THEN 1
                     WHEN 'customer_error' THEN 3 WHEN 'cache_hit' THEN 4 END) AS exr
  FROM calls GROUP BY task_id),
r AS (
  SELECT task_id, count(*) AS roots, max(duration_ms) AS ms, min(start_us) AS start_us,
         bool_or(kind = 'task' AND status IS NOT NULL AND status <> 'ok') AS failed
  FROM read_parquet({{source}}) WHERE parent_span_id IS NULL GROUP BY task_id),
u AS (
  SELECT r.*, CASE c.exr WHEN 0 THEN 'maintenance' WHEN 1 THEN 'long_input'
                         WHEN 3 THEN 'customer_error' WHEN 4 THEN 'cache_hit' END AS ex,
         CASE WHEN r.start_us >= {EFFECTIVE[0]} AND r.start_us < {EFFECTIVE[1]}
              THEN strftime(make_timestamp(r.start_us + {OFFSET_US}), '%Y-%m') END AS win
  FROM c LEFT JOIN r USING (task_id))
SELECT win,
       count(*) FILTER (WHERE ex IS NULL AND NOT failed) AS total,
       count(*) FILTER (WHERE ex IS NULL AND failed) AS failed,
       {_excluded_counts()},
       count(*) FILTER (WHERE ex IS NULL AND NOT failed AND ms <= 30000) AS good,
       quantile_disc(ms, 0.95) FILTER (WHERE ex IS NULL AND NOT failed) AS p,
       count(*) FILTER (WHERE roots IS DISTINCT FROM 1) AS not_one_root
FROM u WHERE win IS NOT NULL OR roots IS DISTINCT FROM 1 GROUP BY win
"""

#: regions, routing and residency: in-scope calls per month, region and whether at peak
SQL_REGIONS = """
SELECT win, reg, minute IN (SELECT minute FROM peak) AS at_peak, count(*) AS n
FROM calls WHERE win IS NOT NULL GROUP BY ALL
"""

#: peak: what degraded at peak and off peak, and the queue policy's compliance
SQL_PEAK = f"""
SELECT win, count(*) AS calls, count(*) FILTER (WHERE p) AS peak_calls,
       count(DISTINCT minute) FILTER (WHERE p) AS peak_minutes,
       count(*) FILTER (WHERE p AND other) AS other_at_peak,
       count(*) FILTER (WHERE NOT p AND other) AS other_off_peak,
       count(*) FILTER (WHERE p AND cached) AS cached_at_peak,
       count(*) FILTER (WHERE NOT p AND cached) AS cached_off_peak,
       count(*) FILTER (WHERE p AND queue_ms IS NOT NULL) AS queue_recorded,
       max(queue_ms) FILTER (WHERE p) AS queue_max,
       quantile_disc(queue_ms, 0.95) FILTER (WHERE p) AS queue_p95,
       quantile_disc(duration_ms, 0.95) FILTER (WHERE p AND {_ANSWERED}) AS p95_at_peak,
       quantile_disc(duration_ms, 0.95) FILTER (WHERE NOT p AND {_ANSWERED}) AS p95_off_peak,
       count(*) FILTER (WHERE p AND (queue_ms IS NOT NULL OR other OR cached)) AS total,
       count(*) FILTER (WHERE p AND (queue_ms IS NOT NULL OR other OR cached)
                        AND coalesce(queue_ms <= 3000, TRUE) AND NOT other AND NOT cached)
         AS good
FROM (SELECT win, minute, queue_ms, duration_ms, state,
             minute IN (SELECT minute FROM peak) AS p,
             coalesce(served <> requested, FALSE) AS other,
             coalesce(response_cached, FALSE) AS cached
      FROM calls WHERE win IS NOT NULL)
GROUP BY win
"""

#: rate limit: throttled calls within and over the limit, the busiest minute, calls per task
SQL_RATE_LIMIT = {
    "calls": """
SELECT c.win, count(*) AS calls,
       count(*) FILTER (WHERE c.status = 'throttled') AS throttled,
       count(*) FILTER (WHERE c.status = 'throttled' AND m.n <= 600) AS under,
       count(*) FILTER (WHERE c.status = 'throttled' AND m.n > 600) AS over
FROM calls c JOIN minutes m USING (minute) WHERE c.win IS NOT NULL GROUP BY c.win
""",
    "busiest": """
SELECT win, max(n) AS n, arg_min(minute, (-n, minute)) AS minute,
       count(*) FILTER (WHERE n > 600) AS minutes_over
FROM minutes WHERE win IS NOT NULL GROUP BY win
""",
    "tasks": """
SELECT win, count(*) AS tasks, quantile_disc(n, 0.95) AS p95 FROM (
  SELECT win, task_id, count(*) AS n FROM calls WHERE win IS NOT NULL GROUP BY ALL)
GROUP BY win
""",
}

#: availability: counted, failed, undecided and excluded calls per month
SQL_AVAILABILITY = f"""
SELECT c.win,
       count(*) FILTER (WHERE c.ex IS NULL) AS counted,
       count(*) FILTER (WHERE c.ex IS NULL AND c.state = 'unclassified') AS undecided,
       count(*) FILTER (WHERE c.ex IS NULL AND (c.state IN ('vendor_error', 'timeout')
                        OR (c.state = 'throttled' AND m.n <= 600))) AS failed,
       count(*) FILTER (WHERE c.ex IS NULL AND c.state = 'vendor_error') AS error_calls,
       count(*) FILTER (WHERE c.ex IS NULL AND c.state = 'timeout') AS timeout_calls,
       count(*) FILTER (WHERE c.ex IS NULL AND c.state = 'throttled') AS throttled_calls,
       {", ".join(f"count(*) FILTER (WHERE c.ex = '{r}') AS ex_{r}" for r in _EXCLUSIONS)}
FROM calls c JOIN minutes m USING (minute) WHERE c.win IS NOT NULL GROUP BY c.win
"""

#: what each kind needs made first (shared by kinds when the whole contract runs)
NEEDS: dict[str, tuple[str, ...]] = {
    "latency": (),
    "regions": ("minutes", "peak"),
    "peak": ("minutes", "peak"),
    "rate_limit": ("minutes",),
    "availability": ("minutes",),
}


def _rows(con: Any, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


def _excluded(r: Mapping[str, Any]) -> dict[str, int]:
    return {k: int(r[f"ex_{k}"]) for k in _EXCLUSIONS if r[f"ex_{k}"]}


def _num(v: Any) -> float | None:
    return None if v is None else float(v)


def ingestion(con: Any, source: str) -> dict[str, Any]:
    """Ingestion's accounting: rows used, set aside per reason, duplicate ids, orphans."""
    classified = SQL_CLASSIFIED.format(source=source, impossible=SQL_IMPOSSIBLE)
    con.execute(f"CREATE OR REPLACE TEMP VIEW classified AS {classified}")
    reasons = {str(r): int(n) for r, n in con.execute(SQL_INGEST["reasons"]).fetchall()}
    dups = int(con.execute(SQL_INGEST["duplicates"]).fetchall()[0][0])
    orphans = int(con.execute(SQL_INGEST["orphans"]).fetchall()[0][0])
    used = reasons.pop("None", 0) - dups
    if dups:
        reasons["duplicate_span_id"] = dups
    # the statuses classified already (what a reader does with a legacy `error`, this does not)
    legacy = con.execute(
        f"SELECT count(*) FROM read_parquet({source}) WHERE status NOT IN ({_STATUSES})"
    ).fetchall()[0][0]
    if legacy:
        raise ValueError(f"{legacy} spans with a legacy status: this baseline does not classify")
    return {"used": used, "set_aside": dict(sorted(reasons.items())), "orphans": orphans}


_STATUSES = "'ok', 'customer_error', 'throttled', 'vendor_error', 'timeout', 'unclassified'"


def prepare(con: Any, source: str) -> None:
    """The names table and the calls view every kind reads."""
    con.execute(SQL_NAMES.format(source=source))
    con.execute(SQL_CALLS.format(source=source))


def kind_figures(con: Any, kind: str, source: str, made: set[str]) -> dict[str, Any]:
    """One term kind's figures per window (``made``: the shared tables already made)."""
    for need in NEEDS[kind]:
        if need not in made:
            con.execute(SQL_MINUTES if need == "minutes" else SQL_PEAK_MINUTES)
            made.add(need)
    return {
        "latency": _latency,
        "regions": _regions,
        "peak": _peak,
        "rate_limit": _rate_limit,
        "availability": _availability,
    }[kind](con, source)


def figures(con: Any, source: str, kinds: Iterable[str] = KINDS) -> dict[str, Any]:
    """Ingestion's accounting and every kind's figures, by hand."""
    out: dict[str, Any] = {"ingestion": ingestion(con, source)}
    prepare(con, source)
    made: set[str] = set()
    for kind in kinds:
        out[kind] = kind_figures(con, kind, source, made)
    return out


def _latency(con: Any, source: str) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for r in _rows(con, SQL_LATENCY_TASKS.format(source=source)):
        if r["not_one_root"]:
            raise ValueError("tasks without exactly one root span: this baseline reads roots")
        out.setdefault("L1-task-p95", {})[r["win"]] = {
            "good": int(r["good"]),
            "total": int(r["total"]),
            "observed": _num(r["p"]),
            "failed": int(r["failed"]),
            "excluded": _excluded(r),
        }
    for r in _rows(con, SQL_LATENCY_CALLS):
        for term, key in (("L2-ttft-p95", "ttft"), ("L3-server-p99", "server")):
            out.setdefault(term, {})[r["win"]] = {
                "good": int(r[f"{key}_good"]),
                "total": int(r["total"]),
                "observed": _num(r[f"{key}_p"]),
                "exact": int(r[f"{key}_exact"]),
                "failed": int(r["failed"]),
                "excluded": _excluded(r),
            }
        out.setdefault("L4-tps", {})[r["win"]] = {"excluded": _excluded(r)}
    for r in _rows(con, SQL_LATENCY_SLICES):
        out["L4-tps"][r["win"]].update(good=int(r["passing"]), total=int(r["slices"]))
    return out


def _top(counts: Mapping[str, int], n: int = 10) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n])


def _regions(con: Any, source: str) -> dict[str, Any]:
    listed, failover = {"cn-shanghai", "cn-beijing"}, "cn-beijing"
    out: dict[str, dict[str, Any]] = {}
    for r in _rows(con, SQL_REGIONS):
        w = out.setdefault(
            r["win"],
            {
                "calls": 0,
                "known": 0,
                "listed": 0,
                "routed": 0,
                "routed_at_peak": 0,
                "outside": {},
                "failover": {},
            },
        )
        reg, n = r["reg"], int(r["n"])
        w["calls"] += n
        if reg is None:
            continue
        w["known"] += n
        if reg in listed:
            w["listed"] += n
        else:
            w["outside"][reg] = w["outside"].get(reg, 0) + n
        if reg == failover:
            w["routed"] += n
            w["routed_at_peak"] += n if r["at_peak"] else 0
            w["failover"][reg] = w["failover"].get(reg, 0) + n
    for w in out.values():
        # both listed regions are in CN, the residency's country; an unlisted one has no
        # jurisdiction the contract states
        w["disallowed"] = w["routed"] - w["routed_at_peak"]
        w["residency_ok"], w["residency_unknown"] = w["listed"], w["known"] - w["listed"]
        w["outside"], w["failover"] = _top(w["outside"]), _top(w["failover"])
    return out


def _peak(con: Any, source: str) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for r in _rows(con, SQL_PEAK):
        out[r["win"]] = {
            k: (_num(v) if k in _PEAK_FLOATS else int(v or 0)) for k, v in r.items() if k != "win"
        }
    return out


_PEAK_FLOATS = ("queue_max", "queue_p95", "p95_at_peak", "p95_off_peak")


def _rate_limit(con: Any, source: str) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for r in _rows(con, SQL_RATE_LIMIT["calls"]):
        out[r["win"]] = {k: int(r[k]) for k in ("calls", "throttled", "under", "over")}
    for r in _rows(con, SQL_RATE_LIMIT["busiest"]):
        at = dt.datetime.fromtimestamp(int(r["minute"]) * 60, tz=dt.UTC)
        out.setdefault(r["win"], {}).update(
            {
                "busiest": float(r["n"]),
                "busiest_at": at.isoformat().replace("+00:00", "Z"),
                "minutes_over": int(r["minutes_over"]),
            }
        )
    for r in _rows(con, SQL_RATE_LIMIT["tasks"]):
        out.setdefault(r["win"], {}).update(
            {"tasks": int(r["tasks"]), "per_task_p95": float(r["p95"])}
        )
    return out


def _availability(con: Any, source: str) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for r in _rows(con, SQL_AVAILABILITY):
        total = int(r["counted"]) - int(r["undecided"])
        out[r["win"]] = {
            "total": total,
            "good": total - int(r["failed"]),
            "failed": int(r["failed"]),
            "undecided": int(r["undecided"]),
            "error_calls": int(r["error_calls"]),
            "timeout_calls": int(r["timeout_calls"]),
            "throttled_calls": int(r["throttled_calls"]),
            "excluded": _excluded(r),
        }
    return out


# ---------------------------------------------------------------------------------------------
# The same figures from slacheck's results (``TermResult.to_dict()``, as `check --format json`
# writes them under "terms")


def slacheck_figures(
    terms: Iterable[Mapping[str, Any]], quality: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The baseline's figures as slacheck states them (the kinds present in ``terms``)."""
    out: dict[str, Any] = {}
    if quality is not None:
        out["ingestion"] = {
            "used": int(quality["rows_used"]),
            "set_aside": dict(sorted(quality["set_aside"].items())),
            "orphans": int(quality["orphans"]),
        }
    for t in terms:
        kind, w, d = str(t["kind"]), str(t["window"]), t.get("details") or {}
        if kind in ("latency", "time_slice"):
            f: dict[str, Any] = {"excluded": dict(t["excluded"])}
            if kind == "latency":
                failed = d.get("failed_tasks", d.get("failed_calls"))
                f |= {"observed": _num(t["observed"]), "failed": failed}
                if d.get("excluded_unit") != "tasks":
                    f["exact"] = t["exact"]
            f |= {"good": t["good"], "total": t["total"]}
            out.setdefault("latency", {}).setdefault(str(t["id"]), {})[w] = f
        elif kind in ("regions", "routing", "residency"):
            f = out.setdefault("regions", {}).setdefault(w, {})
            if kind == "regions":
                f |= {
                    "calls": d["calls"],
                    "known": t["total"],
                    "listed": t["good"],
                    "outside": d["outside_list_regions"],
                }
            elif kind == "routing":
                f |= {
                    "routed": d["routing_events"],
                    "routed_at_peak": d["routing_events_at_peak"],
                    "disallowed": d["disallowed_events"],
                    "failover": d["failover_regions"],
                }
            else:
                f |= {
                    "residency_ok": t["good"],
                    "residency_unknown": d["unknown_jurisdiction_calls"],
                }
        elif kind == "peak":
            out.setdefault("peak", {})[w] = {
                "calls": d["calls"],
                "peak_calls": d["calls_at_peak"],
                "peak_minutes": d["peak_minutes"],
                "other_at_peak": d["other_model_at_peak"],
                "other_off_peak": d["other_model_off_peak"],
                "cached_at_peak": d["cached_at_peak"],
                "cached_off_peak": d["cached_off_peak"],
                "queue_recorded": d["queue_recorded_at_peak"],
                "queue_max": _num(d["queue_max_ms_at_peak"]),
                "queue_p95": _num(d["queue_p95_ms_at_peak"]),
                "p95_at_peak": _num(d["p95_ms_at_peak"]),
                "p95_off_peak": _num(d["p95_ms_off_peak"]),
                "total": t["total"],
                "good": t["good"],
            }
        elif kind == "rate_limit":
            throttled, under = d["throttled_calls"], d["throttled_under_limit"]
            over = throttled - under - d["throttled_undecided"]
            out.setdefault("rate_limit", {})[w] = {
                "calls": t["total"],
                "throttled": throttled,
                "under": under,
                "over": over,
                "busiest": _num(d["peak_observed"]),
                "busiest_at": d["peak_observed_at"],
                # a minute over the limit throttles or not; slacheck states the calls, not the
                # minutes: the baseline's minute count is checked against the calls over it
                "minutes_over": None,
                "tasks": d["tasks"],
                "per_task_p95": _num(d.get("requests_per_task_p95")),
            }
        elif kind == "availability":
            out.setdefault("availability", {})[w] = {
                "total": t["total"],
                "good": t["good"],
                "failed": d["failed"],
                "undecided": d["undecided_calls"],
                "error_calls": d["error_calls"],
                "timeout_calls": d["timeout_calls"],
                "throttled_calls": d["throttled_calls"],
                "excluded": dict(t["excluded"]),
            }
    return _pruned(out)


def _empty(v: Any) -> bool:
    if isinstance(v, Mapping):
        return all(_empty(x) for x in v.values())
    return v in (0, None, "")


def _pruned(figures: dict[str, Any]) -> dict[str, Any]:
    """Without the windows in which slacheck counted nothing (a period's month without traces:
    the SQL, grouping by the calls' months, has no row for it)."""
    out: dict[str, Any] = {}
    for kind, v in figures.items():
        if kind == "ingestion":
            out[kind] = v
        elif kind == "latency":
            out[kind] = {t: {w: f for w, f in ws.items() if not _empty(f)} for t, ws in v.items()}
        else:
            out[kind] = {w: f for w, f in v.items() if not _empty(f)}
    return out


def differences(mine: Mapping[str, Any], theirs: Mapping[str, Any], at: str = "") -> list[str]:
    """Where two figure trees differ (``None`` on slacheck's side: not stated, not compared)."""
    out: list[str] = []
    for k in sorted(set(mine) | set(theirs)):
        a, b = mine.get(k), theirs.get(k)
        here = f"{at}/{k}"
        if b is None and k in theirs:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping) and k != "excluded":
            out += differences(a, b, here)
        elif a != b:
            out.append(f"{here}: hand SQL {a!r}, slacheck {b!r}")
    return out


def compare(sql: Mapping[str, Any], slacheck: Mapping[str, Any]) -> list[str]:
    """The differences between the baseline's figures and slacheck's, for the kinds both hold."""
    keys = set(sql) & set(slacheck)
    return differences({k: sql[k] for k in keys}, {k: slacheck[k] for k in keys})
