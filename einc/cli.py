"""The `einc` command: explain, compile, sysinfo, demo, tune, bench."""
from __future__ import annotations

import argparse
import sys

from .errors import EincError, EincShapeError, EincValueError


def parse_shapes(text: str):
    """'64x32,32x16' -> [(64, 32), (32, 16)]; an empty item is a scalar: ',3' -> [(), (3,)]."""
    shapes = []
    for item in text.split(","):
        item = item.strip()
        try:
            dims = tuple(int(x) for x in item.split("x")) if item else ()
        except ValueError:
            raise EincValueError(f"--shapes {text!r}: {item!r} is not sizes joined by 'x' "
                                 "(e.g. 64x32,32x16)") from None
        if any(n < 0 for n in dims):
            raise EincShapeError(f"--shapes {text!r}: {item!r} has a negative size")
        shapes.append(dims)
    return shapes


def _plan(args):
    from .api import plan_for
    return plan_for(args.subscripts, parse_shapes(args.shapes), args.dtype, optimize=args.optimize,
                    strategy=args.strategy, backend=args.backend)


def cmd_explain(args):
    from .explain import describe
    if args.memory_limit is not None:  # sliced: the per-slice plan, then how it is sliced
        from .slicing import plan_sliced
        sp = plan_sliced(args.subscripts, parse_shapes(args.shapes), args.memory_limit, dtype=args.dtype,
                         optimize=args.optimize, strategy=args.strategy, backend=args.backend)
        print(describe(sp.plan) + "\n" + sp.describe())
        return
    print(describe(_plan(args)))


def cmd_compile(args):
    if args.target not in ("llvm", "cuda"):
        raise EincError(f"--target {args.target}: use llvm or cuda")
    from .source import compile_source
    chunks = compile_source(args.subscripts, *parse_shapes(args.shapes), dtype=args.dtype,
                            target=args.target, arch=args.arch, optimize=args.optimize,
                            strategy=args.strategy)
    if args.output and args.target == "cuda" and len(chunks) > 1:
        # each step is its own translation unit (they share helper definitions)
        from pathlib import Path
        path = Path(args.output)
        for i, text in enumerate(chunks):
            name = path.with_name(f"{path.stem}.step{i}{path.suffix or '.cu'}")
            name.write_text(text)
            print(f"wrote {name}")
        return 0
    out = "\n".join(chunks)
    if args.output:
        with open(args.output, "w") as f:
            f.write(out)
    else:
        print(out)


def cmd_demo(args):
    from .demo import run_demo
    return run_demo()


def cmd_tune(args):
    if args.repeat < 1:
        raise EincError(f"--repeat {args.repeat}: give at least 1")
    from .tune import run_tune
    return run_tune(args.subscripts, parse_shapes(args.shapes), args.dtype, repeat=args.repeat,
                    optimize=args.optimize, precision=args.precision)


def cmd_bench(args):
    if args.report:  # charting a saved result runs nothing
        from .report import write_report
        write_report(args.report, plot=args.plot)
        return 0
    tccg_gpu = args.backend == "cuda" and args.suite == "tccg24"
    if (args.plot or args.dtype != "float32") and not tccg_gpu:
        raise EincError("--plot and --dtype are for `einc bench --backend cuda --suite tccg24`")
    if args.plot and args.no_save:
        raise EincError("--plot writes beside the saved JSON: drop --no-save")
    if args.backend == "cuda":
        from .bench_cuda import run_cuda_bench, run_intensli, run_tccg24
        if args.suite == "tccg24":
            return run_tccg24(save=not args.no_save, repeat=args.repeat, dtype=args.dtype, plot=args.plot)
        if args.suite == "intensli":
            return run_intensli(save=not args.no_save, repeat=max(args.repeat, 10))
        return run_cuda_bench(save=not args.no_save, repeat=max(args.repeat, 10))
    from .bench import run_bench
    return run_bench(args.suite, args.backend, repeat=args.repeat, save=not args.no_save)


def cmd_sysinfo(args):
    from .sysinfo import collect, describe
    info = collect()
    if args.json:
        import json
        print(json.dumps(info, indent=1))
    else:
        print(describe(info))


def main(argv=None):
    """Entry point of the `einc` console script."""
    p = argparse.ArgumentParser(prog="einc", description="einc: an einsum compiler")
    p.add_argument("--version", action="version", version=f"einc {__import__('einc').__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, fn, doc in (("explain", cmd_explain, "print the plan of an einsum"),
                          ("compile", cmd_compile, "print the generated kernels")):
        q = sub.add_parser(name, help=doc)
        q.add_argument("subscripts")
        q.add_argument("--shapes", required=True, help="e.g. 64x32x16,32x16x8")
        q.add_argument("--dtype", default="float64")
        q.add_argument("--optimize", default="auto")
        q.add_argument("--strategy", default=None, choices=["generic", "reduce", "gett"])
        if name == "explain":
            q.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
            q.add_argument("--memory-limit", default=None,
                           help="per-device peak (e.g. 1MB, 32GiB): slice the einsum to fit")
        if name == "compile":
            q.add_argument("--target", default="llvm", choices=["llvm", "cuda"])
            q.add_argument("--arch", default="sm_90", help="CUDA architecture for --target cuda")
            q.add_argument("-o", "--output")
        q.set_defaults(fn=fn)
    q = sub.add_parser("sysinfo", help="print the GPU, driver, NVRTC, host CPU and kernel cache einc sees")
    q.add_argument("--json", action="store_true", help="the same as one JSON object")
    q.set_defaults(fn=cmd_sysinfo)
    q = sub.add_parser("demo", help="run representative contractions against numpy")
    q.set_defaults(fn=cmd_demo)
    q = sub.add_parser("tune", help="time the CUDA plan's candidate kernels and store the fastest")
    q.add_argument("subscripts")
    q.add_argument("--shapes", required=True, help="e.g. 64x32,32x16")
    q.add_argument("--dtype", default="float32")
    q.add_argument("--optimize", default="auto")
    q.add_argument("--repeat", type=int, default=10, help="timing samples per candidate (median)")
    q.add_argument("--precision", default=None, choices=["highest", "tf32"],
                   help="tf32: fp32 GEMMs may run on tensor cores (as einsum(..., precision='tf32'))")
    q.set_defaults(fn=cmd_tune)
    q = sub.add_parser("bench", help="benchmark einc against numpy and opt_einsum")
    q.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    q.add_argument("--suite", default="core")
    q.add_argument("--repeat", type=int, default=5)
    q.add_argument("--no-save", action="store_true")
    q.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16", "float64"],
                   help="element type of --backend cuda --suite tccg24")
    q.add_argument("--plot", action="store_true",
                   help="also write RESULT.md and a RESULT.png roofline beside the JSON")
    q.add_argument("--report", metavar="RESULT.json",
                   help="rewrite RESULT.md (and with --plot RESULT.png) from a saved result; runs nothing")
    q.set_defaults(fn=cmd_bench)
    args = p.parse_args(argv)
    try:
        return args.fn(args) or 0
    except EincError as e:
        print(f"einc: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `einc compile ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
