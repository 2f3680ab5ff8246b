"""The task through LiteLLM's SDK (litellm.completion), as an agent loop would call it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import litellm
from common import CLIENT_TIMEOUT_S, ERROR_MODELS, WEATHER_TOOL, attempt, get_current_weather

BASE = os.environ["OPENAI_BASE_URL"]


def call(model: str, messages: list[dict[str, Any]], **kw: Any) -> Any:
    return litellm.completion(model=f"openai/{model}", messages=messages, api_base=BASE,
                              timeout=CLIENT_TIMEOUT_S, num_retries=0, max_retries=0, **kw)


def run(span: Callable[[str], AbstractContextManager[Any]] = lambda n: nullcontext(),
        tool_span: Callable[[str, str], AbstractContextManager[Any]] | None = None) -> None:
    q = [{"role": "user", "content": "Say this is a test"}]
    with span("weather"):
        call("gpt-4o-mini", q)
        ask: list[dict[str, Any]] = [{"role": "user", "content": "What's the weather in Seattle today?"}]
        first = call("gpt-4o-mini-tool", ask, tools=[WEATHER_TOOL])
        tc = first.choices[0].message.tool_calls[0]
        with tool_span("get_current_weather", tc.id) if tool_span else nullcontext():
            result = get_current_weather(**json.loads(tc.function.arguments))
        follow = [*ask, first.choices[0].message.model_dump(),
                  {"role": "tool", "tool_call_id": tc.id, "content": result}]
        call("gpt-4o-mini-tool", follow, tools=[WEATHER_TOOL])
        for _ in call("gpt-4o-mini-stream", q, stream=True, stream_options={"include_usage": True}):
            pass
    with span("failures"):
        for model in ERROR_MODELS:
            attempt(lambda m=model: call(m, q))
