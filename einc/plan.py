"""plan: a Bound -> buffers and steps, each with its mode classes and strategy.

The path comes from opt_einsum (path.py). Each contraction in it becomes a Step: a loop
nest over modes with one stride per tensor. Binary steps classify every label as batch
(A, B and result), m (A and result), n (B and result) or k (A and B only); labels that
only one operand of a binary step has and nobody needs afterwards are summed out first
by a unary step (cheaper, and it lets the GEMM kernel assume every k is shared). The
last step writes straight into the output's own strides, so the final permutation costs
nothing. Strategy choice lives here and only here.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from . import tuned as _tuned
from .cost import (TIE, config_tile, gemm_strategy, gett_config, gett_family, predict_split, profile_for,
                   skinny_pays, smallmn_pays, stream_pays)
from .dtypes import accumulator, kind as dtype_kind
from .errors import EincValueError
from .ir import Bound, Buffer, EllipsisDim, Layout, Mode, Plan, Step
from .path import contraction_path

STRATEGIES = ("generic", "reduce", "gett")
GETT_MIN_WORK = 32 ** 3  # below this the packing overhead outweighs the GEMM kernel (crossover measured 2026-12-01)
CUDA_GETT_MIN_WORK = 1 << 15  # below this reduce wins on the GPU where the cost model can't tell
GEMM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# integer operands the CPU gett widens to int16 and sums in int32 (pmaddwd); any integer
# result of at most 32 bits is the int32 sum's low bits, as numpy's wrapping sum gives
GEMM_INT_OPERANDS = (np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16))


def is_fortran(shape, strides) -> bool:
    """True when element ``strides`` are column-major for ``shape`` (and not also row-major)."""
    return len(shape) > 1 and tuple(strides) != row_major(shape) and \
        tuple(strides) == tuple(reversed(row_major(tuple(reversed(shape)))))


def row_major(extents) -> tuple[int, ...]:
    """Element strides of a C-contiguous tensor."""
    out, acc = [], 1
    for n in reversed(extents):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def label_text(labels) -> str:
    parts = ["…" if isinstance(x, EllipsisDim) else str(x) for x in labels]
    return ("" if all(len(p) == 1 for p in parts) else " ").join(parts)


def _step_text(layouts, result) -> str:
    sep = "," if all(len(label_text([l])) == 1 for lay in layouts for l in lay.labels) else ", "
    return sep.join(label_text(l.labels) for l in layouts) + "->" + label_text(result.labels)


def classify(layouts, result) -> dict:
    """Mode class of every label of a step."""
    res = set(result.labels)
    if len(layouts) != 2:
        return {l: ("free" if l in res else "sum") for lay in layouts for l in lay.labels}
    a, b = (set(lay.labels) for lay in layouts)
    kinds = {}
    for lay in layouts:
        for l in lay.labels:
            if l in a and l in b:
                kinds[l] = "batch" if l in res else "k"
            else:
                kinds[l] = ("m" if l in a else "n") if l in res else "sum"
    return kinds


def _order_loops(modes, strides, accumulate_ok):
    """Loop order and accumulation for the `reduce` strategy (locality first)."""
    def key(j):  # sorts the best innermost candidate last: smallest stride, most unit strides
        s = [abs(row[j]) for row in strides if row[j] != 0]
        return -(min(s) if s else 0), sum(abs(row[j]) == 1 for row in strides)
    free = [j for j, m in enumerate(modes) if m.kind not in ("sum", "k")]
    summed = [j for j, m in enumerate(modes) if m.kind in ("sum", "k")]
    free.sort(key=lambda j: -abs(strides[0][j]))
    summed.sort(key=key)
    best = sorted(range(len(modes)), key=key)
    if summed and accumulate_ok and modes[best[-1]].kind not in ("sum", "k"):
        return best, "memory"
    return free + summed, "register"


def _coalesce(kinds, extents, strides):
    """Merge adjacent loops of one kind that every tensor walks as one (fewer, longer loops)."""
    kinds, extents, strides = list(kinds), list(extents), [list(r) for r in strides]
    j = 0
    while j + 1 < len(kinds):
        if kinds[j] == kinds[j + 1] and all(r[j] == r[j + 1] * extents[j + 1] for r in strides):
            extents[j] *= extents[j + 1]
            for r in strides:
                r[j] = r[j + 1]
                del r[j + 1]
            del kinds[j + 1], extents[j + 1]
        else:
            j += 1
    return kinds, extents, strides


def make_step(op_bufs, layouts, res_buf, result, in_dtypes, res_dtype, compute, strategy,
              backend="cpu"):
    """One Step: modes, strides, strategy and its loop configuration."""
    kinds = classify(layouts, result)
    extent = {l: n for lay in (*layouts, result) for l, n in zip(lay.labels, lay.extents)}
    labels = list(result.labels) + [l for lay in layouts for l in lay.labels
                                    if l not in result.labels]
    labels = list(dict.fromkeys(l for l in labels if extent[l] != 1))
    modes = tuple(Mode(l, extent[l], kinds.get(l, "free")) for l in labels)
    tensors = (result, *layouts)
    strides = tuple(tuple(dict(zip(t.labels, t.strides)).get(l, 0) for l in labels) for t in tensors)
    total = int(np.prod([m.extent for m in modes], dtype=np.int64)) if modes else 1
    nbytes = sum(t.size * d.itemsize for t, d in zip(tensors, (res_dtype, *in_dtypes)))
    flops = total * max(1, len(layouts))  # (n-1) multiplies and one add per point

    choice = _choose(strategy, modes, in_dtypes, res_dtype, compute, backend)
    config: tuple = ()
    if choice == "gett" and backend == "cuda":  # the tile the cost model predicts fastest
        draft = Step(tuple(op_bufs), res_buf, modes, strides, choice, compute, flops, nbytes, "", ())
        config = gett_config(modes, in_dtypes, compute, nbytes, step=draft)
        draft = replace(draft, config=config)
        if skinny_pays(draft, in_dtypes, res_dtype, compute):
            config = (("tile", "skinny"),)
        elif smallmn_pays(draft, in_dtypes, res_dtype, compute):
            config = (("tile", "smallmn"),)
        elif stream_pays(draft, in_dtypes, res_dtype, compute):
            config = (("tile", "stream"),)
    if choice in ("generic", "reduce"):
        if choice == "generic":
            free = [j for j, m in enumerate(modes) if m.kind not in ("sum", "k")]
            order, acc = free + [j for j in range(len(modes)) if j not in free], "register"
        else:
            order, acc = _order_loops(modes, strides, res_dtype == compute)
        loop_kinds = ["s" if modes[j].kind in ("sum", "k") else "f" for j in order]
        ext = [modes[j].extent for j in order]
        st = [[row[j] for j in order] for row in strides]
        if choice == "reduce":
            loop_kinds, ext, st = _coalesce(loop_kinds, ext, st)
        unit = tuple((r[-1] if r and r[-1] in (0, 1) and choice == "reduce" else None) for r in st)
        config = (tuple(loop_kinds), tuple(ext), tuple(tuple(r) for r in st), acc, unit)
    return Step(tuple(op_bufs), res_buf, modes, strides, choice, compute, flops, nbytes,
                _step_text(layouts, result), config)


def _choose(forced, modes, in_dtypes, res_dtype, compute, backend="cpu") -> str:
    kinds = {m.kind for m in modes}
    size = lambda k: int(np.prod([m.extent for m in modes if m.kind == k], dtype=np.int64))
    if backend == "cuda":  # the CUDA gett converts on load/store, so any real dtype pair fits
        gemm_ok = (len(in_dtypes) == 2 and {"m", "n", "k"} <= kinds and compute.kind in "iuf"
                   and in_dtypes[0] == in_dtypes[1] and dtype_kind(in_dtypes[0]) in "iuf")
        if forced in ("generic", "reduce") or not gemm_ok:
            return forced or "reduce"
        if forced == "gett":
            return "gett"
        work = size("m") * size("n") * size("k") * size("batch")
        k_big = max(m.extent for m in modes if m.kind == "k")
        k_exts = [m.extent for m in modes if m.kind == "k"]
        return gemm_strategy(modes, in_dtypes, res_dtype, compute, _split_candidates(size("k"), k_exts),
                             _reduce_split(size("m") * size("n") * size("batch"), size("k"), k_big),
                             "gett" if work >= CUDA_GETT_MIN_WORK else "reduce")
    gemm_ok = (len(in_dtypes) == 2 and compute in GEMM_DTYPES and res_dtype == compute
               and all(d == compute for d in in_dtypes) and {"m", "n", "k"} <= kinds)
    gemm_ok = gemm_ok or (len(in_dtypes) == 2 and {"m", "n", "k"} <= kinds and res_dtype == compute
                          and compute.kind in "iu" and compute.itemsize <= 4
                          and in_dtypes[0] == in_dtypes[1] and in_dtypes[0] in GEMM_INT_OPERANDS)
    if forced == "generic":
        return "generic"
    if forced == "gett":
        return "gett" if gemm_ok else "reduce"
    if forced == "reduce" or not gemm_ok:
        return "reduce"
    work = size("m") * size("n") * size("k") * size("batch")
    return "gett" if work >= GETT_MIN_WORK and min(size("m"), size("n")) >= 4 else "reduce"


def _affine(labels, lay: Layout) -> bool:
    """True when ``labels`` (outermost first) are one contiguous block of ``lay`` in that order."""
    stride = dict(zip(lay.labels, lay.strides))
    ext = dict(zip(lay.labels, lay.extents))
    live = [l for l in labels if ext.get(l, 1) != 1]
    return all(stride[a] == stride[b] * ext[b] for a, b in zip(live, live[1:]))


def _by_stride(labels, strides: dict) -> list:
    """``labels`` ordered by their strides in ``strides``, largest (outermost) first."""
    return sorted(labels, key=lambda l: -abs(strides.get(l, 0)))


def _c_layout(step: Step) -> Layout:
    """The step's result (tensor 0) as a Layout over its modes."""
    return Layout(tuple(m.label for m in step.modes), tuple(m.extent for m in step.modes), step.strides[0])


