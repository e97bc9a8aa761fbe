// einc CUDA kernel family `generic`: any step, any dtypes, any number of operands.
//
//   result[free] = sum over summed modes of  prod_t operand_t[...]
//
// Ownership: one thread per output element. Thread g of the grid owns the outputs
// o = g, g + gridDim.x*blockDim.x, ... (grid-stride, so any grid size is correct). The
// free modes are decoded from o by div/mod over their extents (mode nfree-1 fastest;
// the emitter lists the output's unit-stride mode last, so adjacent threads write
// adjacent elements); the summed modes are walked serially by the owning thread: the
// outer summed modes by decoding a linear counter q, the innermost one by a plain
// strided loop. The accumulator starts at zero, so a zero-length sum writes zeros.
//
// No shared memory, no barriers: threads never communicate.
//
// Extents and strides arrive in EincLoopMeta (common.cuh), passed by value, so one compiled kernel
// per (dtypes, operand count, rank bound R) serves every shape and stride pattern.
#pragma once
#include "common.cuh"

template <int R, int T, class TOut, class TC, class TA, class... In>
__device__ __forceinline__ void einc_generic(void* __restrict__ out, const void* const* in,
                                             const EincLoopMeta<R, T>& meta) {
  static_assert(sizeof...(In) + 1 == T, "one stride row per tensor");
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long o = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; o < meta.total;
       o += step) {
    long long base[T];
#pragma unroll
    for (int t = 0; t < T; ++t) base[t] = 0;
    add_offsets<R, T>(o, static_cast<int>(meta.nfree), meta.free_ext, meta.free_stride, base);

    TA acc = zero<TA>();
    for (long long q = 0; q < meta.outer_total; ++q) {
      long long off[T];
#pragma unroll
      for (int t = 0; t < T; ++t) off[t] = base[t];
      add_offsets<R, T>(q, static_cast<int>(meta.nouter), meta.sum_ext, meta.sum_stride, off);
      for (long long i = 0; i < meta.inner; ++i) {
        acc = add(acc, EincProduct<TC, TA, In...>::eval(in, off + 1));
#pragma unroll
        for (int t = 1; t < T; ++t) off[t] += meta.inner_stride[t];
      }
    }
    store_as<TC>(static_cast<TOut*>(out) + base[0], acc);
  }
}
