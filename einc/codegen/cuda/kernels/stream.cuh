// einc CUDA kernel family `stream`: a gett step with a short K whose output is the traffic,
//
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n],   K <= KP (one slice holds all of it)
//
// TCCG's ccsd_t (`amji,cbkm->kjicba`: K = 24, C 92 M elements, A and B under 1 MB) is the
// case: per output element 24 multiply-adds and one store. The gett kernel runs it as 5670
// independent 128x128 tiles, each of which waits for its loads (L2 latency) before its
// three K slices and its epilogue; ncu showed the SM issuing in under half its cycles.
// Here a block stays resident (the grid is two blocks per SM) and walks a contiguous
// range of tiles, with the next tile's operands already on their way:
//
//   for each tile t of the block's range (t+1, t+2: its next two):
//     wait for this thread's copies; barrier (RAW: everyone's copies of t's operands and
//       of t+1's offsets have landed; WAR: everyone finished the tile before t, which
//       read the stages t+1 takes and the slot t+2 takes)
//     issue t+1's operands into the other stages -- only those whose panel changes
//     copy t+2's offsets and write its header
//     multiply all KP k of tile t (zero-filled past K); store C (einc_tile_store)
//
// (the first two tiles' offsets and the first tile's operands go before the loop), so a
// tile's load latency hides behind the previous tile's multiply and stores, and no
// instruction waits on a global load.
//
// Tile order: within the range, ALONG_M walks tile rows fastest (B's panel of BN columns
// stays for every tile of a tile column), else tile columns (A's panel stays). Each
// operand's stage only flips when its panel changes, so the resident one is loaded once
// per tile column (row) the block touches: the emitter makes the operand with the costlier
// loads resident (ccsd_t's A gathers one element per 32-byte sector; 635 MB of L2 reads
// when every tile reloaded it).
//
// Headers and offsets: a three-slot ring in shared memory, one slot per tile in flight:
// the tile's (batch, m0, n0) and its tabled M (N) group's offsets for its BM (BN) rows,
// of A (B) and of C (8-byte cp.async, coalesced); a strided group's offsets are r *
// stride, computed in place. Tile origins advance by one tile per iteration (no division
// past the first; ncu on the grid-stride version: ~240 instructions of every 2800 a tile
// were einc_tile_origin's divisions, long-scoreboard stalls 2.3 per issue with the tables
// read in place, 226 us against gett's 257).
//
// Thread (ty, tx) owns an RM x RN register tile of 4x4 pieces as in gett (LANES: gett's
// lane orders, einc_lanes); the store is gett's (einc_tile_store; the emitter orders M and N by C's strides,
// so the stores coalesce). Shared memory: the ring, then two stages of As[KP][BM+PAD] and
// two of Bs[KP][BN+PAD], PAD = 16 bytes (dynamic: 63 KB for 128x128, KP = 24, fp32, both
// groups tabled).
//
// Loads (one 4-byte cp.async per element, zero-filled outside the tensor) follow the
// operand's unit stride:
//  - row-fast (A's M / B's N holds it): consecutive lanes on consecutive rows, each
//    thread one row and KP*ROWS/NT of its k;
//  - K-fast: 8 lanes along k (k = lane % 8 + 8j), 4 rows per warp, so a warp reads four
//    32-byte runs; its transposed shared-memory stores land on 32 distinct banks (row
//    pitch ROWS + 4 words: bank 4k + row).
// fp32 only (emit_stream.stream_applies): cp.async copies raw bits.
#pragma once
#include "gett.cuh"

template <int BM_, int BN_, int KP_, int RM_, int RN_> struct EincStreamTile {
  static constexpr int BM = BM_, BN = BN_, KP = KP_, RM = RM_, RN = RN_;
  static constexpr int NT = (BM / RM) * (BN / RN);
  static constexpr int GROUP_M = 8;
};

// Dynamic shared memory: the three-slot ring (headers and offsets), then the two A and
// two B stages, in bytes.
template <class Cfg, bool TAB_M, bool TAB_N, class T> constexpr int einc_stream_smem() {
  return 8 * 3 * (4 + 2 * ((TAB_M ? Cfg::BM : 0) + (TAB_N ? Cfg::BN : 0))) +
         2 * Cfg::KP * (Cfg::BM + Cfg::BN + 2 * (16 / static_cast<int>(sizeof(T)))) * static_cast<int>(sizeof(T));
}

