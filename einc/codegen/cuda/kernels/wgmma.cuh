// einc CUDA kernel family `wgmma`: the gett contraction on Hopper's warpgroup tensor-core
// instructions (wgmma.mma_async, sm_90a only). Same problem as mma.cuh
// (C[b,m,n] = sum_k A[b,m,k] B[b,k,n] over mode groups, EincGettMeta), same byte view of
// K: every instruction takes 32 bytes of k per row (k16 fp16/bf16, k8 tf32, k32 int8).
//
// Block tile BM x BN with BM/64 consumer warpgroups; warpgroup w owns rows 64w..64w+63 and
// all BN columns, its accumulators in registers (BN/2 per thread). K advances in slices
// of 128 bytes, S stages deep in shared memory.
//
// Shared memory per stage, both in the 128-byte-swizzled layouts wgmma reads directly
// (tile bases 1024-byte aligned, so the swizzle is a function of the address):
//   A, K-major:  row r (BM rows) of 128 bytes at r*128; its 16-byte piece c at
//                ((c ^ (r % 8)) * 16). Descriptor: SBO = 1024 (8 rows), one k-step of 32
//                bytes advances the start address by 32.
//   B, K-major:  the same with BN rows.
//   B, N-major (fp16/bf16 only, B_KMAJ false): 8 k-rows x 64 n (128 bytes) per
//                1024-byte atom, atoms along n then along k; the instruction transposes.
// Global -> shared: the loader threads copy 16-byte pieces with cp.async (zero-filled out
// of range), eight consecutive threads per 128-byte row (coalesced). The emitter takes this
// path only when each operand's fast group is 16-byte contiguous (as mma.cuh's VEC path)
// and the runtime only with 16-byte aligned operands (else the mma twin runs). The
// warp-specialised pipeline may instead copy whole boxes by TMA (TMA_RANK > 0, below):
// same stages, the copy engine swizzling as einc_sw128 does.
//
// Two pipelines over the same stages and epilogue:
//
// einc_wgmma_gett (every warpgroup loads and computes), one barrier per slice, one wgmma
// group in flight:
//   wait(own copies of slice kt); fence.proxy.async; barrier
//       RAW for slice kt; and every warpgroup has retired wgmma(kt-2) (wait_group 1 at
//       the end of slice kt-1), so stage (kt-2)%S is free
//   issue slice kt+S-2 into stage (kt+S-2)%S
//   wgmma.fence; BK/32 wgmma on stage kt; commit; wait_group 1 (wgmma(kt-1) retired)
//
// einc_wgmma_gett_ws (warp-specialised): one more warpgroup, the producer, only loads;
// the BM/64 consumer warpgroups only compute. Two mbarriers per stage replace the block
// barrier: slice i (counted across the block's tiles) sits in stage i % S, round i / S.
//   producer: wait empty[s] (round-1 released); cp.async its pieces;
//             cp.async.mbarrier.arrive.noinc full[s] (fires when its copies land;
//             full[s] expects the 128 producer threads)
//   consumer: wait full[s] (round); fence.proxy.async (the copies were generic-proxy
//             writes, wgmma reads through the async proxy); wgmma.fence; BK/32 wgmma;
//             commit; wait_group 1; lane 0 of each warp arrives on empty[slice i-1]
//             (its wgmma has retired; empty[s] expects one arrival per consumer warp)
// Parities are (i / S) & 1 for full and its complement for empty (a fresh barrier counts
// its "previous" phase as complete, so the first round passes). Per tile the whole block
// meets twice on named barrier 2 (with its thread count: the roles reach it from different
// code, which __syncthreads does not allow): before the epilogue stages C in the ring
// (every wgmma retired, every copy landed) and after it has read them back, so the
// producer refills no stage the epilogue still uses; the consumers alone sync between the
// epilogue's halves (named barrier 1).
// racecheck reports hazards between the epilogue's reads of the ring and the producer's
// copies for the next tile when a block walks several tiles, though named barrier 2
// orders them; a variant staging C apart from the ring (session 7, measured slower and
// removed) reported none, so it is the aliasing racecheck flags.
// setmaxnreg (optional, Cfg::REG_P / REG_C) moves registers from the producer to the
// consumers. SEP (the emitter's ...ws1p / ...wsp tiles, 16-bit C): C is staged as its own
// type in an area after the ring and barriers, so the block never meets on barrier 2: the
// consumers sync among themselves (barrier 1) around the staging, and the producer, gated
// only by the empty barriers, fills the next tile's stages during the epilogue (persistent
// grids of the resident blocks walk the tiles). Cfg::MH = 2: one consumer warpgroup holds
// both 64-row strips of a 128-row tile (two wgmma per k step, 128 accumulators).
#pragma once
#include "common.cuh"
#include "gett.cuh"
#include "mma.cuh"

template <bool B, class T1, class T2> struct EincIf { using T = T1; };
template <class T1, class T2> struct EincIf<false, T1, T2> { using T = T2; };

