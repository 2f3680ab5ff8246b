"""OpenInference's LangChain instrumentation; each task a RunnableLambda (a CHAIN span)."""

from collections.abc import Callable

import lc_task
from common import otel_provider
from langchain_core.runnables import RunnableLambda
from openinference.instrumentation.langchain import LangChainInstrumentor

provider = otel_provider("conformance-openinference-langchain")
LangChainInstrumentor().instrument(tracer_provider=provider)


def group(name: str, body: Callable[[], None]) -> None:
    RunnableLambda(lambda _: body()).invoke(None, config={"run_name": name})


lc_task.run(group)
provider.shutdown()
