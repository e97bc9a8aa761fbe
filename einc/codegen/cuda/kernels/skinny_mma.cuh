// einc CUDA kernel family `skinny_mma`: the skinny step (see skinny.cuh)
//
//   C[r, x, y, n] = sum_k A[r, x, y, k] * B[r, k, n],   N <= 32,  A and B fp16 or bf16
//
// on tensor cores: mma.sync.m16n8k16 with fp32 accumulators (sm_80+). The step is
// memory-bound (intensity ~ N FLOP per byte of A), so the kernel is built around
// streaming A once at copy bandwidth; the tensor cores only free the issue slots that
// skinny's converting FFMA path spent (6-9 TFLOP/s on TCCG's intensli cases).
//
// Addressing is skinny's (EincSkinnyMeta): the M group is a box X x Y plus `rest`
// (offset tables ra/rb/rc), X may fold a second M mode x2 (flat x = x + u0 * x2), K is
// one stride or tables (TAB_K), N is tables.
//
// Ownership: a block of NT = 256 (or 512) threads owns one tile: BX X values x BY Y
// values (BM = BX * BY = 16 MI NT / 32 rows; ONE_AXIS steps have BY = 1) of one rest index,
// times all N columns padded to NP (a multiple of 8). Tile row m is (x0 + m % BX,
// y0 + m / BX). Warp w owns rows [16 MI w, 16 MI (w + 1)): MI m16 tiles times NP / 8 n8
// tiles of accumulators.
//
// A: raw 2-byte elements in an S-stage shared ring of BK = 32 or 64 k per slice,
//  - M-fast A (X is A's unit stride): [k][m] rows of BM elements + 16 bytes of pad, read
//    by ldmatrix.trans; KFAST A (its one K mode unit-stride): [m][k] rows of BK k + 16
//    bytes, read by ldmatrix. The pads put the eight 16-byte rows one ldmatrix phase
//    reads in distinct bank groups (pitch = 16 or 80 mod 128 bytes).
//  - VEC (the emitter proved every row, k and rest offset a multiple of 8 elements; the
//    runtime launches the element twin when A's pointer is not 16-byte aligned): 16-byte
//    cp.async pieces, 8 rows of one k (M-fast: with an x2 the emitter keeps u0 a multiple
//    of 8, so a piece never straddles two x runs) or 8 k of one row (K-fast), zero-filled
//    past X's or K's end (src-size < 16).
//  - TM (sm_90, VEC and a tensor map describes the slice: one K mode, at most one rest mode,
//    box rows of 16-128 bytes, no box straddling two x2): thread 0 asks the TMA unit for the
//    slice as one box (expect_tx on the stage's mbarrier); it lands dense and swizzled
//    (EincSkinnyMmaRing), zero-filled past every end, and the other threads compute no
//    address. Each thread waits on the stage's mbarrier (parity = pass over the ring)
//    instead of its own cp.async group; the barrier that follows keeps the WAR order.
//  - otherwise element loads through registers into the same layout (misaligned views,
//    odd strides, tabled K-fast K): correct, not fast.
//  k past K is zero in both (B's rows there are zero too, but 0 * stale NaN is NaN).
//  The ring is fed across tile boundaries: the slices of a block's tiles form one stream
//  (tile t's last slice, then tile t + gridDim.x's first), so the next tile's loads are in
//  flight during this tile's last slices and its epilogue. One barrier per slice:
//    wait(own copies of slice g); barrier  -- RAW for slice g, WAR for stage g-1
//    [B chunk reload, barrier]             -- block-uniform, rare
//    issue slice g+S-1 into stage (g-1)%S
//    mma over slice g
// B: KC k of all NP columns (all of K when it fits: loaded once per block while the rest
// offset into B stays the same), raw, as [n][k] rows of 2 KC + 16 bytes (ldmatrix gives
// the "col" fragment; one x4 covers 32 k of one n8 tile), zero past N and K. A reload
// happens after a slice's barrier (everyone finished the slices that read the old chunk)
// and is followed by its own barrier (RAW).
// Epilogue: accumulators -> TOut (numpy's rounding, through TC) -> a staging area of its
// own (the ring is still busy with the next tile's slices), laid out so that the read-out
// runs along C's unit stride: ORDER 1 (C unit-stride along Y: [n][x][y]), 0 (along X, or
// none: [n][m]), 2 (along N: [m][n], a warp stores one row's N at a time). Barrier before
// staging (WAR: the previous tile's read-out) and after it (RAW). In ORDER 0/1 each
// thread then owns one tile row and stores its columns: one row offset per tile.
#pragma once
#include "common.cuh"
#include "skinny.cuh"
#include "mma.cuh"
#include "copy_tma.cuh"

