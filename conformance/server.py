"""The replay server and trace receiver of the conformance harness (127.0.0.1 only).

One process per producer run. It answers the vendor APIs the producers call with the recorded
responses under ``responses/`` and receives what the producers export:

* OpenAI ``POST .../chat/completions`` (plain and streamed) and Anthropic ``POST .../messages``;
  the scenario is read from the requested model name: ``-404``, ``-400``, ``-429``, ``-500``,
  ``-timeout`` (the answer comes after the client's timeout), ``-tool`` (a tool call, then the
  answer once the request carries the tool's result), ``-stream`` is only a label (streaming is
  what the request asks for);
* OTLP/HTTP traces (``.../v1/traces``, protobuf or JSON; Langfuse's ``/api/public/otel/v1/traces``
  too): each export request is written as one line of OTLP JSON to ``otlp.jsonl``, protobuf
  decoded with opentelemetry-proto and ``MessageToDict`` with the ids in hex, as the
  collector's file exporter writes them;
* LangSmith's ``/info`` (it says not to use the multipart endpoint), ``/runs/batch``, ``/runs``
  and ``PATCH /runs/<id>``: each request one ``{"post": [...], "patch": [...]}`` line of
  ``langsmith.jsonl``, the run-ingest payload as the client sends it;
* the OpenAI Agents SDK's trace ingest (``/v1/traces/ingest``): each body one line of
  ``agents.jsonl``;
* anything else is answered ``{}`` and logged in ``unknown.jsonl``.

Latency is real: every answer waits 40-120 ms (a seeded draw), a stream's first chunk comes
after 80-160 ms and then one chunk every 15 ms. ``requests.jsonl`` logs each vendor request
(path, model, scenario, status, the delays used).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
RESPONSES = HERE / "responses"
TIMEOUT_DELAY_S = 2.5

_lock = threading.Lock()
_rng = random.Random(20261203)
OUT = Path(".")


def _load(name: str) -> Any:
    return json.loads((RESPONSES / name).read_text())


def _append(name: str, record: Any) -> None:
    with _lock, (OUT / name).open("a") as f:
        f.write(json.dumps(record, separators=(",", ":")) + "\n")


def _draw(lo: int, hi: int) -> float:
    with _lock:
        return _rng.randint(lo, hi) / 1000.0


def scenario(model: str) -> str:
    for s in ("404", "400", "429", "500", "503", "529", "timeout", "tool"):
        if model.endswith("-" + s) or f"-{s}-" in model:
            return s
    return "ok"


def _hex_ids(node: Any) -> Any:
    """MessageToDict writes bytes as base64; the collector's file exporter writes ids as hex."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str) and v:
                out[k] = base64.b64decode(v).hex()
            else:
                out[k] = _hex_ids(v)
        return out
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def decode_otlp(body: bytes, content_type: str) -> Any:
    if "json" in content_type:
        return json.loads(body)
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    return _hex_ids(MessageToDict(req))


def _has_tool_result(body: dict[str, Any]) -> bool:
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool":
            return True
        content = m.get("content")
        if isinstance(content, list) and any(
            isinstance(c, dict) and c.get("type") == "tool_result" for c in content
        ):
            return True
    return False


def _openai_chunks(done: dict[str, Any], include_usage: bool) -> list[str]:
    """A non-streamed completion as the chunks OpenAI streams for it."""
    base = {k: done[k] for k in ("id", "created", "model", "system_fingerprint")}
    base["object"] = "chat.completion.chunk"
    msg = done["choices"][0]["message"]
    chunks: list[dict[str, Any]] = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                              "logprobs": None, "finish_reason": None}]}
    ]
    for i, call in enumerate(msg.get("tool_calls") or []):
        chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": call["id"], "type": "function",
             "function": {"name": call["function"]["name"], "arguments": ""}}]},
            "logprobs": None, "finish_reason": None}]})
        chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": i, "function": {"arguments": call["function"]["arguments"]}}]},
            "logprobs": None, "finish_reason": None}]})
    if msg.get("content"):
        for word in msg["content"].split(" "):
            chunks.append({**base, "choices": [{"index": 0, "delta": {"content": word + " "},
                                                "logprobs": None, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "logprobs": None,
                                        "finish_reason": done["choices"][0]["finish_reason"]}]})
    if include_usage:
        chunks.append({**base, "choices": [], "usage": done["usage"]})
    lines = ["data: " + json.dumps(c, separators=(",", ":")) + "\n\n" for c in chunks]
    return [*lines, "data: [DONE]\n\n"]


