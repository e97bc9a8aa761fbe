// einc CUDA kernel family `gett`: a binary step as a batched GEMM over mode groups,
//
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]
//
// where b, m, n, k each stand for a *group* of the step's modes (batch, M, N, K). A group
// is addressed by its flattened index i: a group of one mode (after the emitter merged
// modes contiguous in every tensor) as i * stride (stride in the metadata); a group of
// several modes through an offset table, tab[i] = element offset of the multi-index i
// (one int64 table per tensor per group, uploaded once). Which groups are tabled is a
// template argument, so one kernel serves every size, stride pattern and permutation of
// its structure, with no transposed copies.
//
// Ownership: a block of NT = (BM/RM)*(BN/RN) threads computes one BM x BN tile of C,
// marching over K in slices of BK. Thread (ty, tx) owns an RM x RN register tile made of
// 4x4 pieces: rows i*(BM/(RM/4)) + ty*4 + [0,4), columns j*(BN/(RN/4)) + tx*4 + [0,4).
// A warp holds 32/TX rows ty of TX = BN/RN threads tx each, so its fragment reads are
// 32/TX broadcast pieces of A and TX distinct 16-byte pieces of B (LDS.128). With
// How lanes map to (ty, tx) is the template argument LANES (emitter switch EINC_GETT_LANES):
//  - 0 (rows): tx = tid % TX, ty = tid / TX. A warp is 2 rows ty of 16 tx: its B fragment
//    read spans 16 distinct 16-byte pieces (256 bytes), A's 2 (broadcast).
//  - 1 (pairs): lanes 2q, 2q+1 share tx and q, q^2 share ty (tx = lane / 2, ty = 2*warp +
//    lane % 2): an LDS.128 is documented (Volta/Turing) to serve lanes whose addresses
//    pair up like that together, 2 wavefronts per B read instead of 4 (a quarter-warp at a
//    time: 8 distinct pieces each).
//  - 2 (warp tiles): a warp is 4 ty x 8 tx (tx = (warp % (TX/8))*8 + lane % 8, ty =
//    (warp / (TX/8))*4 + lane / 8): each quarter-warp reads one A piece (broadcast) and 8
//    consecutive B pieces (128 bytes, one wavefront), the whole warp 64 bytes of A and 128
//    of B, the CUTLASS SIMT lane arrangement.
//  - 3 (paired warp tiles): 4 ty x 8 tx per warp as in 2, lanes paired as in 1: tx =
//    wx*8 + (lane/2) % 8, ty = wy*4 + 2*(lane/16) + lane % 2.
// The C stores cover the same addresses in every mapping.
//   Default 128x128x8, 8x8 per thread, 256 threads; small problems use 64x64x8, 4x4.
//
// Shared memory: S stages of As[BK][BM+PAD] (A *transposed*, k-major, so a thread's 4 rows
// are one vector read) and Bs[BK][BN+PAD], PAD = 16 bytes: rows stay 16-byte aligned, and
// the k-fast stores below (a warp: 32*LA/BK rows of M times BK/LA runs of LA k) land on 32
// distinct banks -- the run starts LA rows apart, which the pad shifts by 16*LA bytes
// (LA = 4: 64 bytes, half the banks; a 32-byte pad, 4 doubles, shifted fp64 by 128 bytes,
// all of them, a 2-way conflict).
//
// Global loads: per slice each thread moves LA = BM*BK/NT elements of A and LB = BK*BN/NT
// of B. M-fast (N-fast): consecutive lanes on consecutive rows, one element each per k.
// K-fast: each thread a run of LA consecutive k of one row (BK/LA threads per row).
// Out-of-range elements (ragged M, N, K) arrive as zeros, so partial tiles need no other
// masking until the masked store. A K-fast operand whose innermost K mode is unit-stride
// (A_KVEC / B_KVEC, chosen by the emitter; ASYNC only) loads each run as one 16-byte vector
// (two for fp64, one 8-byte on 64x64 tiles) into registers, a slice ahead, and stores it
// transposed with LA scalar stores. One 4-byte cp.async per element instead makes each
// instruction touch 16 rows (16 cache lines), 4 instructions per thread and slice: the
// suspected source of the bank conflicts ncu counted on K-fast operands (119 M on TCCG
// ccsd lik,jkl->ji; LDGSTS counts as shared-memory traffic, and the transposed fp32
// stores are conflict-free, see above; not yet re-measured). A run that is not whole
// (ragged K), not contiguous (a tabled K whose innermost extent it crosses) or not
// aligned at run time falls back to element loads, so the variant depends on strides only.
//
// Two pipelines (template argument ASYNC):
//  - ASYNC (storage type == accumulator type: fp32, fp64, int32, int64 without
//    conversion): S-stage cp.async ring (sm_80+; a plain copy on older GPUs). At slice kt:
//      wait for this thread's copies of slice kt; barrier; issue slice kt+S-1 into the
//      stage slice kt-1 used; multiply slice kt.
//    The one barrier per slice is both RAW (every thread's copies of slice kt have
//    landed before anyone reads them) and WAR (everyone finished multiplying slice kt-1
//    before its stage is refilled). A vector-loaded K-fast operand instead loads slice
//    kt+1 into registers before multiplying slice kt and stores it after, into stage
//    kt+1 (mod S): its last readers multiplied slice kt+1-S <= kt-1 and have passed this
//    slice's barrier (WAR); the next slice's barrier is its RAW.
//  - register prefetch (inputs that need a conversion: fp16, int8, ...): two stages;
//    slice kt+1 is loaded into registers (converted) while slice kt is multiplied, then
//    stored into the other stage; one barrier per slice, RAW for slice kt+1 and WAR for
//    the stage slice kt+2 will overwrite (its last readers multiplied slice kt and passed
//    this barrier).
//  In both, a barrier after the last slice protects the stages from the next tile's
//  prologue (WAR), and K = 0 runs no slice and stores the zero-initialised accumulators.
//  Fragments are double-buffered in registers: row k+1 of the slice is read from shared
//  memory while row k is multiplied.
//
// Tile order: one-dimensional grid-stride over (batch, tile) with GROUP_M tile rows
// walked column by column, so consecutive blocks share A and B panels in L2.
//
// DM tiles (fp32 products on the fp64 tensor cores) are gett_dm.cuh's kernel.
#pragma once
#include "common.cuh"

