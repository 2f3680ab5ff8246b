"""Hostile JSON trace documents (Langfuse, LangSmith, OTLP) and a digest of what a reader makes
of a file, for ``test_json_readers_same``: the readers made faster must give every file exactly
the rows, defects and problems the readers gave before (``DIGESTS`` pins them).

Every timestamp and count is drawn from ``test_reader_differential.EDGES`` (the limits
``numbers`` specifies), names from its ``NAMES``; the shapes are each reader's (lists, wrapped
lists, JSON lines, post/patch payloads), with embedded JSON strings, wrong types, messages the
status rule reads, and some records a reader refuses.

``python -m tests.json_corpus`` writes the digests again (only after checking, by hand, that a
change of result is a fix)."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.test_reader_differential import EDGES, NAMES, T0

ROOT = Path(__file__).resolve().parent
DIGESTS = ROOT / "json_reader_digests.json"
CASES = 40

_ISO = ["2026-07-01T00:00:00Z", "2026-07-01T00:00:01.5Z", "2026-07-01T08:00:00+08:00"]
_MESSAGES = [
    None,
    "",
    "Error code: 429 - rate limited",
    "openai.RateLimitError: too many",
    "Status 503",
    "Request timed out.",
    "Connection error.",
    "NotFoundError('x')",
    "boom",
]
_HOSTS = [None, "https://api.openai.com/v1", "http://GW.local:4000/v1/", "localhost", "x"]
_MODELS = ["gpt-4o", '"gpt-4o"', "", None, 7, "模型"]


def _edge(rng: random.Random, iso_share: float = 0.3) -> Any:
    if rng.random() < iso_share:
        return rng.choice(_ISO)
    return rng.choice(EDGES)


def _maybe(rng: random.Random, value: Any, p: float = 0.7) -> Any:
    return value if rng.random() < p else None


def _embedded(rng: random.Random, value: Any) -> Any:
    """A value as it is, or JSON-encoded as some exporters write it, or not JSON at all."""
    r = rng.random()
    if r < 0.3:
        return json.dumps(value, ensure_ascii=False)
    if r < 0.35:
        return "{not json"
    return value


def _attributes(rng: random.Random) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    picks: list[tuple[str, Callable[[], Any]]] = [
        ("gen_ai.operation.name", lambda: rng.choice(["chat", "embeddings", '"chat"', 3])),
        ("gen_ai.system", lambda: rng.choice(["openai", "langchain", "anthropic", None])),
        ("gen_ai.provider.name", lambda: rng.choice(["openai", "azure.ai.openai"])),
        ("gen_ai.request.model", lambda: rng.choice(_MODELS)),
        ("gen_ai.response.model", lambda: rng.choice(_MODELS)),
        ("gen_ai.usage.input_tokens", lambda: _edge(rng, 0)),
        ("gen_ai.usage.output_tokens", lambda: _edge(rng, 0)),
        ("server.address", lambda: rng.choice(_HOSTS)),
        ("http.response.status_code", lambda: rng.choice([200, 404, "429", 503, "x", 1.5])),
        ("error.type", lambda: rng.choice(["RateLimitError", "500", "httpx.ReadTimeout"])),
        ("gen_ai.response.time_to_first_chunk", lambda: _edge(rng, 0)),
        ("openinference.span.kind", lambda: rng.choice(["LLM", "TOOL", "CHAIN", "llm"])),
        ("ai.operationId", lambda: "ai.generateText.doGenerate"),
        ("ls_provider", lambda: rng.choice(["openai", "anthropic"])),
        ("llm.token_count.prompt", lambda: _edge(rng, 0)),
        ("http.response.header.openai-processing-ms", lambda: rng.choice([["12"], [], "x"])),
        ("cloud.region", lambda: rng.choice(["cn-shanghai", None])),
        ("slacheck.attempt", lambda: _edge(rng, 0)),
    ]
    for key, value in picks:
        if rng.random() < 0.35:
            attrs[key] = value()
    return attrs


# -- Langfuse -----------------------------------------------------------------------------------


def _observation(rng: random.Random, i: int) -> dict[str, Any]:
    start = f"2026-07-01T00:{i % 60:02d}:00.000Z"
    obs: dict[str, Any] = {
        "id": rng.choice([f"obs-{i}", f"OBS-{i}", i, None]) if rng.random() < 0.2 else f"o{i}",
        "traceId": f"trace-{i // 4}" if rng.random() < 0.95 else rng.choice([None, 5, ""]),
        "parentObservationId": f"o{i - 1}" if i % 4 and rng.random() < 0.9 else None,
        "type": rng.choice(["GENERATION", "SPAN", "TOOL", "EMBEDDING", "AGENT", "generation"]),
        "name": rng.choice([*NAMES, None, 3]),
        "startTime": start if rng.random() < 0.6 else _edge(rng),
        "endTime": f"2026-07-01T00:{i % 60:02d}:01.250Z" if rng.random() < 0.6 else _edge(rng),
        "completionStartTime": _maybe(rng, _edge(rng, 0.7), 0.4),
        "model": rng.choice(_MODELS),
        "level": rng.choice(["DEFAULT", "ERROR", "error", "WARNING", None]),
        "statusMessage": rng.choice(_MESSAGES),
    }
    if rng.random() < 0.7:
        usage = {k: _edge(rng, 0) for k in ("input", "output", "total") if rng.random() < 0.7}
        if rng.random() < 0.3:
            usage["cache_read_input_tokens"] = _edge(rng, 0)
        obs["usageDetails"] = _embedded(rng, usage)
    if rng.random() < 0.2:
        obs["usage"] = {"promptTokens": _edge(rng, 0), "completionTokens": _edge(rng, 0)}
    if rng.random() < 0.7:
        metadata: dict[str, Any] = {"attributes": _attributes(rng)}
        if rng.random() < 0.3:
            metadata["resourceAttributes"] = {"service.name": "x", "cloud.region": "eu"}
        if rng.random() < 0.3:
            metadata["ls_provider"] = rng.choice(["openai", "anthropic", 3, [1]])
        obs["metadata"] = _embedded(rng, metadata)
    for key in list(obs):
        if key not in ("traceId", "startTime") and rng.random() < 0.05:
            del obs[key]
    return obs


def langfuse_text(rng: random.Random) -> tuple[str, str]:
    items: list[Any] = [_observation(rng, i) for i in range(rng.randint(1, 12))]
    if rng.random() < 0.05:
        items.append({"id": "x"})  # not an observation: the file is refused, located
    shape = rng.choice(["list", "observations", "data", "trace", "lines"])
    if shape == "lines":
        return ".jsonl", "\n".join(json.dumps(o, ensure_ascii=False) for o in items) + "\n"
    doc: Any = items
    if shape == "observations":
        doc = {"observations": items}
    elif shape == "data":
        doc = {"data": items, "meta": {"page": 1}}
    elif shape == "trace":
        doc = {"trace": {"id": "t"}, "observations": items}
    return ".json", json.dumps(doc, ensure_ascii=False)


# -- LangSmith ----------------------------------------------------------------------------------


def _run(rng: random.Random, i: int, depth: int = 0) -> dict[str, Any]:
    times = [*_ISO, "2026-07-01T00:00:00.123456", 1_782_864_000_123, 1.782864e12]
    run: dict[str, Any] = {
        "id": f"r{i}" if rng.random() < 0.97 else rng.choice([None, "", 4]),
        "trace_id": _maybe(rng, f"t{i // 3}", 0.8),
        "dotted_order": _maybe(rng, f"20260701T000000000000Zt{i // 3}.20260701T000001Zr{i}", 0.3),
        "parent_run_id": f"r{i - 1}" if i % 3 and rng.random() < 0.9 else None,
        "run_type": rng.choice(["llm", "chain", "tool", "retriever", "embedding", "LLM", None]),
        "name": rng.choice([*NAMES, None]),
        "start_time": rng.choice(times) if rng.random() < 0.7 else _edge(rng),
        "end_time": rng.choice(times) if rng.random() < 0.7 else _edge(rng),
        "error": rng.choice(_MESSAGES),
        "status": rng.choice(["success", "error", None]),
    }
    extra = {
        "metadata": {
            "ls_provider": rng.choice(["openai", "anthropic", None, "langchain"]),
            "ls_model_name": rng.choice(_MODELS),
            "ls_model_type": rng.choice(["chat", "llm", None]),
        },
        "invocation_params": {"model": rng.choice(_MODELS), "base_url": rng.choice(_HOSTS)},
    }
    run["extra"] = _embedded(rng, extra)
    outputs: dict[str, Any] = {}
    if rng.random() < 0.5:
        outputs["usage_metadata"] = {"input_tokens": _edge(rng, 0), "output_tokens": _edge(rng, 0)}
    if rng.random() < 0.2:
        outputs["llm_output"] = {
            "token_usage": {"prompt_tokens": _edge(rng, 0)},
            "model_name": rng.choice(_MODELS),
        }
    if rng.random() < 0.2:
        outputs["service_tier"] = rng.choice(["default", 3])
    run["outputs"] = _embedded(rng, outputs)
    run["inputs"] = {"model": rng.choice(_MODELS)} if rng.random() < 0.3 else {}
    if rng.random() < 0.2:
        run["prompt_tokens"] = _edge(rng, 0)
        run["completion_tokens"] = _edge(rng, 0)
    if rng.random() < 0.2:
        run["first_token_time"] = _edge(rng, 0.6)
    if rng.random() < 0.2:
        events = [{"name": "start", "time": _ISO[0]}, {"name": "new_token", "time": _edge(rng)}]
        run["events"] = _embedded(rng, events)
    if depth < 2 and rng.random() < 0.1:
        run["child_runs"] = [_run(rng, 1000 * (depth + 1) + i + k, depth + 1) for k in range(2)]
    return run


def langsmith_text(rng: random.Random) -> tuple[str, str]:
    runs: list[Any] = [_run(rng, i) for i in range(rng.randint(1, 10))]
    if rng.random() < 0.05:
        runs.append({"name": "no id"})
    shape = rng.choice(["list", "runs", "post_patch", "lines", "batch_lines"])
    if shape == "lines":
        return ".jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in runs) + "\n"
    if shape == "batch_lines":
        half = len(runs) // 2
        lines = [
            {"post": runs[:half], "patch": []},
            {"post": [], "patch": [{"id": r.get("id"), "end_time": _ISO[1]} for r in runs[:2]]},
            {"post": runs[half:]},
        ]
        return ".jsonl", "\n".join(json.dumps(b, ensure_ascii=False) for b in lines) + "\n"
    doc: Any = runs
    if shape == "runs":
        doc = {"runs": runs}
    elif shape == "post_patch":
        patches = [
            {"id": r.get("id"), "end_time": _edge(rng), "outputs": None, "error": "late"}
            for r in runs
            if rng.random() < 0.5
        ]
        doc = {"post": runs, "patch": patches}
    return ".json", json.dumps(doc, ensure_ascii=False)


# -- OTLP ---------------------------------------------------------------------------------------


def _any(rng: random.Random, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return rng.choice([{"intValue": value}, {"intValue": str(value)}])
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(rng, v) for v in value]}}
    if isinstance(value, dict):
        values = [{"key": k, "value": _any(rng, v)} for k, v in value.items()]
        return {"kvlistValue": {"values": values}}
    return {"stringValue": value}


def _otlp_attrs(rng: random.Random, attrs: dict[str, Any]) -> list[dict[str, Any]]:
    out = [{"key": k, "value": _any(rng, v)} for k, v in attrs.items() if v is not None]
    if rng.random() < 0.1:
        out.append({"key": "gen_ai.usage.input_tokens", "value": {"intValue": _edge(rng, 0)}})
    if rng.random() < 0.05:
        out.append({"value": {"stringValue": "no key"}})
    return out


def _otlp_span(rng: random.Random, i: int) -> dict[str, Any]:
    start = T0 + i * 60_000_000_000
    span: dict[str, Any] = {
        "traceId": rng.choice([f"{i // 3 + 1:032x}", "AAAAAAAAAAAAAAAAAAAAAQ==", f"{i:032X}"]),
        "spanId": f"{i + 1:016x}" if rng.random() < 0.9 else "AAAAAAAAAAE=",
        "parentSpanId": f"{i:016x}" if i % 3 else "",
        "name": rng.choice(NAMES),
        "startTimeUnixNano": _edge(rng, 0.1) if rng.random() < 0.4 else str(start),
        "endTimeUnixNano": _edge(rng, 0.1) if rng.random() < 0.4 else str(start + 900_000_000),
        "attributes": _otlp_attrs(rng, _attributes(rng)),
    }
    if rng.random() < 0.3:
        span["status"] = rng.choice(
            [{"code": 2, "message": rng.choice(_MESSAGES)}, {"code": "STATUS_CODE_ERROR"}, {}]
        )
    if rng.random() < 0.3:
        event_attrs = [
            {"key": "exception.type", "value": {"stringValue": "openai.RateLimitError"}},
            {"key": "exception.message", "value": {"stringValue": "Error code: 429"}},
        ]
        span["events"] = [
            {"name": "gen_ai.content.completion.chunk", "timeUnixNano": _edge(rng, 0.1)},
            {"name": "exception", "timeUnixNano": str(start), "attributes": event_attrs},
        ]
    return span


def otlp_text(rng: random.Random) -> tuple[str, str]:
    def request(first: int) -> dict[str, Any]:
        resource = {"attributes": _otlp_attrs(rng, {"service.name": "s", "cloud.region": "eu"})}
        scope_key = "scopeSpans" if rng.random() < 0.9 else "instrumentationLibrarySpans"
        spans = [_otlp_span(rng, first + k) for k in range(rng.randint(1, 6))]
        scope = {"attributes": _otlp_attrs(rng, {"gen_ai.system": "openai"})}
        return {
            "resourceSpans": [{"resource": resource, scope_key: [{"scope": scope, "spans": spans}]}]
        }

    if rng.random() < 0.3:
        return ".json", json.dumps([request(0), request(100)], ensure_ascii=False)
    doc = request(0)
    if rng.random() < 0.05:
        doc["resourceSpans"][0]["scopeSpans"] = {"not": "a list"}  # refused, located
    return ".json", json.dumps(doc, ensure_ascii=False)


MAKERS = {"langfuse": langfuse_text, "langsmith": langsmith_text, "otlp": otlp_text}


def write_corpus(folder: Path) -> list[tuple[str, Path]]:
    """``CASES`` hostile files of each format in ``folder``, with the format that reads each."""
    out: list[tuple[str, Path]] = []
    for fmt, make in MAKERS.items():
        rng = random.Random(f"json-27-{fmt}")
        for k in range(CASES):
            suffix, text = make(rng)
            path = folder / f"{fmt}-{k:03d}{suffix}"
            path.write_text(text, encoding="utf-8")
            out.append((fmt, path))
    return out


def fixture_files() -> list[tuple[str, Path]]:
    """Every JSON trace under ``tests/data`` the three readers (and the OpenAI Agents reader,
    which shares their code) read, with its format."""
    from slacheck.errors import TraceInputError
    from slacheck.trace.detect import detect_format

    out = []
    for path in sorted((ROOT / "data").rglob("*.json*")):
        try:
            fmt = detect_format(path)
        except TraceInputError:
            continue
        if fmt in ("langfuse", "langsmith", "otlp", "openai_agents"):
            out.append((fmt, path))
    return out


def digest(fmt: str, path: Path) -> str:
    """What the format's reader makes of ``path``: the canonical table (schema, every value, in
    the reader's order) or the problems it raises, as a SHA-256 (the file named by its name)."""
    from slacheck.errors import TraceInputError
    from slacheck.trace.ingest import _json_readers

    try:
        table = _json_readers()[fmt](path)
    except TraceInputError as exc:
        said = [
            (p.message, p.code, p.line, p.column, p.field, p.fix)
            for p in exc.problems
            if p.file == str(path)
        ]
        text = repr(("problems", len(exc.problems), said))
    else:
        columns = table.to_pydict()
        columns["source_file"] = [
            None if v is None else Path(v).name for v in columns["source_file"]
        ]
        text = repr((str(table.schema), columns))
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


def hostile_files(folder: Path) -> list[Path]:
    """The JSON trace files of the hostile corpus (``tests/hostile``), written into ``folder``:
    a key written twice, nesting a million deep, a UTF-16 or gzip file, a lone surrogate, line
    separators and a bare CR in strings, numbers beyond int64, escapes in names."""
    from tests.hostile.corpus import build

    build(folder)
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and not p.is_symlink() and p.suffix in (".json", ".jsonl")
    )


def digests(folder: Path) -> dict[str, str]:
    """The digest of every corpus file (written into ``folder``), hostile file (each read by
    every reader) and fixture, by name."""
    found = {}
    for fmt, path in write_corpus(folder):
        found[f"corpus/{path.name}"] = digest(fmt, path)
    hostile = folder / "hostile"
    hostile.mkdir()
    for path in hostile_files(hostile):
        for fmt in MAKERS:
            found[f"hostile/{path.name}:{fmt}"] = digest(fmt, path)
    for fmt, path in fixture_files():
        found[str(path.relative_to(ROOT))] = digest(fmt, path)
    return found


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = digests(Path(tmp))
    DIGESTS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(found)} digests written to {DIGESTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