COPY_MIN_INTENSITY = 500  # GEMM FLOPs per byte a GEMM-order copy moves, below which tables win


TC_COPY_MIN_INTENSITY = 16  # GEMM FLOPs per copied byte above which a tensor-core copy pays
# ... and above which an operand read through offset tables is copied into GEMM order too
# (TCCG bf16 ccsd ijkl cases, ~1800-2600 FLOP/B: the tabled tensor-core kernels ran at 330-450
# TFLOP/s, the untabled ones at ~700 with TMA; a copy moves ~3 TB/s)
TC_TABLE_COPY_MIN_INTENSITY = 500
# GEMM-order copies that keep each operand's unit-stride mode innermost where the kernel
# can read the result (tensor_core_copies); EINC_TC_COPY_ROWS=0: always [batch, rows, k]
TC_COPY_ROWS = [os.environ.get("EINC_TC_COPY_ROWS", "1") != "0"]
TC_TABLE_COPY_TABLED_C_MIN_FLOPS = 1e11  # GEMM FLOPs from which a tabled C does not stop table_copies


def tensor_core_copies(step: Step, ops, precision: str):
    """For a GEMM step tensor cores can run: which operands to copy K-major first.

    The tensor-core kernels read operands in 16-byte pieces straight into the layouts the
    instructions want; an operand that can't be read that way falls to element-by-element
    loads (H200 TCCG-24 bf16: ccsd ij-kil-lkj 13 TFLOP/s that way). A transpose copy into
    [batch, rows, k] (rows: its M or N labels, in C's order; k in one order for both
    operands, so K stays one group) costs a bandwidth-bound pass and gives the fast path.
    Returns None when tensor cores don't apply; else (labels for op 0 or None, for op 1).
    """
    from .codegen.cuda.emit_mma import mma_op
    from .codegen.cuda.emit_wgmma import _PTX, operand_fit
    dtypes = [np.dtype(step.compute), np.dtype(ops[0][2]), np.dtype(ops[1][2])]
    op = mma_op(step, dtypes, np.dtype(step.compute), precision)
    if op is None:
        return None
    lay, a_ok, b_ok, _ = operand_fit(step, op)
    fits = {lay.ta: a_ok, lay.tb: b_ok}  # step tensor index (1, 2) -> fits
    if all(fits.values()):
        return table_copies(step, ops, dtypes, [None, None], roles=(lay.ta - 1, lay.tb - 1, _PTX[op][4]))
    c_stride = dict(zip((m.label for m in step.modes), step.strides[0]))
    by = _by_stride
    strides = [dict(zip(o[1].labels, o[1].strides)) for o in ops]
    kinds = {m.label: m.kind for m in step.modes}
    keep = [j for j in (0, 1) if fits[j + 1]]
    roles = (lay.ta - 1, lay.tb - 1, _PTX[op][4])
    a_rows, b_nmajor = _row_copies(step, ops, roles)
    # k order: an operand that stays, else A's where its copy then keeps its rows, else op 0's
    k_from = keep[0] if keep else (roles[0] if a_rows else 0)
    k_order = by([l for l in ops[0][1].labels if kinds.get(l) == "k"], strides[k_from])
    out, moved = [], 0
    for j in (0, 1):
        if fits[j + 1]:
            out.append(None)
            continue
        lab = ops[j][1].labels
        batch = by([l for l in lab if kinds.get(l) == "batch"], c_stride)
        rows = by([l for l in lab if kinds.get(l) in ("m", "n")], c_stride)
        out.append(batch + k_order + rows if j == roles[1] and b_nmajor else batch + rows + k_order)
        moved += 2 * ops[j][1].size * dtypes[j + 1].itemsize
    if step.flops < TC_COPY_MIN_INTENSITY * moved:
        return [None, None]
    return table_copies(step, ops, dtypes, out, k_order, roles)


def _row_copies(step: Step, ops, roles) -> tuple:
    """(A's copy keeps its rows, B is copied N-major): GEMM-order copies that leave an
    operand's unit-stride mode innermost are rows copies (the TMA copy on sm_90), not
    transposes. ``roles``: (op index playing A, playing B, wgmma transposes B). A keeps its
    rows when its unit-stride mode is a k (K then takes A's order); B when the type is
    transposable and its unit-stride mode is its last row in C's order ([batch, k, rows])."""
    if not TC_COPY_ROWS[0]:
        return False, False
    ja, jb, transposable = roles
    kinds = {m.label: m.kind for m in step.modes}
    c_stride = dict(zip((m.label for m in step.modes), step.strides[0]))
    unit = [_unit_label(o[1]) for o in ops]
    rows_b = _by_stride([l for l in ops[jb][1].labels if kinds.get(l) in ("m", "n")], c_stride)
    return (kinds.get(unit[ja]) == "k",
            bool(transposable) and kinds.get(unit[jb]) in ("m", "n") and rows_b[-1:] == [unit[jb]])