struct EincGettMeta {
  long long M, N, K, batch;  // flattened group extents
  long long tiles_m, tiles_n;
  long long a_b, a_m, a_k;   // strides of single-mode groups (0: group absent)
  long long b_b, b_k, b_n;
  long long c_b, c_m, c_n;    // (wgmma's split TMA store of C: c_n is C's inner N extent)
  const long long* ta_b;     // offset tables of multi-mode groups (null when strided)
  const long long* ta_m;
  const long long* ta_k;
  const long long* tb_b;
  const long long* tb_k;
  const long long* tb_n;
  const long long* tc_b;
  const long long* tc_m;
  const long long* tc_n;
};

template <int BM_, int BN_, int BK_, int RM_, int RN_, int S_> struct EincGettTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, RM = RM_, RN = RN_, S = S_;
  static constexpr int NT = (BM / RM) * (BN / RN);
  static constexpr int GROUP_M = 8;
};

// Tile `tile` of the grid-stride walk -> (batch, first row m0, first column n0): tile
// rows grouped GROUP_M at a time and walked column by column, so consecutive blocks
// share A and B panels in L2. Shared by the gett, mma and wgmma kernels. A 64-bit
// division costs ~100 instructions, a short-K tile (ccsd_t: K = 24) ~2000 in all, so
// tile counts below 2^31 decode in 32 bits.
template <int GROUP_M> __device__ __forceinline__ void einc_tile_origin(long long tile, const EincGettMeta& p,
                                                                       int bm, int bn, long long& bi,
                                                                       long long& m0, long long& n0) {
  const long long per_batch = p.tiles_m * p.tiles_n;
  if (per_batch * p.batch < (1LL << 31)) {  // (uniform) 32-bit divisions: a few instructions
    const unsigned t = static_cast<unsigned>(tile), pb = static_cast<unsigned>(per_batch);
    const unsigned tm = static_cast<unsigned>(p.tiles_m), tn = static_cast<unsigned>(p.tiles_n);
    const unsigned b = t / pb, r = t - b * pb, span = GROUP_M * tn, group = r / span;
    const unsigned first_m = group * GROUP_M, rows = tm - first_m < GROUP_M ? tm - first_m : GROUP_M;
    const unsigned in_group = r - group * span, q = in_group / rows;
    bi = b;
    m0 = static_cast<long long>(first_m + (in_group - q * rows)) * bm;
    n0 = static_cast<long long>(q) * bn;
    return;
  }
  bi = tile / per_batch;
  const long long r = tile - bi * per_batch;
  const long long span = static_cast<long long>(GROUP_M) * p.tiles_n;
  const long long group = r / span;
  const long long first_m = group * GROUP_M;
  const long long rows = p.tiles_m - first_m < GROUP_M ? p.tiles_m - first_m : GROUP_M;
  const long long in_group = r - group * span;
  m0 = (first_m + in_group % rows) * bm;
  n0 = (in_group / rows) * bn;
}

// Offset of index i of a group: through its table, or i * stride.
template <bool TAB> __device__ __forceinline__ long long einc_goff(long long i, long long stride,
                                                                  const long long* tab) {
  if constexpr (TAB) {
    return __ldg(tab + i);
  } else {
    return i * stride;
  }
}

// Asynchronous 4- or 8-byte global -> shared copy; zero-fills when !ok (src not read).
template <class T> __device__ __forceinline__ void einc_cp_async(T* dst, const T* src, bool ok) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async moves 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global" EINC_L2_HINT " [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(sizeof(T)),
               "r"(ok ? static_cast<int>(sizeof(T)) : 0));
