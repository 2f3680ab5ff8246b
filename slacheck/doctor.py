"""``slacheck doctor``: what this machine and this install can do, and what to install.

Each row is one thing slacheck relies on — Python, every direct dependency (the installed
version against the range slacheck's metadata allows), each extra (does it import?), the PDF
engine (weasyprint and Pango), a font for each language a document is written in, Java for
Spark — with its status and, when it is missing or unusable, the fix. Words come from message
codes, so the report reads in English or Chinese.

The fonts are found the way a document finds them: a clause draft of the starter contract is
laid out as a PDF in each language and read back (``render.pdffonts``); the fonts that drew the
language's own script are the ones reported, and a language whose text would be empty boxes is
missing, with the font package to install.

``required`` rows are what the default install (``slacheck[all]`` without Spark: every command
but ``--engine spark``) needs; the exit code is 0 when all of them are there, 1 otherwise.
Spark and Java are reported but optional.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from typing import Any

from slacheck.extras import EXTRAS, distribution_of
from slacheck.messages import LANGUAGES, NC_, NPC_, Message, MessageCode

__all__ = [
    "CORE",
    "Check",
    "DoctorSays",
    "Status",
    "checks",
    "exit_code",
    "summary",
]

#: the light install's direct dependencies (distribution names), as pyproject.toml lists them
CORE: tuple[str, ...] = (
    "pydantic",
    "ruamel.yaml",
    "typer",
    "rich",
    "jinja2",
    "babel",
    "python-docx",
)
#: extras a default install has: every command but --engine spark works with these
REQUIRED_EXTRAS: tuple[str, ...] = ("engine", "charts", "pdf")


class Status(StrEnum):
    OK = "ok"
    MISSING = "missing"  # not installed, and needed
    UNUSABLE = "unusable"  # installed, but it fails
    OPTIONAL = "optional"  # not installed, and not needed by the default install


class DoctorSays(MessageCode):
    """The doctor's words: what each row is, its status, what was found and the fix."""

    PYTHON = NC_("doctor.area.python", "Python")
    PACKAGE = NC_("doctor.area.package", "package {name}")
    EXTRA = NC_("doctor.area.extra", "extra [{extra}]")
    PDF_ENGINE = NC_("doctor.area.pdf_engine", "PDF engine (weasyprint)")
    PANGO = NC_("doctor.area.pango", "Pango (text layout for PDF)")
    FONT = NC_("doctor.area.font", "font for documents in {language}")
    JAVA = NC_("doctor.area.java", "Java (for --engine spark)")
    LANG_EN = NC_("doctor.language.en", "English")
    LANG_ZH = NC_("doctor.language.zh", "Chinese")
    STATUS_OK = NC_("doctor.status.ok", "ok")
    STATUS_MISSING = NC_("doctor.status.missing", "missing")
    STATUS_UNUSABLE = NC_("doctor.status.unusable", "unusable")
    STATUS_OPTIONAL = NC_("doctor.status.optional", "not installed (optional)")
    VERSION = NC_("doctor.detail.version", "{version}")
    VERSION_WANTS = NC_("doctor.detail.version_wants", "{version} (slacheck allows {wants})")
    NOT_INSTALLED = NC_("doctor.detail.not_installed", "not installed")
    IMPORTS = NC_("doctor.detail.imports", "{modules}")
    IMPORT_FAILED = NC_("doctor.detail.import_failed", "{module} fails to import: {error}")
    NO_GLYPHS = NC_(
        "doctor.detail.no_glyphs", "no installed font draws {chars} ({scripts}): empty boxes"
    )
    NO_FONTS = NC_("doctor.detail.no_fonts", "fontconfig finds no font on this machine")
    FONTS_FOUND = NC_("doctor.detail.fonts_found", "{fonts}")
    NO_PDF = NC_("doctor.detail.no_pdf", "not checked: laying out a PDF needs the pdf extra")
    JAVA_FOUND = NC_("doctor.detail.java_found", "{version} ({path})")
    NO_JAVA = NC_("doctor.detail.no_java", "no java on PATH and no JAVA_HOME")
    FIX_EXTRA = NC_("doctor.fix.extra", "pip install 'slacheck[{extra}]'")
    FIX_PACKAGE = NC_("doctor.fix.package", "pip install '{requirement}'")
    FIX_JAVA = NC_(
        "doctor.fix.java",
        "install a Java runtime (17 or 21): apt-get install openjdk-17-jre-headless (Debian, "
        "Ubuntu); or set JAVA_HOME",
    )
    FIX_PYTHON = NC_("doctor.fix.python", "slacheck needs Python 3.11 or newer")
    ALL_THERE = NC_(
        "doctor.summary.ok",
        "everything the default install needs is there (Spark is optional)",
    )
    SOME_MISSING = NPC_(
        "doctor.summary.missing",
        "{n} thing the default install needs is missing or unusable: see its fix above",
        "{n} things the default install needs are missing or unusable: see their fixes above",
    )


