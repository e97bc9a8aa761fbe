// einc CUDA kernel family `copy_tma` (sm_90): a rows copy -- input and output unit-stride
// along the same mode, the other modes reordered (GEMM-order copies such as njmi->mnji,
// kmln->lkmn) -- moved whole by the TMA unit. The host encodes two tensor maps over the same
// dimensions in the same order (dim 0 the shared unit-stride mode, dims 1.. the others,
// the output's fastest first), one with the input's byte strides, one with the output's;
// a box of those dimensions is then the same dense block of shared memory on both sides.
// No thread computes an address: the copy engine gathers a box from the input and
// scatters it to the output, clipping what lies outside the tensor (ragged boxes need no
// predicates; the load zero-fills it, the store drops it).
//
// One thread per block runs a ring of S stages:
//
//   prologue: load boxes 0..S-1 of this block (box i of the block: blockIdx.x + i * gridDim.x)
//   box i:    wait full[i % S] (the load landed); store the stage to box i; commit
//             wait until at most one store still reads its stage (bulk wait_group.read 1):
//             box i-1's stage is free -> load box i-1+S into it
//   end:      wait until every store completed
//
// so about S-1 boxes are being read while one is written. Box coordinates come from the
// box index, dim 0 fastest (consecutive boxes are neighbours in the output).
#pragma once
#include "common.cuh"

struct EincCopyTmaMeta {
  long long boxes;      // boxes in all
  long long box_bytes;  // one box's bytes (the load's transaction count)
  long long stage;      // bytes between stages (box_bytes rounded up to 128)
  long long nbox[5];    // boxes along each dimension
  long long box[5];     // box extents (elements)
};

struct EincCopyTmaps {
  EincTmap src, dst;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
template <int RANK>
__device__ __forceinline__ void einc_copy_tma_load(unsigned dst, const EincTmap* map, const int* c, unsigned bar) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  if constexpr (RANK == 1)
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];\n"
                 ::"r"(dst), "l"(m), "r"(c[0]), "r"(bar) : "memory");
  else if constexpr (RANK == 2)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];\n" ::"r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(bar) : "memory");
  else if constexpr (RANK == 3)
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
                 "[%5];\n" ::"r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar) : "memory");
  else if constexpr (RANK == 4)
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
                 "%5}], [%6];\n" ::"r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar) : "memory");
  else
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
                 "%5, %6}], [%7];\n" ::"r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar)
                 : "memory");
}

// Box t's element coordinates (dim 0 fastest).
template <int RANK>
__device__ __forceinline__ void einc_copy_tma_coords(long long t, const EincCopyTmaMeta& p, int* c) {
#pragma unroll
  for (int d = 0; d < RANK; ++d) {
    const long long q = t / p.nbox[d];
    c[d] = static_cast<int>((t - q * p.nbox[d]) * p.box[d]);
    t = q;
  }
}
#endif

template <int RANK, int S>
__device__ __forceinline__ void einc_copy_tma(const EincCopyTmaps* tm, const EincCopyTmaMeta& p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char einc_smem[];
  __shared__ __align__(8) unsigned long long full[S];
  if (threadIdx.x != 0 || blockIdx.x >= p.boxes) return;
  const long long count = (p.boxes - 1 - blockIdx.x) / gridDim.x + 1;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(einc_smem));
  const unsigned bar0 = static_cast<unsigned>(__cvta_generic_to_shared(full));
  const unsigned stage = static_cast<unsigned>(p.stage), bytes = static_cast<unsigned>(p.box_bytes);
#pragma unroll
  for (int s = 0; s < S; ++s) einc_mbar_init(bar0 + 8 * s, 1);
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // the inits, visible to the copy engine
  auto load = [&](long long i) {
    const int s = static_cast<int>(i % S);
    int c[5];
    einc_copy_tma_coords<RANK>(blockIdx.x + i * gridDim.x, p, c);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar0 + 8 * s), "r"(bytes) : "memory");
    einc_copy_tma_load<RANK>(base + s * stage, &tm->src, c, bar0 + 8 * s);
  };
  for (long long i = 0; i < count && i < S; ++i) load(i);
  for (long long i = 0; i < count; ++i) {
    const int s = static_cast<int>(i % S);
    const unsigned parity = static_cast<unsigned>((i / S) & 1), bar = bar0 + 8 * s;
    einc_mbar_wait(bar, parity);
    int c[5];
    einc_copy_tma_coords<RANK>(blockIdx.x + i * gridDim.x, p, c);
    einc_tma_store<RANK>(&tm->dst, c, base + s * stage);
    if (i >= 1 && i - 1 + S < count) {
      asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");  // box i-1's store has read its stage
      load(i - 1 + S);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}