#else
  *dst = ok ? *src : zero<T>();
#endif
}
__device__ __forceinline__ void einc_cp_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N> __device__ __forceinline__ void einc_cp_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// Whether table entries tab[0..L) (a run starting at a multiple of L <= 8 of a group whose
// innermost mode has extent >= 2) are consecutive offsets. An aligned run of <= 4 crosses
// at most one mode boundary (3 consecutive indices hold at most one multiple of an extent
// >= 3; extent 2 puts one inside a run of 4), so all its steps but one equal the innermost
// mode's stride. UNIT_INNER (the loads: emit's _kvec / a_mvec give vector runs only where
// the innermost mode is unit-stride in the operand): the first and last entries L-1 apart
// prove it (the one crossing jump is then 1). Otherwise (C's columns, ordered by B: the
// innermost stride may be anything; C [0, 27, 54, 3, ...] has steps 27, 27, -51 summing
// to 3, found by the stream emulator's hypothesis test) the second entry is checked too:
// if the first step is the inner stride it is 1 and the jump is 1; if it is the crossing,
// the L-2 inner steps sum to L-2. A run of 8 is two such runs and the step between them.
// (`first`: tab[0], which the caller has loaded already.)
template <int L, bool UNIT_INNER = true>
__device__ __forceinline__ bool einc_run_contiguous(const long long* __restrict__ tab, long long first) {
  static_assert(L == 2 || L == 4 || L == 8, "runs of 2, 4 or 8");
  const bool second = UNIT_INNER || L == 2 || __ldg(tab + 1) == first + 1;
  if constexpr (L <= 4) {
    return second && __ldg(tab + L - 1) == first + L - 1;
  } else {
    return second && __ldg(tab + 3) == first + 3 && __ldg(tab + 4) == first + 4 &&
           (UNIT_INNER || __ldg(tab + 5) == first + 5) && __ldg(tab + 7) == first + 7;
  }
}

// A thread's run of L consecutive elements of one k-row of an M-fast (N-fast) operand into
// shared memory (the stage's k-row is M-contiguous, so the run lands contiguously): one
// cp.async of up to 16 bytes (two for a 32-byte fp64 run) when the run is whole, contiguous
// and aligned (`vec`), else L element copies, zero-filled past the tensor's edge (`n`
// elements valid; `ok`: the k-row is). `off(e)` is element e's offset from `src`.
template <int L, class T, class Off>
__device__ __forceinline__ void einc_cp_run(T* dst, const T* src, bool ok, bool vec, int n, Off&& off) {
  constexpr int VB = L * sizeof(T) < 16 ? L * sizeof(T) : 16, VN = VB / sizeof(T);
  static_assert(L % VN == 0 && (VB == 8 || VB == 16), "runs of 8, 16 or 32 bytes");
  if (vec && (static_cast<unsigned>(reinterpret_cast<unsigned long long>(src)) & (VB - 1)) == 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#pragma unroll
    for (int h = 0; h < L / VN; ++h) {
      const unsigned sd = static_cast<unsigned>(__cvta_generic_to_shared(dst + h * VN));
      if constexpr (VB == 16) {
        asm volatile("cp.async.cg.shared.global" EINC_L2_HINT " [%0], [%1], 16, %2;\n" ::"r"(sd), "l"(src + h * VN),
                     "r"(ok ? 16 : 0));
      } else {
        asm volatile("cp.async.ca.shared.global" EINC_L2_HINT " [%0], [%1], 8, %2;\n" ::"r"(sd), "l"(src + h * VN),
                     "r"(ok ? 8 : 0));
      }
    }
#else
#pragma unroll
    for (int e = 0; e < L; ++e) dst[e] = ok ? src[e] : zero<T>();
#endif
  } else {
#pragma unroll
    for (int e = 0; e < L; ++e) {
      const bool in = ok && e < n;
      einc_cp_async(dst + e, in ? src + off(e) : src, in);
    }
  }
}

// Four consecutive accumulator values from shared memory in vector loads.
template <class T> __device__ __forceinline__ void einc_load4(const T* p, T* r) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    constexpr int N = 16 / sizeof(T);
#pragma unroll
    for (int h = 0; h < 4 / N; ++h) {
      const EincVec<T, N> v = *reinterpret_cast<const EincVec<T, N>*>(p + h * N);
#pragma unroll
      for (int e = 0; e < N; ++e) r[h * N + e] = v.v[e];
    }
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e) r[e] = p[e];
  }
}