template <int MI_, int NP_, int BX_, int S_, int BK_ = 32, int EU_ = 0, int NT_ = 256, int TM_ = 0>
struct EincSkinnyMmaTile {
  static constexpr int MI = MI_, NP = NP_, BX = BX_, S = S_, BK = BK_, NT = NT_;
  // TM (sm_90): A's slices come whole from the TMA unit, one box of a tensor map over A each;
  // 0: threads copy them. Else bits: 1 | 2 (x2 is a map dimension) | 4 (y) | 8 (one rest mode)
  static constexpr int TM = TM_;
  static constexpr bool EU = EU_ != 0;  // read-out over all NP columns unrolled (its loads overlap)
  static constexpr int BM = MI * NT / 2, BY = BM / BX, NI = NP / 8;  // 16 MI rows a warp
  static_assert(NT == 256 || NT == 512, "8 or 16 warps");
  static_assert(BK == 32 || BK == 64, "k per slice: whole ldmatrix.x4 B loads of 32 k");
  static_assert(MI == 1 || MI == 2, "16 or 32 rows a warp");
  static_assert(NP % 8 == 0 && NP <= 32, "whole n8 tiles, at most 32 columns");
  static_assert(BX % 8 == 0 && BM % BX == 0 && (BX & (BX - 1)) == 0, "8-row pieces, a power-of-two box");
};

// The A ring's stage layout (bytes): M-fast [BK][BM] + pad, K-fast [BM][BK] + pad.
// TM: the TMA box as it lands, dense and swizzled: M-fast [BY][BK][BX] (rows of BX), K-fast
// [BY][BX][BK] (rows of BK), the 16-byte chunk c of a row at c ^ (address bits 7.. under the
// row's span: the map's SWIZZLE_32B/64B/128B; rows of 16 bytes need none), so that the eight
// rows one ldmatrix phase reads (8 k of one M-fast chunk, 8 rows of one K-fast chunk) fall
// in distinct bank groups. Stages are 1024-byte aligned (the swizzle's period).
template <class Cfg, bool KFAST> struct EincSkinnyMmaRing {
  static constexpr bool T = Cfg::TM != 0;
  static constexpr int RB = KFAST ? Cfg::BK * 2 : Cfg::BX * 2;  // TM: a box row's bytes
  static constexpr int SWM = RB >= 32 ? RB / 16 - 1 : 0;
  static_assert(!T || (RB >= 16 && RB <= 128 && (RB & (RB - 1)) == 0), "TMA rows of 16-128 bytes");
  static constexpr int PITCH = KFAST ? Cfg::BK * 2 + 16 : Cfg::BM * 2 + 16;
  static constexpr int STAGE = T ? Cfg::BM * Cfg::BK * 2 : (KFAST ? Cfg::BM : Cfg::BK) * PITCH;
  static __device__ __forceinline__ int at(int m, int k) {
    if constexpr (T) {
      const int lin = KFAST ? m * RB + 2 * k : (m / Cfg::BX) * (Cfg::BK * RB) + k * RB + 2 * (m % Cfg::BX);
      return lin ^ (((lin >> 7) & SWM) << 4);
    } else {
      return KFAST ? m * PITCH + 2 * k : k * PITCH + 2 * m;
    }
  }
};

