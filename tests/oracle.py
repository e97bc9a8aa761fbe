"""The oracle: numpy.einsum in float64/complex128, and the one place tolerances live."""
from __future__ import annotations

import numpy as np


def reference(subscripts, *ops):
    """numpy's answer, computed wide for floating inputs (exact for int and bool)."""
    res = np.result_type(*[np.asarray(o) for o in ops])
    wide = np.complex128 if res.kind == "c" else np.float64 if res.kind == "f" else res
    cast = [np.asarray(o).astype(wide) for o in ops]
    if isinstance(subscripts, str):
        return np.einsum(subscripts, *cast, optimize=True)
    # sublist form: subscripts is the interleaved list with operands replaced by None
    args, it = [], iter(cast)
    for x in subscripts:
        args.append(next(it) if x is None else x)
    return np.einsum(*args, optimize=True)


def _finfo(dt: np.dtype):
    """numpy's finfo, or ml_dtypes' for bfloat16 (numpy's kind 'V': it has no finfo)."""
    if dt.kind in "fc":
        return np.finfo(dt)
    if dt.name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.finfo(dt)
    return None


def _eps(dt: np.dtype) -> float:
    fi = _finfo(dt)
    return float(fi.eps) if fi is not None else 0.0


def summed_terms(subs: str, shapes) -> int:
    """The number of products summed into each output element (assert_matches' ``terms``)."""
    lhs, out = subs.split("->")
    ext = {l: n for t, s in zip(lhs.split(","), shapes) for l, n in zip(t, s)}
    return max(1, int(np.prod([n for l, n in ext.items() if l not in out])))


def assert_matches(got, subscripts, *ops, dtype=None, terms=1, product_eps=0.0):
    """einc's ``got`` equals numpy's answer: exactly for int/bool, else within a bound.

    The float bound is the classical one for a sum of ``terms`` products:
    eps(accumulator) * terms * sum(|products|) + eps(result) * |ref|, plus
    ``product_eps`` * sum(|products|) when the products themselves are rounded (TF32
    tensor cores round each fp32 operand to a 10-bit mantissa: 2 * 2^-10 per product).
    """
    ops = [np.asarray(o) for o in ops]
    res_dt = np.dtype(dtype) if dtype is not None else np.result_type(*ops)
    got = np.asarray(got)
    assert got.dtype == res_dt, (got.dtype, res_dt)
    ref = reference(subscripts, *ops)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    if res_dt.kind in "biu":
        np.testing.assert_array_equal(got, ref.astype(res_dt))
        return
    absref = np.abs(reference(subscripts, *[np.abs(o.astype(np.complex128 if o.dtype.kind == "c" else np.float64)) for o in ops]))
    # 16-bit results are accumulated in fp32 (bfloat16 too: before, its eps read as 0 here)
    acc = np.dtype(np.float32) if res_dt == np.float16 or res_dt.name == "bfloat16" else res_dt
    # + half a subnormal step: rounding into the subnormal range is exact only to that
    sub = float(_finfo(res_dt).smallest_subnormal) if _finfo(res_dt) is not None else 0.0
    tol = (_eps(np.dtype(acc)) * (terms + len(ops)) * 4 + _eps(res_dt) + product_eps) * absref + sub + 1e-300
    # NaN and inf must agree exactly in position
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    err = np.abs(got.astype(ref.dtype) - ref)
    bad = finite & (err > tol)
    assert not bad.any(), f"max error {err[bad].max()} vs tol {tol[bad].min()} at {np.argwhere(bad)[:3]}"


def random_operand(rng, shape, dtype, int_range: int = 9):
    """Test data of any einc dtype: booleans, integers in (-int_range, int_range) (from 0
    when unsigned), normal floats, complex with both parts normal."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -int_range, int_range, size=shape).astype(dt)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def twice(subs, *ops, **kw):
    """einc's answer on the planning call and on the cached call; both must agree."""
    import einc
    first = einc.einsum(subs, *ops, **kw)
    second = einc.einsum(subs, *ops, **kw)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    return second