// A thread's run of L consecutive k of one row of a K-fast operand whose innermost K mode
// is unit-stride, into registers; `n` of its elements are inside K (the rest, and all of
// an out-of-range row, are zeros). Strided K: `src` is the run. Tabled K: `src` is the
// row and `tab` the run's table entries. Whole runs go as one or two vector loads when
// they are contiguous (tabled: einc_run_contiguous -- a run starts at a multiple of L <= 4,
// the innermost extent is >= 2 (bind drops size-1 modes) and its stride 1 (emit._kvec), so
// it crosses at most one mode boundary, whose jump must then be 1)
// and aligned; other runs load element by element.
template <int L, bool TAB, class T>
__device__ __forceinline__ void einc_krun(T* r, const T* __restrict__ src, bool row_ok, int n,
                                          const long long* __restrict__ tab) {
  constexpr int VB = L * sizeof(T) < 16 ? L * sizeof(T) : 16;  // bytes per vector load
  constexpr int VN = VB / sizeof(T);
  static_assert(L <= 4 && L % VN == 0, "runs of at most 4, whole vectors");
  bool whole = row_ok && n >= L;
  const T* run = src;
  if constexpr (TAB) {
    const long long first = whole ? __ldg(tab) : 0;
    run = src + first;
    whole = whole && einc_run_contiguous<L>(tab, first);
  }
  whole = whole && (static_cast<unsigned>(reinterpret_cast<unsigned long long>(run)) & (VB - 1)) == 0;
  if (whole) {
#pragma unroll
    for (int h = 0; h < L / VN; ++h) {
      const EincVec<T, VN> v = *reinterpret_cast<const EincVec<T, VN>*>(run + h * VN);
#pragma unroll
      for (int e = 0; e < VN; ++e) r[h * VN + e] = v.v[e];
    }
  } else {
#pragma unroll
    for (int e = 0; e < L; ++e) r[e] = row_ok && e < n ? src[TAB ? __ldg(tab + e) : e] : zero<T>();
  }
}

// Thread tid's place (tx, ty) in a block of NT threads, TX along the tile's columns: the
// lane orders of the gett kernel's header (LANES 0 rows, 1 pairs, 2 warp tiles, 3 paired
// warp tiles). Shared by the gett and stream kernels.
template <int LANES, int TX, int NT> __device__ __forceinline__ void einc_lanes(int tid, int& tx, int& ty) {
  static_assert(LANES != 1 || TX == 16, "lane pairs: two rows of 16 threads per warp");
  static_assert(LANES < 2 || (TX % 8 == 0 && (NT / TX) % 4 == 0), "warp tiles of 4 x 8 threads");
  constexpr int WX = TX / 8 > 0 ? TX / 8 : 1;  // warps along tx in the warp-tile orders
  const int lane = tid % 32, warp = tid / 32, wx = warp % WX, wy = warp / WX;
  tx = LANES == 1   ? lane / 2
       : LANES == 2 ? wx * 8 + lane % 8
       : LANES == 3 ? wx * 8 + (lane / 2) % 8
                    : tid % TX;
  ty = LANES == 1   ? warp * 2 + lane % 2
       : LANES == 2 ? wy * 4 + lane / 8
       : LANES == 3 ? wy * 4 + 2 * (lane / 16) + lane % 2
                    : tid / TX;
}

// The masked store of a thread's RM x RN accumulators (rows (i/4)*(BM/(RM/4)) + ty*4 + i%4,
// columns alike with tx) into the tile at (m0, n0) of C (its batch's origin), converted
// through the compute type TC to the output's dtype. `row(m)` is C's offset of row m < M,
// `col(n)` of a tabled column n < N (TAB_N; else columns are n * p.c_n). Shared by the gett
// kernel (offsets from the tables) and the stream kernel (from shared memory).
template <int BM, int BN, int RM, int RN, bool TAB_N, class TC, class TOut, class TA, class Row, class Col>
__device__ __forceinline__ void einc_tile_store(TOut* __restrict__ C, const TA (&acc)[RM][RN], const EincGettMeta& p,
                                                long long m0, long long n0, int tx, int ty, Row&& row, Col&& col) {
  if constexpr (TAB_N) {
    // Tabled columns come in runs of 4 per thread (j / 4 = g): each run's offset is
    // looked up once per tile, and a run C holds contiguously and aligned goes out as
    // one vector store (TCCG ccsd_t, K = 24, is all epilogue: 0.5 -> 0.9x torch.einsum).
    long long coff[RN / 4];
    bool cvec[RN / 4];
#pragma unroll
    for (int g = 0; g < RN / 4; ++g) {
      const long long n = n0 + g * (BN / (RN / 4)) + tx * 4;
      coff[g] = n < p.N ? col(n) : 0;
      // (first, second and last entries: einc_run_contiguous without UNIT_INNER)
      cvec[g] = n + 3 < p.N && col(n + 1) == coff[g] + 1 && col(n + 3) == coff[g] + 3;
    }
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const long long m = m0 + (i / 4) * (BM / (RM / 4)) + ty * 4 + (i % 4);
      if (m < p.M) {
        TOut* __restrict__ c_row = C + row(m);
#pragma unroll
        for (int g = 0; g < RN / 4; ++g) {
          TOut* __restrict__ q = c_row + coff[g];
          if (cvec[g] && (reinterpret_cast<unsigned long long>(q) & (4 * sizeof(TOut) - 1)) == 0) {
            EincVec<TOut, 4> w;
#pragma unroll
            for (int e = 0; e < 4; ++e) w.v[e] = EincStore<TOut>::f(cast<TC>(acc[i][4 * g + e]));
            *reinterpret_cast<EincVec<TOut, 4>*>(q) = w;
          } else {
            const long long n = n0 + g * (BN / (RN / 4)) + tx * 4;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              if (n + e < p.N) store_as<TC>(c_row + col(n + e), acc[i][4 * g + e]);
            }
          }
        }
      }
    }
  } else {
    // Strided columns walk a pointer (one add per element) rather than keep 64-bit
    // offsets live: the vector-store variant above cost the 4096^3 fp32 GEMM 0.75 ->
    // 0.69x cuBLAS (register pressure in the main loop at the 128-register cap).
    const long long n_first = n0 + tx * 4;
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const long long m = m0 + (i / 4) * (BM / (RM / 4)) + ty * 4 + (i % 4);
      if (m < p.M) {
        TOut* __restrict__ q = C + row(m) + n_first * p.c_n;
#pragma unroll
        for (int j = 0; j < RN; ++j) {
          const long long n = n_first + (j / 4) * (BN / (RN / 4)) + (j % 4);
          if (n < p.N) store_as<TC>(q, acc[i][j]);
          if (j % 4 == 3) {
#pragma unroll
            for (int s = 0; s < BN / (RN / 4) - 3; ++s) q += p.c_n;
          } else {
            q += p.c_n;
          }
        }
      }
    }
  }
}

