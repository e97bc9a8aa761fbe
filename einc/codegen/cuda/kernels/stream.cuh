// einc CUDA kernel family `stream`: a gett step with a short K whose output is the traffic,
//
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n],   K <= KP (one slice holds all of it)
//
// TCCG's ccsd_t (`amji,cbkm->kjicba`: K = 24, C 92 M elements, A and B under 1 MB) is the
// case: per output element 24 multiply-adds and one store. The gett kernel runs it as 5670
// independent 128x128 tiles, each of which waits for its loads (L2 latency) before its
// three K slices and its epilogue; ncu showed the SM issuing in under half its cycles.
// Here a block stays resident (the grid is two blocks per SM) and walks its tiles with
// the next tile's operands already on their way:
//
//   copy the offsets of tile t0's rows; wait; barrier; issue tile t0's operands; copy
//     the offsets of t1
//   for each of the block's tiles t (t+1, t+2: the block's next two):
//     wait for this thread's copies; barrier (RAW: everyone's copies of t's operands
//       and of t+1's offsets have landed; WAR: everyone finished the tile before t,
//       which read the other operand stage and the offset slot t+2 takes)
//     issue tile t+1's operands into the other stage (rows from t+1's offsets)
//     copy the offsets of t+2's rows
//     multiply all KP k of tile t (zero-filled past K); store C (einc_tile_store, rows
//       and tabled columns from t's offsets)
//
// so a tile's load latency hides behind the previous tile's multiply and stores, and no
// instruction waits on a global load: ncu on ccsd_t with the tables read in place (the
// first version) showed long-scoreboard stalls at 2.3 per issue and the SM issuing in
// 52% of its cycles, 226 us against gett's 257.
//
// Offsets: a tabled M (N) group's table entries for the tile's BM (BN) rows, of A (B)
// and of C, copied into a slot of a three-slot ring (8-byte cp.async, coalesced); a
// strided group's offsets are r * stride, computed in place.
//
// Groups, tables, tile order and the store are the gett kernel's (EincGettMeta,
// einc_tile_origin, einc_tile_store; the emitter orders M and N by C's strides, so the
// stores coalesce). Thread (ty, tx) owns an RM x RN register tile of 4x4 pieces as in
// gett (the `rows` lane order). Shared memory: two stages of As[KP][BM+PAD] and
// Bs[KP][BN+PAD], PAD = 16 bytes, after the offset ring (dynamic: 62.9 KB for 128x128,
// KP = 24, fp32, both groups tabled).
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

