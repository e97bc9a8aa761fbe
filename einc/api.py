"""The public entry points: einsum, contract_path, contract_expression."""
from __future__ import annotations

import inspect
import math
import operator
import threading
from collections import OrderedDict

import numpy as np

from .bind import bind
from .cuda_call import MISS, TORCH_HOT, Seen, fast_cuda_einsum, torch_hot_call
from .dtypes import GPU_ONLY, check_supported
from .ir import ArraySpec
from .errors import EincTypeError, EincValueError, EincShapeError, EincSpecError
from .execute import Executable
from .memory import plan_within
from .parse import parse, parse_sublists
from .path import contraction_path, normalize_optimize
from .plan import STRATEGIES, is_fortran, knobs, plan as make_plan, row_major

CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
ORDERS = ("C", "F", "A", "K")
BACKENDS = ("auto", "cpu", "cuda")
AUTO_CUDA_MIN_FLOPS = 1e10  # numpy operands go to the GPU in "auto" only above this much work


class _LRU:
    """A bounded, thread-safe map from a call's signature to its Executable."""

    def __init__(self, size=1024):
        self.size, self.data, self.lock = size, OrderedDict(), threading.Lock()

    def get(self, key):
        try:
            return self.data[key]
        except KeyError:
            return None

    def put(self, key, value):
        with self.lock:
            self.data[key] = value
            while len(self.data) > self.size:
                self.data.popitem(last=False)

    def clear(self):
        with self.lock:
            self.data.clear()
            TORCH_HOT.clear()  # (its entries are some of these executables)


_EXECUTABLES = _LRU()


def _operand(x, i) -> np.ndarray:
    """``x`` as an ndarray (only non-arrays pay a conversion here; dtypes and strides are
    validated once per call signature, in ``_validate``)."""
    if type(x) is np.ndarray:
        return x
    try:
        return np.asarray(x)
    except (ValueError, TypeError) as e:
        raise EincTypeError(f"operand {i} cannot be converted to an array: {e}") from e


def _validate(arrays):
    """Check dtypes; return the operands kernels can address (strides in whole elements)."""
    fixed = []
    for i, x in enumerate(arrays):
        check_supported(x.dtype, f"operand {i}")
        fixed.append(x.copy(order="C") if any(s % x.itemsize for s in x.strides) else x)
    return fixed


def _misaligned(arrays):
    return tuple(i for i, x in enumerate(arrays) if any(s % x.itemsize for s in x.strides))


def _split_args(operands):
    if not operands:
        raise EincSpecError("einsum needs subscripts and at least one operand")
    if isinstance(operands[0], str):
        spec = parse(operands[0])
        arrays = operands[1:]
    elif isinstance(operands[0], (bytes, bytearray)):  # else read as an operand of the sublist form
        raise EincTypeError(f"subscripts must be a str, got {type(operands[0]).__name__}")
    else:
        spec, arrays = parse_sublists(tuple(operands))
    if not arrays:
        raise EincSpecError("einsum needs at least one operand")
    return spec, arrays


def _signature(arrays) -> tuple:
    """What a compiled call depends on per operand: shape, strides, dtype (the cache key).

    The dtype itself, not its ``char``: ``>f8`` and ``<f8`` share the char ``d``."""
    return tuple([(a.shape, a.strides, a.dtype) for a in arrays])


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


def _check_options(order, casting, backend, strategy):
    """Validate the keywords every call path reads, before any of them is hashed or compared
    (an unhashable ``strategy=[1]`` or an array ``order=`` must not fail inside a cache lookup)."""
    for name, value, allowed in (("order", order, ORDERS), ("casting", casting, CASTINGS),
                                 ("backend", backend, BACKENDS)):
        if type(value) is not str or value not in allowed:
            raise EincValueError(f"{name}={value!r}: use one of {', '.join(allowed)}")
    if strategy is not None and (type(strategy) is not str or strategy not in STRATEGIES):
        raise EincValueError(f"strategy={strategy!r}: use one of {', '.join(STRATEGIES)}")


def _order(order):
    """numpy takes order= in either case ('c' is 'C')."""
    return order.upper() if type(order) is str and order.upper() in ORDERS else order


