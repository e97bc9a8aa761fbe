"""The `skinny` CPU kernel: a GEMM step whose small operand contributes few free columns.

    C[r, x, n] = sum_k A[r, x, k] * B[k, n]        x: one free mode of A with A-stride 1

The TCCG intensli shape (`akdbc,jk->cjbda`: N = j = 10, A the whole 8 MiB). Such a step is
memory-bound (about 2N/itemsize FLOPs per byte of A), and the packed gett kernel spends
its time packing A through offset tables and scattering C through its N-fast tile. Here
A is streamed once and never packed: vector lanes run along x, A's unit-stride mode, so
every k of a lane group is one contiguous vector load; each lane group keeps NP
accumulator vectors (NP columns) in registers and B is packed once per call into a
zero-padded [K][Npad] panel in the workspace (Npad = N rounded up to NP, at most a few
KiB), from which each FMA takes one broadcast. C is written along x with vector stores
when C is unit-stride along x, else one scalar store per lane (then the column chunks
are the outer loop, so the lines a chunk scatters into stay in L1 across r).

The other free modes of A are the rest group r (offset tables rA, rC; the caller puts
C's unit-stride mode innermost so consecutive r fill the same C lines), the N and K
groups go through tables too, so one compiled kernel per (dtype, vector width, NP)
serves every layout where A is unit-stride along one free mode.

    void f(T* C, const T* A, const T* B, const int64_t* dims, const int64_t* tab,
           T* work, int64_t r0, int64_t r1)

    dims = [X, R, N, K, c_x, Y, a_y, c_y, pack, a_x]   c_x: C's stride along x; pack: 0, 1, 2
    tab  = rA[R] rC[R] nB[N] nC[N] kA[K] kB[K] [rS[R] kS[K]: pack mode]
    work: skinny_workspace_elems(N, K) elements, 64-byte aligned

Rows r0 <= r < r1 are written (threads split R). K = 0 writes zeros.

The box (Y > 1): when C is unit-stride along another free mode y of A (c_y = 1; intensli's
C runs along `a`, A along `c`), one scalar store per lane would fill each C line over
many rows. Instead a tile is W lanes of x by W values of y by NP columns: the sums of
each y go to a small staging area ([W y][NP][W lanes], in the workspace), then per
column the W x W block is transposed in registers (log2 W rounds of perfect shuffles)
and leaves as W vector stores along y (masked on a ragged y; a ragged x stores only
its valid lanes' vectors). Rows are then t = y block * R + r (r0 <= t < r1, threads split t), y
blocks outermost: the W x K rows of A a block reads advance together along the rest
group (the caller orders it by A's strides), so they stream instead of each r touching
a page per (y, k).

Pack mode (pack = 1; ccsd_t's `amji,cbkm->kjicba`: C runs along a, which A holds with
stride 1690): when A is small, each thread first copies its rows of A to the workspace as
[r][K][Xpad] with x = C's unit-stride mode unit-stride (rS, kS, a_x address the original;
rA, kA the copy), so the main loop stores whole vectors along C (masked on the ragged
lane group) instead of going through the box.

Panel mode (pack = 2; `cabk,kj->cjba`: A unit-stride along K, C along a): per row and
lane group, the W rows of A along x are read W k at a time, transposed in registers into
a [K][W] panel in the workspace, and the column chunks run from the panel (rA = the rows'
offsets in A, a_x = A's stride along x, K contiguous in A).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from .gett import I32, I64, PTR, Loop, i64, smin

PREFETCH_ROWS = 4  # the box prefetches A this many rest rows ahead


def skinny_np(n: int) -> int:
    """Columns held in registers per lane group for a step with ``n`` columns: 4, 8 or 12
    (12 accumulators + the A vector + one broadcast fit 16 vector registers)."""
    return 4 if n <= 4 else 8 if n <= 8 else 12


STAGE_ELEMS = 16 * 12 * 16  # the box's staging area at the widest vectors (W x NP x W)


def skinny_workspace_elems(n: int, k: int, packed: int = 0) -> int:
    """Elements of scratch one call needs: B packed as [K][N rounded up to NP], the box's
    staging area (64-byte aligned), then ``packed`` elements of A's copy (pack mode)."""
    npad = -(-n // skinny_np(n)) * skinny_np(n)
    return -(-k * npad // 16) * 16 + STAGE_ELEMS + packed


def skinny_function_name(dtype, vector_bits: int, NP: int) -> str:
    return f"einc_skinny_f{8 * np.dtype(dtype).itemsize}_v{int(vector_bits)}_n{NP}"


def emit_skinny(dtype, vector_bits: int, NP: int) -> tuple[str, str]:
    """LLVM IR text of the skinny kernel for float32/float64 and its function name.

    >>> text, name = emit_skinny(np.float32, 256, 8)
    >>> name
    'einc_skinny_f32_v256_n8'
    """
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"the skinny kernel takes float32 or float64, not {dt}")
    name = skinny_function_name(dt, vector_bits, NP)
    return _Skinny(dt, vector_bits, NP, name).emit(), name


class _Skinny:
    def __init__(self, dt, vector_bits, NP, name):
        self.T = ir.FloatType() if dt == np.float32 else ir.DoubleType()
        self.eb = dt.itemsize
        self.W = vector_bits // (8 * self.eb)
        self.NP = NP
        self.V = ir.VectorType(self.T, self.W)
        self.mod = ir.Module(name=name)
        self.mod.triple = ""
        fnty = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR, PTR, PTR, I64, I64])
        self.fn = ir.Function(self.mod, fnty, name=name)
        self.fn.attributes.add("nounwind")
        for a, nm in zip(self.fn.args, ("C", "A", "B", "dims", "tab", "work", "r0", "r1")):
            a.name = nm
        for a in self.fn.args[:6]:
            a.add_attribute("noalias")
        vname = f"v{self.W}f{8 * self.eb}"
        self.fma = ir.Function(self.mod, ir.FunctionType(self.V, [self.V] * 3), name=f"llvm.fmuladd.{vname}")
        M = ir.VectorType(ir.IntType(1), self.W)
        self.mload = ir.Function(self.mod, ir.FunctionType(self.V, [PTR, I32, M, self.V]),
                                 name=f"llvm.masked.load.{vname}.p0")
        self.mstore = ir.Function(self.mod, ir.FunctionType(ir.VoidType(), [self.V, PTR, I32, M]),
                                  name=f"llvm.masked.store.{vname}.p0")
        self.prefetch = ir.Function(self.mod, ir.FunctionType(ir.VoidType(), [PTR, I32, I32, I32]),
                                    name="llvm.prefetch.p0")
        self.pf = None  # element distance to prefetch A at (the box), or None
        self.vzero = ir.Constant(self.V, None)
        self.lanes = ir.Constant(ir.VectorType(I64, self.W), list(range(self.W)))

    # --- helpers ----------------------------------------------------------------------
    def ptr(self, base, off, et=None):
        return self.b.gep(base, [off], source_etype=et or self.T)

    def ld(self, base, off, et=None):
        et = et or self.T
        return self.b.load(self.ptr(base, off, et), typ=et, align=8 if et is I64 else self.eb)

    def st(self, val, off):
        self.b.store(val, self.ptr(self.C, off), align=self.eb)

    def splat(self, x, typ, n):
        b = self.b
        undef = ir.Constant(typ, ir.Undefined)
        v = b.insert_element(undef, x, ir.Constant(I32, 0))
        return b.shuffle_vector(v, undef, ir.Constant(ir.VectorType(I32, n), [0] * n))

    # --- top level --------------------------------------------------------------------
    def emit(self) -> str:
        b = self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        C, A, B, dims, tab, work, r0, r1 = self.fn.args
        self.C, self.work = C, work
        self.a_slot = b.alloca(PTR)  # A, or the packed copy's origin
        b.store(A, self.a_slot)
        X, R, N, K, cx, Y, ay, cy, pack, ax = (self.ld(dims, i64(i), I64) for i in range(10))
        empty = b.or_(b.icmp_signed("<=", X, i64(0)), b.icmp_signed("<=", N, i64(0)))
        empty = b.or_(empty, b.icmp_signed("<=", R, i64(0)))
        with b.if_then(b.or_(empty, b.icmp_signed(">=", r0, r1))):
            b.ret_void()
        self.X, self.K, self.R = X, K, R
        rA = tab
        rC = self.ptr(rA, R, I64)
        nB = self.ptr(rC, R, I64)
        self.nC = self.ptr(nB, N, I64)
        kA = self.ptr(self.nC, N, I64)
        kB = self.ptr(kA, K, I64)
        NP = self.NP
        npad = b.mul(b.sdiv(b.add(N, i64(NP - 1)), i64(NP)), i64(NP), name="npad")
        # B -> [K][npad], zero beyond N (the padded columns are computed, never stored)
        last = b.sub(N, i64(1))
        with Loop(b, 0, K, 1, "pk") as lk:
            ob = self.ld(kB, lk.index, I64)
            row = b.mul(lk.index, npad)
            with Loop(b, 0, npad, 1, "pn") as ln:
                n = ln.index
                valid = b.icmp_signed("<", n, N)
                x = self.ld(B, b.add(ob, self.ld(nB, smin(b, n, last), I64)))
                b.store(b.select(valid, x, ir.Constant(self.T, 0.0)), self.ptr(work, b.add(row, n)),
                        align=self.eb)
        self.X, self.N, self.K, self.cx, self.kA, self.Bp, self.npad = X, N, K, cx, kA, work, npad
        self.Y, self.ay, self.cy = Y, ay, cy
        # the box's staging area: [W y][NP columns][W lanes], after Bp (64-byte aligned)
        stage_at = b.and_(b.add(b.mul(K, npad), i64(15)), i64(-16))
        self.stage = self.ptr(work, stage_at)
        with b.if_then(b.icmp_signed("==", pack, i64(1))):
            self.emit_pack_a(b.add(stage_at, i64(STAGE_ELEMS)), kB, ax, r0, smin(b, r1, R))
        A = self.A = b.load(self.a_slot, typ=PTR)

        def tile(r, x0, nc):
            self.emit_tile(self.ld(rA, r, I64), self.ld(rC, r, I64), x0, nc)

        with b.if_then(b.icmp_signed("==", pack, i64(2))):  # panel mode
            panel = self.ptr(work, b.add(stage_at, i64(STAGE_ELEMS)))
            # lane groups outermost: a group's W rows of A then advance along the rest
            # (in A's order) as W sequential streams
            with Loop(b, 0, X, self.W, "x") as lx:
                with Loop(b, r0, smin(b, r1, R), 1, "r") as lr:
                    oA, oC = self.ld(rA, lr.index, I64), self.ld(rC, lr.index, I64)
                    self.emit_panel(panel, oA, lx.index, ax)
                    with Loop(b, 0, npad, NP, "nc") as ln:
                        self.emit_panel_tile(panel, oC, lx.index, ln.index)
            b.ret_void()
        with b.if_then(b.icmp_signed(">", Y, i64(1))):  # the box: C unit-stride along y
            # y blocks outermost: the W y x K rows of A a block reads advance together
            # along the rest (A's order), so they stream through L2 instead of each r
            # touching a page per (y, k)
            # rows t = y block * R + r, so threads can split y blocks when R is small
            t0, t1 = self.fn.args[6], self.fn.args[7]
            with Loop(b, t0, t1, 1, "t") as lt:
                r = b.srem(lt.index, R)
                y0 = b.mul(b.sdiv(lt.index, R), i64(self.W))
                oA, oC = self.ld(rA, r, I64), self.ld(rC, r, I64)
                # the W x K rows this block reads are as many streams, more than the
                # hardware prefetchers follow: fetch the same rows PREFETCH_ROWS rows ahead
                ahead = self.ld(rA, smin(b, b.add(r, i64(PREFETCH_ROWS)), b.sub(R, i64(1))), I64)
                self.pf = b.sub(ahead, oA)
                with Loop(b, 0, X, self.W, "x") as lx:
                    with Loop(b, 0, npad, NP, "nc") as ln:
                        self.emit_box(oA, oC, lx.index, y0, ln.index)
                self.pf = None
            b.ret_void()
        r1 = smin(b, r1, R)
        with b.if_else(b.icmp_signed("==", cx, i64(1)), likely=True) as (unit, scattered):
            with unit:  # C along x: r, x, then column chunks (A's lines read once, from L1)
                with Loop(b, r0, r1, 1, "r") as lr:
                    with Loop(b, 0, X, self.W, "x") as lx:
                        with Loop(b, 0, npad, NP, "nc") as ln:
                            tile(lr.index, lx.index, ln.index)
            with scattered:  # chunks outermost: a chunk's scattered C lines stay cached
                with Loop(b, 0, npad, NP, "nc") as ln:
                    with Loop(b, r0, r1, 1, "r") as lr:
                        with Loop(b, 0, X, self.W, "x") as lx:
                            tile(lr.index, lx.index, ln.index)
        b.ret_void()
        return str(self.mod)

    def emit_pack_a(self, at, kB, ax, r0, r1):
        """Pack mode: A is small and strided along x (C's unit-stride mode), so this
        thread's rows r0 <= r < r1 are copied to work[at:] as [r - r0][K][Xpad] with x
        unit-stride (zero-padded to whole lane groups); the caller's rA/kA then index the
        copy (r * K * Xpad, k * Xpad) from an origin r0 rows before it."""
        b, W, X, K, R = self.b, self.W, self.X, self.K, self.R
        xpad = b.mul(b.sdiv(b.add(X, i64(W - 1)), i64(W)), i64(W))
        rS = self.ptr(kB, K, I64)
        kS = self.ptr(rS, R, I64)
        dst = self.ptr(self.work, at)
        A0 = self.fn.args[1]
        lastx = b.sub(X, i64(1))
        with Loop(b, r0, r1, 1, "ar") as lr:
            orow = self.ld(rS, lr.index, I64)
            drow = b.mul(b.mul(b.sub(lr.index, r0), K), xpad)
            with Loop(b, 0, K, 1, "ak") as lk:
                src = b.add(orow, self.ld(kS, lk.index, I64))
                d = b.add(drow, b.mul(lk.index, xpad))
                with Loop(b, 0, xpad, 1, "ax") as lx:
                    v = self.ld(A0, b.add(src, b.mul(smin(b, lx.index, lastx), ax)))
                    v = b.select(b.icmp_signed("<", lx.index, X), v, ir.Constant(self.T, 0.0))
                    b.store(v, self.ptr(dst, b.add(d, lx.index)), align=self.eb)
        b.store(self.ptr(dst, b.neg(b.mul(b.mul(r0, K), xpad))), self.a_slot)

    def emit_panel(self, panel, oA, x0, ax):
        """Panel mode: A unit-stride along K, C along x. The lane group's W rows of A
        (x0 + l, stride a_x) are read W k at a time, transposed in registers and stored
        as panel[k][l] (zero for l or k past the edge: masked loads read nothing there)."""
        b, W = self.b, self.W
        left = b.sub(self.X, x0)
        vm = ir.VectorType(I64, W)
        with Loop(b, 0, self.K, W, "pk") as lk:
            k0 = lk.index
            kmask = b.icmp_signed("<", self.lanes, self.splat(b.sub(self.K, k0), vm, W))
            rows = []
            for lane in range(W):
                on = b.icmp_signed(">", left, i64(lane))
                live = self.splat(on, ir.VectorType(ir.IntType(1), W), W)
                # a dead lane reads nothing but still points into A: a masked load at an
                # unmapped address costs a fault-suppression assist (~5x slower on abk)
                row = b.select(on, b.mul(b.add(x0, i64(lane)), ax), i64(0))
                p = self.ptr(self.A, b.add(b.add(oA, row), k0))
                rows.append(b.call(self.mload, [p, ir.Constant(I32, self.eb), b.and_(kmask, live),
                                                self.vzero]))
            for i, v in enumerate(self.transpose(rows)):
                b.store(v, self.ptr(panel, b.mul(b.add(k0, i64(i)), i64(W))), align=self.eb)

    def emit_panel_tile(self, panel, oC, x0, nc):
        """Columns [nc, nc+NP) of the packed lane group: vector (or masked) stores along x."""
        b, W = self.b, self.W
        left = b.sub(self.X, x0)
        nvalid = smin(b, i64(self.NP), b.sub(self.N, nc))
        acc = self.emit_sum(i64(0), nc, None, src=panel, kstride=i64(W))
        mask = b.icmp_signed("<", self.lanes, self.splat(left, ir.VectorType(I64, W), W))
        full = b.icmp_signed(">=", left, i64(W))
        for j in range(self.NP):
            with b.if_then(b.icmp_signed(">", nvalid, i64(j)), likely=True):
                p = self.ptr(self.C, b.add(b.add(oC, self.ld(self.nC, b.add(nc, i64(j)), I64)), x0))
                with b.if_else(full, likely=True) as (whole, part):
                    with whole:
                        b.store(acc[j], p, align=self.eb)
                    with part:
                        b.call(self.mstore, [acc[j], p, ir.Constant(I32, self.eb), mask])

    def emit_tile(self, oA, oC, x0, nc):
        """Columns [nc, nc+NP) of lanes [x0, x0+W) of row r: sum over k, then store."""
        b, W = self.b, self.W
        left = b.sub(self.X, x0)
        nvalid = smin(b, i64(self.NP), b.sub(self.N, nc))
        with b.if_else(b.icmp_signed(">=", left, i64(W)), likely=True) as (full, tail):
            with full:
                acc = self.emit_sum(b.add(oA, x0), nc, None)
                with b.if_else(b.icmp_signed("==", self.cx, i64(1)), likely=True) as (vec, sc):
                    with vec:
                        for j in range(self.NP):
                            with b.if_then(b.icmp_signed(">", nvalid, i64(j)), likely=True):
                                off = b.add(b.add(oC, self.ld(self.nC, b.add(nc, i64(j)), I64)), x0)
                                b.store(acc[j], self.ptr(self.C, off), align=self.eb)
                    with sc:
                        self.emit_scalar_store(acc, oC, x0, nc, nvalid, None)
            with tail:
                mask = b.icmp_signed("<", self.lanes, self.splat(left, ir.VectorType(I64, W), W))
                acc = self.emit_sum(b.add(oA, x0), nc, mask)
                with b.if_else(b.icmp_signed("==", self.cx, i64(1)), likely=True) as (vec, sc):
                    with vec:
                        for j in range(self.NP):
                            with b.if_then(b.icmp_signed(">", nvalid, i64(j)), likely=True):
                                off = b.add(b.add(oC, self.ld(self.nC, b.add(nc, i64(j)), I64)), x0)
                                b.call(self.mstore, [acc[j], self.ptr(self.C, off),
                                                     ir.Constant(I32, self.eb), mask])
                    with sc:
                        self.emit_scalar_store(acc, oC, x0, nc, nvalid, left)

    def emit_box(self, oA, oC, x0, y0, nc):
        """Lanes [x0, x0+W) x y in [y0, y0+W) x columns [nc, nc+NP): each y's sums staged,
        then written along y (C's unit stride) through an in-register transpose."""
        b, W, NP = self.b, self.W, self.NP
        left = b.sub(self.X, x0)
        yv = smin(b, i64(W), b.sub(self.Y, y0))
        nvalid = smin(b, i64(NP), b.sub(self.N, nc))
        full = b.icmp_signed(">=", left, i64(W))
        with b.if_else(full, likely=True) as (whole, tail):
            for branch, masked in ((whole, False), (tail, True)):
                with branch:
                    mask = None
                    if masked:
                        mask = b.icmp_signed("<", self.lanes, self.splat(left, ir.VectorType(I64, W), W))
                    with Loop(b, 0, yv, 1, "yi") as ly:
                        a0 = b.add(b.add(oA, x0), b.mul(b.add(y0, ly.index), self.ay))
                        acc = self.emit_sum(a0, nc, mask)
                        for j in range(NP):
                            off = b.mul(b.add(b.mul(ly.index, i64(NP)), i64(j)), i64(W))
                            b.store(acc[j], self.ptr(self.stage, off), align=self.eb)
        # every tile leaves through the transpose: a ragged y is a masked store, a ragged x
        # skips lanes (the stage rows past yv hold stale values that the mask drops)
        ymask = b.icmp_signed("<", self.lanes, self.splat(yv, ir.VectorType(I64, W), W))
        yfull = b.icmp_signed("==", yv, i64(W))
        for j in range(NP):
            with b.if_then(b.icmp_signed(">", nvalid, i64(j)), likely=True):
                rows = [b.load(self.ptr(self.stage, i64((yi * NP + j) * W)), typ=self.V,
                               align=self.eb) for yi in range(W)]
                col = b.add(b.add(oC, self.ld(self.nC, b.add(nc, i64(j)), I64)), y0)
                for lane, v in enumerate(self.transpose(rows)):
                    with b.if_then(b.icmp_signed(">", left, i64(lane)), likely=True):
                        p = self.ptr(self.C, b.add(col, b.mul(b.add(x0, i64(lane)), self.cx)))
                        with b.if_else(yfull, likely=True) as (whole_y, part_y):
                            with whole_y:
                                b.store(v, p, align=self.eb)
                            with part_y:
                                b.call(self.mstore, [v, p, ir.Constant(I32, self.eb), ymask])

    def transpose(self, rows):
        """W vectors of W lanes -> their transpose (log2 W rounds of perfect shuffles)."""
        b, W, h = self.b, self.W, self.W // 2
        lo = ir.Constant(ir.VectorType(I32, W), [v for i in range(h) for v in (i, W + i)])
        hi = ir.Constant(ir.VectorType(I32, W), [v for i in range(h, W) for v in (i, W + i)])
        for _ in range(W.bit_length() - 1):
            rows = [v for i in range(h) for v in (b.shuffle_vector(rows[i], rows[i + h], lo),
                                                  b.shuffle_vector(rows[i], rows[i + h], hi))]
        return rows

    def emit_sum(self, a0, nc, mask, src=None, kstride=None):
        """NP accumulators: sum over k of A[a0 + kA[k] : +W] x Bp[k, nc : nc+NP]
        (``src[a0 + k * kstride : +W]`` for a packed panel)."""
        b = self.b
        with Loop(b, 0, self.K, 1, "k", carry=[self.vzero] * self.NP) as lk:
            k = lk.index
            off = b.mul(k, kstride) if kstride is not None else self.ld(self.kA, k, I64)
            p = self.ptr(src or self.A, b.add(a0, off))
            if self.pf is not None and src is None:
                b.call(self.prefetch, [self.ptr(p, self.pf), ir.Constant(I32, 0),
                                       ir.Constant(I32, 3), ir.Constant(I32, 1)])
            if mask is None:
                a = b.load(p, typ=self.V, align=self.eb)
            else:
                a = b.call(self.mload, [p, ir.Constant(I32, self.eb), mask, self.vzero])
            row = b.add(b.mul(k, self.npad), nc)
            lk.next = [b.call(self.fma, [a, self.splat(self.ld(self.Bp, b.add(row, i64(j))), self.V, self.W),
                                         lk.vars[j]]) for j in range(self.NP)]
        return lk.vars

    def emit_scalar_store(self, acc, oC, x0, nc, nvalid, left):
        """One store per lane (C strided along x, or the ragged last lane group)."""
        b = self.b
        for j in range(self.NP):
            with b.if_then(b.icmp_signed(">", nvalid, i64(j)), likely=True):
                col = b.add(oC, self.ld(self.nC, b.add(nc, i64(j)), I64))
                for lane in range(self.W):
                    def put(lane=lane):
                        off = b.add(col, b.mul(b.add(x0, i64(lane)), self.cx))
                        self.st(b.extract_element(acc[j], ir.Constant(I32, lane)), off)
                    if left is None:
                        put()
                    else:
                        with b.if_then(b.icmp_signed(">", left, i64(lane))):
                            put()
