// einc CUDA kernel family `smallmn`: a GEMM step whose whole output is small (M and N
// at most 128) and whose K is huge, e.g. `abcd,dbea->ec` at 72^5 (M = c = 72, N = e = 72,
// K = a b d = 373,248):
//
//   C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]        (b: batch, usually K-slice indices)
//
// A 64x64 or 128x128 GEMM tile wastes most of its work on a 72x72 output. Here every block
// owns the WHOLE output (RP = TM*RM rows x CP = TN*RN columns, exactly sized, RM x RN
// registers per thread) of one part of K and writes it as a partial tile; the plan
// (plan.smallmn_steps) sums the partial tiles afterwards in a fixed order (deterministic).
// The flat split (the plan's default; K uncut, no batch) gives exactly one part per
// resident block, every parts-th slice of the K walk, equal to within a slice, so no SM runs
// a second wave of whole parts (at 72^5 the cut's 243 batch indices on 132 one-block SMs left
// 111 SMs with 48 slices and 21 with 24). The cut split (EINC_SMALLMN_FLAT=0) cuts K modes
// into (slice, rest), batch modes here addressed through offset tables, one part per batch
// index.
//
// K is walked as a box: x (A's unit-stride K mode when it has one), y (B's unit-stride K
// mode when it is another one, else a second K mode when x is short, else absent) and
// `rest` (every other K mode: one stride, or offset tables ra/rb of R entries). A slice is
// TX x TY = BK (32, or 64 as an experiment) consecutive (x, y) of one rest index; a block
// walks its part's slices x-block fastest, then y-block, then rest (a cursor, divisions only
// where a part starts). So both operands are read along their own unit stride (no transposed copy
// of B first): A's loads run along x, B's along y, in runs of TX or TY elements. Rows of
// A and B come from a stride (one M or N mode) or the shared-memory tables; offsets are
// 32-bit when both operands span fewer than 2^31 elements.
//
// Shared memory: the M and N row offsets of A and B (int64, filled once), then an S-stage
// ring of slices, As[RP][PITCH] and Bs[CP][PITCH] per stage, k contiguous (PITCH = BK + one
// 16-byte pad, so rows are 16-byte aligned and successive rows start 4 banks apart).
//
// Loads of a slice (every thread, NT = a multiple of 32): scalar (4- or 8-byte cp.async):
// warp w loads rows w + NW i, lane l the k e = l + 32 h (h < BK/32) of the slice at
// (dx, dy) = (e % TX, e / TX) when the operand is x-fast (ORD 0), (e / TY, e % TY) when
// y-fast (ORD 1); the smem k index is always kk = dy TX + dx, a permutation of the lanes
// (conflict-free stores). Vector (VEC: an x-fast operand with unit stride, TX a multiple of
// the 16-byte piece V, and every offset a multiple of V, which the emitter checks; the
// runtime launches the scalar twin when the pointer is not 16-byte aligned): thread t
// copies piece t % (BK/V) of the rows t / (BK/V) + (NT / (BK/V)) i. Out-of-range rows and
// k arrive as zeros (copies of 0 bytes, which read nothing).
//
// Compute: KG groups of TM x TN threads; group g multiplies the k in [g BK/KG, (g+1) BK/KG)
// of every slice; thread (ty, tx) owns rows ty + TM i and columns tx + TN j, reading QK =
// 16 bytes of k per row and column at once (one LDS.128 each): RM + RN loads per
// QK RM RN multiply-adds. The groups' sums meet in shared memory at the end of a part
// (group 0 adds groups 1.. in order) before group 0 stores.
// fp32 steps (DM, the emitter's default on sm_90) multiply on the fp64 tensor cores instead:
// each warp owns RM x RN fragments of 16 x 8 (mma.sync m16n8k16 .f64), converting its A and
// B pieces from fp32 as it reads them (exact), so products are exact and sums carry 53 bits;
// each output of the block's partial tile rounds once, to the output's type. 72^5 measured
// 0.154-0.175 ms against the FFMA tile's 0.187-0.189 in the same runs (session 11; m8n8k4,
// sm_80's shape, ran at half the rate).
//
// Pipelines:
//  - ASYNC (storage = accumulator type: fp32, fp64, int32, int64): S-stage cp.async ring.
//    At slice j: wait for this thread's copies of slice j; barrier (RAW for slice j, WAR for
//    the stage slice j-1 used); issue slice j+S-1 into that stage; multiply slice j.
//  - otherwise (fp16, bf16, int8, ...: converted on load): slice j+1 in registers while
//    slice j is multiplied, then stored into the other of two stages; one barrier a slice.
//  After the last slice a barrier frees the ring for the group reduction (which aliases it),
//  and a last barrier after the store frees it for the next part's prologue (WAR).
#pragma once
#include "common.cuh"
#include "gett.cuh"
#include "skinny.cuh"

