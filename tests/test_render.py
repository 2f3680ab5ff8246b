"""Documents: golden HTML and Markdown, PDF text and fonts, no fetching, Chromium, formatting."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import http.server
import os
import re
import shutil
import struct
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from scripts.screenshot import CHROMIUM, dump_dom, screenshot  # one Chromium command line for both
from slacheck.checks.availability import AvailabilitySays
from slacheck.contract.load import load_contract
from slacheck.contract.model import Contract
from slacheck.errors import UsageError
from slacheck.evaluation import evaluate
from slacheck.prepare import prepare_accept, prepare_report
from slacheck.render import charts, documents
from slacheck.render.documents import (
    FORMATS,
    DocFormat,
    contract_sha256,
    format_for,
    render_accept,
    render_draft,
    render_memo,
    render_report,
)
from slacheck.render.format import Formatter, md_cell
from slacheck.render.inputs import AcceptInputs, ReportInputs, Traffic
from slacheck.render.pdf import ASSETS, AssetsOnlyFetcher, RefusedURL, html_to_pdf
from slacheck.trace.generate import TrafficProfile, generate, write
from slacheck.trace.ingest import ingest
from slacheck.trace.traces import Traces
from slacheck.verdict import TermResult, Verdict
from tests.langcheck import english_runs

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
CONTRACT = ROOT / "contracts" / "strong-cn-task-e2e.yaml"
PERIOD = "2026-Q3"
REGEN = os.environ.get("SLACHECK_REGEN_GOLDEN") == "1"
DOCS = ("draft", "memo", "accept", "report")
LANGS = ("en", "zh")

Render = Callable[[str, str, DocFormat], bytes]


# ---------------------------------------------------------------------------------------------
# fixtures: one trace, one evaluation, each document rendered once per language and format


@pytest.fixture(scope="session")
def contract() -> Contract:
    return load_contract(CONTRACT)


def _trace(path: Path, **profile: object) -> Traces:
    spec = {"tasks": 120, "days": 20, "seed": 7, "start": dt.datetime(2026, 7, 20, tzinfo=dt.UTC)}
    spec.update(profile)
    write(generate(TrafficProfile(**spec)), path, "parquet")  # type: ignore[arg-type]
    return ingest([path])


@pytest.fixture(scope="session")
def trace_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("render") / "traffic.parquet"


@pytest.fixture(scope="session")
def traces(trace_file: Path) -> Traces:
    # 120 tasks from 20 July to 8 August 2026, four malformed rows for the data-quality table
    return _trace(trace_file, malformed=4)


@pytest.fixture(scope="session")
def report_inputs(contract: Contract, traces: Traces) -> ReportInputs:
    return prepare_report(
        contract, traces, period=PERIOD, contract_file=CONTRACT, issued=dt.date(2026, 8, 20)
    )


@pytest.fixture(scope="session")
def accept_inputs(contract: Contract, traces: Traces) -> AcceptInputs:
    return prepare_accept(contract, traces, contract_file=CONTRACT, period=PERIOD)


@pytest.fixture(scope="session")
def render(contract: Contract, report_inputs: ReportInputs, accept_inputs: AcceptInputs) -> Render:
    cache: dict[tuple[str, str, DocFormat], bytes] = {}

    def get(doc: str, lang: str, fmt: DocFormat) -> bytes:
        key = (doc, lang, fmt)
        if key not in cache:
            if doc == "draft":
                cache[key] = render_draft(contract, lang=lang, fmt=fmt)
            elif doc == "memo":
                cache[key] = render_memo(contract, lang=lang, fmt=fmt, contract_file=CONTRACT)
            elif doc == "accept":
                cache[key] = render_accept(accept_inputs, lang=lang, fmt=fmt)
            else:
                cache[key] = render_report(report_inputs, lang=lang, fmt=fmt)
        return cache[key]

    return get


# ---------------------------------------------------------------------------------------------
# golden files


_SVG = re.compile(r'<svg role="img" aria-label="([^"]*)".*?</svg>', re.S)


def _for_golden(text: str, trace_file: Path | None) -> str:
    """Charts are compared by their label only (their bytes are checked for determinism
    below) and the bundled stylesheet by name, so golden files stay small and diffs readable.

    The trace file's SHA-256 is the one value that depends on the pyarrow installed, not on
    slacheck: the Parquet's bytes carry the writer's version (`make test-deps` at the lowest
    pyarrow wrote other bytes, with every row the same). It is replaced by a placeholder when
    it is the file's own hash, as computed here; any other hash stays and fails the golden.
    ``trace_file`` is None for a document that reads no traces (the clause draft, the memo)."""
    css = (ASSETS / "report.css").read_text(encoding="utf-8")
    text = text.replace(css, "/* slacheck/templates/assets/report.css */\n")
    if trace_file is None:
        return _SVG.sub(r'<svg aria-label="\1"><!-- chart --></svg>', text)
    digest = hashlib.sha256(trace_file.read_bytes()).hexdigest()
    split = "<wbr>".join(digest[i : i + 8] for i in range(0, len(digest), 8))
    assert digest in text or split in text, "the trace file's SHA-256 is not in the document"
    text = text.replace(digest, "{sha256 of traffic.parquet}")
    text = text.replace(split, "{sha256 of traffic.parquet}")
    return _SVG.sub(r'<svg aria-label="\1"><!-- chart --></svg>', text)


@pytest.mark.parametrize("fmt", [DocFormat.HTML, DocFormat.MD], ids=str)
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("doc", DOCS)
def test_golden(render: Render, doc: str, lang: str, fmt: DocFormat, trace_file: Path) -> None:
    text = _for_golden(
        render(doc, lang, fmt).decode("utf-8"), None if doc in ("draft", "memo") else trace_file
    )
    path = GOLDEN / f"{doc}.{lang}.{fmt.value}"
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} is missing: run `make golden`"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{path.name} differs from the golden file; review, then `make golden`"


@pytest.mark.parametrize("fmt", [DocFormat.HTML, DocFormat.MD], ids=str)
def test_chinese_report_golden_has_no_english_sentence(fmt: DocFormat) -> None:
    """Issue 11: check criteria and notes reach the Chinese report in Chinese; the only
    English left is the contract's own data (the parties' names, a term's description)."""
    contract = load_contract(CONTRACT)
    data = (
        contract.contract.vendor,
        contract.contract.customer,
        *(t.description for t in contract.latency if t.description),
    )
    text = (GOLDEN / f"report.zh.{fmt.value}").read_text(encoding="utf-8")
    assert english_runs(text, allowed=data) == []


