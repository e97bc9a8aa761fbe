// einc CUDA kernel family `gett`, DM tiles: an fp32 step's batched GEMM (gett.cuh's
// groups, metadata and tile walk) with its products on the fp64 tensor cores.
//
// Why: the H200 runs fp64 mma.sync (m16n8k8) at ~64 TFLOP/s (scripts/dmma_peak.cu: 61.9 with
// the fp32 reads and conversions of a k8 step) where FFMA peaks at 67 and cuBLAS SGEMM
// reaches ~50. Every fp32 value converts to fp64 exactly, so every product is exact and the
// sums carry 53 bits; each output rounds to fp32 once, which no fp32 FMA chain matches.
//
// Ownership: NT = (BM/64)*(BN/32) warps, each a 64 x 32 piece of the tile as 4x4 fragments
// of 16x8 (einc_dmma: lane 4g+t reads A rows g, g+8 at k t, t+4 and B columns g at k t, t+4,
// and holds D rows g, g+8 at columns 2t, 2t+1); ~250 registers, 8 warps an SM (32x32 pieces
// at 128 registers, 16 warps, measured no faster and spilled: NOTES session 21).
//
// Shared memory (dynamic): S stages of each operand, laid out along whichever group the
// operand has unit stride in, so every copy is a cp.async of a run of 4 (16 bytes where the
// run is contiguous and aligned, else 4 element copies; zero-filled past the edges) and no
// register ever holds data in flight:
//  - M-fast A (N-fast B): [BK][BM + 8] -- a fragment read's 8 rows x 4 k fall on banks
//    8t + g, 32 distinct;
//  - K-fast A (K-fast B, and operands with no unit stride): [BM][BK + 4] -- banks
//    (BK + 4) g + t, 32 distinct for BK = 16 (20g + t).
// (The SIMT tiles store K-fast operands transposed through registers, one slice ahead; with
// one slice of DMMA work (~500 cycles) that left global latency exposed.)
//
// Copies: whole slices (all but a ragged last) walk pointers by BK strides (a tabled K looks
// each run's k up once) with no bounds but the tile's edge; the ragged last slice goes through
// the bounded path. (The bounded path on every slice was ~100 instructions between two
// steps' products: 4096^3 2.73 -> 2.60 ms without it, DMMA pipe 77 -> 82%.)
//
// Pipeline: a k8 step's fragments are read while the previous step's products run; the
// last step of slice kt waits at the block barrier with its fragments already in registers,
// so its products go out the moment the barrier opens, and the copies and the reads of the
// next slice's first step follow them. At step W-1 of slice kt (W = BK/8):
//    cp.async.wait_group S-2   this thread's copies of slice kt+1 have landed (groups: S
//                              in the prologue, one per slice since)
//    __syncthreads             RAW: everyone's have; WAR: every read of slice kt's stage
//                              (steps 1..W-1 before this barrier, step 0 before the last)
//                              is done -- the registers hold step W-1
//    products of step W-1; issue slice kt+S into slice kt's stage; commit (empty past the
//    end); read slice kt+1's first step
// so all S stages are in flight: a slice's copies have S-1 slices of products to land. A
// wait and barrier after the last slice protect the stages from the next tile's prologue
// (WAR); K = 0 runs no slice and stores zeros. (Reading after the barrier and multiplying
// after the reads, as the first DM kernel did, kept the DMMA pipe 60-67% busy.)
#pragma once
#include "common.cuh"

template <int BM_, int BN_, int BK_, int S_> struct EincDmTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, S = S_, WM = 64;  // WM: a warp's rows
  static constexpr int NT = (BM / WM) * (BN / 32) * 32;
  static constexpr int GROUP_M = 8;
};

// One operand's stage: X = BM (A) or BN (B) wide, BK deep, XFAST: the X group has the unit
// stride (stored [BK][X + 8]) else K does or neither (stored [X][BK + 4]). Offsets in floats.
template <int X, int BK, bool XFAST> struct EincDmStage {
  static constexpr int PITCH = XFAST ? X + 8 : BK + 4;
  static constexpr int SIZE = XFAST ? BK * PITCH : X * PITCH;
  static __device__ __forceinline__ int at(int x, int k) { return XFAST ? k * PITCH + x : x * PITCH + k; }
};

