// einc CUDA kernel family `transpose`: a copy (with dtype conversion) whose input and
// output have different unit-stride modes -- the permutations that GEMM-order copies and
// the final reorder of a GEMM result are made of. reduce_cols would walk the output's
// unit-stride mode and read the input with a large stride (one 32-byte sector per
// element); here each 32 x 32 tile goes through shared memory, so both sides move whole
// sectors:
//
//   read:  lanes along the input's unit-stride mode  (mode I), 8 rows of mode O at a time
//   write: lanes along the output's unit-stride mode (mode O), 8 rows of mode I at a time
//
// Every other mode is a batch mode decoded from the tile counter (EincPermMeta carries
// their extents and both strides, R of them at most). Tile[32][33]: the pad puts the
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

template <int R, class TOut, class TC, class TIn>
__device__ __forceinline__ void einc_transpose(void* __restrict__ out, const void* __restrict__ in,
                                               const EincPermMeta<R>& p) {
  __shared__ TC tile[32][33];
  const TIn* __restrict__ X = static_cast<const TIn*>(in);
  TOut* __restrict__ Y = static_cast<TOut*>(out);
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const long long per_batch = p.tiles_i * p.tiles_o;
  const long long total = per_batch * p.batch;
  for (long long t = blockIdx.x; t < total; t += gridDim.x) {
    long long b = t / per_batch;
    const long long r = t - b * per_batch;
    const long long i0 = (r % p.tiles_i) * 32, o0 = (r / p.tiles_i) * 32;
    long long xo = 0, yo = 0;  // batch offsets, last batch mode fastest
    for (int d = static_cast<int>(p.nb) - 1; d >= 0; --d) {
      const long long q = b / p.ext[d], idx = b - q * p.ext[d];
      xo += idx * p.s_in[d];
      yo += idx * p.s_out[d];
      b = q;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const long long i = i0 + tx, o = o0 + ty + 8 * k;
      if (i < p.n_i && o < p.n_o) tile[ty + 8 * k][tx] = load_as<TC, TC>(X + xo + i + o * p.in_o);
    }
    __syncthreads();  // RAW
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const long long o = o0 + tx, i = i0 + ty + 8 * k;
      if (i < p.n_i && o < p.n_o) store_as<TC>(Y + yo + o + i * p.out_i, tile[tx][ty + 8 * k]);
    }
    __syncthreads();  // WAR
  }
}
