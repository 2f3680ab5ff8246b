"""The task through LangChain: ChatOpenAI with a bound tool, the tool run by LangChain, a
streamed call and the four failures. ``group`` opens the task's root run or span."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from common import CLIENT_TIMEOUT_S, ERROR_MODELS, attempt, get_current_weather
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI


@tool("get_current_weather")
def weather_tool(location: str) -> str:
    """Get the current weather in a given location."""
    return get_current_weather(location)


def chat(model: str) -> ChatOpenAI:
    return ChatOpenAI(model=model, timeout=CLIENT_TIMEOUT_S, max_retries=0, stream_usage=True)


def weather() -> None:
    chat("gpt-4o-mini").invoke("Say this is a test")
    llm = chat("gpt-4o-mini-tool").bind_tools([weather_tool])
    messages: list[Any] = [HumanMessage("What's the weather in Seattle today?")]
    first = llm.invoke(messages)
    messages.append(first)
    for call in first.tool_calls:
        messages.append(weather_tool.invoke(call))
    llm.invoke(messages)
    for _ in chat("gpt-4o-mini-stream").stream("Say this is a test"):
        pass


def failures() -> None:
    for model in ERROR_MODELS:
        attempt(lambda m=model: chat(m).invoke("Say this is a test"))


def run(group: Callable[[str, Callable[[], None]], None]) -> None:
    group("weather", weather)
    group("failures", failures)