// Copy n table entries tab[r0 ..) (those below R) into dst; thread `lane` of `lanes` copies
// every lanes-th.
template <int N, int LANES>
__device__ __forceinline__ void einc_stream_offsets_copy(long long* dst, const long long* __restrict__ tab,
                                                         long long r0, long long R, int lane) {
#pragma unroll
  for (int r = lane; r < N; r += LANES) {
    const bool ok = r0 + r < R;
    einc_cp_async(dst + r, ok ? tab + r0 + r : tab, ok);
  }
}

// One operand's rows r0 .. r0+ROWS (of R) times k 0 .. KP (of K) into s[k][ROWS + PAD].
// `row(r)`: the offset of the tile's row r (r0 + r < R); k's offset is sk * k or tk[k].
template <int ROWS, int KP, int NT, bool RFAST, bool TAB_K, class T, class Row>
__device__ __forceinline__ void einc_stream_issue(T* __restrict__ s, const T* __restrict__ base, long long r0,
                                                  long long R, long long K, Row&& row, long long sk,
                                                  const long long* __restrict__ tk, int tid) {
  constexpr int PITCH = ROWS + 16 / static_cast<int>(sizeof(T));
  if constexpr (RFAST) {
    static_assert(NT % ROWS == 0 && (ROWS * KP) % NT == 0, "whole rows of lanes, whole loads per thread");
    constexpr int KS = NT / ROWS, NK = ROWS * KP / NT;
    const int r = tid % ROWS, k0 = tid / ROWS;
    const bool rok = r0 + r < R;
    const T* __restrict__ q = base + (rok ? row(r) : 0);
#pragma unroll
    for (int i = 0; i < NK; ++i) {
      const int k = k0 + i * KS;
      const bool ok = rok && k < K;
      einc_cp_async(s + k * PITCH + r, ok ? q + einc_goff<TAB_K>(k, sk, tk) : base, ok);
    }
  } else {
    static_assert(KP % 8 == 0 && NT % 8 == 0 && (ROWS * 8) % NT == 0, "8 lanes along k, whole rows per thread");
    constexpr int RS = NT / 8, NR = ROWS * 8 / NT, NK = KP / 8;
    const int kl = tid % 8, rl = tid / 8;
    long long koff[NK];
#pragma unroll
    for (int j = 0; j < NK; ++j) koff[j] = kl + 8 * j < K ? einc_goff<TAB_K>(kl + 8 * j, sk, tk) : 0;
#pragma unroll
    for (int q = 0; q < NR; ++q) {
      const int r = rl + q * RS;
      const bool rok = r0 + r < R;
      const T* __restrict__ src = base + (rok ? row(r) : 0);
#pragma unroll
      for (int j = 0; j < NK; ++j) {
        const bool ok = rok && kl + 8 * j < K;
        einc_cp_async(s + (kl + 8 * j) * PITCH + r, ok ? src + koff[j] : base, ok);
      }
    }
  }
}

// The stream kernels' (stream.cuh, stream_mma.cuh) next tile: the header (batch, m0, n0)
// of the cursor's tile and its tabled rows' offsets (A rows and C rows, then B rows and C
// columns) into ring slot `o`; then the cursor (cf along the fast tile axis, cs the slow
// one, cb the batch) advances by one tile. Tiles are BM x BN; the slot's areas are laid
// out for LM x LN (stream_mma's C boxes: tiles of 120 x 120 in 128 x 128 areas). CO > 0
// (C stored by boxes, cbox.py): no C offsets; thread 0 copies the tile's packed map
// coordinates instead, 4 words of p.tc_m (its M tile) to o[CO..] and 4 of p.tc_n to
// o[CO + 4..] (the same thread reads the slot's previous coordinates for the store first).
template <int BM, int BN, bool TAB_M, bool TAB_N, bool ALONG_M, int LM = BM, int LN = BN, int CO = 0>
__device__ __forceinline__ void einc_stream_begin_tile(long long* o, const EincGettMeta& p, int tid, int& cf,
                                                       int& cs, int& cb, int fast, int slow) {
  constexpr int OM = TAB_M ? LM : 0;
  const long long m0 = static_cast<long long>(ALONG_M ? cf : cs) * BM;
  const long long n0 = static_cast<long long>(ALONG_M ? cs : cf) * BN;
  if (tid == 0) {
    o[0] = cb;
    o[1] = m0;
    o[2] = n0;
  }
  if constexpr (TAB_M) {
    if (tid < BM) einc_stream_offsets_copy<BM, BM>(o + 4, p.ta_m, m0, p.M, tid);
    else if (CO == 0 && tid < 2 * BM) einc_stream_offsets_copy<BM, BM>(o + 4 + LM, p.tc_m, m0, p.M, tid - BM);
  }
  if constexpr (TAB_N) {
    if (tid < BN) einc_stream_offsets_copy<BN, BN>(o + 4 + 2 * OM, p.tb_n, n0, p.N, tid);
    else if (CO == 0 && tid < 2 * BN) einc_stream_offsets_copy<BN, BN>(o + 4 + 2 * OM + LN, p.tc_n, n0, p.N, tid - BN);
  }
  if constexpr (CO > 0) {
    if (tid == 0) {
      const long long* cm = p.tc_m + 4 * (ALONG_M ? cf : cs);
      const long long* cn = p.tc_n + 4 * (ALONG_M ? cs : cf);
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        einc_cp_async(o + CO + w, cm + w, true);
        einc_cp_async(o + CO + 4 + w, cn + w, true);
      }
    }
  }
  if (++cf == fast) {
    cf = 0;
    if (++cs == slow) {
      cs = 0;
      ++cb;
    }
  }
}

