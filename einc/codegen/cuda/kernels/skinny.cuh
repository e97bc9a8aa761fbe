// einc CUDA kernel family `skinny`: a GETT step whose N group is small (N <= 32),
//
//   C[r, x, y, n] = sum_k A[r, x, y, k] * B[r, k, n]
//
// the shape of TCCG's intensli cases (`akdbc,jk->cjbda`: N = j = 24, A hundreds of MB).
// Such a step is memory-bound (intensity <= 2N / itemsize), and a 128x128 GEMM tile wastes
// most of its work on N and stores C one scattered element at a time. Here every block
// owns a box of M indices and *all* N columns, streams its A rows exactly once, and keeps B
// (tiny) in shared memory.
//
// The M group is seen as a box over two of its modes plus the rest: X (the lane axis: A's
// unit-stride mode when A is M-fast, else C's), Y (C's unit-stride mode when it is an M mode
// other than X, else the largest other M mode; absent when M has one mode: ONE_AXIS), and
// `rest` (every other M mode and the batch modes, addressed through offset tables ra/rb/rc
// of R entries, so batch modes move B too). N and K are addressed through tables (N) and a
// stride or tables (K, TAB_K). When X's extent leaves lanes idle (akdbc: X = c = 48 runs
// tiles of 32 + 16) the emitter folds one more M mode x2 into X: X is then the flat index
// x + u0 * x2 (c x d = 1728 = 54 x 32), decoded once per row and tile.
//
// Ownership: a block of NT = 256 threads owns one tile: 32 X values x TY = 8*RM Y values
// (ONE_AXIS: 32*TY consecutive X values) of one rest index, times all N. Thread t owns the
// RM rows  l = t % 32, y = t / 32 + 8 i  (i < RM), each with NP accumulators, so a warp's
// loads of one k run along X: coalesced when A is M-fast, one 32-byte sector per row and
// slice when A is K-fast (BK = 8 consecutive k).
//
// Schedule: a 1-D grid-stride loop over tiles. When the tiles leave a last, partial wave
// of at most half the resident blocks (akb: 288 tiles on 264), the emitter launches exactly
// the resident blocks and those last tiles run split: where B's chunk holds all of K and A
// goes through a shared ring and the emitter is asked to (KSPLIT, EINC_SKINNY_KSPLIT=1:
// measured no faster than halves on the H200), as K ranges spread over every block, whose partial
// tiles meet in a per-launch scratch the runtime zeroes (einc_skinny_combine: the last
// range to finish adds them in range order, so the result does not depend on timing);
// otherwise as two halves each (RM / 2 rows per thread).
//
// Pipelines:
//  - ASYNC (storage = accumulator size, no conversion: fp32, fp64, int32, int64): each
//    thread cp.async-copies *its own* rows' slices into an S-stage ring of shared memory
//    and reads back only what it wrote, so cp.async.wait_group alone orders them: the A
//    stream needs no barrier. A stage is refilled one slice after it was read (S - 2
//    slices stay in flight while one is multiplied). With MV (4-byte types, M-fast A) the
//    same ring fills in 16-byte pieces of four rows instead (a quarter of the copies, one
//    barrier per slice); K-fast A (A_KFAST) fills a [row][k] ring in 16-byte pieces of 4 k.
//  - otherwise (fp16, bf16, int8, ...: converted on load) one slice is prefetched into
//    registers while the previous one is multiplied.
// B is staged in chunks of KC k (all N, converted to the accumulator type) in shared
// memory; the barrier before a chunk is WAR (every thread finished the previous chunk),
// the one after it RAW (the chunk is complete before anyone multiplies).
//
// Epilogue: with STAGE_C (lanes run along X but C is unit-stride along Y) the tile goes
// through shared memory 8 columns at a time and leaves Y-fast, so a warp writes runs of TY
// contiguous elements; the barrier before staging is WAR on the A ring the staging area
// reuses, the two per column group RAW (staged before read) and WAR (read before the next
// group overwrites). With STAGE_N (C unit-stride along N: a row-major [M, N] result) each
// warp stages its 32 rows of one i at a time ([32][NP+1] per warp, conflict-free both ways)
// and writes them back row after row, so consecutive lanes store consecutive elements of a
// row instead of 32 rows' element n (32 sectors per store: 8x the L2 traffic, Sycamore's
// M = 2^26, N = 32 GEMM at 36 ms); __syncwarp orders staging (RAW) and reuse (WAR) within
// the warp, between two barriers (WAR on the A ring: before staging over it, and before
// the next tile refills it). Otherwise each thread stores its own
// rows (coalesced along X).
#pragma once
#include "common.cuh"
#include "gett.cuh"

struct EincSkinnyMeta {
  long long U, V, N, K, R;       // X extent (flat, u0 x the extent of x2), Y extent (1: absent), N, K, rest count
  long long tiles_x, tiles_y;    // tiles along X and Y
  long long a_x, a_y, c_x, c_y;  // strides of the box axes in A and C
  long long a_k, b_k;            // K strides (single-mode K)
  long long kc;                  // k per B chunk (a multiple of BK; the emitter sized smem for it)
  long long u0, a_x2, c_x2;      // flat X = x + u0 * x2: x's extent, x2's strides (u0 = U: no x2)
  long long whole;               // tiles run whole; the ones past it (the last wave's) run as two halves
  long long kparts;              // KSPLIT: ... or as kparts K ranges each, summed through the scratch
  const long long* ra;           // rest offsets in A, B, C (R entries each)
  const long long* rb;
  const long long* rc;
  const long long* ta_k;         // K offset tables (TAB_K), else null
  const long long* tb_k;
  const long long* tb_n;         // N offsets in B and C (N entries each)
  const long long* tc_n;
};