// A thread's share of one operand's slice copies: RUNS runs of 4 along the stored-contiguous
// group. XFAST: runs of 4 x at k = kq + r * KSTEP (x4 fixed); else runs of 4 k of rows
// xq + r * XSTEP (k4 fixed). VEC: the contiguous group's innermost mode is unit-stride, so a
// whole run may be one 16-byte copy (contiguity of tabled runs and alignment are checked at
// run time). x_off / k_off: the X and K groups' offsets (einc_goff).
template <int X, int BK, int NT, bool XFAST, bool TAB_X, bool TAB_K, bool VEC> struct EincDmLoader {
  using St = EincDmStage<X, BK, XFAST>;
  static constexpr int PER_ROW = XFAST ? X / 4 : BK / 4;  // threads along one stored row
  static constexpr int STEP = NT / PER_ROW;               // rows apart of a thread's runs
  static constexpr int RUNS = (XFAST ? BK : X) / STEP;
  static_assert(NT % PER_ROW == 0 && (XFAST ? BK : X) % STEP == 0 && RUNS >= 1, "whole runs per thread");
  static constexpr int ROWS = XFAST ? 1 : RUNS;

  const float* base[ROWS];  // XFAST: the run's first x; else each row (x-offset applied)
  bool row_ok[ROWS];
  int lead, row0;           // XFAST: x4, kq; else k4, xq
  int nx;                   // XFAST: valid x of the run
  bool xvec;                // XFAST: the run is one contiguous piece
  long long x_first;        // XFAST: table entry of the run's first x
  long long koff;           // the next full slice's offset (tabled K: k) of this thread's first run
  long long kstep, rstep;   // a slice's (BK * k_stride; tabled: BK) and, XFAST, runs' apart (STEP * ...)

  __device__ __forceinline__ void init(const float* __restrict__ batch_base, int tid, long long x0, long long ext,
                                       long long x_stride, const long long* __restrict__ x_tab, long long k_stride) {
    lead = (tid % PER_ROW) * 4;
    row0 = tid / PER_ROW;
    const long long ks = TAB_K ? 1 : k_stride;  // tabled K: indices into the table
    koff = (XFAST ? row0 : lead) * ks;
    kstep = BK * ks;
    rstep = STEP * ks;
    if constexpr (XFAST) {
      const long long x = x0 + lead, left = ext - x;
      nx = left < 4 ? static_cast<int>(left < 0 ? 0 : left) : 4;
      x_first = nx > 0 ? einc_goff<TAB_X>(x, x_stride, x_tab) : 0;
      base[0] = batch_base + x_first;
      xvec = VEC && nx == 4 && (!TAB_X || einc_run_contiguous<4>(x_tab + x, x_first));
      row_ok[0] = nx > 0;
    } else {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const long long x = x0 + row0 + r * STEP;
        row_ok[r] = x < ext;
        base[r] = batch_base + (row_ok[r] ? einc_goff<TAB_X>(x, x_stride, x_tab) : 0);
      }
    }
  }

  // The next slice's copies into `stage` when the slice is whole (every one but a ragged
  // last): no bounds but the tile's edge (x). Strided K: pointers walk by kstep; tabled K:
  // koff is the next slice's k (this thread's first), looked up once a run -- the per-slice
  // bounds and 64-bit products of `issue` cost ~100 instructions a slice, issued between two
  // steps' products (session 21 SASS).
  __device__ __forceinline__ void issue_full(float* stage, long long x_stride, const long long* __restrict__ x_tab,
                                             long long k_stride, const long long* __restrict__ k_tab, long long x0) {
    if constexpr (XFAST) {
      const long long x = x0 + lead;
#pragma unroll
      for (int r = 0; r < RUNS; ++r)
        einc_cp_run<4>(stage + St::at(lead, row0 + r * STEP),
                       base[0] + (TAB_K ? __ldg(k_tab + koff + r * rstep) : koff + r * rstep), row_ok[0], xvec, nx,
                       [&](int e) { return TAB_X ? __ldg(x_tab + x + e) - x_first : e * x_stride; });
    } else {
      const long long k_first = TAB_K ? __ldg(k_tab + koff) : koff;
      const bool kvec = VEC && (!TAB_K || einc_run_contiguous<4>(k_tab + koff, k_first));
#pragma unroll
      for (int r = 0; r < RUNS; ++r)
        einc_cp_run<4>(stage + St::at(row0 + r * STEP, lead), base[r] + k_first, row_ok[r], kvec, 4, [&](int e) {
          return TAB_K ? __ldg(k_tab + koff + e) - k_first : e * k_stride;
        });
    }
    koff += kstep;
  }

  // Slice kt's copies into `stage` (a pointer to this operand's stage in shared memory).
  __device__ __forceinline__ void issue(float* stage, int kt, long long K, long long x0, long long x_stride,
                                        const long long* __restrict__ x_tab, long long k_stride,
                                        const long long* __restrict__ k_tab) const {
    const long long k0 = static_cast<long long>(kt) * BK;
    if constexpr (XFAST) {
      const long long x = x0 + lead;
#pragma unroll
      for (int r = 0; r < RUNS; ++r) {
        const int kk = row0 + r * STEP;
        const bool ok = row_ok[0] && k0 + kk < K;
        const float* src = base[0] + (ok ? einc_goff<TAB_K>(k0 + kk, k_stride, k_tab) : 0);
        einc_cp_run<4>(stage + St::at(lead, kk), src, ok, xvec, nx, [&](int e) {
          return TAB_X ? __ldg(x_tab + x + e) - x_first : e * x_stride;
        });
      }
    } else {
      const long long k = k0 + lead, left = K - k;
      const int n = left < 4 ? static_cast<int>(left < 0 ? 0 : left) : 4;
      const long long k_first = n > 0 ? einc_goff<TAB_K>(k, k_stride, k_tab) : 0;
      const bool kvec = VEC && n == 4 && (!TAB_K || einc_run_contiguous<4>(k_tab + k, k_first));
#pragma unroll
      for (int r = 0; r < RUNS; ++r) {
        einc_cp_run<4>(stage + St::at(row0 + r * STEP, lead), base[r] + k_first, row_ok[r] && n > 0, kvec, n,
                       [&](int e) { return TAB_K ? __ldg(k_tab + k + e) - k_first : e * k_stride; });
      }
    }
  }
};