__device__ __forceinline__ unsigned long long einc_gmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  // start address, leading and stride byte offsets (all >> 4), swizzle mode 1 = 128 bytes
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((lbo & 0x3FFFF) >> 4) << 16) |
         (static_cast<unsigned long long>((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void einc_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void einc_wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void einc_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void einc_fence_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// mbarriers (shared::cta addresses) for the warp-specialised pipeline (init and wait: common.cuh)
__device__ __forceinline__ void einc_mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Clusters of two (CL2): the peer CTA's barrier at the same shared offset, arrived on
// remotely; the whole cluster's barrier (every thread of both CTAs).
__device__ __forceinline__ void einc_mbar_arrive_peer(unsigned bar, unsigned peer) {
  asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n"
               " mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar), "r"(peer)
               : "memory");
}
__device__ __forceinline__ void einc_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned einc_cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// An arrive-on that fires once this thread's earlier cp.async have landed; .noinc: it
// counts against the barrier's expected arrivals (no pending-count increment).
__device__ __forceinline__ void einc_cp_mbar_arrive(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
// Named barriers are the non-.aligned `barrier.sync`: the producer and the consumers reach
// barrier 2 from different instructions, which `bar.sync` (= barrier.sync.aligned) leaves
// undefined by the PTX ISA (compute-sanitizer synccheck reported it as divergence).
template <int ID, int N> __device__ __forceinline__ void einc_named_bar() {
  if constexpr (ID == 0)
    __syncthreads();
  else
    asm volatile("barrier.sync %0, %1;\n" ::"n"(ID), "n"(N) : "memory");
}
template <int R> __device__ __forceinline__ void einc_setmaxnreg_dec() {
  if constexpr (R > 0) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R> __device__ __forceinline__ void einc_setmaxnreg_inc() {
  if constexpr (R > 0) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}

// TMA (cp.async.bulk.tensor): the host encodes one tensor map per operand (the runtime,
// runtime/cuda.py encode_tmap, with the call's pointer) and passes both by value as a
// __grid_constant__ parameter; one producer thread copies a whole box per operand per
// slice into the stage, swizzled by the copy engine exactly as einc_sw128 lays pieces
// out (128-byte rows, 16-byte piece c of row r at c ^ (r % 8), 1024-byte aligned bases),
// zero-filling what lies outside the tensor (ragged M, N and K need no predicates). The
// copies complete_tx on full[s], which the producer armed with the stage's byte count
// (out-of-range boxes count whole).
struct EincTmaps {
  EincTmap a, b;
};
struct EincTmaps3 {  // + C's map: the C-apart epilogue stores its tile by TMA (TMA_C)
  EincTmap a, b, c;
};
__device__ __forceinline__ void einc_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// One box of ``map`` at element coordinates (c0 innermost, c1, c2) into shared dst.
template <int RANK>
__device__ __forceinline__ void einc_tma_load(unsigned dst, const EincTmap* map, int c0, int c1, int c2,
                                              unsigned bar) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  if constexpr (RANK == 2)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
            dst),
        "l"(m), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];\n" ::"r"(dst),
        "l"(m), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

// One 2-D box into the same shared offset of both CTAs of a cluster of two, each one's
// barrier at ``bar`` completing the bytes it receives.
__device__ __forceinline__ void einc_tma_load_mc2(unsigned dst, const EincTmap* map, int c0, int c1, unsigned bar) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  const unsigned short mask = 3;
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(m), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}

// The tile's smem byte offset of 16-byte piece (row r, piece c) in a K-major SW128 tile.
__device__ __forceinline__ int einc_sw128(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }
// The byte offset of 16-byte piece nc of k-row k in an N-major B stage: atom (k / 8, nc / 8)
// (atoms along n, then along k), row k % 8, piece nc % 8.
template <int BN> __device__ __forceinline__ int einc_b_mn_off(int k, int nc) {
  return ((k >> 3) * (BN / 64) + (nc >> 3)) * 1024 + einc_sw128(k & 7, nc & 7);
}

// `Mma` is the emitter's struct with E (element bytes), Acc, the accumulator count NACC
// (BN/2) and `static void run(Acc* d, desc a, desc b)` issuing one wgmma.
// WS: one extra (producer) warpgroup; REG_P / REG_C: its and the consumers' setmaxnreg
// targets (0: keep the launch allocation).
// MH: 64-row strips per consumer warpgroup (2: one warpgroup computes all 128 rows of a
// 128-row tile, so a 256-thread block of it and its producer leaves room for two per SM).
template <int BM_, int BN_, int S_, bool WS_ = false, int REG_P_ = 0, int REG_C_ = 0, int GROUP_M_ = 8, int MH_ = 1>
struct EincWgmmaTile {
  static constexpr int BM = BM_, BN = BN_, S = S_, MH = MH_;
  static constexpr bool WS = WS_;
  static constexpr int REG_P = REG_P_, REG_C = REG_C_;
  static constexpr int WG = BM / 64 / MH, NTC = WG * 128, NT = NTC + (WS ? 128 : 0);
  static constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE = A_BYTES + B_BYTES;
  static constexpr int STAGE_C = BM * (BN + 8) * 4 + BM * 8;  // the epilogue's tile (fp32/int32) and row offsets
  static constexpr int GROUP_M = GROUP_M_;  // tile rows walked together (gett.cuh einc_tile_origin)
};

// One tile's global -> shared copies by NL loader threads (index lt): the rows (or, for an
// N-major B, the 8-column runs) each thread copies from are looked up once per tile.
template <class Cfg, int NL, int E, bool TAB_M, bool TAB_N, bool TAB_K, bool B_KMAJ> struct EincWgmmaLoader {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, KE = 128 / E, VE = 16 / E;
  static constexpr int PA = BM * 8 / NL, PB = BN * 8 / NL;  // pieces per thread per slice
  const unsigned char* a_row[PA];
  const unsigned char* b_row[PB];
  const unsigned char *a_base, *b_base;
  int lt;

  __device__ __forceinline__ EincWgmmaLoader(int lt_, const unsigned char* a_base_, const unsigned char* b_base_,
                                             long long m0, long long n0, const EincGettMeta& p)
      : a_base(a_base_), b_base(b_base_), lt(lt_) {
#pragma unroll
    for (int i = 0; i < PA; ++i) {
      const int r = (lt + i * NL) >> 3;
      a_row[i] = m0 + r < p.M ? a_base + einc_goff<TAB_M>(m0 + r, p.a_m, p.ta_m) * E : nullptr;
    }
#pragma unroll
    for (int i = 0; i < PB; ++i) {
      const int c = lt + i * NL;
      if constexpr (B_KMAJ) {
        const int r = c >> 3;
        b_row[i] = n0 + r < p.N ? b_base + einc_goff<TAB_N>(n0 + r, p.b_n, p.tb_n) * E : nullptr;
      } else {  // piece c: k-row c / (BN/8), n = (c % (BN/8)) * 8
        const int n = (c % (BN / 8)) * VE;
        b_row[i] = n0 + n < p.N ? b_base + einc_goff<TAB_N>(n0 + n, p.b_n, p.tb_n) * E : nullptr;
      }
    }
  }

  // slice kt into the stage at shared address sa (A) / sa + A_BYTES (B)
  __device__ __forceinline__ void issue(int kt, unsigned sa, const EincGettMeta& p) const {
    const unsigned sb = sa + Cfg::A_BYTES;
    const long long k0 = static_cast<long long>(kt) * KE;
#pragma unroll
    for (int i = 0; i < PA; ++i) {
      const int c = lt + i * NL, r = c >> 3, pc = c & 7;
      const bool ok = a_row[i] != nullptr && k0 + pc * VE < p.K;
      const unsigned char* src = ok ? a_row[i] + einc_goff<TAB_K>(k0 + pc * VE, p.a_k, p.ta_k) * E : a_base;
      einc_cp16(sa + einc_sw128(r, pc), src, ok);
    }
#pragma unroll
    for (int i = 0; i < PB; ++i) {
      const int c = lt + i * NL;
      if constexpr (B_KMAJ) {
        const int r = c >> 3, pc = c & 7;
        const bool ok = b_row[i] != nullptr && k0 + pc * VE < p.K;
        const unsigned char* src = ok ? b_row[i] + einc_goff<TAB_K>(k0 + pc * VE, p.b_k, p.tb_k) * E : b_base;
        einc_cp16(sb + einc_sw128(r, pc), src, ok);
      } else {
        const int k = c / (BN / 8), nc = c % (BN / 8);  // 16-byte piece nc of k-row k
        const bool ok = b_row[i] != nullptr && k0 + k < p.K;
        const unsigned char* src = ok ? b_row[i] + einc_goff<TAB_K>(k0 + k, p.b_k, p.tb_k) * E : b_base;
        einc_cp16(sb + einc_b_mn_off<BN>(k, nc), src, ok);
      }
    }
  }
};

// Value barrier: the compiler must treat x as computed here, so what depends on it is not
// hoisted out of the enclosing loop (the producer has no registers for 24 hoisted
// addresses and predicates: ptxas spilled them).
__device__ __forceinline__ long long einc_opaque(long long x) {
  asm volatile("" : "+l"(x));
  return x;
}
__device__ __forceinline__ int einc_opaque(int x) {
  asm volatile("" : "+r"(x));
  return x;
}

// The producer warpgroup's loader (128 threads, 24 pieces per slice each): nothing per
// piece is kept across slices. A piece's row follows from the thread's first row (rows
// 16 apart: strided groups by pointer bumps, tabled ones by a lookup per slice), its
// shared address from the thread's first piece (the swizzle repeats every 64 pieces of
// a K-major tile and every BN pieces of an N-major one, so piece c + NL lies NL*16 bytes
// on, or two bases alternate when NL is half the period). An N-major thread's pieces
// all lie in one 8-column run (NL % (BN/8) == 0), its k-rows NL/(BN/8) apart.
template <class Cfg, int E, bool TAB_M, bool TAB_N, bool TAB_K, bool B_KMAJ> struct EincWgmmaLeanLoader {
  static constexpr int NL = 128, BM = Cfg::BM, BN = Cfg::BN, KE = 128 / E, VE = 16 / E;
  static constexpr int PA = BM * 8 / NL, PB = BN * 8 / NL;
  static constexpr int PERIOD_B = B_KMAJ ? 64 : BN, RB = PERIOD_B > NL ? PERIOD_B / NL : 1;
  static constexpr int KSTEP = NL / (BN / 8);  // N-major: k-rows between a thread's pieces
  static_assert(NL % 64 == 0 && (PERIOD_B % NL == 0 || NL % PERIOD_B == 0) && NL % (BN / 8) == 0,
                "piece addresses repeat with the thread count");
  static_assert(RB <= 2 && PB % RB == 0, "at most two alternating B bases");
  const unsigned char *a0, *b0, *a_base, *b_base;
  long long m0, n0;
  int a_left, b_left;  // rows (A, K-major B) from this thread's first one inside the tile
  int soa, sob[RB];    // shared offsets of the thread's first pieces (relative to the stage)
  int r0, pc, kb;      // the thread's first row and 16-byte piece (K-major); N-major: first k-row

  __device__ __forceinline__ EincWgmmaLeanLoader(int lt, const unsigned char* a_base_,
                                                 const unsigned char* b_base_, long long m0_, long long n0_,
                                                 const EincGettMeta& p)
      : a_base(a_base_), b_base(b_base_), m0(m0_), n0(n0_) {
    r0 = lt >> 3;
    pc = lt & 7;
    const long long am = p.M - m0 - r0, bn = p.N - n0 - r0;
    a_left = am < BM ? static_cast<int>(am) : BM;  // may be <= 0
    b_left = bn < BN ? static_cast<int>(bn) : BN;
    a0 = TAB_M ? a_base : a_base + (m0 + r0) * p.a_m * E;
    soa = einc_sw128(r0, pc);
    if constexpr (B_KMAJ) {
      b0 = TAB_N ? b_base : b_base + (n0 + r0) * p.b_n * E;
#pragma unroll
      for (int r = 0; r < RB; ++r) sob[r] = Cfg::A_BYTES + einc_sw128((lt + r * NL) >> 3, pc);
      kb = 0;
    } else {
      const int nc = lt % (BN / 8), n = nc * VE;
      kb = lt / (BN / 8);
      b0 = n0 + n < p.N ? b_base + einc_goff<TAB_N>(n0 + n, p.b_n, p.tb_n) * E : nullptr;
#pragma unroll
      for (int r = 0; r < RB; ++r) sob[r] = Cfg::A_BYTES + einc_b_mn_off<BN>(kb + r * KSTEP, nc);
    }
  }

  __device__ __forceinline__ void issue(int kt, unsigned sa, const EincGettMeta& p) const {
    const long long k0 = static_cast<long long>(kt) * KE;
    const bool k_ok = k0 + pc * VE < p.K;  // K-major pieces: this thread's k run
    {
      const long long koff = k_ok ? einc_goff<TAB_K>(k0 + pc * VE, p.a_k, p.ta_k) * E : 0;
      const unsigned char* row = a0 + koff;
      const long long step = einc_opaque(static_cast<long long>(NL / 8) * (TAB_M ? 0 : p.a_m) * E);
      const int left = einc_opaque(a_left);
      const long long* tab = reinterpret_cast<const long long*>(einc_opaque(reinterpret_cast<long long>(p.ta_m)));
#pragma unroll
      for (int i = 0; i < PA; ++i) {
        const bool ok = k_ok && i * (NL / 8) < left;
        const unsigned char* src = row;
        if constexpr (TAB_M) src = a_base + (ok ? __ldg(tab + m0 + r0 + i * (NL / 8)) * E + koff : 0);
        einc_cp16(sa + soa + i * NL * 16, ok ? src : a_base, ok);
        row += step;
      }
    }
    if constexpr (B_KMAJ) {
      const long long koff = k_ok ? einc_goff<TAB_K>(k0 + pc * VE, p.b_k, p.tb_k) * E : 0;
      const unsigned char* row = b0 + koff;
      const long long step = einc_opaque(static_cast<long long>(NL / 8) * (TAB_N ? 0 : p.b_n) * E);
      const int left = einc_opaque(b_left);
      const long long* tab = reinterpret_cast<const long long*>(einc_opaque(reinterpret_cast<long long>(p.tb_n)));
#pragma unroll
      for (int i = 0; i < PB; ++i) {
        const bool ok = k_ok && i * (NL / 8) < left;
        const unsigned char* src = row;
        if constexpr (TAB_N) src = b_base + (ok ? __ldg(tab + n0 + r0 + i * (NL / 8)) * E + koff : 0);
        einc_cp16(sa + sob[i % RB] + (i / RB) * RB * NL * 16, ok ? src : b_base, ok);
        row += step;
      }
    } else {
      const long long kleft = b0 != nullptr ? p.K - k0 - kb : 0;  // this slice's k-rows from the first
      const unsigned char* row = b0 + (kleft > 0 && !TAB_K ? (k0 + kb) * p.b_k * E : 0);
      const long long step = einc_opaque(static_cast<long long>(KSTEP) * (TAB_K ? 0 : p.b_k) * E);
      const long long* tab = reinterpret_cast<const long long*>(einc_opaque(reinterpret_cast<long long>(p.tb_k)));
#pragma unroll
      for (int i = 0; i < PB; ++i) {
        const bool ok = i * KSTEP < kleft;
        const unsigned char* src = row;
        if constexpr (TAB_K) src = ok ? b0 + __ldg(tab + k0 + kb + i * KSTEP) * E : b_base;
        einc_cp16(sa + sob[i % RB] + (i / RB) * RB * NL * 16, ok ? src : b_base, ok);
        row += step;
      }
    }
  }
};

// One slice's BK/32 wgmma of warpgroup wg on the stage at shared address st.
// TMA: an N-major B stage holds BN/64 column strips of 64 k-rows (one box each), so its
// atoms run along k first (Mma::LBO_MN_T / SBO_MN_T) and a k16 step is two atoms, 2048 bytes.
template <class Cfg, class Mma, bool B_KMAJ, bool TMA = false>
__device__ __forceinline__ void einc_wgmma_slice(typename Mma::Acc* d, unsigned st, int wg) {
  constexpr int BN = Cfg::BN;
  const unsigned sa = st + wg * Cfg::MH * 64 * 128, sb = st + Cfg::A_BYTES;
  einc_wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {  // 4 x 32 bytes of k
    const unsigned long long db = B_KMAJ ? einc_gmma_desc(sb + ks * 32, 16, 1024)
                                  : TMA  ? einc_gmma_desc(sb + ks * 2048, Mma::LBO_MN_T, Mma::SBO_MN_T)
                                         : einc_gmma_desc(sb + ks * 2 * (BN / 64) * 1024, Mma::LBO_MN,
                                                          Mma::SBO_MN);
#pragma unroll
    for (int mh = 0; mh < Cfg::MH; ++mh)  // (strip mh's accumulators follow strip mh-1's)
      Mma::run(d + mh * Mma::NACC, einc_gmma_desc(sa + mh * 64 * 128 + ks * 32, 16, 1024), db);
  }
  einc_wgmma_commit();
}

// Epilogue through shared memory (the stages are free when it starts): the NTE threads
// holding accumulators (warpgroups 0..BM/64-1, thread index tid < NTE) put them in as
// fp32/int32 pairs (row pitch BN + 8 words: the 8-byte stores of a half-warp hit 32
// distinct banks), then walk rows with their column offsets looked up once, eight
// adjacent columns per thread (below). BAR (with NTE threads) is the barrier
// between the two halves: 0 = the whole block (NTE must then be every thread).
// Accumulator 4j+q sits at row 16*warp + g + 8*(q/2) of the warpgroup's 64, column
// 8j + 2t + q%2. OUT: the tile is staged already converted to C's type (half the bytes
// of a 16-bit C, so it fits beside the ring: einc_wgmma_gett_ws SEP), else as Acc in the
// stages.
template <class Cfg, class Mma, int NTE, int BAR, bool TAB_B, bool TAB_M, bool TAB_N, class TOut, class TC, class TA,
          bool OUT = false>
__device__ __forceinline__ void einc_wgmma_epilogue(TOut* __restrict__ C, const typename Mma::Acc* d,
                                                    unsigned char* stage0, int tid, long long bi, long long m0,
                                                    long long n0, const EincGettMeta& p) {
  using Acc = typename Mma::Acc;
  using TS = typename EincIf<OUT, TOut, Acc>::T;  // the staged element
  constexpr int BM = Cfg::BM, BN = Cfg::BN, PITCH = BN + 8;
  static_assert(OUT || Cfg::STAGE_C <= Cfg::S * Cfg::STAGE, "the staging tile and row offsets fit");
  TS* stile = reinterpret_cast<TS*>(stage0);
  const auto out = [](Acc x) { return EincStore<TOut>::f(cast<TC>(static_cast<TA>(x))); };
  {
    const int wg = tid >> 7, w = (tid >> 5) & 3, g = (tid & 31) >> 2, t = tid & 3;
#pragma unroll
    for (int mh = 0; mh < Cfg::MH; ++mh)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        TS* row = stile + ((wg * Cfg::MH + mh) * 64 + w * 16 + g + 8 * h) * PITCH + 2 * t;
        const Acc* dm = d + mh * Mma::NACC;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          EincVec<TS, 2> v;
          if constexpr (OUT) {
            v.v[0] = out(dm[4 * j + 2 * h]);
            v.v[1] = out(dm[4 * j + 2 * h + 1]);
          } else {
            v.v[0] = dm[4 * j + 2 * h];
            v.v[1] = dm[4 * j + 2 * h + 1];
          }
          *reinterpret_cast<EincVec<TS, 2>*>(row + 8 * j) = v;
        }
      }
  }
  // Row offsets of C for this tile, looked up once (a row's threads all need them).
  long long* rowoff = reinterpret_cast<long long*>(stile + BM * PITCH);
  for (int r = tid; r < BM; r += NTE)
    rowoff[r] = m0 + r < p.M ? einc_goff<TAB_B>(bi, p.c_b, p.tc_b) + einc_goff<TAB_M>(m0 + r, p.c_m, p.tc_m) : 0;
  einc_named_bar<BAR, NTE>();  // RAW: the whole tile and its row offsets are staged
  // Read-out: CG = BN/8 threads per row, each owning 8 adjacent columns (their offsets
  // looked up once per tile), walking rows RSTEP apart. Where C holds the 8 side by side
  // and the row's address is 16-byte aligned, they leave as 16-byte stores (one for 16-bit
  // outputs, two for 32-bit), else one element at a time. The two-column version before
  // spent ~28 instructions per 4-byte store (SASS of TCCG ccsd_t, K = 24: an output-bound
  // step whose ncu showed the issue slots, not DRAM, as the limit).
  constexpr int CPT = 8, CG = BN / CPT, RSTEP = NTE / CG;
  static_assert(NTE % CG == 0 && BN % CPT == 0, "whole rows per pass");
  constexpr int PIECES = static_cast<int>(sizeof(TOut)) * CPT / 16;  // 16-byte stores per run
  constexpr bool VEC = PIECES * 16 == static_cast<int>(sizeof(TOut)) * CPT;
  const int col = CPT * (tid % CG);
  const long long n = n0 + col;
  if (n < p.N) {
    long long c[CPT];
    bool run = n + CPT <= p.N;
#pragma unroll
    for (int e = 0; e < CPT; ++e) {
      c[e] = n + e < p.N ? einc_goff<TAB_N>(n + e, p.c_n, p.tc_n) : 0;
      run = run && c[e] == c[0] + e;
    }
    const long long rows = p.M - m0 < BM ? p.M - m0 : BM;
#pragma unroll 2
    for (int r = tid / CG; r < rows; r += RSTEP) {
      const long long ro = rowoff[r];
      EincVec<TOut, CPT> w;  // the run's 8 outputs in C's type
      if constexpr (OUT) {
        w = *reinterpret_cast<const EincVec<TOut, CPT>*>(stile + r * PITCH + col);
      } else {
        const TS* src = stile + r * PITCH + col;
        const EincVec<Acc, 4> lo = *reinterpret_cast<const EincVec<Acc, 4>*>(src);
        const EincVec<Acc, 4> hi = *reinterpret_cast<const EincVec<Acc, 4>*>(src + 4);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          w.v[e] = out(lo.v[e]);
          w.v[4 + e] = out(hi.v[e]);
        }
      }
      TOut* q = C + ro + c[0];
      if (VEC && run && (reinterpret_cast<unsigned long long>(q) & 15) == 0) {
#pragma unroll
        for (int h = 0; h < (VEC ? PIECES : 1); ++h)
          reinterpret_cast<EincVec<unsigned, 4>*>(q)[h] = reinterpret_cast<const EincVec<unsigned, 4>*>(&w)[h];
      } else {
#pragma unroll
        for (int e = 0; e < CPT; ++e)
          if (n + e < p.N) C[ro + c[e]] = w.v[e];
      }
    }
  }
}

