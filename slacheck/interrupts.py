"""What stops a running engine query when SIGINT or SIGTERM arrives.

A Python signal handler runs only once the main thread is back from C code, and a DuckDB query
may run for minutes: ``start_watcher`` has the C-level handler write each signal's number to a
pipe that a thread reads, which calls every stop registered with ``add_interrupter`` (DuckDB's
``connection.interrupt``). The query ends with DuckDB's "interrupted" error, and the Python
handler (``outputs.handle_signals``) then raises ``Terminated`` or ``KeyboardInterrupt``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable

#: what stops a running engine query (DuckDB's ``interrupt``), by the key ``add_interrupter``
#: gave; called from the watcher thread when SIGINT or SIGTERM arrives
_interrupters: dict[int, Callable[[], None]] = {}
_watching: list[int] = []


def add_interrupter(stop: Callable[[], None]) -> int:
    """Call ``stop`` when SIGINT or SIGTERM arrives (from another thread: a Python signal
    handler runs only once the main thread is back from C, and a DuckDB query may run for
    minutes); the key to ``remove_interrupter``."""
    key = id(stop)
    _interrupters[key] = stop
    return key


def remove_interrupter(key: int) -> None:
    _interrupters.pop(key, None)


def _watch(fd: int) -> None:
    """The watcher thread: the C-level handler writes each signal's number to ``fd`` even
    while the main thread is inside a query; interrupt the queries, and the handler raises
    ``Terminated`` or ``KeyboardInterrupt`` as soon as the query returns."""
    while True:
        try:
            data = os.read(fd, 64)
        except OSError:
            return
        if not data:
            return
        if any(b in (signal.SIGINT, signal.SIGTERM) for b in data):
            for stop in list(_interrupters.values()):
                with contextlib.suppress(Exception):
                    stop()


def start_watcher() -> None:
    if _watching:
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _watching.extend((read, write))
    threading.Thread(target=_watch, args=(read,), name="slacheck-signals", daemon=True).start()