def table_copies(step: Step, ops, dtypes, copies: list, k_order=None, roles=None) -> list:
    """``copies`` ([labels for op 0 or None, for op 1 or None], those the 16-byte loads need)
    and, for a heavy GEMM, the operands that would still reach some mode group through
    offset tables (a group not one contiguous block): copied into [batch, rows, k] too, so
    that every group is one strided mode -- the warp-specialised tiles and their TMA
    producer take only those (a tabled M keeps the all-loader tiles). K keeps ``k_order``,
    or the order of an operand already contiguous in it. C's groups may be tabled (the
    epilogue has their offsets): ccsd lnim,kmjn->lkji bf16 with A copied too (lnim->linm on
    the rows copy, 0.12 ms) 1.67 ms against 2.18-2.37 with B's copy alone (session 19c;
    session 10, when that copy ran on reduce_cols at 0.96 ms, measured it the other way);
    below TC_TABLE_COPY_TABLED_C_MIN_FLOPS a tabled C still means no extra copy.
    No copy below TC_TABLE_COPY_MIN_INTENSITY GEMM FLOPs per byte of all the copies."""
    none = list(copies)
    kinds = {m.label: m.kind for m in step.modes}
    c_stride = dict(zip((m.label for m in step.modes), step.strides[0]))
    by = _by_stride
    batch = by([m.label for m in step.modes if m.kind == "batch"], c_stride)
    rows = [by([l for l in o[1].labels if kinds.get(l) in ("m", "n")], c_stride) for o in ops]
    lc = _c_layout(step)
    if step.flops < TC_TABLE_COPY_TABLED_C_MIN_FLOPS and not all(_affine(g, lc) for g in (batch, *rows) if len(g) > 1):
        return none  # a short step with a tabled C (ccsd_t's stream kernel, 4.4 GFLOP): not measured with copies
    ks = [by([l for l in o[1].labels if kinds.get(l) == "k"], dict(zip(o[1].labels, o[1].strides))) for o in ops]
    fine = lambda j, k_order: all(_affine(g, ops[j][1]) for g in (batch, rows[j], k_order) if len(g) > 1)
    a_rows, b_nmajor = _row_copies(step, ops, roles) if roles else (False, False)
    # K in an order one operand already has it contiguous in, if any (then only the other
    # moves), else A's where its copy then keeps its rows (_row_copies)
    if k_order is None:
        k_order = next((ks[j] for j in (0, 1) if fine(j, ks[j])), ks[roles[0]] if a_rows else ks[0])
    b_order = lambda j: k_order + rows[j] if b_nmajor and j == roles[1] else rows[j] + k_order
    out = [c if c is not None or fine(j, k_order) else batch + b_order(j) for j, c in enumerate(copies)]
    if out == none:
        return none
    moved = sum(2 * ops[j][1].size * dtypes[j + 1].itemsize for j in (0, 1) if out[j] is not None)
    if step.flops < TC_TABLE_COPY_MIN_INTENSITY * moved:
        return none
    return out


def gpu_contiguous(step: Step, ops):
    """Which GEMM operands to copy into [batch, m, k] / [batch, k, n] order first.

    The CUDA gett addresses a mode group of several modes through an offset table, a
    gather on every load (TCCG's ccsd_t runs at 1.6-4.7 TFLOP/s that way). When a group is
    not one contiguous block of a tensor, copying that tensor once into GEMM order (a
    bandwidth-bound `reduce` permutation) turns every group into a single strided mode.
    Measured on TCCG-24 (H200): the copies lift ccsd ijkl-minl-njmk from 20 to 34 TFLOP/s
    but slow every case under ~100 FLOP per copied byte (intensli, ao2mo), hence the gate.
    Returns (ops, [labels for A or None, labels for B or None], C order or None).
    """
    la, lb = ops[0][1], ops[1][1]
    lc = _c_layout(step)
    group = lambda kind, lay: sorted((m.label for m in step.modes if m.kind == kind and m.label in lay.labels),
                                     key=lambda l: -abs(dict(zip(lay.labels, lay.strides))[l]))
    batch = [m.label for m in step.modes if m.kind == "batch"]
    ms = [m.label for m in step.modes if m.kind == "m"]
    ns = [m.label for m in step.modes if m.kind == "n"]
    ks = group("k", la)
    need = lambda lay, order_groups: not all(_affine(g, lay) for g in order_groups if len(g) > 1)
    a_copy = batch + ms + ks if need(la, [batch, ms, ks]) else None
    b_copy = batch + ks + ns if need(lb, [batch, ks, ns]) else None
    c_order = tuple(batch + ms + ns) if need(lc, [batch, ms, ns]) else None
    # the permutation kernel moves ~1-2 TB/s of strided data: it only pays on heavy GEMMs
    item = step.compute.itemsize
    c_size = int(np.prod([m.extent for m in step.modes if m.kind != "k"], dtype=np.int64))
    moved = 2 * item * ((la.size if a_copy else 0) + (lb.size if b_copy else 0) + (c_size if c_order else 0))
    if moved and step.flops < COPY_MIN_INTENSITY * moved:
        return ops, k_order_copy(step, ops, ks), None
    if a_copy is None and b_copy is None and c_order is None:
        return ops, narrow_copy(step, ops, batch, ks), None
    return ops, [a_copy, b_copy], c_order


def _unit_label(lay: Layout):
    """The label of a layout's unit-stride mode, or None."""
    return next((l for l, s in zip(lay.labels, lay.strides) if abs(s) == 1), None)


NARROW_COPY_MAX = 1 << 16  # elements of a small operand narrow_copy transposes (a few us)
NARROW_COPY_MIN_FLOPS = 1 << 30  # GEMM work below which that copy's launch is not worth it


def narrow_copy(step: Step, ops, batch, ks) -> list:
    """[labels for A or None, labels for B or None]: when both operands are K-fast, the small
    one, if tiny and of a free group of 65-96 elements, copied with that group unit-stride, so
    the 96-wide SIMT tile applies (emit.narrow_tile_fits: with both K-fast, B's runs of 8 k would
    need registers it has not). TCCG ao2mo ap,srqp->srqa (fp32, A = ap 96 x 96, B 227 MB): the
    128 tile does 75% useful work over a = 96."""
    from .codegen.cuda.emit import narrow_dtypes
    none = [None, None]
    # one K mode: after the copy K is one strided group in both, as the tile needs
    if step.flops < NARROW_COPY_MIN_FLOPS or len(ks) != 1 or not narrow_dtypes(step, [d for _, _, d in ops]):
        return none
    kinds = {m.label: m.kind for m in step.modes}
    if any(kinds.get(_unit_label(lay)) != "k" for _, lay, _ in ops[:2]):
        return none
    j = 0 if ops[0][1].size <= ops[1][1].size else 1
    free = [m for m in step.modes if m.kind == ("m" if j == 0 else "n")]
    group = int(np.prod([m.extent for m in free], dtype=np.int64))
    if ops[j][1].size > NARROW_COPY_MAX or not 64 < group <= 96:
        return none
    none[j] = batch + list(ks) + [m.label for m in free]  # the free group last: unit-stride
    return none


K_ORDER_MIN_INTENSITY = 4  # GEMM FLOPs per byte of B a K-order copy moves, below which it can't pay