// D += A B for one 16 x 8 x K fragment product in fp64 (mma.sync m16n8k8 / m16n8k16 .f64,
// sm_90: the shapes that run at the full fp64 tensor rate; m8n8k4 measured half of it). Lane
// l = 4 g + t holds a[i] = A[g + 8 (i % 2)][t + 4 (i / 2)], b[j] = B[t + 4 j][g] and
// d[i] = D[g + 8 (i / 2)][2 t + i % 2]. Before sm_90 (and in the CPU emulator) through shuffles.
template <int K>
__device__ __forceinline__ void einc_dmma(double (&d)[4], const double (&a)[K / 2], const double (&b)[K / 4]) {
  static_assert(K == 8 || K == 16, "m16n8k8 or m16n8k16");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (K == 8) {
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, "
        "{%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
#else
  const int l = static_cast<int>(threadIdx.x & 31), g = l >> 2, c = 2 * (l & 3);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int q = k >> 2, src = k & 3;
    const double b0 = __shfl_sync(0xffffffffu, b[q], 4 * c + src), b1 = __shfl_sync(0xffffffffu, b[q], 4 * (c + 1) + src);
    const double a0 = __shfl_sync(0xffffffffu, a[2 * q], 4 * g + src), a1 = __shfl_sync(0xffffffffu, a[2 * q + 1], 4 * g + src);
    d[0] += a0 * b0;
    d[1] += a0 * b1;
    d[2] += a1 * b0;
    d[3] += a1 * b1;
  }
#endif
}

template <class Cfg, bool ASYNC, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool A_MFAST, bool B_NFAST,
          class TOut, class TC, class TA, class SA, class SB, bool A_KVEC = false, bool B_KVEC = false,
          int LANES = 0, bool A_MVEC = false, bool B_NVEC = false>
