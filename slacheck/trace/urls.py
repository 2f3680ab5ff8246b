"""Which trace arguments are URLs (``s3a://bucket/spans/``, ``hdfs://nn/otel/*.jsonl``): read
by Spark where they are (``trace.remote``), not opened as paths on this machine."""

from __future__ import annotations

import re

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(raw: object) -> bool:
    """Whether a trace argument is a URL (``scheme://…``) rather than a path on this machine."""
    return isinstance(raw, str) and _SCHEME.match(raw) is not None


__all__ = ["is_url"]
