// Per-row statistics of the fused row kernels (softmax.cu, layer_norm.cu),
// written as mergeable states so one code path serves a thread walking a
// row alone, a warp and a whole block: each thread folds its elements in
// with add(), then partial states merge with combine() in any tree order.
// __host__ __device__, so tests/row_ops_test.cu checks them on the host.
//
// C is the compute type: float for float16/bfloat16/float32, double for
// float64 (statistics in float32 or wider, as the CPU plugin).
#pragma once

#include "vendor/gpu_target.hpp"

#include <cmath>
#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::rows {

template <class C>
__host__ __device__ inline C exp_of(C x) {
  if constexpr (sizeof(C) == 4) return ::expf(x);
  else return ::exp(x);
}
template <class C>
__host__ __device__ inline C log_of(C x) {
  if constexpr (sizeof(C) == 4) return ::logf(x);
  else return ::log(x);
}
template <class C>
__host__ __device__ inline C rsqrt_of(C x) {
  if constexpr (sizeof(C) == 4) return C(1) / ::sqrtf(x);
  else return C(1) / ::sqrt(x);
}

// The running max m of a row and sum s = Σ exp(x - m) (the "online
// softmax"). Matches the CPU plugin's max-then-sum on every edge:
//  - NaN never becomes m (x > m is false) but exp(NaN - m) makes s NaN,
//    so a row with a NaN is NaN everywhere;
//  - -inf entries add 0; a row of only -inf keeps m = -inf and s = 0, and
//    the output pass's x - m = NaN gives NaN, as 0/0 in PyTorch;
//  - a +inf entry adds exp(inf - inf) = NaN, as on the CPU.
// Rescaling a sum to a new max is skipped when the max is unchanged, so
// -inf - (-inf) never turns an empty (0) sum into NaN.
template <class C>
struct OnlineSoftmax {
  C m = -INFINITY;
  C s = 0;

  __host__ __device__ static C rescale(C sum, C from, C to) { return from == to ? sum : sum * exp_of(from - to); }

  __host__ __device__ void add(C x) {
    const C nm = x > m ? x : m;
    s = rescale(s, m, nm) + (x == -INFINITY ? C(0) : exp_of(x - nm));
    m = nm;
  }
  __host__ __device__ void combine(const OnlineSoftmax& o) {
    const C nm = o.m > m ? o.m : m;
    s = rescale(s, m, nm) + rescale(o.s, o.m, nm);
    m = nm;
  }
  // The result for element x of the row once every element is in.
  __host__ __device__ C softmax(C x) const { return exp_of(x - m) / s; }
  // (x - m) - log s: x - m is exact near the max, where m + log s rounded
  // first would lose a small result to the size of m.
  __host__ __device__ C log_softmax(C x) const { return (x - m) - log_of(s); }

  // The state with f applied to every field (how a warp shuffles it).
  template <class F>
  __host__ __device__ OnlineSoftmax map(F f) const {
    OnlineSoftmax r;
    r.m = f(m);
    r.s = f(s);
    return r;
  }
};

// Count, mean and M2 = Σ (x - mean)² of a row (Welford; Chan et al. to
// merge), so the variance comes without the cancellation of E[x²] - E[x]².
// The count is an integer: float counts stop at 2^24.
template <class C>
struct Welford {
  int64_t n = 0;
  C mean = 0;
  C m2 = 0;

  __host__ __device__ void add(C x) {
    ++n;
    const C d = x - mean;
    mean += d / static_cast<C>(n);
    m2 += d * (x - mean);
  }
  __host__ __device__ void combine(const Welford& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    const int64_t t = n + o.n;
    const C d = o.mean - mean;
    const C wo = static_cast<C>(o.n) / static_cast<C>(t);
    mean += d * wo;
    m2 += o.m2 + d * d * static_cast<C>(n) * wo;
    n = t;
  }
  // 1 / sqrt(biased variance + eps), as PyTorch's layer_norm.
  __host__ __device__ C rstd(C eps) const { return rsqrt_of(m2 / static_cast<C>(n) + eps); }

  template <class F>
  __host__ __device__ Welford map(F f) const {
    Welford r;
    r.n = f(n);
    r.mean = f(mean);
    r.m2 = f(m2);
    return r;
  }
};

}  // namespace loom::LOOM_GPU_NAMESPACE::rows
