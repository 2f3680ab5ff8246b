"""LangChain with LangSmith tracing (LANGSMITH_TRACING=true); each task a @traceable chain."""

from collections.abc import Callable

import lc_task
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith import traceable


def group(name: str, body: Callable[[], None]) -> None:
    traceable(name=name, run_type="chain")(body)()


lc_task.run(group)
wait_for_all_tracers()
