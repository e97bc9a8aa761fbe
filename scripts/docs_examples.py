"""Regenerate the real command output and figures the documentation site shows.

    .venv/bin/python scripts/docs_examples.py [--docs DIR]

Runs each `einc explain` / `einc compile` command below through the installed CLI
(`python -m einc`, exactly what a user types) and writes its output under
DIR/generated/ (default docs/generated/), which the pages include with
pymdownx.snippets; copies the newest committed TCCG-24 roofline charts from
benchmarks/results/ into DIR/figures/ (mkdocs serves only files under docs/). `make docs`
runs this before `mkdocs build --strict`, so the pages always show what this einc prints.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (file under generated/, the einc command line)
COMMANDS = [
    ("explain-gett.txt", 'einc explain "ijk,jkl->il" --shapes 64x32x16,32x16x8'),
    ("explain-chain.txt", 'einc explain "ij,jk,kl->il" --shapes 30x400,400x50,50x600'),
    ("explain-cuda.txt", 'einc explain "lki,kjl->ji" --shapes 384x376x384,376x376x384 '
                         '--dtype float32 --backend cuda'),
    ("sysinfo.txt", "einc sysinfo"),
    ("compile-rowdot.ll", 'einc compile "ij,ij->i" --shapes 1000x64,1000x64 --target llvm'),
    ("compile-rowdot.cu", 'einc compile "ij,ij->i" --shapes 1000x64,1000x64 --target cuda'),
    ("compile-gemm.cu", 'einc compile "ij,jk->ik" --shapes 4096x4096,4096x4096 --dtype float32 '
                        '--target cuda'),
]

# CUDA units paste kernels/*.cuh in full: the page shows the header and the
# specialisation, and links the whole file
EXCERPTS = {"compile-rowdot.cu": "compile-rowdot-excerpt.cu", "compile-gemm.cu": "compile-gemm-excerpt.cu"}

FIGURES = ("tccg24-cuda-fp32", "tccg24-cuda-bf16")  # newest committed chart of each


def run(cmdline: str) -> str:
    argv = shlex.split(cmdline)
    assert argv[0] == "einc"
    env = {**os.environ, "EINC_PROGRESS": "0"}
    r = subprocess.run([sys.executable, "-m", "einc", *argv[1:]], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"{cmdline} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


def excerpt(text: str) -> str:
    """The unit's header comment and its specialisation; the pasted .cuh files elided."""
    lines = text.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("// ---------------- kernels/"))
    spec = next(i for i, ln in enumerate(lines) if ln.startswith("// ---------------- specialisation"))
    pasted = [ln.split("kernels/", 1)[1].split(" ", 1)[0] for ln in lines[first:spec]
              if ln.startswith("// ---------------- kernels/")]
    gap = f"// ... {spec - first} lines: {', '.join('kernels/' + p for p in pasted)} pasted here ..."
    return "\n".join(lines[:first] + [gap, ""] + lines[spec:]) + "\n"


def figures(dest: Path) -> list[tuple[str, str]]:
    results = ROOT / "benchmarks" / "results"
    dest.mkdir(parents=True, exist_ok=True)
    done = []
    for stem in FIGURES:
        found = sorted(results.glob(f"{stem}-*.png"))
        if not found:
            raise SystemExit(f"no {stem}-*.png in {results}")
        src = found[-1]
        shutil.copyfile(src, dest / f"{stem}.png")
        done.append((stem, src.stem))
    return done


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", default=str(ROOT / "docs"), help="the docs directory to write into")
    args = p.parse_args(argv)
    docs = Path(args.docs)
    gen = docs / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    for name, cmd in COMMANDS:
        out = run(cmd)
        (gen / name).write_text(out)
        (gen / f"{name}.cmd").write_text(f"$ {cmd}\n")
        if name in EXCERPTS:
            (gen / EXCERPTS[name]).write_text(excerpt(out))
        print(f"wrote {gen / name} ({len(out.splitlines())} lines)")
    lines = []
    for stem, source in figures(docs / "figures"):
        dtype = stem.rsplit("-", 1)[1]
        lines += [f"![TCCG-24 {dtype} roofline: einc and torch.einsum on an H200](figures/{stem}.png)", "",
                  f"*TCCG-24 {dtype}, `benchmarks/results/{source}.{{json,md,png}}`.*", ""]
        print(f"copied benchmarks/results/{source}.png -> {docs / 'figures' / (stem + '.png')}")
    (gen / "figures.md.txt").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
