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
// Global -> shared: every thread copies 16-byte pieces with cp.async (zero-filled out of
// range), eight consecutive threads per 128-byte row (coalesced). The emitter takes this
// path only when each operand's fast group is 16-byte contiguous (as mma.cuh's VEC path)
// and the runtime only with 16-byte aligned operands (else the mma twin runs).
//
// Pipeline, one barrier per slice, one wgmma group in flight:
//   wait(own copies of slice kt); fence.proxy.async; barrier
//       RAW for slice kt; and every warpgroup has retired wgmma(kt-2) (wait_group 1 at
//       the end of slice kt-1), so stage (kt-2)%S is free
//   issue slice kt+S-2 into stage (kt+S-2)%S
//   wgmma.fence; BK/32 wgmma on stage kt; commit; wait_group 1 (wgmma(kt-1) retired)
#pragma once
#include "common.cuh"
#include "gett.cuh"
#include "mma.cuh"

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

// The tile's smem byte offset of 16-byte piece (row r, piece c) in a K-major SW128 tile.
__device__ __forceinline__ int einc_sw128(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }

// `Mma` is the emitter's struct with E (element bytes), Acc, the accumulator count NACC
// (BN/2) and `static void run(Acc* d, desc a, desc b)` issuing one wgmma.
template <int BM_, int BN_, int S_> struct EincWgmmaTile {
  static constexpr int BM = BM_, BN = BN_, S = S_;
  static constexpr int WG = BM / 64, NT = WG * 128;
  static constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE = A_BYTES + B_BYTES;
  static constexpr int GROUP_M = 8;
};

template <class Cfg, class Mma, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool B_KMAJ, class TOut,
          class TC, class TA>