def test_report_has_every_section(render: Render) -> None:
    html = render("report", "en", DocFormat.HTML).decode()
    for section in (
        "summary",
        "latency",
        "budget",
        "peak",
        "regions",
        "rate-limit",
        "availability",
        "mismatches",
        "quality",
        "evidence",
    ):
        assert f'<section id="{section}">' in html
    # one chart per latency term, the breakdown, the monthly chart, peak vs off-peak
    assert len(_SVG.findall(html)) == 3 + 3
    zh = render("report", "zh", DocFormat.HTML).decode()
    assert "计量点" in zh and "未达标" in zh and "无数据" in zh
    # the data-quality table names the file, not the temporary folder it was read from
    md = render("report", "en", DocFormat.MD).decode()
    assert "traffic.parquet: row" in md
    assert "/tmp" not in md and "pytest-of" not in md


def test_numbers_come_from_the_contract(contract: Contract) -> None:
    """Change the contract's numbers and every document follows: nothing is typed in a template."""
    data = contract.model_dump()
    data["latency"][0]["objective"]["threshold"] = 12345
    data["availability"]["target_percent"] = 99.95
    data["rate_limit"]["limit"] = 77
    data["regions"]["primary"][0]["name"] = "cn-hangzhou"
    changed = Contract.model_validate(data)
    for lang, fmt in (("en", DocFormat.MD), ("zh", DocFormat.HTML)):
        before = render_draft(contract, lang=lang, fmt=fmt).decode()
        after = render_draft(changed, lang=lang, fmt=fmt).decode()
        for old, new in (("30,000", "12,345"), ("99.9", "99.95"), (" 60 ", " 77 ")):
            assert old in before and new in after
        assert "cn-shanghai" in before and "cn-shanghai" not in after and "cn-hangzhou" in after


