"""OpenInference's OpenAI Agents instrumentation (a trace processor that writes OTel spans)."""

import agents_task
from common import otel_provider
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

provider = otel_provider("conformance-openinference-openai-agents")
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
agents_task.run()
provider.shutdown()
