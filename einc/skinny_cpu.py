"""Which CPU gett steps run the skinny kernels, and their tables.

`execute` asks skinny_tables (codegen/llvm/skinny.py: lanes along a free mode of the big
operand) and then skinny_rows_tables (codegen/llvm/skinny_rows.py: lanes along the small
operand's columns) for every float `gett` step; a step neither takes keeps the packed
gett. The plan is not involved: the strategy stays `gett` (see docs/architecture.md).
"""
from __future__ import annotations

import os

import numpy as np

from .ir import Step, offset_table
from .runtime.cpu import jit

SKINNY_MAX_N = 160  # columns (the small operand's free group) up to which skinny runs,
SKINNY_SHALLOW_K, SKINNY_SHALLOW_MAX_N = 64, 2048  # or up to 2048 when K is this shallow
SKINNY_PACK_MAX = 1 << 16  # elements of A up to which the kernel copies it x-fast first
SKINNY_SPLIT_FINE = 1 << 27  # multiply-adds from which a step is cut into 4 parts per thread
SKINNY_MIN_ROWS = 8  # rest rows below which the row split cannot use the threads
SKINNY_MAX_K_CHUNKED = 4096  # K above which re-reading A per column chunk leaves L2


def _eligible(step: Step, dtypes) -> bool:
    """A float gett step without batch modes, all operands in the compute type (and the
    kernels not switched off by EINC_CPU_SKINNY=0)."""
    return (os.environ.get("EINC_CPU_SKINNY", "1") != "0" and step.strategy == "gett"
            and step.compute in (np.float32, np.float64) and all(d == step.compute for d in dtypes)
            and not any(m.kind == "batch" for m in step.modes))


