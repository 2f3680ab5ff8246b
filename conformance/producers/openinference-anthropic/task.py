"""OpenInference's Anthropic instrumentation; task (AGENT) and tool (TOOL) spans by hand."""

from collections.abc import Iterator
from contextlib import contextmanager

import anthropic
from common import CLIENT_TIMEOUT_S, anthropic_task, otel_provider
from openinference.instrumentation.anthropic import AnthropicInstrumentor
from opentelemetry import trace

provider = otel_provider("conformance-openinference-anthropic")
AnthropicInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("conformance.task")


@contextmanager
def task(name: str) -> Iterator[None]:
    with tracer.start_as_current_span(name, attributes={"openinference.span.kind": "AGENT"}):
        yield


@contextmanager
def tool(name: str, call_id: str) -> Iterator[None]:
    attrs = {"openinference.span.kind": "TOOL", "tool.name": name, "tool_call.id": call_id}
    with tracer.start_as_current_span(name, attributes=attrs):
        yield


client = anthropic.Anthropic(timeout=CLIENT_TIMEOUT_S, max_retries=0)
anthropic_task(client, task, tool)
provider.shutdown()
