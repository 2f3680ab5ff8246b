"""The contract and the hand-written SQL the check benchmark compares against."""

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

# The same compliance counts the latency check computes for L1: ok llm calls per UTC month,
# good = duration ≤ 3000 ms. (UTC months so the SQL stays a plain GROUP BY.)
SQL_COUNTS = """
SELECT strftime(make_timestamp(start_us), '%Y-%m') AS window,
       count_if(duration_ms <= 3000) AS good,
       count(*) AS total
FROM read_parquet('{path}')
WHERE kind = 'llm' AND status = 'ok' AND duration_ms IS NOT NULL
  AND task_id IS NOT NULL AND span_id IS NOT NULL AND end_us >= start_us
GROUP BY 1
"""
