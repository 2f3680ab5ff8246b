"""Installs as a user has them: the light install (no engine, no PDF, no charts) does contract
work and names the extra for the rest; PDFs are glyphs or a refusal; `slacheck doctor`; charts
leave matplotlib's backend alone; commands leave no scratch folder behind; the packaging
metadata says what the files are."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slacheck.cli import app

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "slacheck" / "contract" / "starters" / "demo.yaml"
WEAK = ROOT / "contracts" / "weak-vendor-draft.yaml"
ZH = ROOT / "contracts" / "strong-cn-task-e2e.yaml"
#: what a light install does not have: the engines, PDF, charts
HEAVY = ("ibis", "duckdb", "pyarrow", "pandas", "numpy", "matplotlib", "weasyprint", "sqlglot")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACHECK")}
    env["PYTHONPATH"] = str(ROOT)
    return env | extra


#: Runs slacheck's commands in one process where the heavy modules cannot be imported (as in
#: a light install), and prints each command's exit code and output as JSON.
_LIGHT = textwrap.dedent(
    """
    import importlib.abc, json, sys
    HEAVY = set(sys.argv[1].split(","))

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in HEAVY:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Refuse())
    from typer.testing import CliRunner
    from slacheck.cli import app
    runs = []
    for args in json.loads(sys.argv[2]):
        r = CliRunner().invoke(app, args)
        runs.append({"args": args, "code": r.exit_code, "output": r.output})
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    print(json.dumps({"runs": runs, "loaded": loaded}))
    """
)


def test_the_light_install_does_contract_work_and_names_the_extra(tmp_path: Path) -> None:
    bad = tmp_path / "typo.yaml"
    bad.write_text(DEMO.read_text(encoding="utf-8").replace("vendor:", "vendr:", 1), "utf-8")
    traffic = tmp_path / "traffic.parquet"
    traffic.write_bytes(b"PAR1")  # never read: the command stops at the missing engine
    commands = [
        (["validate", str(DEMO)], 0, "valid"),
        (["validate", str(bad)], 2, "vendr"),
        (["lint", str(WEAK)], 1, "Clause review"),
        (["schema"], 0, '"$schema"'),
        (["init", "-o", str(tmp_path / "c.yaml")], 0, "slacheck validate"),
        (["export", "openslo", str(DEMO)], 0, "openslo/v1"),
        (["draft", str(ZH), "-o", str(tmp_path / "d.md"), "--lang", "zh"], 0, "d.md"),
        (["draft", str(WEAK), "-o", str(tmp_path / "d.html")], 0, "d.html"),
        (["draft", str(WEAK), "-o", str(tmp_path / "d.docx")], 0, "d.docx"),
        (["check", str(DEMO), str(traffic)], 2, "pip install 'slacheck[engine]'"),
        (["draft", str(WEAK), "-o", str(tmp_path / "d.pdf")], 2, "pip install 'slacheck[pdf]'"),
    ]
    done = subprocess.run(
        [sys.executable, "-c", _LIGHT, ",".join(HEAVY), json.dumps([c for c, _, _ in commands])],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for (args, code, said), run in zip(commands, result["runs"], strict=True):
        assert (run["code"], said in run["output"]) == (code, True), (args, run["output"])
        assert "Traceback" not in run["output"]
    assert result["loaded"] == []
    assert (tmp_path / "d.md").read_text(encoding="utf-8").startswith("#")
    assert not (tmp_path / "d.pdf").exists()


def test_the_extras_bring_what_the_light_install_lacks() -> None:
    from slacheck.doctor import CORE
    from slacheck.extras import EXTRAS, distribution_of

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(reqs: list[str]) -> set[str]:
        return {re.split(r"[\[<>=!~;\s]", r, maxsplit=1)[0].lower() for r in reqs}

    assert names(project["dependencies"]) == set(CORE)
    extras = project["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert {distribution_of(m) for m in modules} <= names(extras[extra]), extra
    assert set(extras["all"][0].split("[")[1].rstrip("]").split(",")) == set(EXTRAS)
    assert not names(project["dependencies"]) & {distribution_of(m) for m in HEAVY}


def test_licence_metadata_and_file() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = tomllib.loads(text)
    assert project["project"]["license"] == "Apache-2.0"  # an SPDX expression, not a table
    assert project["project"]["license-files"] == ["LICENSE"]
    assert "setuptools>=77" in project["build-system"]["requires"]
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence and len(licence) > 11000


# --------------------------------------------------------------------------------------------
# Glyphs or a refusal


def _latin_only_fonts(tmp_path: Path) -> Path:
    """A fontconfig configuration that sees only the DejaVu fonts: a machine without CJK."""
    dejavu = sorted(Path("/usr/share/fonts").rglob("DejaVuSans.ttf"))
    assert dejavu, "DejaVu Sans not found under /usr/share/fonts (scripts/sysdeps.sh installs it)"
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
        f"<fontconfig><dir>{dejavu[0].parent}</dir>"
        f"<cachedir>{tmp_path / 'fc-cache'}</cachedir></fontconfig>\n",
        encoding="utf-8",
    )
    return conf


_RUN = textwrap.dedent(
    """
    import json, sys
    from typer.testing import CliRunner
    from slacheck.cli import app
    runs = []
    for args in json.loads(sys.argv[1]):
        r = CliRunner().invoke(app, args)
        runs.append({"code": r.exit_code, "output": r.output})
    print(json.dumps(runs))
    """
)


def _run_with_fonts(conf: Path, commands: list[list[str]]) -> subprocess.CompletedProcess[str]:
    """The commands run one after another in a child that sees only ``conf``'s fonts."""
    return subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps(commands)],
        env=_env(FONTCONFIG_FILE=str(conf)),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_without_a_cjk_font_chinese_pdf_is_refused_and_doctor_says_so(tmp_path: Path) -> None:
    conf = _latin_only_fonts(tmp_path)
    zh_pdf = tmp_path / "draft.zh.pdf"
    commands = [
        ["draft", str(ZH), "-o", str(zh_pdf), "--lang", "zh"],
        ["doctor", "--format", "json"],
    ]
    done = _run_with_fonts(conf, commands)
    assert done.returncode == 0, done.stderr
    zh, doctor = json.loads(done.stdout)
    assert zh["code"] == 2, zh["output"]
    assert "apt-get install fonts-noto-cjk" in zh["output"] and "空框" in zh["output"]
    assert not zh_pdf.exists()  # never a PDF of empty boxes
    report = json.loads(doctor["output"])
    assert doctor["code"] == 1 and report["ok"] is False
    rows = {r["key"]: r for r in report["checks"]}
    assert rows["font:zh"]["status"] == "missing"
    assert rows["font:zh"]["fix"]["code"] == "pdf.fix.cjk"
    assert rows["font:en"]["status"] == "ok" and "DejaVu" in rows["font:en"]["version"]
    # English documents need Latin glyphs only (the doctor lays out the starter's draft in
    # each language): DejaVu draws them; the rest of the machine is as it is
    assert rows["pdf_engine"]["version"] and rows["pango"]["version"].count(".") == 2
    import importlib.metadata

    for dist in ("typer", "duckdb", "weasyprint", "ibis-framework"):
        row = rows[f"package:{dist}"]
        assert (row["status"], row["version"]) == ("ok", importlib.metadata.version(dist))
    assert [k for k, r in rows.items() if r["status"] != "ok"] == ["font:zh"]


