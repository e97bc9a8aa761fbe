"""`einc tune EXPR --shapes ...`: time the CUDA plan's candidate choices, store the winner.

Every GEMM-shaped contraction of the path is a decision point; its candidates are
`reduce`, and `gett` at each SIMT tile x each K split the plan allows (tensor-core steps:
each split, the mma emitter picks its own tile; fp32 steps on sm_90 also the unsplit tiles
that multiply on the fp64 tensor cores, which the model never picks itself). Points are tuned one at a time, in path
order: earlier points keep their winners, later ones the model's choices (the points
rarely interact, and the product of their candidates would be large). Predicted and
measured times are the whole plan's. Each candidate is built by the ordinary machinery (plan_for
under `tuned.override`, CudaExecutable), checked once against numpy, and timed with CUDA
events: the median of ``repeat`` samples after warm-up, each sample long enough (~0.2 ms)
for the events' resolution. Inputs are not rotated past L2, so small cases run warm.

The winners go to the tuned store (einc/tuned.py), which every later plan of the same
call consults: plan_for, einc.einsum and contract_expression on the CUDA backend.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from . import tuned
from .cost import device_name, predict_plan, profile_for, seconds_text, simt_tiles, tensor_core_family
from .dtypes import kind as dtype_kind
from .errors import EincError
from .progress import Progress
from .tuned import Choice, Tuned

MAX_CANDIDATES = 24  # per decision point, the best predicted (the model's own is always kept)
SAMPLE_S = 2e-4  # each timing sample repeats the call until it lasts about this long


def plan_with(subscripts, shapes, dtype, picks=None, optimize="auto", precision=None):
    """(CUDA plan, the Tuned it was built with) for C-contiguous operands, ``picks`` forced.

    >>> p, t = plan_with("ij,jk->ik", [(64, 8192), (8192, 64)], "float32", {0: Choice("gett", "128x128x8", 4)})
    >>> [s.strategy for s in p.steps], t.used[0].split
    (['gett', 'reduce'], 4)
    """
    from .api import plan_for
    t = Tuned(picks, "override")
    with tuned.override(t):
        p = plan_for(subscripts, shapes, dtype, optimize=optimize, backend="cuda", precision=precision)
    return p, t


def decision_points(t: Tuned) -> list:
    """Path indices whose step is GEMM-shaped (gett or reduce could run it)."""
    out = []
    for k, (step, in_dtypes) in sorted(t.seen.items()):
        kinds = {m.kind for m in step.modes}
        if (len(step.operands) == 2 and {"m", "n", "k"} <= kinds and "sum" not in kinds
                and np.dtype(step.compute).kind in "iuf" and in_dtypes[0] == in_dtypes[1]
                and dtype_kind(np.dtype(in_dtypes[0])) in "iuf"):
            out.append(k)
    return out


def candidates(t: Tuned, k: int, precision=None) -> list:
    """Every choice for decision point k: reduce, then gett per tile and K split, the
    skinny kernel where the step has a small group, the smallmn kernel where its whole
    output is small and K long, and the stream kernel where K is short (fp32)."""
    from .plan import _split_candidates, _summed_outer_first
    step, in_dtypes = t.seen[k]
    size = lambda kind: int(np.prod([m.extent for m in step.modes if m.kind == kind], dtype=np.int64))
    splits = _split_candidates(size("k"), [m.extent for m in _summed_outer_first(step)], exact=True)
    work = size("m") * size("n") * size("k") * size("batch")
    tc = tensor_core_family(in_dtypes, step.compute, precision or "highest", work)
    dts = [np.dtype(step.compute)] + [np.dtype(d) for d in in_dtypes]
    from .codegen.cuda.emit import DM_TILES
    from .codegen.cuda.emit_smallmn import dmma_applies
    # fp32 on the fp64 tensor cores: each DM tile measured here (emit.big_tile already turns the
    # 128x128 SIMT candidates into the DM default where it applies: session 21)
    dm = list(DM_TILES) if dmma_applies(dts, np.dtype(step.compute)) else []
    tiles = [None] if tc else list(simt_tiles()) + dm
    # the 96-wide tile where the emitter would run it (4-byte raw copies, its layout rule), unsplit
    from .codegen.cuda.emit import NARROW_TILES, narrow_tile_fits
    narrow_ok = narrow_tile_fits(step, in_dtypes)
    # (the DM tiles unsplit: three tiles at every split would crowd the SIMT ones out of
    # MAX_CANDIDATES; a split step's 128x128 candidates run the DM default anyway where K allows)
    unsplit_only = {*NARROW_TILES, *DM_TILES}
    keep = lambda tile, s: (tile not in NARROW_TILES or narrow_ok) and (s == 1 or tile not in unsplit_only)
    from .codegen.cuda.emit_skinny import TILE as SKINNY, skinny_layout
    skinny = [Choice("gett", SKINNY, 1)] if skinny_layout(step) is not None else []  # a small N or M group
    from .codegen.cuda.emit_smallmn import TILE as SMALLMN, smallmn_layout
    small = [Choice("gett", SMALLMN, 1)] if smallmn_layout(step) is not None else []  # a small output, long K
    from .codegen.cuda.emit_stream import TILE as STREAM, stream_applies
    stream = [Choice("gett", STREAM, 1)] if stream_applies(step, dts, step.compute) else []  # a short K
    return ([Choice("reduce")] + [Choice("gett", tile, s) for tile in tiles for s in splits if keep(tile, s)]
            + skinny + small + stream)


def same(a: Choice, b: Choice) -> bool:
    """Whether two choices build the same plan (a reduce's split is always the model's)."""
    if a.strategy != b.strategy:
        return False
    return a.strategy == "reduce" or (a.tile == b.tile and (a.split or 1) == (b.split or 1))


@dataclass
class Row:
    choice: Choice
    predicted: float
    measured: float = math.inf
    ok: bool = True
    model: bool = False
    error: str = ""


def random_operand(rng, shape, dtype):
    """Test data whose int8 products and sums wrap and whose floats stay O(1) (also used by
    the CUDA emulator tests)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo, hi = (-60, 60) if dt.kind == "i" else (0, 120)
        return rng.integers(lo, hi, shape).astype(dt)
    x = rng.uniform(-1, 1, shape)
    if dt.kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    return x.astype(dt)


