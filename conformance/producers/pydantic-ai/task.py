"""pydantic-ai's own OTel instrumentation (Agent.instrument_all) on the OpenAI chat model."""

import asyncio

from common import CLIENT_TIMEOUT_S, ERROR_MODELS, get_current_weather, otel_provider
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

provider = otel_provider("conformance-pydantic-ai")
Agent.instrument_all()
client = AsyncOpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0)


def model(name: str) -> OpenAIChatModel:
    return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))


async def main() -> None:
    plain = Agent(model("gpt-4o-mini"), name="assistant")
    weather = Agent(model("gpt-4o-mini-tool"), name="weather")

    @weather.tool_plain(name="get_current_weather")
    def current_weather(location: str) -> str:
        """Get the current weather in a given location."""
        return get_current_weather(location)

    await plain.run("Say this is a test")
    await weather.run("What's the weather in Seattle today?")
    async with Agent(model("gpt-4o-mini-stream"), name="streamer").run_stream("Say this is a test") as r:
        async for _ in r.stream_text():
            pass
    for m in ERROR_MODELS:
        try:
            await Agent(model(m), name="failing").run("Say this is a test")
        except Exception as exc:
            print(f"  {type(exc).__module__}.{type(exc).__name__}: {str(exc)[:80]}")


asyncio.run(main())
provider.shutdown()