def test_weak_contract_leaves_out_what_it_does_not_state() -> None:
    """What the weak contract leaves open is no clause of its draft (no commentary, no assumed
    task size) but a finding of its review memo (tests/test_memo.py checks every contract)."""
    weak = load_contract(ROOT / "contracts" / "weak-vendor-draft.yaml")
    md = render_draft(weak, lang="en", fmt=DocFormat.MD).decode()
    assert "Peak degradation" not in md and "No time zone is stated" not in md
    assert "SLA5" not in md and "assumed" not in md
    memo = render_memo(weak, lang="en", fmt=DocFormat.MD).decode()
    assert "The contract says nothing about peak load." in memo and "SLA402" in memo
    zh = render_draft(weak, lang="zh", fmt=DocFormat.HTML).decode()
    # the clauses say nothing of peak (the glossary, which names every term, is not a clause)
    clauses = zh.split("<body>", 1)[1].split('<section id="glossary">', 1)[0]
    assert "合同既未定义峰值时段" not in zh and "峰值" not in clauses
    accept = render_accept(AcceptInputs(weak), lang="zh", fmt=DocFormat.MD).decode()
    assert "十四、签字确认" in accept and "八项字段检查" not in accept


# ---------------------------------------------------------------------------------------------
# reproducibility


_HASH = re.compile(r"\b[0-9a-f]{64}\b")


@pytest.mark.parametrize("lang", LANGS)
def test_every_hash_the_report_prints_is_reproducible(
    report_inputs: ReportInputs, traces: Traces, render: Render, lang: str
) -> None:
    """Each SHA-256 beside a file name is ``hashlib`` of that file's bytes as given (what
    ``sha256sum`` prints); the contract's canonical-form hash appears only where it is labelled
    as such."""
    files = {
        hashlib.sha256(CONTRACT.read_bytes()).hexdigest(): CONTRACT.name,
        report_inputs.evidence.sha256: "evidence CSV",
        **{hashlib.sha256(Path(s.path).read_bytes()).hexdigest(): s.path for s in traces.sources},
    }
    canonical = contract_sha256(report_inputs.contract)
    assert canonical not in files  # the two hashes differ: the test can tell them apart
    text = render("report", lang, "md").decode("utf-8")
    seen: set[str] = set()
    for line in text.splitlines():
        for h in _HASH.findall(line):
            seen.add(h)
            if h == canonical:
                assert "canonical" in line or "规范化" in line, line
            else:
                assert h in files, f"{h} reproduces from no input file: {line}"
    assert set(files) <= seen, "an input's hash is missing from the report"


