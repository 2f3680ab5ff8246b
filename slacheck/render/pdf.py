"""HTML to PDF with weasyprint, fetching nothing but the bundled assets."""

# Everything in a document came from a contract or a trace, so it is untrusted: the templates
# escape it, and this fetcher is the second wall. It serves files under
# slacheck/templates/assets/ and refuses every other URL — http(s), data:, file:// anywhere
# else, and paths that climb out of the assets folder — before any I/O happens.

from __future__ import annotations

import logging
import mimetypes
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from weasyprint import HTML
from weasyprint.urls import URLFetcher, URLFetcherResponse

__all__ = ["ASSETS", "AssetsOnlyFetcher", "RefusedURL", "html_to_pdf"]

ASSETS = Path(__file__).resolve().parent.parent / "templates" / "assets"


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

    A refused URL is left out of the document (weasyprint logs it), never fetched.
    """
    use = fetcher if fetcher is not None else AssetsOnlyFetcher()
    # weasyprint reports unsupported CSS and refused URLs through logging; keep that quiet
    # unless the caller has configured the logger
    logger = logging.getLogger("weasyprint")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    document = HTML(string=html, base_url=str(ASSETS) + "/", url_fetcher=use)
    pdf: bytes = document.write_pdf()
    return pdf
