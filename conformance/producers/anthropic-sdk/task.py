"""The Anthropic SDK's own OpenTelemetry tracing (no instrumentation package); task and tool
spans by hand with the GenAI conventions."""

import anthropic
from common import CLIENT_TIMEOUT_S, anthropic_task, otel_spans

provider, task, tool = otel_spans("conformance-anthropic-sdk")
client = anthropic.Anthropic(timeout=CLIENT_TIMEOUT_S, max_retries=0)
anthropic_task(client, task, tool)
provider.shutdown()