// The masked store of a warp's WM x 32 piece (FM = WM / 16 fragment rows) (fragment (i, j): d[e] at row 16i + g + 8(e/2),
// column 8j + 2t + e%2 of the piece at (m0, n0) in C, its batch's origin): two columns a
// lane, one 8-byte store where C holds them side by side and aligned (a warp's store: 8 rows
// of 32 contiguous bytes), else two element stores. `row(m)`, `col(n)` as in einc_tile_store.
template <bool TAB_N, class TC, int FM, class TOut, class Row, class Col>
__device__ __forceinline__ void einc_dm_store(TOut* __restrict__ C, const double (&d)[FM][4][4], const EincGettMeta& p,
                                              long long m0, long long n0, int lane, Row&& row, Col&& col) {
  const int g = lane >> 2, t = lane & 3;
  long long off[4][2];
  bool pair[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const long long n = n0 + 8 * j + 2 * t;
    off[j][0] = n < p.N ? (TAB_N ? col(n) : n * p.c_n) : 0;
    off[j][1] = n + 1 < p.N ? (TAB_N ? col(n + 1) : (n + 1) * p.c_n) : 0;
    pair[j] = n + 1 < p.N && off[j][1] == off[j][0] + 1;
  }
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long m = m0 + 16 * i + g + 8 * h;
      if (m >= p.M) continue;
      TOut* __restrict__ c_row = C + row(m);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const long long n = n0 + 8 * j + 2 * t;
        TOut* __restrict__ q = c_row + off[j][0];
        if (pair[j] && (reinterpret_cast<unsigned long long>(q) & (2 * sizeof(TOut) - 1)) == 0) {
          EincVec<TOut, 2> w;
          w.v[0] = EincStore<TOut>::f(cast<TC>(d[i][j][2 * h]));
          w.v[1] = EincStore<TOut>::f(cast<TC>(d[i][j][2 * h + 1]));
          *reinterpret_cast<EincVec<TOut, 2>*>(q) = w;
        } else {
          if (n < p.N) store_as<TC>(q, d[i][j][2 * h]);
          if (n + 1 < p.N) store_as<TC>(c_row + off[j][1], d[i][j][2 * h + 1]);
        }
      }
    }
}

template <class Cfg, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool A_MFAST, bool B_NFAST, class TOut, class TC,
          bool A_VEC, bool B_VEC>
