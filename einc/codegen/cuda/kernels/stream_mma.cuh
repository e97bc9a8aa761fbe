// einc CUDA kernel family `stream` on tensor cores: the stream kernel's schedule
// (stream.cuh: resident blocks walking contiguous tile ranges, the next tile's operands in
// flight, an operand's panel reloaded only when it changes, headers and tabled offsets in a
// three-slot shared ring) with fp16/bf16 operands multiplied by mma.sync m16n8k16 into fp32
// (mma.cuh's instructions, shared-memory layouts and fragment loads).
//
// TCCG ccsd_t in bf16 (K = 24, 184 MB of C) is the case: the wgmma kernel ran it at 0.17 ms,
// 0.6x torch.einsum, each 128x128 tile waiting on its loads (A gathers one element per
// 32-byte sector, every tile) before 2 wgmma k-steps and an epilogue. Here the multiply is
// 2 k-steps of 16 mma per warp and the tile's time is its store.
//
// Per tile: all of K (KB bytes, padded to 32) in one slice; WM x WN warps of (BM/WM) x
// (BN/WN), 16x8 mma tiles; each warp stages its accumulators, converted to C's dtype, in
// an area of its own ([BM/WM][BN/WN + 16 bytes]) and stores them as runs of 16 bytes
// (8 bf16) per lane where C holds them side by side and aligned, else element by element:
//
//   wait; barrier (RAW: tile t's operands, t+1's offsets; WAR: tile t-1's readers)
//   issue t+1's changed panels; copy t+2's offsets
//   mma over tile t; stage the warp's part; __syncwarp; store it
//
// C by boxes (Cfg::CRANK > 0, sm_90; emit_stream.c_box_tiling, cbox.py): tiles are BMV x BNV
// (cut to C's modes, within the 128 x 128 computed), each one box of C's tensor map. Every
// thread writes its accumulators into the tile's staging box (offsets per row and column
// pair from p.tc_b, loaded once) and fences them for the async proxy; after the next tile's
// barrier thread 0 stores the box with cp.async.bulk.tensor at the coordinates its slot holds
// (p.tc_m / p.tc_n words, copied by begin_tile), two boxes alternating, each one's store
// waited for (read) before it is staged again:
//
//   [t0: wait(read) store(i-2)]; wait; barrier; [t0: store(i-1)]; issue; mma(i); stage(i); fence
//
// Loads: an operand whose fast group has a unit-stride innermost mode (emit_mma._vec_ok)
// moves 16-byte cp.async pieces (the runtime launches the element twin when it is not
// 16-byte aligned); else elements through registers, loaded and stored at once (the
// resident panel of a gathering operand is loaded a few times per block, so its latency
// is paid rarely).
#pragma once
#include "mma.cuh"
#include "stream.cuh"

// BMV x BNV: the tile's rows and columns (of BM x BN computed); CRANK > 0: C is stored by
// boxes of a rank-CRANK tensor map (cbox.py), CBD the map dimension of the batch index (-1).
template <int BM_, int BN_, int WM_, int WN_, int KB_, int BMV_ = BM_, int BNV_ = BN_, int CRANK_ = 0, int CBD_ = -1>
struct EincStreamMmaTile {
  static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, KB = KB_;  // KB: bytes of k (all of K)
  static constexpr int BMV = BMV_, BNV = BNV_, CRANK = CRANK_, CBD = CBD_;
  static constexpr int NT = WM * WN * 32;
  static constexpr int TM = BM / WM, TN = BN / WN;  // warp tile
  static constexpr int MI = TM / 16, NI = TN / 8;   // mma tiles per warp
};

