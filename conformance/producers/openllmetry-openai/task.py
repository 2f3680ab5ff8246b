"""OpenLLMetry's OpenAI instrumentation (without the Traceloop SDK); task and tool spans by
hand with the Traceloop span-kind attributes."""

from collections.abc import Iterator
from contextlib import contextmanager

import openai
from common import CLIENT_TIMEOUT_S, openai_task, otel_provider
from opentelemetry import trace
from opentelemetry.instrumentation.openai import OpenAIInstrumentor

provider = otel_provider("conformance-openllmetry-openai")
OpenAIInstrumentor().instrument(tracer_provider=provider)
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


client = openai.OpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0)
openai_task(client, task, tool)
provider.shutdown()