def k_order_copy(step: Step, ops, ks):
    """[None, labels for B] when A and B are unit-stride along different K modes, else [None, None].

    The gett kernel walks K in one order for both operands (A's): when B's unit stride is
    another K mode, each of B's loads is a scattered element (`abcd,dbea->ec`, 72^5 fp32:
    2.3 TFLOP/s). One tiled transpose of B into [batch, n, k in A's order] makes both
    operands K-fast in the same order.
    """
    la, lb = ops[0][1], ops[1][1]
    kinds = {m.label: m.kind for m in step.modes}
    ua, ub = _unit_label(la), _unit_label(lb)
    if ua is None or ub is None or ua == ub or kinds.get(ua) != "k" or kinds.get(ub) != "k":
        return [None, None]
    if step.flops < K_ORDER_MIN_INTENSITY * 2 * lb.size * step.compute.itemsize:
        return [None, None]
    batch = [m.label for m in step.modes if m.kind == "batch"]
    ns = [m.label for m in step.modes if m.kind == "n"]
    return [None, batch + ns + list(ks)]


@dataclass(frozen=True)
class Part:
    """The real/imaginary index of a complex tensor seen as real (``of`` names the tensor)."""

    of: str

    def __str__(self):
        return f"{self.of}~"


# C[r] = sum_kp A[k, p] M[k, p, r] with p, r in {re, im}: complex multiplication as one
# real GEMM over twice the K and N, M = [[B_re, B_im], [-B_im, B_re]] built by copies and a
# sign flip -- never by multiplying with zeros, which would turn an infinite part into NaN.
_SIGNS = (-1, 1)  # M[k, im, r] = B[k, 1 - r] * _SIGNS[r]


def _real_view(lay: Layout, part: Part) -> Layout:
    """A complex layout as a real one: strides doubled, (re, im) as a unit-stride mode."""
    return Layout(lay.labels + (part,), lay.extents + (2,), tuple(2 * s for s in lay.strides) + (1,))


_PA, _PB, _PR = Part("a"), Part("b"), Part("c")


def _real_gemm_layouts(la: Layout, lb: Layout, res_lay: Layout):
    """(A, M, C) of the real GEMM C[.., r] = sum A[.., p] M[.., p, r]: A and C as real
    views, M = [[B_re, B_im], [-B_im, B_re]] per element of B, row-major in the order
    [batch, k, p, n, r] with k in A's order and n in C's (largest stride first). A K-fast
    A and an N-fast C then see K and N as one stride each (p and r extend them), which the
    GPU's GEMM kernels read without offset tables or copies."""
    sa, sc = dict(zip(la.labels, la.strides)), dict(zip(res_lay.labels, res_lay.strides))
    ext = dict(zip(lb.labels, lb.extents))
    batch = sorted((l for l in lb.labels if l in sa and l in sc), key=lambda l: -abs(sc[l]))
    ks = sorted((l for l in lb.labels if l in sa and l not in sc), key=lambda l: -abs(sa[l]))
    ns = sorted((l for l in lb.labels if l not in sa), key=lambda l: -abs(sc.get(l, 0)))
    labels = (*batch, *ks, _PA, *ns, _PR)
    extents = tuple(2 if isinstance(l, Part) else ext[l] for l in labels)
    return _real_view(la, _PA), Layout(labels, extents, row_major(extents)), _real_view(res_lay, _PR)


REDUCE_ALIGN_MIN = 1 << 20  # elements of the smaller operand from which a GPU sum aligns the orders
REDUCE_ALIGN_RUN = 32  # the sum's innermost contiguous run below which the operands' orders disagree


def _inner_run(step: Step) -> int:
    """Elements of the innermost summed loop the reduce kernels walk (merged modes)."""
    from .codegen.cuda.emit import _loop_modes
    _, summ = _loop_modes(step, merge=True)
    return summ[-1][0] if summ else 0


def reduce_aligned(step: Step, ops, res_buf, res_lay, res_dt, cmp, backend):
    """``(j, labels)``: copy operand j into ``labels`` order before a GPU sum, else None.

    Two big operands whose summed modes lie in different orders (the last step of a
    tensor network: 2**28 terms over 28 modes of extent 2, each operand in the order its
    path left it) make the reduce kernels walk a short inner run and decode a long
    multi-mode counter for every few elements, reading one operand scattered (Sycamore's
    last step: 191 ms for 4 GiB). A copy of the smaller operand with the labels it shares
    with the other in the other's order (its own labels outermost) costs one coalesced
    pass (the permute kernel); the sum then reads both along one contiguous run.
    """
    if backend != "cuda" or step.strategy != "reduce" or len(ops) != 2:
        return None
    if min(lay.size for _, lay, _ in ops) < REDUCE_ALIGN_MIN or _inner_run(step) >= REDUCE_ALIGN_RUN:
        return None
    j = 0 if ops[0][1].size * ops[0][2].itemsize < ops[1][1].size * ops[1][2].itemsize else 1
    ref, lay = ops[1 - j][1], ops[j][1]
    pos = {l: -abs(s) for l, s in zip(ref.labels, ref.strides)}
    own = dict(zip(lay.labels, lay.strides))
    labels = tuple(sorted(lay.labels, key=lambda l: (l in pos, pos.get(l, -abs(own[l])))))
    ext = dict(zip(lay.labels, lay.extents))
    copied = Layout(labels, tuple(ext[l] for l in labels), row_major(tuple(ext[l] for l in labels)))
    layouts = [o[1] for o in ops]
    layouts[j] = copied
    trial = make_step([o[0] for o in ops], layouts, res_buf, res_lay, [o[2] for o in ops], res_dt, cmp,
                      None, backend)
    return (j, labels) if trial.strategy == "reduce" and _inner_run(trial) >= 4 * _inner_run(step) else None


def _mixed_last(ops):
    """The two operands with the smaller one last: it becomes M, twice its bytes in scratch."""
    return ops if ops[1][1].size <= ops[0][1].size else [ops[1], ops[0]]


GPU_A_COPY_MIN = 1 << 15  # A's elements from which the GPU rewrite copies a scattered A into GEMM order


def _gpu_a_order(la: Layout, lb: Layout, res_lay: Layout):
    """Labels of A in GEMM order ([batch, m] in C's order, k in M's, the unit-stride k last)
    when the GPU's GEMM would otherwise reach A through offset tables, else None.

    A tensor network's intermediates keep labels in whatever order the path left them, so
    A's M and K modes interleave (Sycamore: ~20 modes of extent 2 each). The GEMM kernels
    would then read A and C through offset tables as big as the M group (2**27 entries, a
    GiB per table, per step) and gather every load (cost.GATHER: 0.3 of the rate), and the
    skinny kernel would get 2-element lanes. One bandwidth-bound transpose of A into
    [batch, m, k] (complex elements, the tiled transpose kernel) makes every group of A and
    C a single stride: the GEMM reads no tables.
    """
    sa, sc, sb = (dict(zip(l.labels, l.strides)) for l in (la, res_lay, lb))
    batch = sorted((l for l in la.labels if l in sc and l in sb), key=lambda l: -abs(sc[l]))
    ms = sorted((l for l in la.labels if l in sc and l not in sb), key=lambda l: -abs(sc[l]))
    ks = sorted((l for l in la.labels if l not in sc), key=lambda l: -abs(sa[l]))
    live = [l for l, n in zip(la.labels, la.extents) if n != 1 and l in ks]
    k_unit = not live or abs(sa[min(live, key=lambda l: abs(sa[l]))]) == 1  # p then extends K
    if k_unit and all(_affine(g, la) for g in (batch, ms, ks)):
        return None
    return batch + ms + ks


