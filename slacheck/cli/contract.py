"""The contract commands: validate, schema, init, lint, export openslo."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from slacheck.cli.helpers import (
    EXIT_FINDINGS,
    EXIT_OK,
    Lang,
    OutputFormat,
    handles_input_errors,
)
from slacheck.cli.helptext import _Command, _Group
from slacheck.cli.root import app
from slacheck.cli.says import CliSays
from slacheck.cli.terminal import err, out
from slacheck.console import plain, say
from slacheck.errors import InputError, Problem, UsageError
from slacheck.outputs import write_output
from slacheck.render import jsonout

# --------------------------------------------------------------------------------------------
# Contracts


@app.command(cls=_Command)
@handles_input_errors
def validate(
    contracts: Annotated[list[Path], typer.Argument(help="Contract YAML files.")],
) -> None:
    """Validate contract files; report every problem with file, line, column and field."""
    from slacheck.contract.load import load_contract

    problems: list[Problem] = []
    more = 0
    for path in contracts:
        try:
            c = load_contract(path)
        except InputError as exc:
            problems.extend(exc.problems)
            more += exc.more
            continue
        detail = CliSays.VALID_DETAIL(path=str(path), contract=c.contract.id, n=len(c.latency))
        line = Text.assemble((say(CliSays.VALID), "green"), "  " + say(detail))
        out.print(line, highlight=False)
    if problems:
        raise InputError(problems, more=more)


@app.command(cls=_Command)
@handles_input_errors
def schema(
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the contract's JSON Schema (for editors: see the README)."""
    from slacheck.contract.docs import json_schema_text

    text = json_schema_text()
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text)
        err.print(say(CliSays.WROTE(path=str(output))), highlight=False)


@app.command(cls=_Command)
@handles_input_errors
def init(
    lang: Annotated[Lang, typer.Option("--lang", help="Language of the comments.")] = Lang.en,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead of stdout.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    preset_name: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Start from a vendor's published standard terms (see --list-presets); "
            "comments in English.",
        ),
    ] = None,
    list_presets: Annotated[
        bool, typer.Option("--list-presets", help="List the vendor presets and exit.")
    ] = False,
) -> None:
    """Write a commented starting contract that validates (or a vendor preset)."""
    from slacheck.contract.presets import preset, presets

    if list_presets:
        for p in presets():
            out.print(plain(f"{p.name:<20} {p.title}"), highlight=False)
        return
    if preset_name is not None:
        chosen = preset(preset_name)
        if chosen is None:
            names = ", ".join(p.name for p in presets())
            raise UsageError(f"no preset {preset_name!r}; the presets are: {names}")
        text = chosen.text
    else:
        text = (
            resources.files("slacheck.contract")
            .joinpath(f"starters/{lang.value}.yaml")
            .read_text(encoding="utf-8")
        )
    if output is None:
        sys.stdout.write(text)
        return
    if output.exists() and not force:
        raise UsageError(f"{output} exists; pass --force to overwrite it")
    write_output(output, text)
    err.print(say(CliSays.WROTE_STARTER(path=str(output)), lang.value), highlight=False)
    if preset_name is not None:
        err.print(say(CliSays.PRESET_HINT, lang.value), highlight=False)


@app.command(cls=_Command)
@handles_input_errors
def lint(
    contract: Annotated[Path, typer.Argument(help="Contract YAML file.")],
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = (
        OutputFormat.table
    ),
    lang: Annotated[
        Lang, typer.Option("--lang", help="Language of the table: en or zh (JSON: English text).")
    ] = Lang.en,
) -> None:
    """Review the clauses as a procurement reviewer would. Exit 1 when anything is found."""
    from slacheck.console import findings_table
    from slacheck.contract.load import read_contract
    from slacheck.contract.review import review

    loaded = read_contract(contract)
    findings = review(loaded.contract)
    if fmt is OutputFormat.json:
        rows = []
        for f in findings:
            line, _ = loaded.position(f.field)
            rows.append({**f.to_dict(), "file": str(contract), "line": line})
        sys.stdout.write(jsonout.dumps({"findings": rows}))
    else:
        out.print(findings_table(loaded, findings, lang.value))
    raise typer.Exit(EXIT_FINDINGS if findings else EXIT_OK)


export_app = typer.Typer(help="Hand the contract to other tools.", no_args_is_help=True, cls=_Group)
app.add_typer(export_app, name="export")


@export_app.command("openslo", cls=_Command)
@handles_input_errors
def export_openslo(
    contract: Annotated[Path, typer.Argument(help="Contract YAML file.")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """OpenSLO v1 SLOs (multi-document YAML) for the terms that map; the rest in annotations.

    What has no SLO (regions, routing, peak, rate limit, credits) is listed on stderr and in
    the file's leading comments."""
    from slacheck.contract.load import load_contract
    from slacheck.render.openslo import to_openslo

    exported = to_openslo(load_contract(contract))
    if output is None:
        sys.stdout.write(exported.text)
    else:
        write_output(output, exported.text, [contract])
        wrote = CliSays.WROTE_SLOS(path=str(output), n=len(exported.documents))
        err.print(say(wrote), highlight=False)
    for what in exported.left_out:
        err.print(say(CliSays.LEFT_OUT(what=what)), highlight=False)