// C's boxes from the staging at shared address sst by TMA (one thread): BN/64 boxes of 64
// columns, BOX bytes apart, at rows from r0 (the map clips ragged edges); committed as one bulk
// group. SPLIT: column c is (c % nin, c / nin) of C's (n_in, m, n_out[, batch]) map.
template <int RANK, int BN, int BOX, bool SPLIT>
__device__ __forceinline__ void einc_c_box_stores(const EincTmap* cmap, int r0, long long bi, long long n0,
                                                  long long nin, unsigned sst) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(cmap);
  const int b = static_cast<int>(bi);
#pragma unroll
  for (int j = 0; j < BN / 64; ++j) {
    const int c0 = static_cast<int>(n0) + 64 * j;
    if constexpr (SPLIT) {
      const int q = c0 / static_cast<int>(nin), ci = c0 - q * static_cast<int>(nin);
      if constexpr (RANK == 3)
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(m),
                     "r"(ci), "r"(r0), "r"(q), "r"(sst + j * BOX)
                     : "memory");
      else
        asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(m),
                     "r"(ci), "r"(r0), "r"(q), "r"(b), "r"(sst + j * BOX)
                     : "memory");
    } else if constexpr (RANK == 2)
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(m),
                   "r"(c0), "r"(r0), "r"(sst + j * BOX)
                   : "memory");
    else
      asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(m),
                   "r"(c0), "r"(r0), "r"(b), "r"(sst + j * BOX)
                   : "memory");
  }
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// TMA_C epilogue of the C-apart tiles (16-bit C, its groups one strided mode each, N unit-
// stride): the consumers stage the tile as BN/64 boxes of BM 128-byte rows in the 128-byte
// swizzle (16-byte chunk c of row r at c ^ (r % 8): a warp's fragment writes, 8 rows x 4
// lanes, hit 32 banks), and one thread stores each box with cp.async.bulk.tensor, which
// clips the ragged edges. The store reads the staging asynchronously: that thread waits for
// it (wait_group.read) before the next tile's staging, and for completion before exit.
//
// SPLIT: C's N is two modes (lki,jl->kji: kernel N = k i, C unit-stride along i), its map
// (n_in, m, n_out[, batch]) with n_in (p.c_n, the inner extent) a multiple of 64, so each
// 64-column box lies within one n_out; column c is (c % n_in, c / n_in). RANK: C's map's.
template <class Cfg, class Mma, int NTE, int RANK, class TOut, class TC, class TA, bool SPLIT = false>
__device__ __forceinline__ void einc_wgmma_epilogue_tma(const typename Mma::Acc* d, unsigned char* stage,
                                                        unsigned sst, int tid, long long bi, long long m0,
                                                        long long n0, const EincTmap* cmap, long long nin = 0) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BOX = BM * 128;
  static_assert(sizeof(TOut) == 2 && BN % 64 == 0, "64 16-bit columns per 128-byte box row");
  using Acc = typename Mma::Acc;
  const auto out = [](Acc x) { return EincStore<TOut>::f(cast<TC>(static_cast<TA>(x))); };
  if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
  einc_named_bar<1, NTE>();  // WAR: the previous tile's stores have read the staging
  {
    const int wg = tid >> 7, w = (tid >> 5) & 3, g = (tid & 31) >> 2, t = tid & 3;
#pragma unroll
    for (int mh = 0; mh < Cfg::MH; ++mh)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = (wg * Cfg::MH + mh) * 64 + w * 16 + g + 8 * h;
        unsigned char* row = stage + r * 128 + 4 * t;
        const Acc* dm = d + mh * Mma::NACC;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {  // columns 8j.. : box j / 8, chunk j % 8
          EincVec<TOut, 2> v;
          v.v[0] = out(dm[4 * j + 2 * h]);
          v.v[1] = out(dm[4 * j + 2 * h + 1]);
          *reinterpret_cast<EincVec<TOut, 2>*>(row + (j >> 3) * BOX + (((j & 7) ^ (r & 7)) << 4)) = v;
        }
      }
  }
  einc_fence_async_smem();   // the generic writes, before the async proxy reads them
  einc_named_bar<1, NTE>();  // RAW: the whole tile is staged
  if (tid == 0) einc_c_box_stores<RANK, BN, BOX, SPLIT>(cmap, static_cast<int>(m0), bi, n0, nin, sst);
}