// The C staging area (elements of TOut): (x_l, y_l, n) at n SN + x_l SX + y_l SY.
template <class Cfg, int ORDER> struct EincSkinnyMmaStage {
  static constexpr int BX = Cfg::BX, BY = Cfg::BY, BM = Cfg::BM, NP = Cfg::NP;
  static constexpr int Y_SN = BX * (BY + 1) + ((4 - (BX * (BY + 1)) % 16) + 16) % 16;
  static constexpr int SX = ORDER == 1 ? BY + 1 : ORDER == 2 ? NP + 2 : 1;
  static constexpr int SY = ORDER == 1 ? 1 : ORDER == 2 ? BX * (NP + 2) : BX;
  static constexpr int SN = ORDER == 1 ? Y_SN : ORDER == 2 ? 1 : BM + 8;
  static constexpr int ELEMS = ORDER == 2 ? BM * (NP + 2) : NP * SN;
};

// 16-byte asynchronous copy of `bytes` (0..16, the rest zero-filled; src not read at 0).
__device__ __forceinline__ void einc_smma_cp16(unsigned dst, const void* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global" EINC_L2_HINT " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
#endif
}
__device__ __forceinline__ void einc_smma_st16(unsigned dst, unsigned short v) {
  asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(dst), "h"(v));
}

