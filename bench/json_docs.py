"""`python -m bench.json_docs` (``make bench-json``): JSON trace documents read by slacheck's
Python readers beside two baselines doing the same flattening on the same file: ``json.load``
plus pyarrow (the least a Python reader can do) and DuckDB's ``read_json``.

Three documents of about 500,000 spans each (SLACHECK_BENCH_JSON_TASKS: 22,000 tasks), written
once from the synthetic generator into SLACHECK_BENCH_OUT (default ``bench/out``): a Langfuse
observation export (a JSON list), an OTLP JSON document (one ``ExportTraceServiceRequest``, a
resource per 1,000 spans) and a LangSmith run list. Each step runs in its own process; its CPU
(user + sys, every thread) and peak memory (VmHWM) are its own. The load is printed with them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("SLACHECK_BENCH_OUT", str(Path(__file__).resolve().parent / "out")))
TASKS = int(os.environ.get("SLACHECK_BENCH_JSON_TASKS", "22000"))
DAYS = 30
FORMATS = ("langfuse", "otlp", "langsmith")


def _path(fmt: str) -> Path:
    return OUT / f"json-{fmt}-{TASKS}x{DAYS}d.json"


def _write_otlp_document(table: Any, path: Path, per_resource: int = 1000) -> None:
    """One OTLP ``ExportTraceServiceRequest`` holding every span, a resource per
    ``per_resource`` spans (as a collector's JSON export of a batch groups them)."""
    from slacheck.trace.export_writers import _otlp_span, _rows

    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]}
    scope = {"name": "slacheck.bench", "version": "1"}
    with path.open("w", encoding="utf-8") as out:
        out.write('{"resourceSpans":[')
        spans: list[dict[str, Any]] = []
        first = True

        def flush() -> None:
            nonlocal first
            block = {"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}
            out.write(("" if first else ",\n") + json.dumps(block, separators=(",", ":")))
            first = False

        for r in _rows(table):
            if r["task_id"] is None or r["span_id"] is None:
                continue
            spans.append(_otlp_span(r))
            if len(spans) == per_resource:
                flush()
                spans = []
        if spans:
            flush()
        out.write("]}\n")


def _iso(us: int | None) -> str | None:
    from datetime import UTC, datetime

    if us is None:
        return None
    return datetime.fromtimestamp(us / 1e6, tz=UTC).isoformat().replace("+00:00", "Z")


def _write_langsmith(table: Any, path: Path) -> None:
    """A JSON list of LangSmith runs (``list_runs``' shape): ids, times in ISO-8601, the
    provider and model in ``extra.metadata``, tokens in ``outputs.usage_metadata``."""
    from slacheck.trace.export_writers import _rows

    run_type = {"task": "chain", "llm": "llm", "tool": "tool", "retrieval": "retriever"}
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        first = True
        for r in _rows(table):
            if r["task_id"] is None or r["span_id"] is None:
                continue
            failed = r["status"] not in (None, "ok")
            metadata = {"ls_provider": r["provider"], "ls_model_name": r["request_model"]}
            usage = {
                "input_tokens": r["input_tokens"],
                "output_tokens": r["output_tokens"],
                "total_tokens": None,
            }
            run = {
                "id": r["span_id"],
                "trace_id": r["task_id"],
                "parent_run_id": r["parent_span_id"],
                "name": r["name"],
                "run_type": run_type.get(r["kind"], "chain"),
                "start_time": _iso(r["start_us"]),
                "end_time": _iso(r["end_us"]),
                "extra": {"metadata": {k: v for k, v in metadata.items() if v is not None}},
                "outputs": {"usage_metadata": usage} if r["kind"] == "llm" else {},
                "error": (r["error_type"] or r["status"]) if failed else None,
                "status": "error" if failed else "success",
            }
            out.write("\n" if first else ",\n")
            out.write(json.dumps(run, separators=(",", ":")))
            first = False
        out.write("\n]\n")


def generate_documents() -> dict[str, Path]:
    """The three documents, written once (cached by name)."""
    from slacheck.trace.generate import TrafficProfile, generate
    from slacheck.trace.generate import write as write_canonical

    paths = {fmt: _path(fmt) for fmt in FORMATS}
    if all(p.exists() for p in paths.values()):
        return paths
    OUT.mkdir(parents=True, exist_ok=True)
    table = generate(TrafficProfile(tasks=TASKS, days=DAYS, seed=27))
    writers = {
        "langfuse": lambda t, p: write_canonical(t, p, "langfuse"),
        "otlp": _write_otlp_document,
        "langsmith": _write_langsmith,
    }
    for fmt, path in paths.items():
        if not path.exists():
            part = path.with_suffix(".partial")
            writers[fmt](table, part)
            part.rename(path)
    return paths


# -- the steps, each in a process of its own ---------------------------------------------------


def _peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _slacheck(fmt: str, path: Path) -> int:
    from slacheck.trace.ingest import _json_readers

    return int(_json_readers()[fmt](path).num_rows)


def _ts(values: list[Any]) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(values, pa.string())
    return pc.cast(pc.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z", "us", error_is_null=True), "int64")


def _json_pyarrow(fmt: str, path: Path) -> int:
    """The least a Python reader does: ``json.load``, one pass pulling each column's value out
    of every record (the embedded JSON decoded), ``pa.array`` per column, timestamps parsed."""
    import pyarrow as pa

    with path.open("rb") as fh:
        doc = json.load(fh)
    cols: dict[str, list[Any]] = {}
    if fmt == "langfuse":
        names = ("id", "traceId", "parentObservationId", "name", "type", "model", "level")
        names += ("statusMessage",)
        for key in names:
            cols[key] = [o.get(key) for o in doc]
        for key in ("startTime", "endTime", "completionStartTime"):
            cols[key] = _ts([o.get(key) for o in doc])
        usage = [o.get("usageDetails") or {} for o in doc]
        for key in ("input", "output", "cache_read_input_tokens"):
            cols[key] = [u.get(key) for u in usage]
        attrs = [json.loads(o["metadata"]).get("attributes", {}) for o in doc]
        for key in ("gen_ai.operation.name", "gen_ai.request.model", "gen_ai.response.model"):
            cols[key] = [a.get(key) for a in attrs]
    elif fmt == "langsmith":
        names = ("id", "trace_id", "parent_run_id", "name", "run_type", "error", "status")
        for key in names:
            cols[key] = [r.get(key) for r in doc]
        for key in ("start_time", "end_time"):
            cols[key] = _ts([r.get(key) for r in doc])
        meta = [r["extra"]["metadata"] for r in doc]
        for key in ("ls_provider", "ls_model_name"):
            cols[key] = [m.get(key) for m in meta]
        usage = [(r.get("outputs") or {}).get("usage_metadata") or {} for r in doc]
        for key in ("input_tokens", "output_tokens"):
            cols[key] = [u.get(key) for u in usage]
    else:
        spans: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for rs in doc["resourceSpans"]:
            resource = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
            for ss in rs["scopeSpans"]:
                spans.extend((resource, s) for s in ss["spans"])
        for key in ("traceId", "spanId", "parentSpanId", "name"):
            cols[key] = [s.get(key) for _, s in spans]
        for key in ("startTimeUnixNano", "endTimeUnixNano"):
            cols[key] = pa.array([int(s[key]) // 1000 for _, s in spans], pa.int64())
        attrs = [r | {a["key"]: a["value"] for a in s["attributes"]} for r, s in spans]
        for key in (
            "gen_ai.operation.name",
            "gen_ai.provider.name",
            "gen_ai.request.model",
            "gen_ai.response.model",
            "server.address",
            "cloud.region",
            "error.type",
        ):
            cols[key] = [(a.get(key) or {}).get("stringValue") for a in attrs]
        for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
            cols[key] = [
                int(v["intValue"]) if (v := a.get(key)) is not None else None for a in attrs
            ]
        cols["status"] = [(s.get("status") or {}).get("code") for _, s in spans]
    table = pa.table({k: v if isinstance(v, pa.Array) else pa.array(v) for k, v in cols.items()})
    return int(table.num_rows)


def _duckdb_sql(fmt: str, path: Path) -> str:
    src = "'" + str(path).replace("'", "''") + "'"
    if fmt == "langfuse":
        attr = "json_extract_string(metadata, '$.attributes.\"{}\"')"
        return f"""
            SELECT id, traceId, parentObservationId, name, type, model, level, statusMessage,
                   epoch_us(CAST(startTime AS TIMESTAMPTZ)) AS start_us,
                   epoch_us(CAST(endTime AS TIMESTAMPTZ)) AS end_us,
                   epoch_us(CAST(completionStartTime AS TIMESTAMPTZ)) AS first_us,
                   usageDetails.input AS input, usageDetails.output AS output,
                   usageDetails.cache_read_input_tokens AS cached,
                   {attr.format("gen_ai.operation.name")} AS operation,
                   {attr.format("gen_ai.request.model")} AS request_model,
                   {attr.format("gen_ai.response.model")} AS response_model
            FROM read_json({src}, format = 'array')
        """
    if fmt == "langsmith":
        return f"""
            SELECT id, trace_id, parent_run_id, name, run_type, error, status,
                   epoch_us(CAST(start_time AS TIMESTAMPTZ)) AS start_us,
                   epoch_us(CAST(end_time AS TIMESTAMPTZ)) AS end_us,
                   extra.metadata.ls_provider AS provider,
                   extra.metadata.ls_model_name AS request_model,
                   outputs.usage_metadata.input_tokens AS input,
                   outputs.usage_metadata.output_tokens AS output
            FROM read_json({src}, format = 'array')
        """
    keys = (
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "server.address",
        "cloud.region",
        "error.type",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
    )
    picks = ",\n".join(
        f"list_filter(s.attributes, lambda a: a.key = '{k}')[1].value.stringValue AS \"{k}\""
        if "usage" not in k
        else f"CAST(list_filter(s.attributes, lambda a: a.key = '{k}')[1].value.intValue AS BIGINT)"
        f' AS "{k}"'
        for k in keys
    )
    return f"""
        WITH r AS (SELECT unnest(resourceSpans) AS rs
                   FROM read_json({src}, maximum_object_size = {path.stat().st_size + 2**20})),
        sc AS (SELECT unnest(rs.scopeSpans) AS ss FROM r),
        sp AS (SELECT unnest(ss.spans) AS s FROM sc)
        SELECT s.traceId, s.spanId, s.parentSpanId, s.name,
               CAST(s.startTimeUnixNano AS HUGEINT) // 1000 AS start_us,
               CAST(s.endTimeUnixNano AS HUGEINT) // 1000 AS end_us,
               s.status.code AS status, {picks}
        FROM sp
    """


def _duckdb(fmt: str, path: Path) -> int:
    """DuckDB's ``read_json`` doing the same flattening, into a table (as ingestion would)."""
    import duckdb

    con = duckdb.connect()
    # the OTLP document is one JSON object, which DuckDB reads whole
    con.execute(f"SET memory_limit = '{'8GB' if fmt == 'otlp' else '1GB'}'")
    con.execute(f"CREATE TEMP TABLE t AS {_duckdb_sql(fmt, path)}")
    row = con.execute("SELECT count(*) FROM t").fetchone()
    return int(row[0]) if row else 0


STEPS = {"slacheck": _slacheck, "json.load+pyarrow": _json_pyarrow, "duckdb read_json": _duckdb}


def _child(step: str, fmt: str, path: str) -> None:
    import duckdb  # noqa: F401  the libraries every step imports, before the clock starts
    import pyarrow  # noqa: F401

    import slacheck.trace.ingest  # noqa: F401

    before = os.times()
    t0 = time.perf_counter()
    rows = STEPS[step](fmt, Path(path))
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = after.user + after.system - before.user - before.system  # every thread's
    print(json.dumps({"rows": rows, "wall": wall, "cpu": cpu, "peak_mib": _peak_mib()}))


def _run(step: str, fmt: str, path: Path) -> dict[str, Any]:
    res = subprocess.run(
        [sys.executable, "-m", "bench.json_docs", "--child", step, fmt, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        tail = (res.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {step} on {fmt} failed: {tail[:300]}", flush=True)
        return {"rows": 0, "wall": float("nan"), "cpu": float("nan"), "peak_mib": float("nan")}
    data: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(*sys.argv[2:5])
        return
    only = set(sys.argv[1:]) or set(FORMATS)
    paths = generate_documents()
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    for fmt in FORMATS:
        if fmt not in only:
            continue
        path = paths[fmt]
        size = path.stat().st_size / 2**20
        print(f"{fmt}: {path.name}, {size:,.0f} MiB", flush=True)
        runs = {step: _run(step, fmt, path) for step in STEPS}
        base_py = runs["json.load+pyarrow"]["cpu"]
        base_db = runs["duckdb read_json"]["cpu"]
        for step, r in runs.items():
            print(
                f"  {step:18s} cpu {r['cpu']:7.2f} s  wall {r['wall']:6.2f} s  "
                f"peak {r['peak_mib']:7,.0f} MiB  rows {r['rows']:,}  "
                f"({r['cpu'] / base_py:.2f}× json.load+pyarrow, {r['cpu'] / base_db:.2f}× duckdb)",
                flush=True,
            )
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")


if __name__ == "__main__":
    main()