def test_the_command_the_report_prints_recomputes_it(tmp_path: Path) -> None:
    """Run in the folder that holds the inputs, the command the report's evidence section prints
    writes the same report again, byte for byte."""
    import shlex
    import shutil
    import subprocess
    import sys

    shutil.copy(CONTRACT, tmp_path / CONTRACT.name)
    _trace(tmp_path / "traffic.parquet", tasks=30, days=4)

    def run(words: list[str]) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "slacheck", *words], cwd=tmp_path, capture_output=True
        )
        assert done.returncode in (0, 1), done.stderr.decode()

    first = [
        "report",
        CONTRACT.name,
        "traffic.parquet",
        "--period",
        PERIOD,
        "--issued",
        "2026-08-20",
        "-o",
        "first.md",
    ]
    run(first)
    text = (tmp_path / "first.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"`(slacheck report [^`]*)`", text)
    words = shlex.split(command)
    assert words[:2] == ["slacheck", "report"] and words[-2:] == ["-o", "report.md"]
    run(words[1:])
    assert (tmp_path / "report.md").read_bytes() == (tmp_path / "first.md").read_bytes()


def test_a_converted_folder_s_files_are_named_apart_and_the_command_recomputes_it(
    tmp_path: Path,
) -> None:
    """A folder ``traces convert`` wrote holds one ``data_0.parquet`` per day: the evidence
    names each by its path within the folder, every name once, and the command the report
    prints, run in that folder (the contract beside the files), writes the same report."""
    import shlex
    import shutil
    import subprocess
    import sys

    _trace(tmp_path / "traffic.parquet", tasks=30, days=4)
    folder = tmp_path / "by-day"

    def run(words: list[str], cwd: Path) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "slacheck", *words], cwd=cwd, capture_output=True
        )
        assert done.returncode in (0, 1), done.stderr.decode()

    run(["traces", "convert", "traffic.parquet", "-o", str(folder)], tmp_path)
    days = sorted(p.relative_to(folder).as_posix() for p in folder.glob("day=*/*.parquet"))
    assert len(days) >= 4 and len({Path(d).name for d in days}) < len(days)
    shutil.copy(CONTRACT, folder / CONTRACT.name)
    contract = str(folder / CONTRACT.name)
    first = ["report", contract, str(folder), "--period", PERIOD, "--issued", "2026-08-20"]
    run([*first, "-o", str(tmp_path / "first.md")], tmp_path)
    text = (tmp_path / "first.md").read_text(encoding="utf-8")
    named = re.findall(r"^\| (day=[^ |]+) \| canonical \|", text, flags=re.M)
    assert sorted(named) == days
    (command,) = re.findall(r"`(slacheck report [^`]*)`", text)
    words = shlex.split(command)
    assert words[3 : 3 + len(days)] == days
    run(words[1:], folder)
    assert (folder / "report.md").read_bytes() == (tmp_path / "first.md").read_bytes()


@pytest.mark.parametrize(
    ("paths", "names"),
    [
        (["/d/t.parquet"], ["t.parquet"]),
        (["/d/a.jsonl", "/d/b.jsonl"], ["a.jsonl", "b.jsonl"]),
        (
            ["/c/x/day=1/data_0.parquet", "/c/x/day=2/data_0.parquet"],
            ["day=1/data_0.parquet", "day=2/data_0.parquet"],
        ),
        (["/c/x/t.json", "/c/y/z/t.json"], ["x/t.json", "y/z/t.json"]),
        (["s3a://b/spans/p1.parquet", "/d/t.parquet"], ["p1.parquet", "t.parquet"]),
    ],
)
def test_trace_files_are_named_from_the_folder_that_holds_them(
    paths: list[str], names: list[str]
) -> None:
    assert [documents.trace_names(paths)[p] for p in paths] == names


def test_same_inputs_same_bytes(
    contract: Contract, report_inputs: ReportInputs, render: Render
) -> None:
    for lang in LANGS:
        for fmt in (DocFormat.HTML, DocFormat.MD):
            again = render_report(report_inputs, lang=lang, fmt=fmt)
            assert again == render("report", lang, fmt)
        assert render_draft(contract, lang=lang, fmt=DocFormat.HTML) == render(
            "draft", lang, DocFormat.HTML
        )


def test_chart_is_deterministic_and_inline() -> None:
    fmt = Formatter("zh", ZoneInfo("Asia/Shanghai"))
    rng = np.random.default_rng(1)
    d = charts.Distribution(
        "L1",
        np.sort(rng.lognormal(7, 0.5, 500)),
        2000.0,
        True,
        "ms",
        95.0,
        "full_response",
        None,
        (("2026-07", 1800.0),),
    )
    a, b = charts.latency_distribution(d, fmt), charts.latency_distribution(d, fmt)
    assert a == b
    assert a.startswith("<svg ") and "<?xml" not in a and "DOCTYPE" not in a
    assert "阈值" in a  # text stays text (svg.fonttype none), so Chinese labels are searchable
    assert "<dc:date>" not in a


# ---------------------------------------------------------------------------------------------
# formats and formatting


def test_format_for() -> None:
    assert format_for(Path("r.PDF"), None) is DocFormat.PDF
    assert format_for(Path("r.html"), None) is DocFormat.HTML
    assert format_for(Path("r.md"), None) is DocFormat.MD
    assert format_for(Path("r.txt"), "md") is DocFormat.MD
    with pytest.raises(UsageError, match="extension"):
        format_for(Path("report"), None)
    with pytest.raises(UsageError, match="unknown format"):
        format_for(Path("r.html"), "odt")
    assert format_for(Path("d.DOCX"), None, "draft") is DocFormat.DOCX
    assert format_for(Path("a.docx"), None, "accept") is DocFormat.DOCX
    with pytest.raises(UsageError, match=r"report is not written as docx.*pdf, html, md"):
        format_for(Path("r.docx"), None, "report")
    assert set(FORMATS) == set(DocFormat)
    assert FORMATS[DocFormat.PDF].family == "html" and FORMATS[DocFormat.MD].charts is False


def test_formatter() -> None:
    en = Formatter("en", ZoneInfo("Asia/Shanghai"))
    zh = Formatter("zh", ZoneInfo("Asia/Shanghai"))
    assert en.ms(1250) == "1,250 ms" and zh.ms(1250) == "1,250 毫秒"
    assert en.duration(850) == "850 ms" and en.duration(1250) == "1.25 s"
    assert en.duration(32744.6) == "32.7 s" and zh.duration(1250) == "1.25 秒"
    assert en.ms_long(30000) == "30,000 ms (30 s)"
    assert en.pct(99.9) == "99.9 %" and zh.pct(99.9) == "99.9%"
    assert en.ratio(0.79955) == "80.0 %" and en.count(1347) == "1,347"
    assert en.date(dt.date(2026, 7, 1)) == "1 July 2026"
    assert zh.date(dt.date(2026, 7, 1)) == "2026年7月1日"
    # UTC midnight on 1 July is 08:00 in Shanghai
    midnight = int(dt.datetime(2026, 7, 1, tzinfo=dt.UTC).timestamp()) * 1_000_000
    assert en.datetime(midnight) == "2026-07-01 08:00 (UTC+08:00)"
    assert en.datetime("2026-07-01T00:00:00Z") == "2026-07-01 08:00 (UTC+08:00)"
    assert [
        zh.verdict(v) for v in ("met", "breached", "indeterminate", "not_measurable", "no_data")
    ] == ["达标", "未达标", "无法判定", "无法计量", "无数据"]
    assert en.window("2026-07") == "July 2026" and zh.window("2026-Q3") == "2026年第三季度"
    assert zh.point("time_to_first_token").startswith("首 Token")
    assert "first content chunk" in en.point_definition("time_to_first_token")


def test_markdown_cell_is_inert() -> None:
    cell = md_cell('a|b [x](javascript:y) <img src="h"> `c`\nd')
    assert "|" not in cell.replace("\\|", "")
    assert "<img" not in cell and "&lt;img" in cell
    assert "\\[x\\]" in cell and "\\`c\\`" in cell and "\n" not in cell


# ---------------------------------------------------------------------------------------------
# PDF: text, fonts


def _pdftotext(pdf: bytes, tmp: Path) -> str:
    path = tmp / "doc.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, check=True, text=True
    )
    return out.stdout


def _pdffonts(pdf: bytes, tmp: Path) -> list[str]:
    path = tmp / "fonts.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdffonts", str(path)], capture_output=True, check=True, text=True)
    return out.stdout.splitlines()[2:]


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_report(render: Render, lang: str, tmp_path: Path) -> None:
    # the PDF format lays out the HTML format's output (the registry entry does no more than
    # this; the safety test below goes through it), so reuse the rendered HTML
    assert FORMATS[DocFormat.PDF].family == "html"
    pdf = html_to_pdf(render("report", lang, DocFormat.HTML).decode())
    assert pdf.startswith(b"%PDF-")
    text = _pdftotext(pdf, tmp_path)
    if lang == "en":
        assert re.search(r"Term\s+Kind\s+Jul 2026\s+Aug 2026\s+Sep 2026", text)
        assert "L1-task-p95" in text and "breached" in text and "Page 1 of" in text
    else:
        assert re.search(r"条款\s+类别\s+2026年7月\s+2026年8月\s+2026年9月", text)
        assert "计量点" in text and ("未达标" in text or "达标" in text)
        assert "第 1 页" in text
    fonts = _pdffonts(pdf, tmp_path)
    cjk = [f for f in fonts if "CJK" in f]
    assert cjk, fonts
    assert all(f.split()[-5] == "yes" for f in cjk), cjk  # the "emb" column