def _defaults(out, dtype, order, casting, optimize, memory_limit, backend, strategy, precision):
    """Every option at its default (compared by type first: an array option has no truth value)."""
    return (out is None and dtype is None and strategy is None and precision is None
            and memory_limit is None and type(order) is str and order == "K"
            and type(casting) is str and casting == "safe" and type(optimize) is str
            and optimize == "auto" and type(backend) is str and (backend == "auto" or backend == "cpu"))


def _result_dtype(dtypes, dtype, casting, out_dtype=None):
    """The dtype einsum computes in: dtype=, else the operands' result type — with out's
    dtype among them, as numpy's loop nest does (int8 operands summed into an int64 out
    do not wrap at 127; numpy's optimize=True path alone casts after the fact)."""
    if type(casting) is not str or casting not in CASTINGS:
        raise EincValueError(f"casting={casting!r}: use one of {', '.join(CASTINGS)}")
    if dtype is None:
        try:
            res = np.result_type(*dtypes)
        except TypeError as e:  # e.g. bfloat16 with float16: numpy knows no common type
            raise EincTypeError(f"operand dtypes {', '.join(map(str, dtypes))} have no common "
                                f"type; pass dtype=") from e
        if out_dtype is not None:
            try:
                res = np.result_type(res, out_dtype)
            except TypeError:  # bfloat16 (numpy has none): the operands' type decides
                pass
    else:
        res = check_supported(dtype, "dtype=")
    # numpy casts every operand to the result type under `casting`, dtype= or not, so
    # casting='no' refuses operands of mixed dtypes
    for i, d in enumerate(dtypes):
        if not np.can_cast(d, res, casting):
            raise EincTypeError(f"operand {i} has dtype {d}, which cannot be cast to {res} "
                                f"under casting={casting!r}")
    return res


