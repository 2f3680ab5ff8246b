"""The task through the OpenAI Agents SDK (chat-completions API, as with any OpenAI-compatible
base URL): a tool-using agent run and a streamed run in the trace ``weather``; four runs whose
model fails in the trace ``failures``."""

from __future__ import annotations

import asyncio

from agents import (
    Agent,
    Runner,
    function_tool,
    set_default_openai_api,
    set_default_openai_client,
    trace,
)
from common import CLIENT_TIMEOUT_S, ERROR_MODELS, get_current_weather
from openai import AsyncOpenAI


@function_tool(name_override="get_current_weather")
def get_current_weather_tool(location: str) -> str:
    """Get the current weather in a given location."""
    return get_current_weather(location)


async def main() -> None:
    set_default_openai_client(AsyncOpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0))
    set_default_openai_api("chat_completions")
    plain = Agent(name="assistant", instructions="Be brief.", model="gpt-4o-mini")
    weather = Agent(name="weather", instructions="Use the tool.", model="gpt-4o-mini-tool",
                    tools=[get_current_weather_tool])
    streamer = Agent(name="streamer", instructions="Be brief.", model="gpt-4o-mini-stream")
    with trace("weather"):
        await Runner.run(plain, "Say this is a test")
        await Runner.run(weather, "What's the weather in Seattle today?")
        streamed = Runner.run_streamed(streamer, "Say this is a test")
        async for _ in streamed.stream_events():
            pass
    with trace("failures"):
        for model in ERROR_MODELS:
            try:
                await Runner.run(Agent(name="failing", model=model), "Say this is a test")
            except Exception as exc:
                print(f"  {type(exc).__module__}.{type(exc).__name__}: {str(exc)[:80]}")


def run() -> None:
    asyncio.run(main())
