"""Scalar values of every einc dtype in LLVM IR: load with conversion, multiply, add, store.

A value is a tuple of IR values: one for real and integer types, (re, im) for complex.
bool computes as i1 with AND for products and OR for sums, as numpy's bool einsum does.
Floating adds and multiplies carry ("reassoc", "contract") so reductions vectorise;
never "fast", which would let LLVM drop NaN/inf propagation.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

I1, I8, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
FLAGS = ("reassoc", "contract")


def storage(dtype: np.dtype) -> ir.Type:
    """The IR type of one stored element (complex: of one component)."""
    k, n = dtype.kind, dtype.itemsize
    if k == "b":
        return I8
    if k in "iu":
        return ir.IntType(8 * n)
    if k == "f":
        return {2: ir.HalfType(), 4: ir.FloatType(), 8: ir.DoubleType()}[n]
    if k == "c":
        return {8: ir.FloatType(), 16: ir.DoubleType()}[n]
    raise TypeError(dtype)


def compute(dtype: np.dtype) -> ir.Type:
    """The IR type arithmetic happens in (bool as i1; complex per component)."""
    return I1 if dtype.kind == "b" else storage(dtype)


def zero(dtype: np.dtype):
    t = compute(dtype)
    z = ir.Constant(t, 0) if dtype.kind in "biu" else ir.Constant(t, 0.0)
    return (z, z) if dtype.kind == "c" else (z,)


def _convert_real(b, v, src: np.dtype, dst: np.dtype):
    """Convert one real/int/bool IR value between dtypes (numpy's unsafe cast rules)."""
    st, dt = compute(src), compute(dst)
    sk, dk = src.kind, dst.kind
    if dk == "b":
        if sk == "b":
            return v
        return b.fcmp_unordered("!=", v, ir.Constant(st, 0.0)) if sk in "fc" else b.icmp_unsigned("!=", v, ir.Constant(st, 0))
    if sk == "b":
        return b.zext(v, dt) if dk in "iu" else b.uitofp(v, dt)
    if sk in "iu" and dk in "iu":
        if st.width == dt.width:
            return v
        if st.width > dt.width:
            return b.trunc(v, dt)
        return b.zext(v, dt) if sk == "u" else b.sext(v, dt)
    if sk in "iu":  # -> float
        return b.uitofp(v, dt) if sk == "u" else b.sitofp(v, dt)
    if dk in "iu":  # float -> int
        return b.fptoui(v, dt) if dk == "u" else b.fptosi(v, dt)
    if st == dt:
        return v
    if dk == "f" and sk == "f" and src.itemsize == 2 and dst.itemsize == 2:
        return v
    rank = {ir.HalfType: 0, ir.FloatType: 1, ir.DoubleType: 2}
    return b.fpext(v, dt) if rank[type(st)] < rank[type(dt)] else b.fptrunc(v, dt)


def convert(b, val, src: np.dtype, dst: np.dtype):
    """Convert a value tuple from ``src`` to ``dst`` arithmetic."""
    if src.kind == "c" and dst.kind == "c":
        return tuple(_convert_real(b, x, np.dtype(src.char.lower()), np.dtype(dst.char.lower()))
                     for x in val)
    if src.kind == "c":  # complex -> real drops the imaginary part, as numpy's unsafe cast
        return (_convert_real(b, val[0], _component(src), dst),)
    if dst.kind == "c":
        re = _convert_real(b, val[0], src, _component(dst))
        return (re, ir.Constant(compute(dst), 0.0))
    return (_convert_real(b, val[0], src, dst),)


def _component(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype.itemsize == 8 else np.dtype(np.float64)


def address(b, base, offset, dtype: np.dtype):
    """Pointer to element ``offset`` (in elements) of a tensor of ``dtype``."""
    return b.gep(base, [offset], source_etype=ir.ArrayType(storage(dtype), 2) if dtype.kind == "c" else storage(dtype))


def load(b, base, offset, dtype: np.dtype, to: np.dtype):
    """Load element ``offset`` of ``base`` and convert it to ``to`` arithmetic."""
    st = storage(dtype)
    if dtype.kind == "c":
        p = b.gep(base, [offset], source_etype=ir.ArrayType(st, 2))
        re = b.load(b.gep(p, [ir.Constant(I64, 0), ir.Constant(ir.IntType(32), 0)], source_etype=ir.ArrayType(st, 2)), typ=st)
        im = b.load(b.gep(p, [ir.Constant(I64, 0), ir.Constant(ir.IntType(32), 1)], source_etype=ir.ArrayType(st, 2)), typ=st)
        val = (re, im)
    else:
        raw = b.load(b.gep(base, [offset], source_etype=st), typ=st)
        val = (b.icmp_unsigned("!=", raw, ir.Constant(I8, 0)),) if dtype.kind == "b" else (raw,)
    return convert(b, val, dtype, to)


def store(b, val, base, offset, frm: np.dtype, dtype: np.dtype):
    """Convert ``val`` from ``frm`` arithmetic and store it as element ``offset`` of ``base``."""
    val = convert(b, val, frm, dtype)
    st = storage(dtype)
    if dtype.kind == "c":
        p = b.gep(base, [offset], source_etype=ir.ArrayType(st, 2))
        for i, x in enumerate(val):
            b.store(x, b.gep(p, [ir.Constant(I64, 0), ir.Constant(ir.IntType(32), i)], source_etype=ir.ArrayType(st, 2)))
        return
    x = val[0]
    if dtype.kind == "b":
        x = b.zext(x, I8)
    b.store(x, b.gep(base, [offset], source_etype=st))


def mul(b, x, y, dtype: np.dtype):
    k = dtype.kind
    if k == "b":
        return (b.and_(x[0], y[0]),)
    if k in "iu":
        return (b.mul(x[0], y[0]),)
    if k == "f":
        return (b.fmul(x[0], y[0], flags=FLAGS),)
    (xr, xi), (yr, yi) = x, y
    re = b.fsub(b.fmul(xr, yr, flags=FLAGS), b.fmul(xi, yi, flags=FLAGS), flags=FLAGS)
    im = b.fadd(b.fmul(xr, yi, flags=FLAGS), b.fmul(xi, yr, flags=FLAGS), flags=FLAGS)
    return (re, im)


def add(b, x, y, dtype: np.dtype):
    k = dtype.kind
    if k == "b":
        return (b.or_(x[0], y[0]),)
    if k in "iu":
        return (b.add(x[0], y[0]),)
    return tuple(b.fadd(p, q, flags=FLAGS) for p, q in zip(x, y))
