// The fp64 tensor cores' rate for an fp32 GEMM's inner loop (session 20): mma.sync
// m16n8k8 .f64 on a 64x32 warp tile (16 products per k8), fragments (a) in registers only,
// (b) read as fp32 from a k-major shared tile (rows padded to 136 floats: conflict-free
// fragment reads) and converted (24 LDS + 24 cvt per 16 products), 8 or 16 warps per SM.
//   nvcc -O3 -arch=sm_90 scripts/dmma_peak.cu -o /tmp/dmma && /tmp/dmma
#include <cstdio>
__device__ __forceinline__ void dmma(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
template <bool SMEM>
__global__ void __launch_bounds__(256, 1) k(double* out, int iters) {
  __shared__ float As[16][136], Bs[16][136];
  for (int i = threadIdx.x; i < 16 * 136; i += 256) { (&As[0][0])[i] = i * 1e-3f; (&Bs[0][0])[i] = i * 2e-3f; }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
  double acc[4][4][4] = {};
  double a[4][4], b[4][2];
  for (int i = 0; i < 4; ++i) for (int e = 0; e < 4; ++e) a[i][e] = lane + i + e;
  for (int j = 0; j < 4; ++j) for (int e = 0; e < 2; ++e) b[j][e] = lane - j + e;
  for (int it = 0; it < iters; ++it) {
    const int k0 = (it & 1) * 8;
    if constexpr (SMEM) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) a[i][e] = As[k0 + t + 4 * (e / 2)][wm + 16 * i + g + 8 * (e % 2)];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) b[j][e] = Bs[k0 + t + 4 * e][wn + 8 * j + g];
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) dmma(acc[i][j], a[i], b[j]);
  }
  double s = 0;
  for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) for (int e = 0; e < 4; ++e) s += acc[i][j][e];
  out[blockIdx.x * 256 + threadIdx.x] = s;
}
int main() {
  double* out; cudaMalloc(&out, 132 * 2 * 256 * 8);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const int iters = 20000;
  for (int smem = 0; smem < 2; ++smem)
    for (int blocks = 132; blocks <= 264; blocks += 132) {
      auto run = [&] { if (smem) k<true><<<blocks, 256>>>(out, iters); else k<false><<<blocks, 256>>>(out, iters); };
      run(); cudaDeviceSynchronize();
      cudaEventRecord(e0); run(); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      const double fl = 2.0 * blocks * 8 * 16 * 16.0 * 8 * 8 * iters;  // warps x products x 16*8*8 FMA
      printf("dmma m16n8k8 %s, %d blocks of 256: %.3f ms, %.1f TFLOP/s\n", smem ? "fp32 smem fragments + cvt" : "register fragments", blocks, ms, fl / ms / 1e9);
    }
  return 0;
}
