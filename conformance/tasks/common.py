"""What every Python task script shares: the OTel SDK set up as a user would, and the task.

The task, in two traces (the agent's two tasks), each under a root span the user opens:

* ``weather``: a plain chat call (``gpt-4o-mini``), a tool round trip (``gpt-4o-mini-tool``:
  the model asks for ``get_current_weather``, the tool runs, the model answers) and a streamed
  call (``gpt-4o-mini-stream``);
* ``failures``: a call for a model that does not exist (``gpt-4o-mini-404``), a rate-limited
  call (``-429``), a vendor failure (``-500``) and a call that times out on the client
  (``-timeout``: the server answers after 2.5 s, the client gives up after 1 s).

The client never retries (``max_retries=0``), so one request is one call.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

CLIENT_TIMEOUT_S = 1.0
ERROR_MODELS = ("gpt-4o-mini-404", "gpt-4o-mini-429", "gpt-4o-mini-500", "gpt-4o-mini-timeout")
CLAUDE_ERROR_MODELS = (
    "claude-3-haiku-404",
    "claude-3-haiku-429",
    "claude-3-haiku-500",
    "claude-3-haiku-timeout",
)

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "The city and state"}},
            "required": ["location"],
            "additionalProperties": False,
        },
    },
}


def get_current_weather(location: str) -> str:
    time.sleep(0.03)
    return "50 degrees and raining" if "Seattle" in location else "70 degrees and sunny"


def otel_provider(service: str) -> Any:
    """A tracer provider exporting OTLP/HTTP protobuf to the local receiver, set globally."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


@contextmanager
def nullspan(name: str) -> Iterator[None]:
    yield


def attempt(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception as exc:  # the task goes on, as an agent's error handling would
        print(f"  {type(exc).__module__}.{type(exc).__name__}: {str(exc)[:80]}")


def openai_task(client: Any, span: Callable[[str], Any] = nullspan, tool_span: Any = None) -> None:
    """The task on an OpenAI client (instrumented or wrapped by the producer)."""
    q = [{"role": "user", "content": "Say this is a test"}]
    with span("weather"):
        client.chat.completions.create(model="gpt-4o-mini", messages=q)
        ask = [{"role": "user", "content": "What's the weather in Seattle today?"}]
        first = client.chat.completions.create(
            model="gpt-4o-mini-tool", messages=ask, tools=[WEATHER_TOOL]
        )
        call = first.choices[0].message.tool_calls[0]
        args = json.loads(call.function.arguments)
        with tool_span("get_current_weather", call.id) if tool_span else nullspan("tool"):
            result = get_current_weather(**args)
        follow = [
            *ask,
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.function.name, "arguments": call.function.arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call.id, "content": result},
        ]
        client.chat.completions.create(model="gpt-4o-mini-tool", messages=follow, tools=[WEATHER_TOOL])
        stream = client.chat.completions.create(
            model="gpt-4o-mini-stream",
            messages=q,
            stream=True,
            stream_options={"include_usage": True},
        )
        for _ in stream:
            pass
    with span("failures"):
        for model in ERROR_MODELS:
            attempt(lambda m=model: client.chat.completions.create(model=m, messages=q))


def anthropic_task(client: Any, span: Callable[[str], Any] = nullspan, tool_span: Any = None) -> None:
    q = [{"role": "user", "content": "Tell me a joke about OpenTelemetry"}]
    tools = [
        {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "input_schema": WEATHER_TOOL["function"]["parameters"],  # type: ignore[index]
        }
    ]
    with span("weather"):
        client.messages.create(model="claude-3-haiku-20240307", max_tokens=1024, messages=q)
        ask = [{"role": "user", "content": "What's the weather in Seattle today?"}]
        first = client.messages.create(model="claude-3-haiku-tool", max_tokens=1024, messages=ask, tools=tools)
        use = next(b for b in first.content if b.type == "tool_use")
        with tool_span("get_current_weather", use.id) if tool_span else nullspan("tool"):
            result = get_current_weather(**use.input)
        follow = [
            *ask,
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": result}]},
        ]
        client.messages.create(model="claude-3-haiku-tool", max_tokens=1024, messages=follow, tools=tools)
        with client.messages.stream(model="claude-3-haiku-stream", max_tokens=1024, messages=q) as s:
            for _ in s.text_stream:
                pass
    with span("failures"):
        for model in CLAUDE_ERROR_MODELS:
            attempt(lambda m=model: client.messages.create(model=m, max_tokens=1024, messages=q))


def otel_spans(service: str) -> tuple[Any, Callable[[str], Any], Callable[[str, str], Any]]:
    """The provider, a task-span opener and a tool-span opener (GenAI execute_tool)."""
    from opentelemetry import trace

    provider = otel_provider(service)
    tracer = trace.get_tracer("conformance.task")

    @contextmanager
    def task(name: str) -> Iterator[None]:
        with tracer.start_as_current_span(name):
            yield

    @contextmanager
    def tool(name: str, call_id: str) -> Iterator[None]:
        attrs = tool_attributes(name, call_id)
        with tracer.start_as_current_span(f"execute_tool {name}", attributes=attrs):
            yield

    return provider, task, tool


def tool_attributes(name: str, call_id: str) -> dict[str, str]:
    """A tool span's GenAI attributes (execute_tool, the tool's name and call id)."""
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
    }


def env(name: str) -> str:
    return os.environ[name]
