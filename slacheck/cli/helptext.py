"""The help text's plumbing: type placeholders left out, and click's plain help when the help
does not go to a terminal. Every command and group takes ``_Command`` / ``_Group``."""

from __future__ import annotations

import sys
from typing import Any

from typer.core import TyperCommand, TyperGroup


def _plain_metavars(params: list[Any]) -> list[Any]:
    """Help text without type placeholders: a flag shows none (current typer prints
    ``--version <bool>``), an option its name (``--period PERIOD``); choices and arguments keep
    theirs. Set here, once for every command, under any typer and click."""
    for param in params:
        if getattr(param, "metavar", None) is not None:
            continue
        if not _is_option(param):  # an argument: its name (current click prints ``{contract}``,
            # typer's panel ``<path>`` and ``<list[str]>``), with the marks click would add
            if param.name and not _has_choices(param):
                _plain_argument(param)
            continue
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif not _has_choices(param) and param.name:
            param.metavar = param.name.upper()
    return params


def _plain_argument(param: Any) -> None:
    """An argument shown by its name, as click writes it (``TRACES...``, ``[TRACES]...``), with
    no type beside it: current typer writes ``{contract}`` in the usage line and ``<path>`` or
    ``<list[str]>`` in the panel. The per-instance overrides reach only the typer versions that
    have those methods; older ones take the metavar as it is."""
    many = "..." if getattr(param, "nargs", 1) != 1 else ""
    name = param.name.upper() + many
    metavar = name if getattr(param, "required", False) else f"[{name}]"
    param.metavar = metavar
    if hasattr(param, "_usage_display_name"):
        param._usage_display_name = lambda: metavar
    if hasattr(param, "display_type_rich"):
        param.display_type_rich = lambda ctx: None


def _has_choices(param: Any) -> bool:
    kinds = (getattr(param, "type", None), getattr(param, "type_descriptor", None))
    return any(getattr(k, "choices", None) for k in kinds)


def _is_option(param: Any) -> bool:
    return any(str(o).startswith("-") for o in getattr(param, "opts", ()))


def _help_to_a_terminal() -> bool:
    """Help goes to a terminal: typer's panels. Piped or to a file, click's plain help, which
    pads nothing (rich pads every panel line to the console's width)."""
    stream = sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_metavars(super().get_params(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if _help_to_a_terminal():
            return super().format_help(ctx, formatter)
        return super(TyperCommand, self).format_help(ctx, formatter)  # click's own


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_metavars(super().get_params(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if _help_to_a_terminal():
            return super().format_help(ctx, formatter)
        return super(TyperGroup, self).format_help(ctx, formatter)  # click's own