def test_a_machine_with_no_font_at_all_is_refused_not_crashed(tmp_path: Path) -> None:
    """A slim container has no font: Pango crashed the process (a segfault, exit 139, no word of
    what is missing) laying out the first line of any PDF, and `slacheck doctor` with it."""
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
        f"<fontconfig><cachedir>{tmp_path / 'fc-cache'}</cachedir></fontconfig>\n",
        encoding="utf-8",
    )
    zh_pdf, en_pdf = tmp_path / "draft.zh.pdf", tmp_path / "draft.en.pdf"
    commands = [
        ["draft", str(ZH), "-o", str(zh_pdf), "--lang", "zh"],
        ["draft", str(WEAK), "-o", str(en_pdf)],
        ["doctor", "--format", "json"],
    ]
    done = _run_with_fonts(conf, commands)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    zh, en, doctor = json.loads(done.stdout)
    assert zh["code"] == 2 and "找不到任何字体" in zh["output"], zh["output"]
    assert "apt-get install fonts-noto-cjk" in zh["output"]
    assert en["code"] == 2 and "finds no font" in en["output"], en["output"]
    assert "apt-get install fonts-dejavu-core" in en["output"]
    assert not zh_pdf.exists() and not en_pdf.exists()
    report = json.loads(doctor["output"])
    assert doctor["code"] == 1 and report["ok"] is False
    rows = {r["key"]: r for r in report["checks"]}
    for lang, fix in (("en", "pdf.fix.latin"), ("zh", "pdf.fix.cjk")):
        row = rows[f"font:{lang}"]
        assert (row["status"], row["detail"]["code"]) == ("missing", "doctor.detail.no_fonts")
        assert row["fix"]["code"] == fix


