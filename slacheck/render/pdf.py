"""HTML to PDF with weasyprint, fetching nothing but the bundled assets."""

# Everything in a document came from a contract or a trace, so it is untrusted: the templates
# escape it, and this fetcher is the second wall. It serves files under
# slacheck/templates/assets/ and refuses every other URL — http(s), data:, file:// anywhere
# else, and paths that climb out of the assets folder — before any I/O happens.
#
# Glyphs or a refusal: a machine without a font for the document's script (no CJK font for a
# Chinese document) lays the text out in a fallback font that has no glyphs for it, and every
# such character is an empty box on the page while the exit code says success. So the written
# PDF is read back (`pdffonts.missing_glyphs`, its own bytes, no poppler) and a PDF that draws
# any character without a glyph is refused with `MissingGlyphs`, naming what to install.
# A machine with no font at all (a slim container, an empty fontconfig configuration) does not
# get that far: Pango crashes the process laying out the first line (a segfault, exit 139, no
# message), so fontconfig is asked first and such a machine is refused with `NoFonts`.

from __future__ import annotations

import html as htmllib
import logging
import mimetypes
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from weasyprint import HTML
from weasyprint.urls import URLFetcher, URLFetcherResponse

from slacheck.errors import UsageError
from slacheck.messages import NC_, Message, MessageCode, render
from slacheck.render.assets import ASSETS
from slacheck.render.pdffonts import missing_glyphs, script_of

__all__ = [
    "ASSETS",
    "AssetsOnlyFetcher",
    "MissingGlyphs",
    "NoFonts",
    "PdfSays",
    "RefusedURL",
    "font_fix",
    "html_to_pdf",
]


class PdfSays(MessageCode):
    """Why a PDF was not written, and what to install."""

    MISSING_GLYPHS = NC_(
        "pdf.missing_glyphs",
        "no installed font has glyphs for {chars} ({scripts}): the PDF would show empty boxes "
        "there, so it was not written. {fix}",
    )
    NO_FONTS = NC_(
        "pdf.no_fonts",
        "fontconfig finds no font on this machine: the PDF would have no text, so it was not "
        "written. {fix}",
    )
    FIX_CJK = NC_(
        "pdf.fix.cjk",
        "Install a CJK font: `apt-get install fonts-noto-cjk` (Debian, Ubuntu), "
        "`dnf install google-noto-sans-cjk-fonts` (Fedora), "
        "`brew install --cask font-noto-sans-cjk-sc` (macOS); the documents use Noto Sans CJK "
        "SC or Source Han Sans SC",
    )
    FIX_LATIN = NC_(
        "pdf.fix.latin",
        "Install a Latin font: `apt-get install fonts-dejavu-core` (Debian, Ubuntu), "
        "`dnf install dejavu-sans-fonts` (Fedora); the documents use Noto Sans or DejaVu Sans",
    )
    FIX_OTHER = NC_(
        "pdf.fix.other",
        "Install a font that covers them, e.g. `apt-get install fonts-noto-core fonts-noto-extra` "
        "(Debian, Ubuntu)",
    )


def font_fix(scripts: set[str]) -> Message:
    """What to install for characters of these scripts (``pdffonts.script_of``)."""
    if "cjk" in scripts:
        return PdfSays.FIX_CJK()
    if scripts == {"latin"}:
        return PdfSays.FIX_LATIN()
    return PdfSays.FIX_OTHER()


class MissingGlyphs(UsageError):
    """A PDF would draw characters no installed font has: refused, never written blank."""

    def __init__(self, chars: str) -> None:
        self.chars = chars
        self.scripts = sorted({script_of(c) for c in chars})
        self.shown = chars if len(chars) <= 24 else chars[:24] + "…"
        self.fix = font_fix(set(self.scripts))
        self.message = PdfSays.MISSING_GLYPHS(chars=self.shown, scripts=self.scripts, fix=self.fix)
        super().__init__(render(self.message, "en"))


class NoFonts(MissingGlyphs):
    """No font installed at all: every character of the document would lack a glyph (and Pango
    would crash the process laying it out), so nothing is laid out."""

    def __init__(self, chars: str) -> None:
        super().__init__(chars)
        self.message = PdfSays.NO_FONTS(fix=self.fix)
        self.args = (render(self.message, "en"),)


def _letters(html: str) -> str:
    """The letters of a document's text (markup, styles and scripts left out), sorted."""
    body = re.sub(r"<(style|script)\b.*?</\1\s*>", " ", html, flags=re.S | re.I)
    text = htmllib.unescape(re.sub(r"<[^>]*>", " ", body))
    return "".join(sorted({c for c in text if unicodedata.category(c).startswith("L")}))


def fonts_installed() -> bool:
    """Whether fontconfig (the configuration Pango lays text out with) finds any font."""
    from weasyprint.text.ffi import ffi, fontconfig

    # NULL: fontconfig's current configuration, loaded (FONTCONFIG_FILE and all) if need be
    fonts = fontconfig.FcConfigGetFonts(ffi.NULL, fontconfig.FcSetSystem)
    return bool(fonts != ffi.NULL and fonts.nfont > 0)


class RefusedURL(ValueError):
    """A document asked for a resource outside the bundled assets."""


class AssetsOnlyFetcher(URLFetcher):  # type: ignore[misc]
    """A weasyprint URL fetcher that only reads files inside ``root``."""

    def __init__(self, root: Path = ASSETS) -> None:
        super().__init__(allowed_protocols=("file",), allow_redirects=False)
        self.root = root.resolve()
        self.refused: list[str] = []

    def resolve(self, url: str) -> Path:
        """The asset file ``url`` names; ``RefusedURL`` for anything else."""
        parts = urlsplit(url)
        if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
            raise RefusedURL(f"refused to fetch {url!r}: only bundled assets are loaded")
        path = Path(url2pathname(unquote(parts.path))).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            raise RefusedURL(f"refused to fetch {url!r}: not a file under {self.root}")
        return path

    def fetch(self, url: str, headers: object = None) -> URLFetcherResponse:
        try:
            path = self.resolve(url)
        except RefusedURL:
            self.refused.append(url)
            raise
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return URLFetcherResponse(path.as_uri(), path.read_bytes(), {"Content-Type": mime})


def html_to_pdf(html: str, *, fetcher: AssetsOnlyFetcher | None = None) -> bytes:
    """Lay out ``html`` as a PDF; relative URLs resolve against the assets folder.

    A refused URL is left out of the document (weasyprint logs it), never fetched. A document
    with characters no installed font draws raises ``MissingGlyphs`` (exit 2 on the command
    line): no PDF of empty boxes; on a machine with no font at all, ``NoFonts`` before any
    layout.
    """
    if not fonts_installed():
        raise NoFonts(_letters(html) or "?")
    use = fetcher if fetcher is not None else AssetsOnlyFetcher()
    # weasyprint reports unsupported CSS and refused URLs through logging; keep that quiet
    # unless the caller has configured the logger
    logger = logging.getLogger("weasyprint")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    document = HTML(string=html, base_url=str(ASSETS) + "/", url_fetcher=use)
    pdf: bytes = document.write_pdf()
    missing = missing_glyphs(pdf)
    if missing:
        raise MissingGlyphs(missing)
    return pdf
