// einc CUDA kernel family `reduce`: memory-bound steps (dot, row-dot `ij,ij->i`, sums,
// traces, Hadamard products, permutations and copies, column sums `ij->j`).
//
// Both kernels read every input element once. The emitter picks one from the strides:
//
// einc_reduce_rows — the inputs' unit-stride mode is summed (`ij,ij->i`, `ij->i`, dots).
//   Ownership: a *team* of G = meta.team threads (a power of two, 1..1024; G <= 32 is
//   part of a warp, G > 32 is several whole warps of one block) owns one output; the
//   block holds blockDim.x / G teams and walks outputs block-strided (every thread of
//   a block runs the same number of iterations, so the barriers below are uniform).
//   Lanes of a team stride over the innermost summed mode, so one warp-wide load
//   instruction reads consecutive elements (coalesced); when that mode is unit-stride in
//   every input (UNIT) and the row start is aligned, each lane loads VE elements with one
//   16-byte vector load. U independent accumulators per lane keep U loads in flight.
//   Outer summed modes (rare once the emitter merged contiguous modes) are decoded from a
//   counter. The team then reduces with xor-shuffles; teams wider than a warp add the
//   warps' partials through shared memory:
//     barrier 1 (RAW): every warp's partial is in `partial` before the first warp reads;
//     barrier 2 (WAR): the first warp has read them before any warp overwrites `partial`
//                      for the block's next output.
//   Lane 0 of the team converts and stores.
//
// einc_reduce_cols — everything else (column sums `ij->j`, Hadamard, permutations,
//   copies, outer products with nothing summed).
//   Ownership: the block's 256 threads are S = meta.team slices (a power of two <= 32)
//   of W = 256/S lanes; lane l of every slice works on output first + l, where the
//   block walks outputs W at a time (block-strided, uniform, so the barriers are too).
//   Free modes are decoded with the output's unit-stride mode fastest, so adjacent
//   lanes own adjacent outputs and the stores (and the inputs' loads whenever they
//   share that mode) are coalesced. Slice s sums the innermost summed index s, s+S, ...
//   serially (U independent accumulators); S > 1 only when there are too few outputs to
//   fill the GPU (column sums of a short, wide matrix), and then the S partials meet in
//   shared memory:
//     barrier 1 (RAW): all slices' partials written before slice 0 adds them;
//     barrier 2 (WAR): read before the next pass overwrites them.
//   S = 1 runs a copy of the loop with no shared memory and no barrier at all.
//
// Metadata: EincLoopMeta (common.cuh), by value; sizes never appear in the source.
#pragma once
#include "common.cuh"

// p[e] = prod over operands of element e of the VE-element run at in[t] + off[t].
template <class TC, class TA, int VE, class... In> struct EincVecProduct {
  static __device__ __forceinline__ void more(TA (&)[VE], const void* const*, const long long*) {}
  static __device__ __forceinline__ bool aligned(const void* const*, const long long*) { return true; }
};
template <class TC, class TA, int VE, class S0, class... Rest> struct EincVecProduct<TC, TA, VE, S0, Rest...> {
  typedef EincVec<S0, VE> V;
  static __device__ __forceinline__ V fetch(const void* p, long long off) {
    return *reinterpret_cast<const V*>(static_cast<const S0*>(p) + off);
  }
  static __device__ __forceinline__ void first(TA (&p)[VE], const void* const* in, const long long* off) {
    const V v = fetch(in[0], off[0]);
#pragma unroll
    for (int e = 0; e < VE; ++e) p[e] = convert_in<TC, TA>(v.v[e]);
    EincVecProduct<TC, TA, VE, Rest...>::more(p, in + 1, off + 1);
  }
  static __device__ __forceinline__ void more(TA (&p)[VE], const void* const* in, const long long* off) {
    const V v = fetch(in[0], off[0]);
#pragma unroll
    for (int e = 0; e < VE; ++e) p[e] = mul(p[e], convert_in<TC, TA>(v.v[e]));
    EincVecProduct<TC, TA, VE, Rest...>::more(p, in + 1, off + 1);
  }
  static __device__ __forceinline__ bool aligned(const void* const* in, const long long* off) {
    const unsigned long long a = reinterpret_cast<unsigned long long>(static_cast<const S0*>(in[0]) + off[0]);
    return a % sizeof(V) == 0 && EincVecProduct<TC, TA, VE, Rest...>::aligned(in + 1, off + 1);
  }
};