__device__ __forceinline__ void einc_gett(void* __restrict__ out, const void* __restrict__ a_ptr,
                                          const void* __restrict__ b_ptr, const EincGettMeta& p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, RM = Cfg::RM, RN = Cfg::RN, NT = Cfg::NT;
  constexpr int S = ASYNC ? Cfg::S : 2;
  constexpr int LA = BM * BK / NT, LB = BK * BN / NT, PAD = 16 / sizeof(TA) > 0 ? 16 / sizeof(TA) : 1;
  static_assert(RM % 4 == 0 && RN % 4 == 0, "register tiles are made of 4x4 pieces");
  static_assert(NT % BM == 0 && NT % BN == 0 && NT % BK == 0, "load mappings tile the block");
  static_assert((BM * BK) % NT == 0 && (BK * BN) % NT == 0, "whole loads per thread");
  static_assert(BK % LA == 0 && BK % LB == 0, "k-fast loads stay inside one row");
  static_assert(S >= 2, "at least double buffering");
  static_assert(!ASYNC || (sizeof(SA) == sizeof(TA) && sizeof(SB) == sizeof(TA)), "async copies move raw bits");
  static_assert(!(A_KVEC || B_KVEC) || ASYNC, "vector k-fast runs are raw bits too");
  static_assert(!(A_KVEC && A_MFAST) && !(B_KVEC && B_NFAST), "vector runs are along K");
  static_assert((!A_MVEC || (A_MFAST && ASYNC)) && (!B_NVEC || (B_NFAST && ASYNC)), "M/N runs: fast, raw bits");

  __shared__ __align__(16) TA As[S][BK][BM + PAD];
  __shared__ __align__(16) TA Bs[S][BK][BN + PAD];

  const SA* __restrict__ A = static_cast<const SA*>(a_ptr);
  const SB* __restrict__ B = static_cast<const SB*>(b_ptr);
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x;
  constexpr int TX = BN / RN;
  int tx, ty;
  einc_lanes<LANES, TX, NT>(tid, tx, ty);

  // Where this thread's loads land inside a tile: load i covers (a_mm(i), a_kk(i)).
  // M-fast: lanes on consecutive rows, each thread one row and LA slices of k.
  // K-fast: each thread LA consecutive k of one row (BK/LA threads per row), so it keeps
  // a single row pointer; a warp covers 32*LA/BK rows x BK, and its transposed
  // shared-memory stores hit 32 distinct banks thanks to the pad.
  // M-fast with runs (A_MVEC): each thread LA consecutive rows of one k (BM/LA threads per
  // k-row, NT*LA/BM = BK k-rows), copied as one vector (einc_cp_run).
  auto a_mm = [&](int i) { return A_MVEC ? (tid % (BM / LA)) * LA + i : A_MFAST ? tid % BM : tid / (BK / LA); };
  auto a_kk = [&](int i) {
    return A_MVEC ? tid / (BM / LA) : A_MFAST ? tid / BM + i * (NT / BM) : (tid % (BK / LA)) * LA + i;
  };
  auto b_nn = [&](int i) { return B_NVEC ? (tid % (BN / LB)) * LB + i : B_NFAST ? tid % BN : tid / (BK / LB); };
  auto b_kk = [&](int i) {
    return B_NVEC ? tid / (BN / LB) : B_NFAST ? tid / BN + i * (NT / BN) : (tid % (BK / LB)) * LB + i;
  };

  const long long per_batch = p.tiles_m * p.tiles_n;
  const long long tiles = per_batch * p.batch;
  const int nk = static_cast<int>((p.K + BK - 1) / BK);  // the emitter keeps K < 2^34

  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    long long bi, m0, n0;
    einc_tile_origin<Cfg::GROUP_M>(tile, p, BM, BN, bi, m0, n0);

    // The one row of A and column of B this thread loads from (fixed for the tile);
    // out-of-range ones are flagged and load zeros. Strided K groups then walk a pointer
    // (bumps by the stride, read from the constant bank); tabled ones look offsets up.
    const bool a_ok = m0 + a_mm(0) < p.M, b_ok = n0 + b_nn(0) < p.N;
    const SA* __restrict__ a_row = A + einc_goff<TAB_B>(bi, p.a_b, p.ta_b) +
                                   (a_ok ? einc_goff<TAB_M>(m0 + a_mm(0), p.a_m, p.ta_m) : 0);
    const SB* __restrict__ b_col = B + einc_goff<TAB_B>(bi, p.b_b, p.tb_b) +
                                   (b_ok ? einc_goff<TAB_N>(n0 + b_nn(0), p.b_n, p.tb_n) : 0);
    const SA* __restrict__ a_k = a_row + (TAB_K ? 0 : a_kk(0) * p.a_k);
    const SB* __restrict__ b_k = b_col + (TAB_K ? 0 : b_kk(0) * p.b_k);
    // M/N runs: how many of the run's rows (columns) exist, and whether the run is one
    // contiguous piece of the operand (strided: the group's stride is 1 by construction;
    // tabled: einc_run_contiguous)
    int a_n = 0, b_n = 0;
    bool a_vec = false, b_vec = false;
    if constexpr (A_MVEC) {
      const long long m = m0 + a_mm(0), left = p.M - m;
      a_n = left < LA ? static_cast<int>(left < 0 ? 0 : left) : LA;
      a_vec = a_n == LA && (!TAB_M || einc_run_contiguous<LA>(p.ta_m + m, __ldg(p.ta_m + m)));
    }
    if constexpr (B_NVEC) {
      const long long n = n0 + b_nn(0), left = p.N - n;
      b_n = left < LB ? static_cast<int>(left < 0 ? 0 : left) : LB;
      b_vec = b_n == LB && (!TAB_N || einc_run_contiguous<LB>(p.tb_n + n, __ldg(p.tb_n + n)));
    }
    auto a_off = [&](int e) { return TAB_M ? __ldg(p.ta_m + m0 + a_mm(e)) - __ldg(p.ta_m + m0 + a_mm(0)) : e; };
    auto b_off = [&](int e) { return TAB_N ? __ldg(p.tb_n + n0 + b_nn(e)) - __ldg(p.tb_n + n0 + b_nn(0)) : e; };

    // Visit the thread's elements of slice kt: f(i, pointer, in range) for A, then g for B.
    auto walk = [&](int kt, auto&& f, auto&& g) {
      const long long k0 = static_cast<long long>(kt) * BK;
      const int left = p.K - k0 < BK ? static_cast<int>(p.K - k0) : BK;  // valid k in the slice
      const SA* __restrict__ qa = a_k;
#pragma unroll
      for (int i = 0; i < (A_KVEC || A_MVEC ? 0 : LA); ++i) {
        const bool ok = a_ok && a_kk(i) < left;
        if constexpr (TAB_K) {
          f(i, ok ? a_row + __ldg(p.ta_k + k0 + a_kk(i)) : A, ok);
        } else {
          f(i, ok ? qa : A, ok);
#pragma unroll
          for (int s = 0; s < (A_MFAST ? NT / BM : 1); ++s) qa += p.a_k;
        }
      }
      const SB* __restrict__ qb = b_k;
#pragma unroll
      for (int i = 0; i < (B_KVEC || B_NVEC ? 0 : LB); ++i) {
        const bool ok = b_ok && b_kk(i) < left;
        if constexpr (TAB_K) {
          g(i, ok ? b_col + __ldg(p.tb_k + k0 + b_kk(i)) : B, ok);
        } else {
          g(i, ok ? qb : B, ok);
#pragma unroll
          for (int s = 0; s < (B_NFAST ? NT / BN : 1); ++s) qb += p.b_k;
        }
      }
      if constexpr (!TAB_K) {
        a_k += BK * p.a_k;
        b_k += BK * p.b_k;
      }
    };

    TA acc[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int j = 0; j < RN; ++j) acc[i][j] = zero<TA>();

    // Multiply slice `stage` into the accumulators, fragments double-buffered; `half()`
    // runs after the first BK/2 rows of k.
    auto multiply = [&](int stage, auto&& half) {
      TA fa[2][RM], fb[2][RN];
      auto frags = [&](int k, TA* a, TA* b) {
#pragma unroll
        for (int i = 0; i < RM / 4; ++i) einc_load4(&As[stage][k][i * (BM / (RM / 4)) + ty * 4], a + 4 * i);
#pragma unroll
        for (int j = 0; j < RN / 4; ++j) einc_load4(&Bs[stage][k][j * (BN / (RN / 4)) + tx * 4], b + 4 * j);
      };
      frags(0, fa[0], fb[0]);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        if (k + 1 < BK) frags(k + 1, fa[(k + 1) & 1], fb[(k + 1) & 1]);
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int j = 0; j < RN; ++j) acc[i][j] = mac(acc[i][j], fa[k & 1][i], fb[k & 1][j]);
        if (k == BK / 2 - 1) half();
      }
    };
    auto nothing = [] {};

    if constexpr (ASYNC) {
      auto issue = [&](int kt, int stage) {
        if constexpr (A_MVEC || B_NVEC) {
          const long long k0 = static_cast<long long>(kt) * BK;
          const int left = p.K - k0 < BK ? static_cast<int>(p.K - k0) : BK;
          if constexpr (A_MVEC) {
            const bool ok = a_n > 0 && a_kk(0) < left;
            const SA* src = TAB_K ? (ok ? a_row + __ldg(p.ta_k + k0 + a_kk(0)) : A) : (ok ? a_k : A);
            einc_cp_run<LA>(&As[stage][a_kk(0)][a_mm(0)], reinterpret_cast<const TA*>(src), ok, a_vec, a_n, a_off);
          }
          if constexpr (B_NVEC) {
            const bool ok = b_n > 0 && b_kk(0) < left;
            const SB* src = TAB_K ? (ok ? b_col + __ldg(p.tb_k + k0 + b_kk(0)) : B) : (ok ? b_k : B);
            einc_cp_run<LB>(&Bs[stage][b_kk(0)][b_nn(0)], reinterpret_cast<const TA*>(src), ok, b_vec, b_n, b_off);
          }
        }
        walk(
            kt,
            [&](int i, const SA* src, bool ok) {
              einc_cp_async(&As[stage][a_kk(i)][a_mm(i)], reinterpret_cast<const TA*>(src), ok);
            },
            [&](int i, const SB* src, bool ok) {
              einc_cp_async(&Bs[stage][b_kk(i)][b_nn(i)], reinterpret_cast<const TA*>(src), ok);
            });
      };
      // The vector-loaded k-fast operands: registers, one slice ahead (see the header).
      // Both operands: A's registers are filled while the second half of the slice is
      // multiplied, after B's went out, so one run is live at a time (at the 128-register
      // cap of 2 blocks/SM both live spilled ~80 bytes; A second spilled 8 on tabled K).
      // Runs of 8 (BK = 16) go in two parts of 4, the first stored and the second loaded
      // halfway through the slice, so 4 registers are live as with BK = 8.
      constexpr int PA = A_KVEC && LA > 4 ? 2 : 1, PB = B_KVEC && LB > 4 ? 2 : 1;
      constexpr int RA = LA / PA, RB = LB / PB;
      TA ra[A_KVEC ? RA : 1], rb[B_KVEC ? RB : 1];
      auto fetch = [&](int kt, bool a, bool b, int part) {
        const long long k0 = static_cast<long long>(kt) * BK;
        const int left = p.K - k0 < BK ? static_cast<int>(p.K - k0) : BK;
        const int ka = a_kk(0) + part * RA, kb = b_kk(0) + part * RB;
        if constexpr (A_KVEC) {
          if (a)
            einc_krun<RA, TAB_K>(ra, reinterpret_cast<const TA*>(a_row) + (TAB_K ? 0 : k0 + ka), a_ok, left - ka,
                                 p.ta_k + (TAB_K ? k0 + ka : 0));
        }
        if constexpr (B_KVEC) {
          if (b)
            einc_krun<RB, TAB_K>(rb, reinterpret_cast<const TA*>(b_col) + (TAB_K ? 0 : k0 + kb), b_ok, left - kb,
                                 p.tb_k + (TAB_K ? k0 + kb : 0));
        }
      };
      auto stash = [&](int stage, bool a, bool b, int part) {
        if (A_KVEC && a) {
#pragma unroll
          for (int i = 0; i < RA; ++i) As[stage][a_kk(part * RA + i)][a_mm(i)] = ra[i];
        }
        if (B_KVEC && b) {
#pragma unroll
          for (int i = 0; i < RB; ++i) Bs[stage][b_kk(part * RB + i)][b_nn(i)] = rb[i];
        }
      };
      constexpr bool REG = A_KVEC || B_KVEC, BOTH = A_KVEC && B_KVEC, SPLIT = PA > 1 || PB > 1;
      static_assert(!(BOTH && SPLIT), "two operands' runs of 8 would need 8 live registers");
#pragma unroll
      for (int s = 0; s < S - 1; ++s) {
        if (s < nk) issue(s, s);
        einc_cp_commit();  // empty groups keep the group count uniform
      }
      if (REG && nk > 0) {
#pragma unroll
        for (int part = 0; part < (SPLIT ? 2 : 1); ++part) {
          fetch(0, true, true, part);
          stash(0, true, true, part);
        }
      }
      int stage = 0;
      for (int kt = 0; kt < nk; ++kt) {
        einc_cp_wait<S - 2>();  // this thread's copies of slice kt have landed
        __syncthreads();        // RAW: everyone's have; WAR: slice kt-1's stage is free
        if (kt + S - 1 < nk) issue(kt + S - 1, stage == 0 ? S - 1 : stage - 1);
        einc_cp_commit();
        // Unconditional: past the last slice this loads nothing and stores zeros into a
        // free stage (a branch here made ptxas emit the multiply twice).
        const int next = stage == S - 1 ? 0 : stage + 1;  // slice kt+1's (WAR/RAW: header)
        if constexpr (REG) fetch(kt + 1, !BOTH, true, 0);  // in flight while we multiply
        multiply(stage, [&] {
          if constexpr (BOTH) {
            stash(next, false, true, 0);
            fetch(kt + 1, true, false, 0);
          } else if constexpr (SPLIT) {
            stash(next, true, true, 0);
            fetch(kt + 1, true, true, 1);
          }
        });
        if constexpr (REG) stash(next, true, !BOTH, SPLIT ? 1 : 0);
        stage = next;
      }
      einc_cp_wait<0>();
      __syncthreads();  // WAR: the next tile's prologue refills stages read above
    } else {
      TA ra[LA], rb[LB];
      auto fetch = [&](int kt) {  // global -> registers, converted to TA
        walk(
            kt, [&](int i, const SA* src, bool ok) { ra[i] = ok ? load_as<TC, TA>(src) : zero<TA>(); },
            [&](int i, const SB* src, bool ok) { rb[i] = ok ? load_as<TC, TA>(src) : zero<TA>(); });
      };
      auto stash = [&](int stage) {  // registers -> shared memory (A transposed)
#pragma unroll
        for (int i = 0; i < LA; ++i) As[stage][a_kk(i)][a_mm(i)] = ra[i];
#pragma unroll
        for (int i = 0; i < LB; ++i) Bs[stage][b_kk(i)][b_nn(i)] = rb[i];
      };
      if (nk > 0) {
        fetch(0);
        stash(0);
        __syncthreads();  // RAW: slice 0 is in shared memory
      }
      for (int kt = 0; kt < nk; ++kt) {
        const bool more = kt + 1 < nk;
        if (more) fetch(kt + 1);  // in flight while we multiply
        multiply(kt & 1, nothing);
        if (more) stash((kt + 1) & 1);
        __syncthreads();  // RAW for slice kt+1, WAR for the stage slice kt+2 will fill
      }                   // (the last one is also the WAR barrier for the next tile)
    }

    einc_tile_store<BM, BN, RM, RN, TAB_N, TC>(
        C + einc_goff<TAB_B>(bi, p.c_b, p.tc_b), acc, p, m0, n0, tx, ty,
        [&](long long m) { return einc_goff<TAB_M>(m, p.c_m, p.tc_m); }, [&](long long n) { return __ldg(p.tc_n + n); });
  }
}