// Offset of flat X index f (x + u0 * x2) along strides s (x) and s2 (x2). The emitter
// keeps U below 2^31 when there is an x2, so the division is a 32-bit one.
__device__ __forceinline__ long long einc_skinny_xoff(long long f, const EincSkinnyMeta& p, long long s, long long s2) {
  if (p.u0 == p.U) return f * s;
  const unsigned fu = static_cast<unsigned>(f), u0 = static_cast<unsigned>(p.u0), x2 = fu / u0;
  return static_cast<long long>(fu - x2 * u0) * s + static_cast<long long>(x2) * s2;
}

template <int NP_, int RM_, int BK_, int S_, int KU_ = 2, int MV_ = 0, int DM_ = 0> struct EincSkinnyTile {
  static constexpr int NP = NP_, RM = RM_, BK = BK_, S = S_, KU = KU_;  // KU: k unrolled (M-fast ring)
  static constexpr bool MV = MV_ != 0;  // M-fast A in 16-byte pieces when aligned (shared ring)
  // DM (fp32, K-fast A or the M-fast MV ring; C staged along Y or stored per row): products on
  // the fp64 tensor cores, each warp owning the ring rows [32 RM w, 32 RM (w + 1)) as 2 RM
  // fragments of 16 rows x all NP columns (the two rings' fragment loops differ in their A and
  // B addressing only; kept written out, as measured, 11f/11g)
  static constexpr bool DM = DM_ != 0;
  static constexpr int NT = 256, TY = 8 * RM, BM = NT * RM;
  // K-fast A rows in shared memory: 16-byte aligned; padded for the per-thread LDS.128 reads,
  // unpadded for the fragments' LDS.64 (then 16 lanes read 4 rows x 8 bytes from 32 banks)
  static constexpr int AROW = DM ? BK : BK + 4;
  // M-fast (MV) ring rows of one k: BM elements, padded by 8 for the fragments (lane 4 g + t
  // reads row g of k t: 8 t + g covers the 32 banks once)
  static constexpr int APITCH = DM ? BM + 8 : BM;
  static_assert(NP % 8 == 0 && BK % 4 == 0, "whole column groups and 16-byte pieces");
};

// 16-byte asynchronous copy of the first `bytes` bytes of src (0, 4, ..., 16), the rest of
// the 16 zero-filled; src is not read when bytes == 0.
template <class T> __device__ __forceinline__ void einc_cp_async16(T* dst, const T* src) {  // all 16
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global" EINC_L2_HINT " [%0], [%1], 16;\n" ::"r"(s), "l"(src));
#else
  const unsigned char* q = reinterpret_cast<const unsigned char*>(src);
  for (int i = 0; i < 16; ++i) reinterpret_cast<unsigned char*>(dst)[i] = q[i];
#endif
}
template <class T> __device__ __forceinline__ void einc_cp_async16(T* dst, const T* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global" EINC_L2_HINT " [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(bytes));
#else
  unsigned char* d = reinterpret_cast<unsigned char*>(dst);
  const unsigned char* q = reinterpret_cast<const unsigned char*>(src);
  for (int i = 0; i < 16; ++i) d[i] = i < bytes ? q[i] : 0;
#endif
}

// Asynchronous 4- or 8-byte copy of `bytes` (sizeof(T) or 0: zero-fill, src not read).
template <class T> __device__ __forceinline__ void einc_cp_async_n(T* dst, const T* src, int bytes) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async moves 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global" EINC_L2_HINT " [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(sizeof(T)), "r"(bytes));
#else
  if (bytes) *dst = *src; else for (unsigned i = 0; i < sizeof(T); ++i) reinterpret_cast<unsigned char*>(dst)[i] = 0;
#endif
}

template <int V> struct EincInt { static constexpr int value = V; };

// (einc_dmma, the fp64 fragment product, is in gett.cuh)

// Shared memory past the B chunk: the A ring and/or the C staging area (they alias).
template <class Cfg, bool ASYNC, bool STAGE_C, bool A_KFAST, bool STAGE_N, class TA, class SA>
constexpr int einc_skinny_smem_a() {
  constexpr int as = !ASYNC ? 0 : Cfg::S * (A_KFAST ? Cfg::BM * Cfg::AROW : Cfg::APITCH * Cfg::BK) * static_cast<int>(sizeof(SA));
  constexpr int cs = STAGE_C  ? 8 * Cfg::TY * 33 * static_cast<int>(sizeof(TA))
                     : STAGE_N ? (Cfg::NT / 32) * 32 * (Cfg::NP + 1) * static_cast<int>(sizeof(TA)) : 0;
  return as > cs ? as : cs;
}

// The scratch of a KSPLIT launch: one arrival count per split tile (zeroed before the
// launch; unsigned, 256 bytes rounded), then every K range's partial tile, [slot][kpart][RM * NP][NT].
__device__ constexpr long long einc_skinny_counts_bytes(long long split_tiles) {
  return (split_tiles * 4 + 255) / 256 * 256;
}