// One operand's panel (rows r0 .. r0+R of RT, all KB bytes of k) into shared memory at
// `smem` in layout EincMmaSmem<R, E, KMAJ, KB>; `row(r)`: element offset of the panel's row r.
template <int R, int E, int NT, bool KMAJ, bool VEC, bool TAB_K, int KB, class Row>
__device__ __forceinline__ void einc_stream_mma_issue(unsigned smem, const unsigned char* __restrict__ base,
                                                      long long r0, long long RT, long long K, Row&& row,
                                                      long long sk, const long long* __restrict__ tk) {
  using L = EincMmaSmem<R, E, KMAJ, KB>;
  using Raw = typename EincRaw<E>::T;
  constexpr int KE = KB / E, VE = 16 / E, PR = KB / 16, CPR = R * E / 16;
  const int tid = threadIdx.x;
  if constexpr (VEC) {
    constexpr int TOTAL = KMAJ ? R * PR : KE * CPR, NV = (TOTAL + NT - 1) / NT;  // pieces, per thread
#pragma unroll
    for (int i = 0; i < NV; ++i) {
      const int c = tid + i * NT;
      if (TOTAL % NT != 0 && c >= TOTAL) break;
      const int r = KMAJ ? c / PR : (c % CPR) * VE, k = KMAJ ? (c % PR) * VE : c / CPR;
      const bool ok = r0 + r < RT && k < K;
      const unsigned char* src = ok ? base + (row(r) + einc_goff<TAB_K>(k, sk, tk)) * E : base;
      einc_cp16(smem + L::at(r, k), src, ok);
    }
  } else {
    constexpr int NS = R * KE / NT, U = NS < 4 ? NS : 4;  // elements per thread; loads in flight
    static_assert((R * KE) % NT == 0 && NS % U == 0, "whole elements per thread");  // KE: multiple of 16
#pragma unroll 1
    for (int i0 = 0; i0 < NS; i0 += U) {
      Raw v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int c = tid + (i0 + u) * NT;
        const int r = KMAJ ? c / KE : c % R, k = KMAJ ? c % KE : c / R;  // consecutive lanes: the fast axis
        const bool ok = r0 + r < RT && k < K;
        v[u] = ok ? __ldg(reinterpret_cast<const Raw*>(base + (row(r) + einc_goff<TAB_K>(k, sk, tk)) * E)) : Raw(0);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int c = tid + (i0 + u) * NT;
        const int r = KMAJ ? c / KE : c % R, k = KMAJ ? c % KE : c / R;
        asm volatile("{\n .reg .b32 t;\n mov.b32 t, %1;\n st.shared.b%2 [%0], t;\n}\n" ::"r"(smem + L::at(r, k)),
                     "r"(static_cast<unsigned>(v[u])), "n"(E == 1 ? 8 : E == 2 ? 16 : 32));
      }
    }
  }
}

// Bulk-copy waits and the proxy fence of the box epilogue (sm_90: the kernels with boxes are
// only emitted for it; other targets compile them out). READ: until the stores have read
// their shared memory, else until they completed.
template <bool READ> __device__ __forceinline__ void einc_bulk_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (READ)
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
  else
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void einc_fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// C by boxes (cbox.py): thread 0 stores a staged tile (shared address src) through the map,
// at the coordinates summed from the tile's slot (o[co..co+3]: its M tile's packed words,
// o[co+4..]: its N tile's; two 32-bit coordinates a word), plus the batch index o[0] on
// dimension CBD; then commits the bulk group.
template <int RANK, int CBD>
__device__ __forceinline__ void einc_stream_box_store(const EincTmap* map, const long long* o, int co, unsigned src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long w0 = o[co] + o[co + 4], w1 = o[co + 1] + o[co + 5], w2 = o[co + 2] + o[co + 6];
  int c[5] = {static_cast<int>(w0 & 0xFFFFFFFFull), static_cast<int>(w0 >> 32), static_cast<int>(w1 & 0xFFFFFFFFull),
              static_cast<int>(w1 >> 32), static_cast<int>(w2)};
  if constexpr (CBD >= 0) c[CBD] += static_cast<int>(o[0]);
  einc_tma_store<RANK>(map, c, src);
#endif
}

template <class Cfg, class Op, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool A_KMAJ, bool B_KMAJ,
          bool VEC_A, bool VEC_B, bool ALONG_M, class TOut, class TC, class TA>