__device__ __forceinline__ void einc_wgmma_gett(void* __restrict__ out, const void* __restrict__ a_ptr,
                                                const void* __restrict__ b_ptr, const EincGettMeta& p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, NT = Cfg::NT, S = Cfg::S, E = Mma::E, KE = 128 / E, VE = 16 / E;
  static_assert(S >= 3, "one stage computing, one retiring, one loading");
  using Acc = typename Mma::Acc;

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
    einc_tile_origin<Cfg::GROUP_M>(tile, p, BM, BN, bi, m0, n0);

    const unsigned char* a_base = static_cast<const unsigned char*>(a_ptr) + einc_goff<TAB_B>(bi, p.a_b, p.ta_b) * E;
    const unsigned char* b_base = static_cast<const unsigned char*>(b_ptr) + einc_goff<TAB_B>(bi, p.b_b, p.tb_b) * E;

    // This thread's pieces: A rows (BM*8 pieces), B rows or k-rows (BN*8 pieces).
    constexpr int PA = BM * 8 / NT, PB = BN * 8 / NT;
    const unsigned char* a_row[PA];
    const unsigned char* b_row[PB];
#pragma unroll
    for (int i = 0; i < PA; ++i) {
      const int r = (tid + i * NT) >> 3;
      a_row[i] = m0 + r < p.M ? a_base + einc_goff<TAB_M>(m0 + r, p.a_m, p.ta_m) * E : nullptr;
    }
#pragma unroll
    for (int i = 0; i < PB; ++i) {
      const int c = tid + i * NT;
      if constexpr (B_KMAJ) {
        const int r = c >> 3;
        b_row[i] = n0 + r < p.N ? b_base + einc_goff<TAB_N>(n0 + r, p.b_n, p.tb_n) * E : nullptr;
      } else {  // piece c: k-row c / (BN/8), n = (c % (BN/8)) * 8
        const int n = (c % (BN / 8)) * VE;
        b_row[i] = n0 + n < p.N ? b_base + einc_goff<TAB_N>(n0 + n, p.b_n, p.tb_n) * E : nullptr;
      }
    }

    auto issue = [&](int kt, int stage) {
      const unsigned sa = smem0 + stage * Cfg::STAGE, sb = sa + Cfg::A_BYTES;
      const long long k0 = static_cast<long long>(kt) * KE;
#pragma unroll
      for (int i = 0; i < PA; ++i) {
        const int c = tid + i * NT, r = c >> 3, pc = c & 7;
        const bool ok = a_row[i] != nullptr && k0 + pc * VE < p.K;
        const unsigned char* src = ok ? a_row[i] + einc_goff<TAB_K>(k0 + pc * VE, p.a_k, p.ta_k) * E : a_base;
        einc_cp16(sa + einc_sw128(r, pc), src, ok);
      }
#pragma unroll
      for (int i = 0; i < PB; ++i) {
        const int c = tid + i * NT;
        if constexpr (B_KMAJ) {
          const int r = c >> 3, pc = c & 7;
          const bool ok = b_row[i] != nullptr && k0 + pc * VE < p.K;
          const unsigned char* src = ok ? b_row[i] + einc_goff<TAB_K>(k0 + pc * VE, p.b_k, p.tb_k) * E : b_base;
          einc_cp16(sb + einc_sw128(r, pc), src, ok);
        } else {
          const int k = c / (BN / 8), nc = c % (BN / 8);  // 16-byte piece nc of k-row k
          const bool ok = b_row[i] != nullptr && k0 + k < p.K;
          const unsigned char* src = ok ? b_row[i] + einc_goff<TAB_K>(k0 + k, p.b_k, p.tb_k) * E : b_base;
          // atom (k / 8, nc / 8), row k % 8, piece nc % 8
          const int off = ((k >> 3) * (BN / 64) + (nc >> 3)) * 1024 + einc_sw128(k & 7, nc & 7);
          einc_cp16(sb + off, src, ok);
        }
      }
    };

    Acc d[Mma::NACC];
#pragma unroll
    for (int j = 0; j < Mma::NACC; ++j) d[j] = Acc(0);

#pragma unroll
    for (int s = 0; s < S - 2; ++s) {
      if (s < nk) issue(s, s);
      einc_cp_commit();
    }
    for (int kt = 0; kt < nk; ++kt) {
      const int stage = kt % S;
      einc_cp_wait<S - 3>();
      einc_fence_async_smem();
      __syncthreads();
      if (kt + S - 2 < nk) issue(kt + S - 2, (kt + S - 2) % S);
      einc_cp_commit();
      const unsigned sa = smem0 + stage * Cfg::STAGE + wg * 64 * 128, sb = smem0 + stage * Cfg::STAGE + Cfg::A_BYTES;
      einc_wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {  // 4 x 32 bytes of k
        const unsigned long long da = einc_gmma_desc(sa + ks * 32, 16, 1024);
        const unsigned long long db = B_KMAJ ? einc_gmma_desc(sb + ks * 32, 16, 1024)
                                             : einc_gmma_desc(sb + ks * 2 * (BN / 64) * 1024, Mma::LBO_MN,
                                                              Mma::SBO_MN);
        Mma::run(d, da, db);
      }
      einc_wgmma_commit();
      einc_wgmma_wait<1>();
    }
    einc_wgmma_wait<0>();
    einc_cp_wait<0>();
    __syncthreads();  // WAR: every warpgroup is done with the stages before they hold C

    // Epilogue through shared memory (the stages are free now): the accumulators go in as
    // fp32/int32 pairs (row pitch BN + 8 words: the 8-byte stores of a half-warp hit 32
    // distinct banks), then threads walk rows with their column offsets looked up once, so
    // a warp's stores are 64 consecutive columns of one row.
    // Accumulator 4j+q sits at row 16*warp + g + 8*(q/2) of the warpgroup's 64, column
    // 8j + 2t + q%2.
    constexpr int PITCH = BN + 8;
    static_assert(BM * PITCH * 4 + BM * 8 <= S * Cfg::STAGE, "the staging tile and row offsets fit");
    Acc* stile = reinterpret_cast<Acc*>(einc_wgmma_smem_raw + (smem0 - raw0));
    {
      const int w = (tid >> 5) & 3, g = (tid & 31) >> 2, t = tid & 3;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        Acc* row = stile + (wg * 64 + w * 16 + g + 8 * h) * PITCH + 2 * t;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          EincVec<Acc, 2> v;
          v.v[0] = d[4 * j + 2 * h];
          v.v[1] = d[4 * j + 2 * h + 1];
          *reinterpret_cast<EincVec<Acc, 2>*>(row + 8 * j) = v;
        }
      }
    }
    // Row offsets of C for this tile, looked up once (a row's threads all need them).
    long long* rowoff = reinterpret_cast<long long*>(stile + BM * PITCH);
    for (int r = tid; r < BM; r += NT)
      rowoff[r] = m0 + r < p.M ? einc_goff<TAB_B>(bi, p.c_b, p.tc_b) + einc_goff<TAB_M>(m0 + r, p.c_m, p.tc_m) : 0;
    __syncthreads();  // RAW: the whole tile and its row offsets are staged
    // Each thread owns two adjacent columns and walks rows; where C holds the two side by
    // side (and aligned) they go out as one store. ncu on ccsd_t (K = 24, every output
    // written once): the epilogue's instruction count was the limit, not DRAM (12%).
    constexpr int HALF = BN / 2, RSTEP = NT / HALF;
    const int col = 2 * (tid % HALF);
    const long long n = n0 + col;
    if (n < p.N) {
      const long long c0 = einc_goff<TAB_N>(n, p.c_n, p.tc_n);
      const bool two = n + 1 < p.N;
      const long long c1 = two ? einc_goff<TAB_N>(n + 1, p.c_n, p.tc_n) : 0;
      const bool pair = two && c1 == c0 + 1;
      const long long rows = p.M - m0 < BM ? p.M - m0 : BM;
#pragma unroll 4
      for (int r = tid / HALF; r < rows; r += RSTEP) {
        const EincVec<Acc, 2> v = *reinterpret_cast<const EincVec<Acc, 2>*>(stile + r * PITCH + col);
        TOut* q = C + rowoff[r] + c0;
        if (pair && (reinterpret_cast<unsigned long long>(q) & (2 * sizeof(TOut) - 1)) == 0) {
          EincVec<TOut, 2> w;
          w.v[0] = EincStore<TOut>::f(cast<TC>(static_cast<TA>(v.v[0])));
          w.v[1] = EincStore<TOut>::f(cast<TC>(static_cast<TA>(v.v[1])));
          *reinterpret_cast<EincVec<TOut, 2>*>(q) = w;
        } else {
          store_as<TC>(q, static_cast<TA>(v.v[0]));
          if (two) store_as<TC>(C + rowoff[r] + c1, static_cast<TA>(v.v[1]));
        }
      }
    }
    __syncthreads();  // WAR: the next tile's prologue refills the stages
  }
}
