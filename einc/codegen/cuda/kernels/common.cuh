// einc CUDA kernels: dtype helpers shared by every kernel family.
//
// Self-contained on purpose (no host headers, no <cstdint>): the emitter pastes this
// file into every translation unit, which must compile with NVRTC and with nvcc alike.
//
// Three kinds of type appear in a kernel:
//   storage S      what a buffer holds: signed char, unsigned char, short, int,
//                  long long, float, double, einc_half, einc_bf16, einc_bool, einc_c64,
//                  einc_c128;
//   compute TC     numpy's accumulation dtype for the step (step.compute): inputs are
//                  converted to it on load, the sum is converted from it on store;
//   accumulator TA what the kernel actually adds in. It equals TC except for integers,
//                  which accumulate in 32-bit (int8/uint8/int16/int32) or 64-bit (int64)
//                  *unsigned* arithmetic: unsigned overflow is defined to wrap, and
//                  truncating the wrapped sum to TC gives numpy's wrapped result.
//
// A value travels  S --value_of--> natural type --cast--> TC --cast--> TA  on load and
// TA --cast--> TC --store_as--> S  on store, so every conversion numpy performs
// (int <-> float, real <-> complex, anything -> bool) happens exactly once, at the
// numpy-visible type.
#pragma once
// The L2 prefetch qualifier of every family's cp.async copies (".L2::128B" asks
// L2 to fetch the 128 bytes around each copy's sector: the next k of a K-fast row, the next x
// run of a slice, arrive from L2). EINC_L2_PREFETCH=64|128|256 sets it (emit._assemble).
#ifndef EINC_L2_HINT
#define EINC_L2_HINT ""
#endif

// ---------------------------------------------------------------------------------------
// Storage types that C++ has no native spelling for.
struct einc_half { unsigned short bits; };          // IEEE binary16, converted with cvt
struct einc_bf16 { unsigned short bits; };          // bfloat16: the top half of a binary32
struct einc_bool { unsigned char v; };              // numpy bool: one byte, 0 or 1
struct __align__(8) einc_c64 { float re, im; };     // numpy complex64
struct __align__(16) einc_c128 { double re, im; };  // numpy complex128