def _out_layout(spec_shape, res, out, order, arrays, casting):
    """(out_shape, out_dtype, element strides) of the array einsum will write."""
    if out is not None:
        if not isinstance(out, (np.ndarray, ArraySpec)):
            raise EincTypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
        if out.shape != spec_shape:
            raise EincShapeError(f"out has shape {out.shape} but the result has shape {spec_shape}")
        check_supported(out.dtype, "out")
        if not np.can_cast(res, out.dtype, casting):
            raise EincTypeError(f"the result dtype {res} cannot be cast to out's dtype {out.dtype} "
                                f"under casting={casting!r}")
        if not out.flags.writeable:
            raise EincValueError("out is read-only")
        if any(s % out.itemsize for s in out.strides):
            raise EincValueError("out has strides that are not whole elements")
        return out.dtype, tuple(s // out.itemsize for s in out.strides)
    if order not in ORDERS:
        raise EincValueError(f"order={order!r}: use one of {', '.join(ORDERS)}")
    if order in ("A", "K"):
        fortran = all(a.flags.f_contiguous and not a.flags.c_contiguous for a in arrays if a.ndim > 1)
        fortran = fortran and any(a.ndim > 1 for a in arrays)
        order = "F" if fortran else "C"
    if order == "F":
        return res, tuple(reversed(row_major(tuple(reversed(spec_shape)))))
    return res, row_major(spec_shape)


def _view_of(plan, out, dtype):
    """(shape, byte strides) when the einsum is a pure relabelling of one operand.

    numpy returns a view (not a copy) for a single-operand einsum that sums nothing —
    ``ii->i``, ``ij->ji`` — and users rely on its cost being zero; einc does the same.
    """
    if (out is not None or dtype is not None or len(plan.steps) != 1 or len(plan.bound.inputs) != 1
            or not plan.out_shape):  # a 0-d result is a scalar in numpy, never a view
        return None
    step = plan.steps[0]
    if any(m.kind == "sum" for m in step.modes) or plan.out_dtype != plan.bound.dtypes[0]:
        return None
    lay, item = plan.bound.inputs[0], plan.out_dtype.itemsize
    stride = dict(zip(lay.labels, lay.strides))
    return plan.out_shape, tuple(stride.get(l, 0) * item for l in plan.bound.output)


def _view_maker(view, a):
    """A cheap way to make ``view`` of arrays with ``a``'s signature, or None.

    ``np.ndarray(..., buffer=a)`` costs ~1 µs, as much as numpy's whole ``ii->i`` call;
    a transpose (``ij->ji``) or a strided slice of the flat array (a diagonal of a
    contiguous array) costs a fraction of that. A recipe is kept only if it gives exactly
    ``view``'s shape, strides and data pointer on ``a`` (the signature fixes all three).
    """
    if view is None or type(a) is not np.ndarray:
        return None
    shape, strides = view
    cands = []
    if a.ndim == len(shape) and sorted(a.strides) == sorted(strides) and len(set(a.strides)) == a.ndim:
        perm = tuple(a.strides.index(st) for st in strides)
        cands.append(lambda x, perm=perm: x.transpose(perm))
    if len(shape) == 1 and strides[0] > 0 and strides[0] % a.itemsize == 0 and (
            a.flags.c_contiguous or a.flags.f_contiguous):
        step = strides[0] // a.itemsize
        stop = (shape[0] - 1) * step + 1 if shape[0] else 0
        if a.flags.c_contiguous:
            cands.append(lambda x: x.ravel()[:stop:step])
        else:
            cands.append(lambda x: x.ravel("K")[:stop:step])
    for make in cands:
        try:
            v = make(a)
        except ValueError:
            continue
        if v.shape == shape and v.strides == strides and v.ctypes.data == a.ctypes.data and v.base is not None:
            return make
    return None


def _build(spec, arrays, out, dtype, order, casting, optimize, memory_limit, strategy,
           compile=True, backend="cpu"):
    copies = _misaligned(arrays)
    arrays = _validate(arrays)
    bound = bind(spec, arrays)
    if out is not None:
        if not isinstance(out, (np.ndarray, ArraySpec)):
            raise EincTypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
        check_supported(out.dtype, "out")
    res = _result_dtype(bound.dtypes, dtype, casting, None if out is None else out.dtype)
    if backend == "cpu" and any(d in GPU_ONLY for d in (*bound.dtypes, res)):
        raise EincTypeError("bfloat16 contractions run on the CUDA backend only (pass torch or "
                            "DLPack device arrays, or backend='cuda')")
    ext = dict(bound.extents)
    shape = tuple(ext[l] for l in bound.output)
    out_dtype, out_strides = _out_layout(shape, res, out, order, arrays, casting)
    plan = plan_within(make_plan, bound, out_strides, out_dtype, res, optimize, memory_limit, strategy, backend)
    if not compile:
        return plan
    ex = Executable(plan)
    ex.view = _view_of(plan, out, dtype)
    ex.view_fast = _view_maker(ex.view, arrays[0]) if backend == "cpu" and out is None else None
    ex.copies = copies
    ex.out_order = "F" if out is None and is_fortran(shape, out_strides) else "C"
    ex.out_alloc = (plan.out_shape, plan.out_dtype, ex.out_order)  # np.empty's arguments
    ex.out_scalar = len(plan.out_shape) == 0
    return ex


def einsum(*operands, **options):
    """numpy.einsum's answer, computed by kernels einc generates for this contraction.

    ``einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize="auto",
    memory_limit=None, backend="auto", strategy=None, precision=None, executor=None,
    devices=None, stream=None)``.

    Accepts everything numpy.einsum does (subscripts or sublist form, ``out``, ``dtype``,
    ``order``, ``casting``, ``optimize``) plus a named-axis form, any number of operands
    and labels, and reducing an ellipsis away (``i...->i`` sums the broadcast dimensions).
    ``strategy`` forces a kernel family ("generic", "reduce", "gett") where it applies.
    ``precision="tf32"`` lets float32 GEMM steps run on tensor cores in TF32 (10-bit
    mantissa products, fp32 sums) on the CUDA backend; the default keeps full fp32.
    ``executor=`` ("local", a concurrent.futures.Executor or a dask Client) or
    ``devices=`` (["cpu", "cpu"]: a local dask cluster, one worker process per entry) run
    the einsum sliced: ``memory_limit`` then bounds each slice's peak per device (operand
    slices, temporaries, result slice; see einc.slicing) and the answer is bitwise the same
    on any of them (einc.distributed).
    ``stream=`` (a torch/CuPy stream, anything with ``__cuda_stream__``, or a raw handle)
    runs the CUDA kernels on that stream, after the work that produced the operands (see
    einc.runtime.streams); the result is ready on it. The default is the operands' library's
    current stream. Passing a stream asks for the CUDA backend.

    >>> import numpy as np, einc
    >>> einc.einsum("ij,jk->ik", np.eye(2), np.arange(4.0).reshape(2, 2))
    array([[0., 1.],
           [2., 3.]])
    """
    if not options:  # a repeated numpy call with every option at its default: no keywords
        fast = _fast_call(operands)  # to sort out is most of a small call's saving
        if fast is not MISS:
            return fast
        if TORCH_HOT:  # the same for torch CUDA tensors (cuda_call.torch_hot_call)
            fast = torch_hot_call(operands)
            if fast is not MISS:
                return fast
    elif not _OPTIONS.issuperset(options):
        bad = ", ".join(sorted(set(options) - _OPTIONS))
        raise EincTypeError(f"einsum() got unexpected keyword argument(s) {bad}; it takes {', '.join(_OPTION_LIST)}")
    return _einsum(*operands, **options)


def _einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize="auto",
            memory_limit=None, backend="auto", strategy=None, precision=None, executor=None,
            devices=None, stream=None):
    """einc.einsum with its options spelled out (see einsum)."""
    if stream is not None:
        if backend == "cpu":
            raise EincValueError("stream= is for the CUDA backend; backend='cpu' was asked for")
        if executor is not None or devices is not None:
            raise EincValueError("stream= cannot be combined with executor= or devices= (each worker "
                                 "runs its slices on its own device's stream)")
        from .runtime.streams import handle_of
        handle_of(stream)  # a bad stream= is refused before any device work
        backend = "cuda"
    if executor is not None or devices is not None:
        from .distributed import sliced_einsum
        return sliced_einsum(operands, memory_limit, dtype, optimize, strategy, executor, devices, out,
                             backend="cuda" if backend == "cuda" else "cpu")
    if _defaults(out, dtype, order, casting, optimize, memory_limit, backend, strategy, precision):
        fast = _fast_call(operands)  # a repeated numpy call with default options
        if fast is not MISS:
            return fast
    order = _order(order)
    _check_options(order, casting, backend, strategy)
    strategy = knobs(strategy, precision)
    if backend != "cpu" and (backend == "cuda" or _maybe_device(operands, out)):
        seen = None
        if out is None and operands and type(operands[0]) is str:
            seen = fast_cuda_einsum(operands[0], operands[1:], dtype, order, casting, optimize,
                                    memory_limit, strategy, _EXECUTABLES, stream,
                                    remember=stream is None and _defaults(out, dtype, order, casting, optimize,
                                                                          memory_limit, backend, strategy,
                                                                          precision))
            if type(seen) is not Seen:
                return seen
        if backend == "cuda" or _any_device(operands, out):
            spec, raw = _split_args(operands)
            from .cuda_call import cuda_einsum
            return cuda_einsum(spec, raw, out, dtype, order, casting, optimize, memory_limit, strategy,
                               _build, _EXECUTABLES, stream, seen)
    if operands and type(operands[0]) is str:
        spec, raw = parse(operands[0]), operands[1:]
        if not raw:
            raise EincSpecError("einsum needs at least one operand")
    else:
        spec, raw = _split_args(operands)
    arrays = [_operand(x, i) for i, x in enumerate(raw)]
    key = (spec, _signature(arrays),
           None if out is None else (out.shape, out.strides, out.dtype) if isinstance(out, np.ndarray) else id(out),
           dtype if dtype is None else str(dtype), order, casting,
           optimize if type(optimize) is str else _hashable(optimize), _hashable(memory_limit), strategy)
    ex = _EXECUTABLES.get(key)
    if ex is None:
        ex = _build(spec, arrays, out, dtype, order, casting, optimize, memory_limit, strategy)
        ex.prefer_cuda = (backend == "auto" and sum(s.flops for s in ex.plan.steps) >= AUTO_CUDA_MIN_FLOPS
                          and _cuda_usable())
        _EXECUTABLES.put(key, ex)
        # (a "cpu" call's entry is one an "auto" call would also run on the CPU: below the GPU size)
        if ((backend == "auto" or sum(s.flops for s in ex.plan.steps) < AUTO_CUDA_MIN_FLOPS)
                and type(operands[0]) is str and not ex.prefer_cuda and not ex.copies
                and key[2:] == (None, None, "K", "safe", "auto", None, None)
                and all(type(a) is np.ndarray for a in raw)):
            if len(_FAST) > 4096:
                _FAST.clear()
            _FAST[(operands[0],) + tuple(x for sig in key[1] for x in sig)] = ex
    if ex.prefer_cuda:
        from .cuda_call import cuda_einsum
        return cuda_einsum(spec, arrays, out, dtype, order, casting, optimize, memory_limit, strategy,
                           _build, _EXECUTABLES)
    return _run(ex, arrays, out)



