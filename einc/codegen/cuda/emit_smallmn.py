"""GEMM steps with a small output and a huge K: the `smallmn` kernel (kernels/smallmn.cuh).

A gett step whose M and N groups each have at most ``MN_MAX`` elements (and no batch
modes) while K is long (``abcd,dbea->ec`` at 72^5: M = N = 72, K = 373,248) fills no GPU
with output tiles. The smallmn kernel gives every block the whole M x N output, exactly
sized, for one part of K, reading both operands along their own unit-stride K modes
(no transposed copy of B); the plan cuts K modes into slices (batch modes here, one block
each; or, by default, keeps K whole and gives every resident block every parts-th slice)
and sums the partial tiles afterwards (plan.smallmn_steps).

>>> import einc.api
>>> from einc.codegen.cuda.emit import emit_step
>>> p = einc.api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
>>> [s.strategy for s in p.steps], p.steps[0].config
(['gett', 'reduce'], (('tile', 'smallmn'), ('parts', 132), ('part_stride', 5184)))
>>> k = emit_step(p, p.steps[0])
>>> k.name.startswith("einc_smallmn_"), k.block, k.grid
(True, (480, 1, 1), (132, 1, 1))
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...ir import Step
from .emit import (_ACC_SIZE, _COMPUTE, sm_count, VERSION, CudaStepKernel, _assemble, _cdiv, _gett_applies,
                   _group_offsets, _header, _label, _merge, _name, _types)

TILE = "smallmn"
MN_MAX = 128  # rows of A and of B one block keeps (RP, CP)
K_MIN = 65536  # K below which the model keeps the tiled kernels (K-order copy, split-K): a guess,
# conservative until smallmn is measured on shorter K than 72^3
BK = 32  # k per slice (TX x TY); EINC_SMALLMN_BK=64 (experiments, not yet measured): half the barriers
MIN_SLICES = 8  # slices per part below which a part is mostly pipeline prologue
SMEM_PER_SM = 227 * 1024
# by accumulator size, in order of preference: (32-bit registers the micro-tile's
# accumulators and fragments may take, threads at most, blocks per SM for __launch_bounds__)
LIMITS = {4: ((84, 320, 2), (120, 512, 1)), 8: ((168, 384, 1), (232, 256, 1))}
# fp32 steps multiply on the fp64 tensor cores (mma.sync m16n8k16 .f64, sm_90): exact products,
# 53-bit sums, one rounding to fp32 per partial tile. EINC_SMALLMN_DMMA=0 keeps the FFMA tiles
# (other GPUs take them anyway: fp64_tensor_cores).
DMMA = os.environ.get("EINC_SMALLMN_DMMA", "1") != "0"
DMMA_FRAGS = 12  # 16x8 fragments per warp at most (8 accumulator words each)
DMMA_WARPS = 16  # warps per k-group at most


@dataclass(frozen=True)
class SmallLayout:
    """The step as C[b, m, n] = sum_k A[b, m, k] B[b, k, n], K walked as the box (rest, y, x).

    Every mode list holds (extent, (sC, sA, sB)); ``x``/``y`` are single modes (y None when
    absent); ``a_ord``/``b_ord``: 0 when the operand's loads should run along x, 1 along y.
    """

    b: list
    m: list
    n: list
    x: tuple
    y: tuple | None
    rest: list
    a_ord: int
    b_ord: int
    labels: dict

    @property
    def sizes(self) -> tuple:
        """(batch, M, N, K)."""
        ks = [self.x] + ([self.y] if self.y else []) + self.rest
        return tuple(_prod(ms) for ms in (self.b, self.m, self.n, ks))


def _prod(modes) -> int:
    return int(np.prod([e for e, _ in modes], dtype=np.int64)) if modes else 1


def k_box(ks: list) -> tuple:
    """(x, y, rest, a_ord, b_ord) of a K group (mode list, merged where contiguous)."""
    unit = lambda t: next((k for k in ks if abs(k[1][t]) == 1 and k[0] > 1), None)
    x = unit(1) or unit(2) or max(ks, key=lambda e: e[0])
    others = [k for k in ks if k is not x]
    y = unit(2) if unit(2) is not None and unit(2) is not x else None
    if y is None and x[0] < 64 and others:  # (a short x: the box takes a second K mode)
        y = max(others, key=lambda e: e[0])
    rest = [k for k in others if k is not y]
    order = lambda t: 0 if abs(x[1][t]) == 1 else 1 if y is not None and abs(y[1][t]) == 1 else 0
    return x, y, rest, order(1), order(2)


def smallmn_layout(step: Step, k_min: int | None = None) -> SmallLayout | None:
    """The smallmn view of a gett step, or None: M and N at most MN_MAX. With ``k_min``
    None (the plan's choice), no batch modes and K at least K_MIN; else (a step the plan
    already cut, or a forced tile) any batch and K at least ``k_min``."""
    if len(step.operands) != 2:
        return None
    groups = {"batch": [], "m": [], "n": [], "k": []}
    labels = {"batch": [], "m": [], "n": [], "k": []}
    for j, mode in enumerate(step.modes):
        if mode.kind not in groups or (mode.kind == "batch" and k_min is None):
            return None
        groups[mode.kind].append((mode.extent, tuple(step.strides[t][j] for t in range(3))))
        labels[mode.kind].append(_label(mode.label))
    if not groups["k"] or not groups["m"] or not groups["n"]:
        return None
    ext = {g: _prod(ms) for g, ms in groups.items()}
    if not (ext["m"] <= MN_MAX and ext["n"] <= MN_MAX and ext["k"] >= (K_MIN if k_min is None else k_min)):
        return None
    ks = _merge(sorted(groups["k"], key=lambda e: -abs(e[1][1])))
    x, y, rest, a_ord, b_ord = k_box(ks)
    return SmallLayout(groups["batch"], groups["m"], groups["n"], x, y, rest, a_ord, b_ord, labels)


def smallmn_applies(step: Step, dtypes, compute) -> bool:
    """Whether the plan may run ``step`` on the smallmn kernel (real GEMM-shaped, small output, long K)."""
    return _gett_applies(step, dtypes, compute) and smallmn_layout(step) is not None


def box(x, y, bk: int = 32) -> tuple:
    """(TX, TY): the slice's box for K modes x and y (None: absent), TX x TY = bk, least
    padded work; ties to TX = 8 (whole 32-byte sectors of fp32 along x)."""
    if y is None:
        return bk, 1
    ex, ey = x[0], y[0]
    cands = [(tx, bk // tx) for tx in (1, 2, 4, 8, 16, 32, 64) if tx <= bk]
    return min(cands, key=lambda c: (_cdiv(ex, c[0]) * c[0] * _cdiv(ey, c[1]) * c[1], abs(c[0].bit_length() - 4)))


def box_efficiency(ks: list, bk: int = 32) -> tuple:
    """(useful / padded k of the box walk, slices) for a K group."""
    ks = _merge(sorted(ks, key=lambda e: -abs(e[1][1])))
    x, y, rest, _, _ = k_box(ks)
    tx, ty = box(x, y, bk)
    ey = y[0] if y else 1
    padded = _cdiv(x[0], tx) * tx * _cdiv(ey, ty) * ty
    return (x[0] * ey / padded if padded else 1.0), _prod(rest) * _cdiv(x[0], tx) * _cdiv(ey, ty)


def micro_tile(M: int, N: int, acc: int) -> tuple:
    """(RM, RN, TM, TN, KG, blocks per SM): registers per thread, threads per group, groups.

    The least estimated time per useful FMA: padded output (TM RM x TN RN over M x N),
    idle lanes of the last warp, and the shared-memory loads per FMA (RM + RN per
    QK RM RN), among the tiles whose accumulators and fragments fit the first LIMITS
    entry that has one (two blocks per SM for fp32 up to about 72 x 72).
    """
    for limits in LIMITS[8 if acc > 4 else 4]:
        got = _micro_tile(M, N, acc, *limits)
        if got is not None:  # EINC_SMALLMN_MINB=1 (experiments): one block per SM, registers for unrolling
            return got + (int(os.environ.get("EINC_SMALLMN_MINB", 0)) or limits[2],)
    raise AssertionError(f"no smallmn tile for {M} x {N}")  # MN_MAX keeps this unreachable


def _micro_tile(M, N, acc, regs, max_nt, _):
    words, qk = max(1, acc // 4), 16 // acc
    best = None
    for rm in range(1, 9):
        for rn in range(1, 9):
            if (rm * rn + qk * (rm + rn)) * words > regs:
                continue
            tm, tn = _cdiv(M, rm), _cdiv(N, rn)
            if tm * rm > MN_MAX + rm - 1 or tn * rn > MN_MAX + rn - 1:
                continue
            g = tm * tn
            if g > max_nt:
                continue
            kg = 1
            while kg * 2 <= 32 // qk and kg * 2 * g <= max_nt:  # (whole 16-byte pieces of a 32-k slice)
                kg *= 2
            nt = _cdiv(kg * g, 32) * 32
            if nt > max_nt:
                continue
            score = (tm * rm * tn * rn) / (M * N) * nt / (kg * g) * (1 + 2 * (rm + rn) / (qk * rm * rn))
            score *= 1 + 0.5 * max(0, 128 - nt) / 128  # too few warps hide no latency
            if best is None or score < best[0] - 1e-12:
                best = (score, (rm, rn, tm, tn, kg))
    return None if best is None else best[1]


def dmma_tile(M: int, N: int):
    """(FM, FN, WM, WN, KG, blocks per SM) for the fragment path, or None where no tile fits
    the registers: FM x FN fragments of 16 x 8 per warp, WM x WN warps per k-group, KG
    k-groups. The least padded output, weighted by the fp32 -> fp64 conversions per product
    ((8 FM + 4 FN) per FM FN products; a warp's conversion costs about an eighth of a
    product), then enough warps to hide latency.
    EINC_SMALLMN_DTILE=FM,FN and EINC_SMALLMN_KG (experiments) force the choice."""
    force = os.environ.get("EINC_SMALLMN_DTILE")
    forced = tuple(int(v) for v in force.split(",")) if force else None
    best = None
    for fm in range(1, 7):
        for fn in range(1, 13):
            if fm * fn > DMMA_FRAGS or (forced and (fm, fn) != forced):
                continue
            wm, wn = _cdiv(M, 16 * fm), _cdiv(N, 8 * fn)
            # one k-group: two (each one 16-k half of a slice) measured slower, 0.212 against
            # 0.173 ms at 72^5 (session 11b: the fp64 group sums, and one block per SM either way)
            kg = int(os.environ.get("EINC_SMALLMN_KG", 0)) or 1
            warps = wm * wn * kg
            if wm * wn > DMMA_WARPS or dmma_registers(fm, fn) > min(255, 65536 // (32 * warps)):
                continue
            pad = 128 * fm * wm * fn * wn / (M * N)
            score = pad * (1 + (8 * fm + 4 * fn) / (8 * fm * fn)) * (1 + 0.5 * max(0, 8 - warps) / 8)
            if best is None or score < best[0] - 1e-12:
                best = (score, (fm, fn, wm, wn, kg))
    if best is None:
        return None
    fm, fn, wm, wn, kg = best[1]
    per_sm = 65536 // (32 * wm * wn * kg * dmma_registers(fm, fn))
    return fm, fn, wm, wn, kg, max(1, min(2, per_sm))


def dmma_registers(fm: int, fn: int) -> int:
    """Estimated registers: fp64 accumulators, the warp's A fragments and one B fragment in
    fp64, addresses and the copy state."""
    return 8 * fm * fn + 16 * fm + 8 + 72  # (ptxas: 168 at 1 x 9)


FP64_TENSOR_ARCHS = (90, 100)  # sm_90 (H100/H200), sm_100 (B200): mma m16n8k{8,16} .f64 at full rate


def fp64_tensor_cores(arch: str) -> bool:
    """Whether ``arch`` ("sm_90", "sm_90a", ...) runs fp64 mma at a rate worth fp32 work:
    sm_80's m8n8k4 measures no faster than FFMA, and sm_86/89/120 run fp64 at 1/64."""
    digits = "".join(ch for ch in arch[3:] if ch.isdigit())
    return bool(digits) and int(digits) in FP64_TENSOR_ARCHS


