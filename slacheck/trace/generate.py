"""Generate realistic, deterministic synthetic agent traffic as a canonical span table.

The traffic model, and why each part matters to a contract check (see DOMAIN.md):

- A task is one root span (kind ``task``) followed by sequential steps; a step is an optional
  retrieval span, one model call (two when the first attempt failed and was retried) and
  0–3 sequential tool calls. The last step (the final answer) calls no tool.
- Tasks start along a daily load curve in the local business day (``timezone``): quiet at night,
  peaks mid-morning and mid-afternoon, lighter at weekends. The utilisation ρ of each minute is
  that curve scaled so the busiest weekday minute reaches ``rho_peak``; a minute is "peak" when
  ρ ≥ ``peak_rho``. A task uses the ρ of the minute it starts in for all its calls (tasks last
  seconds, not minutes).
- Model calls: client duration = queue + network + server. Queue wait follows M/M/1: with
  probability ρ the call waits, for an exponential time of mean S/(1−ρ), so the mean wait is
  ρ/(1−ρ)·S. Network is lognormal around ``network_median_ms``, plus ``cross_region_extra_ms``
  when routed to another region. Server time is lognormal; output tokens follow from it at
  40–90 tokens/s of generation. At peak only: a few calls answered by the fallback model, a few
  routed cross-region, a few answered from a response cache, and most throttling (429).
- Failed attempts (429, 500/503, 504) are retried once; if the retry fails too the task ends
  there with that status.

Everything is drawn from ``numpy.random.default_rng(seed)`` in a fixed order, so the same
profile gives the same table. ``malformed`` bad rows are drawn last: the clean rows of a profile
with ``malformed=k`` are exactly the rows of the same profile with ``malformed=0``.

``write`` writes the table as Parquet, OTLP JSON lines or a Langfuse export (``export_writers``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from slacheck.errors import UsageError
from slacheck.trace.export_writers import write_langfuse, write_otlp, write_parquet
from slacheck.trace.schema import Kind, Status, conform

__all__ = ["FORMATS", "MALFORMED_KINDS", "TrafficProfile", "generate", "write"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

#: Output formats ``write`` knows.
FORMATS: tuple[str, ...] = ("parquet", "otlp", "langfuse")

#: The kinds of deliberately bad rows, in the order they are cycled through.
MALFORMED_KINDS: tuple[str, ...] = (
    "end_before_start",
    "null_start",
    "duplicate_span_id",
    "negative_output_tokens",
    "null_task_id",
)

_MINUTE_US = 60_000_000
_DAY_MIN = 1440
#: tasks generated per block: keeps arrays small; fixed, so the output never depends on it
_BLOCK_TASKS = 16_384

# Span roles inside a step, in the order they run.
_RETRIEVAL, _LLM_FIRST, _LLM_FINAL, _TOOL = 0, 1, 2, 3
# Status codes, indexing _STATUS. _ERROR is a 5xx on a model call (vendor_error); on any other
# span (a failed tool, a task that ended in a failure) nothing says whose it was, as the readers
# classify what the OTLP export of the same span records: _UNCLASSIFIED.
_OK, _ERROR, _THROTTLED, _TIMEOUT, _UNCLASSIFIED = 0, 1, 2, 3, 4
_STATUS = (Status.OK, Status.VENDOR_ERROR, Status.THROTTLED, Status.TIMEOUT, Status.UNCLASSIFIED)
_ERROR_TYPE = (None, "server_error", "rate_limit_exceeded", "timeout")
_TOOL_ERROR = "tool_error"


@dataclass(frozen=True, slots=True)
class TrafficProfile:
    """What traffic to generate. Every knob has a realistic default."""

    tasks: int = 1000
    days: int = 30
    seed: int = 0
    #: first day, UTC midnight
    start: datetime = datetime(2026, 7, 1, tzinfo=UTC)
    #: the time zone of the customer's business day, which shapes the load curve
    timezone: str = "Asia/Shanghai"
    home_region: str = "cn-shanghai"
    other_regions: tuple[str, ...] = ("cn-beijing", "ap-southeast-1")
    provider: str = "openai"
    model: str = "gpt-4o-2024-08-06"
    fallback_model: str = "gpt-4o-mini-2024-07-18"
    endpoint: str = "api.example-llm.com"
    #: number of deliberately bad rows to add (see MALFORMED_KINDS)
    malformed: int = 0

    # Task shape: steps per task are a rounded lognormal, clipped.
    steps_median: float = 11.0
    steps_sigma: float = 0.35
    steps_min: int = 3
    steps_max: int = 20
    #: probability of 0, 1, 2, 3 tool calls in a step (the last step never calls a tool)
    tools_per_step: tuple[float, float, float, float] = (0.45, 0.30, 0.17, 0.08)
    #: tool names and their median durations (ms); picked uniformly
    tools: tuple[tuple[str, float], ...] = (
        ("tool.search", 120.0),
        ("tool.sql", 60.0),
        ("tool.http", 90.0),
        ("tool.code", 150.0),
        ("tool.file", 25.0),
    )
    tool_sigma: float = 0.8
    tool_error_share: float = 0.005
    retrieval_share: float = 0.12
    retrieval_median_ms: float = 120.0
    retrieval_sigma: float = 0.5
    #: framework overhead between consecutive spans of a task
    gap_median_ms: float = 3.0

    # Load curve, in local hours: a night floor, a business-day plateau and Gaussian peaks.
    night_load: float = 0.04
    business_hours: tuple[float, float] = (8.5, 19.0)
    business_load: float = 0.45
    #: (centre hour, width in hours, height) of each daily peak
    peaks: tuple[tuple[float, float, float], ...] = ((10.75, 1.0, 1.0), (15.0, 1.25, 0.95))
    evening: tuple[float, float, float] = (20.5, 1.2, 0.15)
    weekend_load: float = 0.4
    #: utilisation of the busiest weekday minute
    rho_peak: float = 0.9
    #: a minute is "peak" when its utilisation reaches this
    peak_rho: float = 0.75

    # Model calls.
    server_median_ms: float = 600.0
    server_sigma: float = 0.5
    network_median_ms: float = 40.0
    network_sigma: float = 0.3
    cross_region_extra_ms: float = 200.0
    #: mean service time S of the vendor queue (M/M/1)
    queue_service_ms: float = 200.0
    #: generation speed range, tokens per second after the first token
    tokens_per_s: tuple[float, float] = (40.0, 90.0)
    input_tokens_median: float = 1500.0
    input_tokens_per_step: float = 450.0
    streamed_share: float = 0.8
    flex_share: float = 0.005
    #: the fallback model's server time relative to the contracted model's
    fallback_speedup: float = 0.55
    #: shares of peak-minute calls degraded in each way
    fallback_share_at_peak: float = 0.04
    cross_region_share_at_peak: float = 0.04
    response_cache_share_at_peak: float = 0.02
    #: first-attempt failure rates: throttling reaches this at rho_peak, the others are flat
    throttle_share_at_peak: float = 0.05
    error_share: float = 0.004
    timeout_share: float = 0.001
    timeout_ms: float = 30_000.0
    #: share of retries that fail again, ending the task
    retry_fail_share: float = 0.15

    def __post_init__(self) -> None:
        problems = []
        if self.tasks < 1:
            problems.append("tasks must be ≥ 1")
        if self.days < 1:
            problems.append("days must be ≥ 1")
        if self.malformed < 0:
            problems.append("malformed must be ≥ 0")
        if self.start.tzinfo is None:
            problems.append("start must be timezone-aware (UTC)")
        if not 1 <= self.steps_min <= self.steps_max:
            problems.append("need 1 ≤ steps_min ≤ steps_max")
        if not 0.0 < self.rho_peak < 1.0:
            problems.append("rho_peak must be in (0, 1)")
        if abs(sum(self.tools_per_step) - 1.0) > 1e-9:
            problems.append("tools_per_step must sum to 1")
        if not self.tools:
            problems.append("tools must name at least one tool")
        if not self.other_regions and self.cross_region_share_at_peak > 0:
            problems.append("cross-region routing needs other_regions")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(f"unknown timezone {self.timezone!r}")
        if problems:
            raise UsageError("TrafficProfile: " + "; ".join(problems))


# ---------------------------------------------------------------------------------------------
# generation


def _lognormal(rng: np.random.Generator, median: float, sigma: float, n: int) -> F64:
    out: F64 = rng.lognormal(np.log(median), sigma, n)
    return out


def _ms_to_us(ms: F64) -> I64:
    return np.rint(ms * 1000.0).astype(np.int64)


def _load_curve(p: TrafficProfile, local_hour: F64) -> F64:
    """Relative load at a local hour of a weekday."""
    lo, hi = p.business_hours
    # smooth edges of the business day (about half an hour wide)
    plateau = (
        p.business_load / (1 + np.exp(-(local_hour - lo) * 4)) / (1 + np.exp((local_hour - hi) * 4))
    )
    w: F64 = np.full_like(local_hour, p.night_load) + plateau
    for centre, width, height in (*p.peaks, p.evening):
        w += height * np.exp(-0.5 * ((local_hour - centre) / width) ** 2)
    return w


def _offset_min(when: datetime, zone: ZoneInfo) -> int:
    offset = when.astimezone(zone).utcoffset()
    return 0 if offset is None else int(offset / timedelta(minutes=1))


def _minute_load(p: TrafficProfile) -> tuple[F64, F64]:
    """Per UTC minute of the window: task-start weights and utilisation ρ."""
    zone = ZoneInfo(p.timezone)
    start = p.start.astimezone(UTC)
    # one offset per day (a DST switch moves the curve on the next day: close enough)
    offsets = np.array(
        [_offset_min(start + timedelta(days=d, hours=12), zone) for d in range(p.days)]
    )
    minute = np.arange(p.days * _DAY_MIN, dtype=np.int64)
    start_min = int(start.timestamp()) // 60
    local_abs = start_min + minute + np.repeat(offsets, _DAY_MIN)
    local_hour = (local_abs % _DAY_MIN) / 60.0
    weekday = (local_abs // _DAY_MIN + 3) % 7  # 1970-01-01 was a Thursday; Monday = 0
    load = _load_curve(p, local_hour) * np.where(weekday >= 5, p.weekend_load, 1.0)
    ref = float(_load_curve(p, np.arange(_DAY_MIN) / 60.0).max())
    rho = np.minimum(p.rho_peak * load / ref, p.rho_peak)
    return load, rho


def _hex(raw: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """(n, k) random bytes → (n, 2k) lower-case hex characters."""
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    out = np.empty((raw.shape[0], raw.shape[1] * 2), dtype=np.uint8)
    out[:, 0::2] = digits[raw >> 4]
    out[:, 1::2] = digits[raw & 15]
    return out


def _fixed_strings(chars: npt.NDArray[np.uint8], valid: B | None = None) -> pa.Array:
    """(n, k) characters → a string array of n values of k characters, without Python loops.
    A block's ids stay far below the 2 GiB that 32-bit string offsets address."""
    n, k = chars.shape
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(k)
    validity, nulls = None, 0
    if valid is not None and not valid.all():
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
        nulls = int(valid.size - np.count_nonzero(valid))
    buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(chars))]
    return pa.Array.from_buffers(pa.string(), n, buffers, nulls)


