"""OpenInference's OpenAI instrumentation; the task span (CHAIN) and tool span (TOOL) by hand,
with OpenInference's span-kind attribute as its docs show."""

from collections.abc import Iterator
from contextlib import contextmanager

import openai
from common import CLIENT_TIMEOUT_S, openai_task, otel_provider
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace

provider = otel_provider("conformance-openinference-openai")
OpenAIInstrumentor().instrument(tracer_provider=provider)
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


client = openai.OpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0)
openai_task(client, task, tool)
provider.shutdown()