def _reference(subscripts, host):
    wide = [a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) if dtype_kind(a.dtype) in "fc" else a
            for a in host]
    return np.asarray(np.einsum(subscripts, *wide, optimize=True))


def _close(got, ref, precision=None) -> bool:
    if got.dtype.kind in "biu":
        return bool(np.array_equal(got, ref.astype(got.dtype)))
    tol = {2: 2e-2, 4: 1e-2 if precision == "tf32" else 1e-3}.get(
        np.dtype(got.dtype.char.lower()).itemsize if got.dtype.kind == "c" else got.dtype.itemsize, 1e-9)
    g, r = got.astype(ref.dtype), ref
    scale = max(1.0, float(np.abs(r).max())) if r.size else 1.0
    return bool(np.all(np.abs(g - r) <= tol * scale))


class _Device:
    """Inputs uploaded once, an output buffer, and CUDA-event timing on one stream."""

    def __init__(self, host, out_nbytes):
        from .runtime.cuda import runtime
        self.rt = rt = runtime(0)
        rt.make_current()
        self.stream = rt.stream(0)
        self.ptrs = []
        for a in host:
            p = rt.alloc_persistent(a.nbytes)
            rt.upload(p, np.ascontiguousarray(a), self.stream)
            self.ptrs.append(p)
        self.out = rt.alloc_persistent(out_nbytes)
        self.out_nbytes = out_nbytes
        rt.synchronize(self.stream, "tune upload")

    def run(self, plan):
        """(executable, result): one checked call, the output poisoned first."""
        from .execute_cuda import CudaExecutable
        rt = self.rt
        ex = CudaExecutable(plan, rt)
        rt.upload(self.out, np.full(self.out_nbytes, 0x7B, dtype=np.uint8), self.stream)
        ex(self.ptrs, self.out, self.stream)
        got = np.empty(plan.out_shape, dtype=plan.out_dtype)
        rt.download(got, self.out, self.stream)
        rt.synchronize(self.stream, "the tuned candidate")
        return ex, got

    def time(self, ex, repeat: int) -> float:
        """Median seconds per call over ``repeat`` samples, after warm-up."""
        from .runtime.cuda import check
        cu, rt, s = self.rt.cu, self.rt, self.stream
        start = check(cu.cuEventCreate(0), "cuEventCreate")
        stop = check(cu.cuEventCreate(0), "cuEventCreate")
        call = lambda: ex(self.ptrs, self.out, s)

        def sample(inner):
            check(cu.cuEventRecord(start, s), "cuEventRecord")
            for _ in range(inner):
                call()
            check(cu.cuEventRecord(stop, s), "cuEventRecord")
            check(cu.cuEventSynchronize(stop), "cuEventSynchronize")
            return check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime") / 1e3 / inner
        try:
            for _ in range(3):
                call()
            rt.synchronize(s, "warm-up")
            inner = max(1, min(100, math.ceil(SAMPLE_S / max(sample(1), 1e-7))))
            return statistics.median(sample(inner) for _ in range(max(1, repeat)))
        finally:
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)

    def close(self):
        for p in (*self.ptrs, self.out):
            self.rt.cu.cuMemFree(self.rt.cu.CUdeviceptr(p))


def _forget_cached_plans():
    """Executables built before the new winner was stored would keep the old choices."""
    from . import api
    api._EXECUTABLES.clear()  # (and the hot torch path's entries with it)
    api._FAST.clear()