_STATUS_WORDS = {
    Status.OK: DoctorSays.STATUS_OK,
    Status.MISSING: DoctorSays.STATUS_MISSING,
    Status.UNUSABLE: DoctorSays.STATUS_UNUSABLE,
    Status.OPTIONAL: DoctorSays.STATUS_OPTIONAL,
}
_LANGUAGE_WORDS = {"en": DoctorSays.LANG_EN, "zh": DoctorSays.LANG_ZH}


@dataclass(frozen=True, slots=True)
class Check:
    """One row of the doctor's report."""

    key: str  # stable: "python", "package:typer", "extra:pdf", "font:zh", "java", …
    area: Message
    status: Status
    detail: Message
    fix: Message | None = None
    required: bool = True
    version: str | None = None  # what was found, where it has a version

    @property
    def status_word(self) -> MessageCode:
        return _STATUS_WORDS[self.status]

    @property
    def failed(self) -> bool:
        return self.required and self.status in (Status.MISSING, Status.UNUSABLE)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "status": str(self.status),
            "required": self.required,
            "version": self.version,
            "area": self.area.to_dict(),
            "detail": self.detail.to_dict(),
            "fix": None if self.fix is None else self.fix.to_dict(),
        }


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__


def _wanted() -> dict[str, str]:
    """Distribution (lower case) → the version range slacheck's installed metadata allows;
    empty when slacheck runs from a source tree that was never installed."""
    try:
        requires = metadata.requires("slacheck") or []
    except metadata.PackageNotFoundError:
        return {}
    wants: dict[str, str] = {}
    for line in requires:
        m = re.match(r"\s*([A-Za-z0-9._-]+)\s*(\[[^\]]*\])?\s*([^;]*)", line)
        if m is None:
            continue
        name, spec = m.group(1).lower(), m.group(3).strip().strip("()")
        if spec and not spec.startswith("slacheck"):
            wants.setdefault(name, spec)
    return wants


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _package(dist: str, wants: dict[str, str], required: bool, extra: str | None) -> Check:
    version = _version(dist)
    want = wants.get(dist.lower(), "")
    area = DoctorSays.PACKAGE(name=dist)
    if version is None:
        fix = (
            DoctorSays.FIX_EXTRA(extra=extra)
            if extra
            else DoctorSays.FIX_PACKAGE(requirement=f"{dist}{want}")
        )
        status = Status.MISSING if required else Status.OPTIONAL
        return Check(f"package:{dist}", area, status, DoctorSays.NOT_INSTALLED(), fix, required)
    detail = (
        DoctorSays.VERSION_WANTS(version=version, wants=want)
        if want
        else DoctorSays.VERSION(version=version)
    )
    return Check(f"package:{dist}", area, Status.OK, detail, None, required, version)


def _extra(extra: str, required: bool) -> Check:
    area = DoctorSays.EXTRA(extra=extra)
    fix = DoctorSays.FIX_EXTRA(extra=extra)
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            status = Status.MISSING if required else Status.OPTIONAL
            detail = DoctorSays.IMPORT_FAILED(module=module, error=_first_line(exc))
            return Check(f"extra:{extra}", area, status, detail, fix, required)
        except Exception as exc:  # installed but broken (a system library, a version clash)
            detail = DoctorSays.IMPORT_FAILED(module=module, error=_first_line(exc))
            return Check(f"extra:{extra}", area, Status.UNUSABLE, detail, fix, required)
    detail = DoctorSays.IMPORTS(modules=list(EXTRAS[extra]))
    return Check(f"extra:{extra}", area, Status.OK, detail, None, required)


def _pdf_engine() -> list[Check]:
    """weasyprint and the Pango it loads."""
    area, pango_area = DoctorSays.PDF_ENGINE(), DoctorSays.PANGO()
    fix = DoctorSays.FIX_EXTRA(extra="pdf")
    try:
        import weasyprint
        from weasyprint.text.ffi import pango
    except ModuleNotFoundError as exc:
        detail = DoctorSays.IMPORT_FAILED(module="weasyprint", error=_first_line(exc))
        return [Check("pdf_engine", area, Status.MISSING, detail, fix)]
    except Exception as exc:  # OSError: Pango or its friends cannot be loaded
        from slacheck.extras import ExtraSays

        error = _first_line(exc)
        detail = DoctorSays.IMPORT_FAILED(module="weasyprint", error=error)
        return [
            Check(
                "pdf_engine",
                area,
                Status.UNUSABLE,
                detail,
                ExtraSays.NO_PANGO(error=error),
            )
        ]
    version = str(getattr(weasyprint, "__version__", "?"))
    number = int(pango.pango_version())  # 15002 → 1.50.2
    pango_version = f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    return [
        Check(
            "pdf_engine", area, Status.OK, DoctorSays.VERSION(version=version), None, True, version
        ),
        Check(
            "pango",
            pango_area,
            Status.OK,
            DoctorSays.VERSION(version=pango_version),
            None,
            True,
            pango_version,
        ),
    ]


