"""How far long work has got, for whoever wants to show it.

Ingestion and evaluation call :func:`report` as they go; nothing happens unless the caller
installed a listener with :func:`reporting` (the command line does, to draw its progress line on
a terminal). A library user who installs none sees no change and pays one context-variable
look-up per file or check.

    with reporting(print):
        traces = ingest(paths)
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum


class Stage(StrEnum):
    READ = "read"  # files read: ``done`` of ``total`` files, ``rows`` so far
    QUALITY = "quality"  # the rows read are being counted, checked and set aside
    CHECK = "check"  # ``done`` of ``total`` checks run; ``item`` names the next


@dataclass(frozen=True)
class Step:
    """One step of progress. ``bytes_done`` / ``bytes_total`` (input bytes, when known) let a
    listener estimate the time left."""

    stage: Stage
    done: int
    total: int | None = None
    rows: int = 0
    bytes_done: int = 0
    bytes_total: int | None = None
    item: str | None = None


Listener = Callable[[Step], None]

_listener: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "slacheck_progress", default=None
)


@contextmanager
def reporting(listener: Listener) -> Iterator[None]:
    """Send the progress of the work done inside the block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def report(step: Step) -> None:
    """Tell the listener, if there is one; a listener that fails never stops the work."""
    listener = _listener.get()
    if listener is None:
        return
    try:
        listener(step)
    except Exception:  # a display's bug must not change a verdict or an exit code
        _listener.set(None)