template <class Cfg, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool A_MFAST, bool B_NFAST, bool ALONG_M,
          class TOut, class TC, class TA, int LANES = 0, int KU = 8>
__device__ __forceinline__ void einc_stream(void* __restrict__ out, const void* __restrict__ a_ptr,
                                            const void* __restrict__ b_ptr, const EincGettMeta& p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, KP = Cfg::KP, RM = Cfg::RM, RN = Cfg::RN, NT = Cfg::NT;
  constexpr int PAD = 16 / static_cast<int>(sizeof(TA)), SA = KP * (BM + PAD), SB = KP * (BN + PAD);
  constexpr int OM = TAB_M ? BM : 0, ON = TAB_N ? BN : 0;
  constexpr int SLOT = 4 + 2 * (OM + ON);  // header (bi, m0, n0, -), A rows, C rows, B rows, C columns
  static_assert(sizeof(TA) == 4, "raw 4-byte copies");
  static_assert(RM % 4 == 0 && RN % 4 == 0, "register tiles are made of 4x4 pieces");
  static_assert(NT >= 2 * BM && NT >= 2 * BN, "one offset copy per thread and group");
#ifdef EINC_HOST_EMULATION  // the CPU emulator's threads of one block share a static buffer
  alignas(16) static unsigned char einc_smem[einc_stream_smem<Cfg, TAB_M, TAB_N, TA>()];
#else
  extern __shared__ __align__(16) unsigned char einc_smem[];
#endif
  long long* const ring = reinterpret_cast<long long*>(einc_smem);
  TA* const as = reinterpret_cast<TA*>(einc_smem + 8 * 3 * SLOT);  // two A stages, then two B stages
  TA* const bs = as + 2 * SA;
  const TA* __restrict__ A = static_cast<const TA*>(a_ptr);
  const TA* __restrict__ B = static_cast<const TA*>(b_ptr);
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x;
  constexpr int TX = BN / RN;
  int tx, ty;
  einc_lanes<LANES, TX, NT>(tid, tx, ty);

  // The block's range of tiles (the emitter keeps the count below 2^31) and its cursor:
  // the tile whose header is written next, as (batch, tile row, tile column).
  const long long tiles = p.tiles_m * p.tiles_n * p.batch;
  const int first = static_cast<int>(tiles * blockIdx.x / gridDim.x);
  const int count = static_cast<int>(tiles * (blockIdx.x + 1) / gridDim.x) - first;
  const int fast = static_cast<int>(ALONG_M ? p.tiles_m : p.tiles_n);
  const int slow = static_cast<int>(ALONG_M ? p.tiles_n : p.tiles_m);
  int cf = first % fast, cs = (first / fast) % slow, cb = first / fast / slow;

  // Header and offsets of the cursor's tile into `slot`; then advance the cursor.
  auto begin_tile = [&](int slot) {
    einc_stream_begin_tile<BM, BN, TAB_M, TAB_N, ALONG_M>(ring + slot * SLOT, p, tid, cf, cs, cb, fast, slow);
  };
  // The operands of the tile in `slot` whose panels differ from those of `prev` (-1: none)
  // into the other stages; sa/sb: the stages the tile's panels are in (updated).
  auto issue = [&](int slot, int prev, int& sa, int& sb) {
    const long long* o = ring + slot * SLOT;
    const long long bi = o[0], m0 = o[1], n0 = o[2];
    const long long* q = prev < 0 ? o : ring + prev * SLOT;
    if (prev < 0 || q[0] != bi || q[1] != m0) {
      sa = prev < 0 ? 0 : sa ^ 1;
      einc_stream_issue<BM, KP, NT, A_MFAST, TAB_K>(
          as + sa * SA, A + einc_goff<TAB_B>(bi, p.a_b, p.ta_b), m0, p.M, p.K,
          [&](int r) { return TAB_M ? o[4 + r] : (m0 + r) * p.a_m; }, p.a_k, p.ta_k, tid);
    }
    if (prev < 0 || q[0] != bi || q[2] != n0) {
      sb = prev < 0 ? 0 : sb ^ 1;
      einc_stream_issue<BN, KP, NT, B_NFAST, TAB_K>(
          bs + sb * SB, B + einc_goff<TAB_B>(bi, p.b_b, p.tb_b), n0, p.N, p.K,
          [&](int r) { return TAB_N ? o[4 + 2 * OM + r] : (n0 + r) * p.b_n; }, p.b_k, p.tb_k, tid);
    }
  };

  if (count <= 0) return;
  int sa = 0, sb = 0;  // the stages of the tile being multiplied; na/nb: of the next one
  begin_tile(0);
  if (count > 1) begin_tile(1);
  einc_cp_commit();
  einc_cp_wait<0>();
  __syncthreads();  // RAW: the first two tiles' headers and offsets
  issue(0, -1, sa, sb);
  einc_cp_commit();
  for (int i = 0, slot = 0; i < count; ++i, slot = slot == 2 ? 0 : slot + 1) {
    einc_cp_wait<0>();  // this thread's copies of tile i's operands and tile i+1's offsets
    __syncthreads();    // RAW: everyone's; WAR: tile i-1's readers of the stages and slot
    const int next = slot == 2 ? 0 : slot + 1;
    int na = sa, nb = sb;
    if (i + 1 < count) issue(next, slot, na, nb);
    if (i + 2 < count) begin_tile(next == 2 ? 0 : next + 1);
    einc_cp_commit();

    const TA* __restrict__ As = as + sa * SA;
    const TA* __restrict__ Bs = bs + sb * SB;
    TA acc[RM][RN];
#pragma unroll
    for (int r = 0; r < RM; ++r)
#pragma unroll
      for (int j = 0; j < RN; ++j) acc[r][j] = zero<TA>();
    TA fa[2][RM], fb[2][RN];  // fragments double-buffered: row k+1 read while k multiplies
    auto frags = [&](int k, TA* a, TA* b) {
#pragma unroll
      for (int r = 0; r < RM / 4; ++r) einc_load4(As + k * (BM + PAD) + r * (BM / (RM / 4)) + ty * 4, a + 4 * r);
#pragma unroll
      for (int j = 0; j < RN / 4; ++j) einc_load4(Bs + k * (BN + PAD) + j * (BN / (RN / 4)) + tx * 4, b + 4 * j);
    };
    // K in chunks of KU (8 by default), the chunk loop not unrolled: a fully unrolled
    // KP = 24 is ~100 KB of code for two blocks at different points of it
    static_assert(KP % KU == 0 && KU % 2 == 0, "whole chunks of an even length");
    frags(0, fa[0], fb[0]);
#pragma unroll 1
    for (int k0 = 0; k0 < KP; k0 += KU) {
#pragma unroll
      for (int k = 0; k < KU; ++k) {
        if (k < KU - 1 || k0 + KU < KP) frags(k0 + k + 1, fa[(k + 1) & 1], fb[(k + 1) & 1]);
#pragma unroll
        for (int r = 0; r < RM; ++r)
#pragma unroll
          for (int j = 0; j < RN; ++j) acc[r][j] = mac(acc[r][j], fa[k & 1][r], fb[k & 1][j]);
      }
    }

    const long long* o = ring + slot * SLOT;
    const long long bi = o[0], m0 = o[1], n0 = o[2];
    einc_tile_store<BM, BN, RM, RN, TAB_N, TC>(
        C + einc_goff<TAB_B>(bi, p.c_b, p.tc_b), acc, p, m0, n0, tx, ty,
        [&](long long m) { return TAB_M ? o[4 + BM + (m - m0)] : m * p.c_m; },
        [&](long long n) { return o[4 + 2 * OM + BN + (n - n0)]; });
    sa = na;
    sb = nb;
  }
}
