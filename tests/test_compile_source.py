"""einc.compile_source: the generated kernels as text, the same that `einc compile` prints."""
from __future__ import annotations

import llvmlite.binding as llvm
import pytest

import einc
from einc.cli import main


def test_llvm_source_per_step_parses_and_verifies():
    chunks = einc.compile_source("ij,jk,kl->il", (30, 40), (40, 50), (50, 60))
    assert len(chunks) == 2
    for i, text in enumerate(chunks):
        assert text.startswith(f"; einc step {i}: ") and "strategy=" in text
        mod = llvm.parse_assembly(text)
        mod.verify()
        assert any(f.name.startswith("einc") or not f.is_declaration for f in mod.functions)


def test_dtype_and_strategy_reach_the_kernel():
    (gett,) = einc.compile_source("ij,jk->ik", (256, 256), (256, 256), dtype="float32")
    assert "strategy=gett" in gett and "float" in gett
    (generic,) = einc.compile_source("ij,jk->ik", (256, 256), (256, 256), dtype="float32",
                                     strategy="generic")
    assert "strategy=generic" in generic and generic != gett


def test_cli_compile_prints_compile_source(capsys):
    assert main(["compile", "ij,ij->i", "--shapes", "100x64,100x64"]) == 0
    assert capsys.readouterr().out == "\n".join(einc.compile_source("ij,ij->i", (100, 64), (100, 64))) + "\n"


def test_cuda_target_is_text_without_a_gpu():
    (src,) = einc.compile_source("ij,jk->ik", (64, 32), (32, 16), dtype="float32", target="cuda")
    assert src.startswith("// ===== einc step 0 of 1") and 'extern "C"' in src and "nvcc -arch=sm_90" in src


@pytest.mark.parametrize("kw,err", [({"target": "ptx"}, ValueError), ({"dtype": "U3"}, TypeError)])
def test_bad_arguments_are_einc_errors(kw, err):
    with pytest.raises(err) as info:
        einc.compile_source("ij->i", (3, 4), **kw)
    assert isinstance(info.value, einc.EincError)