# ---------------------------------------------------------------------------------------------
# safety: untrusted text renders as text, and nothing is fetched


class _Listener:
    """An HTTP server on 127.0.0.1 (a free port) that records every request it receives."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.requests.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def listener() -> Iterator[_Listener]:
    with _Listener() as server:
        yield server


def test_untrusted_trace_text_is_escaped_and_fetches_nothing(
    contract: Contract, listener: _Listener, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{listener.port}"
    model = f'<img src="{url}/x">'
    region = f'<link rel="stylesheet" href="{url}/style.css">'
    traces = _trace(tmp_path / "evil.parquet", tasks=6, days=1, model=model, home_region=region)
    # the names surface in the report's traffic tables whatever the verdicts; two checks keep
    # this test quick
    evaluation = evaluate(contract, traces, period=PERIOD, only=["regions", "rate_limit"])
    inputs = prepare_report(contract, traces, period=PERIOD, evaluation=evaluation)
    html = render_report(inputs, lang="en", fmt=DocFormat.HTML).decode()
    assert "<img src=" not in html and "<link rel=" not in html
    assert f"&lt;img src=&#34;{url}/x&#34;&gt;" in html
    assert "&lt;link rel=" in html
    md = render_report(inputs, lang="zh", fmt=DocFormat.MD).decode()
    assert "<img" not in md and "&lt;img src=" in md
    pdf = render_report(inputs, lang="en", fmt=DocFormat.PDF)
    assert "<img src=" in _pdftotext(pdf, tmp_path)  # shown as text in the PDF
    # and directly: a document that does ask for the listener gets nothing from it
    fetcher = AssetsOnlyFetcher()
    html_to_pdf(
        f'<p>x</p><img src="{url}/direct"><link rel="stylesheet" href="{url}/s.css">',
        fetcher=fetcher,
    )
    assert sorted(fetcher.refused) == [f"{url}/direct", f"{url}/s.css"]
    assert listener.requests == []


def test_fetcher_refuses_everything_but_assets(tmp_path: Path) -> None:
    secret = tmp_path / "secret.css"
    secret.write_text("body { color: red }")
    fetcher = AssetsOnlyFetcher()
    css = fetcher.fetch((ASSETS / "report.css").as_uri())
    assert b"slacheck documents" in css.read()
    for url in (
        secret.as_uri(),
        "file:///etc/passwd",
        (ASSETS / ".." / "report.en.html.j2").as_uri(),  # climbs out of the assets folder
        "https://example.com/x.png",
        "data:text/css,body{}",
        "ftp://127.0.0.1/x",
    ):
        with pytest.raises(RefusedURL):
            fetcher.fetch(url)
    # inside a document: the image and the stylesheet outside assets are left out, not read
    pdf_fetcher = AssetsOnlyFetcher()
    pdf = html_to_pdf(
        f'<link rel="stylesheet" href="{secret.as_uri()}"><img src="file:///etc/hostname">'
        '<link rel="stylesheet" href="report.css"><p>ok</p>',
        fetcher=pdf_fetcher,
    )
    assert pdf.startswith(b"%PDF-")
    assert sorted(pdf_fetcher.refused) == sorted([secret.as_uri(), "file:///etc/hostname"])


# ---------------------------------------------------------------------------------------------
# headless Chromium


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_chromium_renders_report_without_console_errors(render: Render, tmp_path: Path) -> None:
    # make test installs Debian's chromium (scripts/sysdeps.sh); missing, this fails, not skips
    assert shutil.which(CHROMIUM), f"{CHROMIUM} not found: run `make sysdeps`"
    page = tmp_path / "report.en.html"
    page.write_bytes(render("report", "en", DocFormat.HTML))
    png = tmp_path / "report-first-page.png"
    stderr = screenshot(page, png, tmp_path / "profile")
    assert png.is_file(), stderr[-2000:]
    data = png.read_bytes()
    assert _png_size(data) == (1200, 1600)
    assert len(data) > 50_000  # a rendered page, not a blank one
    # Chromium also logs sandbox and D-Bus noise on stderr; only the page's console counts
    page_lines = [
        line
        for line in stderr.splitlines()
        if ":CONSOLE" in line or "Uncaught" in line or page.as_uri() in line
    ]
    assert page_lines == [], page_lines


_REF = re.compile(
    r"""\b(?:src|href|xlink:href|srcset|action|poster|data)\s*=\s*["']?([^"'\s>]*)""", re.I
)
_URL = re.compile(r"""url\(\s*["']?([^"')\s]*)""", re.I)