// The same, one warpgroup at a time through a staging of 64 rows (CW: a fourth ring stage fits
// where the whole tile's staging left room for three). Warpgroup wg stages its rows once
// turn[wg] has completed its n-th phase (n: the block's tiles so far): the previous
// warpgroup's store has read the staging (turn[0]'s first phase is pre-armed; its later ones
// come from the last warpgroup of the tile before), and arrives on staged[wg]. CW 1: the
// warpgroup's leader waits for staged[wg], stores its 64-row boxes, waits for their reads and
// hands the staging on, its warpgroup's next wgmma waiting with it; CW 2: the warpgroup goes
// back to the main loop at once, and the storer (a producer-warpgroup thread,
// einc_wgmma_c_storer) waits, stores, waits for the reads and hands on. Either
// way the warpgroups leave their epilogues one after another, so one's products overlap the
// others' stores.
template <class Cfg, class Mma, int RANK, class TOut, class TC, class TA, bool SPLIT, int CW>
__device__ __forceinline__ void einc_wgmma_epilogue_tma_wg(const typename Mma::Acc* d, unsigned char* stage,
                                                           unsigned sst, int tid, long long bi, long long m0,
                                                           long long n0, const EincTmap* cmap, long long nin,
                                                           unsigned turn0, unsigned staged0, unsigned n) {
  constexpr int BN = Cfg::BN, BOX = 64 * 128;
  static_assert(sizeof(TOut) == 2 && BN % 64 == 0 && Cfg::MH == 1, "64 16-bit columns per box row, one strip a warpgroup");
  using Acc = typename Mma::Acc;
  const auto out = [](Acc x) { return EincStore<TOut>::f(cast<TC>(static_cast<TA>(x))); };
  const int wg = tid >> 7, w = (tid >> 5) & 3, g = (tid & 31) >> 2, t = tid & 3;
  einc_mbar_wait(turn0 + 8 * wg, n & 1);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = w * 16 + g + 8 * h;
    unsigned char* row = stage + r * 128 + 4 * t;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      EincVec<TOut, 2> v;
      v.v[0] = out(d[4 * j + 2 * h]);
      v.v[1] = out(d[4 * j + 2 * h + 1]);
      *reinterpret_cast<EincVec<TOut, 2>*>(row + (j >> 3) * BOX + (((j & 7) ^ (r & 7)) << 4)) = v;
    }
  }
  einc_fence_async_smem();  // the generic writes, before the async proxy reads them
  einc_mbar_arrive(staged0 + 8 * wg);  // (release: the storer's wait acquires every row)
  if constexpr (CW == 1) {
    // the leader is the storer (an mbarrier, not a named one: compute-sanitizer's racecheck
    // follows a release/acquire chain through mbarriers, and flagged the bar.sync this was)
    if ((tid & 127) == 0) {
      einc_mbar_wait(staged0 + 8 * wg, n & 1);
      einc_c_box_stores<RANK, BN, BOX, SPLIT>(cmap, static_cast<int>(m0) + 64 * wg, bi, n0, nin, sst);
      asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
      einc_mbar_arrive(turn0 + 8 * ((wg + 1) % Cfg::WG));  // the staging is the next warpgroup's
    }
  }
}

