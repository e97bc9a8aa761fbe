"""The examples a new user reads first run, and the CLI does what the README says."""
from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from einc.cli import main, parse_shapes

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, capsys):
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_parse_shapes():
    assert parse_shapes("64x32x16,32x16x8") == [(64, 32, 16), (32, 16, 8)]
    assert parse_shapes(",3") == [(), (3,)]


def test_explain(capsys):
    assert main(["explain", "ijk,jkl->il", "--shapes", "64x32x16,32x16x8"]) == 0
    out = capsys.readouterr().out
    for needle in ("path:", "strategy=", "m=i(64)", "n=l(8)", "k=jk(32x16)", "flops=", "bytes=",
                   "largest intermediate"):
        assert needle in out, needle


def test_compile_writes_llvm_ir(tmp_path):
    path = tmp_path / "k.ll"
    assert main(["compile", "ij,ij->i", "--shapes", "100x64,100x64", "--target", "llvm",
                 "-o", str(path)]) == 0
    text = path.read_text()
    assert "define void" in text and "einc step 0" in text


def test_cli_error_is_reported_not_raised(capsys):
    assert main(["explain", "ij,jk->ik", "--shapes", "3x4,5x6"]) == 2
    assert "size 4 in operand 0" in capsys.readouterr().err


def test_demo_passes(capsys):
    assert main(["demo"]) == 0
    assert "MISMATCH" not in capsys.readouterr().out