@dataclass(frozen=True)
class Run:
    """Labels a copy step moves as one mode: consecutive in its output, contiguous in its input."""

    labels: tuple

    def __str__(self):
        return "(" + label_text(self.labels) + ")"


TRANSPOSE_MIN_RUN = 32  # unit-stride run below which the tiled transpose's tiles (sides of 32 or more) mostly idle


def _permutes(step: Step) -> bool:
    from .codegen.cuda.emit_permute import permute_sets
    return permute_sets(step) is not None


def _copy_step(src_buf, src: Layout, dst_buf, dst: Layout, dtype, backend):
    """A copy of ``src`` into ``dst`` (row-major, ``src``'s labels in another order) with every
    run of labels that both walk contiguously coalesced into one mode (Sycamore's extent-2
    modes: ~25 become a few). The tiled transpose kernel takes it when both unit-stride runs
    fill its tiles; shorter runs (2 x 2 tiles: 1/256 of each tile used) go to the element-wise
    loop kernel instead -- on the GPU only when the permute kernel cannot tile them by
    whole modes (emit_permute.permute_sets)."""
    st, ex = dict(zip(src.labels, src.strides)), dict(zip(src.labels, src.extents))
    runs = []
    for l in dst.labels:
        if ex[l] == 1:
            continue
        if runs and st[runs[-1][-1]] == st[l] * ex[l]:
            runs[-1].append(l)
        else:
            runs.append([l])
    labels = tuple(Run(tuple(r)) for r in runs)
    extents = tuple(int(np.prod([ex[l] for l in r])) for r in runs)
    a = Layout(labels, extents, tuple(st[r[-1]] for r in runs))
    b = Layout(labels, extents, row_major(extents))
    unit = lambda lay: max((n for n, s_ in zip(lay.extents, lay.strides) if abs(s_) == 1), default=1)
    small = min(unit(a), unit(b)) < TRANSPOSE_MIN_RUN and unit(a) != 1 and a.strides[-1] != 1
    step = make_step([src_buf], [a], dst_buf, b, [dtype], dtype, dtype, "reduce", backend)
    if small and not (backend == "cuda" and _permutes(step)):
        step = make_step([src_buf], [a], dst_buf, b, [dtype], dtype, dtype, "generic", backend)
    return step


def _gemm_operands(ops, res_lay, backend):
    """(A, B) as the rewrite uses them, B the smaller; on the GPU, A's layout after its
    GEMM-order copy (or None: no copy)."""
    (a, la, dt), (b, lb, db) = _mixed_last(ops)
    order = _gpu_a_order(la, lb, res_lay) if backend == "cuda" and la.size >= GPU_A_COPY_MIN else None
    if order is None:
        return (a, la, dt), (b, lb, db), None
    ext = dict(zip(la.labels, la.extents))
    extents = tuple(ext[l] for l in order)
    return (a, la, dt), (b, lb, db), Layout(tuple(order), extents, row_major(extents))


def complex_as_real_pays(ops, res_lay, res_dt, compute, strategy, backend) -> bool:
    """Whether a complex binary step should run as a real GEMM (GEMM-sized steps).

    One rule for both backends: the step must be complex throughout and GEMM-shaped (an
    M and a K group), and the real GEMM it becomes must be one the backend's strategy
    choice sends to its GEMM kernels (``strategy="gett"`` forces it). The CPU counts
    FLOPs against GETT_MIN_WORK (a complex matrix-vector product still pays: its N of 2
    real columns runs on the packed kernel); the GPU asks its cost model (cost.py
    gemm_strategy, through make_step) whether gett, skinny included, beats a reduction.
    """
    if len(ops) != 2 or compute.kind != "c" or strategy not in (None, "gett"):
        return False
    if res_dt != compute or any(d != compute for _, _, d in ops):
        return False
    real = np.dtype(compute.char.lower())
    (_, la, _), (_, lb, _), copied = _gemm_operands(ops, res_lay, backend)
    la, lm, lc = _real_gemm_layouts(copied or la, lb, res_lay)
    probe = make_step([0, 1], [la, lm], 2, lc, [real, real], real, real, strategy, backend)
    if not {"m", "k"} <= {m.kind for m in probe.modes if not isinstance(m.label, Part)}:
        return False
    if backend == "cpu":  # 8 real FLOPs per complex multiply-add, against 2 per real one
        return strategy == "gett" or probe.flops >= 2 * GETT_MIN_WORK
    return probe.strategy == "gett"


def complex_as_real(ops, res_buf, res_lay, buffers, temp, backend="cpu"):
    """A complex binary step as real kernels: (steps building M, the real GEMM's operands,
    its result); the caller plans that GEMM like any real one (4 real FLOPs per complex).

    Returns ``(steps, [(A alias, layout, real), (M, layout, real)], (C alias, layout, real))``.
    Aliases are ``Buffer("alias", real, 0, base, (element offset,))``: the executors
    resolve them to the base buffer's address plus the offset on every call; the signs
    are a ``Buffer("const", ...)`` (uploaded once per executable on the GPU).
    """
    (a, la, dt), (b, lb, _), copied = _gemm_operands(ops, res_lay, backend)
    real = np.dtype(dt.char.lower())
    pre = []
    if copied is not None:  # A into GEMM order first (a complex copy: the tiled transpose kernel)
        ta, _ = temp(copied.labels, copied.extents, dt)
        pre.append(_copy_step(a, la, ta, copied, dt, backend))
        a, la = ta, copied

    def alias(buf, offset=0):  # buf seen as the real dtype, from an element offset
        buffers.append(Buffer("alias", real, 0, buf, (offset,) if offset else ()))
        return len(buffers) - 1

    la2, want, out = _real_gemm_layouts(la, lb, res_lay)
    mixed, mixed_lay = temp(want.labels, want.extents, real)
    # M[.., re, .., r] = B[.., r]: a copy into the first half of each 2x2 block
    st = dict(zip(mixed_lay.labels, mixed_lay.strides))
    half = Layout(lb.labels + (_PR,), lb.extents + (2,), tuple(st[l] for l in lb.labels) + (1,))
    copy = make_step([alias(b)], [_real_view(lb, _PB)], alias(mixed),
                     Layout(half.labels[:-1] + (_PB,), half.extents, half.strides), [real], real, real, "reduce",
                     backend)
    # M[.., im, r] = B[.., 1 - r] * (-1, 1)[r]: B's parts reversed (from the imaginary one,
    # stride -1), times the signs, into the second half (one stride of p on)
    rev = Layout(lb.labels + (_PR,), lb.extents + (2,), tuple(2 * s for s in lb.strides) + (-1,))
    buffers.append(Buffer("const", real, 2, data=_SIGNS))
    signs = len(buffers) - 1
    flip = make_step([alias(b, 1), signs], [rev, Layout((_PR,), (2,), (1,))], alias(mixed, st[_PA]), half,
                     [real, real], real, real, "reduce", backend)
    return pre + [copy, flip], [(alias(a), la2, real), (mixed, mixed_lay, real)], (alias(res_buf), out, real)