// K ranges of one tile meet here: each block writes its partial tile to the scratch and
// counts itself in; the block that arrives last adds all of them IN ORDER (k range 0, 1, ...,
// its own read back too), so the sum does not depend on which block finished when, and
// returns true to store the tile. The others return false. The fences are the usual
// last-block pattern: partials reach L2 before the count moves (__threadfence, barrier,
// atomicAdd), and the last block reads them past L1 (__ldcg) after seeing the count.
// q: the item's index past the whole tiles (split tile q / kparts, K range q % kparts).
template <class Cfg, class TA>
__device__ __forceinline__ bool einc_skinny_combine(TA (&acc)[Cfg::RM][Cfg::NP], unsigned char* scratch,
                                                    const EincSkinnyMeta& p, unsigned q) {
  constexpr int RM = Cfg::RM, NP = Cfg::NP, NT = Cfg::NT, W = RM * NP;
  __shared__ unsigned einc_arrived;
  const int tid = threadIdx.x, kparts = static_cast<int>(p.kparts);
  const unsigned slot = q / static_cast<unsigned>(kparts), kpart = q - slot * static_cast<unsigned>(kparts);
  const long long split_tiles = p.tiles_x * p.tiles_y * p.R - p.whole;
  unsigned* count = reinterpret_cast<unsigned*>(scratch);
  TA* tile = reinterpret_cast<TA*>(scratch + einc_skinny_counts_bytes(split_tiles)) + static_cast<long long>(slot) * kparts * W * NT + tid;
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int n = 0; n < NP; ++n) __stcg(tile + (static_cast<int>(kpart) * W + i * NP + n) * NT, acc[i][n]);
  __threadfence();
  __syncthreads();
  if (tid == 0) einc_arrived = atomicAdd(count + slot, 1u);
  __syncthreads();
  if (einc_arrived != static_cast<unsigned>(kparts - 1)) return false;
  __threadfence();
  // range by range (its own read back too: no registers held across the barriers), each
  // range's W loads independent of each other, so they are in flight together
  for (int j = 0; j < kparts; ++j) {
    const TA* src = tile + j * W * NT;
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int n = 0; n < NP; ++n) {
        const TA v = __ldcg(src + (i * NP + n) * NT);
        acc[i][n] = j == 0 ? v : acc[i][n] + v;
      }
  }
  return true;
}

// One tile: the box of M indices from (x0, y0) of rest index r (Cfg's TY rows along Y,
// or 32 * TY along X when ONE_AXIS), all N columns. Bs keeps B across tiles while
// (b_whole, b_loaded) say it holds all of K for that B offset.
template <class Cfg, bool ASYNC, bool ONE_AXIS, bool STAGE_C, bool TAB_K, bool B_KFAST, bool A_KFAST, bool STAGE_N,
          class TOut, class TC, class TA, class SA, class SB, bool KSPLIT = false>