__device__ __forceinline__ void einc_stream_mma(void* __restrict__ out, const void* __restrict__ a_ptr,
                                                const void* __restrict__ b_ptr, const EincGettMeta& p,
                                                const EincTmap* cmap = nullptr) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, NT = Cfg::NT, E = Op::E, KB = Cfg::KB, MI = Cfg::MI, NI = Cfg::NI;
  constexpr int BMV = Cfg::BMV, BNV = Cfg::BNV;
  constexpr bool BOX = Cfg::CRANK > 0;
  using LA = EincMmaSmem<BM, E, A_KMAJ, KB>;
  using LB = EincMmaSmem<BN, E, B_KMAJ, KB>;
  constexpr int OM = TAB_M ? BM : 0, ON = TAB_N ? BN : 0;
  constexpr int CO = BOX ? 4 + 2 * (OM + ON) : 0, SLOT = 4 + 2 * (OM + ON) + (BOX ? 8 : 0);
  // BOX: the tile staged densely in its box's layout, two buffers (tile i in i % 2) so a
  // tile is staged while the previous one's store still reads
  constexpr int BOXB = (BMV * BNV * static_cast<int>(sizeof(TOut)) + 127) / 128 * 128;
  constexpr int RING = (8 * 3 * SLOT + 127) / 128 * 128;
  // The warps' staging rows: 64-byte rows (TN = 32 16-bit columns) packed, their 16-byte
  // chunks XOR-swizzled by (row / 2) % 4, so both the 4-byte fragment writes (8 rows x 4
  // lanes) and the 16-byte read-out (2 rows x 4 lanes per quarter-warp) hit distinct banks;
  // other rows padded by 16 bytes (the write side's rule; its read-out is 2-way at 80 bytes:
  // session 15's ncu counted 2.6 M conflicts on ccsd_t)
  constexpr int ROWB = Cfg::TN * static_cast<int>(sizeof(TOut));
  constexpr bool SWZ = ROWB == 64 && sizeof(TOut) == 2;  // (8-column chunks of 16 bytes, as read)
  constexpr int WPITCH = SWZ ? 64 : ROWB + 16, WSTAGE = Cfg::TM * WPITCH;  // per warp
  static_assert(NI % 2 == 0, "B fragments come in pairs of 8-column tiles");
  static_assert(NT >= 2 * BM && NT >= 2 * BN, "one offset copy per thread and group");
  static_assert(RING % 128 == 0 && LA::BYTES % 128 == 0 && LB::BYTES % 128 == 0, "aligned areas");
  static_assert(!BOX || (BMV <= BM && BNV <= BN && Cfg::TN % 8 == 0), "box tiles within the computed ones");
  using Acc = typename Op::Acc;

  extern __shared__ __align__(128) unsigned char einc_smem[];
  long long* const ring = reinterpret_cast<long long*>(einc_smem);
  const unsigned smem0 = static_cast<unsigned>(__cvta_generic_to_shared(einc_smem));
  const unsigned as = smem0 + RING, bs = as + 2 * LA::BYTES;  // two A stages, two B stages
  unsigned char* const cs = einc_smem + RING + 2 * (LA::BYTES + LB::BYTES);  // the warps' staged C tiles
  const unsigned char* __restrict__ A = static_cast<const unsigned char*>(a_ptr);
  const unsigned char* __restrict__ B = static_cast<const unsigned char*>(b_ptr);
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wm0 = (warp / Cfg::WN) * Cfg::TM, wn0 = (warp % Cfg::WN) * Cfg::TN;

  const long long tiles = p.tiles_m * p.tiles_n * p.batch;
  const int first = static_cast<int>(tiles * blockIdx.x / gridDim.x);
  const int count = static_cast<int>(tiles * (blockIdx.x + 1) / gridDim.x) - first;
  const int fast = static_cast<int>(ALONG_M ? p.tiles_m : p.tiles_n);
  const int slow = static_cast<int>(ALONG_M ? p.tiles_n : p.tiles_m);
  int cf = first % fast, cs_ = (first / fast) % slow, cb = first / fast / slow;

  auto begin_tile = [&](int slot) {
    einc_stream_begin_tile<BMV, BNV, TAB_M, TAB_N, ALONG_M, BM, BN, CO>(ring + slot * SLOT, p, tid, cf, cs_, cb, fast,
                                                                        slow);
  };
  auto issue = [&](int slot, int prev, int& sa, int& sb) {
    const long long* o = ring + slot * SLOT;
    const long long bi = o[0], m0 = o[1], n0 = o[2];
    const long long* q = prev < 0 ? o : ring + prev * SLOT;
    if (prev < 0 || q[0] != bi || q[1] != m0) {
      sa = prev < 0 ? 0 : sa ^ 1;
      einc_stream_mma_issue<BM, E, NT, A_KMAJ, VEC_A, TAB_K, KB>(
          as + sa * LA::BYTES, A + einc_goff<TAB_B>(bi, p.a_b, p.ta_b) * E, m0, BOX ? m0 + BMV : p.M, p.K,
          [&](int r) { return TAB_M ? o[4 + r] : (m0 + r) * p.a_m; }, p.a_k, p.ta_k);
    }
    if (prev < 0 || q[0] != bi || q[2] != n0) {
      sb = prev < 0 ? 0 : sb ^ 1;
      einc_stream_mma_issue<BN, E, NT, B_KMAJ, VEC_B, TAB_K, KB>(
          bs + sb * LB::BYTES, B + einc_goff<TAB_B>(bi, p.b_b, p.tb_b) * E, n0, BOX ? n0 + BNV : p.N, p.K,
          [&](int r) { return TAB_N ? o[4 + 2 * OM + r] : (n0 + r) * p.b_n; }, p.b_k, p.tb_k);
    }
  };

  if (count <= 0) return;
  // BOX: this thread's rows' and column pairs' offsets (elements) in the staged box (the
  // same in every tile: tiles are box-aligned), from p.tc_b (cbox.py: -1 outside the tile)
  int fm[MI][2], fn[NI];
  const unsigned bx0 = smem0 + RING + 2 * (LA::BYTES + LB::BYTES);  // BOX: the two staging boxes
  if constexpr (BOX) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int a = 0; a < MI; ++a)
