"""The skinny kernel's row mode: C's unit-stride mode belongs to the small operand.

    C[r, n] = sum_k A[r, k] * B[k, n]        C unit-stride along n, N <= NV * W

The TCCG ao2mo case `ap,srqp->srqa` (N = a = 42 columns of a 42 x 42 matrix, 46656 rows of
A each 42 k long): lanes run along n, which only B and C have, so the skinny kernel's A
lanes do not apply and the packed gett spent its time packing A's 8 MiB. Here B is packed
once per call as [K][NV * W] (zero-padded columns) and A is never packed: a tile is MR rows
x NV vectors of accumulators; each k loads the NV vectors of packed B once and broadcasts
one element of each of the MR rows of A straight from A (through the row and K tables),
so A streams once and B stays in L1. C rows leave as NV vector stores (the last masked).
Ragged rows: the tile's missing rows repeat the last row and are not stored.

    void f(T* C, const T* A, const T* B, const int64_t* dims, const int64_t* tab,
           T* work, int64_t r0, int64_t r1)

    dims = [R, N, K]
    tab  = rA[R] rC[R] nB[N] kA[K] kB[K]
    work: K * NV * W elements

Rows r0 <= r < r1 are written (threads split R). K = 0 writes zeros.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from .gett import I32, I64, PTR, Loop, i64, smin

VECTOR_REGISTERS = {128: 16, 256: 16, 512: 32}


def rows_tile(vector_bits: int, NV: int) -> int:
    """MR: rows per tile so that MR * NV accumulators + NV B vectors + a broadcast fit."""
    return max(1, min(8, (VECTOR_REGISTERS[vector_bits] - NV - 1) // NV))


def emit_skinny_rows(dtype, vector_bits: int, NV: int) -> tuple[str, str]:
    """LLVM IR of the row-mode kernel for float32/float64 with NV vectors of columns.

    >>> emit_skinny_rows(np.float32, 512, 3)[1]
    'einc_skinny_rows_f32_v512_n3'
    """
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"the skinny row kernel takes float32 or float64, not {dt}")
    name = f"einc_skinny_rows_f{8 * dt.itemsize}_v{int(vector_bits)}_n{NV}"
    T = ir.FloatType() if dt == np.float32 else ir.DoubleType()
    eb, W = dt.itemsize, vector_bits // (8 * dt.itemsize)
    MR = rows_tile(vector_bits, NV)
    V = ir.VectorType(T, W)
    mod = ir.Module(name=name)
    mod.triple = ""
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [PTR] * 6 + [I64, I64]), name=name)
    fn.attributes.add("nounwind")
    for a, nm in zip(fn.args, ("C", "A", "B", "dims", "tab", "work", "r0", "r1")):
        a.name = nm
    for a in fn.args[:6]:
        a.add_attribute("noalias")
    vname = f"v{W}f{8 * eb}"
    fma = ir.Function(mod, ir.FunctionType(V, [V] * 3), name=f"llvm.fmuladd.{vname}")
    M1 = ir.VectorType(ir.IntType(1), W)
    mstore = ir.Function(mod, ir.FunctionType(ir.VoidType(), [V, PTR, I32, M1]),
                         name=f"llvm.masked.store.{vname}.p0")
    C, A, B, dims, tab, work, r0, r1 = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ptr = lambda base, off, et=T: b.gep(base, [off], source_etype=et)  # noqa: E731
    ld = lambda base, off, et=T: b.load(ptr(base, off, et), typ=et, align=8 if et is I64 else eb)  # noqa: E731
    R, N, K = (ld(dims, i64(i), I64) for i in range(3))
    r1 = smin(b, r1, R)
    with b.if_then(b.or_(b.icmp_signed("<=", N, i64(0)), b.icmp_signed(">=", r0, r1))):
        b.ret_void()
    rA = tab
    rC = ptr(rA, R, I64)
    nB = ptr(rC, R, I64)
    kA = ptr(nB, N, I64)
    kB = ptr(kA, K, I64)
    NP = NV * W
    last = b.sub(N, i64(1))
    with Loop(b, 0, K, 1, "pk") as lk:  # B -> [K][NP], zero past N
        ob = ld(kB, lk.index, I64)
        with Loop(b, 0, NP, 1, "pn") as ln:
            x = ld(B, b.add(ob, ld(nB, smin(b, ln.index, last), I64)))
            x = b.select(b.icmp_signed("<", ln.index, N), x, ir.Constant(T, 0.0))
            b.store(x, ptr(work, b.add(b.mul(lk.index, i64(NP)), ln.index)), align=eb)
    undef = ir.Constant(V, ir.Undefined)
    lanes = ir.Constant(ir.VectorType(I64, W), list(range(W)))
    splat64 = lambda x: b.shuffle_vector(b.insert_element(ir.Constant(ir.VectorType(I64, W), ir.Undefined), x, ir.Constant(I32, 0)),  # noqa: E731
                                         ir.Constant(ir.VectorType(I64, W), ir.Undefined),
                                         ir.Constant(ir.VectorType(I32, W), [0] * W))
    rlast = b.sub(R, i64(1))
    with Loop(b, r0, r1, MR, "r") as lr:
        rows = [smin(b, b.add(lr.index, i64(i)), rlast) for i in range(MR)]
        oa = [ld(rA, r, I64) for r in rows]
        with Loop(b, 0, K, 1, "k", carry=[ir.Constant(V, None)] * (MR * NV)) as lk:
            k = lk.index
            ka = ld(kA, k, I64)
            bv = [b.load(ptr(work, b.add(b.mul(k, i64(NP)), i64(v * W))), typ=V, align=eb) for v in range(NV)]
            acc = list(lk.vars)
            for i in range(MR):
                a = b.insert_element(undef, ld(A, b.add(oa[i], ka)), ir.Constant(I32, 0))
                a = b.shuffle_vector(a, undef, ir.Constant(ir.VectorType(I32, W), [0] * W))
                for v in range(NV):
                    acc[i * NV + v] = b.call(fma, [a, bv[v], acc[i * NV + v]])
            lk.next = acc
        acc = lk.vars
        for i in range(MR):
            with b.if_then(b.icmp_signed("<", b.add(lr.index, i64(i)), r1), likely=True):
                oc = ld(rC, rows[i], I64)
                for v in range(NV):
                    p = ptr(C, b.add(oc, i64(v * W)))
                    left = b.sub(N, i64(v * W))
                    with b.if_else(b.icmp_signed(">=", left, i64(W)), likely=True) as (whole, part):
                        with whole:
                            b.store(acc[i * NV + v], p, align=eb)
                        with part:
                            with b.if_then(b.icmp_signed(">", left, i64(0))):
                                mask = b.icmp_signed("<", lanes, splat64(left))
                                b.call(mstore, [acc[i * NV + v], p, ir.Constant(I32, eb), mask])
    b.ret_void()
    return str(mod), name