__device__ __forceinline__ void einc_skinny_tile(TOut* __restrict__ C, const SA* __restrict__ A,
                                                 const SB* __restrict__ B, const EincSkinnyMeta& p,
                                                 unsigned char* einc_smem, long long x0, long long y0, long long r,
                                                 bool& b_whole, long long& b_loaded, unsigned char* scratch = nullptr,
                                                 unsigned split_q = ~0u) {
  constexpr int NP = Cfg::NP, RM = Cfg::RM, BK = Cfg::BK, NT = Cfg::NT, TY = Cfg::TY;
  constexpr int BM = Cfg::BM, S = Cfg::S, AROW = Cfg::AROW;
  const int KC = static_cast<int>(p.kc);
  TA* Bs = reinterpret_cast<TA*>(einc_smem);                              // [KC][NP]
  unsigned char* after_b = einc_smem + KC * NP * sizeof(TA);
  SA* As = reinterpret_cast<SA*>(after_b);  // ASYNC: [S][BK][BM], or A_KFAST [S][BM][AROW]
  TA* Cs = reinterpret_cast<TA*>(after_b);  // [8][TY][33] (STAGE_C), [NT/32][32][NP+1] (STAGE_N)
  const int tid = threadIdx.x, lane = tid & 31;
  const long long a_rest = __ldg(p.ra + r), b_rest = __ldg(p.rb + r), c_rest = __ldg(p.rc + r);

  // This thread's rows i: box coordinates (x flat), in range?, A row offset.
  auto row_x = [&](int i) { return x0 + (ONE_AXIS ? lane + 32 * ((tid >> 5) + 8 * i) : lane); };
  auto row_y = [&](int i) { return ONE_AXIS ? 0LL : y0 + (tid >> 5) + 8 * i; };
  bool ok[RM];
  long long a_row[RM];
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    ok[i] = row_x(i) < p.U && row_y(i) < p.V;
    a_row[i] = ok[i] ? a_rest + einc_skinny_xoff(row_x(i), p, p.a_x, p.a_x2) + row_y(i) * p.a_y : 0;
  }

  TA acc[RM][NP];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int n = 0; n < NP; ++n) acc[i][n] = zero<TA>();
  constexpr bool DM = Cfg::DM;
  static_assert(!DM || ((A_KFAST ? !STAGE_C : Cfg::MV && !TAB_K && !ONE_AXIS) && !STAGE_N && !KSPLIT &&
                         sizeof(TA) == 4 && BK == 8),
                "fp64 fragments: fp32, K-fast A (C stored per row) or the M-fast ring (a Y axis), one 8-k product per slice");
  double dacc[DM ? 2 * RM : 1][DM ? NP / 8 : 1][4];  // DM: fragment f (16 rows), column group j
  if constexpr (DM) {
#pragma unroll
    for (int f = 0; f < 2 * RM; ++f)
#pragma unroll
      for (int j = 0; j < NP / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) dacc[f][j][e] = 0.0;
  }

  // Offset of k (absolute) in A / B.
  auto a_koff = [&](long long k) { return TAB_K ? __ldg(p.ta_k + k) : k * p.a_k; };
  auto b_koff = [&](long long k) { return TAB_K ? __ldg(p.tb_k + k) : k * p.b_k; };

  // Multiply KN k of the chunk from kb: row values a(i, kk) for kk < KN, B rows kb + kk.
  // (Shared-memory rows two k at a time: a full unroll hoists the slice's loads and
  // spills at the 128-register cap; register-held values need constant indices.)
  constexpr int KU = !ASYNC ? BK : A_KFAST ? 4 : Cfg::KU;
  auto multiply = [&](int kb, auto kn, auto&& a_of) {
    constexpr int KN = decltype(kn)::value;
#pragma unroll KU
    for (int kk = 0; kk < KN; ++kk) {
      TA a[RM];
#pragma unroll
      for (int i = 0; i < RM; ++i) a[i] = a_of(i, kk);
      const TA* __restrict__ brow = Bs + (kb + kk) * NP;
#pragma unroll
      for (int n4 = 0; n4 < NP / 4; ++n4) {
        TA b[4];
        einc_load4(brow + 4 * n4, b);
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][4 * n4 + e] = mac(acc[i][4 * n4 + e], a[i], b[e]);
      }
    }
  };

  // K-fast A: each thread copies 16-byte pieces (4 consecutive k) of the rows
  // m = tid / 2 + 128 j, two lanes per row, so a warp reads 16 rows' whole 32-byte sectors.
  // Row m + 128 j is row m's y + 4 j (ONE_AXIS: x + 128 j), so one pointer, one stride and
  // a mask of rows in range (out of range: 0 bytes from A's start) serve all PJ pieces,
  // and a whole slice costs an add per copy.
  constexpr int PJ = A_KFAST ? RM * BK / 4 : 1;  // pieces per thread per slice
  static_assert(!A_KFAST || BK == 8, "piece j of a thread: row tid / 2 + 128 j, k half tid % 2");
  const SA* psrc = A;     // piece 0's first k of the chunk's slice 0
  long long pstep = 0;    // from piece j to j + 1, elements
  unsigned pmask = 0;     // bit j: piece j's row is in range
  bool vec = false;
  if constexpr (A_KFAST) {
    const int m = tid >> 1, q = tid & 1;
    const long long x = x0 + (ONE_AXIS ? (m & 31) + 32 * (m >> 5) : (m & 31)), y = ONE_AXIS ? 0 : y0 + (m >> 5);
#pragma unroll
    for (int j = 0; j < PJ; ++j)
      if (ONE_AXIS ? x + 128 * j < p.U : x < p.U && y + 4 * j < p.V) pmask |= 1u << j;
    psrc = A + a_rest + einc_skinny_xoff(x < p.U ? x : 0, p, p.a_x, p.a_x2) + (y < p.V ? y : 0) * p.a_y + 4 * q;
    pstep = ONE_AXIS ? 128 * p.a_x : 4 * p.a_y;
    vec = ((reinterpret_cast<unsigned long long>(A) & 15) | ((a_rest | p.a_x | p.a_y | p.a_x2) & 3)) == 0;
  }

  // KSPLIT items (split_q set) multiply one K range only: slices [s0, s1) of K, which the
  // emitter keeps within one chunk; B is loaded for that range (it is not kept: b_whole)
  long long k_begin = 0, k_end = p.K;
  if constexpr (KSPLIT) {
    if (split_q != ~0u) {
      const unsigned n32 = static_cast<unsigned>((p.K + BK - 1) / BK), kp = static_cast<unsigned>(p.kparts);
      const unsigned kq = split_q % kp;
      k_begin = static_cast<long long>(kq * n32 / kp) * BK;
      k_end = static_cast<long long>((kq + 1) * n32 / kp) * BK;
      k_end = k_end < p.K ? k_end : p.K;
    }
  }
  const bool whole_k = p.K <= KC && k_begin == 0 && k_end == p.K;
  for (long long c0 = k_begin; c0 < k_end; c0 += KC) {
    const int kc = k_end - c0 < KC ? static_cast<int>(k_end - c0) : KC;
    if (whole_k && b_whole && b_loaded == b_rest) goto chunk_ready;  // block-uniform: B resident
    __syncthreads();  // WAR: everyone finished the previous chunk of B
    b_whole = whole_k;
    b_loaded = b_rest;
    for (int idx = tid; idx < KC * NP; idx += NT) {
      // B K-fast: adjacent threads on adjacent k (its unit stride), else on adjacent n
      const int kl = B_KFAST ? idx % KC : idx / NP, n = B_KFAST ? idx / KC : idx % NP;
      const bool in = kl < kc && n < p.N;
      if constexpr (ASYNC) {  // (B's storage is the accumulator type) no load waits in the loop
        einc_cp_async(Bs + kl * NP + n, reinterpret_cast<const TA*>(in ? B + b_rest + b_koff(c0 + kl) + __ldg(p.tb_n + n) : B), in);
      } else {
        TA v = zero<TA>();
        if (in) v = load_as<TC, TA>(B + b_rest + b_koff(c0 + kl) + __ldg(p.tb_n + n));
        Bs[kl * NP + n] = v;
      }
    }
    if constexpr (ASYNC) {
      einc_cp_commit();
      einc_cp_wait<0>();  // (no other copies are pending: every ring drained before this)
    }
    __syncthreads();  // RAW: the chunk is complete
  chunk_ready:
    const int nk = (kc + BK - 1) / BK;

    if constexpr (A_KFAST) {
      // Shared ring [S][BM][AROW]: rows are written by other threads, so one barrier per
      // slice is RAW (slice kt landed for everyone) and WAR (slice kt-1's stage is free).
      auto issue = [&](int kt, int stage) {
        SA* const dst0 = As + (stage * BM + (tid >> 1)) * AROW + 4 * (tid & 1);
        const SA* src = psrc + (c0 + kt * BK);
        if (vec && (kt + 1) * BK <= kc) {  // a whole slice (all but a ragged last one)
#pragma unroll
          for (int j = 0; j < PJ; ++j, src += pstep)
            einc_cp_async16(dst0 + 128 * j * AROW, (pmask >> j) & 1 ? src : A, (pmask >> j) & 1 ? 16 : 0);
          return;
        }
#pragma unroll
        for (int j = 0; j < PJ; ++j, src += pstep) {
          const int kl = kt * BK + 4 * (tid & 1), left = kc - kl;
          const int valid = !((pmask >> j) & 1) || left <= 0 ? 0 : left < 4 ? left : 4;
          SA* dst = dst0 + 128 * j * AROW;
          if (vec) {
            einc_cp_async16(dst, valid ? src : A, 4 * valid);
          } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
              einc_cp_async(reinterpret_cast<TA*>(dst + e), reinterpret_cast<const TA*>(e < valid ? src + e : A),
                            e < valid);
          }
        }
      };
#pragma unroll
      for (int s = 0; s < S - 1; ++s) {
        if (s < nk) issue(s, s);
        einc_cp_commit();
      }
      for (int kt = 0; kt < nk; ++kt) {
        einc_cp_wait<S - 2>();
        __syncthreads();
        if (kt + S - 1 < nk) issue(kt + S - 1, (kt + S - 1) % S);
        einc_cp_commit();
        if constexpr (DM) {
          // k permuted within the slice: lane 4 g + t reads k 2t, 2t + 1 of its rows (one LDS.64)
          // and of B's columns, handing them to the product as k = t and t + 4; A and B see the
          // same permutation. fp32 -> fp64 is exact, and so is a product of two.
          const int g = lane >> 2, t = lane & 3, w = tid >> 5;
          const TA* __restrict__ brow = Bs + (kt * BK + 2 * t) * NP + g;
          double bd[NP / 8][2];
#pragma unroll
          for (int j = 0; j < NP / 8; ++j) {
            bd[j][0] = static_cast<double>(brow[8 * j]);
            bd[j][1] = static_cast<double>(brow[NP + 8 * j]);
          }
          const SA* __restrict__ arow = As + ((kt % S) * BM + 32 * RM * w + g) * AROW + 2 * t;
#pragma unroll
          for (int f = 0; f < 2 * RM; ++f) {
            double ad[4];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const EincVec<TA, 2> v = *reinterpret_cast<const EincVec<TA, 2>*>(arow + (16 * f + 8 * h) * AROW);
              ad[h] = static_cast<double>(v.v[0]);
              ad[2 + h] = static_cast<double>(v.v[1]);
            }
#pragma unroll
            for (int j = 0; j < NP / 8; ++j) einc_dmma<8>(dacc[f][j], ad, bd[j]);
          }
          continue;
        }
#pragma unroll
        for (int h = 0; h < BK / 4; ++h) {  // four k per row at a time: one LDS.128 each
          TA ar[RM][4];
#pragma unroll
          for (int i = 0; i < RM; ++i)
            einc_load4(reinterpret_cast<const TA*>(As + ((kt % S) * BM + tid + NT * i) * AROW + 4 * h), ar[i]);
          multiply(kt * BK + 4 * h, EincInt<4>{}, [&](int i, int kk) { return ar[i][kk]; });
        }
      }
      einc_cp_wait<0>();
      __syncthreads();  // WAR: the next tile's prologue refills stages read above
    } else if constexpr (ASYNC) {
      // MV: M-fast A in 16-byte pieces, four consecutive rows (x) of one k each, when x is
      // A's unit stride and every offset keeps 16-byte alignment (with an x2, x's extent a
      // multiple of 4: a piece never straddles two x runs). A slice is then PV copies a
      // thread instead of RM * BK, into the same layout, but each thread reads rows others
      // copied: one barrier per slice, RAW (slice kt landed) and WAR (slice kt-1's stage is
      // free), as for K-fast A.
      if constexpr (Cfg::MV && !TAB_K && sizeof(SA) == 4) {
        // (the emitter folds an x2 into X only when x's extent is a multiple of 4, so a
        // piece's rows are x..x+3 of one x2: offsets x * a_x apart)
        const bool mvec = p.a_x == 1 && ((reinterpret_cast<unsigned long long>(A) & 15) |
                                         ((a_rest | p.a_y | p.a_k | (p.u0 == p.U ? 0 : p.a_x2)) & 3)) == 0;
        constexpr int QPK = BM / 4, KSTEP = NT / QPK, PV = BK / KSTEP;  // quads per k; k apart; pieces
        static_assert(NT % QPK == 0 && BK % KSTEP == 0, "whole slices of pieces");
        const int r4 = 4 * (tid % QPK), kk0 = tid / QPK;  // rows r4..r4+3 (as tid + NT*i), k kk0 + KSTEP*j
        const long long xq = x0 + (ONE_AXIS ? r4 : (r4 & 31)), yq = ONE_AXIS ? 0 : y0 + ((r4 >> 5) & 7) + 8 * (r4 >> 8);
        const int qbytes = !(xq < p.U && yq < p.V) ? 0 : p.U - xq >= 4 ? 16 : 4 * static_cast<int>(p.U - xq);
        const SA* vsrc = A + (qbytes ? a_rest + einc_skinny_xoff(xq, p, p.a_x, p.a_x2) + yq * p.a_y : 0) +
                         (c0 + kk0) * p.a_k;
        const long long vstep = KSTEP * p.a_k;
        // Pieces wholly in range take plain 16-byte copies in whole slices; the others (edge
        // rows, a ragged slice) zero-fill what is out of range (k past the chunk meets B's
        // zero rows, so A's must not be stale NaNs). Unaligned: four 4-byte copies a piece.
        auto vissue = [&](int kt, int stage) {
          const int kl0 = kt * BK;
          const SA* src = vsrc;
          vsrc += BK * p.a_k;  // (slices are issued in order)
          SA* dst = As + (stage * BK + kk0) * Cfg::APITCH + r4;
          if (mvec && qbytes == 16 && kl0 + BK <= kc) {
#pragma unroll
            for (int j = 0; j < PV; ++j, src += vstep) einc_cp_async16(dst + KSTEP * j * Cfg::APITCH, src);
            return;
          }
#pragma unroll
          for (int j = 0; j < PV; ++j, src += vstep) {
            const bool kin = kl0 + kk0 + KSTEP * j < kc;
            if (mvec) {
              einc_cp_async16(dst + KSTEP * j * Cfg::APITCH, kin && qbytes ? src : A, kin ? qbytes : 0);
            } else {
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const bool in = kin && 4 * e < qbytes;
                einc_cp_async(reinterpret_cast<TA*>(dst + KSTEP * j * Cfg::APITCH + e),
                              reinterpret_cast<const TA*>(in ? src + e * p.a_x : A), in);
              }
            }
          }
        };
        __syncthreads();  // WAR: the tile before may still read stages refilled below
#pragma unroll
        for (int s = 0; s < S - 1; ++s) {
          if (s < nk) vissue(s, s);
          einc_cp_commit();
        }
        for (int kt = 0; kt < nk; ++kt) {
          einc_cp_wait<S - 2>();
          __syncthreads();
          if (kt + S - 1 < nk) vissue(kt + S - 1, (kt + S - 1) % S);
          einc_cp_commit();
          if constexpr (DM) {
            // lane 4 g + t: rows g, g + 8 of each fragment at k t and t + 4 (the product's own k)
            constexpr int P = Cfg::APITCH;
            const int g = lane >> 2, t = lane & 3, w = tid >> 5;
            const TA* __restrict__ brow = Bs + (kt * BK + t) * NP + g;
            double bd[NP / 8][2];
#pragma unroll
            for (int j = 0; j < NP / 8; ++j) {
              bd[j][0] = static_cast<double>(brow[8 * j]);
              bd[j][1] = static_cast<double>(brow[4 * NP + 8 * j]);
            }
            const SA* __restrict__ acol = As + ((kt % S) * BK + t) * P + 32 * RM * w + g;
#pragma unroll
            for (int f = 0; f < 2 * RM; ++f) {
              double ad[4];
#pragma unroll
              for (int i = 0; i < 4; ++i) ad[i] = static_cast<double>(acol[4 * (i >> 1) * P + 16 * f + 8 * (i & 1)]);
#pragma unroll
              for (int j = 0; j < NP / 8; ++j) einc_dmma<8>(dacc[f][j], ad, bd[j]);
            }
            continue;
          }
          const SA* __restrict__ sa = As + (kt % S) * BK * BM + tid;
          multiply(kt * BK, EincInt<BK>{}, [&](int i, int kk) {
            const SA v = sa[kk * BM + NT * i];
            return *reinterpret_cast<const TA*>(&v);
          });
        }
        einc_cp_wait<0>();
        __syncthreads();  // WAR: the next chunk's or tile's copies refill stages read above
        continue;
      } else {
      static_assert(!KSPLIT, "K ranges: the M-fast (MV) and K-fast rings only");
      // Thread-private ring: stage s, slice kk, row i at As[(s*BK + kk)*BM + tid + NT*i].
      // Row pointers and copy sizes are fixed for the tile (an out-of-range row copies 0
      // bytes from row 0 of its k, which exists), so a whole slice costs one 64-bit add
      // per copy; only a ragged last slice tests k.
      const unsigned char* rowp[RM];
      int rsz[RM];
#pragma unroll
      for (int i = 0; i < RM; ++i) {
        rowp[i] = reinterpret_cast<const unsigned char*>(A + (ok[i] ? a_row[i] : 0));
        rsz[i] = ok[i] ? static_cast<int>(sizeof(SA)) : 0;
      }
      const long long kstep = TAB_K ? 0 : p.a_k * static_cast<long long>(sizeof(SA));
      long long kb_next = c0 * kstep;  // byte offset of the next slice issued (they go in order)
      auto issue = [&](int kt, int stage) {
        const int kl0 = kt * BK;
        SA* dst = As + stage * BK * BM + tid;
        long long kb = kb_next;
        kb_next += BK * kstep;
        if (!TAB_K && kl0 + BK <= kc) {  // a whole slice: no k tests
#pragma unroll
          for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
            for (int i = 0; i < RM; ++i)
              einc_cp_async_n(dst + kk * BM + NT * i, reinterpret_cast<const SA*>(rowp[i] + kb), rsz[i]);
            kb += kstep;
          }
          return;
        }
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          const bool kin = kl0 + kk < kc;
          const long long o = !TAB_K ? kb : kin ? __ldg(p.ta_k + c0 + kl0 + kk) * static_cast<long long>(sizeof(SA)) : 0;
#pragma unroll
          for (int i = 0; i < RM; ++i)
            einc_cp_async_n(dst + kk * BM + NT * i, reinterpret_cast<const SA*>(rowp[i] + o), kin ? rsz[i] : 0);
          kb += kstep;
        }
      };
