// einc CUDA kernel family `mma`: the gett contraction (C[b,m,n] = sum_k A[b,m,k] B[b,k,n]
// over mode groups, see gett.cuh) on tensor cores with warp-level mma.sync (sm_80+):
//
//   fp16  x fp16  -> fp32   mma.m16n8k16.f32.f16.f16.f32
//   bf16  x bf16  -> fp32   mma.m16n8k16.f32.bf16.bf16.f32
//   fp32  x fp32  -> fp32   mma.m16n8k8.f32.tf32.tf32.f32   (opt-in: precision="tf32")
//   int8  x int8  -> int32  mma.m16n8k32.s32.s8.s8.s32      (exact; wraps like numpy)
//   uint8 x uint8 -> int32  mma.m16n8k32.s32.u8.u8.s32
//
// Every instruction consumes 32 *bytes* of k per row, so the kernel is written in bytes:
// a K slice is KB = 64 or 128 bytes (two or four mma k-steps) whatever the dtype, and the
// same ldmatrix addressing serves every type whose tile is stored K-major in shared memory.
//
// Block tile BM x BN, WM x WN warps, each owning a (BM/WM) x (BN/WN) warp tile made of
// 16 x 8 mma tiles (fp32/int32 accumulators in registers). Tiles are walked grid-stride
// with GROUP_M rows of tiles column by column (L2 reuse), as in gett.
//
// Shared memory, per operand and stage, in one of two layouts chosen by the emitter from
// which of the operand's groups holds its unit-stride mode:
//   K-major  [rows][KB + 16 B pad]        fragments by ldmatrix (any dtype: an 8x8 b16
//                                          matrix is 8 rows x 16 bytes of k)
//   MN-major [KB/E k-rows][rows*E + pad]   fp16/bf16 by ldmatrix.trans; tf32 by 32-bit
//                                          loads (int8 tiles are always K-major)
// The pads make the eight 16-byte row pieces one ldmatrix phase reads fall in distinct
// bank groups (row pitch = 16 mod 128 bytes) and the 32-bit tf32 loads conflict-free
// (pitch = 32 mod 128 bytes).
//
// Global -> shared, per operand (template VEC_A / VEC_B, and the base pointer aligned at
// run time): 16-byte cp.async.cg with zero fill when the operand's fast group has a
// unit-stride innermost mode whose extent is a multiple of 16/E and all its other strides
// are multiples of 16/E (the emitter checks; then no 16-byte piece straddles a tile edge
// or a table entry), and the operand is 16-byte aligned (the runtime checks, and launches
// the element-path twin of the kernel when it is not: keeping both paths in one kernel
// cost ~100 registers). Otherwise element by element (any strides, any offset tables),
// loaded and stored at once. Both feed one S-stage ring with a single barrier per slice:
//   wait(own copies of slice kt); barrier  -- RAW for slice kt, WAR for stage kt-1
//   issue slice kt+S-1 into stage (kt-1)%S
//   mma over slice kt
// and a barrier after the last slice protects the stages from the next tile's prologue.
#pragma once
#include "common.cuh"
#include "gett.cuh"