_OPTION_LIST = tuple(inspect.signature(_einsum).parameters)[1:]
_OPTIONS = frozenset(_OPTION_LIST)
einsum.__signature__ = inspect.signature(_einsum)

def _maybe_device(operands, out) -> bool:
    """Cheap pre-check: anything that is not a numpy array, a str or a list might be one."""
    for x in operands:
        t = type(x)
        if t is not np.ndarray and t is not str and t is not list:
            return True
    return out is not None and type(out) is not np.ndarray


def _any_device(operands, out) -> bool:
    from .runtime.device_arrays import is_device_array
    return any(is_device_array(x) for x in operands if type(x) is not np.ndarray) or (
        out is not None and type(out) is not np.ndarray and is_device_array(out))


_CUDA_USABLE = None


def _cuda_usable() -> bool:
    global _CUDA_USABLE
    if _CUDA_USABLE is None:
        from .runtime.cuda import available
        _CUDA_USABLE = available()
    return _CUDA_USABLE


_FAST: dict = {}  # (subscripts, then shape, strides, dtype of each operand) -> Executable


def _fast_call(operands):
    """The cheapest path: default options, numpy operands, a signature seen before."""
    n = len(operands)
    if n == 2:  # one and two operands spelled out: this path is most of a small call's cost
        s, a = operands
        if type(s) is not str or type(a) is not np.ndarray:
            return MISS
        ex = _FAST.get((s, a.shape, a.strides, a.dtype))
    elif n == 3:
        s, a, b = operands
        if type(s) is not str or type(a) is not np.ndarray or type(b) is not np.ndarray:
            return MISS
        ex = _FAST.get((s, a.shape, a.strides, a.dtype, b.shape, b.strides, b.dtype))
    else:
        if not operands or type(operands[0]) is not str:
            return MISS
        sig = [operands[0]]
        for a in operands[1:]:
            if type(a) is not np.ndarray:
                return MISS
            sig += (a.shape, a.strides, a.dtype)
        ex = _FAST.get(tuple(sig))
    if ex is None:
        return MISS
    make = ex.view_fast
    if make is not None:
        return make(operands[1])
    if ex.view is not None:
        return _run(ex, operands[1:], None)
    result = np.empty(*ex.out_alloc)
    ex(operands[1:], result)
    return result[()] if ex.out_scalar else result


