// einc CUDA kernel family `transpose`: a copy (with dtype conversion) whose input and
// output have different unit-stride modes -- the permutations that GEMM-order copies and
// the final reorder of a GEMM result are made of. reduce_cols would walk the output's
// unit-stride mode and read the input with a large stride (one 32-byte sector per
// element); here each T x T tile goes through shared memory, so both sides move whole
// sectors:
//
//   read:  lanes along the input's unit-stride mode  (mode I), 8 rows of mode O at a time
//   write: lanes along the output's unit-stride mode (mode O), 8 rows of mode I at a time
//
// Every other mode is a batch mode decoded from the tile counter (EincPermMeta carries
// their extents and both strides, R of them at most). Tile[T][T+1]: the pad puts the
// column walk of the write phase on 32 distinct banks. Two barriers per tile: RAW (the
// tile is written before it is read) and WAR (read before the next tile overwrites it).
// Blocks of 32 x 8 threads walk tiles grid-stride.
#pragma once
#include "common.cuh"

template <int R> struct EincPermMeta {
  long long n_i, n_o;          // extents of the input's and the output's unit-stride modes
  long long in_o, out_i;       // the other side's stride along each (in_i = out_o = 1)
  long long tiles_i, tiles_o;  // 32-wide tiles along each
  long long batch;             // product of the batch extents
  long long nb;                // batch modes used
  long long ext[R];
  long long s_in[R];
  long long s_out[R];
};

// A tile's origin and batch offsets from the tile counter, in I arithmetic (32-bit when
// every count fits: 64-bit division is ~20x the instructions, and a tile moves few bytes).
template <int R, int T, class I>
__device__ __forceinline__ void einc_perm_tile(I t, const EincPermMeta<R>& p, long long& i0, long long& o0,
                                               long long& xo, long long& yo) {
  const I ti = static_cast<I>(p.tiles_i), per_batch = ti * static_cast<I>(p.tiles_o);
  I b = t / per_batch;
  const I r = t - b * per_batch, q = r / ti;
  i0 = static_cast<long long>(r - q * ti) * T;
  o0 = static_cast<long long>(q) * T;
  xo = yo = 0;  // last batch mode fastest
  for (int d = static_cast<int>(p.nb) - 1; d >= 0; --d) {
    const I e = static_cast<I>(p.ext[d]), bq = b / e, idx = b - bq * e;
    xo += static_cast<long long>(idx) * p.s_in[d];
    yo += static_cast<long long>(idx) * p.s_out[d];
    b = bq;
  }
}

// T x T tiles (T = 64 where the compute type is at most 8 bytes: 16 elements per thread, so
// 16 loads in flight and one tile decode per 16; 32 for 16-byte types, whose 64-wide tile
// would pass the 48 KB of static shared memory). Each warp row covers T/32 runs of 32.
template <int R, class TOut, class TC, class TIn, int T = 32>
__device__ __forceinline__ void einc_transpose(void* __restrict__ out, const void* __restrict__ in,
                                               const EincPermMeta<R>& p) {
  static_assert(T % 32 == 0, "whole warp runs");
  constexpr int RUNS = T / 32, ROWS = T / 8;
  __shared__ TC tile[T][T + 1];
  const TIn* __restrict__ X = static_cast<const TIn*>(in);
  TOut* __restrict__ Y = static_cast<TOut*>(out);
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const long long total = p.tiles_i * p.tiles_o * p.batch;
  const bool narrow = total <= 0xffffffffll;
  for (long long t = blockIdx.x; t < total; t += gridDim.x) {
    long long i0, o0, xo, yo;
    if (narrow)
      einc_perm_tile<R, T, unsigned>(static_cast<unsigned>(t), p, i0, o0, xo, yo);
    else
      einc_perm_tile<R, T, long long>(t, p, i0, o0, xo, yo);
#pragma unroll
    for (int a = 0; a < RUNS; ++a)
#pragma unroll
      for (int k = 0; k < ROWS; ++k) {
        const long long i = i0 + tx + 32 * a, o = o0 + ty + 8 * k;
        if (i < p.n_i && o < p.n_o) tile[ty + 8 * k][tx + 32 * a] = load_as<TC, TC>(X + xo + i + o * p.in_o);
      }
    __syncthreads();  // RAW
#pragma unroll
    for (int a = 0; a < RUNS; ++a)
#pragma unroll
      for (int k = 0; k < ROWS; ++k) {
        const long long o = o0 + tx + 32 * a, i = i0 + ty + 8 * k;
        if (i < p.n_i && o < p.n_o) store_as<TC>(Y + yo + o + i * p.out_i, tile[tx + 32 * a][ty + 8 * k]);
      }
    __syncthreads();  // WAR
  }
}