def _numbers(values: npt.NDArray[Any], valid: B | None = None) -> pa.Array:
    """A numeric numpy array → an Arrow array over the same memory, nulls where not ``valid``."""
    values = np.ascontiguousarray(values)
    validity, nulls = None, 0
    if valid is not None and not valid.all():
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
        nulls = int(valid.size - np.count_nonzero(valid))
    typ = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(typ, values.size, [validity, pa.py_buffer(values)], nulls)


def _labels(
    values: Sequence[str | None], codes: npt.NDArray[Any], valid: B | None = None
) -> pa.Array:
    """Small-integer codes → strings, nulls where ``valid`` is False or the label is None."""
    dictionary = pa.array([None if v is None else str(v) for v in values], type=pa.string())
    idx = pa.array(codes.astype(np.int32), mask=None if valid is None else ~valid)
    return dictionary.take(idx)


def generate(profile: TrafficProfile) -> pa.Table:
    """Synthetic agent traffic for ``profile`` as a canonical span table (``schema.conform``ed).

    Rows are in time order of task start, each task's root span followed by its step spans in
    the order they ran. ``source_file`` is ``"generated"``, ``source_ref`` ``"row N"`` (1-based).
    """
    p = profile
    rng = np.random.default_rng(p.seed)

    # tasks: start minute along the load curve, uniform within the minute
    load, rho_min = _minute_load(p)
    minute = np.sort(rng.choice(load.size, size=p.tasks, p=load / load.sum()))
    start_epoch_us = round(p.start.timestamp() * 1_000_000)
    task_start = start_epoch_us + minute * _MINUTE_US + rng.integers(0, _MINUTE_US, p.tasks)
    task_start.sort()  # ties within a minute
    task_rho = rho_min[minute]

    # the rest block by block, each with its own child generator: same output, far less memory
    firsts = range(0, p.tasks, _BLOCK_TASKS)
    children = rng.spawn(len(firsts))

    def block(i: int) -> pa.RecordBatch:
        a = firsts[i]
        return _block(
            p, children[i], task_start[a : a + _BLOCK_TASKS], task_rho[a : a + _BLOCK_TASKS]
        )

    # blocks are independent, so threads change the speed, never the output
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        batches = list(pool.map(block, range(len(firsts))))
        table = pa.Table.from_batches(batches)
        if p.malformed:
            table = _add_malformed(table, p.malformed, rng)
        batches = table.to_batches()
        row_one = np.cumsum([0, *(b.num_rows for b in batches)])[:-1] + 1
        batches = list(pool.map(_with_source, batches, row_one.tolist()))
    return conform(pa.Table.from_batches(batches))