#pragma unroll
      for (int h = 0; h < 2; ++h) fm[a][h] = static_cast<int>(p.tc_b[wm0 + a * 16 + g + 8 * h]);
#pragma unroll
    for (int j = 0; j < NI; ++j) fn[j] = static_cast<int>(p.tc_b[BM + wn0 + j * 8 + 2 * t]);
  }
  int sa = 0, sb = 0;
  begin_tile(0);
  if (count > 1) begin_tile(1);
  einc_cp_commit();
  einc_cp_wait<0>();
  __syncthreads();  // RAW: the first two tiles' headers and offsets
  issue(0, -1, sa, sb);
  einc_cp_commit();
  for (int i = 0, slot = 0; i < count; ++i, slot = slot == 2 ? 0 : slot + 1) {
    // BOX: tile i-2's store has read box i % 2 (it was issued one tile ago) before anyone
    // stages tile i there
    if constexpr (BOX) if (tid == 0) einc_bulk_wait<true>();
    einc_cp_wait<0>();
    __syncthreads();  // RAW: tile i's operands, i+1's offsets; WAR: tile i-1's readers (stages, slot, Cs)
    // BOX: tile i-1 is staged (every thread fenced its writes for the async proxy): store it,
    // reading its slot before begin_tile (below, thread 0 too) reuses the slot for tile i+2
    if constexpr (BOX)
      if (tid == 0 && i > 0)
        einc_stream_box_store<Cfg::CRANK, Cfg::CBD>(cmap, ring + (slot == 0 ? 2 : slot - 1) * SLOT, CO,
                                                     bx0 + ((i - 1) & 1) * BOXB);
    const int next = slot == 2 ? 0 : slot + 1;
    int na = sa, nb = sb;
    if (i + 1 < count) issue(next, slot, na, nb);
    if (i + 2 < count) begin_tile(next == 2 ? 0 : next + 1);
    einc_cp_commit();

    Acc acc[MI][NI][4];
#pragma unroll
    for (int a = 0; a < MI; ++a)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[a][j][q] = Acc(0);
    einc_mma_slice<Op, BM, BN, A_KMAJ, B_KMAJ, KB>(acc, as + sa * LA::BYTES, bs + sb * LB::BYTES, wm0, wn0);

    if constexpr (BOX) {
      // accumulator (a, j, q): row wm0 + 16a + g + 8(q/2), column wn0 + 8j + 2t + q%2; the
      // pair of columns is adjacent in the box (cbox: an even inner box of C's unit stride)
      unsigned char* const bx = einc_smem + (bx0 - smem0) + (i & 1) * BOXB;
#pragma unroll
      for (int a = 0; a < MI; ++a)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j = 0; j < NI; ++j)
            if (fm[a][h] >= 0 && fn[j] >= 0) {
              EincVec<TOut, 2> v;
              v.v[0] = EincStore<TOut>::f(cast<TC>(static_cast<TA>(acc[a][j][2 * h])));
              v.v[1] = EincStore<TOut>::f(cast<TC>(static_cast<TA>(acc[a][j][2 * h + 1])));
              *reinterpret_cast<EincVec<TOut, 2>*>(bx + (fm[a][h] + fn[j]) * static_cast<int>(sizeof(TOut))) = v;
            }
      einc_fence_proxy_async();  // the generic writes, visible to the TMA store's reads
      sa = na;
      sb = nb;
      continue;
    }
    // Stage the warp's tile (accumulator (a, j, q) is row g + 8*(q/2), column 2*t + q%2 of
    // mma tile (a, j)) in the warp's own area, then store it: each lane a 16-byte run of
    // CPT columns in 8 of the warp tile's rows, RPL lanes side by side along a row. Only
    // the warp reads what it staged, so __syncwarp orders it (a block barrier here, the
    // first version, left the SM issuing in 34% of its cycles on ccsd_t).
    const long long* o = ring + slot * SLOT;
    const long long bi = o[0], m0 = o[1], n0 = o[2];
    constexpr int CPT = 16 / static_cast<int>(sizeof(TOut)), RPL = Cfg::TN / CPT, RROWS = 32 / RPL;
    static_assert(Cfg::TN % CPT == 0 && 32 % RPL == 0 && Cfg::TM % RROWS == 0, "whole runs per lane");
    unsigned char* const ws = cs + warp * WSTAGE;
    __syncwarp();  // WAR: the warp's lanes finished reading its previous tile
    {
      const int g = lane >> 2, t = lane & 3;
#pragma unroll
      for (int a = 0; a < MI; ++a)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int rr = a * 16 + g + 8 * h, sw = SWZ ? (rr >> 1) & 3 : 0;
          unsigned char* row = ws + rr * WPITCH + 2 * t * static_cast<int>(sizeof(TOut));
#pragma unroll
          for (int j = 0; j < NI; ++j) {  // columns 8j .. 8j+7: 16-byte chunk j (swizzled)
            EincVec<TOut, 2> v;
            v.v[0] = EincStore<TOut>::f(cast<TC>(static_cast<TA>(acc[a][j][2 * h])));
            v.v[1] = EincStore<TOut>::f(cast<TC>(static_cast<TA>(acc[a][j][2 * h + 1])));
            *reinterpret_cast<EincVec<TOut, 2>*>(row + (j ^ sw) * 8 * static_cast<int>(sizeof(TOut))) = v;
          }
        }
    }
    __syncwarp();  // RAW: the warp's staged tile
    const int col = CPT * (lane % RPL), r0 = lane / RPL;
    const long long n = n0 + wn0 + col;
    if (n < p.N) {
      long long c[CPT];
      bool run = n + CPT <= p.N;
#pragma unroll
      for (int e = 0; e < CPT; ++e) {
        c[e] = n + e < p.N ? (TAB_N ? o[4 + 2 * OM + BN + wn0 + col + e] : (n + e) * p.c_n) : 0;
        run = run && c[e] == c[0] + e;
      }
      TOut* const cb_ = C + einc_goff<TAB_B>(bi, p.c_b, p.tc_b);
      const long long mw = m0 + wm0;
#pragma unroll
      for (int q = 0; q < Cfg::TM / RROWS; ++q) {
        const int r = r0 + q * RROWS;
        if (mw + r < p.M) {
          const int chunk = SWZ ? (col / CPT) ^ ((r >> 1) & 3) : col / CPT;  // (CPT columns = 16 bytes)
          const EincVec<TOut, CPT> v = *reinterpret_cast<const EincVec<TOut, CPT>*>(ws + r * WPITCH + chunk * 16);
          TOut* const rq = cb_ + (TAB_M ? o[4 + BM + wm0 + r] : (mw + r) * p.c_m);
          if (run && (reinterpret_cast<unsigned long long>(rq + c[0]) & 15) == 0) {
            *reinterpret_cast<EincVec<TOut, CPT>*>(rq + c[0]) = v;
          } else {
#pragma unroll
            for (int e = 0; e < CPT; ++e)
              if (n + e < p.N) rq[c[e]] = v.v[e];
          }
        }
      }
    }
    sa = na;
    sb = nb;
  }
  if constexpr (BOX) {
    __syncthreads();  // RAW: the last tile is staged
    if (tid == 0) {
      einc_stream_box_store<Cfg::CRANK, Cfg::CBD>(cmap, ring + ((count - 1) % 3) * SLOT, CO,
                                                   bx0 + ((count - 1) & 1) * BOXB);
      einc_bulk_wait<false>();  // (complete) before the block's shared memory goes
    }
  }
}