__device__ __forceinline__ void einc_gett_dm(void* __restrict__ out, const void* __restrict__ a_ptr,
                                             const void* __restrict__ b_ptr, const EincGettMeta& p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, S = Cfg::S, NT = Cfg::NT, W = BK / 8;
  constexpr int WM = Cfg::WM, FM = WM / 16;
  static_assert(BM % WM == 0 && BN % 32 == 0, "one warp per WM x 32 piece");
  static_assert(BK % 8 == 0, "whole k8 steps");
  static_assert(S >= 2, "a slice's copies land while S-1 slices are multiplied");
  using SA = EincDmStage<BM, BK, A_MFAST>;
  using SB = EincDmStage<BN, BK, B_NFAST>;

#ifdef EINC_HOST_EMULATION  // the CPU emulator's threads of one block share a static buffer
  alignas(16) static unsigned char einc_smem[4 * S * (SA::SIZE + SB::SIZE)];
#else
  extern __shared__ __align__(16) unsigned char einc_smem[];
#endif
  float* As = reinterpret_cast<float*>(einc_smem);
  float* Bs = As + S * SA::SIZE;

  const float* __restrict__ A = static_cast<const float*>(a_ptr);
  const float* __restrict__ B = static_cast<const float*>(b_ptr);
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int dm0 = (tid >> 5) / (BN / 32) * WM, dn0 = (tid >> 5) % (BN / 32) * 32;
  const long long tiles = p.tiles_m * p.tiles_n * p.batch;
  const int nk = static_cast<int>((p.K + BK - 1) / BK);  // the emitter keeps K < 2^34

  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    long long bi, m0, n0;
    einc_tile_origin<Cfg::GROUP_M>(tile, p, BM, BN, bi, m0, n0);
    EincDmLoader<BM, BK, NT, A_MFAST, TAB_M, TAB_K, A_VEC> la;
    EincDmLoader<BN, BK, NT, B_NFAST, TAB_N, TAB_K, B_VEC> lb;
    la.init(A + einc_goff<TAB_B>(bi, p.a_b, p.ta_b), tid, m0, p.M, p.a_m, p.ta_m, p.a_k);
    lb.init(B + einc_goff<TAB_B>(bi, p.b_b, p.tb_b), tid, n0, p.N, p.b_n, p.tb_n, p.b_k);
    auto issue = [&](int kt, int stage) {  // (slices are issued once each, in order)
      if (static_cast<long long>(kt + 1) * BK <= p.K) {
        la.issue_full(As + stage * SA::SIZE, p.a_m, p.ta_m, p.a_k, p.ta_k, m0);
        lb.issue_full(Bs + stage * SB::SIZE, p.b_n, p.tb_n, p.b_k, p.tb_k, n0);
      } else {
        la.issue(As + stage * SA::SIZE, kt, p.K, m0, p.a_m, p.ta_m, p.a_k, p.ta_k);
        lb.issue(Bs + stage * SB::SIZE, kt, p.K, n0, p.b_n, p.tb_n, p.b_k, p.tb_k);
      }
    };

    double dacc[FM][4][4];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) dacc[i][j][e] = 0.0;

    // Fragments of the next k8 step as fp32, converted at the products: read after the
    // current step's products are issued (the tensor pipe runs them while the reads land),
    // so one set is live (two spilled at 255 registers).
    float fa[FM][4], fb[4][2];
    auto frags = [&](int stage, int k8) {
      const float* as = As + stage * SA::SIZE;
      const float* bs = Bs + stage * SB::SIZE;
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) fa[i][e] = as[SA::at(dm0 + 16 * i + g + 8 * (e % 2), 8 * k8 + t + 4 * (e / 2))];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) fb[j][e] = bs[SB::at(dn0 + 8 * j + g, 8 * k8 + t + 4 * e)];
    };
    auto products = [&] {
      double db[4][2];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) db[j][e] = static_cast<double>(fb[j][e]);
#pragma unroll
      for (int i = 0; i < FM; ++i) {
        double da[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) da[e] = static_cast<double>(fa[i][e]);
#pragma unroll
        for (int j = 0; j < 4; ++j) einc_dmma<8>(dacc[i][j], da, db[j]);
      }
    };

#pragma unroll
    for (int s = 0; s < S; ++s) {
      if (s < nk) issue(s, s);
      einc_cp_commit();  // empty groups keep the group count uniform
    }
    if (nk > 0) {
      einc_cp_wait<S - 1>();
      __syncthreads();
      frags(0, 0);
    }
    int stage = 0;
    for (int kt = 0; kt < nk; ++kt) {
      const int next = stage == S - 1 ? 0 : stage + 1;
#pragma unroll
      for (int w = 0; w < W; ++w) {
        if (w < W - 1) {
          products();
          frags(stage, w + 1);
        } else {
          einc_cp_wait<S - 2>();  // slice kt+1 (see the header)
          __syncthreads();
          products();
          if (kt + S < nk) issue(kt + S, stage);
          einc_cp_commit();
          if (kt + 1 < nk) frags(next, 0);
        }
      }
      stage = next;
    }
    einc_cp_wait<0>();
    __syncthreads();  // WAR: the next tile's prologue refills the stages

    einc_dm_store<TAB_N, TC, FM>(
        C + einc_goff<TAB_B>(bi, p.c_b, p.tc_b), dacc, p, m0 + dm0, n0 + dn0, lane,
        [&](long long m) { return einc_goff<TAB_M>(m, p.c_m, p.tc_m); }, [&](long long n) { return __ldg(p.tc_n + n); });
  }
}
