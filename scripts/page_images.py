"""Write docs/<doc>.<lang>.png: the first page of each of the demo's PDFs, for the README."""

# The README shows the first page of the clause draft, the review memo, the acceptance criteria
# and the compliance report, in English and Chinese. They are taken from `make demo`'s PDFs
# (demo-out/, whose content is fixed: seeded traffic and a fixed issue date) by poppler's
# pdftoppm. Run `make demo` first, or pass --run to run the demo into a temporary folder.

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("draft", "memo", "accept", "report")
LANGS = ("en", "zh")


def first_page(pdf: Path, png: Path, dpi: int) -> None:
    """The PDF's first page as ``png`` (pdftoppm adds the suffix itself)."""
    subprocess.run(
        [
            "pdftoppm",
            "-f",
            "1",
            "-l",
            "1",
            "-r",
            str(dpi),
            "-png",
            "-singlefile",
            str(pdf),
            str(png.with_suffix("")),
        ],
        check=True,
        timeout=120,
    )


def write_images(demo: Path, out: Path, dpi: int) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for doc in DOCS:
        for lang in LANGS:
            pdf = demo / f"{doc}.{lang}.pdf"
            if not pdf.is_file():
                raise SystemExit(f"{pdf} not found: run `make demo` first, or pass --run")
            png = out / f"{doc}.{lang}.png"
            first_page(pdf, png, dpi)
            written.append(png)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--demo", type=Path, default=ROOT / "demo-out", help="the demo's output")
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "docs")
    ap.add_argument("--dpi", type=int, default=60)
    ap.add_argument("--run", action="store_true", help="run the demo first, in a temp folder")
    args = ap.parse_args(argv)
    if args.run:
        from slacheck.demo import run_demo

        with tempfile.TemporaryDirectory() as tmp:
            run_demo(Path(tmp))
            written = write_images(Path(tmp), args.out, args.dpi)
    else:
        written = write_images(args.demo, args.out, args.dpi)
    for png in written:
        print(f"wrote {png.relative_to(ROOT) if png.is_relative_to(ROOT) else png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