template <class Cfg, class Op, bool KFAST, bool VEC, bool TAB_K, bool B_KFAST, int ORDER, class TOut, class TC>
__device__ __forceinline__ void einc_skinny_mma(void* __restrict__ out, const void* __restrict__ a_ptr,
                                                const void* __restrict__ b_ptr, const EincSkinnyMeta& p,
                                                const EincTmap* tma = nullptr) {
  constexpr int NT = Cfg::NT, BM = Cfg::BM, BX = Cfg::BX, BY = Cfg::BY, BK = Cfg::BK, S = Cfg::S;
  constexpr int MI = Cfg::MI, NI = Cfg::NI, NP = Cfg::NP;
  using Ring = EincSkinnyMmaRing<Cfg, KFAST>;
  using Stg = EincSkinnyMmaStage<Cfg, ORDER>;
  static_assert(S >= 2, "at least double buffering");
  static_assert(Op::E == 2, "16-bit inputs");
  static_assert(NT % BM == 0 || BM == NT, "a thread owns one tile row in the read-out");

  extern __shared__ __align__(128) unsigned char einc_smem[];
  const int KC = static_cast<int>(p.kc);
  const int PB = 2 * KC + 16;  // B row pitch, bytes
  const unsigned s0 = static_cast<unsigned>(__cvta_generic_to_shared(einc_smem));
  constexpr bool TM = Cfg::TM != 0;
  // the ring after B's chunk (TM: at the next 1024-byte boundary; the emitter counts the slack)
  const unsigned ring = TM ? ((s0 + NP * PB + 1023u) & ~1023u) - s0 : NP * PB;
  const unsigned sB = s0, sR = s0 + ring;
  TOut* const Cs = reinterpret_cast<TOut*>(einc_smem + ring + S * Ring::STAGE);
  __shared__ __align__(8) unsigned long long einc_smma_full[TM ? S : 1];  // TM: stage s landed
  const unsigned sBar = static_cast<unsigned>(__cvta_generic_to_shared(einc_smma_full));

  const unsigned short* __restrict__ A = static_cast<const unsigned short*>(a_ptr);
  const unsigned short* __restrict__ B = static_cast<const unsigned short*>(b_ptr);
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  const long long per_rest = p.tiles_x * p.tiles_y, tiles = per_rest * p.R;
  const unsigned per_rest32 = static_cast<unsigned>(per_rest), tiles_x32 = static_cast<unsigned>(p.tiles_x);
  const int nk = static_cast<int>((p.K + BK - 1) / BK);  // slices per tile
  // Tile origin: 32-bit decoding (the emitter keeps tile counts below 2^31).
  auto decode = [&](long long item, long long& x0, long long& y0, long long& r) {
    const unsigned t32 = static_cast<unsigned>(item), r32 = t32 / per_rest32, rem = t32 - r32 * per_rest32;
    const unsigned ty = rem / tiles_x32;
    x0 = static_cast<long long>(rem - ty * tiles_x32) * BX;
    y0 = static_cast<long long>(ty) * BY;
    r = r32;
  };
  auto a_koff = [&](long long k) { return TAB_K ? __ldg(p.ta_k + k) : k * p.a_k; };
  auto b_koff = [&](long long k) { return TAB_K ? __ldg(p.tb_k + k) : k * p.b_k; };
  // A offset of tile row (x, y) of rest offset ar (0 out of the box: a flag says so,
  // since offsets of negative strides are negative too).
  auto a_row = [&](long long x, long long y, long long ar) {
    return x < p.U && y < p.V ? ar + einc_skinny_xoff(x, p, p.a_x, p.a_x2) + y * p.a_y : 0LL;
  };

  // ---- the loader: a cursor over (tile, slice) that runs up to S - 1 slices ahead ----
  // This thread's fixed share of a slice:
  //  VEC M-fast: pieces of rows 8q..8q+7 (q = tid % (BM/8)) at k = kq0 + KSTEP j;
  //  VEC K-fast: 8 k (kq0 = 8 (tid % PR)) of rows tid / PR + (NT / PR) j, PR = BK / 8;
  //  elements: row tid % BM at k = tid / BM + (NT / BM) j.
  constexpr int MQ = BM / 8, PR = BK / 8, RSTEP = NT / PR;
  constexpr int NJ = !VEC ? BM * BK / NT : KFAST ? BM / RSTEP : BM * BK / 8 / NT;
  constexpr int KSTEP = !VEC ? NT / BM : KFAST ? 0 : NT / MQ;
  constexpr int NR = VEC && KFAST ? NJ : 1;
  const int lrow = !VEC ? tid % BM : KFAST ? tid / PR : 8 * (tid % MQ);  // first tile row
  const int lk0 = !VEC ? tid / BM : KFAST ? 8 * (tid % PR) : tid / MQ;   // first k in the slice
  static_assert(!VEC || KFAST || NT % MQ == 0, "whole pieces per k");
  long long l_item = blockIdx.x;
  int l_kt = 0;
  // VEC: l_row[j] is the A offset of this thread's piece j at k = 0 (K-fast) or of its next
  // piece 0 (M-fast: advanced a slice at a time; TAB_K adds the table's offset to the row's)
  long long l_row[NR];
  unsigned l_ok = 0;  // bit j: l_row[j] is in the box
  int l_bytes = 0;    // VEC M-fast: bytes of the piece in range (0: none)
  const int K32 = static_cast<int>(p.K);  // (the emitter keeps K below 2^31)
  auto l_setup = [&]() {
    if (TM || l_item >= tiles) return;
    long long x0, y0, r;
    decode(l_item, x0, y0, r);
    const long long ar = __ldg(p.ra + r);
    if constexpr (VEC && KFAST) {
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int m = lrow + RSTEP * j;
        const long long x = x0 + m % BX, y = y0 + m / BX;
        l_row[j] = a_row(x, y, ar) + lk0;
        l_ok = (l_ok & ~(1u << j)) | static_cast<unsigned>(x < p.U && y < p.V) << j;
      }
    } else {
      const long long x = x0 + lrow % BX, y = y0 + lrow / BX;
      l_row[0] = a_row(x, y, ar) + (VEC && !TAB_K ? lk0 * p.a_k : 0);
      l_ok = x < p.U && y < p.V;
      if constexpr (VEC) l_bytes = !l_ok ? 0 : p.U - x >= 8 ? 16 : 2 * static_cast<int>(p.U - x);
    }
  };
  auto l_issue = [&](int stage) {  // slice l_kt of tile l_item into `stage`, then advance
    if (l_item >= tiles || nk == 0) return;
    const unsigned dst0 = sR + stage * Ring::STAGE;
    const int kb = l_kt * BK;
    if constexpr (TM) {
      // one thread asks the TMA unit for the slice's box (coordinates in the map's order:
      // M-fast x [x2] k [y] [rest], K-fast k x [x2] [y] [rest]); it zero-fills past every end
      if (tid == 0) {
        constexpr bool X2 = Cfg::TM & 2, HY = Cfg::TM & 4, HR = Cfg::TM & 8;
        constexpr int RANK = 2 + X2 + HY + HR;
        long long x0, y0, r;
        decode(l_item, x0, y0, r);
        const unsigned fx = static_cast<unsigned>(x0), u0 = static_cast<unsigned>(p.u0);
        int c[5], d = 0;
        if constexpr (KFAST) c[d++] = kb;
        c[d++] = static_cast<int>(X2 ? fx % u0 : fx);
        if constexpr (X2) c[d++] = static_cast<int>(fx / u0);
        if constexpr (!KFAST) c[d++] = kb;
        if constexpr (HY) c[d++] = static_cast<int>(y0);
        if constexpr (HR) c[d++] = static_cast<int>(r);
        const unsigned bar = sBar + 8 * stage;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                     "r"(static_cast<unsigned>(Ring::STAGE)) : "memory");
        einc_copy_tma_load<RANK>(dst0, tma, c, bar);
#endif
      }
    } else if constexpr (VEC && KFAST) {
      const int left = K32 - (kb + lk0), nb = left <= 0 ? 0 : left >= 8 ? 16 : 2 * left;
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const bool ok = ((l_ok >> j) & 1) && nb > 0;
        einc_smma_cp16(dst0 + Ring::at(lrow + RSTEP * j, lk0), ok ? A + l_row[j] + kb : A, ok ? nb : 0);
      }
    } else if constexpr (VEC) {
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int kl = lk0 + KSTEP * j;
        const bool ok = l_bytes > 0 && kb + kl < K32;
        const long long off = TAB_K ? l_row[0] + (ok ? __ldg(p.ta_k + kb + kl) : 0) : l_row[0] + j * KSTEP * p.a_k;
        einc_smma_cp16(dst0 + Ring::at(lrow, kl), ok ? A + off : A, ok ? l_bytes : 0);
      }
      if constexpr (!TAB_K) l_row[0] += BK * p.a_k;
    } else {
      constexpr int U = NJ < 8 ? NJ : 8;  // loads in flight before their stores
#pragma unroll
      for (int j0 = 0; j0 < NJ; j0 += U) {
        unsigned short v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const long long k = kb + lk0 + KSTEP * (j0 + u);
          v[u] = l_ok && k < p.K ? __ldg(A + l_row[0] + a_koff(k)) : static_cast<unsigned short>(0);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) einc_smma_st16(dst0 + Ring::at(lrow, lk0 + KSTEP * (j0 + u)), v[u]);
      }
    }
    if (++l_kt == nk) {
      l_kt = 0;
      l_item += gridDim.x;
      l_setup();
    }
  };

  // ---- B chunks ----
  long long b_rest_loaded = -1;
  int b_chunk = -1;
  auto load_b = [&](long long b_rest, int chunk) {
    const long long c0 = static_cast<long long>(chunk) * KC;
    unsigned short* Bs = reinterpret_cast<unsigned short*>(einc_smem);
    for (int idx = tid; idx < NP * KC; idx += NT) {
      // B K-fast: adjacent threads on adjacent k (its unit stride), else on adjacent n
      const int kl = B_KFAST ? idx % KC : idx / NP, n = B_KFAST ? idx / KC : idx % NP;
      unsigned short v = 0;
      if (n < p.N && c0 + kl < p.K) v = __ldg(B + b_rest + b_koff(c0 + kl) + __ldg(p.tb_n + n));
      Bs[n * (PB / 2) + kl] = v;
    }
  };

  if constexpr (TM) {
    if (tid == 0) {
#pragma unroll
      for (int s = 0; s < S; ++s) einc_mbar_init(sBar + 8 * s, 1);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine
    }
    __syncthreads();
  }
  l_setup();
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    l_issue(s);
    einc_cp_commit();  // empty groups keep the count uniform
  }
  int stage = 0, lstage = S - 1;  // compute's stage, the next issue's
  unsigned phase = 0;             // TM: the parity stage `stage` completes next

  const int g = lane >> 2, t = lane & 3;
  const int wm0 = warp * 16 * MI;
  for (long long item = blockIdx.x; item < tiles; item += gridDim.x) {
    long long x0, y0, r;
    decode(item, x0, y0, r);
    const long long b_rest = __ldg(p.rb + r);
    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

    for (int kt = 0; kt < nk; ++kt) {
      if constexpr (TM)
        einc_mbar_wait(sBar + 8 * stage, phase);  // slice g's box landed (acquires its bytes)
      else
        einc_cp_wait<S - 2>();
      __syncthreads();
      const int chunk = kt * BK / KC;
      if (chunk != b_chunk || b_rest != b_rest_loaded) {  // block-uniform
        load_b(b_rest, chunk);
        b_chunk = chunk;
        b_rest_loaded = b_rest;
        __syncthreads();  // RAW: the chunk is complete
      }
      l_issue(lstage);
      einc_cp_commit();
      lstage = lstage == S - 1 ? 0 : lstage + 1;

      const unsigned sa = sR + stage * Ring::STAGE;
      const int kb = kt * BK - chunk * KC;  // the slice's first k in the B chunk
      unsigned bf[BK / 32][NI][4];  // [32 k][n8 tile]: k 0-7, 8-15, 16-23, 24-31
#pragma unroll
      for (int h = 0; h < BK / 32; ++h)
#pragma unroll
        for (int j = 0; j < NI; ++j)
          einc_ldsm4(bf[h][j], sB + (8 * j + (lane & 7)) * PB + 2 * (kb + 32 * h + 8 * (lane >> 3)));
#pragma unroll
      for (int ks = 0; ks < BK / 16; ++ks) {
        unsigned af[MI][4];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          const int m0 = wm0 + 16 * i;
          if constexpr (KFAST)
            einc_ldsm4(af[i], sa + Ring::at(m0 + (lane & 15), 16 * ks + 8 * (lane >> 4)));
          else
            einc_ldsm4_t(af[i], sa + Ring::at(m0 + 8 * ((lane >> 3) & 1), 16 * ks + (lane & 7) + 8 * (lane >> 4)));
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j) Op::mma(acc[i][j], af[i], &bf[ks / 2][j][2 * (ks % 2)]);
      }
      stage = stage == S - 1 ? 0 : stage + 1;
      phase ^= stage == 0;
    }

    // ---- epilogue ----
    __syncthreads();  // WAR: every thread has read out the previous tile's staging
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int m = wm0 + 16 * i + g + 8 * (q >> 1), n = 8 * j + 2 * t + (q & 1);
          Cs[n * Stg::SN + (m % BX) * Stg::SX + (m / BX) * Stg::SY] = EincStore<TOut>::f(cast<TC>(acc[i][j][q]));
        }
    __syncthreads();  // RAW: the tile is staged
    const long long c_rest = __ldg(p.rc + r);
    if constexpr (ORDER == 2) {
      // C unit-stride along N: a warp stores row m's N consecutive elements
#pragma unroll 4
      for (int m = warp; m < BM; m += NT / 32) {
        const long long x = x0 + m % BX, y = y0 + m / BX;
        if (lane < p.N && x < p.U && y < p.V)
          C[c_rest + einc_skinny_xoff(x, p, p.c_x, p.c_x2) + y * p.c_y + __ldg(p.tc_n + lane)] =
              Cs[lane + (m % BX) * Stg::SX + (m / BX) * Stg::SY];
      }
    } else {
      // ORDER 1: consecutive threads on consecutive y (C's unit stride); ORDER 0: on x
      const int xl = ORDER == 1 ? (tid / BY) % BX : tid % BX;
      const int yl = ORDER == 1 ? tid % BY : (tid % BM) / BX;
      const long long x = x0 + xl, y = y0 + yl;
      if (x < p.U && y < p.V) {
        TOut* __restrict__ crow = C + c_rest + einc_skinny_xoff(x, p, p.c_x, p.c_x2) + y * p.c_y;
        const TOut* srow = Cs + xl * Stg::SX + yl * Stg::SY;
        if constexpr (Cfg::EU) {
#pragma unroll
          for (int n = tid / BM; n < NP; n += NT / BM)
            if (n < p.N) crow[__ldg(p.tc_n + n)] = srow[n * Stg::SN];
        } else {
          for (int n = tid / BM; n < p.N; n += NT / BM) crow[__ldg(p.tc_n + n)] = srow[n * Stg::SN];
        }
      }
    }
  }
  einc_cp_wait<0>();
}
