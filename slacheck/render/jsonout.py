"""The one way slacheck writes JSON: strict (no NaN or Infinity, which strict parsers reject)."""

from __future__ import annotations

import json
import math
from typing import Any

from slacheck.textsafe import json_text


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def dumps(data: Any) -> str:
    """``data`` as indented JSON text; a non-finite number (never measured) is written as null."""
    text = json.dumps(_finite(data), indent=2, ensure_ascii=False, allow_nan=False)
    return json_text(text) + "\n"  # control and bidi characters as \u escapes (``textsafe``)