// Dynamic shared memory: the offset ring, then the two operand stages, in bytes.
template <class Cfg, bool TAB_M, bool TAB_N> constexpr int einc_stream_offsets() {
  return 3 * 2 * ((TAB_M ? Cfg::BM : 0) + (TAB_N ? Cfg::BN : 0));  // 8-byte entries
}
template <class Cfg, bool TAB_M, bool TAB_N, class T> constexpr int einc_stream_smem() {
  return 8 * einc_stream_offsets<Cfg, TAB_M, TAB_N>() +
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

template <class Cfg, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool A_MFAST, bool B_NFAST, class TOut,
          class TC, class TA>
__device__ __forceinline__ void einc_stream(void* __restrict__ out, const void* __restrict__ a_ptr,
                                            const void* __restrict__ b_ptr, const EincGettMeta& p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, KP = Cfg::KP, RM = Cfg::RM, RN = Cfg::RN, NT = Cfg::NT;
  constexpr int PAD = 16 / static_cast<int>(sizeof(TA)), PA = BM + PAD, PB = BN + PAD;
  constexpr int STAGE = KP * (PA + PB);  // elements of one operand stage: As, then Bs
  constexpr int OM = TAB_M ? BM : 0, ON = TAB_N ? BN : 0;  // per slot: A rows, C rows, B rows, C columns
  constexpr int SLOT = 2 * (OM + ON), OFFS = einc_stream_offsets<Cfg, TAB_M, TAB_N>();
  static_assert(sizeof(TA) == 4, "raw 4-byte copies");
  static_assert(RM % 4 == 0 && RN % 4 == 0, "register tiles are made of 4x4 pieces");
  static_assert(NT >= 2 * BM && NT >= 2 * BN, "one offset copy per thread and group");
#ifdef EINC_HOST_EMULATION  // the CPU emulator's threads of one block share a static buffer
  alignas(16) static unsigned char einc_smem[einc_stream_smem<Cfg, TAB_M, TAB_N, TA>()];
#else
  extern __shared__ __align__(16) unsigned char einc_smem[];
#endif
  long long* const offs = reinterpret_cast<long long*>(einc_smem);
  TA* const ring = reinterpret_cast<TA*>(einc_smem + 8 * OFFS);
  const TA* __restrict__ A = static_cast<const TA*>(a_ptr);
  const TA* __restrict__ B = static_cast<const TA*>(b_ptr);
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x;
  constexpr int TX = BN / RN;
  const int tx = tid % TX, ty = tid / TX;
  const long long tiles = p.tiles_m * p.tiles_n * p.batch;

  // Slot layout: [A rows | C rows] (TAB_M), then [B rows | C columns] (TAB_N).
  auto copy_offsets = [&](long long tile, int slot) {
    if (tile >= tiles) return;
    long long bi, m0, n0;
    einc_tile_origin<Cfg::GROUP_M>(tile, p, BM, BN, bi, m0, n0);
    long long* o = offs + slot * SLOT;
    if constexpr (TAB_M) {
      if (tid < BM) einc_stream_offsets_copy<BM, BM>(o, p.ta_m, m0, p.M, tid);
      else if (tid < 2 * BM) einc_stream_offsets_copy<BM, BM>(o + BM, p.tc_m, m0, p.M, tid - BM);
    }
    if constexpr (TAB_N) {
      if (tid < BN) einc_stream_offsets_copy<BN, BN>(o + 2 * OM, p.tb_n, n0, p.N, tid);
      else if (tid < 2 * BN) einc_stream_offsets_copy<BN, BN>(o + 2 * OM + BN, p.tc_n, n0, p.N, tid - BN);
    }
  };
  auto issue = [&](long long tile, int stage, int slot) {
    long long bi, m0, n0;
    einc_tile_origin<Cfg::GROUP_M>(tile, p, BM, BN, bi, m0, n0);
    TA* s = ring + stage * STAGE;
    const long long* o = offs + slot * SLOT;
    einc_stream_issue<BM, KP, NT, A_MFAST, TAB_K>(
        s, A + einc_goff<TAB_B>(bi, p.a_b, p.ta_b), m0, p.M, p.K,
        [&](int r) { return TAB_M ? o[r] : (m0 + r) * p.a_m; }, p.a_k, p.ta_k, tid);
    einc_stream_issue<BN, KP, NT, B_NFAST, TAB_K>(
        s + KP * PA, B + einc_goff<TAB_B>(bi, p.b_b, p.tb_b), n0, p.N, p.K,
        [&](int r) { return TAB_N ? o[2 * OM + r] : (n0 + r) * p.b_n; }, p.b_k, p.tb_k, tid);
  };

  long long tile = blockIdx.x;
  const long long step = gridDim.x;
  copy_offsets(tile, 0);
  einc_cp_commit();
  einc_cp_wait<0>();
  __syncthreads();  // RAW: tile t0's offsets
  if (tile < tiles) issue(tile, 0, 0);
  copy_offsets(tile + step, 1);
  einc_cp_commit();
  for (int stage = 0, slot = 0; tile < tiles; tile += step, stage ^= 1, slot = slot == 2 ? 0 : slot + 1) {
    einc_cp_wait<0>();  // this thread's copies of this tile's operands and the next one's offsets
    __syncthreads();    // RAW: everyone's; WAR: the previous tile's readers of the stage and slot
    const int next = slot == 2 ? 0 : slot + 1;
    if (tile + step < tiles) issue(tile + step, stage ^ 1, next);
    copy_offsets(tile + 2 * step, next == 2 ? 0 : next + 1);
    einc_cp_commit();

    const TA* __restrict__ As = ring + stage * STAGE;
    const TA* __restrict__ Bs = As + KP * PA;
    TA acc[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int j = 0; j < RN; ++j) acc[i][j] = zero<TA>();
    TA fa[2][RM], fb[2][RN];  // fragments double-buffered: row k+1 read while k multiplies
    auto frags = [&](int k, TA* a, TA* b) {
#pragma unroll
      for (int i = 0; i < RM / 4; ++i) einc_load4(As + k * PA + i * (BM / (RM / 4)) + ty * 4, a + 4 * i);
#pragma unroll
      for (int j = 0; j < RN / 4; ++j) einc_load4(Bs + k * PB + j * (BN / (RN / 4)) + tx * 4, b + 4 * j);
    };
    frags(0, fa[0], fb[0]);
#pragma unroll
    for (int k = 0; k < KP; ++k) {
      if (k + 1 < KP) frags(k + 1, fa[(k + 1) & 1], fb[(k + 1) & 1]);
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) acc[i][j] = mac(acc[i][j], fa[k & 1][i], fb[k & 1][j]);
    }

    long long bi, m0, n0;
    einc_tile_origin<Cfg::GROUP_M>(tile, p, BM, BN, bi, m0, n0);
    const long long* o = offs + slot * SLOT;
    einc_tile_store<BM, BN, RM, RN, TAB_N, TC>(
        C + einc_goff<TAB_B>(bi, p.c_b, p.tc_b), acc, p, m0, n0, tx, ty,
        [&](long long m) { return TAB_M ? o[BM + (m - m0)] : m * p.c_m; },
        [&](long long n) { return o[2 * OM + BN + (n - n0)]; });
  }
}
