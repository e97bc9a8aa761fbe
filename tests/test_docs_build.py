"""The documentation site builds with `mkdocs build --strict` (skipped where the `docs`
extra is not installed), from a fresh copy of docs/ with its generated pages made anew,
and shows what the commands really print."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocstrings")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "docs", work / "docs", ignore=shutil.ignore_patterns("generated", "figures"))
    shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    env = {**os.environ, "EINC_PROGRESS": "0", "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    gen = subprocess.run([sys.executable, str(ROOT / "scripts" / "docs_examples.py"), "--docs",
                          str(work / "docs")], capture_output=True, text=True, env=env, timeout=600)
    assert gen.returncode == 0, gen.stderr
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                            str(work / "mkdocs.yml"), "-d", str(work / "site")],
                           capture_output=True, text=True, cwd=work, env=env, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    return work


def _text(path: Path) -> str:
    import html
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


def test_every_page_is_built(site):
    for page in ("index.html", "language/index.html", "backends/index.html", "walkthrough/index.html",
                 "cli/index.html", "performance/index.html", "comparison/index.html",
                 "errors/index.html", "reliability/index.html", "architecture/index.html",
                 "api/index.html"):
        assert (site / "site" / page).is_file(), page


def test_walkthrough_shows_the_real_command_output(site, capsys):
    from einc.cli import main
    assert main(["explain", "ijk,jkl->il", "--shapes", "64x32x16,32x16x8"]) == 0
    explain = capsys.readouterr().out
    assert (site / "docs" / "generated" / "explain-gett.txt").read_text() == explain
    page = _text(site / "site" / "walkthrough" / "index.html")
    for line in explain.splitlines():
        assert line.strip() in page, line
    assert "--8<--" not in page  # every snippet was included
    import einc
    (ir,) = einc.compile_source("ij,ij->i", (1000, 64), (1000, 64))
    assert ir.splitlines()[0] in page and 'extern "C"' in page


def test_performance_page_embeds_the_committed_charts(site):
    html = (site / "site" / "performance" / "index.html").read_text()
    imgs = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert len(imgs) == 2
    for src in imgs:
        built = (site / "site" / "performance" / src).resolve()
        assert built.is_file() and built.stat().st_size > 1000, src
        stem = Path(src).stem
        newest = sorted((ROOT / "benchmarks" / "results").glob(f"{stem}-*.png"))[-1]
        assert built.read_bytes() == newest.read_bytes()


def test_api_reference_renders_the_public_docstrings(site):
    text = _text(site / "site" / "api" / "index.html")
    for name in ("einc.einsum", "einc.contract_path", "einc.contract_expression", "einc.compile_source",
                 "einc.tensordot", "einc.transpose", "EincError", "EincShapeError"):
        assert name in text, name
    assert "numpy.einsum's answer" in text