def dmma_applies(dtypes, compute, arch: str = "sm_90") -> bool:
    """Whether the fragment path runs the step: fp32 everywhere (async copies, no conversion)
    on a GPU with full-rate fp64 tensor cores."""
    return DMMA and compute.name == "float32" and _async_ok(dtypes, compute) and fp64_tensor_cores(arch)


def _async_ok(dtypes, compute) -> bool:
    return compute.name in ("float32", "float64", "int32", "int64") and all(d == compute for d in dtypes[1:])


def geometry(step: Step, dtypes, compute, arch: str = "sm_90") -> dict:
    """Everything the kernel's shape depends on: tile, box, stages, threads, slices."""
    lay = smallmn_layout(step, 0)
    acc = _ACC_SIZE[_COMPUTE[compute.name][1]]
    nb, M, N, K = lay.sizes
    frag = dmma_tile(max(M, 1), max(N, 1)) if dmma_applies(dtypes, compute, arch) else None
    dm = frag is not None
    if dm:
        rm, rn, tm, tn, kg, minb = frag
        rp, cp, nt = 16 * tm * rm, 8 * tn * rn, 32 * tm * tn * kg
    else:
        rm, rn, tm, tn, kg, minb = micro_tile(max(M, 1), max(N, 1), acc)
        rp, cp, nt = tm * rm, tn * rn, _cdiv(kg * tm * tn, 32) * 32
    async_ok = _async_ok(dtypes, compute)
    tables = (rp + cp + 1) // 2 * 16
    budget = (SMEM_PER_SM - 2048 * minb) // minb
    pad = 16 if dm else 16 // acc  # (kernels/smallmn.cuh einc_small_pad)
    red = 8 if dm else acc  # (the group reduction's element: fp64 sums on the fragment path)
    smem = lambda s, bk: tables + max(s * (rp + cp) * (bk + pad) * acc, (kg - 1) * rp * cp * red)
    # the slice: 32 k (FFMA, measured); 64 k on the fragment path where two stages fit (half the
    # barriers per product: 72^5 0.212 -> 0.175 ms on 1x9 fragments, session 11b)
    bk = int(os.environ.get("EINC_SMALLMN_BK", 0)) or (64 if dm else BK)
    bk = 64 if bk == 64 and async_ok and smem(2, 64) <= budget else 32  # (the register path spills at 64)
    # stages: 3 (FFMA at 32 k: faster than 4, more L1 left), 2 on the fragment path at 64 k
    # (72^5: 0.154 against 0.161-0.169 ms with 3, session 11c); fewer where they don't fit
    stages = int(os.environ.get("EINC_SMALLMN_STAGES", 0)) or (2 if dm and bk == 64 else 3)
    stages = stages if async_ok else 2
    while stages > 2 and smem(stages, bk) > budget:
        stages -= 1
    tx, ty = box(lay.x, lay.y, bk)
    ex, ey = lay.x[0], lay.y[0] if lay.y else 1
    R = _prod(lay.rest)
    nx, ny = _cdiv(ex, tx), _cdiv(ey, ty)
    regs = dmma_registers(rm, rn) if dm else (rm * rn + 16 // acc * (rm + rn)) * max(1, acc // 4) + 32  # (estimates)
    per_sm = max(minb, min(32, 2048 // nt, SMEM_PER_SM // (smem(stages, bk) + 1024), 65536 // (nt * regs)))
    return dict(lay=lay, rm=rm, rn=rn, tm=tm, tn=tn, kg=kg, tx=tx, ty=ty, nt=nt, stages=stages, smem=smem(stages, bk),
                bk=bk, dm=dm, rp=rp, cp=cp,
                minb=minb, R=R, nx=nx, ny=ny, slices=R * nx * ny, async_ok=async_ok, per_sm=per_sm, batch=nb,
                M=M, N=N, K=K)


def flat_parts(step: Step, dtypes, compute) -> int:
    """Parts of the flat split for an uncut step (0: the cut split instead, EINC_SMALLMN_FLAT=0):
    one per resident block, fewer where parts would hold under MIN_SLICES slices; 1: the
    kernel writes C itself."""
    if os.environ.get("EINC_SMALLMN_FLAT", "1") == "0":
        return 0
    geo = geometry(step, dtypes, compute)
    return max(1, min(sm_count() * geo["per_sm"], geo["batch"] * geo["slices"] // MIN_SLICES))


def _divisors(n: int) -> list:
    return [d for d in range(1, n + 1) if n % d == 0]


def smallmn_cut(step: Step, dtypes, compute) -> tuple:
    """How the plan should cut the step's K modes for the kernel: ((label, slices), ...).

    The product of the slice counts is the number of blocks (partial tiles). The cut
    with the best (wave efficiency on SMs x resident blocks) x (box efficiency of the
    remaining K) x (a short-part penalty below MIN_SLICES slices a block) is taken; ties
    go to fewer parts (less partial-sum traffic). An empty cut: the kernel writes C.
    """
    geo = geometry(step, dtypes, compute)
    slots = sm_count() * geo["per_sm"]
    kmodes = [(m.label, m.extent, tuple(step.strides[t][j] for t in range(3)))
              for j, m in enumerate(step.modes) if m.kind == "k"]
    best = (0.0, 0, ())

    def score(cuts):
        parts, ks = 1, []
        for (label, e, st), f in zip(kmodes, cuts):
            parts *= f
            ks.append((e // f, st))
        eff, slices = box_efficiency(ks, geo["bk"])
        waves = parts / (_cdiv(parts, slots) * slots)
        short = min(1.0, slices / MIN_SLICES)
        return waves * eff * short, parts

    def walk(i, cuts, parts):
        nonlocal best
        if i == len(kmodes):
            val, n = score(cuts)
            if val > best[0] * (1 + 1e-9) or (val >= best[0] * (1 - 1e-9) and n < best[1]):
                best = (val, n, tuple(cuts))
            return
        for f in _divisors(kmodes[i][1]):
            if parts * f <= 2 * slots:
                walk(i + 1, cuts + [f], parts * f)
    walk(0, [], 1)
    return tuple((kmodes[i][0], f) for i, f in enumerate(best[2]) if f > 1)


def cut_step(step: Step, cut) -> Step:
    """``step`` with its K modes cut as ``cut`` says (slice modes as batch, C stride 0):
    what the cost model predicts; the plan builds the real one from its layouts."""
    from dataclasses import replace
    from ...ir import Mode
    from ...plan import KSlice
    f = dict(cut)
    modes, cols = [], []
    for j, m in enumerate(step.modes):
        st = [step.strides[t][j] for t in range(len(step.strides))]
        if m.label in f:
            n = m.extent // f[m.label]
            modes.append(Mode(KSlice(m.label), f[m.label], "batch"))
            cols.append([0] + [s * n for s in st[1:]])
            modes.append(Mode(m.label, n, m.kind))
        else:
            modes.append(m)
        cols.append(st)
    strides = tuple(tuple(c[t] for c in cols) for t in range(len(step.strides)))
    return replace(step, modes=tuple(modes), strides=strides, config=(("tile", TILE),))


def emit_smallmn(step: Step, dtypes, compute, a_vec=None, b_vec=None, arch: str = "sm_90") -> CudaStepKernel:
    """The kernel; with 16-byte pieces (``a_vec``/``b_vec``: None decides) it carries a
    scalar twin the runtime launches when an operand's pointer is not 16-byte aligned."""
    geo = geometry(step, dtypes, compute, arch)
    lay = geo["lay"]
    assert geo["slices"] < 2 ** 31, "the kernel decodes slices in 32 bits"
    tout, tcn, tan, tin = _types(dtypes, compute)
    sa, sb = tin
    async_ok, tx = geo["async_ok"], geo["tx"]
    tab_r = len(lay.rest) > 1
    a_item, b_item = dtypes[1].itemsize, dtypes[2].itemsize
    a_m, b_n = _group_offsets(lay.m, 1), _group_offsets(lay.n, 2)
    c_m, c_n = _group_offsets(lay.m, 0), _group_offsets(lay.n, 0)
    ys = lay.y[1] if lay.y else (0, 0, 0)
    rs = lay.rest[0][1] if len(lay.rest) == 1 else (0, 0, 0)
    r_a, r_b = (_group_offsets(lay.rest, t) if tab_r else np.array([rs[t]], np.int64) for t in (1, 2))
    b_a, b_b, b_c = (_group_offsets(lay.b, t) if lay.b else np.zeros(1, np.int64) for t in (1, 2, 0))
    tables = [a_m, b_n, c_m, c_n] + ([r_a, r_b] if tab_r else []) + [b_a, b_b, b_c]

    # 16-byte pieces along x for an x-fast operand with unit stride there, when every other
    # offset it adds keeps the pieces aligned (a scalar twin runs for unaligned pointers)
    def vec(t, item, *offsets):
        v = 16 // item
        return (async_ok and (lay.a_ord, lay.b_ord)[t - 1] == 0 and v > 1 and lay.x[1][t] == 1 and tx % v == 0
                and all(int(o) % v == 0 for o in np.concatenate([*offsets, [ys[t]]])))
    if a_vec is None:
        a_vec, b_vec = vec(1, a_item, a_m, r_a, b_a), vec(2, b_item, b_n, r_b, b_b)

    nb = geo["batch"]
    # rows at a constant stride (one mode, or several A / B walks as one): no table lookups
    step_of = lambda t: int(t[1] - t[0]) if len(t) > 1 else 0
    stride_a, stride_b = (len(t) < 2 or bool(np.all(np.diff(t) == step_of(t))) for t in (a_m, b_n))
    parts, part_stride = step.option("parts", nb), step.option("part_stride", 0)
    assert nb * geo["slices"] < 2 ** 31, "the kernel walks batch x slices in 32 bits"
    flat = parts != nb  # (the kernel tells the two splits apart the same way)
    assert not flat or (nb == 1 and parts >= 1), "the flat split is of an uncut K"
    nx, ny = geo["nx"], geo["ny"]  # a part's stride through its slices as (x, y, rest) digits
    stride = parts if flat else 1
    steps = [stride % nx, stride // nx % ny, stride // (nx * ny)] if nx and ny else [1, 0, 0]
    words = [geo["M"], geo["N"], lay.x[0], lay.y[0] if lay.y else 1, geo["R"], geo["nx"], geo["ny"], geo["slices"],
             nb, parts, part_stride, *steps, lay.x[1][1], ys[1], rs[1], lay.x[1][2], ys[2], rs[2],
             step_of(a_m) if stride_a else 0, step_of(b_n) if stride_b else 0]
    words += [("table", i) for i in range(4)]
    words += [("table", 4), ("table", 5)] if tab_r else [0, 0]
    words += [("table", len(tables) - 3), ("table", len(tables) - 2), ("table", len(tables) - 1)]

    rm, rn, tm, tn, kg, stages = geo["rm"], geo["rn"], geo["tm"], geo["tn"], geo["kg"], geo["stages"]
    b = lambda v: "true" if v else "false"
    qu = int(os.environ.get("EINC_SMALLMN_QU", 1))  # quads unrolled (experiments; 1 is what fits 96 registers)
    # 32-bit offsets when every element either operand can address is below 2^31 from its origin
    span = lambda t: sum((e - 1) * abs(st[t]) for e, st in lay.b + lay.m + lay.n + lay.rest + [lay.x] +
                         ([lay.y] if lay.y else []) if e > 0)
    off32 = max(span(1), span(2)) < 2 ** 31 - 2 ** 20  # (with slack for a box's padding)
    flags = (async_ok, tab_r, lay.a_ord, lay.b_ord, a_vec, b_vec, stride_a, stride_b, off32)
    w = tn % 8  # EINC_SMALLMN_OCTETS=1 (experiment, unmeasured): B reads free of quarter-warp conflicts
    dm = geo["dm"]
    octets = (not dm and os.environ.get("EINC_SMALLMN_OCTETS") == "1" and w in (1, 2, 4) and tm % (8 // w) == 0
              and (tm * tn) % 8 == 0)
    key = (VERSION, TILE, rm, rn, tm, tn, kg, tx, stages, geo["bk"], qu, octets, dm, geo["minb"], flags,
           dtypes[0].name, compute.name, tuple(d.name for d in dtypes[1:]))
    name = _name(TILE, key, dtypes)
    targs = ", ".join([f"EincSmallTile<{rm}, {rn}, {tm}, {tn}, {kg}, {tx}, {stages}, {geo['bk']}, {qu}, {b(octets)}, {b(dm)}>",
                       *map(b, (async_ok, tab_r)), str(lay.a_ord), str(lay.b_ord),
                       *map(b, (a_vec, b_vec, stride_a, stride_b, off32)), tout, tcn, tan, sa, sb])
    nt = geo["nt"]
    spec = (f"extern \"C\" __global__ void __launch_bounds__({nt}, {geo['minb']})\n"
            f"{name}(void* out, const void* in0, const void* in1, const EincSmallMeta meta) {{\n"
            f"  einc_smallmn<{targs}>(out, in0, in1, meta);\n}}\n")
    fast = lambda o, v: ("x-fast" if o == 0 else "y-fast") + (" 16-byte pieces" if v else "")
    tile = (f"{geo['rp']}x{geo['cp']}: {rm}x{rn} fragments of 16x8 per warp on the fp64 tensor cores "
            f"(mma m16n8k16, fp32 products exact in fp64), {tm}x{tn} warps x {kg} k-group(s)" if dm else
            f"{geo['rp']}x{geo['cp']}: {rm}x{rn} per thread, {tm}x{tn} threads x {kg} k-group(s)")
    split = (f"one of {parts} parts (the flat split: one per resident block, every {parts}th of the "
             f"{geo['slices']} slices)" if flat else f"one of {nb} batch index(es)")
    family = (f"smallmn: every block owns the whole {geo['M']}x{geo['N']} output ({tile}) of {split}; "
              f"K box {tx}x{geo['ty']} (x, y) x {geo['R']} rest, {geo['slices']} slices; "
              + (f"{stages}-stage cp.async ring" if async_ok else "register prefetch, 2 stages")
              + f"; A loads {fast(lay.a_ord, a_vec)}, B loads {fast(lay.b_ord, b_vec)}")
    L = lay.labels
    modes_line = (f"batch {' '.join(L['batch']) or '-'} | m {' '.join(L['m'])} | n {' '.join(L['n'])} | "
                  f"k {' '.join(L['k'])}")
    launch = [f"launch:   1-D grid-stride over {parts} part(s), {nt} threads; {geo['smem']} bytes of "
              f"dynamic shared memory", f"metadata: EincSmallMeta, {8 * len(words)} bytes; {len(tables)} offset table(s)"]
    header = _header(step, family, dtypes, compute, modes_line, launch, "double" if dm else "")
    source = _assemble(header, ["common.cuh", "gett.cuh", "skinny.cuh", "smallmn.cuh"], spec)
    aligned = tuple(i for i, v in ((1, a_vec), (2, b_vec)) if v)
    twin = emit_smallmn(step, dtypes, compute, False, False, arch) if aligned else None
    return CudaStepKernel(name, source, key, (max(1, min(parts, 2 ** 31 - 1)), 1, 1), (nt, 1, 1), geo["smem"],
                          tuple(tables), 8 * len(words), tuple(words), aligned, twin)