def external_references(html: str) -> list[str]:
    """Every reference in ``html`` that points outside the document: an attribute URL or CSS
    ``url(…)`` that is not a fragment (``#…``) or a data URI, and any ``@import``."""
    refs = _REF.findall(html) + _URL.findall(html)
    out = [r for r in refs if not (r.startswith("#") or r.lower().startswith("data:"))]
    out += ["@import" for _ in re.finditer(r"@import", html, re.I)]
    return out


def test_external_references_finds_what_it_must() -> None:
    assert external_references('<a href="#x">x</a><p style="background: url(data:,x)">') == []
    bad = (
        '<img src="https://x/a.png"><a href=http://y>y</a>'
        '<style>@import "z.css"; p { background: url(/etc/x) }</style>'
    )
    assert external_references(bad) == ["https://x/a.png", "http://y", "/etc/x", "@import"]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("doc", DOCS)
def test_html_is_one_offline_file(render: Render, doc: str, lang: str, tmp_path: Path) -> None:
    """Each document's HTML stands alone: styles and charts inline, nothing fetched; headless
    Chromium, kept off the network, loads it and shows the document's title."""
    html = render(doc, lang, DocFormat.HTML).decode("utf-8")
    assert external_references(html) == []
    title = re.search(r"<h1>(.*?)</h1>", html, re.S)
    assert title is not None
    assert shutil.which(CHROMIUM), f"{CHROMIUM} not found: run `make sysdeps`"
    page = tmp_path / f"{doc}.{lang}.html"
    page.write_text(html, encoding="utf-8")
    dom, stderr = dump_dom(page, tmp_path / "profile")
    body = dom.partition("<body")[2]
    assert body, stderr[-2000:]
    text = re.sub(r"<[^>]+>", "", body)
    assert title.group(1).strip() in text
    if doc == "report":
        assert "<svg" in body  # the charts are in the page, not fetched
    page_lines = [
        line
        for line in stderr.splitlines()
        if ":CONSOLE" in line or "Uncaught" in line or page.as_uri() in line
    ]
    assert page_lines == [], page_lines


