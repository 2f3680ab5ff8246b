"""Write docs/report-first-page.png: the first page of a compliance report in headless Chromium."""

# The README shows this picture. The report is built exactly as `slacheck report` builds it,
# from a bundled contract and a month of synthetic traffic (fixed seed), then rendered to HTML
# and photographed by Debian's `chromium` at 1200×1600.

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import tempfile
from pathlib import Path

from slacheck.contract.load import load_contract
from slacheck.prepare import prepare_report
from slacheck.render.documents import DocFormat, render_report
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def _chromium(profile: Path, *action: str) -> list[str]:
    """The one Chromium command line: headless, off the network (every request goes to a
    proxy on a closed port, and background requests are off), the page's console on stderr."""
    return [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--proxy-server=http://127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *action,
    ]


def screenshot(html_file: Path, png: Path, profile: Path) -> str:
    """Render ``html_file`` in headless Chromium to ``png``; return Chromium's stderr.

    The flags keep Chromium off the network and log the page's console to stderr, which the
    browser test reads.
    """
    out = subprocess.run(
        _chromium(profile, f"--screenshot={png}", "--window-size=1200,1600", html_file.as_uri()),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return out.stderr


def dump_dom(html_file: Path, profile: Path) -> tuple[str, str]:
    """Load ``html_file`` in headless Chromium, off the network; return (the DOM as
    serialised after load, Chromium's stderr)."""
    out = subprocess.run(
        _chromium(profile, "--dump-dom", html_file.as_uri()),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return out.stdout, out.stderr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "report-first-page.png")
    ap.add_argument("--contract", type=Path, default=ROOT / "contracts" / "strong-cn-task-e2e.yaml")
    ap.add_argument("--lang", choices=("en", "zh"), default="en")
    ap.add_argument("--tasks", type=int, default=2500)
    args = ap.parse_args(argv)

    contract = load_contract(args.contract)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trace = work / "traffic.parquet"
        start = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
        write(
            generate(TrafficProfile(tasks=args.tasks, days=31, seed=7, start=start)),
            trace,
            "parquet",
        )
        inputs = prepare_report(
            contract, ingest([trace]), period="2026-Q3", contract_file=args.contract
        )
        page = work / "report.html"
        page.write_bytes(render_report(inputs, lang=args.lang, fmt=DocFormat.HTML))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        stderr = screenshot(page, args.out.resolve(), work / "p")
    if not args.out.is_file():
        print(stderr[-2000:], file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