// CW 2's storer, for the block's n-th tile: each warpgroup's 64 rows in turn, once staged.
template <class Cfg, int RANK, bool SPLIT>
__device__ __forceinline__ void einc_wgmma_c_storer(unsigned sst, long long bi, long long m0, long long n0,
                                                    const EincTmap* cmap, long long nin, unsigned turn0,
                                                    unsigned staged0, unsigned n) {
#pragma unroll 1
  for (int wg = 0; wg < Cfg::WG; ++wg) {
    einc_mbar_wait(staged0 + 8 * wg, n & 1);
    einc_c_box_stores<RANK, Cfg::BN, 64 * 128, SPLIT>(cmap, static_cast<int>(m0) + 64 * wg, bi, n0, nin, sst);
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    einc_mbar_arrive(turn0 + 8 * ((wg + 1) % Cfg::WG));
  }
}

template <class Cfg, class Mma, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool B_KMAJ, class TOut,
          class TC, class TA>
__device__ __forceinline__ void einc_wgmma_gett(void* __restrict__ out, const void* __restrict__ a_ptr,
                                                const void* __restrict__ b_ptr, const EincGettMeta& p) {
  constexpr int NT = Cfg::NT, S = Cfg::S, E = Mma::E, KE = 128 / E;
  static_assert(S >= 3, "one stage computing, one retiring, one loading");
  static_assert(!Cfg::WS, "the warp-specialised tile runs einc_wgmma_gett_ws");
  using Acc = typename Mma::Acc;
  using Loader = EincWgmmaLoader<Cfg, NT, E, TAB_M, TAB_N, TAB_K, B_KMAJ>;

  extern __shared__ __align__(1024) unsigned char einc_wgmma_smem_raw[];
  // 1024-byte aligned base (the swizzle pattern repeats every 1024 bytes)
  const unsigned raw0 = static_cast<unsigned>(__cvta_generic_to_shared(einc_wgmma_smem_raw));
  const unsigned smem0 = (raw0 + 1023u) & ~1023u;
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x, wg = tid >> 7;

  const long long per_batch = p.tiles_m * p.tiles_n;
  const long long tiles = per_batch * p.batch;
  const int nk = static_cast<int>((p.K + KE - 1) / KE);

  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    long long bi, m0, n0;
    einc_tile_origin<Cfg::GROUP_M>(tile, p, Cfg::BM, Cfg::BN, bi, m0, n0);
    const Loader ld(tid, static_cast<const unsigned char*>(a_ptr) + einc_goff<TAB_B>(bi, p.a_b, p.ta_b) * E,
                    static_cast<const unsigned char*>(b_ptr) + einc_goff<TAB_B>(bi, p.b_b, p.tb_b) * E, m0, n0, p);

    Acc d[Cfg::MH * Mma::NACC];
#pragma unroll
    for (int j = 0; j < Cfg::MH * Mma::NACC; ++j) d[j] = Acc(0);

#pragma unroll
    for (int s = 0; s < S - 2; ++s) {
      if (s < nk) ld.issue(s, smem0 + s * Cfg::STAGE, p);
      einc_cp_commit();
    }
    for (int kt = 0; kt < nk; ++kt) {
      const int stage = kt % S;
      einc_cp_wait<S - 3>();
      einc_fence_async_smem();
      __syncthreads();
      if (kt + S - 2 < nk) ld.issue(kt + S - 2, smem0 + ((kt + S - 2) % S) * Cfg::STAGE, p);
      einc_cp_commit();
      einc_wgmma_slice<Cfg, Mma, B_KMAJ>(d, smem0 + stage * Cfg::STAGE, wg);
      einc_wgmma_wait<1>();
    }
    einc_wgmma_wait<0>();
    einc_cp_wait<0>();
    __syncthreads();  // WAR: every warpgroup is done with the stages before they hold C
    einc_wgmma_epilogue<Cfg, Mma, NT, 0, TAB_B, TAB_M, TAB_N, TOut, TC, TA>(
        C, d, einc_wgmma_smem_raw + (smem0 - raw0), tid, bi, m0, n0, p);
    __syncthreads();  // WAR: the next tile's prologue refills the stages
  }
}