def test_draft_markdown_leaves_a_blank_line_after_the_credit_table(render: Render) -> None:
    for lang in LANGS:
        text = render("draft", lang, DocFormat.MD).decode("utf-8")
        before = text.split("**6.4**", 1)[0]
        assert before.endswith("|\n\n"), before[-80:]


def test_traffic_lists_what_the_traces_hold(report_inputs: ReportInputs) -> None:
    t = report_inputs.traffic
    assert isinstance(t, Traffic)
    roles = {name: role for name, _, role in t.regions}
    assert roles["cn-shanghai"] == "primary" and roles.get("ap-southeast-1") == "unlisted"
    assert [n for _, n, _ in t.models] == sorted((n for _, n, _ in t.models), reverse=True)
    assert dataclasses.is_dataclass(t)


def _result(
    term_id: str,
    kind: str,
    window: str,
    verdict: str,
    observed: float | None,
    unit: str,
    **details: object,
) -> TermResult:
    return TermResult(
        term_id,
        kind,
        window,
        Verdict(verdict),
        observed,
        unit,
        AvailabilitySays.CRITERION(target=99.9, failures=[AvailabilitySays.TIMEOUTS()]),
        9,
        10,
        ("t1",),
        (AvailabilitySays.BELOW_MIN(n=9, min=10),),
        {},
        False,
        "",
        dict(details),
    )


