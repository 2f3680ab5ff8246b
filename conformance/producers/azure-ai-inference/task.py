"""Azure AI Inference (azure-ai-inference) with its own OpenTelemetry instrumentation
(AIInferenceInstrumentor, through azure-core's OpenTelemetry tracing): the task of
common.openai_task on a ChatCompletionsClient pointed at the replay server's OpenAI-shaped
chat completions; task and tool spans by hand with the GenAI attributes."""

import json
import os

from azure.ai.inference import ChatCompletionsClient
from azure.ai.inference.models import (
    AssistantMessage,
    ChatCompletionsToolCall,
    ChatCompletionsToolDefinition,
    FunctionCall,
    FunctionDefinition,
    ToolMessage,
    UserMessage,
)
from azure.ai.inference.tracing import AIInferenceInstrumentor
from azure.core.credentials import AzureKeyCredential
from azure.core.settings import settings
from common import CLIENT_TIMEOUT_S, ERROR_MODELS, WEATHER_TOOL, attempt, get_current_weather, otel_spans

provider, task, tool = otel_spans("conformance-azure-ai-inference")
settings.tracing_implementation = "opentelemetry"
AIInferenceInstrumentor().instrument()
client = ChatCompletionsClient(
    endpoint=os.environ["OPENAI_BASE_URL"],
    credential=AzureKeyCredential(os.environ["OPENAI_API_KEY"]),
    retry_total=0,
    read_timeout=CLIENT_TIMEOUT_S,
    connection_timeout=CLIENT_TIMEOUT_S,
)
fn = WEATHER_TOOL["function"]
weather = ChatCompletionsToolDefinition(
    function=FunctionDefinition(
        name=fn["name"], description=fn["description"], parameters=fn["parameters"]
    )
)
q = [UserMessage("Say this is a test")]
with task("weather"):
    client.complete(model="gpt-4o-mini", messages=q)
    ask = [UserMessage("What's the weather in Seattle today?")]
    first = client.complete(model="gpt-4o-mini-tool", messages=ask, tools=[weather])
    call = first.choices[0].message.tool_calls[0]
    with tool("get_current_weather", call.id):
        result = get_current_weather(**json.loads(call.function.arguments))
    follow = [
        *ask,
        AssistantMessage(
            tool_calls=[
                ChatCompletionsToolCall(
                    id=call.id,
                    function=FunctionCall(name=call.function.name, arguments=call.function.arguments),
                )
            ]
        ),
        ToolMessage(result, tool_call_id=call.id),
    ]
    client.complete(model="gpt-4o-mini-tool", messages=follow, tools=[weather])
    for _ in client.complete(model="gpt-4o-mini-stream", messages=q, stream=True):
        pass
with task("failures"):
    for model in ERROR_MODELS:
        attempt(lambda m=model: client.complete(model=m, messages=q))
provider.shutdown()