def _with_source(batch: pa.RecordBatch, first_row: int) -> pa.RecordBatch:
    """Add ``source_file`` and ``source_ref`` ("row N", 1-based) to a batch."""
    n = batch.num_rows
    rows = pc.cast(_numbers(np.arange(first_row, first_row + n)), pa.string())
    return pa.RecordBatch.from_arrays(
        [
            *batch.columns,
            _labels(["generated"], np.zeros(n, np.int8)),
            pc.binary_join_element_wise("row ", rows, ""),
        ],
        names=[*batch.schema.names, "source_file", "source_ref"],
    )


def _block(
    p: TrafficProfile, rng: np.random.Generator, task_start: I64, task_rho: F64
) -> pa.RecordBatch:
    """The rows of a block of tasks, given their start times and utilisation."""
    n_tasks = task_start.size
    n_steps = np.clip(
        np.rint(_lognormal(rng, p.steps_median, p.steps_sigma, n_tasks)), p.steps_min, p.steps_max
    ).astype(np.int64)

    # --- steps, before truncation at a failed retry
    s_task = np.repeat(np.arange(n_tasks), n_steps)
    s_first = np.concatenate(([0], np.cumsum(n_steps)[:-1]))
    s_pos = np.arange(s_task.size) - s_first[s_task]
    s_rho = task_rho[s_task]
    u = rng.random(s_task.size)
    ramp = np.clip((s_rho - 0.6) / (p.rho_peak - 0.6), 0.0, 1.0) ** 2
    p_throttle = p.throttle_share_at_peak * ramp
    first_status = np.select(
        [
            u < p_throttle,
            u < p_throttle + p.error_share,
            u < p_throttle + p.error_share + p.timeout_share,
        ],
        [_THROTTLED, _ERROR, _TIMEOUT],
        _OK,
    ).astype(np.int8)
    fail_again = (first_status != _OK) & (rng.random(s_task.size) < p.retry_fail_share)
    # the task ends at its first step whose retry failed too
    stop = np.minimum.reduceat(np.where(fail_again, s_pos, p.steps_max), s_first)
    n_steps = np.minimum(n_steps, stop + 1)
    keep = s_pos < n_steps[s_task]
    s_task, s_pos, first_status, fail_again = (
        s_task[keep],
        s_pos[keep],
        first_status[keep],
        fail_again[keep],
    )
    n_s = s_task.size
    retried = first_status != _OK
    last = s_pos == n_steps[s_task] - 1
    n_tools = rng.choice(4, size=n_s, p=np.asarray(p.tools_per_step))
    n_tools[last] = 0
    has_ret = rng.random(n_s) < p.retrieval_share
    # context grows step by step; later steps reuse the cached prefix
    base_tokens = _lognormal(rng, p.input_tokens_median, 0.4, n_tasks)
    s_input = np.rint(
        base_tokens[s_task] + s_pos * p.input_tokens_per_step * rng.uniform(0.7, 1.3, n_s)
    ).astype(np.int64)
    s_cached = np.where(
        (s_pos > 0) & (s_input >= 1024),
        (s_input * rng.uniform(0.5, 0.95, n_s)).astype(np.int64) // 128 * 128,
        0,
    )

    # --- step spans in run order
    k = has_ret.astype(np.int64) + retried + 1 + n_tools
    sp_step = np.repeat(np.arange(n_s), k)
    n_sp = sp_step.size
    sp_pos = np.arange(n_sp) - np.repeat(np.cumsum(k) - k, k)
    hr = has_ret[sp_step].astype(np.int64)
    rt = retried[sp_step].astype(np.int64)
    role = np.select(
        [sp_pos < hr, sp_pos < hr + rt, sp_pos == hr + rt],
        [_RETRIEVAL, _LLM_FIRST, _LLM_FINAL],
        _TOOL,
    ).astype(np.int8)
    sp_task = s_task[sp_step]

    # --- model calls
    is_llm = (role == _LLM_FIRST) | (role == _LLM_FINAL)
    l_idx = np.flatnonzero(is_llm)
    n_l = l_idx.size
    l_step = sp_step[l_idx]
    l_first = role[l_idx] == _LLM_FIRST
    l_status = np.where(l_first | fail_again[l_step], first_status[l_step], _OK).astype(np.int8)
    l_ok = l_status == _OK
    l_rho = task_rho[s_task[l_step]]
    peak = l_rho >= p.peak_rho
    cross = peak & (rng.random(n_l) < p.cross_region_share_at_peak)
    n_other = max(len(p.other_regions), 1)
    region_code = np.where(cross, 1 + rng.integers(0, n_other, n_l), 0)
    fallback = peak & l_ok & (rng.random(n_l) < p.fallback_share_at_peak)
    resp_cached = peak & l_ok & (rng.random(n_l) < p.response_cache_share_at_peak)
    flex = rng.random(n_l) < p.flex_share
    streamed = rng.random(n_l) < p.streamed_share
    waits = rng.random(n_l) < l_rho
    queue = np.where(waits, rng.exponential(1.0, n_l) * p.queue_service_ms / (1 - l_rho), 0.0)
    network = _lognormal(rng, p.network_median_ms, p.network_sigma, n_l) + np.where(
        cross, _lognormal(rng, p.cross_region_extra_ms, 0.15, n_l), 0.0
    )
    server = _lognormal(rng, p.server_median_ms, p.server_sigma, n_l)
    server *= np.where(fallback, p.fallback_speedup, 1.0) * np.where(flex, 1.6, 1.0)
    server = np.where(resp_cached, rng.uniform(5.0, 30.0, n_l), server)
    server = np.where(l_status == _THROTTLED, _lognormal(rng, 4.0, 0.5, n_l), server)
    server = np.where(l_status == _ERROR, _lognormal(rng, 250.0, 0.8, n_l), server)
    # the processing-time header is whole milliseconds; the others are clocked in µs
    server_us = np.maximum(np.rint(server), 1).astype(np.int64) * 1000
    queue_us = _ms_to_us(queue)
    network_us = _ms_to_us(network)
    timed_out = l_status == _TIMEOUT
    l_dur_us = np.where(
        timed_out,
        queue_us + _ms_to_us(np.full(n_l, p.timeout_ms)),
        queue_us + network_us + server_us,
    )
    prefill_us = (server_us * rng.uniform(0.1, 0.3, n_l)).astype(np.int64)
    rate = rng.uniform(p.tokens_per_s[0], p.tokens_per_s[1], n_l)
    out_tokens = np.maximum(np.rint((server_us - prefill_us) / 1e6 * rate), 1).astype(np.int64)
    ttft_us = queue_us + network_us + np.where(resp_cached, server_us // 2, prefill_us)
    http = np.select(
        [l_status == _THROTTLED, l_status == _ERROR, timed_out],
        [429, np.where(rng.random(n_l) < 0.5, 500, 503), 504],
        200,
    )
    backoff_ms = np.where(
        first_status[l_step] == _THROTTLED,
        rng.uniform(500.0, 1500.0, n_l),
        rng.uniform(100.0, 400.0, n_l),
    )

    # --- other spans
    tool_code = rng.integers(0, len(p.tools), n_sp)
    tool_median = np.array([m for _, m in p.tools])[tool_code]
    tool_ms = tool_median * rng.lognormal(0.0, p.tool_sigma, n_sp)
    tool_error = (role == _TOOL) & (rng.random(n_sp) < p.tool_error_share)
    ret_ms = _lognormal(rng, p.retrieval_median_ms, p.retrieval_sigma, n_sp)
    dur_us = np.where(role == _TOOL, _ms_to_us(tool_ms), _ms_to_us(ret_ms))
    dur_us[l_idx] = l_dur_us
    dur_us = np.maximum(dur_us, 1)
    gap_us = _ms_to_us(_lognormal(rng, p.gap_median_ms, 0.5, n_sp))
    # a retry waits out its backoff after the failed first attempt
    is_retry = ~l_first & retried[l_step]
    gap_us[l_idx[is_retry]] = _ms_to_us(backoff_ms[is_retry])

    # --- timestamps: each span starts after the previous one of its task ends
    spans_per_task = np.bincount(sp_task, minlength=n_tasks)
    t_first = np.cumsum(spans_per_task) - spans_per_task
    run = np.cumsum(gap_us + dur_us)
    before = (run - gap_us - dur_us)[t_first]
    lead = rng.integers(200, 3000, n_tasks)
    tail = rng.integers(100, 2000, n_tasks)
    sp_end = task_start[sp_task] + lead[sp_task] + run - before[sp_task]
    sp_start = sp_end - dur_us
    task_end = sp_end[t_first + spans_per_task - 1] + tail

    # task outcome: the failed retry that ended it, if any
    task_status = np.zeros(n_tasks, dtype=np.int8)
    ended = np.flatnonzero(fail_again)
    task_status[s_task[ended]] = first_status[ended]

    # --- ids
    raw = np.frombuffer(rng.bytes(16 * n_tasks), dtype=np.uint8).reshape(n_tasks, 16)
    task_hex = _hex(raw)
    n_rows = n_tasks + n_sp
    span_hex = _hex(np.frombuffer(rng.bytes(8 * n_rows), dtype=np.uint8).reshape(n_rows, 8))

    # --- interleave: task t's root row, then its spans
    task_row = t_first + np.arange(n_tasks)
    sp_row = np.arange(n_sp) + sp_task + 1
    row_task = np.empty(n_rows, dtype=np.int64)
    row_task[task_row] = np.arange(n_tasks)
    row_task[sp_row] = sp_task
    is_task = np.zeros(n_rows, dtype=np.bool_)
    is_task[task_row] = True

    def scatter(task_vals: npt.NDArray[Any], sp_vals: npt.NDArray[Any]) -> npt.NDArray[Any]:
        out = np.empty(n_rows, dtype=np.result_type(task_vals, sp_vals))
        out[task_row] = task_vals
        out[sp_row] = sp_vals
        return out

    def on_llm(vals: npt.NDArray[Any], fill: Any = 0) -> npt.NDArray[Any]:
        out = np.full(n_rows, fill, dtype=vals.dtype)
        out[sp_row[l_idx]] = vals
        return out

    llm_row = np.zeros(n_rows, dtype=np.bool_)
    llm_row[sp_row[l_idx]] = True

    # kind codes follow Kind's order: task, llm, tool, retrieval
    role_kind = np.array([3, 1, 1, 2], dtype=np.int8)
    kind_code = scatter(np.zeros(n_tasks, dtype=np.int8), role_kind[role])
    # name codes: agent.run, chat, retrieval.vector_search, then the tools in profile order
    name_sp = np.where(role == _TOOL, 3 + tool_code, np.where(role == _RETRIEVAL, 2, 1))
    name_code = scatter(np.zeros(n_tasks, dtype=np.int64), name_sp)
    sp_status = np.where(tool_error, _ERROR, 0).astype(np.int8)
    sp_status[l_idx] = l_status
    status_code = scatter(task_status, sp_status)
    # kind code 1 is llm (see kind_code): an error anywhere else is unclassified
    status_code = np.where((status_code == _ERROR) & (kind_code != 1), _UNCLASSIFIED, status_code)
    # error type: 0-3 as _ERROR_TYPE, 4 tool_error
    sp_etype = sp_status.astype(np.int8)
    sp_etype[tool_error] = 4
    etype_code = scatter(task_status, sp_etype)

    start_us = scatter(task_start, sp_start)
    end_us = scatter(task_end, sp_end)
    l_ttft_ok = l_ok & streamed

    def fmask(valid_l: B) -> B:
        """A per-model-call mask spread over all rows (False off model calls)."""
        out: B = on_llm(valid_l, False)
        return out

    cols: dict[str, pa.Array] = {
        "task_id": _fixed_strings(task_hex[row_task]),
        "span_id": _fixed_strings(span_hex),
        "parent_span_id": _fixed_strings(span_hex[task_row[row_task]], ~is_task),
        "kind": _labels([Kind.TASK, Kind.LLM, Kind.TOOL, Kind.RETRIEVAL], kind_code),
        "name": _labels(
            ["agent.run", "chat", "retrieval.vector_search", *(n for n, _ in p.tools)], name_code
        ),
        "operation": _labels(
            ["invoke_agent", "chat", "retrieval", "execute_tool"],
            np.minimum(name_code, 3),
        ),
        "start_us": _numbers(start_us),
        "end_us": _numbers(end_us),
        "duration_ms": _numbers((end_us - start_us) / 1000.0),
        "ttft_ms": _numbers(on_llm(ttft_us / 1000.0), fmask(l_ttft_ok)),
        "server_ms": _numbers(on_llm(server_us / 1000.0), fmask(~timed_out)),
        "queue_ms": _numbers(on_llm(queue_us / 1000.0), llm_row),
        "network_ms": _numbers(on_llm(network_us / 1000.0), fmask(~timed_out)),
        "request_model": _labels([p.model], np.zeros(n_rows, np.int8), llm_row),
        "response_model": _labels(
            [p.model, p.fallback_model], on_llm(fallback.astype(np.int8)), fmask(l_ok)
        ),
        "provider": _labels([p.provider], np.zeros(n_rows, np.int8), llm_row),
        "endpoint": _labels([p.endpoint], np.zeros(n_rows, np.int8), llm_row),
        "region": _labels(
            [p.home_region, *p.other_regions], on_llm(region_code.astype(np.int8)), llm_row
        ),
        "status": _labels(_STATUS, status_code),
        "http_status": _numbers(on_llm(http.astype(np.int64)), llm_row),
        "error_type": _labels([*_ERROR_TYPE, _TOOL_ERROR], etype_code, etype_code != 0),
        "attempt": _numbers(
            on_llm(np.where(l_first, 1, 1 + retried[l_step]).astype(np.int64)), llm_row
        ),
        "input_tokens": _numbers(on_llm(s_input[l_step]), fmask(l_ok)),
        "output_tokens": _numbers(on_llm(out_tokens), fmask(l_ok)),
        "cached_tokens": _numbers(on_llm(s_cached[l_step]), fmask(l_ok)),
        "service_tier": _labels(["default", "flex"], on_llm(flex.astype(np.int8)), fmask(l_ok)),
        "response_cached": pa.array(on_llm(resp_cached, False), mask=~llm_row),
    }
    return pa.RecordBatch.from_pydict(cols)


def _add_malformed(table: pa.Table, count: int, rng: np.random.Generator) -> pa.Table:
    """Insert ``count`` bad copies of successful model-call rows, each right after its source."""
    kind = table.column("kind").to_numpy(zero_copy_only=False)
    status = table.column("status").to_numpy(zero_copy_only=False)
    candidates = np.flatnonzero((kind == Kind.LLM) & (status == Status.OK))
    # evenly spread, deterministic positions
    src = candidates[((np.arange(count) + 0.5) * candidates.size / count).astype(np.int64)]
    which = np.arange(count) % len(MALFORMED_KINDS)
    bad = table.take(pa.array(src))
    new_ids = _fixed_strings(
        _hex(np.frombuffer(rng.bytes(8 * count), dtype=np.uint8).reshape(count, 8))
    )
    is_dup = which == MALFORMED_KINDS.index("duplicate_span_id")
    span_id = pc.if_else(pa.array(is_dup), bad.column("span_id"), new_ids)

    start = bad.column("start_us").to_numpy()
    end = bad.column("end_us").to_numpy()
    before = which == MALFORMED_KINDS.index("end_before_start")
    end = np.where(before, start - (end - start), end)
    null_start = which == MALFORMED_KINDS.index("null_start")
    duration = (end - start) / 1000.0
    out = bad.column("output_tokens").to_numpy()
    negative = which == MALFORMED_KINDS.index("negative_output_tokens")
    out = np.where(negative, -np.maximum(out, 1), out)
    no_task = which == MALFORMED_KINDS.index("null_task_id")

    bad = bad.set_column(bad.schema.get_field_index("span_id"), "span_id", span_id)
    for name, arr in (
        (
            "task_id",
            pc.if_else(pa.array(no_task), pa.scalar(None, pa.string()), bad.column("task_id")),
        ),
        ("start_us", pa.array(start, mask=null_start)),
        ("end_us", pa.array(end)),
        ("duration_ms", pa.array(duration, mask=null_start)),
        ("output_tokens", pa.array(out)),
    ):
        bad = bad.set_column(bad.schema.get_field_index(name), name, arr)
    merged = pa.concat_tables([table, bad])
    # each bad row goes right after its source row
    key = np.concatenate((np.arange(table.num_rows) * 2, src * 2 + 1))
    return merged.take(pa.array(np.argsort(key, kind="stable")))


# ---------------------------------------------------------------------------------------------
# writers


def write(table: pa.Table, path: Path, fmt: str) -> None:
    """Write a canonical table as ``parquet``, ``otlp`` (JSON lines) or ``langfuse`` (JSON)."""
    writers = {"parquet": write_parquet, "otlp": write_otlp, "langfuse": write_langfuse}
    if fmt not in writers:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    from slacheck.outputs import atomic_path

    # a failed write leaves whatever was at ``path`` before
    with atomic_path(path) as tmp:
        try:
            writers[fmt](table, tmp)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
