// The per-element functors of the unary CUDA kernels (unary.cu,
// unary_float.cu), __host__ __device__ so tests/elementwise_ops_test.cu
// checks them on the host. Definitions: docs/kernel_conventions.md,
// "Elementwise unary ops"; the reference is the CPU plugin (unary.cpp,
// unary_float.cpp, elementwise.cpp), whose special cases each functor keeps:
// integers wrap (abs(INT_MIN) = INT_MIN), NaN passes through relu and clamp,
// sign(NaN) = 0, a NaN clamp bound gives NaN.
//
// A functor takes and returns storage types (T, or bool for the to-bool
// tests) and computes in compute_t<T> (float for the 16-bit floats). Ops
// that copy integers unchanged (floor, round, nan_to_num ...) are only
// instantiated for floats: the kernels send integers to one shared copy.
//
// The float-rule math (exp ... gelu) is MathOp<Fn, T>: Fn<V> computes in
// V = float or double with CUDA's math library (within its documented ulp
// bounds, like PyTorch's CUDA kernels; the CPU plugin rounds correctly in
// double, so float results may differ from it in the last bit), using the
// CPU's cancellation-free forms so special values (inf, NaN, -0) agree.
//
// The elementwise family lives in loom::<plugin>::ew: a kernel instantiation is
// named after its functor, so a functor name another kernel family may also
// use (Add, Maximum) in the same namespace would let one definition silently
// replace the other at link time.
#pragma once

#include "scalar_math.cuh"
#include "vendor/gpu_target.hpp"

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::ew {

// ------------------------------------------------- same-dtype ops ---

// Integers: two's complement negation (unsigned wraps); floats flip the
// sign, so neg(0) is -0 (0 - x would give +0).
template <class T>
struct Neg {
  __host__ __device__ T operator()(T a) const {
    if constexpr (is_floating_v<T>) return narrow<T>(-widen(a));
    else return from_arith<T>(arith_t<T>(0) - to_arith(a));
  }
};

// NaN fails `x < 0` and passes through; -0 stays -0.
template <class T>
struct Relu {
  __host__ __device__ T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T>) return a;
    else if constexpr (is_integer_v<T>) return a < 0 ? T(0) : a;
    else {
      const compute_t<T> x = widen(a);
      return narrow<T>(x < 0 ? compute_t<T>(0) : x);
    }
  }
};

template <class T>
struct Abs {
  __host__ __device__ T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T>) return a;
    else if constexpr (is_integer_v<T>) return a < 0 ? from_arith<T>(wrap_t<T>(0) - to_arith(a)) : a;
    else return narrow<T>(math::fabs(widen(a)));
  }
};

// -1, 0 or 1; NaN gives 0 (both comparisons fail), -0 gives +0.
template <class T>
struct Sign {
  __host__ __device__ T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return a;
    else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(a != 0);
    else if constexpr (is_integer_v<T>) return static_cast<T>((a > 0) - (a < 0));
    else {
      const compute_t<T> x = widen(a);
      return narrow<T>(static_cast<compute_t<T>>((x > 0) - (x < 0)));
    }
  }
};

template <class T>
struct Square {
  __host__ __device__ T operator()(T a) const { return from_arith<T>(mul_rn(to_arith(a), to_arith(a))); }
};

enum class Rounding { Floor, Ceil, Trunc };

// Floating T only (integers are whole already).
template <Rounding M, class T>
struct RoundTo {
  __host__ __device__ T operator()(T a) const {
    const compute_t<T> x = widen(a);
    if constexpr (M == Rounding::Floor) return narrow<T>(math::floor(x));
    else if constexpr (M == Rounding::Ceil) return narrow<T>(math::ceil(x));
    else return narrow<T>(math::trunc(x));
  }
};

// round(x, decimals), half to even, PyTorch's formula; floating T only.
// p = 10^|decimals| (1 for decimals = 0, which is exact).
template <class T>
struct Round {
  compute_t<T> p;
  bool divide_first;  // decimals < 0
  __host__ __device__ T operator()(T a) const {
    const compute_t<T> x = widen(a);
    return narrow<T>(divide_first ? math::rint(x / p) * p : math::rint(x * p) / p);
  }
};

// NaN, +inf and -inf replaced by values already rounded to T; floating T only.
template <class T>
struct NanToNum {
  compute_t<T> nan, posinf, neginf;
  __host__ __device__ T operator()(T a) const {
    const compute_t<T> x = widen(a), inf = infinity<compute_t<T>>();
    return narrow<T>(x != x ? nan : x == inf ? posinf : x == -inf ? neginf : x);
  }
};

// Integers compare in T itself (signed stays signed), floats in compute_t.
template <class T>
using clamp_value_t = std::conditional_t<is_integer_v<T>, T, compute_t<T>>;

// min(max(x, lo), hi) as two selects: NaN x fails both comparisons and stays
// NaN, lo > hi gives hi, a NaN bound (nan_bound) gives NaN everywhere.
// Absent bounds are the type's extremes (infinities for floats).
template <class T>
struct Clamp {
  clamp_value_t<T> lo, hi;
  bool nan_bound;
  __host__ __device__ T operator()(T a) const {
    using V = clamp_value_t<T>;
    const V x = static_cast<V>(widen(a));
    V y = x < lo ? lo : x;
    y = y > hi ? hi : y;
    if constexpr (is_floating_v<T>) return narrow<T>(nan_bound ? quiet_nan<V>() : y);
    else return y;
  }
};