struct EincSmallMeta {
  long long M, N;            // rows of A (the M group) and of B (the N group)
  long long ex, ey, R;       // the K box: extents of x and y (1: absent), rest count
  long long nx, ny, slices;  // slices along x and y; R * nx * ny in all
  long long batch;           // batch indices of the K walk (the plan's cut, or 1)
  long long parts;           // partial tiles: = batch, the cut split (tile p at tc_b[p]); else the flat split
  long long c_part;          // flat split: C elements between parts' tiles
  long long step_x, step_y, step_r;  // a part's stride through the slices, as (x, y, rest) digits
  long long a_x, a_y, a_r;   // strides in A of x, y and the rest (one mode; 0 with tables)
  long long b_x, b_y, b_r;
  long long a_m, b_n;        // row strides of A and B when M (N) is one mode (ROWS_A / ROWS_B strided)
  const long long* ta_m;     // A offsets of the M rows, B offsets of the N rows
  const long long* tb_n;
  const long long* tc_m;     // C offsets of M and N
  const long long* tc_n;
  const long long* ta_r;     // rest offsets (TAB_R), else null
  const long long* tb_r;
  const long long* ta_b;     // batch offsets in A, B and C (batch entries each)
  const long long* tb_b;
  const long long* tc_b;
};

template <int RM_, int RN_, int TM_, int TN_, int KG_, int TX_, int S_, int BK_ = 32, int QU_ = 1, bool OCT_ = false,
          bool DM_ = false>
struct EincSmallTile {
  static constexpr int RM = RM_, RN = RN_, TM = TM_, TN = TN_, KG = KG_, TX = TX_, S = S_, BK = BK_, QU = QU_;
  static constexpr bool OCT = OCT_;  // octet thread order (see einc_small_place)
  // DM: fp32 products on the fp64 tensor cores (einc_dmma<16>): each warp owns RM x RN
  // fragments of 16 x 8, the group TM x TN warps; else each thread RM x RN, the group TM x TN threads
  static constexpr bool DM = DM_;
  static constexpr int TY = BK / TX, RP = (DM ? 16 : 1) * TM * RM, CP = (DM ? 8 : 1) * TN * RN;
  static constexpr int G = (DM ? 32 : 1) * TM * TN, H = BK / 32;
  static constexpr int NT = (KG * G + 31) / 32 * 32, NW = NT / 32;
  static_assert(TX * TY == BK && BK % 32 == 0 && BK % KG == 0, "a slice is 32 or 64 k, split evenly over groups");
};

// Elements of padding after each ring row: one 16-byte piece (rows start 4 banks apart), or
// 16 elements with DM (fp32: rows 16 banks apart, so a fragment load's two rows of a
// quarter-warp cover the 32 banks once).
template <class Cfg, class TA> constexpr int einc_small_pad() {
  return Cfg::DM ? 16 : 16 / static_cast<int>(sizeof(TA));
}

// (einc_dmma, the fp64 fragment product, is in gett.cuh)

