"""Write the bulk-export fixtures in each tool's own layout (see PROVENANCE.md).

Run from the repository root: ``python tests/data/exports/write_fixtures.py``. The files are
committed; this script is how they were made, so a change to them is a change here.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def iso(t: datetime | None) -> str | None:
    """JavaScript's Date.toISOString(): milliseconds, Z."""
    return None if t is None else t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


# (task, offset s, duration ms, ttft ms or None, status code or None, error class, tokens)
CALLS = [
    ("a", 0, 1800, 420, None, None, (120, 40)),
    ("a", 5, 2100, 610, None, None, (300, 80)),
    ("a", 9, 900, None, 404, "NotFoundError", (0, 0)),
    ("b", 3600, 2500, 380, None, None, (90, 200)),
    ("b", 3605, 3000, 1450, None, None, (150, 60)),
    ("b", 3610, 30_000, None, 500, "InternalServerError", (0, 0)),
    ("c", 90_000, 1200, 300, None, None, (80, 20)),
    ("c", 90_004, 120, None, 429, "RateLimitError", (0, 0)),
    ("c", 90_009, 2200, 700, None, None, (60, 90)),
]


def langfuse_rows() -> list[dict[str, object]]:
    """Observations with the keys of langfuse's convertObservation (complete) plus the
    batch export's trace and model fields, in that order."""
    rows: list[dict[str, object]] = []
    tasks = sorted({c[0] for c in CALLS})
    for task in tasks:
        mine = [c for c in CALLS if c[0] == task]
        start = T0 + timedelta(seconds=mine[0][1] - 0.05)
        end = T0 + timedelta(seconds=mine[-1][1], milliseconds=mine[-1][2] + 30)
        rows.append(
            _observation(f"obs-{task}-root", f"trace-{task}", None, "AGENT", "agent", start, end)
        )
        for i, (_, off, dur, ttft, code, cls, (tin, tout)) in enumerate(mine):
            s = T0 + timedelta(seconds=off)
            e = s + timedelta(milliseconds=dur)
            attrs: dict[str, object] = {
                "gen_ai.system": "openai",
                # one producer writes the host, another the base URL
                "server.address": "api.openai.com"
                if i % 2 == 0
                else "https://API.openai.com:443/v1/",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
            }
            if code is not None:
                attrs["http.response.status_code"] = code
                attrs["error.type"] = f"openai.{cls}"
            gen = _observation(
                f"obs-{task}-gen{i}",
                f"trace-{task}",
                f"obs-{task}-root",
                "GENERATION",
                "ChatOpenAI",
                s,
                e,
                model="gpt-4o",
                completion=None if ttft is None else s + timedelta(milliseconds=ttft),
                usage={"input": tin, "output": tout, "total": tin + tout} if code is None else {},
                metadata={"attributes": attrs, "resourceAttributes": {"service.name": "agent"}},
                level="ERROR" if code is not None else "DEFAULT",
                message=None if code is None else f"Error code: {code} - {cls}",
            )
            rows.append(gen)
            tool_s = e + timedelta(milliseconds=20)
            rows.append(
                _observation(
                    f"obs-{task}-tool{i}",
                    f"trace-{task}",
                    f"obs-{task}-root",
                    "TOOL",
                    "search",
                    tool_s,
                    tool_s + timedelta(milliseconds=150),
                )
            )
    return rows


def _observation(
    oid,
    trace,
    parent,
    typ,
    name,
    start,
    end,
    *,
    model=None,
    completion=None,
    usage=None,
    metadata=None,
    level="DEFAULT",
    message=None,
):
    usage = usage or {}
    latency = (end - start).total_seconds()
    return {
        "id": oid,
        "traceId": trace,
        "startTime": start,
        "endTime": end,
        "projectId": "proj-1",
        "parentObservationId": parent,
        "type": typ,
        "environment": "default",
        "name": name,
        "level": level,
        "statusMessage": message,
        "version": None,
        "createdAt": start,
        "updatedAt": end,
        "input": None,
        "output": None,
        "metadata": metadata or {},
        "model": model,
        "internalModelId": None,
        "modelParameters": {"temperature": 0} if model else None,
        "completionStartTime": completion,
        "promptId": None,
        "promptName": None,
        "promptVersion": None,
        "latency": latency,
        "timeToFirstToken": None if completion is None else (completion - start).total_seconds(),
        "providedUsageDetails": usage,
        "usageDetails": usage,
        "costDetails": {},
        "providedCostDetails": {},
        "inputCost": None,
        "outputCost": None,
        "totalCost": None,
        "inputUsage": usage.get("input", 0),
        "outputUsage": usage.get("output", 0),
        "totalUsage": usage.get("total", 0),
        "usagePricingTierId": None,
        "usagePricingTierName": None,
        "toolDefinitions": None,
        "toolCalls": None,
        "toolCallNames": None,
        "traceName": "agent-run",
        "traceTags": [],
        "traceTimestamp": start,
        "userId": None,
        "toolDefinitionsCount": None,
        "toolCallsCount": None,
        "modelId": None,
        "inputPrice": None,
        "outputPrice": None,
        "totalPrice": None,
        "comments": [],
    }