// Sum over i in [lane, n) step G of prod_t in[t][off[t] + i * stride[t]] (NI operands).
template <int NI, int U, bool UNIT, class TC, class TA, class... In>
__device__ __forceinline__ TA einc_row_sum(const void* const* in, const long long (&off)[NI],
                                           const long long (&stride)[NI], long long n, int lane, int G) {
  TA acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = zero<TA>();
  long long i = lane;
  if constexpr (UNIT && 16 / EincTypes<In...>::max_size > 1) {
    constexpr int VE = 16 / EincTypes<In...>::max_size;
    typedef EincVecProduct<TC, TA, VE, In...> VP;
    if (VP::aligned(in, off)) {  // same answer for the whole team: it depends on the row only
      const long long nvec = n / VE;
      long long v = lane;
      for (; v + (U - 1) * static_cast<long long>(G) < nvec; v += U * static_cast<long long>(G)) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          long long o[NI];
#pragma unroll
          for (int t = 0; t < NI; ++t) o[t] = off[t] + (v + u * static_cast<long long>(G)) * VE;
          TA p[VE];
          VP::first(p, in, o);
#pragma unroll
          for (int e = 0; e < VE; ++e) acc[u] = add(acc[u], p[e]);
        }
      }
      for (; v < nvec; v += G) {
        long long o[NI];
#pragma unroll
        for (int t = 0; t < NI; ++t) o[t] = off[t] + v * VE;
        TA p[VE];
        VP::first(p, in, o);
#pragma unroll
        for (int e = 0; e < VE; ++e) acc[0] = add(acc[0], p[e]);
      }
      i = nvec * VE + lane;  // the ragged tail (< VE elements) goes through the scalar loop
    }
  }
  for (; i + (U - 1) * static_cast<long long>(G) < n; i += U * static_cast<long long>(G)) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      long long o[NI];
#pragma unroll
      for (int t = 0; t < NI; ++t) o[t] = off[t] + (i + u * static_cast<long long>(G)) * stride[t];
      acc[u] = add(acc[u], EincProduct<TC, TA, In...>::eval(in, o));
    }
  }
  for (; i < n; i += G) {
    long long o[NI];
#pragma unroll
    for (int t = 0; t < NI; ++t) o[t] = off[t] + i * stride[t];
    acc[0] = add(acc[0], EincProduct<TC, TA, In...>::eval(in, o));
  }
#pragma unroll
  for (int u = 1; u < U; ++u) acc[0] = add(acc[0], acc[u]);
  return acc[0];
}

// Sum of v over the team of G lanes (G a power of two); every thread of the block calls
// it the same number of times. The team's lane 0 gets the total. WIDE: G > 32.
template <bool WIDE, class TA> __device__ __forceinline__ TA einc_team_sum(TA v, int G, TA* partial) {
  const int width = G < 32 ? G : 32;
  for (int m = width >> 1; m > 0; m >>= 1) v = add(v, shfl_xor(v, m));
  if constexpr (WIDE) {
    const int warp = threadIdx.x >> 5, lane32 = threadIdx.x & 31;
    if (lane32 == 0) partial[warp] = v;
    __syncthreads();  // RAW: all partials written before the team's first warp reads them
    if ((threadIdx.x & (G - 1)) < 32) {  // the team's first warp
      v = lane32 < (G >> 5) ? partial[warp + lane32] : zero<TA>();
      for (int m = 16; m > 0; m >>= 1) v = add(v, shfl_xor(v, m));
    }
    __syncthreads();  // WAR: partials consumed before the next output overwrites them
  }
  return v;
}

template <bool WIDE, int R, int T, int U, bool UNIT, class TOut, class TC, class TA, class... In>
__device__ __forceinline__ void einc_reduce_rows_loop(void* __restrict__ out, const void* const* in,
                                                      const EincLoopMeta<R, T>& meta, TA* partial) {
  constexpr int NI = T - 1;
  const int G = static_cast<int>(meta.team);
  const int teams = blockDim.x / G;
  const int team = threadIdx.x / G, lane = threadIdx.x & (G - 1);
  long long stride[NI];
#pragma unroll
  for (int t = 0; t < NI; ++t) stride[t] = meta.inner_stride[t + 1];
  const long long step = static_cast<long long>(gridDim.x) * teams;
  for (long long first = static_cast<long long>(blockIdx.x) * teams; first < meta.total; first += step) {
    const long long o = first + team;
    long long base[T];
#pragma unroll
    for (int t = 0; t < T; ++t) base[t] = 0;
    TA acc = zero<TA>();
    if (o < meta.total) {
      add_offsets<R, T>(o, static_cast<int>(meta.nfree), meta.free_ext, meta.free_stride, base);
      for (long long q = 0; q < meta.outer_total; ++q) {
        long long off[T];
#pragma unroll
        for (int t = 0; t < T; ++t) off[t] = base[t];
        add_offsets<R, T>(q, static_cast<int>(meta.nouter), meta.sum_ext, meta.sum_stride, off);
        long long op[NI];
#pragma unroll
        for (int t = 0; t < NI; ++t) op[t] = off[t + 1];
        acc = add(acc, einc_row_sum<NI, U, UNIT, TC, TA, In...>(in, op, stride, meta.inner, lane, G));
      }
    }
    acc = einc_team_sum<WIDE>(acc, G, partial);
    if (o < meta.total && lane == 0) store_as<TC>(static_cast<TOut*>(out) + base[0], acc);
  }
}

