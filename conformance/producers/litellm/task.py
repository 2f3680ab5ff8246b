"""LiteLLM's own logging payload: a CustomLogger callback writes kwargs['standard_logging_object']
for every success and failure (the payload LiteLLM hands its logging integrations)."""

import json
import os
import threading
import time

import litellm
import litellm_task
from litellm.integrations.custom_logger import CustomLogger

OUT = os.path.join(os.environ["OUT_DIR"], "litellm.jsonl")
lock = threading.Lock()
seen = []


class Writer(CustomLogger):
    def _write(self, kwargs):
        payload = kwargs.get("standard_logging_object")
        if payload is None:
            return
        with lock, open(OUT, "a") as f:
            f.write(json.dumps(payload, default=str, separators=(",", ":")) + "\n")
        seen.append(1)

    def log_success_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)

    def log_failure_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)


litellm.callbacks = [Writer()]
litellm_task.run()
for _ in range(50):  # the success callbacks run on a worker thread
    if len(seen) >= 8:
        break
    time.sleep(0.1)