// ---------------------------------------------------------------------------------------
// The instructions. A: four 32-bit registers (16 x 32 bytes), B: two (32 bytes x 8),
// D: four accumulators (16 x 8).
// One struct per instruction: E (element bytes), Acc, and mma(d, a, b) accumulating in d.
#define EINC_MMA_OP(NAME, ELEM, ACC, CONS, INSTR)                                                   \
  struct NAME {                                                                                     \
    static constexpr int E = ELEM;                                                                  \
    using Acc = ACC;                                                                                \
    static __device__ __forceinline__ void mma(ACC* d, const unsigned* a, const unsigned* b) {      \
      asm volatile(INSTR " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                \
                   : CONS(d[0]), CONS(d[1]), CONS(d[2]), CONS(d[3])                                  \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));             \
    }                                                                                               \
  };
EINC_MMA_OP(EincMmaF16, 2, float, "+f", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
EINC_MMA_OP(EincMmaBF16, 2, float, "+f", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
EINC_MMA_OP(EincMmaTF32, 4, float, "+f", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")
EINC_MMA_OP(EincMmaS8, 1, int, "+r", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32")
EINC_MMA_OP(EincMmaU8, 1, int, "+r", "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32")
#undef EINC_MMA_OP

__device__ __forceinline__ void einc_ldsm4(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void einc_ldsm4_t(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ unsigned einc_lds32(unsigned addr) {
  unsigned v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}
// 16-byte asynchronous copy, zero-filled (source not read) when !ok.
__device__ __forceinline__ void einc_cp16(unsigned dst, const void* src, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global" EINC_L2_HINT " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0));
#endif
}

// Raw storage word of E bytes (the kernel never converts inputs: they are the mma type).
template <int E> struct EincRaw;
template <> struct EincRaw<1> { using T = unsigned char; };
template <> struct EincRaw<2> { using T = unsigned short; };
template <> struct EincRaw<4> { using T = unsigned; };

// One operand's tile in shared memory: R rows (its M or N extent in the tile) by 64
// bytes of k, K-major or MN-major (see the header).
template <int R, int E, bool KMAJ, int KB> struct EincMmaSmem {
  static constexpr int KE = KB / E;  // k elements per slice
  static constexpr int PITCH = KMAJ ? KB + 16 : R * E + (E == 4 ? 32 : 16);
  static constexpr int BYTES = (KMAJ ? R : KE) * PITCH;
  static __device__ __forceinline__ int at(int r, int k) { return KMAJ ? r * PITCH + k * E : k * PITCH + r * E; }
};

template <int BM_, int BN_, int WM_, int WN_, int S_, int KB_> struct EincMmaTile {
  static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, S = S_, KB = KB_;  // KB: bytes of k a slice
  static constexpr int NT = WM * WN * 32;
  static constexpr int TM = BM / WM, TN = BN / WN;  // warp tile
  static constexpr int MI = TM / 16, NI = TN / 8;   // mma tiles per warp
  static constexpr int GROUP_M = 8;
};

// Where one operand's data lives: R-group (M for A, N for B) and K-group addressing.
template <bool TAB_R, bool TAB_K> struct EincMmaSrc {
  const unsigned char* base;  // batch's origin, in bytes
  long long s_r, s_k;         // element strides of single-mode groups
  const long long* t_r;       // offset tables of multi-mode groups
  const long long* t_k;
  long long R, K;             // group extents
};

// Copies one operand's slices into shared memory. A loader lives for one tile: its
// constructor resolves the rows (the R group) this thread touches, so a slice only adds
// the k part. VEC: 16-byte cp.async pieces; else element by element, loaded and stored
// at once (holding them across the mma would cost more registers than the accumulators
// leave).
template <int R, int E, int NT, bool KMAJ, bool VEC, bool TAB_R, bool TAB_K, int KB> struct EincMmaLoader {
  using L = EincMmaSmem<R, E, KMAJ, KB>;
  using Raw = typename EincRaw<E>::T;
  static constexpr int KE = L::KE, VE = 16 / E, PR = KB / 16;  // PR: pieces per K-major row
  static constexpr int NV = R * PR / NT;  // 16-byte pieces per thread per slice
  static constexpr int NS = R * KE / NT;  // elements per thread per slice (element path)
  static_assert((R * PR) % NT == 0 && (R * KE) % NT == 0, "whole loads per thread");
  static constexpr int N = VEC ? NV : NS;

  const EincMmaSrc<TAB_R, TAB_K>& s;
  const long long r0;
  // VEC: this thread's row (R index) origins, null when out of range; the element path
  // finds them per element instead (16+ of them would not fit in registers)
  const unsigned char* row[VEC ? N : 1];

  // piece or element i of this thread: (row in tile, k in slice)
  static __device__ __forceinline__ void where(int i, int& r, int& k) {
    const int c = threadIdx.x + i * NT;
    if constexpr (VEC) {
      if (KMAJ) {
        r = c / PR;
        k = (c % PR) * VE;
      } else {
        constexpr int CPR = R * E / 16;
        k = c / CPR;
        r = (c % CPR) * VE;
      }
    } else if (KMAJ) {  // consecutive threads along k (the fast axis in global memory too)
      r = c / KE;
      k = c % KE;
    } else {
      k = c / R;
      r = c % R;
    }
  }

  __device__ __forceinline__ EincMmaLoader(const EincMmaSrc<TAB_R, TAB_K>& src, long long r0_) : s(src), r0(r0_) {
    if constexpr (VEC) {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        int r, k;
        where(i, r, k);
        row[i] = r0 + r < s.R ? s.base + einc_goff<TAB_R>(r0 + r, s.s_r, s.t_r) * E : nullptr;
      }
    }
  }

  // Slice starting at k0 into shared memory at `smem`.
  __device__ __forceinline__ void issue(long long k0, unsigned smem) const {
    if constexpr (VEC) {
#pragma unroll
      for (int i = 0; i < NV; ++i) {
        int r, k;
        where(i, r, k);
        const bool ok = row[i] != nullptr && k0 + k < s.K;
        const unsigned char* src = ok ? row[i] + einc_goff<TAB_K>(k0 + k, s.s_k, s.t_k) * E : s.base;
        einc_cp16(smem + L::at(r, k), src, ok);
      }
    } else {
      constexpr int U = NS < 4 ? NS : 4;  // loads in flight before their stores
#pragma unroll 1
      for (int i0 = 0; i0 < NS; i0 += U) {  // rolled: unrolled, the addresses spill
        Raw v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          int r, k;
          where(i0 + u, r, k);
          const bool ok = r0 + r < s.R && k0 + k < s.K;
          v[u] = ok ? __ldg(reinterpret_cast<const Raw*>(
                          s.base + (einc_goff<TAB_R>(r0 + r, s.s_r, s.t_r) + einc_goff<TAB_K>(k0 + k, s.s_k, s.t_k)) * E))
                    : Raw(0);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          int r, k;
          where(i0 + u, r, k);
          asm volatile("{\n .reg .b32 t;\n mov.b32 t, %1;\n st.shared.b%2 [%0], t;\n}\n" ::"r"(smem + L::at(r, k)),
                       "r"(static_cast<unsigned>(v[u])), "n"(E == 1 ? 8 : E == 2 ? 16 : 32));
        }
      }
    }
  }
};

// A fragments (16 rows x 32 bytes of k at byte kb) and B fragments (8 rows x 32 bytes).
template <class Op, int R, bool KMAJ, int KB> struct EincMmaFrag {
  using L = EincMmaSmem<R, Op::E, KMAJ, KB>;
  static constexpr int E = Op::E;
  // A: rows r0..r0+15
  static __device__ __forceinline__ void a(unsigned* f, unsigned smem, int r0, int kb) {
    const int l = threadIdx.x & 31, g = l >> 2, t = l & 3;
    if constexpr (KMAJ) {
      einc_ldsm4(f, smem + (r0 + (l & 15)) * L::PITCH + kb + (l >> 4) * 16);
    } else if constexpr (E == 2) {
      einc_ldsm4_t(f, smem + L::at(r0 + ((l >> 3) & 1) * 8, kb / 2 + (l & 7) + (l >> 4) * 8));
    } else if constexpr (E == 4) {
      const int k = kb / 4 + t;
      f[0] = einc_lds32(smem + L::at(r0 + g, k));
      f[1] = einc_lds32(smem + L::at(r0 + g + 8, k));
      f[2] = einc_lds32(smem + L::at(r0 + g, k + 4));
      f[3] = einc_lds32(smem + L::at(r0 + g + 8, k + 4));
    } else {
      static_assert(E != 1, "int8 tiles are K-major");
    }
  }
  // B: two 8-row tiles n0..n0+7 (f[0], f[1]) and n0+8..n0+15 (f[2], f[3])
  static __device__ __forceinline__ void b2(unsigned* f, unsigned smem, int n0, int kb) {
    const int l = threadIdx.x & 31, g = l >> 2, t = l & 3;
    if constexpr (KMAJ) {
      einc_ldsm4(f, smem + (n0 + (l & 7) + (l >> 4) * 8) * L::PITCH + kb + ((l >> 3) & 1) * 16);
    } else if constexpr (E == 2) {
      einc_ldsm4_t(f, smem + L::at(n0 + (l >> 4) * 8, kb / 2 + (l & 7) + ((l >> 3) & 1) * 8));
    } else if constexpr (E == 4) {
      const int k = kb / 4 + t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        f[2 * h] = einc_lds32(smem + L::at(n0 + 8 * h + g, k));
        f[2 * h + 1] = einc_lds32(smem + L::at(n0 + 8 * h + g, k + 4));
      }
    } else {
      static_assert(E != 1, "int8 tiles are K-major");
    }
  }
};

// One K slice (KB bytes of k, shared-memory tiles at sa / sb) into a warp's MI x NI mma
// tiles at rows wm0 and columns wn0 of the block tile. Shared by mma and stream_mma.
template <class Op, int BM, int BN, bool A_KMAJ, bool B_KMAJ, int KB, int MI, int NI, class Acc>
__device__ __forceinline__ void einc_mma_slice(Acc (&acc)[MI][NI][4], unsigned sa, unsigned sb, int wm0, int wn0) {
#pragma unroll
  for (int kb = 0; kb < KB; kb += 32) {
    unsigned fa[MI][4], fb[NI][2];
#pragma unroll
    for (int i = 0; i < MI; ++i) EincMmaFrag<Op, BM, A_KMAJ, KB>::a(fa[i], sa, wm0 + i * 16, kb);
#pragma unroll
    for (int j = 0; j < NI; j += 2) {
      unsigned f[4];
      EincMmaFrag<Op, BN, B_KMAJ, KB>::b2(f, sb, wn0 + j * 8, kb);
      fb[j][0] = f[0];
      fb[j][1] = f[1];
      fb[j + 1][0] = f[2];
      fb[j + 1][1] = f[3];
    }
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) Op::mma(acc[i][j], fa[i], fb[j]);
  }
}

template <class Cfg, class Op, bool TAB_B, bool TAB_M, bool TAB_N, bool TAB_K, bool A_KMAJ, bool B_KMAJ,
          bool VEC_A, bool VEC_B, class TOut, class TC, class TA>
__device__ __forceinline__ void einc_mma_gett(void* __restrict__ out, const void* __restrict__ a_ptr,
                                              const void* __restrict__ b_ptr, const EincGettMeta& p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, NT = Cfg::NT, S = Cfg::S, E = Op::E;
  constexpr int MI = Cfg::MI, NI = Cfg::NI;
  constexpr int KB = Cfg::KB;
  using LA = EincMmaSmem<BM, E, A_KMAJ, KB>;
  using LB = EincMmaSmem<BN, E, B_KMAJ, KB>;
  constexpr int STAGE = LA::BYTES + LB::BYTES;
  static_assert(NI % 2 == 0, "B fragments come in pairs of 8-column tiles");
  static_assert(S >= 2, "at least double buffering");
  using Acc = typename Op::Acc;

  extern __shared__ __align__(128) unsigned char einc_mma_smem[];
  const unsigned smem0 = static_cast<unsigned>(__cvta_generic_to_shared(einc_mma_smem));
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm0 = (warp / Cfg::WN) * Cfg::TM, wn0 = (warp % Cfg::WN) * Cfg::TN;

  // VEC_A / VEC_B: 16-byte pieces (the emitter checked the strides; the runtime checks the
  // operands are 16-byte aligned before it launches this variant).
  using LoadA = EincMmaLoader<BM, E, NT, A_KMAJ, VEC_A, TAB_M, TAB_K, KB>;
  using LoadB = EincMmaLoader<BN, E, NT, B_KMAJ, VEC_B, TAB_N, TAB_K, KB>;

  const long long per_batch = p.tiles_m * p.tiles_n;
  const long long tiles = per_batch * p.batch;
  const int nk = static_cast<int>((p.K + LA::KE - 1) / LA::KE);

  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    long long bi, m0, n0;
    einc_tile_origin<Cfg::GROUP_M>(tile, p, BM, BN, bi, m0, n0);

    const EincMmaSrc<TAB_M, TAB_K> sa{
        static_cast<const unsigned char*>(a_ptr) + einc_goff<TAB_B>(bi, p.a_b, p.ta_b) * E,
        p.a_m, p.a_k, p.ta_m, p.ta_k, p.M, p.K};
    const EincMmaSrc<TAB_N, TAB_K> sb{
        static_cast<const unsigned char*>(b_ptr) + einc_goff<TAB_B>(bi, p.b_b, p.tb_b) * E,
        p.b_n, p.b_k, p.tb_n, p.tb_k, p.N, p.K};

    const LoadA la(sa, m0);
    const LoadB lb(sb, n0);
    auto issue = [&](int kt, int stage) {
      const unsigned st = smem0 + stage * STAGE;
      const long long k0 = static_cast<long long>(kt) * LA::KE;
      la.issue(k0, st);
      lb.issue(k0, st + LA::BYTES);
    };

    Acc acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = Acc(0);

#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      if (s < nk) issue(s, s);
      einc_cp_commit();  // empty groups keep the count uniform
    }
    int stage = 0;
    for (int kt = 0; kt < nk; ++kt) {
      einc_cp_wait<S - 2>();
      __syncthreads();
      const int nxt = kt + S - 1;
      const int nstage = stage == 0 ? S - 1 : stage - 1;
      if (nxt < nk) issue(nxt, nstage);
      einc_cp_commit();
      const unsigned sa_s = smem0 + stage * STAGE, sb_s = sa_s + LA::BYTES;
      einc_mma_slice<Op, BM, BN, A_KMAJ, B_KMAJ, KB>(acc, sa_s, sb_s, wm0, wn0);
      stage = stage == S - 1 ? 0 : stage + 1;
    }
    einc_cp_wait<0>();
    __syncthreads();  // WAR: the next tile's prologue refills the stages

    // Masked store through the compute type: accumulator (i, j, q) is row
    // g + 8*(q/2) and column 2*t + q%2 of mma tile (i, j).
    const int g = lane >> 2, t = lane & 3;
    const long long c_base = einc_goff<TAB_B>(bi, p.c_b, p.tc_b);
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long m = m0 + wm0 + i * 16 + g + 8 * h;
        if (m >= p.M) continue;
        TOut* __restrict__ c_row = C + c_base + einc_goff<TAB_M>(m, p.c_m, p.tc_m);
#pragma unroll
        for (int j = 0; j < NI; ++j) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const long long n = n0 + wn0 + j * 8 + 2 * t + e;
            if (n < p.N) store_as<TC>(c_row + einc_goff<TAB_N>(n, p.c_n, p.tc_n), static_cast<TA>(acc[i][j][2 * h + e]));
          }
        }
      }
    }
  }
}
