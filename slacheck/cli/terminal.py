"""Where the command line prints: stdout and stderr consoles (a terminal's width, or lines as
long as they are in a pipe), and the progress line on stderr."""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Iterator
from typing import Any

from rich.console import Console

from slacheck.cli.says import CliSays
from slacheck.console import say
from slacheck.messages import Message
from slacheck.progress import Stage, Step, reporting

#: the width of output that goes to a pipe or a file: wide enough that nothing is ever cut
#: (tables take the width of their content; nothing is padded to it)
PIPE_WIDTH = 10_000


class _Unpadded:
    """The current stdout (or stderr) without the spaces Rich pads a line's end with (rich 13.0
    pads a table's centred title to PIPE_WIDTH): piped lines are as long as their content."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr

    def _stream(self) -> Any:
        return sys.stderr if self._stderr else sys.stdout

    def write(self, text: str) -> int:
        return int(self._stream().write(_PADDING.sub("\n", text)))

    def flush(self) -> None:
        self._stream().flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream(), name)


_PADDING = re.compile(r"[ \t]+\n")


def _console(*, stderr: bool = False) -> Console:
    """A terminal gets its width, and text wraps at it; a pipe or a file gets lines as long as
    they are, never the 80 columns Rich assumes there (or a COLUMNS some CI exports): tables
    and bullets were cut."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr, soft_wrap=False)
    return Console(file=_Unpadded(stderr), soft_wrap=True, width=PIPE_WIDTH)  # type: ignore[arg-type]


out = _console()
err = _console(stderr=True)
#: --quiet: no progress line
_quiet = False


def set_quiet(quiet: bool) -> None:
    """--quiet: from now on, no progress line."""
    global _quiet
    _quiet = quiet


class _Quiet:
    """What `_working` gives when there is no progress line to draw."""

    def update(self, _status: str) -> None:
        pass


class _ProgressLine:
    """The progress line on stderr: the command's words, then how far ingestion and evaluation
    have got (files and rows read, spans per second, time left from the bytes read, checks)."""

    def __init__(self, status: Any, words: str, lang: str) -> None:
        self.status, self.words, self.lang = status, words, lang
        self.started = time.monotonic()

    def update(self, words: str) -> None:
        self.words = words
        self.status.update(words)

    def __call__(self, step: Step) -> None:
        self.status.update(f"{self.words} {say(self.detail(step), self.lang)}")

    def detail(self, step: Step) -> Message:
        elapsed = max(time.monotonic() - self.started, 1e-3)
        if step.stage is Stage.READ:
            figures = {
                "done": step.done,
                "total": step.total,
                "rows": CliSays.ROWS(n=step.rows),
                "rate": f"{step.rows / elapsed:,.0f}",
            }
            if step.bytes_total and 0 < step.bytes_done < step.bytes_total:
                left = elapsed * (step.bytes_total - step.bytes_done) / step.bytes_done
                minutes, seconds = divmod(int(left), 60)
                return CliSays.PROGRESS_READ_LEFT(**figures, time=f"{minutes}:{seconds:02d}")
            return CliSays.PROGRESS_READ(**figures)
        if step.stage is Stage.QUALITY:
            return CliSays.PROGRESS_QUALITY(rows=CliSays.ROWS(n=step.rows))
        if step.item is None:
            return CliSays.PROGRESS_CHECKS_DONE(done=step.done, total=step.total)
        return CliSays.PROGRESS_CHECKS(done=step.done, total=step.total, item=step.item)


@contextlib.contextmanager
def _working(words: str, lang: str = "en") -> Iterator[_Quiet | _ProgressLine]:
    """A spinner with ``words`` and the progress of the work inside, on stderr, only on a
    terminal and without --quiet; piped, nothing (a log gets no spinner frames)."""
    if _quiet or not err.is_terminal:
        yield _Quiet()
        return
    with err.status(words) as status:
        line = _ProgressLine(status, words, lang)
        with reporting(line):
            yield line
