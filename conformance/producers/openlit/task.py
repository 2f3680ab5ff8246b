"""OpenLIT (openlit.init) on the OpenAI client, reusing the tracer provider the user set up;
task and tool spans by hand with the GenAI attributes."""

import openai
import openlit
from common import CLIENT_TIMEOUT_S, openai_task, otel_spans

provider, task, tool = otel_spans("conformance-openlit")
# the provider set above is detected and reused; no metrics, no OpenLIT platform
openlit.init(application_name="conformance-openlit", disable_metrics=True)
client = openai.OpenAI(timeout=CLIENT_TIMEOUT_S, max_retries=0)
openai_task(client, task, tool)
provider.shutdown()
