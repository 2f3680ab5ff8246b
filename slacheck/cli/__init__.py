"""The command line: parse, call the public API, print, exit with 0 / 1 / 2 (3: a bug).

The Typer app (``slacheck.cli.root``) takes its commands from one module per group, imported
here in the order ``slacheck --help`` lists them: the contract, the traces, the checks, the
documents."""

from __future__ import annotations

import sys

from slacheck.cli.helpers import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_INTERNAL, EXIT_OK
from slacheck.cli.root import app
from slacheck.cli.says import CliSays
from slacheck.cli.terminal import PIPE_WIDTH, _console, _ProgressLine, _Quiet, _working, err, out
from slacheck.version import __version__

# Each command module registers its commands on ``app`` as it is imported, so the order of these
# imports is the order ``slacheck --help`` lists the commands in (the groups after them).
# isort: off
from slacheck.cli import contract, traces, checks, documents
# isort: on

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FINDINGS",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "PIPE_WIDTH",
    "CliSays",
    "_ProgressLine",
    "_Quiet",
    "_console",
    "_working",
    "app",
    "checks",
    "contract",
    "documents",
    "err",
    "main",
    "out",
    "traces",
]


def main() -> None:
    """Console-script entry point. SIGTERM ends a command as SIGINT does (its temporary outputs
    removed, what was there before intact), with exit 128 + 15."""
    from slacheck.outputs import Terminated, handle_signals

    if sys.argv[1:] == ["--version"]:  # whatever typer and click make of the flag
        out.print(f"slacheck {__version__}", highlight=False)
        sys.exit(EXIT_OK)
    handle_signals()
    try:
        app()
    except Terminated as exc:
        raise SystemExit(exc.exit_code) from None