def skinny_bits(X: int, N: int, itemsize: int) -> int:
    """Vector width of the skinny kernel for X lanes and N columns: the host's, or half of
    it when that wastes clearly fewer lanes on a ragged X and one column chunk holds all N
    (memory-bound; 21 lanes: 66% of two zmm, 88% of three ymm; measured akdbc 1.45 -> 1.04
    ms single-threaded, cabkd 1.59 -> 1.00; ccsd ijk (N = 126, compute-bound) ran 15% faster
    on zmm). $EINC_SKINNY_BITS forces one (A/B switch)."""
    from .codegen.llvm.skinny import skinny_np
    host = jit().host_vector_bits()
    forced = int(os.environ.get("EINC_SKINNY_BITS", "0"))
    if forced:
        return min(host, forced)
    util = lambda bits: X / (-(-X // (bits // (8 * itemsize))) * (bits // (8 * itemsize)))
    if host > 256 and N <= skinny_np(N) and util(host // 2) >= util(host) + 0.05:
        return host // 2
    return host


def skinny_tables(step: Step, dtypes):
    """(dims, tab, big, NP, vector bits) for the skinny kernel (codegen/llvm/skinny.py), or None.

    Fits a float gett step without batch modes where the other operand's free group has
    at most SKINNY_MAX_N columns (SKINNY_SHALLOW_MAX_N when K is shallow: the packed
    kernel's packing is then not amortised) and one operand (``big``: 1 or 2) gives the
    lanes a mode x, best first: C's unit-stride mode where the operand is unit-stride
    too; C's unit-stride mode of a small operand (<= SKINNY_PACK_MAX elements, which the
    kernel copies x-fast first); the operand's longest unit-stride free mode (C then
    through the box or one store per lane). The operand's other free modes become the
    rest group, ordered so that C's smallest stride is innermost.
    """
    from .codegen.llvm.skinny import skinny_np
    if not _eligible(step, dtypes):
        return None
    modes, st = step.modes, step.strides
    offsets = lambda js, t: offset_table([modes[j].extent for j in js], [st[t][j] for j in js])

    # C's unit-stride mode: lanes along it store whole vectors
    u = next((j for j, m in enumerate(modes) if st[0][j] == 1 and m.extent >= 2), None)
    best = None
    for big, free, small in ((1, "m", "n"), (2, "n", "m")):
        fj = [j for j, m in enumerate(modes) if m.kind == free]
        # columns in C's order: consecutive columns of a tile land next to each other
        nj = sorted((j for j, m in enumerate(modes) if m.kind == small), key=lambda j: -abs(st[0][j]))
        kj = [j for j, m in enumerate(modes) if m.kind == "k"]
        N = int(np.prod([modes[j].extent for j in nj], dtype=np.int64))
        K = int(np.prod([modes[j].extent for j in kj], dtype=np.int64))
        if N == 0 or N > (SKINNY_SHALLOW_MAX_N if K <= SKINNY_SHALLOW_K else SKINNY_MAX_N):
            continue  # (N = 0: an empty result, nothing runs)
        size = int(np.prod([modes[j].extent for j in fj + kj], dtype=np.int64))
        # K = 0: A is never read (numpy gives empty arrays zero strides), C gets zeros
        xs = [j for j in fj if (st[big][j] == 1 or K == 0) and modes[j].extent >= 4]
        candidates = []
        korder = sorted(kj, key=lambda j: -abs(st[big][j]))
        kunit = K > 0 and np.array_equal(offsets(korder, big), np.arange(K))
        if u in xs:
            candidates.append((0, u))  # A and C both unit-stride along x
        elif u in fj and 0 < size <= SKINNY_PACK_MAX:
            candidates.append((2, u))  # A small: copied with x unit-stride first (pack mode)
        elif u in fj and kunit:
            candidates.append((1, u))  # A K-contiguous: transposed per lane group (panel)
        if xs:  # the longest unit-stride mode of A; C through the box or per lane
            candidates.append((3, max(xs, key=lambda j: modes[j].extent)))
        for rank, x in candidates:
            # the rest in C's order (consecutive rows fill the same C lines), or in A's
            # for panels (each lane row of A streams sequentially)
            t = big if rank == 1 else 0
            rest = sorted((j for j in fj if j != x), key=lambda j: -abs(st[t][j]))
            R = int(np.prod([modes[j].extent for j in rest], dtype=np.int64))
            # threads split the rest rows; a lane group's A panel (K vectors) is re-read
            # once per column chunk, so it must stay in L2 when there are several chunks
            if R < SKINNY_MIN_ROWS or (N > skinny_np(N) and K > SKINNY_MAX_K_CHUNKED):
                continue
            if best is None or (rank, N) < best[:2]:
                best = (rank, N, big, x, rest, nj, sorted(kj, key=lambda j: -abs(st[big][j])), R, K)
            break
    if best is None:
        return None
    rank, N, big, x, rest, nj, kj, R, K = best
    small = 3 - big

    # C not unit-stride along x but along another rest mode y: the kernel's box over
    # (x, y) transposes through registers, and the rest follows A (smallest stride inner)
    box = st[0][x] != 1 and os.environ.get("EINC_SKINNY_BOX", "1") != "0"  # (A/B switch)
    y = [j for j in rest if st[0][j] == 1 and modes[j].extent >= 2] if box else []
    Y, ay, cy = 1, 0, 0
    if y:
        y = y[0]
        Y, ay, cy = modes[y].extent, st[big][y], st[0][y]
        rest = sorted((j for j in rest if j != y), key=lambda j: -abs(st[big][j]))
    rA, kA, X = offsets(rest, big), offsets(kj, big), modes[x].extent
    bits = skinny_bits(X, N, step.compute.itemsize)
    R = rA.size  # the box took y out of the rest
    src = []
    if rank == 2:  # the kernel packs A as [R][K][Xpad]; rA/kA index the copy, rS/kS A
        W = bits // (8 * step.compute.itemsize)
        xpad = -(-X // W) * W
        src = [rA, kA]
        rA, kA = np.arange(R, dtype=np.int64) * (K * xpad), np.arange(K, dtype=np.int64) * xpad
    mode = {1: 2, 2: 1}.get(rank, 0)  # the kernel's pack: 2 panel, 1 whole copy
    dims = np.array([X, R, N, K, st[0][x], Y, ay, cy, mode, st[big][x]], dtype=np.int64)
    tab = np.concatenate([rA, offsets(rest, 0), offsets(nj, small), offsets(nj, 0),
                          kA, offsets(kj, small), *src])
    return dims, tab, big, skinny_np(N), bits


def skinny_rows_tables(step: Step, dtypes):
    """(dims, tab, big, NV, vector bits) for the skinny row kernel (codegen/llvm/
    skinny_rows.py), or None: a float gett step without batch modes whose C is contiguous
    along the small operand's whole free group (N <= 3 host vectors) and whose big
    operand has >= SKINNY_MIN_ROWS rows (ao2mo ap,srqp->srqa). Tried after skinny_tables."""
    if not _eligible(step, dtypes):
        return None
    modes, st = step.modes, step.strides
    bits = jit().host_vector_bits()
    W = bits // (8 * step.compute.itemsize)

    offsets = lambda js, t: offset_table([modes[j].extent for j in js], [st[t][j] for j in js])

    for big, free, small in ((2, "n", "m"), (1, "m", "n")):
        nj = sorted((j for j, m in enumerate(modes) if m.kind == small), key=lambda j: -abs(st[0][j]))
        fj = sorted((j for j, m in enumerate(modes) if m.kind == free), key=lambda j: -abs(st[0][j]))
        kj = sorted((j for j, m in enumerate(modes) if m.kind == "k"), key=lambda j: -abs(st[big][j]))
        nC = offsets(nj, 0)
        R = int(np.prod([modes[j].extent for j in fj], dtype=np.int64))
        if nC.size == 0 or not np.array_equal(nC, np.arange(nC.size)) or -(-nC.size // W) > 3 \
                or R < SKINNY_MIN_ROWS:
            continue
        K = int(np.prod([modes[j].extent for j in kj], dtype=np.int64))
        dims = np.array([R, nC.size, K], dtype=np.int64)
        tab = np.concatenate([offsets(fj, big), offsets(fj, 0), offsets(nj, 3 - big),
                              offsets(kj, big), offsets(kj, 3 - big)])
        return dims, tab, big, -(-nC.size // W), bits
    return None
