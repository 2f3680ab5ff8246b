"""OpenLLMetry's Anthropic instrumentation; task and tool spans by hand (Traceloop kinds)."""

from collections.abc import Iterator
from contextlib import contextmanager

import anthropic
from common import CLIENT_TIMEOUT_S, anthropic_task, otel_provider
from opentelemetry import trace
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

provider = otel_provider("conformance-openllmetry-anthropic")
AnthropicInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("conformance.task")


@contextmanager
def task(name: str) -> Iterator[None]:
    attrs = {"traceloop.span.kind": "workflow", "traceloop.entity.name": name}
    with tracer.start_as_current_span(f"{name}.workflow", attributes=attrs):
        yield


@contextmanager
def tool(name: str, call_id: str) -> Iterator[None]:
    attrs = {"traceloop.span.kind": "tool", "traceloop.entity.name": name}
    with tracer.start_as_current_span(f"{name}.tool", attributes=attrs):
        yield


client = anthropic.Anthropic(timeout=CLIENT_TIMEOUT_S, max_retries=0)
anthropic_task(client, task, tool)
provider.shutdown()