// Stream-K tail (SK, the non-SEP warp-specialised tiles with a persistent grid of G blocks):
// the first `dp` tiles (a whole number of waves) are walked data-parallel -- tile blockIdx.x
// first, then (SK) each next one taken from a counter in the scratch as the block frees up, as
// the hardware dispatches a one-block-per-tile grid (the static round-robin first built, tile
// blockIdx.x + i*G, leaves every block waiting for the slowest SM); the last partial wave's
// tiles (tiles % G of them) become one range of (tile, k slice)
// iterations cut evenly across the G blocks, so every block ends at the same time instead of
// part of the GPU idling through a last half-wave. A block's range holds at most one piece
// that ends a tile and one that starts one (whole tiles between them need nothing); the
// pieces of a split tile meet in a scratch the runtime zeroes: per tail tile one arrival
// count, then two slots per block (its range's first piece, and its last) of BM x BN
// accumulators. Each piece stores its partial and counts itself in; the last to arrive sums
// the pieces in k order (its own read back too, so the sum does not depend on timing) and
// stores C. Nobody waits on another block, so no schedule can deadlock.
struct EincWgmmaUnits {
  // (the tail's arithmetic is 32-bit: the emitter keeps grid^2 x slices below 2^32, and a
  // 64-bit division would be a call whose stack spills the consumers' accumulators)
  long long dp, tile;             // data-parallel tiles; the current unit's tile
  unsigned iters, first, pos, end;  // the tail's iterations; this block's range of them
  int nk, kb, ke;                 // the current unit's k slices [kb, ke)
  unsigned n = 0;                 // units walked so far
  unsigned G, B0;                 // walkers (blocks, or clusters) and this one's index
  bool live;
  __device__ __forceinline__ EincWgmmaUnits(long long tiles, int nk_, bool sk, int cl = 1)
      : nk(nk_), G(gridDim.x / cl), B0(blockIdx.x / cl) {
    const unsigned tail = sk && nk_ > 0 ? static_cast<unsigned>(tiles % G) : 0u;
    dp = tiles - tail;
    iters = tail * static_cast<unsigned>(nk_);
    first = start_of(B0);
    end = start_of(B0 + 1);
    pos = first;
    tile = B0;
    kb = 0;
    ke = nk;
    live = true;
    if (tile >= dp) tail_unit();
  }
  __device__ __forceinline__ void tail_unit() {
    live = pos < end;
    if (!live) return;
    const unsigned t = pos / static_cast<unsigned>(nk);
    kb = static_cast<int>(pos - t * static_cast<unsigned>(nk));
    ke = static_cast<int>(end - pos) < nk - kb ? kb + static_cast<int>(end - pos) : nk;
    tile = dp + t;
  }
  // fetched: the next data-parallel tile taken from the counter (SK), or < 0 (every G-th)
  __device__ __forceinline__ void next(long long fetched = -1) {
    ++n;
    if (tile < dp) {
      tile = fetched >= 0 ? fetched : tile + G;
      if (tile < dp) return;
      tail_unit();
      return;
    }
    pos += static_cast<unsigned>(ke - kb);
    tail_unit();
  }
  __device__ __forceinline__ bool whole() const { return kb == 0 && ke == nk; }
  // the tail range's first iteration of block g, and the block holding iteration i
  __device__ __forceinline__ unsigned start_of(unsigned g) const { return iters * g / G; }
  __device__ __forceinline__ unsigned block_of(unsigned i) const { return ((i + 1) * G + iters - 1) / iters - 1; }
};
// the arrival counts of the tail's tiles, then the data-parallel tile counter (count[tail])
__host__ __device__ __forceinline__ long long einc_wgmma_sk_counts_bytes(long long tail) {
  return ((tail + 1) * 4 + 255) / 256 * 256;
}

// The split tile's pieces meet (SK): true in the block that stores C, with the sum in d.
// Only the NTC consumer threads take part (named barrier 1).
template <class Cfg, class Mma>
__device__ __forceinline__ bool einc_wgmma_sk_combine(typename Mma::Acc* d, unsigned char* scratch,
                                                      const EincWgmmaUnits& u, int tid) {
  using Acc = typename Mma::Acc;
  constexpr int W = Cfg::MH * Mma::NACC, NTC = Cfg::NTC, SLOT = W * NTC;
  __shared__ unsigned einc_sk_arrived;
  const unsigned t = static_cast<unsigned>(u.tile - u.dp), nk = static_cast<unsigned>(u.nk);
  unsigned* count = reinterpret_cast<unsigned*>(scratch);
  Acc* slots = reinterpret_cast<Acc*>(scratch + einc_wgmma_sk_counts_bytes(u.iters / nk)) + tid;
  // slot of block g's piece starting at iteration s: 2g for the range's first piece, else 2g+1
  const auto slot = [&](unsigned g, unsigned s) { return static_cast<long long>(2 * g + (s == u.start_of(g) ? 0 : 1)); };
  Acc* mine = slots + slot(blockIdx.x, u.pos) * SLOT;
#pragma unroll
  for (int j = 0; j < W; ++j) __stcg(mine + j * NTC, d[j]);
  __threadfence();
  einc_named_bar<1, NTC>();
  const unsigned g0 = u.block_of(t * nk), g1 = u.block_of((t + 1) * nk - 1);
  if (tid == 0) einc_sk_arrived = atomicAdd(count + t, 1u);
  einc_named_bar<1, NTC>();
  if (einc_sk_arrived != g1 - g0) return false;
  __threadfence();
  // CH accumulators at a time: the compiler barrier between chunks keeps it from hoisting all
  // W loads ahead of the adds (W more registers than the consumers have: it spilled)
  constexpr int CH = 16;
  static_assert(W % CH == 0, "whole chunks");
#pragma unroll
  for (int c = 0; c < W; c += CH) {
    for (unsigned g = g0; g <= g1; ++g) {
      const unsigned s = u.start_of(g), piece = s > t * nk ? s : t * nk;
      const Acc* src = slots + slot(g, piece) * SLOT;
#pragma unroll
      for (int j = c; j < c + CH; ++j) {
        const Acc v = __ldcg(src + j * NTC);
        d[j] = g == g0 ? v : d[j] + v;
      }
    }
    asm volatile("" ::: "memory");
  }
  return true;
}

// CL2: pair ``pair`` of adjacent tiles walked in GROUP_M order as einc_tile_origin walks
// tiles -- VERT: two tile rows (2 BM, BN; B shared), else two tile columns (BM, 2 BN; A
// shared); the cluster's CTA ``rank`` takes the first or second tile (32-bit: the emitter
// keeps the pair count below 2^31).
template <int GROUP_M, bool VERT>
__device__ __forceinline__ void einc_pair_origin(long long pair, const EincGettMeta& p, int bm, int bn, unsigned rank,
                                                 long long& bi, long long& m0, long long& n0) {
  const unsigned tm = static_cast<unsigned>(VERT ? (p.tiles_m + 1) / 2 : p.tiles_m);
  const unsigned tn = static_cast<unsigned>(VERT ? p.tiles_n : (p.tiles_n + 1) / 2);
  const unsigned pb = tm * tn, t = static_cast<unsigned>(pair);
  const unsigned b = t / pb, r = t - b * pb, span = GROUP_M * tn, group = r / span;
  const unsigned first_m = group * GROUP_M, rows = tm - first_m < GROUP_M ? tm - first_m : GROUP_M;
  const unsigned in_group = r - group * span, q = in_group / rows, mi = first_m + (in_group - q * rows);
  bi = b;
  m0 = static_cast<long long>(VERT ? mi * 2 + rank : mi) * bm;
  n0 = static_cast<long long>(VERT ? q : q * 2 + rank) * bn;
}