def _run(ex, arrays, out):
    if ex.copies:
        arrays = [a.copy(order="C") if i in ex.copies else a for i, a in enumerate(arrays)]
    if ex.view is not None and out is None:
        if ex.view_fast is not None and type(arrays[0]) is np.ndarray:  # (a subclass keeps the old path)
            return ex.view_fast(arrays[0])
        shape, strides = ex.view
        a = arrays[0]
        if a.flags.c_contiguous or a.flags.f_contiguous:  # ~1 µs, vs ~5 µs for as_strided
            return np.ndarray(shape, a.dtype, buffer=a, offset=0, strides=strides)
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=a.flags.writeable)
    if out is not None:
        for i, a in enumerate(arrays):
            if np.may_share_memory(out, a):
                raise EincValueError(f"out overlaps operand {i}; pass a separate output array")
        return ex(arrays, out)
    result = np.empty(ex.plan.out_shape, dtype=ex.plan.out_dtype, order=ex.out_order)
    ex(arrays, result)
    return result[()] if result.ndim == 0 else result


def contract_path(*operands, optimize="auto", memory_limit=None, shapes=False):
    """``(path, info)`` as opt_einsum.contract_path gives, for einc's bound einsum.

    >>> import einc
    >>> path, info = einc.contract_path("ij,jk,kl->il", (2, 3), (3, 4), (4, 5), shapes=True)
    >>> path
    [(0, 1), (0, 1)]
    """
    spec, raw = _split_args(operands)
    if shapes:
        arrays = [ArraySpec(dims, (0,) * len(dims), np.dtype(np.float64))
                  for dims in (_shape(s, i) for i, s in enumerate(raw))]
    else:
        arrays = [_operand(x, i) for i, x in enumerate(raw)]
    return contraction_path(bind(spec, arrays), optimize, memory_limit)


