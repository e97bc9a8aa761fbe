"""A CPython entry point for one loop-nest kernel: a METH_FASTCALL builtin, no ctypes.

A cached einsum of a small or strided step (a trace, an 8x8 product) spends more time in
ctypes than in its kernel: two ``data_pointer`` reads and a foreign call cost ~0.8 µs,
against numpy's whole ``ii->`` call at ~1.6 µs. This function is what the builtin runs:

    PyObject* entry(PyObject* self, PyObject* const* args, Py_ssize_t nargs)

called as ``f(arrays, out)``: ``arrays`` a tuple or list of ndarrays, ``out`` an ndarray.
``self`` is a tuple whose item 0 is an int64 ndarray, the context:

    [0] kernel address  [1] extents  [2] strides  [3] Py_IncRef  [4] None  [5] tuple type
    [6] list type  [7] PyEval_SaveThread  [8] PyEval_RestoreThread  [9] PyErr_SetString
    [10] PyExc_TypeError  [11 ...] the index in ``arrays`` of each kernel input

It reads the data pointers straight from the objects (ndarray ``data`` at byte 16,
tuple items at 24, a list's item vector at 24: CPython's and numpy's layouts, which the
runtime checks once before it uses any of this) and calls the kernel, releasing the GIL
around it when ``release``. Anything but two arguments, a tuple/list long enough, raises
TypeError. No addresses are in the IR (they are in the context), so the disk cache holds it.
"""
from __future__ import annotations

from llvmlite import ir

from .scalar import I64

PTR = ir.PointerType()
I32 = ir.IntType(32)
KERNEL, EXT, STRIDES, INCREF, NONE, TUPLE, LIST, SAVE, RESTORE, SETERR, TYPEERR, SRC = range(12)


def entry_name(n_inputs: int, release: bool) -> str:
    return f"einc_entry_{n_inputs}{'_nogil' if release else ''}"


def emit_entry(n_inputs: int, release: bool) -> tuple[str, str]:
    """LLVM IR text and name of the builtin's C function for a kernel of ``n_inputs`` inputs."""
    name = entry_name(n_inputs, release)
    mod = ir.Module(name=name)
    fn = ir.Function(mod, ir.FunctionType(PTR, [PTR, PTR, I64]), name=name)
    self_, args, nargs = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    bad = fn.append_basic_block("bad")

    def word(p, i, typ=I64):  # the i-th 8-byte field of the object at p
        return b.load(b.gep(p, [ir.Constant(I64, i)], source_etype=typ), typ=typ)

    def call(addr, ret, types, values):
        f = b.inttoptr(addr, ir.PointerType(ir.FunctionType(ret, types)))
        return b.call(f, values)

    ctx = word(word(self_, 3, PTR), 2, PTR)  # self[0]'s data
    ok = b.append_basic_block("two_args")
    b.cbranch(b.icmp_signed("==", nargs, ir.Constant(I64, 2)), ok, bad)
    b.position_at_end(ok)
    seq, out = word(args, 0, PTR), word(args, 1, PTR)
    typ = word(seq, 1)
    is_tuple = b.icmp_unsigned("==", typ, word(ctx, TUPLE))
    is_list = b.icmp_unsigned("==", typ, word(ctx, LIST))
    seq_ok = b.append_basic_block("sequence")
    b.cbranch(b.or_(is_tuple, is_list), seq_ok, bad)
    b.position_at_end(seq_ok)
    size = word(seq, 2)
    list_items = b.inttoptr(word(seq, 3), PTR)
    tuple_items = b.gep(seq, [ir.Constant(I64, 3)], source_etype=I64)
    items = b.select(is_tuple, tuple_items, list_items)
    srcs = [word(ctx, SRC + j) for j in range(n_inputs)]
    fits = b.icmp_signed(">", size, srcs[0])
    for s in srcs[1:]:
        fits = b.and_(fits, b.icmp_signed(">", size, s))
    run = b.append_basic_block("run")
    b.cbranch(fits, run, bad)
    b.position_at_end(run)
    data = [word(out, 2)] + [word(b.load(b.gep(items, [s], source_etype=PTR), typ=PTR), 2) for s in srcs]
    ptrs = [b.inttoptr(d, PTR) for d in data] + [b.inttoptr(word(ctx, EXT), PTR), b.inttoptr(word(ctx, STRIDES), PTR)]
    state = call(word(ctx, SAVE), PTR, [], []) if release else None
    call(word(ctx, KERNEL), ir.VoidType(), [PTR] * len(ptrs), ptrs)
    if release:
        call(word(ctx, RESTORE), ir.VoidType(), [PTR], [state])
    none = b.inttoptr(word(ctx, NONE), PTR)
    call(word(ctx, INCREF), ir.VoidType(), [PTR], [none])
    b.ret(none)

    b.position_at_end(bad)
    msg = bytearray(b"einc kernel entry: expected (arrays, out) with enough arrays\0")
    g = ir.GlobalVariable(mod, ir.ArrayType(ir.IntType(8), len(msg)), name="msg")
    g.initializer, g.global_constant, g.linkage = ir.Constant(ir.ArrayType(ir.IntType(8), len(msg)), msg), True, "internal"
    call(word(ctx, SETERR), ir.VoidType(), [PTR, PTR], [b.inttoptr(word(ctx, TYPEERR), PTR), g])
    b.ret(ir.Constant(PTR, None))
    return str(mod), name
