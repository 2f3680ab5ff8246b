"""The parts of slacheck a light install leaves out, and the pip extra that brings each.

``pip install slacheck`` is enough for contract work (validate, lint, schema, init, export,
draft in Markdown or HTML). Reading traces needs the engine, PDF documents need weasyprint, the
report's charts need matplotlib, Spark needs pyspark: each is an extra (``pyproject.toml``), and
a command that reaches for a module its install does not have says which extra to install
(exit 2), never a traceback.
"""

from __future__ import annotations

from slacheck.errors import UsageError
from slacheck.messages import NC_, Message, MessageCode, render

__all__ = ["EXTRAS", "ExtraSays", "PartMissing", "distribution_of", "extra_for", "missing_part"]

#: extra → the top-level modules it brings (what `import` names), in the order the doctor
#: reports them
EXTRAS: dict[str, tuple[str, ...]] = {
    "engine": ("ibis", "duckdb", "pyarrow", "pandas", "numpy", "sqlglot"),
    "charts": ("matplotlib",),
    "pdf": ("weasyprint",),
    "spark": ("pyspark",),
}

#: a module's distribution name on PyPI where it differs from the module's
_DISTRIBUTIONS = {"ibis": "ibis-framework"}


def extra_for(module: str | None) -> str | None:
    """The extra that brings ``module`` (a dotted name; its top level decides), or None when
    it is no optional module of slacheck's."""
    if not module:
        return None
    top = module.split(".")[0]
    for extra, modules in EXTRAS.items():
        if top in modules:
            return extra
    return None


def distribution_of(module: str) -> str:
    """The PyPI distribution that installs ``module``."""
    top = module.split(".")[0]
    return _DISTRIBUTIONS.get(top, top)


class ExtraSays(MessageCode):
    """What a command says when its install lacks a part."""

    MISSING = NC_(
        "extra.missing",
        "`{command}` needs {package}, which this install of slacheck does not have: "
        "pip install 'slacheck[{extra}]' (or 'slacheck[all]' for everything)",
    )
    NO_PANGO = NC_(
        "extra.no_pango",
        "PDF output needs weasyprint's system libraries (Pango), which cannot be loaded "
        "({error}): apt-get install libpango-1.0-0 libpangoft2-1.0-0 (Debian, Ubuntu), "
        "dnf install pango (Fedora), brew install pango (macOS)",
    )


class PartMissing(UsageError):
    """A command needs a part its install lacks (an extra, a system library): exit 2 with
    what to install, in the command's language (``message``)."""

    def __init__(self, message: Message) -> None:
        self.message = message
        super().__init__(render(message, "en"))


def missing_part(command: str, error: ModuleNotFoundError) -> PartMissing | None:
    """``error`` (a failed import) as the extra to install, or None when the module is none of
    slacheck's optional ones (then it is a bug, not an install to complete)."""
    extra = extra_for(error.name)
    if extra is None or error.name is None:
        return None
    package = distribution_of(error.name)
    return PartMissing(ExtraSays.MISSING(command=command, package=package, extra=extra))
