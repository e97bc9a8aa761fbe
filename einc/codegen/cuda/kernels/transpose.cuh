// einc CUDA kernel family `transpose`: a copy (with dtype conversion) whose input and
// output have different unit-stride modes -- the permutations that GEMM-order copies and
// the final reorder of a GEMM result are made of. reduce_cols would walk the output's
// unit-stride mode and read the input with a large stride (one 32-byte sector per
// element); here each TI x TO tile goes through shared memory, so both sides move whole
// sectors:
//
//   read:  lanes along the input's unit-stride mode  (mode I), vectors of VI elements
//   write: lanes along the output's unit-stride mode (mode O), vectors of VO elements
//
// Every other mode is a batch mode decoded from the tile counter (EincPermMeta carries
// their extents and both strides, R of them at most). Two barriers per tile: RAW (the
// tile is written before it is read) and WAR (read before the next tile overwrites it).
// Blocks of 256 threads walk tiles grid-stride. The same file has the rows copy: both
// sides unit-stride along the same mode, the other modes reordered.
#pragma once
#include "common.cuh"

template <int R> struct EincPermMeta {
  long long n_i, n_o;          // extents of the input's and the output's unit-stride modes
  long long in_o, out_i;       // the other side's stride along each (in_i = out_o = 1)
  long long tiles_i, tiles_o;  // TI- and TO-wide tiles along each (rows copy: unused)
  long long batch;             // product of the batch extents
  long long nb;                // batch modes used
  long long ext[R];
  long long s_in[R];
  long long s_out[R];
};

// The stage's element type: the input's bits for a RAW copy (TIn == TOut), else the compute type.
template <class TC, class TIn, bool RAW> struct EincTransposeStage { using T = TC; };
template <class TC, class TIn> struct EincTransposeStage<TC, TIn, true> { using T = TIn; };

// A tile's origin and batch offsets from the tile counter, in I arithmetic (32-bit when
// every count fits: 64-bit division is ~20x the instructions, and a tile moves few bytes).
template <int R, int TI, int TO, class I>
__device__ __forceinline__ void einc_perm_tile(I t, const EincPermMeta<R>& p, long long& i0, long long& o0,
                                               long long& xo, long long& yo) {
  const I ti = static_cast<I>(p.tiles_i), per_batch = ti * static_cast<I>(p.tiles_o);
  I b = t / per_batch;
  const I r = t - b * per_batch, q = r / ti;
  i0 = static_cast<long long>(r - q * ti) * TI;
  o0 = static_cast<long long>(q) * TO;
  xo = yo = 0;  // last batch mode fastest
  for (int d = static_cast<int>(p.nb) - 1; d >= 0; --d) {
    const I e = static_cast<I>(p.ext[d]), bq = b / e, idx = b - bq * e;
    xo += static_cast<long long>(idx) * p.s_in[d];
    yo += static_cast<long long>(idx) * p.s_out[d];
    b = bq;
  }
}

// One TI x TO tile (TI along mode I, TO along mode O), staged transposed: tile[i][o] with
// an odd row pitch P. Loads: VI-element vectors along I (a row of the input), each thread's
// vectors issued before any is staged; its VI elements go down a column of the stage. A
// warp's lanes walk the vectors of a row, VI rows of the stage apart: with P odd that is 8
// banks per 8 lanes (about 2-way). Stores: VO-element vectors along O, read along a row of
// the stage (consecutive lanes, consecutive banks). RAW copies (TIn == TOut) move bits; the
// others convert element by element (VI = VO = 1).
template <int R, class TOut, class TC, class TIn, class TS, int TI, int TO, int P, int VI, int VO, bool RAW>
__device__ __forceinline__ void einc_transpose_tile(TOut* __restrict__ Y, const TIn* __restrict__ X, TS* tile,
                                                    int in_o, int out_i, int ri, int ro, int tid) {
  // X, Y: the tile's first element on each side; ri, ro: how much of the tile is in range
  // along I and O; in-tile offsets in 32 bits (the emitter checks they fit)
  static_assert(RAW || (VI == 1 && VO == 1), "converting copies move elements");
  static_assert(TI % VI == 0 && TO % VO == 0, "whole vectors per tile row");
  constexpr int NVI = TI / VI, NL = (TO * NVI + 255) / 256;
  constexpr int NVO = TO / VO, NS = (TI * NVO + 255) / 256;
  constexpr int B = NL < 4 ? NL : 4;  // loads in flight per thread (registers: B vectors)
#pragma unroll 1
  for (int k0 = 0; k0 < NL; k0 += B) {
    EincVec<TS, VI> v[B];
#pragma unroll
    for (int k = 0; k < B; ++k) {
      const int idx = tid + 256 * (k0 + k), o = idx / NVI, i = (idx - o * NVI) * VI;
      if (k0 + k < NL && idx < TO * NVI && i < ri && o < ro) {
        const TIn* src = X + (i + o * in_o);
        if constexpr (RAW)
          v[k] = *reinterpret_cast<const EincVec<TS, VI>*>(src);
        else
          v[k].v[0] = load_as<TC, TC>(src);
      }
    }
#pragma unroll
    for (int k = 0; k < B; ++k) {
      const int idx = tid + 256 * (k0 + k), o = idx / NVI, i = (idx - o * NVI) * VI;
      if (k0 + k < NL && idx < TO * NVI && i < ri && o < ro) {
#pragma unroll
        for (int s = 0; s < VI; ++s) tile[(i + s) * P + o] = v[k].v[s];
      }
    }
  }
  __syncthreads();  // RAW
#pragma unroll 2
  for (int k = 0; k < NS; ++k) {
    const int idx = tid + 256 * k, i = idx / NVO, o = (idx - i * NVO) * VO;
    if (idx < TI * NVO && i < ri && o < ro) {
      TOut* dst = Y + (o + i * out_i);
      if constexpr (RAW) {
        EincVec<TS, VO> w;
#pragma unroll
        for (int s = 0; s < VO; ++s) w.v[s] = tile[i * P + o + s];
        *reinterpret_cast<EincVec<TS, VO>*>(dst) = w;
      } else {
        store_as<TC>(dst, tile[i * P + o]);
      }
    }
  }
  __syncthreads();  // WAR
}