def _anthropic_events(done: dict[str, Any]) -> list[str]:
    ev: list[str] = []

    def e(t: str, d: Any) -> None:
        ev.append(f"event: {t}\ndata: {json.dumps(d, separators=(',', ':'))}\n\n")

    start = {**done, "content": [], "stop_reason": None,
             "usage": {"input_tokens": done["usage"]["input_tokens"], "output_tokens": 1}}
    e("message_start", {"type": "message_start", "message": start})
    for i, block in enumerate(done["content"]):
        if block["type"] == "text":
            e("content_block_start", {"type": "content_block_start", "index": i,
                                      "content_block": {"type": "text", "text": ""}})
            e("content_block_delta", {"type": "content_block_delta", "index": i,
                                      "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            e("content_block_start", {"type": "content_block_start", "index": i,
                                      "content_block": {**block, "input": {}}})
            e("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        e("content_block_stop", {"type": "content_block_stop", "index": i})
    e("message_delta", {"type": "message_delta", "delta": {"stop_reason": done["stop_reason"],
                        "stop_sequence": None},
                        "usage": {"output_tokens": done["usage"]["output_tokens"]}})
    e("message_stop", {"type": "message_stop"})
    return ev


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _stream(self, first_s: float, parts: list[str], gap_s: float = 0.015) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("x-request-id", f"req_replay_{time.monotonic_ns()}")
            self.end_headers()
            time.sleep(first_s)
            for i, part in enumerate(parts):
                if i:
                    time.sleep(gap_s)
                raw = part.encode()
                self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?")[0]
        if path.rstrip("/").endswith("/info"):
            self._send(200, {"version": "0.10.0", "license_expiration_time": None,
                             "batch_ingest_config": {"use_multipart_endpoint": False,
                                                     "scale_up_qsize_trigger": 1000,
                                                     "scale_up_nthreads_limit": 16,
                                                     "scale_down_nempty_trigger": 4,
                                                     "size_limit": 100,
                                                     "size_limit_bytes": 20971520},
                             "instance_flags": {}})
            return
        _append("unknown.jsonl", {"method": "GET", "path": self.path})
        self._send(200, {})

    def do_PATCH(self) -> None:  # noqa: N802
        body = self._body()
        if "/runs/" in self.path:
            run = json.loads(body or b"{}")
            run.setdefault("id", self.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1])
            _append("langsmith.jsonl", {"patch": [run]})
            self._send(200, {})
            return
        _append("unknown.jsonl", {"method": "PATCH", "path": self.path})
        self._send(200, {})

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?")[0].rstrip("/")
        body = self._body()
        ctype = self.headers.get("Content-Type", "")
        if path.endswith("/v1/traces/ingest"):
            _append("agents.jsonl", json.loads(body))
            self._send(200, {})
        elif path.endswith("/v1/traces"):
            if self.headers.get("Content-Encoding", "") == "gzip":
                import gzip

                body = gzip.decompress(body)
            _append("otlp.jsonl", decode_otlp(body, ctype))
            if "json" in ctype:
                self._send(200, {})
            else:
                self._send(200, b"", {"Content-Type": "application/x-protobuf"})
        elif path.endswith("/runs/batch"):
            _append("langsmith.jsonl", json.loads(body or b"{}"))
            self._send(200, {})
        elif path.endswith("/runs"):
            _append("langsmith.jsonl", {"post": [json.loads(body or b"{}")]})
            self._send(200, {})
        elif path.endswith("/runs/multipart"):
            _append("langsmith.jsonl", {"method": "POST", "path": path, "content_type": ctype,
                                        "multipart": body.decode("utf-8", "replace")})
            self._send(200, {})
        elif path.endswith("/chat/completions"):
            self._openai(json.loads(body))
        elif path.endswith("/messages"):
            self._anthropic(json.loads(body))
        else:
            _append("unknown.jsonl", {"method": "POST", "path": self.path, "content_type": ctype})
            self._send(200, {})

    def _log(self, api: str, model: str, sc: str, status: int, **delays: float) -> None:
        _append("requests.jsonl", {"at_ns": time.time_ns(), "api": api, "model": model,
                                   "scenario": sc, "status": status, **delays})

    def _error(self, api: str, model: str, sc: str, code: int) -> None:
        errors = _load("openai_errors.json" if api == "openai" else "anthropic_errors.json")
        payload = json.loads(json.dumps(errors[str(code)]).replace("{model}", model))
        delay = _draw(40, 120)
        time.sleep(delay)
        self._log(api, model, sc, code, delay_s=delay)
        headers = {"x-request-id": f"req_replay_{time.monotonic_ns()}"}
        if code == 429:
            headers["retry-after"] = "20"
        self._send(code, payload, headers)

    def _openai(self, body: dict[str, Any]) -> None:
        model = str(body.get("model", ""))
        sc = scenario(model)
        stream = bool(body.get("stream"))
        if sc.isdigit():
            self._error("openai", model, sc, int(sc))
            return
        if sc == "timeout":
            self._log("openai", model, sc, 0, delay_s=TIMEOUT_DELAY_S)
            time.sleep(TIMEOUT_DELAY_S)
            self._send(200, _load("openai_chat.json"))
            return
        if sc == "tool":
            done = _load("openai_chat_after_tool.json" if _has_tool_result(body)
                         else "openai_chat_tool_calls.json")
        else:
            done = _load("openai_chat.json")
        if stream:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if sc == "ok":
                parts = (RESPONSES / "openai_chat_stream.sse").read_text().split("\n\n")
                parts = [p + "\n\n" for p in parts if p.strip()]
                if not include_usage:
                    parts = [p for p in parts if '"usage":{' not in p]
            else:
                parts = _openai_chunks(done, include_usage)
            first = _draw(80, 160)
            self._log("openai", model, sc, 200, first_chunk_s=first, chunks=len(parts))
            self._stream(first, parts)
            return
        delay = _draw(40, 120)
        time.sleep(delay)
        self._log("openai", model, sc, 200, delay_s=delay)
        self._send(200, done, {"x-request-id": f"req_replay_{time.monotonic_ns()}",
                               "openai-processing-ms": str(int(delay * 1000))})

    def _anthropic(self, body: dict[str, Any]) -> None:
        model = str(body.get("model", ""))
        sc = scenario(model)
        stream = bool(body.get("stream"))
        if sc.isdigit():
            self._error("anthropic", model, sc, int(sc))
            return
        if sc == "timeout":
            self._log("anthropic", model, sc, 0, delay_s=TIMEOUT_DELAY_S)
            time.sleep(TIMEOUT_DELAY_S)
            self._send(200, _load("anthropic_messages.json"))
            return
        if sc == "tool":
            done = _load("anthropic_messages_after_tool.json" if _has_tool_result(body)
                         else "anthropic_messages_tool_use.json")
        else:
            done = _load("anthropic_messages.json")
        if stream:
            if sc == "ok":
                raw = (RESPONSES / "anthropic_messages_stream.sse").read_text()
                parts = [p + "\n\n" for p in raw.split("\n\n") if p.strip()]
            else:
                parts = _anthropic_events(done)
            first = _draw(80, 160)
            self._log("anthropic", model, sc, 200, first_chunk_s=first, chunks=len(parts))
            self._stream(first, parts)
            return
        delay = _draw(40, 120)
        time.sleep(delay)
        self._log("anthropic", model, sc, 200, delay_s=delay)
        self._send(200, done, {"request-id": f"req_replay_{time.monotonic_ns()}"})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (the timeout scenario) resets its connection


def main() -> None:
    global OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    OUT = Path(args.out)
    OUT.mkdir(parents=True, exist_ok=True)
    server = Server(("127.0.0.1", 0), Handler)
    Path(args.port_file).write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
