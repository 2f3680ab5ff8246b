"""OpenInference's LiteLLM instrumentation; task (AGENT) and tool (TOOL) spans by hand."""

from collections.abc import Iterator
from contextlib import contextmanager

import litellm_task
from common import otel_provider
from openinference.instrumentation.litellm import LiteLLMInstrumentor
from opentelemetry import trace

provider = otel_provider("conformance-openinference-litellm")
LiteLLMInstrumentor().instrument(tracer_provider=provider)
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


litellm_task.run(task, tool)
provider.shutdown()
