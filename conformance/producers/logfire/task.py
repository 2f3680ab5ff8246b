"""Pydantic Logfire's OpenAI instrumentation (logfire.instrument_openai), exporting OTLP to the
local receiver instead of the Logfire platform (logfire reads OTEL_EXPORTER_OTLP_ENDPOINT, as
run.py sets it, and exports there itself: an added span processor would export every span
twice); task and tool spans through logfire.span with the GenAI tool attributes."""

from collections.abc import Iterator
from contextlib import contextmanager

import logfire
import openai
from common import CLIENT_TIMEOUT_S, openai_task, tool_attributes

logfire.configure(
    send_to_logfire=False,
    service_name="conformance-logfire",
    console=False,
)
client = openai.OpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0)
logfire.instrument_openai(client)


@contextmanager
def task(name: str) -> Iterator[None]:
    with logfire.span(name):
        yield


@contextmanager
def tool(name: str, call_id: str) -> Iterator[None]:
    with logfire.span("execute_tool {gen_ai.tool.name}", **tool_attributes(name, call_id)):
        yield


openai_task(client, task, tool)
logfire.force_flush()
logfire.shutdown()