// Thread u of a compute group -> (ty, tx). Plain: u = ty TN + tx. With TN = 12 a quarter-warp
// (8 threads: one phase of an LDS.128) can hold columns c and c + 8 (tx 8..11 of one row and
// 0..3 of the next), whose B rows start in the same banks: a 2-way conflict. OCT (experiment,
// TN = 8F + W with W in {1, 2, 4}): bands of P = 8 / W rows, the P rows' first 8F columns in
// whole octets, then the last W columns of all P rows in one octet (same columns: broadcast).
template <class Cfg> __device__ __forceinline__ void einc_small_place(int u, int& ty, int& tx) {
  constexpr int TN = Cfg::TN, F = TN / 8, W = TN % 8, P = W ? 8 / W : 1, BAND = P * TN;
  if constexpr (Cfg::OCT && W != 0) {
    static_assert(8 % W == 0 && Cfg::TM % P == 0, "octet order: whole bands");
    const int band = u / BAND, v = u - band * BAND;
    if (v < P * 8 * F) {
      ty = band * P + v / (8 * F);
      tx = v % (8 * F);
    } else {
      ty = band * P + (v - P * 8 * F) / W;
      tx = 8 * F + (v - P * 8 * F) % W;
    }
  } else {
    ty = u / TN;
    tx = u - ty * TN;
  }
}

// Bytes of shared memory: row-offset tables, then the ring (or the group reduction area).
template <class Cfg, class TA> constexpr int einc_small_smem() {
  constexpr int pitch = Cfg::BK + einc_small_pad<Cfg, TA>();
  constexpr int tables = (Cfg::RP + Cfg::CP + 1) / 2 * 16;
  constexpr int ring = Cfg::S * (Cfg::RP + Cfg::CP) * pitch * static_cast<int>(sizeof(TA));
  constexpr int red = (Cfg::KG - 1) * Cfg::RP * Cfg::CP * (Cfg::DM ? 8 : static_cast<int>(sizeof(TA)));  // (DM: fp64 sums)
  return tables + (ring > red ? ring : red);
}

// Element offsets into A and B: 32-bit when both operands span fewer than 2^31 elements
// (the emitter checks; a 32-bit offset makes each address one IMAD.WIDE), else 64-bit.
template <bool OFF32> struct EincSmallOff { using T = long long; };
template <> struct EincSmallOff<true> { using T = int; };

template <class Cfg, bool ASYNC, bool TAB_R, int A_ORD, int B_ORD, bool A_VEC, bool B_VEC, bool STRIDE_A,
          bool STRIDE_B, bool OFF32, class TOut, class TC, class TA, class SA, class SB>
