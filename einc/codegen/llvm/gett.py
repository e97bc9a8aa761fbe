"""A packed, cache-blocked GEMM kernel ("GETT") emitted as LLVM IR.

GETT = GEMM-like tensor-tensor contraction.  The caller flattens each mode group of a
binary contraction (batch, free modes of A, free modes of B, contracted modes) into a
table of int64 element offsets, so this one kernel serves any layout: transposed,
permuted, strided or negatively strided operands.  Only the dtype and the SIMD width
are baked into the IR; every size is a run-time argument.

The emitted function::

    void f(T* C, const S* A, const S* B, const int64_t* dims, const int64_t* tab,
           T* work, int64_t n0, int64_t n1);          // S = T for float32/float64

    dims = [NB, M, N, K]
    tab  = bA[NB] bB[NB] bC[NB] mA[M] mC[M] nB[N] nC[N] kA[K] kB[K]   (concatenated)

    for b < NB, m < M, n0 <= n < n1:
        C[bC[b]+mC[m]+nC[n]] = sum_k A[bA[b]+mA[m]+kA[k]] * B[bB[b]+kB[k]+nB[n]]

The result overwrites C (K == 0 writes zeros).  ``work`` is scratch of
``gett_workspace_elems()`` elements, 64-byte aligned, one per thread; (n0, n1) lets
callers split the columns across threads.

Algorithm (the BLIS/Goto design)::

    for jc in [n0, n1) step NC:              # B block of KC x NC lives in L3
      for pc in [0, K) step KC:
        pack B[pc:pc+KC, jc:jc+NC] -> NR-wide column panels (k-major, zero padded)
        for ic in [0, M) step MC:            # A block of MC x KC lives in L2
          pack A[ic:ic+MC, pc:pc+KC] -> MR-high row panels (k-major, zero padded)
          for jr in [0, nc) step NR:         # one B micro-panel (KC x NR) stays in L1
            for ir in [0, mc) step MR:
              micro-kernel: MR x NR tile in registers, kc rank-1 updates
              C tile  = tile   (first K block)   /   C tile += tile   (later K blocks)

The micro-kernel keeps MR x (NR/W) vector accumulators in registers; each k step loads
NR/W vectors of the packed B row, broadcasts MR packed A elements and issues
MR*NR/W ``llvm.fmuladd`` (a fused multiply-add where the target has FMA).  With AVX2
that is 6 x 2 ymm accumulators + 2 B vectors + 1 broadcast = 15 of 16 registers.

Packing pads both panels with zeros: rows/columns past M/N so edge tiles run the same
full-width kernel (only valid elements are written back), and k up to a multiple of the
unroll factor KU so the k loop needs no remainder (0*0 adds nothing, and never makes a
NaN since both padded factors are finite zeros).

Fast paths chosen at run time, once per call: when nB (resp. nC) is unit stride over
[n0, n1), B panels are packed and full C tiles written with vector loads/stores;
otherwise scalar gathers/scatters through the tables.  B panels whose NR columns are
contiguous (checked per panel) take the vector path too.  A panels: when kA is unit
stride over the K block (checked once per block), each full panel copies MR contiguous
runs of k (W at a time, transposed in registers into the k-major panel) without
reading the tables per element; else when the panel's MR rows are contiguous (mA,
checked per panel) each k is one MR-wide load; else a gather with one kA read per k.
Column panels at most W wide (N <= W, or the last panel) run a one-vector micro-kernel
instead of spending half its FMAs on zero padding.  Before each micro-kernel the
C tile is prefetched for writing so its misses overlap the k loop (~+12% at 2048^3).
A column-major C still works but takes the scalar write-back; a caller that can
should swap the operands (C^T = B^T A^T) so C's unit stride lands on N.

Integer operands (int8, uint8, int16; both the same) take the same loops with int16
panels and int32 sums (``_IntEmitter``): packing widens to int16 and stores k in
pairs, the micro-kernel does one pmaddwd (int16 pairs -> int32 lanes: the
``llvm.x86.*.pmadd.wd`` intrinsic where the host has it, else sext/mul/add, which
LLVM also turns into vpmaddwd) plus one wrapping add per accumulator and k pair, and
the store truncates to C's integer dtype (at most 32 bits).  Sums modulo 2^32 then
truncated give numpy's wrapped answer for any result of at most 32 bits (int8 in,
int8 out included); results wider than that must not use this kernel.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()

WORK_ALIGN = 64  # bytes; the caller's workspace and each region in it


# --------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GettParams:
    """Register tile and cache blocking for one (dtype, vector width)."""

    dtype: str  # C's element: "f32" | "f64" | "i8" | "u8" | "i16" | "u16" | "i32" | "u32"
    vector_bits: int
    W: int  # lanes per vector (of the accumulator: fp32/fp64, or int32)
    MR: int  # rows of the register tile (broadcast A elements)
    NR: int  # columns of the register tile (a multiple of W)
    KU: int  # k unroll of the micro-kernel; packed k is padded to a multiple of it
    MC: int  # rows of the packed A block (multiple of MR): L2 resident
    KC: int  # depth of the packed blocks (multiple of KU): a KC x NR B panel fits L1
    NC: int  # columns of the packed B block (multiple of NR): L3 resident
    prefetch_c: bool = True  # prefetch the C tile before each micro-kernel
    in_dtype: str = ""  # A's and B's element ("i8" | "u8" | "i16"); "" = dtype (float)

    @property
    def integer(self) -> bool:
        """Integer operands: int16 panels, int32 sums (see _IntEmitter)."""
        return bool(self.in_dtype) and self.in_dtype[0] in "iu"

    @property
    def elem_bytes(self) -> int:
        return _TAG_BYTES[self.dtype]

    @property
    def pack_bytes(self) -> int:
        """Bytes of one packed panel element: int16 for integer operands."""
        return 2 if self.integer else self.elem_bytes

    @property
    def acc_bytes(self) -> int:
        return 4 if self.integer else self.elem_bytes

    @property
    def nvec(self) -> int:
        return self.NR // self.W

    @staticmethod
    def _round_region(elems: int, nbytes: int) -> int:
        per = WORK_ALIGN // nbytes
        return -(-elems // per) * per

    @property
    def b_region(self) -> int:
        """Packed elements (of pack_bytes) of the B block."""
        return self._round_region(self.KC * self.NC, self.pack_bytes)

    @property
    def a_region(self) -> int:
        return self._round_region(self.MC * self.KC, self.pack_bytes)

    @property
    def workspace_bytes(self) -> int:
        # packed B block | packed A block | one spilled register tile
        return ((self.b_region + self.a_region) * self.pack_bytes
                + self._round_region(self.MR * self.NR, self.acc_bytes) * self.acc_bytes)

    @property
    def workspace_elems(self) -> int:
        """The workspace in elements of C's dtype (a whole number: 64 | bytes)."""
        return self.workspace_bytes // self.elem_bytes