def _js_json(value: object) -> str:
    """JSON.stringify: dates as ISO strings (quoted), compact."""
    if isinstance(value, datetime):
        return json.dumps(iso(value))
    return json.dumps(value, separators=(",", ":"), default=iso)


def write_langfuse() -> None:
    rows = langfuse_rows()
    headers = list(rows[0])
    # transformStreamToCsv: every field quoted; a string as it is, anything else through
    # JSON.stringify (so a Date is "\"2026-…Z\""), null as the empty string
    with (HERE / "langfuse_observations.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(headers)
        for row in rows:
            w.writerow(
                [
                    ""
                    if row[h] is None
                    else row[h]
                    if isinstance(row[h], str)
                    else _js_json(row[h])
                    for h in headers
                ]
            )
    # transformStreamToJsonl: JSON.stringify(row) per line
    with (HERE / "langfuse_observations.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, separators=(",", ":"), default=iso) + "\n")


def write_langsmith() -> None:
    ids = {}
    cols: dict[str, list[object]] = {
        k: []
        for k in (
            "id",
            "name",
            "run_type",
            "start_time",
            "end_time",
            "extra",
            "error",
            "serialized",
            "events",
            "inputs",
            "outputs",
            "reference_example_id",
            "parent_run_id",
            "tags",
            "session_id",
            "trace_id",
            "dotted_order",
            "status",
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
            "first_token_time",
            "total_cost",
            "prompt_cost",
            "completion_cost",
        )
    }

    def add(
        rid,
        name,
        run_type,
        start,
        end,
        parent,
        trace,
        *,
        extra=None,
        error=None,
        outputs=None,
        tokens=(None, None),
        first=None,
        status="success",
    ):
        cols["id"].append(rid)
        cols["name"].append(name)
        cols["run_type"].append(run_type)
        cols["start_time"].append(start)
        cols["end_time"].append(end)
        cols["extra"].append(json.dumps(extra or {}))
        cols["error"].append(error)
        cols["serialized"].append(None)
        cols["events"].append(json.dumps([]))
        cols["inputs"].append(json.dumps({}))
        cols["outputs"].append(json.dumps(outputs or {}))
        cols["reference_example_id"].append(None)
        cols["parent_run_id"].append(parent)
        cols["tags"].append([])
        cols["session_id"].append("00000000-0000-4000-8000-000000000001")
        cols["trace_id"].append(trace)
        cols["dotted_order"].append(None)
        cols["status"].append(status)
        cols["prompt_tokens"].append(tokens[0])
        cols["completion_tokens"].append(tokens[1])
        cols["total_tokens"].append(None if tokens[0] is None else tokens[0] + tokens[1])
        cols["first_token_time"].append(first)
        cols["total_cost"].append(None)
        cols["prompt_cost"].append(None)
        cols["completion_cost"].append(None)

    for n, task in enumerate(sorted({c[0] for c in CALLS})):
        mine = [c for c in CALLS if c[0] == task]
        trace = f"00000000-0000-4000-8000-0000000001{n:02d}"
        start = T0 + timedelta(seconds=mine[0][1] - 0.05)
        end = T0 + timedelta(seconds=mine[-1][1], milliseconds=mine[-1][2] + 30)
        add(trace, "AgentExecutor", "chain", start, end, None, trace)
        for i, (_, off, dur, ttft, code, cls, (tin, tout)) in enumerate(mine):
            rid = f"00000000-0000-4000-8000-0000000002{n}{i}"
            s = T0 + timedelta(seconds=off)
            e = s + timedelta(milliseconds=dur)
            extra = {
                "metadata": {
                    "ls_provider": "openai",
                    "ls_model_name": "gpt-4o",
                    "ls_model_type": "chat",
                },
                "invocation_params": {"model": "gpt-4o", "base_url": "https://api.openai.com/v1"},
            }
            error = (
                None
                if code is None
                else f"{cls}('Error code: {code} - {{\\'error\\': {{\\'message\\': \\'...\\'}}}}')"
            )
            add(
                rid,
                "ChatOpenAI",
                "llm",
                s,
                e,
                trace,
                trace,
                extra=extra,
                error=error,
                outputs=None if code else {"llm_output": {"model_name": "gpt-4o-2024-08-06"}},
                tokens=(tin, tout) if code is None else (0, 0),
                first=None if ttft is None else s + timedelta(milliseconds=ttft),
                status="error" if code is not None else "success",
            )
            ts = e + timedelta(milliseconds=20)
            add(
                f"00000000-0000-4000-8000-0000000003{n}{i}",
                "search",
                "tool",
                ts,
                ts + timedelta(milliseconds=150),
                trace,
                trace,
            )
    ts_type = pa.timestamp("us", tz="UTC")
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("name", pa.string()),
            ("run_type", pa.string()),
            ("start_time", ts_type),
            ("end_time", ts_type),
            ("extra", pa.string()),
            ("error", pa.string()),
            ("serialized", pa.string()),
            ("events", pa.string()),
            ("inputs", pa.string()),
            ("outputs", pa.string()),
            ("reference_example_id", pa.string()),
            ("parent_run_id", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("session_id", pa.string()),
            ("trace_id", pa.string()),
            ("dotted_order", pa.string()),
            ("status", pa.string()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("total_tokens", pa.int64()),
            ("first_token_time", ts_type),
            ("total_cost", pa.float64()),
            ("prompt_cost", pa.float64()),
            ("completion_cost", pa.float64()),
        ]
    )
    pq.write_table(pa.table(cols, schema=schema), HERE / "langsmith_runs.parquet")
    del ids


def litellm_rows() -> list[dict[str, object]]:
    rows = []
    for n, (_, off, dur, ttft, code, cls, (tin, tout)) in enumerate(CALLS):
        s = T0 + timedelta(seconds=off)
        e = s + timedelta(milliseconds=dur)
        failed = code is not None and code != 200
        meta: dict[str, object] = {
            "user_api_key": "hashed",
            "status": "failure" if failed else "success",
        }
        if failed:
            meta["error_information"] = {
                "error_code": str(code),
                "error_class": cls,
                "llm_provider": "openai",
                "traceback": "",
                "error_message": f"litellm.{cls}: OpenAIException - Error code: {code}",
            }
        rows.append(
            {
                "request_id": f"chatcmpl-{n:04d}",
                "call_type": "acompletion",
                "api_key": "hashed",
                "spend": 0.0,
                "total_tokens": tin + tout,
                "prompt_tokens": tin,
                "completion_tokens": tout,
                "startTime": s,
                "endTime": e,
                "request_duration_ms": dur,
                # LiteLLM writes completionStartTime = endTime for a call that was not streamed
                "completionStartTime": e if ttft is None else s + timedelta(milliseconds=ttft),
                "model": "gpt-4o",
                "model_id": "m1",
                "model_group": "gpt-4o",
                "custom_llm_provider": "openai",
                "api_base": "https://api.openai.com/v1/",
                "user": "",
                "metadata": json.dumps(meta),
                "cache_hit": "True" if n == 6 else "False",
                "cache_key": "",
                "request_tags": "[]",
                "team_id": None,
                "organization_id": None,
                "end_user": "",
                "requester_ip_address": "",
                "messages": "{}",
                "response": "{}",
                "session_id": None,
                "status": "failure" if failed else "success",
                "mcp_namespaced_tool_name": None,
                "agent_id": None,
                "proxy_server_request": "{}",
            }
        )
    return rows


def write_litellm() -> None:
    rows = litellm_rows()
    # what `COPY "LiteLLM_SpendLogs" TO STDOUT WITH CSV HEADER` writes: timestamp(3) columns
    # as `YYYY-MM-DD HH:MM:SS.mmm`, no zone (the proxy writes UTC), JSON as text, nulls empty
    with (HERE / "litellm_spendlogs.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(list(rows[0]))
        for row in rows:
            w.writerow(
                [
                    ""
                    if v is None
                    else v.strftime("%Y-%m-%d %H:%M:%S.") + f"{v.microsecond // 1000:03d}"
                    if isinstance(v, datetime)
                    else v
                    for v in row.values()
                ]
            )
    table = pa.Table.from_pylist(
        [
            {k: (v.replace(tzinfo=None) if isinstance(v, datetime) else v) for k, v in r.items()}
            for r in rows
        ]
    )
    pq.write_table(table, HERE / "litellm_spendlogs.parquet")


if __name__ == "__main__":
    write_langfuse()
    write_langsmith()
    write_litellm()