def _shape(s, i) -> tuple:
    """A shape given as numbers (``contract_path(shapes=True)``, ``contract_expression``)."""
    try:
        dims = tuple(operator.index(n) for n in s)
    except TypeError:
        raise EincTypeError(f"the shape of operand {i} must be a sequence of ints, got {s!r}") from None
    if any(n < 0 for n in dims):
        raise EincShapeError(f"the shape of operand {i}, {dims}, has a negative size")
    return dims


def _array_shape(s, i, dtype) -> tuple:
    """A shape some numpy array of ``dtype`` can have (an expression for others could never run)."""
    dims = _shape(s, i)
    if len(dims) > 64 or math.prod(dims) * dtype.itemsize >= 2**63:
        raise EincShapeError(f"the shape of operand {i}, {dims}, is larger than a numpy array can be")
    return dims


class ContractExpression:
    """A contraction planned and compiled once for given shapes; call it with arrays.

    >>> import numpy as np, einc
    >>> expr = einc.contract_expression("ij,jk->ik", (8, 8), (8, 8))
    >>> expr(np.eye(8), np.eye(8)).trace()
    8.0
    """

    def __init__(self, subscripts, *shapes, dtype=None, optimize="auto", memory_limit=None,
                 strategy=None, precision=None):
        self.subscripts = subscripts
        self.spec = parse(subscripts)
        dts = dtype if isinstance(dtype, (list, tuple)) else [dtype or np.float64] * len(shapes)
        if len(dts) != len(shapes):
            raise EincValueError(f"dtype= names {len(dts)} dtype(s) for {len(shapes)} shapes")
        self.dtypes = tuple(check_supported(d, f"dtype of operand {i}") for i, d in enumerate(dts))
        self.shapes = tuple(_array_shape(s, i, d) for i, (s, d) in enumerate(zip(shapes, self.dtypes)))
        _check_options("K", "safe", "cpu", strategy)
        self.options = dict(optimize=optimize, memory_limit=memory_limit, strategy=knobs(strategy, precision))
        normalize_optimize(optimize, memory_limit)
        self._cache: dict = {}
        self._fast: dict = {}
        # planned for descriptions of C-ordered operands: nothing is allocated for big shapes
        proto = [ArraySpec(s, tuple(x * d.itemsize for x in row_major(s)), d)
                 for s, d in zip(self.shapes, self.dtypes)]
        self._executable(proto, None, None, "K", "safe")  # plan and compile now

    def _executable(self, arrays, out, dtype, order, casting):
        if out is not None and not isinstance(out, (np.ndarray, ArraySpec)):
            raise EincTypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
        key = (tuple((a.strides, a.dtype) for a in arrays),
               None if out is None else (out.strides, out.dtype), _hashable(dtype), order, casting)
        ex = self._cache.get(key)
        if ex is None:
            ex = _build(self.spec, arrays, out, dtype, order, casting, **self.options)
            self._cache[key] = ex
        return ex

    def __call__(self, *arrays, out=None, dtype=None, order="K", casting="safe", stream=None):
        """Contract ``arrays`` (numpy on the CPU; CUDA device arrays, or any with ``stream=``,
        on the GPU, as einc.einsum would)."""
        if stream is None and _defaults(out, dtype, order, casting, "auto", None, "auto", None, None):
            try:  # a signature this expression has run before: no checks left to repeat
                ex = self._fast.get(_signature([a for a in arrays if type(a) is np.ndarray]))
            except AttributeError:
                ex = None
            if ex is not None and len(arrays) == len(self.shapes):
                result = np.empty(ex.plan.out_shape, dtype=ex.plan.out_dtype, order=ex.out_order)
                ex(arrays, result)
                return result[()] if result.ndim == 0 else result
        if stream is not None or (_maybe_device(arrays, out) and _any_device(arrays, out)):
            return self._cuda(arrays, out, dtype, order, casting, stream)
        ex, arrays = self._checked(arrays, out, dtype, order, casting)
        if (out is None and dtype is None and order == "K" and casting == "safe" and ex.view is None
                and not ex.copies and all(type(a) is np.ndarray for a in arrays)):
            self._fast[_signature(arrays)] = ex
        return _run(ex, arrays, out)

    def _cuda(self, arrays, out, dtype, order, casting, stream):
        from .cuda_call import cuda_einsum
        from .runtime.streams import handle_of
        order = _order(order)
        _check_options(order, casting, "cuda", None)
        if stream is not None:
            handle_of(stream)
        if len(arrays) != len(self.shapes):
            raise EincSpecError(f"this expression takes {len(self.shapes)} operands, got {len(arrays)}")
        for i, (a, s) in enumerate(zip(arrays, self.shapes)):
            shape = tuple(getattr(a, "shape", np.shape(a)))
            if shape != s:
                raise EincShapeError(f"operand {i} has shape {shape} but the expression was built for {s}")
        o = self.options
        return cuda_einsum(self.spec, list(arrays), out, dtype, order, casting, o["optimize"],
                           o["memory_limit"], o["strategy"], _build, _EXECUTABLES, stream)

    def _checked(self, arrays, out, dtype, order, casting):
        order = _order(order)
        _check_options(order, casting, "cpu", None)
        arrays = [_operand(x, i) for i, x in enumerate(arrays)]
        if len(arrays) != len(self.shapes):
            raise EincSpecError(f"this expression takes {len(self.shapes)} operands, got {len(arrays)}")
        for i, (a, s) in enumerate(zip(arrays, self.shapes)):
            if a.shape != s:
                raise EincShapeError(f"operand {i} has shape {a.shape} but the expression was "
                                     f"built for {s}")
        return self._executable(arrays, out, dtype, order, casting), arrays

    def __repr__(self):
        return f"<einc.ContractExpression {self.subscripts!r} shapes={self.shapes}>"


