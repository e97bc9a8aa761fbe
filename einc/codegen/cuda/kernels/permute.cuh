// einc CUDA kernel family `permute`: a copy (with dtype conversion) whose input and output
// walk their modes in different orders, when the unit-stride runs are made of many short
// modes -- a tensor network's intermediates (Sycamore: ~30 modes of extent 2), where the
// `transpose` kernel's tiles (sides of 32 or more) along one mode each would hold 2 x 2 useful elements
// and an element-wise loop reads one 32-byte sector per 8-byte element.
//
// The tile is a SET of modes: the input's fastest modes up to >= 32 contiguous elements
// (the I set) together with the output's fastest modes up to >= 32 (the O set); every
// other mode is an outer (batch) mode decoded from the tile counter. Tiles are whole
// modes, so every tile is full: no bounds checks inside a tile.
//
//   load:  tile index t enumerates the set in the INPUT's order (set mode 0 fastest), so
//          consecutive threads read consecutive input elements over the I set's run;
//          the element goes to shared slot t.
//   store: index u enumerates the set in the OUTPUT's order (meta.ord), so consecutive
//          threads write consecutive output elements over the O set's run; the element
//          comes from the slot holding it.
//
// Per-element offsets within a tile (input offset of t, output offset and slot of u) are
// the same for every tile: each block computes them once into shared tables, then walks
// tiles grid-stride. Slot s lives at s + s / 32 (one pad element per 32), so the store
// phase's slot strides of 32, 64, ... (O-set modes outside the I set) land on distinct
// banks. Two barriers per tile: RAW (the tile is written before it is read) and WAR (read
// before the next tile overwrites it); one after the tables (RAW).
//
// VMAX (a power of two >= the tile's elements) sizes the static shared memory; OFF is the
// type of the in-tile offsets (int when they fit). Blocks of 256 threads; each thread
// issues VMAX/256 independent loads per tile before storing any (memory-level parallelism).
#pragma once
#include "common.cuh"

template <int R, int S> struct EincSetPermMeta {
  long long vol;          // tile elements (product of the set's extents)
  long long nset;         // modes in the set
  long long tiles;        // product of the outer extents
  long long nb;           // outer modes used
  long long set_ext[S];   // the set's modes in the input's order, fastest first
  long long set_in[S];    // their input strides
  long long set_out[S];   // their output strides
  long long ord[S];       // the set's modes (indices into set_*) in the output's order, fastest first
  long long ext[R];       // outer modes, last fastest
  long long s_in[R];
  long long s_out[R];
};

template <int R, int S, int VMAX, class OFF, class TOut, class TC, class TIn>
__device__ __forceinline__ void einc_permute(void* __restrict__ out, const void* __restrict__ in,
                                             const EincSetPermMeta<R, S>& p) {
  __shared__ TC tile[VMAX + VMAX / 32];
  __shared__ OFF in_off[VMAX], out_off[VMAX];
  __shared__ unsigned short slot[VMAX];
  const TIn* __restrict__ X = static_cast<const TIn*>(in);
  TOut* __restrict__ Y = static_cast<TOut*>(out);
  const int V = static_cast<int>(p.vol), ns = static_cast<int>(p.nset);
  for (int t = threadIdx.x; t < V; t += blockDim.x) {
    int r = t;
    long long o = 0;
    for (int j = 0; j < ns; ++j) {  // t in the input's order
      const int e = static_cast<int>(p.set_ext[j]), d = r % e;
      r /= e;
      o += d * p.set_in[j];
    }
    in_off[t] = static_cast<OFF>(o);
    r = t;
    long long w = 0;
    int s = 0;
    for (int q = 0; q < ns; ++q) {  // t read as u, in the output's order
      const int j = static_cast<int>(p.ord[q]), e = static_cast<int>(p.set_ext[j]), d = r % e;
      r /= e;
      w += d * p.set_out[j];
      int stride = 1;  // slot stride of mode j: product of the faster input-order extents
      for (int i = 0; i < j; ++i) stride *= static_cast<int>(p.set_ext[i]);
      s += d * stride;
    }
    out_off[t] = static_cast<OFF>(w);
    slot[t] = static_cast<unsigned short>(s + s / 32);
  }
  __syncthreads();  // RAW: the tables are complete before any tile uses them
  for (long long g = blockIdx.x; g < p.tiles; g += gridDim.x) {
    long long b = g, xo = 0, yo = 0;
    for (int d = static_cast<int>(p.nb) - 1; d >= 0; --d) {
      const long long q = b / p.ext[d], idx = b - q * p.ext[d];
      xo += idx * p.s_in[d];
      yo += idx * p.s_out[d];
      b = q;
    }
    TC v[VMAX / 256 > 0 ? VMAX / 256 : 1];
#pragma unroll
    for (int k = 0; k * 256 < VMAX; ++k) {
      const int t = threadIdx.x + 256 * k;
      if (t < V) v[k] = load_as<TC, TC>(X + xo + in_off[t]);
    }
#pragma unroll
    for (int k = 0; k * 256 < VMAX; ++k) {
      const int t = threadIdx.x + 256 * k;
      if (t < V) tile[t + t / 32] = v[k];
    }
    __syncthreads();  // RAW
#pragma unroll
    for (int k = 0; k * 256 < VMAX; ++k) {
      const int u = threadIdx.x + 256 * k;
      if (u < V) store_as<TC>(Y + yo + out_off[u], tile[slot[u]]);
    }
    __syncthreads();  // WAR
  }
}