@pytest.mark.parametrize(
    "name", ["provisioned-throughput-tps", "hyperscaler-availability-credits", "weak-vendor-draft"]
)
def test_every_bundled_contract_renders(report_inputs: ReportInputs, name: str) -> None:
    """Hand-made results over the other contracts: time slices, tokens/s, per-token limits,
    missing clauses, a check kind the templates do not know, and credits owed."""
    other = load_contract(ROOT / "contracts" / f"{name}.yaml")
    results = [
        *(_result(t.id, "latency", "2026-10", "breached", 41.5, "tokens/s") for t in other.latency),
        _result(
            "availability",
            "availability",
            "2026-10",
            "breached",
            99.5,
            "%",
            credit_percent=10.0,
            claim_deadline="2026-11-30",
        ),
        _result("queue_depth", "queue_depth", "2026-10", "indeterminate", None, "calls"),
    ]
    ev = dataclasses.replace(
        report_inputs.evaluation, contract=other, results=tuple(results), period="2026-Q4"
    )
    inputs = dataclasses.replace(
        report_inputs, contract=other, evaluation=ev, period="2026-Q4", distributions=()
    )
    for lang in LANGS:
        md = render_report(inputs, lang=lang, fmt=DocFormat.MD).decode()
        html = render_report(inputs, lang=lang, fmt=DocFormat.HTML).decode()
        assert "queue_depth" in md and "queue_depth" in html  # unknown kinds are still shown
        assert ("30 November 2026" in md) or ("2026年11月30日" in md)  # credit deadline
        for doc in (
            render_draft(other, lang=lang, fmt=DocFormat.MD),
            render_accept(prepare_accept(other, None), lang=lang, fmt=DocFormat.HTML),
        ):
            assert other.contract.id in doc.decode()
    if name == "provisioned-throughput-tps":
        draft = render_draft(other, lang="en", fmt=DocFormat.MD).decode()
        assert "5-minute slices with at least 5 calls" in draft
        assert "after the first token" in draft
        accept = render_accept(prepare_accept(other, None), lang="zh", fmt=DocFormat.MD).decode()
        assert "时间片" in accept and "首 Token 之后" in accept


def test_chart_text_from_the_contract_is_escaped_not_parsed() -> None:
    fmt = Formatter("en", ZoneInfo("UTC"))
    evil = "<script>alert(1)</script>$\\frac$"
    d = charts.Distribution(
        evil,
        np.array([100.0, 200.0, 3000.0]),
        1000.0,
        True,
        "ms",
        95.0,
        "full_response",
        None,
        (("2026-07", 2000.0),),
    )
    for svg in (
        charts.latency_distribution(d, fmt),
        charts.monthly_compliance(
            [charts.MonthlyPoint(evil, "2026-07", "met", 5.0, 10.0)], ["2026-07"], fmt
        ),
    ):
        assert "<script>" not in svg and "&lt;script&gt;" in svg
        ids = re.findall(r' id="([^"]+)"', svg)
        assert len(ids) == len(set(ids)) and "figure_1" not in ids