def contract_expression(subscripts, *shapes, dtype=None, optimize="auto", memory_limit=None,
                        strategy=None, precision=None) -> ContractExpression:
    """A reusable compiled contraction for operands of ``shapes`` (see ContractExpression)."""
    return ContractExpression(subscripts, *shapes, dtype=dtype, optimize=optimize,
                              memory_limit=memory_limit, strategy=strategy, precision=precision)


def plan_for(subscripts, shapes, dtype="float64", optimize="auto", memory_limit=None,
             strategy=None, order="C", backend="cpu", precision=None):
    """The Plan einc would run for C-contiguous operands of ``shapes`` (no data needed).

    >>> import einc.api
    >>> p = einc.api.plan_for("ij,jk->ik", [(64, 32), (32, 16)], "float32")
    >>> p.steps[0].strategy
    'gett'
    """
    spec = parse(subscripts)
    dts = dtype if isinstance(dtype, (list, tuple)) else [dtype] * len(shapes)
    arrays = []
    for i, (s, d) in enumerate(zip(shapes, dts)):
        d = check_supported(d, f"dtype of operand {i}")
        strides = tuple(x * d.itemsize for x in row_major(tuple(s)))
        arrays.append(ArraySpec(tuple(int(n) for n in s), strides, d))
    if len(arrays) != len(spec.inputs):
        raise EincSpecError(f"the subscripts name {len(spec.inputs)} operand(s) but "
                            f"{len(arrays)} shapes were given")
    return _build(spec, arrays, None, None, order, "safe", optimize, memory_limit,
                  knobs(strategy, precision), compile=False, backend=backend)