// binary16 <-> binary32/64 by PTX cvt (round to nearest even, as numpy does), so no
// cuda_fp16.h is needed. (EINC_HOST_EMULATION: the CPU emulator in
// tests/test_cuda_codegen.py compiles these files as plain C++ and brings its own.)
#ifndef EINC_HOST_EMULATION
__device__ __forceinline__ float einc_h2f(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short einc_f2h(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float einc_bf2f(unsigned short h) {  // exact: bf16 is a truncated fp32
  return __uint_as_float(static_cast<unsigned>(h) << 16);
}
__device__ __forceinline__ unsigned short einc_f2bf(float f) {  // round to nearest even (sm_80+)
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ unsigned short einc_d2h(double d) {
  unsigned short h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
  return h;
}
#endif

// ---------------------------------------------------------------------------------------
// cast<To>(from) between the natural types (bool, integers, float, double, complex).
template <class To, class From> struct EincCast {
  static __device__ __forceinline__ To f(From x) { return static_cast<To>(x); }
};
template <class From> struct EincCast<einc_c64, From> {
  static __device__ __forceinline__ einc_c64 f(From x) { return einc_c64{static_cast<float>(x), 0.0f}; }
};
template <class From> struct EincCast<einc_c128, From> {
  static __device__ __forceinline__ einc_c128 f(From x) { return einc_c128{static_cast<double>(x), 0.0}; }
};
template <class To> struct EincCast<To, einc_c64> {  // complex -> real keeps the real part
  static __device__ __forceinline__ To f(einc_c64 x) { return static_cast<To>(x.re); }
};
template <class To> struct EincCast<To, einc_c128> {
  static __device__ __forceinline__ To f(einc_c128 x) { return static_cast<To>(x.re); }
};
template <> struct EincCast<bool, einc_c64> {  // numpy: a complex is true when either part is
  static __device__ __forceinline__ bool f(einc_c64 x) { return x.re != 0.0f || x.im != 0.0f; }
};
template <> struct EincCast<bool, einc_c128> {
  static __device__ __forceinline__ bool f(einc_c128 x) { return x.re != 0.0 || x.im != 0.0; }
};
template <> struct EincCast<einc_c64, einc_c64> {
  static __device__ __forceinline__ einc_c64 f(einc_c64 x) { return x; }
};
template <> struct EincCast<einc_c128, einc_c128> {
  static __device__ __forceinline__ einc_c128 f(einc_c128 x) { return x; }
};
template <> struct EincCast<einc_c64, einc_c128> {
  static __device__ __forceinline__ einc_c64 f(einc_c128 x) {
    return einc_c64{static_cast<float>(x.re), static_cast<float>(x.im)};
  }
};
template <> struct EincCast<einc_c128, einc_c64> {
  static __device__ __forceinline__ einc_c128 f(einc_c64 x) { return einc_c128{x.re, x.im}; }
};

template <class To, class From> __device__ __forceinline__ To cast(From x) {
  return EincCast<To, From>::f(x);
}

// ---------------------------------------------------------------------------------------
// Loading: storage -> natural value.
template <class S> __device__ __forceinline__ S value_of(S x) { return x; }
__device__ __forceinline__ float value_of(einc_half x) { return einc_h2f(x.bits); }
__device__ __forceinline__ float value_of(einc_bf16 x) { return einc_bf2f(x.bits); }
__device__ __forceinline__ bool value_of(einc_bool x) { return x.v != 0; }

// One element of storage type S at p, converted to the compute type TC and then to the
// accumulator type TA.
template <class TC, class TA, class S> __device__ __forceinline__ TA load_as(const S* p) {
  return cast<TA>(cast<TC>(value_of(*p)));
}
template <class TC, class TA, class S> __device__ __forceinline__ TA convert_in(S x) {
  return cast<TA>(cast<TC>(value_of(x)));
}

// Storing: compute value -> storage.
template <class S> struct EincStore {
  template <class T> static __device__ __forceinline__ S f(T v) { return cast<S>(v); }
};
template <> struct EincStore<einc_bool> {
  template <class T> static __device__ __forceinline__ einc_bool f(T v) {
    return einc_bool{static_cast<unsigned char>(cast<bool>(v) ? 1 : 0)};
  }
};
template <> struct EincStore<einc_half> {
  // float and double round once, straight to binary16; other types go through double,
  // which holds every int32 exactly (numpy converts integers to half the same way).
  static __device__ __forceinline__ einc_half f(float v) { return einc_half{einc_f2h(v)}; }
  static __device__ __forceinline__ einc_half f(double v) { return einc_half{einc_d2h(v)}; }
  template <class T> static __device__ __forceinline__ einc_half f(T v) {
    return einc_half{einc_d2h(cast<double>(v))};
  }
};

template <> struct EincStore<einc_bf16> {  // through float: bfloat16 steps compute in float
  template <class T> static __device__ __forceinline__ einc_bf16 f(T v) {
    return einc_bf16{einc_f2bf(cast<float>(v))};
  }
};

// acc (type TA) truncated/converted to the compute type TC, then stored as S.
template <class TC, class S, class TA> __device__ __forceinline__ void store_as(S* p, TA acc) {
  *p = EincStore<S>::f(cast<TC>(acc));
}

// ---------------------------------------------------------------------------------------
// Arithmetic in the accumulator type: zero, add, mul (bool: OR of ANDs, as numpy).
template <class T> __device__ __forceinline__ T zero() { return static_cast<T>(0); }
template <> __device__ __forceinline__ einc_c64 zero<einc_c64>() { return einc_c64{0.0f, 0.0f}; }
template <> __device__ __forceinline__ einc_c128 zero<einc_c128>() { return einc_c128{0.0, 0.0}; }

template <class T> __device__ __forceinline__ T add(T a, T b) { return a + b; }
__device__ __forceinline__ bool add(bool a, bool b) { return a || b; }
__device__ __forceinline__ einc_c64 add(einc_c64 a, einc_c64 b) { return einc_c64{a.re + b.re, a.im + b.im}; }
__device__ __forceinline__ einc_c128 add(einc_c128 a, einc_c128 b) { return einc_c128{a.re + b.re, a.im + b.im}; }

template <class T> __device__ __forceinline__ T mul(T a, T b) { return a * b; }
__device__ __forceinline__ bool mul(bool a, bool b) { return a && b; }
__device__ __forceinline__ einc_c64 mul(einc_c64 a, einc_c64 b) {
  return einc_c64{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
__device__ __forceinline__ einc_c128 mul(einc_c128 a, einc_c128 b) {
  return einc_c128{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// acc + a*b; the compiler contracts the float forms into one FMA (numpy's fp32 sums are
// not bit-exact anyway; DESIGN: "fp32 means exact fp32 FMA").
template <class T> __device__ __forceinline__ T mac(T acc, T a, T b) { return add(acc, mul(a, b)); }

// ---------------------------------------------------------------------------------------
// Warp shuffles for every accumulator type (xor butterfly inside aligned lane groups).
__device__ __forceinline__ float shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ double shfl_xor(double v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ unsigned shfl_xor(unsigned v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ unsigned long long shfl_xor(unsigned long long v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ bool shfl_xor(bool v, int m) {
  return __shfl_xor_sync(0xffffffffu, static_cast<int>(v), m) != 0;
}
__device__ __forceinline__ einc_c64 shfl_xor(einc_c64 v, int m) {
  return einc_c64{shfl_xor(v.re, m), shfl_xor(v.im, m)};
}
__device__ __forceinline__ einc_c128 shfl_xor(einc_c128 v, int m) {
  return einc_c128{shfl_xor(v.re, m), shfl_xor(v.im, m)};
}

// ---------------------------------------------------------------------------------------
// Index helpers (64-bit offsets everywhere; 32-bit division when both operands fit).
__device__ __forceinline__ long long einc_div(long long q, long long e, long long& rem) {
  if (((q | e) >> 31) == 0) {  // both non-negative and < 2^31: the cheap hardware path
    unsigned a = static_cast<unsigned>(q), b = static_cast<unsigned>(e);
    unsigned d = a / b;
    rem = static_cast<long long>(a - d * b);
    return static_cast<long long>(d);
  }
  long long d = q / e;
  rem = q - d * e;
  return d;
}

// Add to off[t] the offset of the linear index q decomposed over `n` modes
// (ext[0..n), mode n-1 fastest) with strides st[t][0..n). The outermost mode takes the
// remaining quotient, so a single mode costs no division at all.
template <int R, int T>
__device__ __forceinline__ void add_offsets(long long q, int n, const long long (&ext)[R],
                                            const long long (&st)[T][R], long long (&off)[T]) {
#pragma unroll
  for (int j = R - 1; j >= 0; --j) {
    if (j < n) {
      long long c = q;
      if (j > 0) q = einc_div(q, ext[j], c);
#pragma unroll
      for (int t = 0; t < T; ++t) off[t] += c * st[t][j];
    }
  }
}

// ---------------------------------------------------------------------------------------
// Metadata of the loop-nest kernels, `generic` and `reduce` (all fields 8 bytes: no padding).
//   T = 1 + number of operands; stride tables are indexed [tensor][mode], tensor 0 the
//   result. R bounds the number of free modes and of outer summed modes separately.
template <int R, int T> struct EincLoopMeta {
  long long total;        // output elements
  long long team;         // reduce_rows: threads that cooperate on one output (2^k)
  long long nfree;        // free modes used, in free_ext[0..nfree)
  long long nouter;       // outer summed modes used, in sum_ext[0..nouter)
  long long outer_total;  // product of the outer summed extents (0 if one of them is 0)
  long long inner;        // extent of the innermost summed mode (1 when nothing is summed)
  long long inner_stride[T];
  long long free_ext[R];
  long long free_stride[T][R];
  long long sum_ext[R];
  long long sum_stride[T][R];
};

// A run of N elements of type S that the hardware loads in one instruction.
template <class S, int N> struct __align__(sizeof(S) * N) EincVec { S v[N]; };

// ---------------------------------------------------------------------------------------
// The product of one element of every operand: in[t] points at operand t's element
// (types In...), converted on load; left to right, as numpy multiplies.
template <class TC, class TA, class... In> struct EincProduct;
template <class TC, class TA, class S0, class... Rest> struct EincProduct<TC, TA, S0, Rest...> {
  static __device__ __forceinline__ TA eval(const void* const* in, const long long* off) {
    TA p = load_as<TC, TA>(static_cast<const S0*>(in[0]) + off[0]);
    return EincProduct<TC, TA, Rest...>::more(p, in + 1, off + 1);
  }
  static __device__ __forceinline__ TA more(TA p, const void* const* in, const long long* off) {
    p = mul(p, load_as<TC, TA>(static_cast<const S0*>(in[0]) + off[0]));
    return EincProduct<TC, TA, Rest...>::more(p, in + 1, off + 1);
  }
};
template <class TC, class TA> struct EincProduct<TC, TA> {
  static __device__ __forceinline__ TA more(TA p, const void* const*, const long long*) { return p; }
};

template <class... In> struct EincTypes {
  static constexpr int count = sizeof...(In);
  static constexpr int max_size = 0;
};
template <class S0, class... Rest> struct EincTypes<S0, Rest...> {
  static constexpr int count = 1 + sizeof...(Rest);
  static constexpr int rest = EincTypes<Rest...>::max_size;
  static constexpr int max_size = (int)sizeof(S0) > rest ? (int)sizeof(S0) : rest;
};

// mbarriers (shared::cta addresses; sm_90): wgmma's pipeline, copy_tma's and skinny_mma's
// TMA stages. einc_mbar_wait spins until the phase of parity `parity` has completed.
__device__ __forceinline__ void einc_mbar_init(unsigned bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#endif
}
__device__ __forceinline__ void einc_mbar_wait(unsigned bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .pred p;\n EINC_MBAR_WAIT:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra EINC_MBAR_WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}

// A CUtensorMap (TMA), passed by value as a __grid_constant__ kernel parameter (the host
// encodes it: runtime/cuda.py encode_tmap); wgmma's operand and C maps, stream_mma's C boxes.
struct alignas(64) EincTmap {
  unsigned long long w[16];
};

// Thread-level TMA store: the box of shared memory at src (a shared-space address) to the
// map's element coordinates c (dim 0 fastest), then commit the bulk group (copy_tma's rows
// and stream_mma's C tiles; the caller waits on the group before reusing src).
template <int RANK>
__device__ __forceinline__ void einc_tma_store(const EincTmap* map, const int* c, unsigned src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  if constexpr (RANK == 1)
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];\n" ::"l"(m), "r"(c[0]),
                 "r"(src) : "memory");
  else if constexpr (RANK == 2)
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(m),
                 "r"(c[0]), "r"(c[1]), "r"(src) : "memory");
  else if constexpr (RANK == 3)
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(m),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src) : "memory");
  else if constexpr (RANK == 4)
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(m),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(src) : "memory");
  else
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];\n" ::"l"(m),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(src) : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
