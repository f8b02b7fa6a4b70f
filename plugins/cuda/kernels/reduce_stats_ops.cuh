// The statistics' combine functors (var/std, norm, logsumexp), with the
// interface of reduce_ops.cuh and the CPU plugin's semantics
// (plugins/cpu/reduce_stats.cpp). Floating dtypes only.
#pragma once

#include "reduce_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <loom/plugin/welford.hpp>

#include <cmath>
#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::reduce {

// ----------------------------------------------------------- var / std ---

// Count, mean, Σ(x - mean)² (loom/plugin/welford.hpp, shared by every device).
using plugin::Moments;

// Welford per element, Chan et al. between partials, in double; result
// m2 / max(0, N - correction) (0/0 = NaN for an empty or too small slice),
// std its square root.
template <class T>
struct MomentsOp {
  using In = T;
  using Acc = Moments;
  static constexpr bool kHasIdentity = true;
  double correction;
  bool take_sqrt;  // std
  T* out;

  __host__ __device__ Acc init() const { return {0, 0, 0}; }
  __host__ __device__ void add(Acc& a, T x, int64_t) const {
    plugin::welford_add(a, static_cast<double>(widen(x)));
  }
  __host__ __device__ void combine(Acc& a, const Acc& b) const { plugin::welford_combine(a, b); }
  __host__ __device__ void store(const Acc& a, int64_t n, int64_t o0, int64_t) const {
    const double v = plugin::welford_variance(a, static_cast<double>(n), correction);
    out[o0] = from_acc<T>(take_sqrt ? sqrt(v) : v);
  }
};

// ----------------------------------------------------------------- norm ---

// Which norm a NormOp computes; p picks it once on the host.
enum class NormKind : int32_t { Max, Min, Count, Abs, Square, Pow };

__host__ __device__ inline NormKind norm_kind(double p) {
  const double inf = std::numeric_limits<double>::infinity();
  if (p == inf) return NormKind::Max;
  if (p == -inf) return NormKind::Min;
  if (p == 0) return NormKind::Count;
  if (p == 1) return NormKind::Abs;
  if (p == 2) return NormKind::Square;
  return NormKind::Pow;
}

// p = inf: max |x|; -inf: min |x| (empty: +inf); 0: count of non-zeros (NaN
// counts); 1: Σ|x|; 2: √Σx²; else (Σ|x|^p)^(1/p). All in double. One
// instantiation per dtype: the kind is a uniform runtime branch.
template <class T>
struct NormOp {
  using In = T;
  using Acc = double;
  static constexpr bool kHasIdentity = true;
  NormKind kind;
  double p;
  T* out;

  __host__ __device__ Acc init() const {
    return kind == NormKind::Min ? std::numeric_limits<double>::infinity() : 0.0;
  }
  __host__ __device__ void add(Acc& a, T x, int64_t) const {
    const double v = static_cast<double>(widen(x));
    switch (kind) {
      case NormKind::Count: a += v != 0 ? 1.0 : 0.0; break;
      case NormKind::Abs: a += fabs(v); break;
      case NormKind::Square: a += v * v; break;
      case NormKind::Pow: a += pow(fabs(v), p); break;
      default: combine(a, fabs(v)); break;
    }
  }
  __host__ __device__ void combine(Acc& a, const Acc& b) const {
    if (kind == NormKind::Max) a = beyond<true>(b, a) ? b : a;
    else if (kind == NormKind::Min) a = beyond<false>(b, a) ? b : a;
    else a += b;
  }
  __host__ __device__ void store(const Acc& a, int64_t, int64_t o0, int64_t) const {
    double r = a;
    if (kind == NormKind::Square) r = sqrt(a);
    else if (kind == NormKind::Pow) r = pow(a, 1.0 / p);
    out[o0] = from_acc<T>(r);
  }
};

// ------------------------------------------------------------ logsumexp ---

// max-shifted: m + log Σ exp(x - m), online. Special values (NaN, ±inf)
// go through combine, which keeps a NaN, lets +inf win and ignores -inf;
// all -inf (or empty) gives -inf.
template <class T>
struct LseOp {
  using In = T;
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  struct Acc {
    C m, s;  // running max and Σ exp(x - m); m = -inf: nothing yet
  };
  static constexpr bool kHasIdentity = true;
  T* out;

  static constexpr C kInf = std::numeric_limits<C>::infinity();
  __host__ __device__ static bool finite(C x) { return x - x == 0; }  // false for ±inf and NaN

  __host__ __device__ Acc init() const { return {-kInf, C(0)}; }
  __host__ __device__ void add(Acc& a, T x, int64_t) const {
    const C v = widen(x);
    if (!(finite(v) && finite(a.m))) {
      combine(a, {v, C(1)});
    } else if (v > a.m) {
      a = {v, a.s * exp(a.m - v) + C(1)};
    } else {
      a.s += exp(v - a.m);
    }
  }
  __host__ __device__ void combine(Acc& a, const Acc& b) const {
    if (is_nan(a.m) || b.m == -kInf) return;  // a is NaN, or b adds nothing
    if (is_nan(b.m) || a.m == -kInf) {
      a = b;
    } else if (a.m == kInf || b.m == kInf) {
      a = {kInf, C(1)};
    } else if (b.m > a.m) {
      a = {b.m, a.s * exp(a.m - b.m) + b.s};
    } else {
      a.s += b.s * exp(b.m - a.m);
    }
  }
  __host__ __device__ void store(const Acc& a, int64_t, int64_t o0, int64_t) const {
    const bool special = !finite(a.m);  // NaN, all -inf, or +inf
    out[o0] = narrow<T>(static_cast<opmath_t<T>>(special ? a.m : a.m + log(a.s)));
  }
};

}  // namespace loom::LOOM_GPU_NAMESPACE::reduce
