"""How names are compared: one rule each for model snapshots and region names.

Both the contract's lint (``contract/review/peak.py``) and the metering layer
(``metering/derive.py``) compare names from contracts with names traces report; this module is
the one home of those rules, below both. The Python functions compare contract-side names; the
regexes are what the Ibis expressions in ``metering/derive.py`` apply to the trace columns, so
both sides agree.
"""

from __future__ import annotations

import re

#: a resource path before the model's own name (``projects/p/…/models/gpt-4o`` → ``gpt-4o``)
PATH_PREFIX = r"^.*/"
#: a snapshot or alias suffix on a lower-cased model name: ``-2024-08-06``, ``-20240806``,
#: ``@20240806``, ``-0613``, ``-latest``, ``@latest``
SNAPSHOT = r"(-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-\d{3,4}|-latest|@latest)$"


def model_base(name: str) -> str:
    """A model name as compared: trimmed, lower-cased, without resource path or snapshot suffix.

    ``projects/…/models/gpt-4o-2024-08-06`` → ``gpt-4o``; ``GPT-4o-latest`` → ``gpt-4o``.
    The twin of ``metering.derive.model_base_expr``, which applies the same two regexes.
    """
    return re.sub(SNAPSHOT, "", re.sub(PATH_PREFIX, "", name.strip().lower()))


def region_key(name: str) -> str:
    """A region name as compared: trimmed (of every white space ``str.strip`` knows) and
    lower-cased. The one rule for both sides: the checks read a trace's regions through it too,
    applied once per distinct recorded region (``metering.derive.RegionKeys``)."""
    return name.strip().lower()