#pragma unroll
      for (int s = 0; s < S - 1; ++s) {
        if (s < nk) issue(s, s);
        einc_cp_commit();
      }
      for (int kt = 0; kt < nk; ++kt) {
        einc_cp_wait<S - 2>();  // this thread's copies of slice kt have landed
        const SA* __restrict__ sa = As + (kt % S) * BK * BM + tid;
        multiply(kt * BK, EincInt<BK>{}, [&](int i, int kk) {
          const SA v = sa[kk * BM + NT * i];
          return *reinterpret_cast<const TA*>(&v);
        });
        // Refill the stage slice kt-1 used (its reads are behind us in program order;
        // the empty asm keeps the compiler from sinking them past the copies).
        asm volatile("" ::: "memory");
        if (kt + S - 1 < nk) issue(kt + S - 1, (kt + S - 1) % S);
        einc_cp_commit();
      }
      einc_cp_wait<0>();
      }
    } else {
      static_assert(!KSPLIT, "K ranges: the M-fast (MV) and K-fast rings only");
      TA cur[RM][BK], nxt[RM][BK];
      auto fetch = [&](int kt, TA (&dst)[RM][BK]) {
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          const int kl = kt * BK + kk;
          const bool kin = kl < kc;
          const long long ko = kin ? a_koff(c0 + kl) : 0;
#pragma unroll
          for (int i = 0; i < RM; ++i) dst[i][kk] = kin && ok[i] ? load_as<TC, TA>(A + a_row[i] + ko) : zero<TA>();
        }
      };
      if (nk > 0) fetch(0, cur);
      for (int kt = 0; kt < nk; ++kt) {
        if (kt + 1 < nk) fetch(kt + 1, nxt);  // in flight while slice kt is multiplied
        multiply(kt * BK, EincInt<BK>{}, [&](int i, int kk) { return cur[i][kk]; });
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int kk = 0; kk < BK; ++kk) cur[i][kk] = nxt[i][kk];
      }
    }
  }

  if constexpr (KSPLIT) {
    if (split_q != ~0u && !einc_skinny_combine<Cfg>(acc, scratch, p, split_q)) return;  // (block-uniform)
  }

  if constexpr (DM && !STAGE_C) {
    // fragment f of warp w holds ring rows 32 RM w + 16 f + g (+ 8): for one column, lanes
    // g = 0..7 store 8 consecutive x (whole 32-byte sectors)
    const int g = lane >> 2, t = lane & 3, w = tid >> 5;
#pragma unroll
    for (int f = 0; f < 2 * RM; ++f)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = 32 * RM * w + 16 * f + 8 * h + g;
        const long long x = x0 + (ONE_AXIS ? m : (m & 31)), y = ONE_AXIS ? 0LL : y0 + (m >> 5);
        if (!(x < p.U && y < p.V)) continue;
        const long long crow = c_rest + einc_skinny_xoff(x, p, p.c_x, p.c_x2) + y * p.c_y;
#pragma unroll
        for (int j = 0; j < NP / 8; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int n = 8 * j + 2 * t + e;
            if (n < p.N) store_as<TC>(C + crow + __ldg(p.tc_n + n), dacc[f][j][2 * h + e]);
          }
      }
  } else if constexpr (STAGE_C) {
    // Read-out mapping: element idx = tid + NT * it of a group, Y fastest (C's unit
    // stride): yl = tid % TY for all it, x takes LH = 32 * TY / NT values, e = it / LH.
    // So a thread's row offsets (LH of them) are computed once per tile and each store
    // adds a column offset: no per-element multiplies or divisions.
    static_assert(NT % TY == 0 && (32 * TY) % NT == 0, "read-out mapping");
    constexpr int LH = 32 * TY / NT, LSTEP = NT / TY;
    const int yl = tid % TY;
    long long orow[LH];
    bool rok[LH];
#pragma unroll
    for (int h = 0; h < LH; ++h) {
      const long long x = x0 + tid / TY + LSTEP * h, y = y0 + yl;
      rok[h] = x < p.U && y < p.V;
      orow[h] = c_rest + einc_skinny_xoff(x, p, p.c_x, p.c_x2) + y * p.c_y;
    }
    __syncthreads();  // WAR: the A ring (reused below) is no longer read by anyone
#pragma unroll
    for (int g = 0; g < NP / 8; ++g) {
      if constexpr (DM) {  // fragment f of warp w: ring rows 32 RM w + 16 f + lane / 4 (+ 8), columns 2 (lane % 4) + e
#pragma unroll
        for (int f = 0; f < 2 * RM; ++f)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int m = 32 * RM * (tid >> 5) + 16 * f + 8 * (i >> 1) + (lane >> 2), e = 2 * (lane & 3) + (i & 1);
            Cs[(e * TY + (m >> 5)) * 33 + (m & 31)] = static_cast<TA>(dacc[f][g][i]);
          }
      } else {
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int e = 0; e < 8; ++e) Cs[(e * TY + (tid >> 5) + 8 * i) * 33 + lane] = acc[i][8 * g + e];
      }
      __syncthreads();  // RAW: the column group is staged
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int n = 8 * g + e;
        if (n < p.N) {
          const long long cn = __ldg(p.tc_n + n);
#pragma unroll
          for (int h = 0; h < LH; ++h)
            if (rok[h]) store_as<TC>(C + orow[h] + cn, Cs[(e * TY + yl) * 33 + tid / TY + LSTEP * h]);
        }
      }
      __syncthreads();  // WAR: read out before the next group is staged
    }
  } else if constexpr (STAGE_N) {
    __syncthreads();  // WAR: the A ring (reused below) is no longer read by anyone
    TA* W = Cs + (tid >> 5) * 32 * (NP + 1);
#pragma unroll
    for (int i = 0; i < RM; ++i) {
#pragma unroll
      for (int n = 0; n < NP; ++n) W[lane * (NP + 1) + n] = acc[i][n];
      __syncwarp();  // RAW: the warp's 32 rows are staged
      const long long y = row_y(i), xr = x0 + (ONE_AXIS ? 32 * ((tid >> 5) + 8 * i) : 0);
      for (int e = lane; e < 32 * NP; e += 32) {
        const int r = e / NP, n = e - r * NP;  // row r of the warp (its lane r's), column n
        const long long x = xr + r;
        if (n < p.N && x < p.U && y < p.V)
          store_as<TC>(C + c_rest + einc_skinny_xoff(x, p, p.c_x, p.c_x2) + y * p.c_y + __ldg(p.tc_n + n),
                       W[r * (NP + 1) + n]);
      }
      __syncwarp();  // WAR: read out before the next rows are staged
    }
    __syncthreads();  // WAR: every warp has read out before the next tile refills the A ring
  } else {
    long long c_row[RM];  // (computed here, not kept live through the main loop)
#pragma unroll
    for (int i = 0; i < RM; ++i) c_row[i] = c_rest + einc_skinny_xoff(row_x(i), p, p.c_x, p.c_x2) + row_y(i) * p.c_y;
#pragma unroll
    for (int n = 0; n < NP; ++n) {
      if (n < p.N) {
        const long long cn = __ldg(p.tc_n + n);
#pragma unroll
        for (int i = 0; i < RM; ++i)
          if (ok[i]) store_as<TC>(C + c_row[i] + cn, acc[i][n]);
      }
    }
  }
}