SPLIT_K_MIN = 2048  # K below which one tile's sequential K loop is short enough anyway
SPLIT_K_SLICE = 256  # the shortest K slice worth a tile's prologue and epilogue
# the most K slices tried (partial sums cost S times the output's bytes); EINC_SPLIT_K_MAX
# for A/B runs. 64 allowed only divisors of one mode up to 64: TCCG's lki,kjl->ji (9 tiles)
# got 24 slices = 216 blocks on 264 slots; 192 (= l) fills 1728 blocks, 6.5 waves
SPLIT_K_MAX = int(os.environ.get("EINC_SPLIT_K_MAX", 256))


def _split_candidates(k_total: int, k_extents, exact: bool = False) -> list:
    """K split factors worth predicting: 1, and every S up to SPLIT_K_MAX that the cuts of
    _split_cuts make exactly (one mode S divides, or several modes' divisors multiplied,
    ``k_extents`` outermost first; an int: one mode) and that leave slices of at least
    SPLIT_K_SLICE (short K is outside what the cost model was fitted on). ``exact``: also
    every product of one divisor per mode (_exact_cuts); einc tune offers them everywhere,
    the model only on fp32 SIMT steps (where session 18 measured them), as it ranks them
    wrongly on tensor cores (bf16 72^5 by 8 x 8 x 2: fastest as a split, slowest as a step).

    >>> _split_candidates(384 * 376, [384, 376])[-5:], _split_candidates(4096, 4096)
    ([94, 96, 128, 188, 192], [1, 2, 4, 8, 16])
    >>> _split_candidates(384 * 376, [384, 376], exact=True)[-5:]
    [128, 141, 188, 192, 256]
    """
    if k_total < SPLIT_K_MIN:
        return [1]
    exts = [k_extents] if isinstance(k_extents, (int, np.integer)) else [int(e) for e in k_extents]
    top = min(SPLIT_K_MAX, k_total // SPLIT_K_SLICE)
    modes = list(enumerate(exts))
    return [1] + [s for s in range(2, top + 1)
                  if int(np.prod([d for _, d in _split_cuts(modes, s, exact)], dtype=np.int64)) == s]


def split_k_factor(step: Step, in_dtypes=None) -> int:
    """How many K slices a GPU gett step should be cut into (1: none).

    When the output has too few tiles for the GPU's SMs, each tile walks all of K alone
    and most of the GPU idles; cutting one K mode into S slices makes S times more
    independent tiles (a batch mode), summed afterwards by a reduce step. S is the
    candidate with the lowest predicted time (cost.predict_split: gett at its best tile,
    plus the reduce over the partial sums) when it beats no split by more than cost.TIE;
    the smallest S within TIE of that best.
    """
    size = lambda kind: int(np.prod([m.extent for m in step.modes if m.kind == kind], dtype=np.int64))
    if step.strategy == "reduce":
        return _split_reduce_factor(step)
    if step.strategy != "gett" or config_tile(step) in ("smallmn", "stream"):  # (K itself / all K in one slice)
        return 1
    k_total = size("k")
    compute = np.dtype(step.compute)
    in_dtypes = tuple(in_dtypes or (compute, compute))
    M, N, batch = size("m"), size("n"), size("batch")
    family = gett_family(in_dtypes, compute, work=M * N * k_total * batch)
    # the SIMT fp32 kernel ranks the exact two-mode cuts as measured (session 18a: lki,kjl
    # 141 = l 3 x k 47 predicted 1.22 ms, measured 1.12, the fastest of 24; lik,jkl 144 1.66
    # / 1.36, the fastest); tensor-core steps keep the greedy list (tune.py: _split_candidates)
    exact = family == "gett/float32"
    summed = _summed_outer_first(step)
    cands = [s for s in _split_candidates(k_total, [m.extent for m in summed], exact)
             if s == 1 or not _cuts_short_runs(step, summed, s, exact, np.dtype(in_dtypes[0]).itemsize)]
    if len(cands) == 1:
        return 1
    items = (np.dtype(in_dtypes[0]).itemsize, compute.itemsize, compute.itemsize)
    prof = profile_for()
    times = [(predict_split(M, N, k_total, batch, s, items, family, prof)[1], s) for s in cands]
    best = min(times)[0]
    # a split must win by more than the model's error (TIE), not by a wave-quantisation sliver,
    # and among splits within TIE of the best the smallest moves the fewest partial sums
    if best >= times[0][0] * (1 - TIE):
        return 1
    return min(s for t, s in times if t <= best * (1 + TIE))


def _cuts_short_runs(step: Step, summed, split: int, exact: bool, itemsize: int) -> bool:
    """Whether cutting ``step``'s summed modes into ``split`` slices leaves an operand's
    unit-stride mode shorter than 16 bytes: its loads can no longer be vectors, which the
    model does not see (session 18a, fp32 lki,kjl, B's unit-stride l = 384 cut by 128 into
    runs of 3: 1.35 ms measured, 1.34 predicted; by 192, runs of 2: 1.46 / 1.26; the 141
    that keeps runs of 128: 1.12 / 1.22)."""
    j_of = {m.label: j for j, m in enumerate(step.modes)}
    for label, d in _split_cuts([(m.label, m.extent) for m in summed], split, exact):
        j = j_of[label]
        if any(abs(row[j]) == 1 for row in step.strides[1:]) and step.modes[j].extent // d * itemsize < 16:
            return True
    return False


def smallmn_steps(step: Step, ops, tgt_buf, tgt_lay, tgt_dt, temp, backend) -> list:
    """``step``, or the smallmn kernel's two steps when it wants its K cut into parts
    (emit_smallmn.smallmn_cut: several K modes, so that the parts fill the GPU's resident
    blocks once): the GEMM over the cut operands, slice indices as batch modes, into a
    temporary [slices, C's labels], then a reduce step summing the slices in order into
    the target (deterministic, unlike atomics)."""
    if config_tile(step) != "smallmn":
        return [step]
    from dataclasses import replace
    from .codegen.cuda.emit_smallmn import TILE, flat_parts, smallmn_cut
    compute = np.dtype(step.compute)
    in_dtypes = [d for _, _, d in ops]
    dts = [compute] + [np.dtype(d) for d in in_dtypes]
    parts = flat_parts(step, dts, compute)
    if parts == 1:
        return [step]
    if parts:  # the flat split: part p's tile at slot p of a [parts, C's labels] temporary
        tb, tl = temp((PART,) + tuple(tgt_lay.labels), (parts,) + tuple(tgt_lay.extents), compute)
        slot = Layout(tl.labels[1:], tl.extents[1:], tl.strides[1:])
        gemm = make_step([b for b, _, _ in ops], [lay for _, lay, _ in ops], tb, slot, in_dtypes, compute, compute,
                         "gett", backend)
        gemm = replace(gemm, config=(("tile", TILE), ("parts", parts), ("part_stride", tl.strides[0])))
        return [gemm, make_step([tb], [tl], tgt_buf, tgt_lay, [compute], tgt_dt, compute, None, backend)]
    cut = dict(smallmn_cut(step, dts, compute))
    if not cut:
        return [step]

    def cut_layout(lay: Layout) -> Layout:
        labels, extents, strides = [], [], []
        for l, e, st in zip(lay.labels, lay.extents, lay.strides):
            if l in cut:
                labels += [KSlice(l), l]
                extents += [cut[l], e // cut[l]]
                strides += [st * (e // cut[l]), st]
            else:
                labels.append(l)
                extents.append(e)
                strides.append(st)
        return Layout(tuple(labels), tuple(extents), tuple(strides))

    kept = tuple(KSlice(l) for l in cut)
    tb, tl = temp(kept + tuple(tgt_lay.labels), tuple(cut.values()) + tuple(tgt_lay.extents), compute)
    gemm = make_step([b for b, _, _ in ops], [cut_layout(lay) for _, lay, _ in ops], tb, tl, in_dtypes, compute,
                     compute, "gett", backend)
    gemm = replace(gemm, config=(("tile", TILE),))
    return [gemm, make_step([tb], [tl], tgt_buf, tgt_lay, [compute], tgt_dt, compute, None, backend)]


SPLIT_SUM_MIN = 1 << 16  # summed elements per output below which one team per output suffices


def _split_reduce_factor(step: Step) -> int:
    """Slices for a GPU reduction with too few outputs to occupy the GPU (a long dot).

    The reduce kernel gives each output one team of threads; a handful of outputs over
    millions of terms would leave all but a few SMs idle. Cutting the largest summed mode
    into S slices gives S times more outputs, summed by a second, small reduce step.
    """
    summed = _summed_outer_first(step)
    if not summed:
        return 1
    outputs = int(np.prod([m.extent for m in step.modes if m.kind not in ("k", "sum")], dtype=np.int64))
    total = int(np.prod([m.extent for m in summed], dtype=np.int64))
    return _reduce_split(outputs, total, max(m.extent for m in summed), [m.extent for m in summed])


def _summed_outer_first(step: Step) -> list:
    """The step's summed modes, the largest operand stride first (so a multi-mode split cuts
    the outermost and the inner modes stay one contiguous run)."""
    j_of = {m.label: j for j, m in enumerate(step.modes)}
    outer = lambda m: -max(abs(row[j_of[m.label]]) for row in step.strides[1:])
    return sorted((m for m in step.modes if m.kind in ("k", "sum")), key=outer)


def _reduce_split(outputs: int, total: int, biggest: int, extents=None) -> int:
    """_split_reduce_factor from the sizes alone (the cost model predicts reduce with it).
    With the summed ``extents``, several modes may be cut (see _split_cuts): a network of
    extent-2 modes (Sycamore's last step sums 2**28 terms over 24 of them) would otherwise
    get a split of 2 -- two teams of threads for the whole GPU."""
    sms = profile_for().sms  # the split only decides speed, never correctness
    if outputs >= 4 * sms or total < SPLIT_SUM_MIN:
        return 1
    want = min(1024, max(2, 8 * sms // max(outputs, 1)), total // 4096)
    if extents is not None:
        return int(np.prod([d for _, d in _split_cuts(list(enumerate(extents)), want)], dtype=np.int64))
    divisors = [d for d in range(2, want + 1) if biggest % d == 0]
    return max(divisors, default=1)


def _split_cuts(modes, split: int, exact: bool = False) -> list:
    """``(key, d)`` per summed mode to cut into d slices, from ``(key, extent)`` pairs,
    outermost first: the largest mode that ``split`` divides, alone; else (``exact``) the
    product of divisors that _exact_cuts finds, if any; else the modes in
    the order given, each cut by its largest divisor that still fits what is left of
    ``split`` (a tensor network's extent-2 modes: the outer ones, so the inner modes stay
    one contiguous run). The product of the cuts may fall short of ``split``."""
    whole = [(key, e) for key, e in modes if e % split == 0]
    if whole:
        return [(max(whole, key=lambda x: x[1])[0], split)] if split > 1 else []
    found = _exact_cuts(list(modes), split) if exact else None
    if found is not None:  # (where the greedy cuts below are exact, they are the same cuts)
        return found
    cuts, left = [], split
    for key, e in modes:
        if left < 2:
            break
        d = max((d for d in range(2, min(e, left) + 1) if e % d == 0), default=1)
        if d > 1:
            cuts.append((key, d))
            left //= d
    return cuts


def _exact_cuts(modes, split: int):
    """Cuts whose product is exactly ``split`` (a divisor of each mode, outermost first, the
    largest first), or None: TCCG's lki,kjl->ji sums l=384, k=376, and its 141 slices (l by
    3, k by 47) fill the waves that the greedy 128 (l by 128) leaves at 0.87."""
    if split == 1:
        return []
    # feasible iff every prime power of split fits in the modes' gcds with it; checked at
    # every level, so the search never enters a subtree without a solution (24 extent-2
    # modes of a tensor network: split 192 = 2^6 x 3 tried every choice of six modes, 0.84 s)
    if not modes or math.prod(math.gcd(e, split) for _, e in modes) % split:
        return None
    (key, e), rest = modes[0], modes[1:]
    for d in sorted((d for d in range(2, min(e, split) + 1) if e % d == 0 and split % d == 0), reverse=True):
        tail = _exact_cuts(rest, split // d)
        if tail is not None:
            return [(key, d)] + tail
    return _exact_cuts(rest, split)


@dataclass(frozen=True)
class KSlice:
    """The slice index of a K mode cut for split-K (``label`` = the mode it came from)."""

    label: object

    def __str__(self):
        return f"{label_text([self.label])}#"


PART = KSlice("part")  # the part index of the smallmn kernel's flat split (its partial tiles)


def _split_layouts(layouts, step: Step, split: int):
    """The operands with summed modes cut into (slice, rest) as _split_cuts chooses, the
    outermost first; returns the cut layouts and the kept slice labels with their extents."""
    cuts = dict(_split_cuts([(m.label, m.extent) for m in _summed_outer_first(step)], split, exact=True))

    def cut(lay: Layout) -> Layout:
        labels, extents, strides = [], [], []
        for l, e, st in zip(lay.labels, lay.extents, lay.strides):
            d = cuts.get(l)
            if d is None:
                labels.append(l)
                extents.append(e)
                strides.append(st)
            else:  # (a rest of extent 1 stays: the step keeps its summed modes)
                labels += [KSlice(l), l]
                extents += [d, e // d]
                strides += [st * (e // d), st]
        return Layout(tuple(labels), tuple(extents), tuple(strides))

    return [cut(lay) for lay in layouts], tuple((KSlice(l), d) for l, d in cuts.items())


class Knobs(NamedTuple):
    """A strategy with a non-default precision: how api.py passes ``precision`` through the
    same (hashable) channel as ``strategy``, into cache keys and down to plan()."""

    strategy: str | None
    precision: str


PRECISIONS = ("highest", "tf32")


def knobs(strategy, precision):
    """``strategy`` alone when ``precision`` is the default, else a Knobs (validated)."""
    if precision in (None, "highest"):
        return strategy
    if precision not in PRECISIONS:
        raise EincValueError(f"precision={precision!r}: use one of {', '.join(PRECISIONS)}")
    return Knobs(strategy, precision)


def plan(bound: Bound, out_strides, out_dtype, result_dtype, optimize="auto",
         memory_limit=None, strategy=None, backend="cpu", rewrites=True) -> Plan:
    """Turn a Bound into a Plan that writes an output with ``out_strides``.

    ``strategy`` is a kernel family name, None, or a Knobs (strategy and precision).
    ``rewrites=False`` (memory.plan_within, for memory_limit) adds no temporaries of its
    own: no GEMM-order or tensor-core copies, split-K, complex-as-real, and with
    ``strategy="generic"`` no pre-sums of private labels (the loop nest sums them)."""
    precision = "highest"
    if isinstance(strategy, Knobs):
        strategy, precision = strategy
    if strategy is not None and strategy not in STRATEGIES:
        raise EincValueError(f"strategy={strategy!r}: use one of {', '.join(STRATEGIES)}")
    path, _ = contraction_path(bound, optimize, memory_limit)
    compute = accumulator(np.dtype(result_dtype))
    # `einc tune`'s stored winners for this exact call (none: every choice is the cost model's)
    tuned = _tuned.lookup(bound, out_strides, out_dtype, result_dtype, optimize, memory_limit, backend, strategy,
                          precision)
    ext = dict(bound.extents)
    buffers = [Buffer("input", d, lay.size, i) for i, (lay, d) in enumerate(zip(bound.inputs, bound.dtypes))]
    live = [(i, lay, d) for i, (lay, d) in enumerate(zip(bound.inputs, bound.dtypes))]
    steps: list[Step] = []

    def temp(labels, extents=None, dtype=None):
        extents = tuple(ext[l] for l in labels) if extents is None else tuple(extents)
        lay = Layout(tuple(labels), extents, row_major(extents))
        buffers.append(Buffer("temp", compute if dtype is None else dtype, lay.size))
        return len(buffers) - 1, lay

    out_buf = len(buffers)
    buffers.append(Buffer("output", np.dtype(out_dtype), 0))
    out_layout = Layout(bound.output, tuple(ext[l] for l in bound.output), tuple(out_strides))

    for k, contraction in enumerate(path):
        ops = [live.pop(i) for i in sorted(contraction, reverse=True)][::-1]
        needed = set(bound.output).union(*(set(lay.labels) for _, lay, _ in live))
        last = k == len(path) - 1
        if len(ops) == 2 and (rewrites or strategy != "generic"):  # sum out private labels first
            for j, (bi, lay, dt) in enumerate(ops):
                other = set(ops[1 - j][1].labels)
                keep = [l for l in lay.labels if l in needed or l in other]
                if len(keep) < len(lay.labels):
                    tb, tl = temp(keep)
                    steps.append(make_step([bi], [lay], tb, tl, [dt], compute, compute, strategy,
                                               backend))
                    ops[j] = (tb, tl, compute)
        labels_in = [l for _, lay, _ in ops for l in lay.labels]
        if last:
            res_buf, res_lay, res_dt = out_buf, out_layout, np.dtype(out_dtype)
        else:
            kinds = classify([lay for _, lay, _ in ops], Layout(tuple(l for l in labels_in if l in needed), (), ()))
            keep = list(dict.fromkeys(l for l in labels_in if l in needed))
            rank = {"batch": 0, "m": 1, "n": 2, "free": 1}
            keep.sort(key=lambda l: rank.get(kinds.get(l), 1))
            (res_buf, res_lay), res_dt = temp(keep), compute
        done, cmp = (res_buf, res_lay, res_dt), compute  # what the step leaves live; its accumulator
        if rewrites and complex_as_real_pays(ops, res_lay, res_dt, compute, strategy, backend):
            # M's copies, then the real GEMM, planned below like any real one (GPU copies, split-K)
            pre, ops, (res_buf, res_lay, res_dt) = complex_as_real(ops, res_buf, res_lay, buffers, temp, backend)
            steps += pre
            cmp = res_dt
            ext.update((l, n) for lay in (*(o[1] for o in ops), res_lay) for l, n in zip(lay.labels, lay.extents))
        step = make_step([b for b, _, _ in ops], [lay for _, lay, _ in ops], res_buf, res_lay,
                         [d for _, _, d in ops], res_dt, cmp, tuned.strategy(k, strategy), backend)
        final = None  # (temp buffer, layout) the GEMM writes when the output needs a permutation
        skinny = config_tile(step) in ("skinny", "smallmn")  # reads every operand in place
        if (rewrites and backend == "cuda" and strategy is None and step.strategy == "gett" and len(ops) == 2
                and not skinny):
            tc = tensor_core_copies(step, ops, precision)
            if tc is not None and config_tile(step) == "stream" and os.environ.get("EINC_STREAM_COPY") == "0":
                tc = [None, None]  # (an A/B switch: the stream kernel reads both operands in place)
            new_ops, copies, c_order = (ops, tc, None) if tc is not None else gpu_contiguous(step, ops)
            for j, (labels, (b0, l0, d0)) in enumerate(zip(copies, ops)):
                if labels is not None:  # copy the operand into its GEMM order (row-major),
                    tb, tl = temp(labels, dtype=d0)  # in its own dtype (fp16 stays tensor-core food)
                    steps.append(make_step([b0], [l0], tb, tl, [d0], d0, cmp, "reduce", backend))
                    ops[j] = (tb, tl, d0)
            if c_order is not None:
                final = temp(c_order, dtype=cmp)
            tgt_buf, tgt_lay, tgt_dt = (final[0], final[1], cmp) if final else (res_buf, res_lay, res_dt)
            if any(c is not None for c in copies) or final:
                step = make_step([b for b, _, _ in ops], [lay for _, lay, _ in ops], tgt_buf, tgt_lay,
                                 [d for _, _, d in ops], tgt_dt, cmp, tuned.strategy(k, strategy), backend)
        else:
            tgt_buf, tgt_lay, tgt_dt = res_buf, res_lay, res_dt
            aligned = (reduce_aligned(step, ops, res_buf, res_lay, res_dt, cmp, backend)
                       if rewrites and strategy is None else None)
            if aligned is not None:
                j, labels = aligned
                b0, l0, d0 = ops[j]
                tb, tl = temp(labels, dtype=d0)
                steps.append(_copy_step(b0, l0, tb, tl, d0, backend))
                ops[j] = (tb, tl, d0)
                step = make_step([b for b, _, _ in ops], [lay for _, lay, _ in ops], res_buf, res_lay,
                                 [d for _, _, d in ops], res_dt, cmp, tuned.strategy(k, strategy), backend)
        split = (tuned.split(k, step, [d for _, _, d in ops], split_k_factor)
                 if rewrites and backend == "cuda" and strategy is None else 1)
        if split > 1:  # two steps: partial sums over K slices, then a sum over the slices
            cut, kept = _split_layouts([lay for _, lay, _ in ops], step, split)
            tb, tl = temp(tuple(l for l, _ in kept) + tuple(tgt_lay.labels),
                          tuple(d for _, d in kept) + tuple(tgt_lay.extents), cmp)
            steps.append(tuned.tiled(k, make_step([b for b, _, _ in ops], cut, tb, tl, [d for _, _, d in ops],
                                                  cmp, cmp, step.strategy, backend)))
            steps.append(make_step([tb], [tl], tgt_buf, tgt_lay, [cmp], tgt_dt, cmp, None, backend))
        else:
            step = tuned.tiled(k, step)
            steps += smallmn_steps(step, ops, tgt_buf, tgt_lay, tgt_dt, temp, backend)
        if final:  # the GEMM's row-major result, permuted into the real output
            steps.append(make_step([final[0]], [final[1]], res_buf, res_lay, [cmp], res_dt, cmp,
                                   "reduce", backend))
        live.append(done)

    temps = [b.size for b in buffers if b.role == "temp"]
    return Plan(bound, tuple(buffers), tuple(steps), out_buf, out_layout.extents, np.dtype(out_dtype),
                tuple(path), max(temps, default=0), backend=backend,
                out_strides=tuple(out_strides), notes=tuned.notes, precision=precision)