__device__ __forceinline__ void einc_smallmn(void* __restrict__ out, const void* __restrict__ a_ptr,
                                             const void* __restrict__ b_ptr, const EincSmallMeta& p) {
  constexpr int RM = Cfg::RM, RN = Cfg::RN, TM = Cfg::TM, TN = Cfg::TN, KG = Cfg::KG, G = Cfg::G;
  constexpr int TX = Cfg::TX, TY = Cfg::TY, BK = Cfg::BK, RP = Cfg::RP, CP = Cfg::CP;
  constexpr int NT = Cfg::NT, NW = Cfg::NW, S = ASYNC ? Cfg::S : 2;
  constexpr int QK = 16 / static_cast<int>(sizeof(TA)), PITCH = BK + einc_small_pad<Cfg, TA>(), KQ = BK / KG;
  constexpr bool DM = Cfg::DM;
  static_assert(KQ % QK == 0, "each group multiplies whole 16-byte pieces of k");
  static_assert(!DM || (sizeof(TA) == 4 && KQ % 16 == 0), "fragments: fp32, 16 k per product");
  static_assert(!ASYNC || (sizeof(SA) == sizeof(TA) && sizeof(SB) == sizeof(TA)), "async copies move raw bits");
  static_assert(S >= 2, "at least double buffering");
  constexpr int VA = 16 / static_cast<int>(sizeof(SA)), VB = 16 / static_cast<int>(sizeof(SB));
  static_assert(!A_VEC || (ASYNC && A_ORD == 0 && TX % VA == 0), "A's pieces: async, x-fast, whole pieces");
  static_assert(!B_VEC || (ASYNC && B_ORD == 0 && TX % VB == 0), "B's pieces: async, x-fast, whole pieces");
#ifdef EINC_HOST_EMULATION  // the CPU emulator's threads of one block share a static buffer
  alignas(16) static unsigned char einc_smem[einc_small_smem<Cfg, TA>()];
#else
  extern __shared__ __align__(16) unsigned char einc_smem[];
#endif
  long long* s_am = reinterpret_cast<long long*>(einc_smem);  // [RP]: A offset of row m (m < M)
  long long* s_bn = s_am + RP;                                // [CP]: B offset of row n (n < N)
  TA* ring = reinterpret_cast<TA*>(einc_smem + (RP + CP + 1) / 2 * 16);
  constexpr int STAGE = (RP + CP) * PITCH;  // elements of one stage: A rows, then B rows

  const SA* __restrict__ A = static_cast<const SA*>(a_ptr);
  const SB* __restrict__ B = static_cast<const SB*>(b_ptr);
  TOut* __restrict__ C = static_cast<TOut*>(out);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int M = static_cast<int>(p.M), N = static_cast<int>(p.N);

  for (int r = tid; r < RP; r += NT) s_am[r] = r < M ? __ldg(p.ta_m + r) : 0;
  for (int r = tid; r < CP; r += NT) s_bn[r] = r < N ? __ldg(p.tb_n + r) : 0;
  __syncthreads();  // RAW: the row tables are complete

  // This thread's places in a slice for scalar loads: the k lane + 32 h (h < H) of its
  // rows, as (dx, dy), offset and smem k index.
  constexpr int H = Cfg::H;
  using O = typename EincSmallOff<OFF32>::T;
  int adx[H], ady[H], bdx[H], bdy[H], a_kk[H], b_kk[H];
  O a_koff[H], b_koff[H];
#pragma unroll
  for (int h = 0; h < H; ++h) {
    const int e = lane + 32 * h;
    adx[h] = A_ORD == 0 ? e % TX : e / TY;
    ady[h] = A_ORD == 0 ? e / TX : e % TY;
    bdx[h] = B_ORD == 0 ? e % TX : e / TY;
    bdy[h] = B_ORD == 0 ? e / TX : e % TY;
    a_koff[h] = static_cast<O>(adx[h] * p.a_x + ady[h] * p.a_y);
    b_koff[h] = static_cast<O>(bdx[h] * p.b_x + bdy[h] * p.b_y);
    a_kk[h] = ady[h] * TX + adx[h];
    b_kk[h] = bdy[h] * TX + bdx[h];
  }
  // Vector pieces: piece q of a row holds k [V q, V q + V) = x [dx0, dx0 + V) at one dy.
  constexpr int PA = BK / VA, PB = BK / VB;  // pieces per row
  const int aq = tid % PA, bq = tid % PB;
  const int a_vdx = (VA * aq) % TX, a_vdy = (VA * aq) / TX, b_vdx = (VB * bq) % TX, b_vdy = (VB * bq) / TX;
  const O a_vkoff = static_cast<O>(a_vdx + a_vdy * p.a_y), b_vkoff = static_cast<O>(b_vdx + b_vdy * p.b_y);  // (x stride 1)

  // The next slice's base offsets (its batch index's included) and how many x and y of its
  // box exist. A part's slices are loaded in order, so a cursor (rest index, y block, x
  // block) advanced by the part's stride in those digits replaces divisions; `seek` places
  // it at slice f of the batch index cb's walk.
  int cx = 0, cy = 0, cr = 0, cb = 0;  // (the emitter keeps batch x slices below 2^31)
  O ab = 0, bb = 0;
  auto seek = [&](int batch_index, long long f) {
    cb = batch_index;
    ab = static_cast<O>(__ldg(p.ta_b + cb));
    bb = static_cast<O>(__ldg(p.tb_b + cb));
    if (p.slices == 0) return;  // (K = 0: no slices to walk)
    cr = static_cast<int>(f / (p.nx * p.ny));
    f -= cr * p.nx * p.ny;
    cy = static_cast<int>(f / p.nx);
    cx = static_cast<int>(f - cy * p.nx);
  };
  auto next_slice = [&](O& a0, O& b0, int& xl, int& yl) {
    const long long x0 = static_cast<long long>(cx) * TX, y0 = static_cast<long long>(cy) * TY;
    a0 = ab + static_cast<O>(TAB_R ? __ldg(p.ta_r + cr) : cr * p.a_r) + static_cast<O>(x0) * static_cast<O>(p.a_x) +
         static_cast<O>(y0) * static_cast<O>(p.a_y);
    b0 = bb + static_cast<O>(TAB_R ? __ldg(p.tb_r + cr) : cr * p.b_r) + static_cast<O>(x0) * static_cast<O>(p.b_x) +
         static_cast<O>(y0) * static_cast<O>(p.b_y);
    xl = p.ex - x0 < TX ? static_cast<int>(p.ex - x0) : TX;
    yl = p.ey - y0 < TY ? static_cast<int>(p.ey - y0) : TY;
    cx += static_cast<int>(p.step_x);
    int carry = cx >= p.nx;
    cx -= carry ? static_cast<int>(p.nx) : 0;
    cy += static_cast<int>(p.step_y) + carry;
    carry = cy >= p.ny;
    cy -= carry ? static_cast<int>(p.ny) : 0;
    cr += static_cast<int>(p.step_r) + carry;
  };
  // Row offsets: a stride (one M or N mode) or the shared-memory table.
  auto a_row = [&](int row) { return STRIDE_A ? row * p.a_m : s_am[row]; };
  auto b_row = [&](int row) { return STRIDE_B ? row * p.b_n : s_bn[row]; };

  // Copy (ASYNC) one operand's rows of a slice into `dst` ([ROWS][PITCH]). Offsets are
  // computed for every row (rows past M or N read the table's zero entries) and only the
  // copy size depends on range: an out-of-range copy moves 0 bytes and reads nothing, so
  // its address needs no select (measured: 27 SELs a slice). The per-h arrays come in as
  // pointers: NVRTC 13.0 segfaults on a generic lambda taking references to arrays.
  auto issue_rows = [&](auto rows_c, auto vec_c, auto stride_c, auto* dst, const auto* src, const long long* s_rows,
                        O rstride, int nrows, O base, const O* koff, const int* kk, const int* dx,
                        const int* dy, O vkoff, int vdx, int vdy, int q, int xl, int yl) {
    constexpr int ROWS = decltype(rows_c)::value, V = decltype(vec_c)::value;
    constexpr bool STRIDED = decltype(stride_c)::value;
    constexpr int item = static_cast<int>(sizeof(*src));
    if constexpr (V > 1) {
      constexpr int PR = BK / V, LV = (ROWS * PR + NT - 1) / NT, STEP = NT / PR;
      const int left = vdy < yl ? (xl - vdx < V ? (xl - vdx > 0 ? xl - vdx : 0) : V) : 0;
      O off = base + vkoff + (STRIDED ? static_cast<O>(tid / PR) * rstride : O(0));
#pragma unroll
      for (int i = 0; i < LV; ++i) {
        const int row = tid / PR + STEP * i;
        if (ROWS % STEP == 0 || row < ROWS) {
          const int n = row < nrows ? left : 0;
          const O o = STRIDED ? off : off + static_cast<O>(s_rows[row]);
          einc_cp_async16(dst + row * PITCH + V * q, src + o, n * item);  // (0 bytes: not read)
        }
        if (STRIDED) off += STEP * rstride;
      }
    } else {
      constexpr int LR = (ROWS + NW - 1) / NW;
      bool kin[H];
#pragma unroll
      for (int h = 0; h < H; ++h) kin[h] = dx[h] < xl && dy[h] < yl;
      O off[H];
#pragma unroll
      for (int h = 0; h < H; ++h) off[h] = base + koff[h] + (STRIDED ? static_cast<O>(warp) * rstride : O(0));
#pragma unroll
      for (int i = 0; i < LR; ++i) {
        const int row = warp + NW * i;
#pragma unroll
        for (int h = 0; h < H; ++h) {
          if (ROWS % NW == 0 || row < ROWS) {
            const O o = STRIDED ? off[h] : off[h] + static_cast<O>(s_rows[row]);
            einc_cp_async(reinterpret_cast<TA*>(dst + row * PITCH + kk[h]), reinterpret_cast<const TA*>(src + o),
                          kin[h] && row < nrows);
          }
          if (STRIDED) off[h] += NW * rstride;
        }
      }
    }
  };
  auto issue = [&](int stage) {
    O a0, b0;
    int xl, yl;
    next_slice(a0, b0, xl, yl);
    SA* as = reinterpret_cast<SA*>(ring + stage * STAGE);
    SB* bs = reinterpret_cast<SB*>(ring + stage * STAGE + RP * PITCH);
    issue_rows(EincInt<RP>{}, EincInt<A_VEC ? VA : 1>{}, EincInt<STRIDE_A>{}, as, A, s_am, O(p.a_m), M, a0, a_koff, a_kk,
               adx, ady, a_vkoff, a_vdx, a_vdy, aq, xl, yl);
    issue_rows(EincInt<CP>{}, EincInt<B_VEC ? VB : 1>{}, EincInt<STRIDE_B>{}, bs, B, s_bn, O(p.b_n), N, b0, b_koff, b_kk,
               bdx, bdy, b_vkoff, b_vdx, b_vdy, bq, xl, yl);
  };

  // Register path: one slice of this thread's scalar elements, converted to TA.
  constexpr int LRA = (RP + NW - 1) / NW, LRB = (CP + NW - 1) / NW;
  TA ra[ASYNC ? 1 : LRA][H], rb[ASYNC ? 1 : LRB][H];
  auto fetch = [&]() {
    if constexpr (!ASYNC) {
      O a0, b0;
      int xl, yl;
      next_slice(a0, b0, xl, yl);
#pragma unroll
      for (int h = 0; h < H; ++h) {
        const bool ak = adx[h] < xl && ady[h] < yl, bk = bdx[h] < xl && bdy[h] < yl;
#pragma unroll
        for (int i = 0; i < LRA; ++i) {
          const int row = warp + NW * i;
          ra[i][h] = ak && row < M ? load_as<TC, TA>(A + a0 + a_row(row) + a_koff[h]) : zero<TA>();
        }
#pragma unroll
        for (int i = 0; i < LRB; ++i) {
          const int row = warp + NW * i;
          rb[i][h] = bk && row < N ? load_as<TC, TA>(B + b0 + b_row(row) + b_koff[h]) : zero<TA>();
        }
      }
    }
  };
  auto stash = [&](int stage) {
    if constexpr (!ASYNC) {
      TA* as = ring + stage * STAGE;
      TA* bs = as + RP * PITCH;
#pragma unroll
      for (int h = 0; h < H; ++h) {
#pragma unroll
        for (int i = 0; i < LRA; ++i)
          if (RP % NW == 0 || warp + NW * i < RP) as[(warp + NW * i) * PITCH + a_kk[h]] = ra[i][h];
#pragma unroll
        for (int i = 0; i < LRB; ++i)
          if (CP % NW == 0 || warp + NW * i < CP) bs[(warp + NW * i) * PITCH + b_kk[h]] = rb[i][h];
      }
    }
  };

  // Compute threads: group g, rows ty + TM i, columns tx + TN j. (DM: warp (wm, wn) of the
  // group owns the fragments' rows 16 (RM wm + i) + lane / 4 (+ 8), columns 8 (RN wn + j) +
  // 2 (lane % 4) + e.)
  const int g = tid / G, u = tid - g * G;
  int ty, tx;
  einc_small_place<Cfg>(u, ty, tx);
  const int wm = (u >> 5) / TN, wn = (u >> 5) - wm * TN;
  const bool computes = tid < KG * G;
  TA acc[DM ? 1 : RM][DM ? 1 : RN];
  double dacc[DM ? RM : 1][DM ? RN : 1][4];
  auto multiply = [&](int stage) {
    if (!computes) return;
    if constexpr (DM) {
      // k permuted: lane 4 g + t reads 16 bytes, k 4 t .. 4 t + 3, of each of its A rows and B
      // columns per 16 k, and hands element e to the product as k = t + 4 e. A and B see the
      // same permutation, so each product pairs the same k: the sum over 16 k in another
      // order. Each fp32 converts exactly to fp64, each product of two is exact there, and
      // the sums carry 53 bits.
      const int lr = lane >> 2, lk = 4 * (lane & 3);
      const TA* __restrict__ as = ring + stage * STAGE + (16 * RM * wm + lr) * PITCH + g * KQ + lk;
      const TA* __restrict__ bs = ring + stage * STAGE + RP * PITCH + (8 * RN * wn + lr) * PITCH + g * KQ + lk;
#pragma unroll
      for (int q = 0; q < KQ / 16; ++q) {
        double ad[RM][8];  // the warp's A fragments, held; B's stream through one at a time
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const EincVec<TA, 4> v = *reinterpret_cast<const EincVec<TA, 4>*>(as + (16 * i + 8 * h) * PITCH + 16 * q);
#pragma unroll
            for (int e = 0; e < 4; ++e) ad[i][2 * e + h] = static_cast<double>(v.v[e]);
          }
#pragma unroll
        for (int j = 0; j < RN; ++j) {
          const EincVec<TA, 4> v = *reinterpret_cast<const EincVec<TA, 4>*>(bs + 8 * j * PITCH + 16 * q);
          double bd[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) bd[e] = static_cast<double>(v.v[e]);
#pragma unroll
          for (int i = 0; i < RM; ++i) einc_dmma<16>(dacc[i][j], ad[i], bd);
        }
      }
      return;
    }
    const TA* __restrict__ as = ring + stage * STAGE + ty * PITCH + g * KQ;
    const TA* __restrict__ bs = ring + stage * STAGE + RP * PITCH + tx * PITCH + g * KQ;
    // QU quads at a time (a full unroll hoists every quad's loads: 168 registers, spills at the cap)
    constexpr int QU = Cfg::QU;
#pragma unroll QU
    for (int q = 0; q < KQ / QK; ++q) {
      EincVec<TA, QK> a[RM];
#pragma unroll
      for (int i = 0; i < RM; ++i) a[i] = *reinterpret_cast<const EincVec<TA, QK>*>(as + TM * i * PITCH + q * QK);
#pragma unroll
      for (int j = 0; j < RN; ++j) {  // one column's k at a time: QK RM FMAs per load
        const EincVec<TA, QK> b = *reinterpret_cast<const EincVec<TA, QK>*>(bs + TN * j * PITCH + q * QK);
#pragma unroll
        for (int e = 0; e < QK; ++e)
#pragma unroll
          for (int i = 0; i < RM; ++i) acc[i][j] = mac(acc[i][j], a[i].v[e], b.v[e]);
      }
    }
  };

  // Part `bi` (grid-stride): the cut split's is batch index bi, all its slices in order; the
  // flat split's (one batch index) every parts-th slice from slice bi, so that the resident
  // blocks multiply neighbouring slices at once and share the L2 lines each other's copies
  // fetch (contiguous ranges per part read 2.7x the operands from DRAM at 72^5: each block's
  // next use of a 128-byte line of B came 9 slices later, past the L2).
  for (long long bi = blockIdx.x; bi < p.parts; bi += gridDim.x) {
    const bool flat = p.parts != p.batch;
    const int n = static_cast<int>(flat ? (p.slices - bi + p.parts - 1) / p.parts : p.slices);
    seek(flat ? 0 : static_cast<int>(bi), flat ? bi : 0);
    if constexpr (DM) {
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) dacc[i][j][e] = 0.0;
    } else {
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) acc[i][j] = zero<TA>();
    }

    if constexpr (ASYNC) {
#pragma unroll
      for (int s = 0; s < S - 1; ++s) {
        if (s < n) issue(s);
        einc_cp_commit();  // empty groups keep the count uniform
      }
      int stage = 0;
      for (int j = 0; j < n; ++j) {
        einc_cp_wait<S - 2>();  // this thread's copies of slice j have landed
        __syncthreads();        // RAW: everyone's have; WAR: slice j-1's stage is free
        if (j + S - 1 < n) issue(stage == 0 ? S - 1 : stage - 1);
        einc_cp_commit();
        multiply(stage);
        stage = stage == S - 1 ? 0 : stage + 1;
      }
      einc_cp_wait<0>();
    } else {
      if (n > 0) {
        fetch();
        stash(0);
      }
      __syncthreads();  // RAW: slice 0 is in shared memory
      for (int j = 0; j < n; ++j) {
        const bool more = j + 1 < n;
        if (more) fetch();  // slice j + 1, in flight while slice j is multiplied
        multiply(static_cast<int>(j & 1));
        if (more) stash(static_cast<int>((j + 1) & 1));
        __syncthreads();  // RAW for slice j+1, WAR for the stage slice j+2 fills
      }
    }
    __syncthreads();  // WAR: the ring is free for the group reduction that aliases it

    if constexpr (DM) {
      // groups 1.. stage their sums ([KG-1][RP][CP] fp64), group 0 adds them in order and
      // rounds each once, to the output's type
      double* red = reinterpret_cast<double*>(ring);
      auto at = [&](int i, int j, int e) {
        return (16 * (RM * wm + i) + (lane >> 2) + 8 * (e >> 1)) * CP + 8 * (RN * wn + j) + 2 * (lane & 3) + (e & 1);
      };
      if (KG > 1 && computes && g > 0) {
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int j = 0; j < RN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) red[(g - 1) * RP * CP + at(i, j, e)] = dacc[i][j][e];
      }
      if (KG > 1) __syncthreads();  // RAW: every group's sums are staged
      if (computes && g == 0) {
        TOut* __restrict__ c = C + (flat ? bi * p.c_part : __ldg(p.tc_b + bi));
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int m = 16 * (RM * wm + i) + (lane >> 2) + 8 * h;
            if (m < M) {
              const long long cm = __ldg(p.tc_m + m);
#pragma unroll
              for (int j = 0; j < RN; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                  const int col = 8 * (RN * wn + j) + 2 * (lane & 3) + e;
                  double v = dacc[i][j][2 * h + e];
#pragma unroll
                  for (int k = 1; k < KG; ++k) v += red[(k - 1) * RP * CP + at(i, j, 2 * h + e)];
                  if (col < N) store_as<TC>(c + cm + __ldg(p.tc_n + col), v);
                }
            }
          }
      }
      __syncthreads();  // WAR: the next part's prologue refills the ring read above
      continue;
    }
    TA* red = ring;  // [KG-1][RP][CP]
    if (KG > 1 && computes && g > 0) {
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) red[((g - 1) * RP + ty + TM * i) * CP + tx + TN * j] = acc[i][j];
    }
    if (KG > 1) __syncthreads();  // RAW: every group's sums are staged
    if (computes && g == 0) {
      TOut* __restrict__ c = C + (flat ? bi * p.c_part : __ldg(p.tc_b + bi));
#pragma unroll
      for (int i = 0; i < RM; ++i) {
        const int m = ty + TM * i;
        if (m < M) {
          const long long cm = __ldg(p.tc_m + m);
#pragma unroll
          for (int j = 0; j < RN; ++j) {
            const int col = tx + TN * j;
            TA v = acc[i][j];
#pragma unroll
            for (int h = 1; h < KG; ++h) v = add(v, red[((h - 1) * RP + m) * CP + col]);
            if (col < N) store_as<TC>(c + cm + __ldg(p.tc_n + col), v);
          }
        }
      }
    }
    __syncthreads();  // WAR: the next part's prologue refills the ring read above
  }
}
