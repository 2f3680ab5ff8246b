"""The OpenAI Agents SDK's native tracing, exported by its own backend exporter."""

import os

import agents_task
from agents import set_trace_processors
from agents.tracing.processors import BackendSpanExporter, BatchTraceProcessor

exporter = BackendSpanExporter(
    api_key="test_openai_api_key", endpoint=os.environ["REPLAY_URL"] + "/v1/traces/ingest"
)
processor = BatchTraceProcessor(exporter)
set_trace_processors([processor])
agents_task.run()
processor.force_flush()
processor.shutdown()