#: the script a language's documents are written in (``pdffonts.script_of``'s names)
_SCRIPTS = {"en": "latin", "zh": "cjk"}


def _fonts(pdf_ok: bool) -> list[Check]:
    """For each language: lay out the starter contract's clause draft as a PDF in it and read
    back which fonts drew the language's script (or which characters had none)."""
    out: list[Check] = []
    for lang in LANGUAGES:
        area = DoctorSays.FONT(language=_LANGUAGE_WORDS[lang]())
        if not pdf_ok:
            out.append(
                Check(
                    f"font:{lang}",
                    area,
                    Status.MISSING,
                    DoctorSays.NO_PDF(),
                    DoctorSays.FIX_EXTRA(extra="pdf"),
                )
            )
            continue
        out.append(_font_check(lang, area))
    return out


def _font_check(lang: str, area: Message) -> Check:
    from slacheck.contract.load import load_contract_text
    from slacheck.render.documents import DocFormat, render_draft
    from slacheck.render.pdf import MissingGlyphs, NoFonts
    from slacheck.render.pdffonts import embedded_fonts, script_of

    starter = resources.files("slacheck.contract").joinpath(f"starters/{lang}.yaml")
    contract = load_contract_text(starter.read_text(encoding="utf-8"), f"starters/{lang}.yaml")
    try:
        pdf = render_draft(contract, lang=lang, fmt=DocFormat.PDF)
    except NoFonts as exc:
        return Check(f"font:{lang}", area, Status.MISSING, DoctorSays.NO_FONTS(), exc.fix)
    except MissingGlyphs as exc:
        detail = DoctorSays.NO_GLYPHS(chars=exc.shown, scripts=exc.scripts)
        return Check(f"font:{lang}", area, Status.MISSING, detail, exc.fix)
    script = _SCRIPTS.get(lang, "latin")
    found = [
        f.name
        for f in embedded_fonts(pdf)
        if any(script_of(c) == script and ok for c, ok in f.drawn.items())
    ]
    names = list(dict.fromkeys(found))
    return Check(
        f"font:{lang}",
        area,
        Status.OK,
        DoctorSays.FONTS_FOUND(fonts=names),
        None,
        True,
        ", ".join(names),
    )


def _java(required: bool) -> Check:
    area = DoctorSays.JAVA()
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        status = Status.MISSING if required else Status.OPTIONAL
        return Check("java", area, status, DoctorSays.NO_JAVA(), DoctorSays.FIX_JAVA(), required)
    try:
        run = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        detail = DoctorSays.IMPORT_FAILED(module=java, error=_first_line(exc))
        return Check("java", area, Status.UNUSABLE, detail, DoctorSays.FIX_JAVA(), required)
    said = (run.stderr or run.stdout).strip().splitlines()
    version = said[0] if said else "?"
    if run.returncode != 0:
        detail = DoctorSays.IMPORT_FAILED(module=java, error=version)
        return Check("java", area, Status.UNUSABLE, detail, DoctorSays.FIX_JAVA(), required)
    detail = DoctorSays.JAVA_FOUND(version=version, path=java)
    return Check("java", area, Status.OK, detail, None, required, version)


def checks() -> list[Check]:
    """Every row of the report, in order: Python, packages, extras, PDF engine, fonts, Java."""
    rows: list[Check] = []
    py = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info >= (3, 11)
    rows.append(
        Check(
            "python",
            DoctorSays.PYTHON(),
            Status.OK if ok else Status.UNUSABLE,
            DoctorSays.VERSION(version=py),
            None if ok else DoctorSays.FIX_PYTHON(),
            True,
            py,
        )
    )
    wants = _wanted()
    for dist in CORE:
        rows.append(_package(dist, wants, True, None))
    seen: set[str] = set(CORE)
    for extra, modules in EXTRAS.items():
        for module in modules:
            dist = distribution_of(module)
            if dist not in seen:
                seen.add(dist)
                rows.append(_package(dist, wants, extra in REQUIRED_EXTRAS, extra))
    for extra in EXTRAS:
        rows.append(_extra(extra, extra in REQUIRED_EXTRAS))
    engine = _pdf_engine()
    rows.extend(engine)
    rows.extend(_fonts(all(c.status is Status.OK for c in engine)))
    rows.append(_java(required=False))
    return rows


def exit_code(rows: list[Check]) -> int:
    """0 when everything the default install needs is there, 1 otherwise."""
    return 1 if any(r.failed for r in rows) else 0


def summary(rows: list[Check]) -> Message:
    failed = sum(r.failed for r in rows)
    return DoctorSays.SOME_MISSING(n=failed) if failed else DoctorSays.ALL_THERE()