// TI x TO tiles (the emitter picks them from the extents: whole modes or divisors where
// they fit, so that few threads idle on ragged edges) walked grid-stride by 256-thread
// blocks. RAW copies load VI-element and store VO-element vectors where the emitter found
// every extent and stride a multiple of them; pointers not aligned to them (a view into a
// buffer) take the same tiles element by element.
template <int R, class TOut, class TC, class TIn, int TI, int TO, int VI, int VO, bool RAW>
__device__ __forceinline__ void einc_transpose(void* __restrict__ out, const void* __restrict__ in,
                                               const EincPermMeta<R>& p) {
  using TS = typename EincTransposeStage<TC, TIn, RAW>::T;
  constexpr int P = TO | 1;  // odd pitch (see einc_transpose_tile)
  __shared__ TS tile[TI * P];
  const TIn* __restrict__ X = static_cast<const TIn*>(in);
  TOut* __restrict__ Y = static_cast<TOut*>(out);
  const int tid = threadIdx.x;
  const long long total = p.tiles_i * p.tiles_o * p.batch;
  const bool narrow = total <= 0xffffffffll;
  const bool vec = RAW && (VI > 1 || VO > 1) &&
                   (reinterpret_cast<unsigned long long>(in) % (VI * sizeof(TIn))) == 0 &&
                   (reinterpret_cast<unsigned long long>(out) % (VO * sizeof(TOut))) == 0;
  for (long long t = blockIdx.x; t < total; t += gridDim.x) {
    long long i0, o0, xo, yo;
    if (narrow)
      einc_perm_tile<R, TI, TO, unsigned>(static_cast<unsigned>(t), p, i0, o0, xo, yo);
    else
      einc_perm_tile<R, TI, TO, long long>(t, p, i0, o0, xo, yo);
    const int ri = static_cast<int>(p.n_i - i0 < TI ? p.n_i - i0 : TI);
    const int ro = static_cast<int>(p.n_o - o0 < TO ? p.n_o - o0 : TO);
    const TIn* x = X + xo + i0 + o0 * p.in_o;
    TOut* y = Y + yo + o0 + i0 * p.out_i;
    const int in_o = static_cast<int>(p.in_o), out_i = static_cast<int>(p.out_i);
    if (vec)
      einc_transpose_tile<R, TOut, TC, TIn, TS, TI, TO, P, VI, VO, RAW>(y, x, tile, in_o, out_i, ri, ro, tid);
    else
      einc_transpose_tile<R, TOut, TC, TIn, TS, TI, TO, P, 1, 1, RAW>(y, x, tile, in_o, out_i, ri, ro, tid);
  }
}

// Rows copy: a copy whose input and output share their unit-stride mode (a run of n_i
// elements both sides) but order the other modes differently (GEMM-order copies such as
// lnim->linm, the final reorder of a GEMM's rows). Each thread moves V-element vectors
// (RAW, aligned) or elements; a row's other-mode offsets are decoded from its index.
template <int R, class TOut, class TC, class TIn, int V, bool RAW>
__device__ __forceinline__ void einc_copy_rows(void* __restrict__ out, const void* __restrict__ in,
                                               const EincPermMeta<R>& p) {
  const TIn* __restrict__ X = static_cast<const TIn*>(in);
  TOut* __restrict__ Y = static_cast<TOut*>(out);
  const bool vec = RAW && V > 1 && (reinterpret_cast<unsigned long long>(in) % (V * sizeof(TIn))) == 0 &&
                   (reinterpret_cast<unsigned long long>(out) % (V * sizeof(TOut))) == 0;
  const long long per_row = vec ? p.n_i / V : p.n_i, total = per_row * p.batch;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  const bool narrow = total <= 0xffffffffll;
  for (long long g = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; g < total; g += step) {
    long long b, j;
    if (narrow) {
      const unsigned gq = static_cast<unsigned>(g) / static_cast<unsigned>(per_row);
      b = gq;
      j = static_cast<long long>(static_cast<unsigned>(g) - gq * static_cast<unsigned>(per_row));
    } else {
      b = g / per_row;
      j = g - b * per_row;
    }
    long long xo = 0, yo = 0;
    for (int d = static_cast<int>(p.nb) - 1; d >= 0; --d) {
      long long q, idx;
      if (narrow) {
        const unsigned e = static_cast<unsigned>(p.ext[d]), bq = static_cast<unsigned>(b) / e;
        q = bq;
        idx = static_cast<unsigned>(b) - bq * e;
      } else {
        q = b / p.ext[d];
        idx = b - q * p.ext[d];
      }
      xo += idx * p.s_in[d];
      yo += idx * p.s_out[d];
      b = q;
    }
    if constexpr (RAW && V > 1) {
      if (vec) {
        *reinterpret_cast<EincVec<TIn, V>*>(Y + yo + j * V) = *reinterpret_cast<const EincVec<TIn, V>*>(X + xo + j * V);
        continue;
      }
    }
    store_as<TC>(Y + yo + j, load_as<TC, TC>(X + xo + j));
  }
}
