"""The Typer app and its own options (--version, --quiet); every command module registers on it."""

from __future__ import annotations

from typing import Annotated

import typer

from slacheck.cli.helptext import _Group
from slacheck.cli.terminal import out, set_quiet
from slacheck.version import __version__

app = typer.Typer(
    name="slacheck",
    help="Check AI-inference SLA contracts against your own agent traces.",
    no_args_is_help=True,
    cls=_Group,
    pretty_exceptions_enable=False,
)


def _version(value: object) -> None:
    # `is True`, never truthiness: typer < 0.16 with click >= 8.2 passes the string "False"
    # when the flag is absent, and every command printed the version and exited 0
    if value is True:
        out.print(f"slacheck {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress line on stderr.")
    ] = False,
) -> None:
    """Check AI-inference SLA contracts against your own agent traces."""
    set_quiet(quiet is True)
