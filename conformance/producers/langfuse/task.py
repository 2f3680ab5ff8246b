"""The Langfuse SDK (OTel-based): @observe around each task and the tool, and its drop-in
OpenAI wrapper (langfuse.openai) for the model calls."""

from common import CLIENT_TIMEOUT_S, attempt, ERROR_MODELS, openai_task
from langfuse import get_client, observe
from langfuse.openai import OpenAI

client = OpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0)


@observe(name="weather")
def weather_task() -> None:
    from contextlib import contextmanager

    @contextmanager
    def tool(name: str, call_id: str):
        with get_client().start_as_current_observation(name=name, as_type="tool"):
            yield

    import common

    saved = common.ERROR_MODELS
    common.ERROR_MODELS = ()
    try:
        openai_task(client, tool_span=tool)
    finally:
        common.ERROR_MODELS = saved


@observe(name="failures")
def failures_task() -> None:
    q = [{"role": "user", "content": "Say this is a test"}]
    for model in ERROR_MODELS:
        attempt(lambda m=model: client.chat.completions.create(model=m, messages=q))


weather_task()
failures_task()
get_client().flush()
get_client().shutdown()