template <int R, int T, int U, bool UNIT, class TOut, class TC, class TA, class... In>
__device__ __forceinline__ void einc_reduce_rows(void* __restrict__ out, const void* const* in,
                                                 const EincLoopMeta<R, T>& meta) {
  __shared__ TA partial[32];
  // Two copies of the loop: teams within a warp need no barrier at all, and keeping the
  // barrier out of their loop lets ptxas allocate registers without spilling.
  if (meta.team > 32) {
    einc_reduce_rows_loop<true, R, T, U, UNIT, TOut, TC, TA, In...>(out, in, meta, partial);
  } else {
    einc_reduce_rows_loop<false, R, T, U, UNIT, TOut, TC, TA, In...>(out, in, meta, partial);
  }
}

template <bool SPLIT, int R, int T, int U, class TOut, class TC, class TA, class... In>
__device__ __forceinline__ void einc_reduce_cols_loop(void* __restrict__ out, const void* const* in,
                                                      const EincLoopMeta<R, T>& meta, TA* partial) {
  constexpr int NI = T - 1;
  const int S = SPLIT ? static_cast<int>(meta.team) : 1;  // slices of the sum per output
  const int W = blockDim.x / S;                            // outputs per block pass
  const int lane = threadIdx.x % W, slice = threadIdx.x / W;
  long long stride[NI];
#pragma unroll
  for (int t = 0; t < NI; ++t) stride[t] = meta.inner_stride[t + 1];
  const long long step = static_cast<long long>(gridDim.x) * W;
  for (long long first = static_cast<long long>(blockIdx.x) * W; first < meta.total; first += step) {
    const long long o = first + lane;
    long long base[T];
#pragma unroll
    for (int t = 0; t < T; ++t) base[t] = 0;
    TA acc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] = zero<TA>();
    if (o < meta.total) {
      add_offsets<R, T>(o, static_cast<int>(meta.nfree), meta.free_ext, meta.free_stride, base);
      for (long long q = 0; q < meta.outer_total; ++q) {
        long long full[T];
#pragma unroll
        for (int t = 0; t < T; ++t) full[t] = base[t];
        add_offsets<R, T>(q, static_cast<int>(meta.nouter), meta.sum_ext, meta.sum_stride, full);
        long long off[NI];
#pragma unroll
        for (int t = 0; t < NI; ++t) off[t] = full[t + 1] + slice * stride[t];
        // this slice's terms: inner index slice, slice + S, slice + 2S, ...
        long long i = slice;
        for (; i + (U - 1) * static_cast<long long>(S) < meta.inner; i += U * static_cast<long long>(S)) {
#pragma unroll
          for (int u = 0; u < U; ++u) {
            long long o2[NI];
#pragma unroll
            for (int t = 0; t < NI; ++t) o2[t] = off[t] + u * S * stride[t];
            acc[u] = add(acc[u], EincProduct<TC, TA, In...>::eval(in, o2));
          }
#pragma unroll
          for (int t = 0; t < NI; ++t) off[t] += U * S * stride[t];
        }
        for (; i < meta.inner; i += S) {
          acc[0] = add(acc[0], EincProduct<TC, TA, In...>::eval(in, off));
#pragma unroll
          for (int t = 0; t < NI; ++t) off[t] += S * stride[t];
        }
      }
    }
#pragma unroll
    for (int u = 1; u < U; ++u) acc[0] = add(acc[0], acc[u]);
    if constexpr (SPLIT) {
      partial[threadIdx.x] = acc[0];
      __syncthreads();  // RAW: every slice's partial written before slice 0 adds them
      if (slice == 0)
        for (int s = 1; s < S; ++s) acc[0] = add(acc[0], partial[s * W + lane]);
      __syncthreads();  // WAR: partials read before the next pass overwrites them
    }
    if (o < meta.total && slice == 0) store_as<TC>(static_cast<TOut*>(out) + base[0], acc[0]);
  }
}

template <int R, int T, int U, class TOut, class TC, class TA, class... In>
__device__ __forceinline__ void einc_reduce_cols(void* __restrict__ out, const void* const* in,
                                                 const EincLoopMeta<R, T>& meta) {
  __shared__ TA partial[256];  // one per thread of the (256-thread) block
  if (meta.team > 1) {
    einc_reduce_cols_loop<true, R, T, U, TOut, TC, TA, In...>(out, in, meta, partial);
  } else {
    einc_reduce_cols_loop<false, R, T, U, TOut, TC, TA, In...>(out, in, meta, partial);
  }
}
