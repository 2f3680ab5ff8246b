"""OTel contrib openai-v2 instrumentation on the OpenAI client; task and tool spans by hand."""

import openai
from common import CLIENT_TIMEOUT_S, openai_task, otel_spans
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

provider, task, tool = otel_spans("conformance-otel-openai-v2")
OpenAIInstrumentor().instrument()
client = openai.OpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0)
openai_task(client, task, tool)
provider.shutdown()