// The grid-stride loop over work items: tiles [0, whole) run whole; each tile past
// `whole` (the emitter puts there the tiles of a last, partial wave of resident blocks)
// runs as several items:
//  - KSPLIT: kparts K ranges of the whole tile (all of K is one chunk), so that wave's work
//    spreads over every resident block (TCCG akb: 288 tiles on 264 slots, the last 24 as 11
//    ranges each); einc_skinny_combine sums the ranges in order in the last one to finish;
//  - else two halves of its rows (a Cfg with RM / 2: half the Y rows, or half the X run when
//    ONE_AXIS), which take about half as long.
template <class Cfg, bool ASYNC, bool ONE_AXIS, bool STAGE_C, bool TAB_K, bool B_KFAST, bool A_KFAST, bool STAGE_N,
          class TOut, class TC, class TA, class SA, class SB, bool KSPLIT = false>
__device__ __forceinline__ void einc_skinny(void* __restrict__ out, const void* __restrict__ a_ptr,
                                            const void* __restrict__ b_ptr, const EincSkinnyMeta& p,
                                            void* scratch = nullptr) {
  constexpr int RM = Cfg::RM, TY = Cfg::TY;
  static_assert(!ASYNC || sizeof(SA) == sizeof(TA), "async copies move raw bits");
  static_assert(!ASYNC || Cfg::S >= 2, "at least double buffering");
  static_assert(!A_KFAST || (ASYNC && sizeof(SA) == 4 && !TAB_K), "K-fast pieces: 4-byte async, one K mode");
  using Half = EincSkinnyTile<Cfg::NP, (RM % 2 == 0 ? RM / 2 : RM), Cfg::BK, Cfg::S, Cfg::KU, Cfg::MV, Cfg::DM>;
#ifdef EINC_HOST_EMULATION  // the CPU emulator's threads of one block share a static buffer
  alignas(16) static unsigned char einc_smem[(1 << 16) + einc_skinny_smem_a<Cfg, ASYNC, STAGE_C, A_KFAST, STAGE_N, TA, SA>()];
#else
  extern __shared__ __align__(16) unsigned char einc_smem[];
#endif
  bool b_whole = false;  // Bs holds all of K for the rest offset b_loaded
  long long b_loaded = 0;
  const SA* A = static_cast<const SA*>(a_ptr);
  const SB* B = static_cast<const SB*>(b_ptr);
  TOut* C = static_cast<TOut*>(out);
  const long long per_rest = p.tiles_x * p.tiles_y, tiles = per_rest * p.R;
  const long long whole = (KSPLIT || RM % 2 == 0) && p.whole < tiles ? p.whole : tiles;
  const unsigned parts = KSPLIT ? static_cast<unsigned>(p.kparts) : 2u;  // items per tile past `whole`
  const long long items = whole + (tiles - whole) * parts;

  // Tile counts fit 32 bits (the emitter checks): 32-bit division decodes a tile in a
  // few instructions, where 64-bit division costs ~100 per tile.
  const unsigned per_rest32 = static_cast<unsigned>(per_rest), tiles_x32 = static_cast<unsigned>(p.tiles_x);
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const bool half = item >= whole;
    const unsigned q = static_cast<unsigned>(item - whole);  // (item counts fit 32 bits: the emitter checks)
    const long long tile = half ? whole + (KSPLIT ? q / parts : q >> 1) : item;
    const unsigned t32 = static_cast<unsigned>(tile), r32 = t32 / per_rest32, rem32 = t32 - r32 * per_rest32;
    const long long ty0 = rem32 / tiles_x32, tx0 = rem32 - (rem32 / tiles_x32) * tiles_x32;
    long long x0 = tx0 * (ONE_AXIS ? 32 * TY : 32), y0 = ty0 * TY;
    if constexpr (KSPLIT) {  // one instantiation for whole tiles (kpart -1) and K ranges
      einc_skinny_tile<Cfg, ASYNC, ONE_AXIS, STAGE_C, TAB_K, B_KFAST, A_KFAST, STAGE_N, TOut, TC, TA, SA, SB, true>(
          C, A, B, p, einc_smem, x0, y0, r32, b_whole, b_loaded, static_cast<unsigned char*>(scratch), half ? q : ~0u);
      continue;
    } else if constexpr (RM % 2 == 0) {
      if (half) {  // block-uniform
        // WAR: a half tile lays the A ring out over fewer rows, so its copies land on
        // slots other threads of the last whole tile may still read (no epilogue barrier
        // orders them when C is stored per row)
        __syncthreads();
        const long long h = (item - whole) & 1;
        if (ONE_AXIS) x0 += h * 16 * TY; else y0 += h * (TY / 2);
        einc_skinny_tile<Half, ASYNC, ONE_AXIS, STAGE_C, TAB_K, B_KFAST, A_KFAST, STAGE_N, TOut, TC, TA, SA, SB>(
            C, A, B, p, einc_smem, x0, y0, r32, b_whole, b_loaded);
        continue;
      }
    }
    einc_skinny_tile<Cfg, ASYNC, ONE_AXIS, STAGE_C, TAB_K, B_KFAST, A_KFAST, STAGE_N, TOut, TC, TA, SA, SB>(
        C, A, B, p, einc_smem, x0, y0, r32, b_whole, b_loaded);
  }
}
