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


def test_compile_cuda_target_writes_compilable_units(tmp_path):
    pytest.importorskip("cuda.core")
    from einc.codegen.cuda.emit import compile_options
    from einc.runtime.cuda import compile_cubin
    single = tmp_path / "k.cu"
    assert main(["compile", "ijk,jkl->il", "--shapes", "64x32x16,32x16x8", "--dtype", "float32",
                 "--target", "cuda", "-o", str(single)]) == 0
    assert main(["compile", "ij,jk,kl->il", "--shapes", "30x40,40x50,50x60", "--target", "cuda",
                 "-o", str(tmp_path / "chain.cu")]) == 0
    units = [single, tmp_path / "chain.step0.cu", tmp_path / "chain.step1.cu"]
    for unit in units:
        text = unit.read_text()
        assert "strategy" in text and "launch" in text and 'extern "C"' in text
        assert compile_cubin(text, unit.stem, compile_options("sm_90"))
