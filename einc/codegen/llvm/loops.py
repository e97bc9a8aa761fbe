"""The loop-nest kernel behind the `generic` and `reduce` strategies on the CPU.

One function per structure: the operand dtypes, the number of loops and whether each is
a free (output) or summed mode, how sums accumulate, and which strides of the innermost
loop are known to be 0 or 1. Extents and strides arrive at run time, so one compiled
kernel serves every shape with that structure.

    void f(T0* noalias out, T1* noalias in1, ..., const i64* ext, const i64* strides)

``strides[t * L + l]`` is tensor t's stride (elements) along loop l; tensor 0 is the
output. Two accumulation schemes:

- ``register``: summed loops are innermost; each output element is summed in registers
  and stored once (so K = 0 stores zeros). Works for every dtype combination. When no
  input walks the innermost sum with unit stride (a trace's diagonal; every `generic`
  key, whose strides are all run-time), that sum keeps UNROLL independent partial sums.
- ``memory``: loops in any order (chosen for locality, e.g. ``ij->j`` walks rows
  outermost); the output is zeroed first, then ``out += prod``. Only when the output is
  stored in the accumulation dtype, so no precision is lost between passes.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from . import scalar
from .scalar import I64

PTR = ir.PointerType()
UNROLL = 4  # independent partial sums in a strided innermost sum


@dataclass(frozen=True)
class LoopNestKey:
    """Everything the emitted code depends on (and nothing it does not)."""

    in_dtypes: tuple[str, ...]
    out_dtype: str
    compute: str
    kinds: tuple[str, ...]  # "f" (free) or "s" (summed), outermost first
    accumulate: str  # "register" or "memory"
    inner_unit: tuple  # per tensor: 0 or 1 if its innermost stride is that constant, else None

    @property
    def name(self) -> str:
        ins = "_".join(self.in_dtypes)
        kinds = "".join(self.kinds) or "scalar"
        unit = "".join("x" if u is None else str(u) for u in self.inner_unit)
        return f"einc_loops_{self.accumulate[0]}_{kinds}_{unit}_{ins}_to_{self.out_dtype}"


@contextmanager
def counted_loop(b: ir.IRBuilder, n, name="i"):
    """``for (i = 0; i < n; ++i)``; yields i and leaves the builder after the loop."""
    pre = b.block
    head = b.append_basic_block(f"{name}.head")
    body = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, name=name)
    i.add_incoming(ir.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, n), body, done)
    b.position_at_end(body)
    yield i
    nxt = b.add(i, ir.Constant(I64, 1), name=f"{name}.next")
    i.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(done)


def emit_loops(key: LoopNestKey) -> tuple[str, str]:
    """LLVM IR text and function name for ``key``."""
    ins = [np.dtype(d) for d in key.in_dtypes]
    out, acc_t = np.dtype(key.out_dtype), np.dtype(key.compute)
    ntens, L = len(ins) + 1, len(key.kinds)
    if key.accumulate == "register":
        assert "f" not in key.kinds[key.kinds.index("s"):] if "s" in key.kinds else True

    mod = ir.Module(name=key.name)
    fnty = ir.FunctionType(ir.VoidType(), [PTR] * (ntens + 2))
    fn = ir.Function(mod, fnty, name=key.name)
    for a in fn.args[:ntens]:
        a.add_attribute("noalias")
    bases, ext_p, str_p = fn.args[:ntens], fn.args[ntens], fn.args[ntens + 1]
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    ext = [b.load(b.gep(ext_p, [ir.Constant(I64, l)], source_etype=I64), typ=I64) for l in range(L)]
    strides = []
    for t in range(ntens):
        row = []
        for l in range(L):
            unit = key.inner_unit[t] if l == L - 1 else None
            row.append(ir.Constant(I64, unit) if unit is not None else
                       b.load(b.gep(str_p, [ir.Constant(I64, t * L + l)], source_etype=I64), typ=I64))
        strides.append(row)
    ncomp = 2 if acc_t.kind == "c" else 1
    acc_slots = [b.alloca(scalar.compute(acc_t)) for _ in range(ncomp)]
    # an innermost sum that no input walks with unit stride gets no vector loads: unroll it
    strided_inner = (key.accumulate == "register" and L > 0 and key.kinds[-1] == "s"
                     and not any(u == 1 for u in key.inner_unit[1:])
                     and any(u is None for u in key.inner_unit[1:]))
    extra = [[b.alloca(scalar.compute(acc_t)) for _ in range(ncomp)]
             for _ in range(UNROLL - 1 if strided_inner else 0)]  # entry block: promoted to registers

    def product(offs):
        val = None
        for t, dt in enumerate(ins, start=1):
            x = scalar.load(b, bases[t], offs[t], dt, acc_t)
            val = x if val is None else scalar.mul(b, val, x, acc_t)
        if val is None:  # no inputs cannot happen in einsum, but keep the kernel total
            val = scalar.zero(acc_t)
        return val

    def advance(offs, l, i):
        return [o if isinstance(strides[t][l], ir.Constant) and strides[t][l].constant == 0
                else b.add(o, b.mul(i, strides[t][l])) for t, o in enumerate(offs)]

    zero_offs = [ir.Constant(I64, 0)] * ntens

    if key.accumulate == "register":
        first_sum = key.kinds.index("s") if "s" in key.kinds else L

        def nest(l, offs):
            if l == first_sum:
                for slot, z in zip(acc_slots, scalar.zero(acc_t)):
                    b.store(z, slot)
                sums(l, offs)
                total = tuple(b.load(s, typ=scalar.compute(acc_t)) for s in acc_slots)
                scalar.store(b, total, bases[0], offs[0], acc_t, out)
                return
            with counted_loop(b, ext[l], f"l{l}") as i:
                nest(l + 1, advance(offs, l, i))

        def accumulate(slots, offs):
            cur = tuple(b.load(s, typ=scalar.compute(acc_t)) for s in slots)
            for slot, v in zip(slots, scalar.add(b, cur, product(offs), acc_t)):
                b.store(v, slot)

        def sums(l, offs):
            if l == L:
                accumulate(acc_slots, offs)
                return
            if l == L - 1 and strided_inner:
                return unrolled_sum(l, offs)
            with counted_loop(b, ext[l], f"l{l}") as i:
                sums(l + 1, advance(offs, l, i))

        def unrolled_sum(l, offs):
            # UNROLL independent partial sums: a strided sum (a trace's diagonal) is
            # otherwise one chain of dependent adds, latency- rather than load-bound
            for slots in extra:
                for slot, z in zip(slots, scalar.zero(acc_t)):
                    b.store(z, slot)
            groups = b.sdiv(ext[l], ir.Constant(I64, UNROLL))
            with counted_loop(b, groups, f"l{l}u") as q:
                i0 = b.mul(q, ir.Constant(I64, UNROLL))
                for u, slots in enumerate([acc_slots] + extra):
                    accumulate(slots, advance(offs, l, b.add(i0, ir.Constant(I64, u))))
            done = b.mul(groups, ir.Constant(I64, UNROLL))
            with counted_loop(b, b.sub(ext[l], done), f"l{l}r") as r:
                accumulate(acc_slots, advance(offs, l, b.add(done, r)))
            total = tuple(b.load(s, typ=scalar.compute(acc_t)) for s in acc_slots)
            for slots in extra:
                total = scalar.add(b, total, tuple(b.load(s, typ=scalar.compute(acc_t)) for s in slots), acc_t)
            for slot, v in zip(acc_slots, total):
                b.store(v, slot)

        nest(0, zero_offs)
    else:
        free = [l for l, k in enumerate(key.kinds) if k == "f"]

        def zero_nest(j, off):
            if j == len(free):
                scalar.store(b, scalar.zero(acc_t), bases[0], off, acc_t, out)
                return
            l = free[j]
            with counted_loop(b, ext[l], f"z{l}") as i:
                zero_nest(j + 1, b.add(off, b.mul(i, strides[0][l])))

        zero_nest(0, ir.Constant(I64, 0))

        def nest(l, offs):
            if l == L:
                cur = scalar.load(b, bases[0], offs[0], out, acc_t)
                scalar.store(b, scalar.add(b, cur, product(offs), acc_t), bases[0], offs[0], acc_t, out)
                return
            with counted_loop(b, ext[l], f"l{l}") as i:
                nest(l + 1, advance(offs, l, i))

        nest(0, zero_offs)
    b.ret_void()
    return str(mod), key.name