def run_tune(subscripts, shapes, dtype="float32", repeat=10, optimize="auto", precision=None, out=print) -> int:
    """Tune ``subscripts`` for C-contiguous operands of ``shapes``; 0 when every candidate
    that ran matched numpy (1 otherwise). Raises EincError without a usable GPU."""
    from .runtime.cuda import available
    if not available():
        raise EincError("einc tune times kernels on an NVIDIA GPU and none is usable here "
                        "(it needs a CUDA driver, a device and cuda-python: pip install -e '.[cuda]')")
    base_plan, base = plan_with(subscripts, shapes, dtype, optimize=optimize, precision=precision)
    dev, prof = device_name(), profile_for()
    out(f"einc tune {subscripts}  shapes {','.join('x'.join(map(str, s)) for s in shapes)}  {dtype}  "
        f"on {dev or 'an unnamed GPU'} (cost model: {prof.name} profile)")
    points = decision_points(base)
    if not points:
        out("nothing to tune: no contraction of this plan is GEMM-shaped (its steps have one kernel each)")
        return 0
    rng = np.random.default_rng(0)
    dts = dtype if isinstance(dtype, (list, tuple)) else [dtype] * len(shapes)
    host = [random_operand(rng, s, d) for s, d in zip(shapes, dts)]
    ref = _reference(subscripts, host)
    nbytes = int(np.prod(base_plan.out_shape, dtype=np.int64)) * base_plan.out_dtype.itemsize
    device = _Device(host, max(nbytes, 1))
    picks, all_ok = {}, True
    bar = Progress(len(points) + 1, "einc tune")  # each contraction's candidates, then the plan
    if out is print:
        out = bar.print
    try:
        for k in points:
            step = base.seen[k][0]
            groups = {g: int(np.prod([m.extent for m in step.modes if m.kind == g], dtype=np.int64))
                      for g in ("m", "n", "k", "batch")}
            model = base.used.get(k, Choice(step.strategy))
            rows = []
            for c in candidates(base, k, precision):
                p, _ = plan_with(subscripts, shapes, dtype, {**picks, k: c}, optimize, precision)
                rows.append((Row(c, predict_plan(p, prof)[0], model=same(c, model)), p))
            rows.sort(key=lambda r: r[0].predicted)
            rows = [r for i, r in enumerate(rows) if i < MAX_CANDIDATES or r[0].model]
            out(f"contraction {k}: {step.text}  M={groups['m']} N={groups['n']} K={groups['k']} "
                f"batch={groups['batch']}; {len(rows)} candidates")
            for row, p in rows:
                bar.set_item(f"contraction {k}: {row.choice.text()}")
                try:
                    ex, got = device.run(p)
                    row.ok = _close(got, ref, precision)
                    all_ok &= row.ok
                    row.measured = device.time(ex, repeat)
                    del ex
                except EincError as e:  # one candidate that fails to build or run is skipped
                    row.ok, row.error, all_ok = False, str(e).splitlines()[0][:100], False
            bar.advance()
            done = [r for r, _ in rows]
            done.sort(key=lambda r: (not r.ok, r.measured))
            out(f"  {'candidate':<30}{'predicted':>12}{'measured':>12}   (whole plan)")
            for r in done:
                bad = f"  FAILED: {r.error}" if r.error else "  MISMATCH (never chosen)"
                flag = ("  model" if r.model else "") + ("" if r.ok else bad)
                took = "-" if r.measured == math.inf else seconds_text(r.measured)
                out(f"  {r.choice.text():<30}{seconds_text(r.predicted):>12}{took:>12}{flag}")
            best = next((r for r in done if r.ok), None)
            mine = next((r for r in done if r.model), None)
            if best is None:
                out("  no candidate matched numpy: nothing stored for this contraction")
                continue
            picks[k] = best.choice
            if mine is not None and mine.ok:
                out(f"  winner: {best.choice.text()} ({mine.measured / best.measured:.2f}x the model's choice)")
            else:
                out(f"  winner: {best.choice.text()}")
        if not picks:
            return 1
        final, _ = plan_with(subscripts, shapes, dtype, picks, optimize, precision)
        bar.set_item("the tuned plan")
        ex, got = device.run(final)
        all_ok &= _close(got, ref, precision)
        seconds = device.time(ex, repeat)
        bar.advance()
        del ex
    finally:
        bar.close()
        device.close()
    s = tuned.store()
    s.put(base.key, tuned.entry(base.parts, picks, seconds=seconds, predicted=predict_plan(final, prof)[0],
                                tuned_at=time.strftime("%Y-%m-%dT%H:%M:%S")))
    _forget_cached_plans()
    where = s.path if s.enabled else "memory only (EINC_DISK_CACHE=0)"
    out(f"tuned plan: {seconds_text(seconds)}; stored in {where} (key {base.key})")
    return 0 if all_ok else 1