// ------------------------------------------------- bool-valued tests ---

// x == 0: NaN is not zero, -0 is.
template <class T>
struct LogicalNot {
  __host__ __device__ bool operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return widen(a) == compute_t<T>(0);
  }
};

enum class FpClass { Nan, Inf, Finite };

// Integers and bool are finite.
template <FpClass K, class T>
struct IsClass {
  __host__ __device__ bool operator()(T a) const {
    if constexpr (!is_floating_v<T>) {
      return K == FpClass::Finite;
    } else {
      const compute_t<T> x = widen(a), inf = infinity<compute_t<T>>();
      if constexpr (K == FpClass::Nan) return x != x;
      else if constexpr (K == FpClass::Inf) return math::fabs(x) == inf;
      else return math::fabs(x) < inf;  // false for NaN
    }
  }
};

// --------------------------------------------------- float-rule math ---

// Fn<compute_t<T>> on a floating storage type T.
template <template <class> class Fn, class T>
struct MathOp {
  Fn<compute_t<T>> fn;
  __host__ __device__ T operator()(T a) const { return narrow<T>(fn(widen(a))); }
};

#define LOOM_CUDA_MATH_FN(Name, expr)                        \
  template <class V>                                         \
  struct Name {                                              \
    __host__ __device__ V operator()(V x) const { return expr; } \
  };

LOOM_CUDA_MATH_FN(ExpFn, math::exp(x))
LOOM_CUDA_MATH_FN(Exp2Fn, math::exp2(x))
LOOM_CUDA_MATH_FN(Expm1Fn, math::expm1(x))
LOOM_CUDA_MATH_FN(LogFn, math::log(x))
LOOM_CUDA_MATH_FN(Log2Fn, math::log2(x))
LOOM_CUDA_MATH_FN(Log1pFn, math::log1p(x))
LOOM_CUDA_MATH_FN(SqrtFn, math::sqrt(x))
// 1/sqrt(x): -0 -> -inf, 0 -> inf, inf -> 0, negative -> NaN, as the CPU.
LOOM_CUDA_MATH_FN(RsqrtFn, V(1) / math::sqrt(x))
LOOM_CUDA_MATH_FN(ReciprocalFn, V(1) / x)
LOOM_CUDA_MATH_FN(SinFn, math::sin(x))
LOOM_CUDA_MATH_FN(CosFn, math::cos(x))
LOOM_CUDA_MATH_FN(TanFn, math::tan(x))
LOOM_CUDA_MATH_FN(TanhFn, math::tanh(x))
// e^-x overflowing to inf gives 0, never NaN.
LOOM_CUDA_MATH_FN(SigmoidFn, V(1) / (V(1) + math::exp(-x)))
LOOM_CUDA_MATH_FN(ErfFn, math::erf(x))
// x * sigmoid(x) as one division; silu(-inf) is NaN, as the formula gives.
LOOM_CUDA_MATH_FN(SiluFn, x / (V(1) + math::exp(-x)))
// x/2 (1 + erf(x/sqrt2)) = x/2 erfc(-x/sqrt2): no cancellation for x < 0;
// gelu(-inf) is NaN. In float, rounding the argument -x/sqrt2 costs
// relative accuracy in the far negative tail (~2 z^2 ulp at z = -x/sqrt2),
// as in PyTorch's CUDA gelu; the absolute error stays below 1e-7.
LOOM_CUDA_MATH_FN(GeluErfFn, V(0.5) * x * math::erfc(-x * V(0.70710678118654752440)))
// x/2 (1 + tanh(y)) = x / (1 + e^(-2y)), y = sqrt(2/pi)(x + 0.044715 x^3).
LOOM_CUDA_MATH_FN(GeluTanhFn,
                  x / (V(1) + math::exp(V(-2) * (V(0.79788456080286535588) * (x + V(0.044715) * (x * x * x))))))

#undef LOOM_CUDA_MATH_FN

// softplus: x where x*beta > threshold, else log1p(e^(x*beta))/beta, as
// max(xb, 0) + log1p(e^-|xb|) so a large threshold cannot overflow exp.
template <class V>
struct SoftplusFn {
  V beta, threshold;
  __host__ __device__ V operator()(V x) const {
    const V xb = mul_rn(x, beta);
    const V soft = math::log1p(math::exp(-math::fabs(xb)));
    const V y = add_rn(xb > 0 ? xb : V(0), soft) / beta;
    return xb > threshold ? x : y;
  }
};

// elu: x > 0 ? scale x : scale alpha (e^(x input_scale) - 1), via expm1;
// NaN takes the second branch and stays NaN.
template <class V>
struct EluFn {
  V alpha, scale, input_scale;
  __host__ __device__ V operator()(V x) const {
    return x > 0 ? scale * x : scale * alpha * math::expm1(x * input_scale);
  }
};

template <class V>
struct LeakyReluFn {
  V slope;
  __host__ __device__ V operator()(V x) const { return x > 0 ? x : x * slope; }
};

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
