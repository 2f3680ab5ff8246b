"""The contract and the hand-written baselines (DuckDB SQL, pandas) the benchmarks compare with."""

from __future__ import annotations

BENCH_CONTRACT = """
contract:
  id: BENCH
  vendor: V
  customer: C
  effective: {start: 2026-01-01}
  time_zone: UTC
latency:
  - id: L1
    measurement_point: full_response
    objective: {kind: occurrence, percentile: 95, threshold: 3000, method: nearest_rank}
    window: calendar_month
"""

#: The rows ingestion may use, in SQL: the set-aside reasons a canonical Parquet file can hold,
#: in ingestion's order (the first reason found is the one counted).
SQL_CLASSIFIED = """
SELECT task_id, span_id, parent_span_id,
       CASE
         WHEN task_id IS NULL OR span_id IS NULL OR task_id = '' OR span_id = '' THEN 'missing_id'
         WHEN start_us IS NULL OR end_us IS NULL THEN 'missing_timestamp'
         WHEN start_us < 0 OR start_us >= 7258118400000000 THEN 'out_of_range:start_us'
         WHEN end_us < 0 OR end_us >= 7258118400000000 THEN 'out_of_range:end_us'
         WHEN end_us < start_us THEN 'end_before_start'
         WHEN input_tokens < 0 OR output_tokens < 0 OR cached_tokens < 0 THEN 'negative_tokens'
{impossible}
       END AS reason
FROM read_parquet({source})
"""

#: a within-span figure negative, not finite or longer than its span (1 ms of slack)
SQL_IMPOSSIBLE = "\n".join(
    f"         WHEN {f} < 0 OR isinf({f}) OR isnan({f}) "
    f"OR {f} > (end_us - start_us) / 1000.0 + 1.0 THEN 'impossible_value:{f}'"
    for f in ("ttft_ms", "server_ms", "queue_ms", "network_ms")
)

#: Ingestion's work by hand: rows per set-aside reason, duplicate ids (rows beyond the first of
#: their task and span id), orphans (a parent id no usable span of the task holds).
SQL_INGEST = {
    "reasons": "SELECT reason, count(*) FROM classified GROUP BY reason",
    "duplicates": """
        SELECT coalesce(sum(n - 1), 0) FROM (
          SELECT count(*) AS n FROM classified WHERE reason IS NULL
          GROUP BY task_id, span_id HAVING count(*) > 1)""",
    "orphans": """
        SELECT count(*) FROM classified c
        WHERE c.reason IS NULL AND c.parent_span_id IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM classified p
          WHERE p.reason IS NULL AND p.task_id = c.task_id AND p.span_id = c.parent_span_id)""",
}

# The check's work for L1 by hand: ok llm calls per UTC month, good = duration ≤ 3000 ms, and the
# exact nearest-rank p95 (DuckDB's quantile_disc is the ceil(p·n)-th smallest value). A call
# answered from a response cache is left out (readings.cache_hits: excluded, the default).
SQL_CHECK = """
SELECT strftime(make_timestamp(start_us), '%Y-%m') AS window,
       count_if(duration_ms <= 3000) AS good,
       count(*) AS total,
       quantile_disc(duration_ms, 0.95) AS p95
FROM read_parquet({source})
WHERE kind = 'llm' AND status = 'ok' AND duration_ms IS NOT NULL
  AND NOT coalesce(response_cached, false)
  AND task_id IS NOT NULL AND span_id IS NOT NULL AND end_us >= start_us
GROUP BY 1
"""