def test_a_chinese_pdf_embeds_a_cjk_font_as_pdffonts_lists_it(tmp_path: Path) -> None:
    from slacheck.contract.load import load_contract
    from slacheck.render.documents import DocFormat, render_draft
    from slacheck.render.pdffonts import embedded_fonts

    pdf = tmp_path / "draft.zh.pdf"
    pdf.write_bytes(render_draft(load_contract(ZH), lang="zh", fmt=DocFormat.PDF))
    assert shutil.which("pdffonts"), "poppler's pdffonts not found (scripts/sysdeps.sh)"
    listed = subprocess.run(
        ["pdffonts", str(pdf)], capture_output=True, text=True, check=True
    ).stdout.splitlines()[2:]
    names = {line.split()[0].split("+", 1)[-1] for line in listed}
    assert any("CJK" in n for n in names), listed
    # poppler and slacheck's own reader see the same embedded fonts
    ours = embedded_fonts(pdf.read_bytes())
    assert {f.name for f in ours} == names
    assert all(f.embedded and not f.missing for f in ours)
    han = {c for f in ours if "CJK" in f.name for c in f.drawn if "\u4e00" <= c <= "\u9fff"}
    assert len(han) > 50


def test_doctor_reports_this_machine_in_chinese() -> None:
    r = CliRunner().invoke(app, ["doctor", "--lang", "zh"])
    assert r.exit_code == 0, r.output
    assert "中文文档的字体" in r.stdout and "Noto-Sans-CJK-SC" in r.stdout
    assert "默认安装所需的一切都已就绪" in r.stdout


# --------------------------------------------------------------------------------------------
# matplotlib's backend, scratch folders


def test_drawing_a_chart_leaves_matplotlibs_backend_alone() -> None:
    code = textwrap.dedent(
        """
        import sys
        import matplotlib
        before = matplotlib.rcParams["backend"]
        from slacheck.render import charts
        from slacheck.render.format import Formatter
        from zoneinfo import ZoneInfo
        svg = charts.time_breakdown([("model", 120.0, 0.6), ("tool", 80.0, 0.4)],
                                    Formatter("en", ZoneInfo("UTC")))
        assert svg.startswith("<svg"), svg[:80]
        print(before, matplotlib.rcParams["backend"], "matplotlib.pyplot" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_env(MPLBACKEND="pdf"),  # a notebook's or a user's choice, not Agg
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pdf", "pdf", "False"]


def _entries(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.name.startswith("slacheck-")}


def test_commands_leave_no_scratch_folder(
    generated_parquet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    # an error after the engine started (the period is read once the traces are in)
    bad = CliRunner().invoke(
        app, ["check", str(DEMO), str(generated_parquet), "--period", "2026-13"]
    )
    assert bad.exit_code == 2, bad.output
    assert _entries(private) == set()
    # and from a separate process, as a user runs it
    done = subprocess.run(
        [sys.executable, "-m", "slacheck", "traces", "inspect", str(generated_parquet)],
        env=_env(TMPDIR=str(private)),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert _entries(private) == set()


def test_sessions_share_one_scratch_folder_removed_with_the_last(tmp_path: Path) -> None:
    from slacheck.engine import EngineConfig, EngineSession

    config = EngineConfig(scratch_root=str(tmp_path))
    first, second = EngineSession(config), EngineSession(config)
    a, b = Path(first.scratch()), Path(second.scratch())
    assert a.parent == b.parent and a != b and _entries(tmp_path) == {a.parent.name}
    assert a.parent.stat().st_mode & 0o077 == 0  # private to this user
    first.close()
    assert not a.exists() and b.exists()
    second.close()
    assert _entries(tmp_path) == set()