// TMA_RANK 0: the producer warpgroup copies 16-byte pieces (EincWgmmaLeanLoader); 2 or 3:
// its first thread copies boxes through the tensor maps ``tm`` (rank 3: a batch dimension),
// the emitter's choice where every group is one strided mode (emit_wgmma.tma_maps).
template <class Cfg, class Mma, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool B_KMAJ, class TOut,
          class TC, class TA, int TMA_RANK = 0, int TMA_OPT = 0, bool SEP = false, bool TMA_C = false,
          class TM = EincTmaps, bool C_SPLIT = false, bool SK = false, int CL2 = 0, int CW = 0>
__device__ __forceinline__ void einc_wgmma_gett_ws(void* __restrict__ out, const void* __restrict__ a_ptr,
                                                   const void* __restrict__ b_ptr, const EincGettMeta& p,
                                                   const TM* tm = nullptr, unsigned char* scratch = nullptr) {
  constexpr int NTC = Cfg::NTC, S = Cfg::S, E = Mma::E, KE = 128 / E;
  constexpr bool TMA = TMA_RANK > 0;
  // TMA_OPT (A/B measurements): bit 0 keeps the consumers' proxy fence after each full wait
  // (TMA writes through the async proxy, as wgmma reads: not needed); bit 1 prefetches the
  // tensor maps at the start
  constexpr bool CONSUMER_FENCE = !TMA || (TMA_OPT & 1);
  // (with TMA the TAB_ flags only concern C's offsets in the epilogue: the emitter gives maps
  // only where each group is one strided mode of the operand reading it)
  static_assert(Cfg::WS, "one producer warpgroup beside the consumers");
  static_assert(S >= 2, "one stage computing, one loading");
  static_assert(!(SK && SEP), "the stream-K tail is the ring-staged tiles' (no resident operand)");
  // CL2: clusters of two CTAs computing adjacent tiles -- 1: vertical pairs, each CTA copying
  // its own A and half of the shared B slice into both (multicast); 3: horizontal pairs, the
  // same with A shared; 2 (experiment): vertical pairs, each CTA copying all of B itself. With
  // multicast a stage is free only when both CTAs' consumers have released it (empty counts
  // both, arrivals to the peer by mapa)
  static_assert(!CL2 || (TMA_RANK == 2 && !SK), "clusters: 2-D TMA maps, no stream-K");
  constexpr bool MC = CL2 == 1 || CL2 == 3, VERT = CL2 != 3;
  __shared__ long long einc_sk_next[2];  // SK: the next data-parallel tile, by unit parity
  using Acc = typename Mma::Acc;
  using Loader = EincWgmmaLeanLoader<Cfg, E, TAB_M, TAB_N, TAB_K, B_KMAJ>;

  extern __shared__ __align__(1024) unsigned char einc_wgmma_smem_raw[];
  const unsigned raw0 = static_cast<unsigned>(__cvta_generic_to_shared(einc_wgmma_smem_raw));
  const unsigned smem0 = (raw0 + 1023u) & ~1023u;
  // full[s] and empty[s] after the stages (the epilogue's staging stays below them)
  const unsigned full0 = smem0 + S * Cfg::STAGE, empty0 = full0 + 8 * S;
  // SEP: C is staged (as TOut) after the barriers, apart from the ring, so the producer never
  // waits for an epilogue: it runs on into the next tile's slices (persistent blocks)
  // (TMA_C: 1024-byte aligned, the boxes' 128-byte swizzle repeats every 1024 bytes)
  // CW: the per-warpgroup staging's turn barriers, then its staged barriers, one per
  // consumer warpgroup each, after the empties
  const unsigned turn0 = empty0 + 8 * S, staged0 = turn0 + 8 * Cfg::WG;
  constexpr unsigned SEP_AT = SEP ? (TMA_C ? (S * Cfg::STAGE + 16 * S + (CW > 0 ? 16 * Cfg::WG : 0) + 1023) & ~1023
                                           : (S * Cfg::STAGE + 16 * S + 127) & ~127) : 0;
  static_assert(!TMA_C || (SEP && TMA_RANK > 0), "the TMA store is the C-apart epilogue's, beside TMA loads");
  static_assert(CW == 0 || (TMA_C && !SK), "the per-warpgroup staging is the TMA store's");
  unsigned char* const stage_c = einc_wgmma_smem_raw + (smem0 - raw0) + SEP_AT;
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x, wg = tid >> 7;

  const long long per_batch = p.tiles_m * p.tiles_n;
  const long long tiles = per_batch * p.batch;
  const int nk = static_cast<int>((p.K + KE - 1) / KE);
  const long long units = !CL2 ? tiles : VERT ? p.batch * ((p.tiles_m + 1) / 2) * p.tiles_n
                                           : p.batch * p.tiles_m * ((p.tiles_n + 1) / 2);
  const unsigned rank = CL2 ? einc_cluster_rank() : 0u, peer = rank ^ 1u;

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      einc_mbar_init(full0 + 8 * s, TMA ? 1 : 128);  // every producer thread's copies (TMA: one arming)
      einc_mbar_init(empty0 + 8 * s, (MC ? 2 : 1) * NTC / 32);  // one arrival per consumer warp (of both CTAs)
    }
    if constexpr (CW > 0) {
      for (int w = 0; w < Cfg::WG; ++w) {
        einc_mbar_init(turn0 + 8 * w, 1);
        einc_mbar_init(staged0 + 8 * w, 128);  // every thread of the warpgroup
      }
      einc_mbar_arrive(turn0);  // the staging starts free: warpgroup 0's first turn
    }
    if constexpr (TMA) asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them
  if constexpr (CL2) einc_cluster_sync();  // (and before the peer arrives on them or copies in)

  unsigned it = 0;  // slices through the ring so far (both roles count the same slices)
  // A resident operand (TMA): with one tile row (column) and no batch, every tile reads the
  // same A (B) slices, and with S % nk == 0 each stage always holds the same k slice, so the
  // slice stays where the first round put it (SEP: the epilogue never stages C in the ring);
  // later rounds copy only the other operand (ao2mo ap,srqp: N = 96, K = 96 in two slices)
  const bool keep = !CL2 && SEP && TMA && p.batch == 1 && nk > 0 && S % nk == 0;
  if (wg == Cfg::WG) {  // the producer warpgroup
    einc_setmaxnreg_dec<Cfg::REG_P>();
    for (EincWgmmaUnits u(units, nk, SK, CL2 ? 2 : 1); u.live; u.next(SK ? einc_sk_next[(u.n + 1) & 1] : -1)) {
      const long long tile = u.tile;
      long long bi, m0, n0;
      if constexpr (CL2)
        einc_pair_origin<Cfg::GROUP_M, VERT>(tile, p, Cfg::BM, Cfg::BN, rank, bi, m0, n0);
      else
        einc_tile_origin<Cfg::GROUP_M>(tile, p, Cfg::BM, Cfg::BN, bi, m0, n0);
      if constexpr (TMA) {
        if (tid == NTC) {
          if ((TMA_OPT & 2) && tile == blockIdx.x) {
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&tm->a)) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&tm->b)) : "memory");
          }
          const int m = static_cast<int>(m0), n = static_cast<int>(n0), b = static_cast<int>(bi);
          for (int kt = u.kb; kt < u.ke; ++kt, ++it) {
            const unsigned stage = it % S, round = it / S, st = smem0 + stage * Cfg::STAGE;
            const unsigned full = full0 + 8 * stage;
            const int k = kt * KE;
            const bool again = keep && round > 0;
            const bool copy_a = !(again && p.tiles_m == 1), copy_b = !(again && p.tiles_n == 1);
            einc_mbar_wait(empty0 + 8 * stage, (round & 1) ^ 1);
            einc_mbar_expect_tx(full, (copy_a ? Cfg::A_BYTES : 0) + (copy_b ? Cfg::B_BYTES : 0));
            if (!copy_a) {
            } else if constexpr (MC && !VERT) {  // rows [BM/2 rank, +BM/2) of A's box
              einc_tma_load_mc2(st + rank * (Cfg::BM / 2) * 128, &tm->a, k, m + rank * (Cfg::BM / 2), full);
            } else {
              einc_tma_load<TMA_RANK>(st, &tm->a, k, m, b, full);
            }
            if (!copy_b) {
            } else if constexpr (MC && VERT && B_KMAJ) {  // rows [BN/2 rank, +BN/2) of B's box
              einc_tma_load_mc2(st + Cfg::A_BYTES + rank * (Cfg::BN / 2) * 128, &tm->b, k, n + rank * (Cfg::BN / 2), full);
            } else if constexpr (MC && VERT) {  // k-rows [KE/2 rank, +KE/2) of each 64-column strip
#pragma unroll
              for (int j = 0; j < Cfg::BN / 64; ++j)
                einc_tma_load_mc2(st + Cfg::A_BYTES + j * KE * 128 + rank * (KE / 2) * 128, &tm->b, n + 64 * j,
                                  k + rank * (KE / 2), full);
            } else if constexpr (B_KMAJ) {
              einc_tma_load<TMA_RANK>(st + Cfg::A_BYTES, &tm->b, k, n, b, full);
            } else {
#pragma unroll
              for (int j = 0; j < Cfg::BN / 64; ++j)  // 64-column strips of KE k-rows
                einc_tma_load<TMA_RANK>(st + Cfg::A_BYTES + j * KE * 128, &tm->b, n + 64 * j, k, b, full);
            }
          }
        } else {
          it += u.ke - u.kb;
          if constexpr (CW == 2)
            if (tid == NTC + 32)  // the storer: the first thread of the producer's second warp
              einc_wgmma_c_storer<Cfg, TMA_RANK + (C_SPLIT ? 1 : 0), C_SPLIT>(smem0 + SEP_AT, bi, m0, n0, &tm->c, p.c_n,
                                                                            turn0, staged0, u.n);
        }
      } else {
        const Loader ld(tid - NTC,
                        static_cast<const unsigned char*>(a_ptr) + einc_goff<TAB_B>(bi, p.a_b, p.ta_b) * E,
                        static_cast<const unsigned char*>(b_ptr) + einc_goff<TAB_B>(bi, p.b_b, p.tb_b) * E, m0, n0,
                        p);
        for (int kt = u.kb; kt < u.ke; ++kt, ++it) {
          const unsigned stage = it % S, round = it / S;
          einc_mbar_wait(empty0 + 8 * stage, (round & 1) ^ 1);  // the consumers released round-1
          ld.issue(kt, smem0 + stage * Cfg::STAGE, p);
          einc_cp_mbar_arrive(full0 + 8 * stage);
        }
        // The consumers' full waits already saw every copy land; waiting here too lets the
        // block barrier order them before the epilogue's staging for racecheck as well.
        if constexpr (!SEP) asm volatile("cp.async.wait_all;\n" ::: "memory");  // (never committed as groups)
      }
      if constexpr (SK) {
        // the block's next data-parallel tile, for both roles after this unit's barriers (two
        // slots by unit parity: slot n+1 is rewritten only in unit n+2, after every thread
        // has passed unit n+1's barriers and so has read it)
        if (tid == NTC && u.tile < u.dp)
          einc_sk_next[(u.n + 1) & 1] = gridDim.x + atomicAdd(reinterpret_cast<unsigned*>(scratch) + u.iters / (nk > 0 ? nk : 1), 1u);
      }
      if constexpr (!SEP) {
        einc_named_bar<2, Cfg::NT>();  // the stages are free: the epilogue may stage C
        einc_named_bar<2, Cfg::NT>();  // WAR: the epilogue has read the stages
      }
    }
    if constexpr (SEP && !TMA) asm volatile("cp.async.wait_all;\n" ::: "memory");
    // CW 2: the storer's last stores, done before the block (and its shared memory) goes away
    if constexpr (CW == 2) if (tid == NTC + 32) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  } else {  // consumer warpgroups 0..WG-1
    einc_setmaxnreg_inc<Cfg::REG_C>();
    const bool signals = (tid & 31) == 0;
    for (EincWgmmaUnits u(units, nk, SK, CL2 ? 2 : 1); u.live; u.next(SK ? einc_sk_next[(u.n + 1) & 1] : -1)) {
      long long bi, m0, n0;
      if constexpr (CL2)
        einc_pair_origin<Cfg::GROUP_M, VERT>(u.tile, p, Cfg::BM, Cfg::BN, rank, bi, m0, n0);
      else
        einc_tile_origin<Cfg::GROUP_M>(u.tile, p, Cfg::BM, Cfg::BN, bi, m0, n0);
      Acc d[Cfg::MH * Mma::NACC];
#pragma unroll
      for (int j = 0; j < Cfg::MH * Mma::NACC; ++j) d[j] = Acc(0);
      // (counted from 0: a loop from u.kb made ptxas serialise every wgmma, C7515)
      const int slices = u.ke - u.kb;
      for (int i = 0; i < slices; ++i, ++it) {
        const unsigned stage = it % S, round = it / S;
        einc_mbar_wait(full0 + 8 * stage, round & 1);
        if constexpr (CONSUMER_FENCE) einc_fence_async_smem();
        einc_wgmma_slice<Cfg, Mma, B_KMAJ, TMA>(d, smem0 + stage * Cfg::STAGE, wg);
        einc_wgmma_wait<1>();  // wgmma(slice it-1) has retired: its stage is free
        if (i > 0 && signals) {
          einc_mbar_arrive(empty0 + 8 * ((it - 1) % S));
          if constexpr (MC) einc_mbar_arrive_peer(empty0 + 8 * ((it - 1) % S), peer);
        }
      }
      einc_wgmma_wait<0>();
      if (slices > 0 && signals) {
        einc_mbar_arrive(empty0 + 8 * ((it - 1) % S));
        if constexpr (MC) einc_mbar_arrive_peer(empty0 + 8 * ((it - 1) % S), peer);
      }
      // SK: a piece of a split tile stores C only where its pieces meet (block-uniform)
      [[maybe_unused]] bool store = true;
      if constexpr (SK) store = u.whole() || einc_wgmma_sk_combine<Cfg, Mma>(d, scratch, u, tid);
      if constexpr (CW > 0) {
        einc_wgmma_epilogue_tma_wg<Cfg, Mma, TMA_RANK + (C_SPLIT ? 1 : 0), TOut, TC, TA, C_SPLIT, CW>(
            d, stage_c, smem0 + SEP_AT, tid, bi, m0, n0, &tm->c, p.c_n, turn0, staged0, u.n);
      } else if constexpr (TMA_C) {
        einc_wgmma_epilogue_tma<Cfg, Mma, NTC, TMA_RANK + (C_SPLIT ? 1 : 0), TOut, TC, TA, C_SPLIT>(
            d, stage_c, smem0 + SEP_AT, tid, bi, m0, n0, &tm->c, p.c_n);
      } else if constexpr (SEP) {
        einc_wgmma_epilogue<Cfg, Mma, NTC, 1, TAB_B, TAB_M, TAB_N, TOut, TC, TA, true>(C, d, stage_c, tid, bi, m0,
                                                                                        n0, p);
        einc_named_bar<1, NTC>();  // WAR: the read-out is done before the next tile is staged
      } else {
        einc_named_bar<2, Cfg::NT>();  // WAR: every consumer's wgmma is done with the stages
        if (store)
          einc_wgmma_epilogue<Cfg, Mma, NTC, 1, TAB_B, TAB_M, TAB_N, TOut, TC, TA>(C, d, stage_c, tid, bi, m0, n0, p);
        // TMA writes through the async proxy: order the epilogue's generic accesses first
        if constexpr (TMA) einc_fence_async_smem();
        einc_named_bar<2, Cfg::NT>();  // WAR: the producer's next tile refills the stages
      }
    }
    // the last tile's stores: done before the block (and its shared memory) goes away
    if constexpr (TMA_C) if (tid == 0 || (CW == 1 && (tid & 127) == 0)) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  }
  // CL2: neither CTA leaves while the peer may still arrive on its barriers or copy into it
  if constexpr (CL2) einc_cluster_sync();
}