_TAG_BYTES = {"f32": 4, "f64": 8, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4}
INT_OPERANDS = ("i8", "u8", "i16")  # widen losslessly to the int16 pmaddwd consumes


def _dtype_tag(dtype) -> str:
    dt = np.dtype(dtype)
    if dt == np.float32:
        return "f32"
    if dt == np.float64:
        return "f64"
    if dt.kind in "iu" and dt.itemsize <= 4:
        return f"{dt.kind}{8 * dt.itemsize}"
    raise TypeError(f"gett supports float32, float64 and integers of at most 32 bits, not {dt}")


def _tags(dtype, in_dtype) -> tuple[str, str]:
    """(C tag, operand tag); operand tag "" for float (operands are C's dtype)."""
    tag = _dtype_tag(dtype)
    itag = tag if in_dtype is None else _dtype_tag(in_dtype)
    if tag[0] == "f" or itag[0] == "f":
        if itag != tag:
            raise TypeError(f"float gett needs operands of C's dtype ({dtype}), not {in_dtype}")
        return tag, ""
    if itag not in INT_OPERANDS:
        raise TypeError(f"integer gett takes int8, uint8 or int16 operands, not {np.dtype(in_dtype or dtype)}")
    return tag, itag


def gett_params(dtype, vector_bits: int, in_dtype=None, **override) -> GettParams:
    """Default blocking for C of ``dtype`` and operands of ``in_dtype`` (default: dtype)
    at ``vector_bits`` (overrides are for tuning).

    >>> gett_params(np.int32, 256, np.int8).NR   # 16 int32 columns: two ymm accumulators
    16
    """
    tag, itag = _tags(dtype, in_dtype)
    if vector_bits not in (128, 256, 512):
        raise ValueError(f"vector_bits must be 128, 256 or 512, not {vector_bits}")
    integer = bool(itag)
    eb = 2 if integer else _TAG_BYTES[tag]  # bytes of a packed element
    W = vector_bits // (8 * (4 if integer else eb))
    # Register tile: NR = 2 vectors.  16 vector registers (SSE/AVX2) hold 6x2
    # accumulators + 2 B vectors + 1 broadcast; AVX-512's 32 registers hold 12x2.
    NR = 2 * W
    MR = 12 if vector_bits == 512 else 6
    KU = 4  # integer: two k pairs (two pmaddwd per accumulator) per unrolled step
    # KC: one packed B micro-panel (KC x NR) takes about 3/4 of a 32 KiB L1d, so it
    # stays resident while the A micro-panels stream past it.  A deep KC also means
    # fewer read-modify-write passes over C (K/KC of them), which matters when C is
    # large and memory bandwidth is shared: 384 beat 256 by ~10% at 2048^3 fp32 on a
    # loaded Zen 3, and tied on an idle one.
    KC = max(128, min(512, (24 * 1024) // (NR * eb) // KU * KU))
    # MC: the packed A block (MC x KC) uses roughly half of a 512 KiB L2.
    MC = max(MR, ((256 * 1024) // (KC * eb)) // MR * MR)
    # NC: the packed B block (KC x NC) is a few MiB: L3 resident, and wide enough that
    # the A block is reused across many B micro-panels.
    NC = 4096 // NR * NR
    p = dict(dtype=tag, vector_bits=vector_bits, W=W, MR=MR, NR=NR, KU=KU,
             MC=MC, KC=KC, NC=NC, in_dtype=itag)
    p.update(override)
    prm = GettParams(**p)
    assert prm.NR % prm.W == 0 and prm.MC % prm.MR == 0
    assert prm.KC % prm.KU == 0 and prm.NC % prm.NR == 0
    assert prm.KU & (prm.KU - 1) == 0  # k is padded with a mask
    assert not prm.integer or prm.KU % 2 == 0  # integer panels hold k in pairs
    return prm


def gett_function_name(dtype: np.dtype, vector_bits: int, in_dtype=None) -> str:
    """Symbol of the kernel for C of ``dtype``, operands of ``in_dtype``, ``vector_bits``."""
    tag, itag = _tags(dtype, in_dtype)
    return f"einc_gett_{itag + '_' if itag else ''}{tag}_v{int(vector_bits)}"


def gett_workspace_elems(dtype: np.dtype, vector_bits: int, in_dtype=None) -> int:
    """Elements of ``dtype`` (64-byte aligned) scratch one call needs (packed A and B blocks)."""
    return gett_params(dtype, vector_bits, in_dtype).workspace_elems


def emit_gett(dtype: np.dtype, vector_bits: int, in_dtype=None,
              pmadd: bool | None = None) -> tuple[str, str]:
    """LLVM IR text of the GETT kernel and its function name.

    ``dtype`` is C's; ``in_dtype`` (default: dtype) A's and B's.  Integer operands
    (int8, uint8, int16) sum in int32 and C gets the sum truncated to ``dtype`` (at most
    32 bits): numpy's wrapped answer.  ``pmadd``: use the x86 pmaddwd intrinsic (default:
    when the host has it at this width); False emits the portable form.

    >>> text, name = emit_gett(np.int32, 256, np.int8)
    >>> name
    'einc_gett_i8_i32_v256'
    """
    prm = gett_params(dtype, vector_bits, in_dtype)
    name = gett_function_name(dtype, vector_bits, in_dtype)
    if prm.integer:
        native = _host_has_pmadd(vector_bits) if pmadd is None else pmadd
        return _IntEmitter(prm, name, native).emit(), name
    return _emit(prm, name)


# pmaddwd at each width, and the host feature it needs
_PMADD = {128: ("llvm.x86.sse2.pmadd.wd", "+sse2"), 256: ("llvm.x86.avx2.pmadd.wd", "+avx2"),
          512: ("llvm.x86.avx512.pmaddw.d.512", "+avx512bw")}


@functools.lru_cache(maxsize=None)
def _host_has_pmadd(vector_bits: int) -> bool:
    from llvmlite import binding as llvm
    if not llvm.get_process_triple().startswith(("x86_64", "i686", "i386")):
        return False
    return _PMADD[vector_bits][1] in llvm.get_host_cpu_features().flatten().split(",")


# --------------------------------------------------------------------------------------
# IR helpers
# --------------------------------------------------------------------------------------
def i64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


class Loop:
    """``for (i = start; i < stop; i += step)`` with optional loop-carried values.

    Usage::

        with Loop(b, start, stop, step, "k", carry=[x0]) as lp:
            ... lp.index, lp.vars[0] ...
            lp.next = [x1]              # values for the next iteration
        lp.vars                         # the final values, valid after the loop
    """

    def __init__(self, b: ir.IRBuilder, start, stop, step=1, name="i", carry=()):
        self.b = b
        self.start = start if isinstance(start, ir.Value) else i64(start)
        self.stop = stop if isinstance(stop, ir.Value) else i64(stop)
        self.step = step if isinstance(step, ir.Value) else i64(step)
        self.name = name
        self.init = list(carry)

    def __enter__(self):
        b = self.b
        pre = b.block
        self.head = b.append_basic_block(f"{self.name}.head")
        self.body = b.append_basic_block(f"{self.name}.body")
        self.exit = b.append_basic_block(f"{self.name}.exit")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.index = b.phi(I64, self.name)
        self.index.add_incoming(self.start, pre)
        self.vars = []
        for j, v in enumerate(self.init):
            phi = b.phi(v.type, f"{self.name}.c{j}")
            phi.add_incoming(v, pre)
            self.vars.append(phi)
        b.cbranch(b.icmp_signed("<", self.index, self.stop), self.body, self.exit)
        b.position_at_end(self.body)
        self.next = list(self.vars)
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            return False
        b = self.b
        latch = b.block
        nxt = b.add(self.index, self.step, name=f"{self.name}.next", flags=("nsw",))
        self.index.add_incoming(nxt, latch)
        assert len(self.next) == len(self.vars)
        for phi, v in zip(self.vars, self.next):
            phi.add_incoming(v, latch)
        b.branch(self.head)
        b.position_at_end(self.exit)
        return False


def smin(b, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def smax(b, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


# --------------------------------------------------------------------------------------
# The kernel
# --------------------------------------------------------------------------------------
class _Emitter:
    def __init__(self, prm: GettParams, name: str):
        self.p = prm
        self.eb = prm.elem_bytes
        self.vb = prm.W * prm.elem_bytes  # vector bytes: packed B rows are aligned to it
        self.mod = ir.Module(name=name)
        self.mod.triple = ""  # the JIT's target machine decides
        fnty = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR, PTR, PTR, I64, I64])
        self.fn = ir.Function(self.mod, fnty, name=name)
        self.fn.attributes.add("nounwind")
        for a, nm in zip(self.fn.args, ("C", "A", "B", "dims", "tab", "work", "n0", "n1")):
            a.name = nm
        for a in self.fn.args[:6]:
            # C is written, the rest only read; C aliases none of them.
            a.add_attribute("noalias")
        self.prefetch = ir.Function(self.mod, ir.FunctionType(ir.VoidType(),
                                                              [PTR, I32, I32, I32]),
                                    name="llvm.prefetch.p0")
        self.declare()

    def declare(self):
        """Element types (T: C's, PT: packed panels', V: an accumulator vector)."""
        prm = self.p
        self.T = ir.FloatType() if prm.dtype == "f32" else ir.DoubleType()
        self.PT = self.T
        self.V = ir.VectorType(self.T, prm.W)
        vname = f"v{prm.W}f{8 * self.eb}"
        self.fmuladd = ir.Function(self.mod, ir.FunctionType(self.V, [self.V] * 3),
                                   name=f"llvm.fmuladd.{vname}")
        self.zero = ir.Constant(self.T, 0.0)
        self.vzero = ir.Constant(self.V, None)

    # --- memory helpers ---------------------------------------------------------------
    def ptr(self, base, off, etype=None):
        return self.b.gep(base, [off], source_etype=etype or self.T)

    def ld(self, base, off, etype=None, align=None):
        et = etype or self.T
        return self.b.load(self.ptr(base, off, et), typ=et,
                           align=align or (8 if et is I64 else self.eb))

    def st(self, val, base, off, align=None):
        self.b.store(val, self.ptr(base, off), align=align or self.eb)

    def tab(self, base, idx):
        return self.ld(base, idx, I64)

    def vload(self, base, off, align):
        return self.b.load(self.ptr(base, off), typ=self.V, align=align)

    def vstore(self, val, base, off, align):
        self.b.store(val, self.ptr(base, off), align=align)

    # --- top level --------------------------------------------------------------------
    def emit(self) -> str:
        p = self.p
        entry = self.fn.append_basic_block("entry")
        b = self.b = ir.IRBuilder(entry)
        C, A, B, dims, tab, work, n0, n1 = self.fn.args
        self.C, self.A, self.B = C, A, B
        NB, M, N, K = (self.ld(dims, i64(i), I64) for i in range(4))
        NB.name, M.name, N.name, K.name = "NB", "M", "N", "K"

        n0 = smax(b, n0, i64(0))
        n1 = smin(b, n1, N)
        empty = b.or_(b.icmp_signed("<=", NB, i64(0)), b.icmp_signed("<=", M, i64(0)))
        empty = b.or_(empty, b.icmp_signed(">=", n0, n1))
        with b.if_then(empty):
            b.ret_void()

        # Offsets tables.
        bA = tab
        bB = self.ptr(bA, NB, I64)
        bC = self.ptr(bB, NB, I64)
        mA = self.ptr(bC, NB, I64)
        mC = self.ptr(mA, M, I64)
        nB = self.ptr(mC, M, I64)
        nC = self.ptr(nB, N, I64)
        kA = self.ptr(nC, N, I64)
        kB = self.ptr(kA, K, I64)
        self.mA, self.mC, self.nB, self.nC, self.kA, self.kB = mA, mC, nB, nC, kA, kB

        with b.if_then(b.icmp_signed("<=", K, i64(0))):
            self.emit_zero_fill(NB, M, n0, n1, bC)
            b.ret_void()

        # Unit-stride columns of B and C (the common row-major case) take vector
        # loads/stores; anything else goes through scalar gathers/scatters.
        self.nB_unit = self.emit_unit_check(nB, n0, n1, "nBu")
        self.nC_unit = self.emit_unit_check(nC, n0, n1, "nCu")

        Bp = work
        Ap = self.ptr(work, i64(p.b_region * p.pack_bytes), I8)
        # The register tile spilled to memory, for edge tiles and scattered C.
        self.tile = self.ptr(work, i64((p.b_region + p.a_region) * p.pack_bytes), I8)

        with Loop(b, 0, NB, 1, "b") as lb:
            oA = self.tab(bA, lb.index)
            oB = self.tab(bB, lb.index)
            oC = self.tab(bC, lb.index)
            with Loop(b, n0, n1, p.NC, "jc") as ljc:
                jc = ljc.index
                nc = smin(b, i64(p.NC), b.sub(n1, jc))
                with Loop(b, 0, K, p.KC, "pc") as lpc:
                    pc = lpc.index
                    kc = smin(b, i64(p.KC), b.sub(K, pc))
                    # k padded to a multiple of KU (a power of two).
                    kcp = b.and_(b.add(kc, i64(p.KU - 1)), i64(-p.KU), name="kcp")
                    first = b.icmp_signed("==", pc, i64(0), name="first")
                    # Unit-stride k in A over this K block: A panels copy runs of k
                    # without reading the kA table per element.
                    self.kA_unit = self.emit_unit_check(kA, pc, b.add(pc, kc), "kAu")
                    with Loop(b, 0, nc, p.NR, "pb") as lpb:
                        jr = lpb.index
                        nr = smin(b, i64(p.NR), b.sub(nc, jr))
                        self.emit_pack_b(self.ptr(Bp, b.mul(jr, kcp), self.PT), oB,
                                         b.add(jc, jr), nr, pc, kc, kcp)
                    with Loop(b, 0, M, p.MC, "ic") as lic:
                        ic = lic.index
                        mc = smin(b, i64(p.MC), b.sub(M, ic))
                        with Loop(b, 0, mc, p.MR, "pa") as lpa:
                            ir_ = lpa.index
                            mr = smin(b, i64(p.MR), b.sub(mc, ir_))
                            self.emit_pack_a(self.ptr(Ap, b.mul(ir_, kcp), self.PT), oA,
                                             b.add(ic, ir_), mr, pc, kc, kcp)
                        self.emit_macro_kernel(Ap, Bp, oC, ic, mc, jc, nc, kcp, first)
        b.ret_void()
        return str(self.mod)

    # --- pieces -----------------------------------------------------------------------
    def emit_zero_fill(self, NB, M, n0, n1, bC):
        """K == 0: the empty sum, so C = 0 over the whole output range."""
        b = self.b
        with Loop(b, 0, NB, 1, "zb") as lb:
            oC = self.tab(bC, lb.index)
            with Loop(b, 0, M, 1, "zm") as lm:
                row = b.add(oC, self.tab(self.mC, lm.index))
                with Loop(b, n0, n1, 1, "zn") as ln:
                    self.st(self.zero, self.C, b.add(row, self.tab(self.nC, ln.index)))

    def emit_unit_check(self, t, n0, n1, name):
        """i1: t[j+1] == t[j] + 1 for all j in [n0, n1-1)."""
        b = self.b
        with Loop(b, n0, b.sub(n1, i64(1)), 1, name, carry=[ir.Constant(I1, 1)]) as lp:
            j = lp.index
            d = b.sub(self.tab(t, b.add(j, i64(1))), self.tab(t, j))
            lp.next = [b.and_(lp.vars[0], b.icmp_signed("==", d, i64(1)))]
        return lp.vars[0]

    def emit_pack_b(self, dst, oB, n, nr, pc, kc, kcp):
        """Pack B[pc:pc+kc, n:n+nr] into dst[k*NR + j], zero padded to kcp x NR."""
        p, b = self.p, self.b
        # Vector rows when the NR columns of this panel are contiguous in B: always
        # when nB is unit stride over [n0, n1), else checked per panel (e.g. a
        # flattened (b, a) mode group that is contiguous only within runs of a).
        full = b.and_(b.icmp_signed("==", nr, i64(p.NR)),
                      b.or_(self.nB_unit, self.emit_panel_unit(self.nB, n, p.NR, nr)))
        with b.if_else(full) as (contiguous, scattered):
            with contiguous:
                # Row-major B: each packed row is NR contiguous elements.
                nb0 = b.add(oB, self.tab(self.nB, n))
                with Loop(b, 0, kc, 1, "pbk") as lk:
                    k = lk.index
                    src = b.add(nb0, self.tab(self.kB, b.add(pc, k)))
                    drow = b.mul(k, i64(p.NR))
                    for v in range(p.nvec):
                        x = self.vload(self.B, b.add(src, i64(v * p.W)), self.eb)
                        self.vstore(x, dst, b.add(drow, i64(v * p.W)), self.vb)
            with scattered:
                # Column by column: walks k, the contiguous direction of a transposed B.
                self.emit_pack_lines(dst, self.B, oB, self.nB, n, nr, p.NR, self.kB, pc, kc, "pb")
        with Loop(b, kc, kcp, 1, "pbt") as lk:
            drow = b.mul(lk.index, i64(p.NR))
            for v in range(p.nvec):
                self.vstore(self.vzero, dst, b.add(drow, i64(v * p.W)), self.vb)

    def emit_pack_lines(self, dst, src, o, tr, r0, count, R, tk, pc, kc, name):
        """dst[k*R + r] = src[o + tr[r0+r] + tk[pc+k]] for r < count, k < kc; rows count..R
        zero: an A panel's rows or a B panel's columns, one at a time along k (the panel
        packers' general case, and their edge panels)."""
        b = self.b
        with Loop(b, 0, count, 1, name + "r") as lr:
            r = lr.index
            line = b.add(o, self.tab(tr, b.add(r0, r)))
            with Loop(b, 0, kc, 1, name + "rk") as lk:
                k = lk.index
                x = self.ld(src, b.add(line, self.tab(tk, b.add(pc, k))))
                self.st(x, dst, b.add(b.mul(k, i64(R)), r))
        with Loop(b, count, R, 1, name + "z") as lr:
            with Loop(b, 0, kc, 1, name + "zk") as lk:
                self.st(self.zero, dst, b.add(b.mul(lk.index, i64(R)), lr.index))

    def emit_panel_unit(self, t, start, width, count):
        """i1: count == width and t[start+j] == t[start] + j for all j < width.

        Reads t only when count == width (never past the table's end).
        """
        b = self.b
        pre = b.block
        ok = b.icmp_signed("==", count, i64(width))
        chk = b.append_basic_block("pu.chk")
        done = b.append_basic_block("pu.done")
        b.cbranch(ok, chk, done)
        b.position_at_end(chk)
        t0 = self.tab(t, start)
        res = ir.Constant(I1, 1)
        for j in range(1, width):
            d = b.sub(self.tab(t, b.add(start, i64(j))), t0)
            res = b.and_(res, b.icmp_signed("==", d, i64(j)))
        chk_end = b.block
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(I1, "pu")
        phi.add_incoming(ir.Constant(I1, 0), pre)
        phi.add_incoming(res, chk_end)
        return phi

    def st_transposed(self, vs, dst, off, etype=None, align=None):
        """Store rows vs[i][k] (len(vs) vectors of W) as dst[off + k*len(vs) + i]."""
        b, W, R = self.b, self.p.W, len(vs)
        parts = list(vs)
        while len(parts) > 1:  # concatenate pairwise (pad an odd one with undef)
            if len(parts) % 2:
                parts.append(ir.Constant(parts[0].type, ir.Undefined))
            n = parts[0].type.count
            parts = [b.shuffle_vector(parts[j], parts[j + 1],
                                      ir.Constant(ir.VectorType(I32, 2 * n),
                                                  list(range(2 * n))))
                     for j in range(0, len(parts), 2)]
        big = parts[0]
        mask = [(q % R) * W + q // R for q in range(R * W)]
        t = b.shuffle_vector(big, ir.Constant(big.type, ir.Undefined),
                             ir.Constant(ir.VectorType(I32, R * W), mask))
        b.store(t, self.ptr(dst, off, etype), align=align or self.eb)

    def emit_pack_a(self, dst, oA, m, mr, pc, kc, kcp):
        """Pack A[m:m+mr, pc:pc+kc] into dst[k*MR + i], zero padded to kcp x MR.

        Full panels (mr == MR) walk k outer with the MR rows unrolled, so each packed
        column is MR contiguous stores:
          * kA unit stride over the K block: MR contiguous runs of A, no table reads;
          * else mA contiguous over the panel's rows: one MR-wide load per k;
          * else a gather with one kA read per k (not per element).
        Edge panels gather row by row and zero the missing rows.
        """
        p, b = self.p, self.b
        full = b.icmp_signed("==", mr, i64(p.MR))
        with b.if_else(full, likely=True) as (fullp, edge):
            with fullp:
                rows = [b.add(oA, self.tab(self.mA, b.add(m, i64(i)))) for i in range(p.MR)]
                with b.if_else(self.kA_unit) as (kunit, kgen):
                    with kunit:
                        ka0 = self.tab(self.kA, pc)
                        bases = [b.add(r, ka0) for r in rows]
                        # W k at a time: MR vector loads, transposed in registers to
                        # MR*W k-major elements; then the k remainder one at a time.
                        kv = b.and_(kc, i64(-p.W), name="kv")
                        with Loop(b, 0, kv, p.W, "pauv") as lk:
                            k = lk.index
                            vs = [self.vload(self.A, b.add(bs, k), self.eb) for bs in bases]
                            self.st_transposed(vs, dst, b.mul(k, i64(p.MR)))
                        with Loop(b, kv, kc, 1, "pauk") as lk:
                            k = lk.index
                            drow = b.mul(k, i64(p.MR))
                            xs = [self.ld(self.A, b.add(bs, k)) for bs in bases]
                            for i, x in enumerate(xs):
                                self.st(x, dst, b.add(drow, i64(i)))
                    with kgen:
                        munit = self.emit_panel_unit(self.mA, m, p.MR, mr)
                        with b.if_else(munit) as (mu, mg):
                            with mu:
                                VM = ir.VectorType(self.T, p.MR)
                                with Loop(b, 0, kc, 1, "pamk") as lk:
                                    k = lk.index
                                    src = b.add(rows[0], self.tab(self.kA, b.add(pc, k)))
                                    x = b.load(self.ptr(self.A, src), typ=VM, align=self.eb)
                                    b.store(x, self.ptr(dst, b.mul(k, i64(p.MR))),
                                            align=self.eb)
                            with mg:
                                with Loop(b, 0, kc, 1, "pagk") as lk:
                                    k = lk.index
                                    ka = self.tab(self.kA, b.add(pc, k))
                                    drow = b.mul(k, i64(p.MR))
                                    xs = [self.ld(self.A, b.add(r, ka)) for r in rows]
                                    for i, x in enumerate(xs):
                                        self.st(x, dst, b.add(drow, i64(i)))
            with edge:
                # Row by row: walks k, the contiguous direction of a row-major A.
                self.emit_pack_lines(dst, self.A, oA, self.mA, m, mr, p.MR, self.kA, pc, kc, "pa")
        with Loop(b, kc, kcp, 1, "pat") as lk:
            drow = b.mul(lk.index, i64(p.MR))
            for i in range(p.MR):
                self.st(self.zero, dst, b.add(drow, i64(i)))

    def emit_macro_kernel(self, Ap, Bp, oC, ic, mc, jc, nc, kcp, first):
        """All MR x NR tiles of the packed MC x NC block (B micro-panel outer: L1)."""
        p, b = self.p, self.b
        with Loop(b, 0, nc, p.NR, "jr") as ljr:
            jr = ljr.index
            nr = smin(b, i64(p.NR), b.sub(nc, jr))
            bpanel = self.ptr(Bp, b.mul(jr, kcp), self.PT)
            with Loop(b, 0, mc, p.MR, "ir") as lir:
                ir_ = lir.index
                mr = smin(b, i64(p.MR), b.sub(mc, ir_))
                apanel = self.ptr(Ap, b.mul(ir_, kcp), self.PT)
                if p.prefetch_c:
                    self.emit_prefetch_c(oC, b.add(ic, ir_), mr, b.add(jc, jr), nr)
                if p.nvec > 1:
                    # A panel at most W wide (e.g. N = 8 with NR = 16): a one-vector
                    # tile skips the FMAs on the zero-padded columns.
                    narrow = b.icmp_signed("<=", nr, i64(p.W))
                    with b.if_else(narrow) as (one, all_):
                        with one:
                            acc1 = self.emit_micro_kernel(apanel, bpanel, kcp, nvec=1)
                            acc1 = [acc1[j // p.nvec] if j % p.nvec == 0 else self.vzero
                                    for j in range(p.MR * p.nvec)]
                            blk1 = b.block
                        with all_:
                            accn = self.emit_micro_kernel(apanel, bpanel, kcp)
                            blkn = b.block
                    acc = []
                    for j in range(p.MR * p.nvec):
                        phi = b.phi(self.V, f"acc{j}")
                        phi.add_incoming(acc1[j], blk1)
                        phi.add_incoming(accn[j], blkn)
                        acc.append(phi)
                else:
                    acc = self.emit_micro_kernel(apanel, bpanel, kcp)
                self.emit_store_tile(acc, oC, b.add(ic, ir_), mr, b.add(jc, jr), nr, first)

    def emit_prefetch_c(self, oC, m, mr, n, nr):
        """Prefetch (for writing) the C tile the micro-kernel is about to update.

        A large C is not cache resident and its tile rows (or columns) are far apart,
        often a page each; without this the write-back stalls on cache misses that the
        k loop could have hidden.  Unit-stride rows: the first and last element of each
        row.  Otherwise (e.g. column-major C): the first and last row of each column.
        Edge tiles clamp indices to the last valid row/column (never read mC/nC past
        M/N).
        """
        p, b = self.p, self.b

        def fetch(off):
            b.call(self.prefetch, [self.ptr(self.C, off), ir.Constant(I32, 1),
                                   ir.Constant(I32, 3), ir.Constant(I32, 1)])

        def clamp(i, last):
            return smin(b, i64(i), last) if i else i64(0)

        last_m, last_n = b.sub(mr, i64(1)), b.sub(nr, i64(1))
        with b.if_else(self.nC_unit, likely=True) as (rows, cols):
            with rows:
                c0 = b.add(oC, self.tab(self.nC, n))
                for i in range(p.MR):
                    row = b.add(c0, self.tab(self.mC, b.add(m, clamp(i, last_m))))
                    fetch(row)
                    fetch(b.add(row, i64(p.NR - 1)))
            with cols:
                r0 = b.add(oC, self.tab(self.mC, m))
                r1 = b.add(oC, self.tab(self.mC, b.add(m, last_m)))
                for j in range(p.NR):
                    col = self.tab(self.nC, b.add(n, clamp(j, last_n)))
                    fetch(b.add(r0, col))
                    fetch(b.add(r1, col))

    def emit_micro_kernel(self, ap0, bp0, kcp, nvec=None):
        """MR x (nvec*W) tile = sum over k < kcp of packed A column x packed B row.

        ``nvec`` (default NR/W) vectors of each packed B row (stride NR) are used.
        Returns MR*nvec accumulator vectors, row-major (acc[i*nvec + v]).
        """
        p, b = self.p, self.b
        nvec = nvec or p.nvec
        nacc = p.MR * nvec
        mask0 = ir.Constant(ir.VectorType(I32, p.W), [0] * p.W)
        undef = ir.Constant(self.V, ir.Undefined)
        carry = [ap0, bp0] + [self.vzero] * nacc
        with Loop(b, 0, kcp, p.KU, "k", carry=carry) as lk:
            ap, bp = lk.vars[0], lk.vars[1]
            acc = list(lk.vars[2:])
            for u in range(p.KU):
                bv = [self.vload(bp, i64(u * p.NR + v * p.W), self.vb) for v in range(nvec)]
                for i in range(p.MR):
                    a = self.ld(ap, i64(u * p.MR + i))
                    av = b.shuffle_vector(b.insert_element(undef, a, ir.Constant(I32, 0)),
                                          undef, mask0)
                    for v in range(nvec):
                        j = i * nvec + v
                        acc[j] = b.call(self.fmuladd, [av, bv[v], acc[j]])
            lk.next = [self.ptr(ap, i64(p.KU * p.MR)), self.ptr(bp, i64(p.KU * p.NR))] + acc
        return lk.vars[2:]

    def emit_store_tile(self, acc, oC, m, mr, n, nr, first):
        """C[m:m+mr, n:n+nr] = tile (first K block) or += tile (later ones)."""
        p, b = self.p, self.b
        fast = b.and_(b.and_(b.icmp_signed("==", mr, i64(p.MR)),
                             b.icmp_signed("==", nr, i64(p.NR))), self.nC_unit)
        with b.if_else(fast, likely=True) as (vector, scalar):
            with vector:
                # Full tile, unit-stride C rows: vector (unaligned) stores.
                nc0 = b.add(oC, self.tab(self.nC, n))
                rows = [b.add(nc0, self.tab(self.mC, b.add(m, i64(i)))) for i in range(p.MR)]
                with b.if_else(first) as (overwrite, accumulate):
                    for add in (False, True):
                        with (accumulate if add else overwrite):
                            for i in range(p.MR):
                                for v in range(p.nvec):
                                    off = b.add(rows[i], i64(v * p.W))
                                    x = acc[i * p.nvec + v]
                                    if add:
                                        x = b.fadd(self.vload(self.C, off, self.eb), x)
                                    self.vstore(x, self.C, off, self.eb)
            with scalar:
                # Edge tile or scattered C: spill the tile, write only valid elements.
                for j, x in enumerate(acc):
                    self.vstore(x, self.tile, i64(j * p.W), self.vb)
                with b.if_else(first) as (overwrite, accumulate):
                    for add in (False, True):
                        with (accumulate if add else overwrite):
                            with Loop(b, 0, mr, 1, "si") as li:
                                i = li.index
                                row = b.add(oC, self.tab(self.mC, b.add(m, i)))
                                trow = b.mul(i, i64(p.NR))
                                with Loop(b, 0, nr, 1, "sj") as lj:
                                    j = lj.index
                                    off = b.add(row, self.tab(self.nC, b.add(n, j)))
                                    x = self.ld(self.tile, b.add(trow, j))
                                    if add:
                                        x = b.fadd(self.ld(self.C, off), x)
                                    self.st(x, self.C, off)


class _IntEmitter(_Emitter):
    """int8 / uint8 / int16 operands, int32 sums, C truncated to its (<= 32-bit) dtype.

    Panels hold int16 (operands sign- or zero-extended while packing) with k in pairs,
    the layout pmaddwd consumes: packed A element (i, k) sits at (k/2)*2MR + 2i + k%2,
    packed B element (k, j) at (k/2)*2NR + 2j + k%2.  One micro-kernel step takes a
    k pair: it broadcasts A's (i, k), (i, k+1) pair as one int32 and pmaddwd gives, per
    int32 lane j, a[i,k]*b[k,j] + a[i,k+1]*b[k+1,j]; a plain (wrapping) add accumulates.
    Sums are modulo 2^32 (no nsw flags; pmaddwd's one overflow, all four factors -2^15,
    wraps too), so truncating to C's dtype gives the low bits numpy's wrapping sum in
    that dtype gives.  Odd k is padded with a zero partner.
    """

    def __init__(self, prm: GettParams, name: str, native_pmadd: bool):
        self.native_pmadd = native_pmadd
        super().__init__(prm, name)

    def declare(self):
        prm = self.p
        self.T = ir.IntType(8 * prm.elem_bytes)  # C
        self.IN = ir.IntType(int(prm.in_dtype[1:]))  # A and B
        self.unsigned_in = prm.in_dtype[0] == "u"
        self.PT = I16
        self.V = ir.VectorType(I32, prm.W)  # accumulators
        self.PV = ir.VectorType(I16, 2 * prm.W)  # one pmaddwd operand: W lanes x k pair
        self.pvb = min(WORK_ALIGN, 4 * prm.W)  # its bytes: packed pair rows are aligned to it
        self.zero = ir.Constant(self.T, 0)
        self.vzero = ir.Constant(self.V, None)
        self.pmadd = None
        if self.native_pmadd:
            self.pmadd = ir.Function(self.mod, ir.FunctionType(self.V, [self.PV, self.PV]),
                                     name=_PMADD[prm.vector_bits][0])

    # --- helpers ----------------------------------------------------------------------
    def widen(self, x):
        """Operand element(s) -> int16 (lossless: int8, uint8 or int16)."""
        if self.IN is I16 or (isinstance(x.type, ir.VectorType) and x.type.element == I16):
            return x
        ty = ir.VectorType(I16, x.type.count) if isinstance(x.type, ir.VectorType) else I16
        return (self.b.zext if self.unsigned_in else self.b.sext)(x, ty)

    def ld_in(self, base, off, n=None):
        """n (None: one) consecutive operand elements at base[off], widened to int16."""
        ty = self.IN if n is None else ir.VectorType(self.IN, n)
        return self.widen(self.b.load(self.ptr(base, off, self.IN), typ=ty,
                                      align=self.IN.width // 8))

    def st16(self, x, dst, off, align=2):
        self.b.store(x, self.ptr(dst, off, I16), align=align)

    def madd(self, a, b_):
        """pmaddwd: lanes j of (a[2j]*b[2j] + a[2j+1]*b[2j+1]), int16 x int16 -> int32."""
        if self.pmadd is not None:
            return self.b.call(self.pmadd, [a, b_])
        b, W = self.b, self.p.W
        wide = ir.VectorType(I32, 2 * W)
        prod = b.mul(b.sext(a, wide), b.sext(b_, wide))
        undef = ir.Constant(wide, ir.Undefined)
        half = lambda s: b.shuffle_vector(prod, undef, ir.Constant(  # noqa: E731
            ir.VectorType(I32, W), [2 * j + s for j in range(W)]))
        return b.add(half(0), half(1))

    def zero_pairs(self, dst, p0, p1, width):
        """dst[p*width : (p+1)*width] = 0 for k pairs p in [p0, p1)."""
        z = ir.Constant(ir.VectorType(I16, width), None)
        with Loop(self.b, p0, p1, 1, "zp") as lp:
            self.st16(z, dst, self.b.mul(lp.index, i64(width)), 4)

    # --- packing ----------------------------------------------------------------------
    def emit_pack_b(self, dst, oB, n, nr, pc, kc, kcp):
        """Pack B[pc:pc+kc, n:n+nr] as int16 k pairs: dst[(k/2)*2NR + 2j + k%2]."""
        p, b = self.p, self.b
        NR2 = 2 * p.NR
        kp = b.lshr(kc, i64(1), name="kp")
        # k pairs past kc (the odd k's partner included) are zero
        self.zero_pairs(dst, kp, b.lshr(kcp, i64(1)), NR2)
        full = b.and_(b.icmp_signed("==", nr, i64(p.NR)),
                      b.or_(self.nB_unit, self.emit_panel_unit(self.nB, n, p.NR, nr)))
        inter = ir.Constant(ir.VectorType(I32, NR2), [j // 2 + (j % 2) * p.NR for j in range(NR2)])
        with b.if_else(full) as (contiguous, scattered):
            with contiguous:
                # Two rows of NR contiguous elements, widened and interleaved.
                nb0 = b.add(oB, self.tab(self.nB, n))
                row = lambda k: self.ld_in(self.B, b.add(nb0, self.tab(self.kB, b.add(pc, k))), p.NR)  # noqa: E731
                with Loop(b, 0, kp, 1, "pbk") as lk:
                    k0 = b.shl(lk.index, i64(1))
                    x = b.shuffle_vector(row(k0), row(b.add(k0, i64(1))), inter)
                    self.st16(x, dst, b.mul(lk.index, i64(NR2)), self.pvb)
                with b.if_then(b.trunc(kc, I1)):
                    x = b.shuffle_vector(row(b.sub(kc, i64(1))),
                                         ir.Constant(ir.VectorType(I16, p.NR), None), inter)
                    self.st16(x, dst, b.mul(kp, i64(NR2)), self.pvb)
            with scattered:
                # Column by column through the tables, into a zeroed panel.
                self.zero_pairs(dst, 0, b.lshr(b.add(kc, i64(1)), i64(1)), NR2)
                with Loop(b, 0, nr, 1, "pbj") as lj:
                    nbj = b.add(oB, self.tab(self.nB, b.add(n, lj.index)))
                    col = b.shl(lj.index, i64(1))
                    with Loop(b, 0, kc, 1, "pbjk") as lk:
                        k = lk.index
                        x = self.ld_in(self.B, b.add(nbj, self.tab(self.kB, b.add(pc, k))))
                        at = b.add(b.mul(b.lshr(k, i64(1)), i64(NR2)), b.add(col, b.and_(k, i64(1))))
                        self.st16(x, dst, at)

    def emit_pack_a(self, dst, oA, m, mr, pc, kc, kcp):
        """Pack A[m:m+mr, pc:pc+kc] as int16 k pairs: dst[(k/2)*2MR + 2i + k%2].

        Full panels with unit-stride k (row-major A): 2W k of each row per load, the
        MR rows of W pairs (int32) transposed in registers to pair-major order; then
        pair by pair.  Other full panels gather with one kA read per k; edge panels go
        row by row into a zeroed panel.
        """
        p, b = self.p, self.b
        MR2 = 2 * p.MR
        kp = b.lshr(kc, i64(1), name="kp")
        self.zero_pairs(dst, kp, b.lshr(kcp, i64(1)), MR2)
        full = b.icmp_signed("==", mr, i64(p.MR))
        with b.if_else(full, likely=True) as (fullp, edge):
            with fullp:
                rows = [b.add(oA, self.tab(self.mA, b.add(m, i64(i)))) for i in range(p.MR)]
                with b.if_else(self.kA_unit) as (kunit, kgen):
                    with kunit:
                        ka0 = self.tab(self.kA, pc)
                        bases = [b.add(r, ka0) for r in rows]
                        kv = b.and_(kc, i64(-2 * p.W), name="kv")
                        with Loop(b, 0, kv, 2 * p.W, "pauv") as lk:
                            k = lk.index
                            vs = [b.bitcast(self.ld_in(self.A, b.add(bs, k), 2 * p.W), self.V)
                                  for bs in bases]
                            self.st_transposed(vs, dst, b.mul(b.lshr(k, i64(1)), i64(p.MR)),
                                               I32, 4)
                        with Loop(b, kv, b.and_(kc, i64(-2)), 2, "paup") as lk:
                            k = lk.index
                            drow = b.mul(b.lshr(k, i64(1)), i64(MR2))
                            for i, bs in enumerate(bases):
                                self.st16(self.ld_in(self.A, b.add(bs, k), 2), dst,
                                          b.add(drow, i64(2 * i)), 4)
                        with b.if_then(b.trunc(kc, I1)):
                            k = b.sub(kc, i64(1))
                            drow = b.mul(kp, i64(MR2))
                            for i, bs in enumerate(bases):
                                self.st16(self.ld_in(self.A, b.add(bs, k)), dst,
                                          b.add(drow, i64(2 * i)))
                    with kgen:
                        with Loop(b, 0, kc, 1, "pagk") as lk:
                            k = lk.index
                            ka = self.tab(self.kA, b.add(pc, k))
                            at = b.add(b.mul(b.lshr(k, i64(1)), i64(MR2)), b.and_(k, i64(1)))
                            xs = [self.ld_in(self.A, b.add(r, ka)) for r in rows]
                            for i, x in enumerate(xs):
                                self.st16(x, dst, b.add(at, i64(2 * i)))
            with edge:
                self.zero_pairs(dst, 0, b.lshr(b.add(kc, i64(1)), i64(1)), MR2)
                with Loop(b, 0, mr, 1, "pai") as li:
                    mai = b.add(oA, self.tab(self.mA, b.add(m, li.index)))
                    row = b.shl(li.index, i64(1))
                    with Loop(b, 0, kc, 1, "paik") as lk:
                        k = lk.index
                        x = self.ld_in(self.A, b.add(mai, self.tab(self.kA, b.add(pc, k))))
                        at = b.add(b.mul(b.lshr(k, i64(1)), i64(MR2)), b.add(row, b.and_(k, i64(1))))
                        self.st16(x, dst, at)

    # --- compute and store -------------------------------------------------------------
    def emit_micro_kernel(self, ap0, bp0, kcp, nvec=None):
        """MR x (nvec*W) int32 tile = sum over k < kcp, one pmaddwd per k pair."""
        p, b = self.p, self.b
        nvec = nvec or p.nvec
        nacc = p.MR * nvec
        splat = ir.Constant(ir.VectorType(I32, p.W), [0] * p.W)
        undef = ir.Constant(self.V, ir.Undefined)
        carry = [ap0, bp0] + [self.vzero] * nacc
        with Loop(b, 0, kcp, p.KU, "k", carry=carry) as lk:
            ap, bp = lk.vars[0], lk.vars[1]
            acc = list(lk.vars[2:])
            for u in range(p.KU // 2):
                bv = [b.load(self.ptr(bp, i64(u * 2 * p.NR + v * 2 * p.W), I16), typ=self.PV,
                             align=self.pvb) for v in range(nvec)]
                for i in range(p.MR):
                    a = b.load(self.ptr(ap, i64(u * p.MR + i), I32), typ=I32, align=4)
                    av = b.shuffle_vector(b.insert_element(undef, a, ir.Constant(I32, 0)),
                                          undef, splat)
                    av = b.bitcast(av, self.PV)
                    for v in range(nvec):
                        j = i * nvec + v
                        acc[j] = b.add(acc[j], self.madd(av, bv[v]))  # wraps: no nsw
            lk.next = [self.ptr(ap, i64(p.KU * p.MR), I16),
                       self.ptr(bp, i64(p.KU * p.NR), I16)] + acc
        return lk.vars[2:]

    def narrow(self, x):
        """int32 (vector) -> C's dtype: the low bits, numpy's wrapped value."""
        if self.T.width == 32:
            return x
        ty = ir.VectorType(self.T, x.type.count) if isinstance(x.type, ir.VectorType) else self.T
        return self.b.trunc(x, ty)

    def emit_store_tile(self, acc, oC, m, mr, n, nr, first):
        """C[m:m+mr, n:n+nr] = tile (first K block) or += tile, in C's dtype (wrapping)."""
        p, b = self.p, self.b
        VC = ir.VectorType(self.T, p.W)
        fast = b.and_(b.and_(b.icmp_signed("==", mr, i64(p.MR)),
                             b.icmp_signed("==", nr, i64(p.NR))), self.nC_unit)
        with b.if_else(fast, likely=True) as (vector, scalar):
            with vector:
                nc0 = b.add(oC, self.tab(self.nC, n))
                rows = [b.add(nc0, self.tab(self.mC, b.add(m, i64(i)))) for i in range(p.MR)]
                with b.if_else(first) as (overwrite, accumulate):
                    for add in (False, True):
                        with (accumulate if add else overwrite):
                            for i in range(p.MR):
                                for v in range(p.nvec):
                                    ptr = self.ptr(self.C, b.add(rows[i], i64(v * p.W)))
                                    x = self.narrow(acc[i * p.nvec + v])
                                    if add:
                                        x = b.add(b.load(ptr, typ=VC, align=self.eb), x)
                                    b.store(x, ptr, align=self.eb)
            with scalar:
                for j, x in enumerate(acc):
                    b.store(x, self.ptr(self.tile, i64(j * p.W), I32), align=min(WORK_ALIGN, 4 * p.W))
                with b.if_else(first) as (overwrite, accumulate):
                    for add in (False, True):
                        with (accumulate if add else overwrite):
                            with Loop(b, 0, mr, 1, "si") as li:
                                i = li.index
                                row = b.add(oC, self.tab(self.mC, b.add(m, i)))
                                trow = b.mul(i, i64(p.NR))
                                with Loop(b, 0, nr, 1, "sj") as lj:
                                    j = lj.index
                                    off = b.add(row, self.tab(self.nC, b.add(n, j)))
                                    x = self.narrow(self.ld(self.tile, b.add(trow, j), I32, 4))
                                    if add:
                                        x = b.add(self.ld(self.C, off), x)
                                    self.st(x, self.C, off)


def _emit(prm: GettParams, name: str) -> tuple[str, str]:
    return _Emitter(prm, name).emit(), name
