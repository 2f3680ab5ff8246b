"""OpenInference's LlamaIndex instrumentation on llama-index's OpenAILike LLM; the tool run through
a llama-index FunctionTool; each task an AGENT span by hand."""

import os
from collections.abc import Iterator
from contextlib import contextmanager

from common import CLIENT_TIMEOUT_S, ERROR_MODELS, attempt, get_current_weather, otel_provider
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai_like import OpenAILike
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry import trace

provider = otel_provider("conformance-openinference-llama-index")
LlamaIndexInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("conformance.task")


@contextmanager
def task(name: str) -> Iterator[None]:
    with tracer.start_as_current_span(name, attributes={"openinference.span.kind": "AGENT"}):
        yield


def llm(model: str) -> OpenAILike:
    # OpenAILike: llama-index's OpenAI LLM for names outside its own table (any OpenAI-style API)
    return OpenAILike(model=model, api_base=os.environ["OPENAI_BASE_URL"], timeout=CLIENT_TIMEOUT_S,
                  max_retries=0, context_window=128000,
                  is_chat_model=True, is_function_calling_model=True)


weather_tool = FunctionTool.from_defaults(fn=get_current_weather, name="get_current_weather")
q = [ChatMessage(role="user", content="Say this is a test")]
with task("weather"):
    llm("gpt-4o-mini").chat(q)
    tool_llm = llm("gpt-4o-mini-tool")
    first = tool_llm.chat_with_tools([weather_tool], user_msg="What's the weather in Seattle today?")
    calls = tool_llm.get_tool_calls_from_response(first, error_on_no_tool_call=False)
    history = [ChatMessage(role="user", content="What's the weather in Seattle today?"), first.message]
    for c in calls:
        out = weather_tool.call(**c.tool_kwargs)
        history.append(ChatMessage(role="tool", content=str(out),
                                   additional_kwargs={"tool_call_id": c.tool_id}))
    tool_llm.chat_with_tools([weather_tool], chat_history=history)
    for _ in llm("gpt-4o-mini-stream").stream_chat(q):
        pass
with task("failures"):
    for m in ERROR_MODELS:
        attempt(lambda m=m: llm(m).chat(q))
provider.shutdown()
