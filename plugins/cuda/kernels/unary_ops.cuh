// The per-element functors of the unary CUDA kernels (unary.cu,
// unary_float.cu). The same-dtype ops and the bool-valued tests are loom's
// shared ones (loom/plugin/scalar_ops.hpp); the float-rule math is this
// plugin's. __host__ __device__, so tests/elementwise_ops_test.cu checks
// them on the host. Definitions: docs/kernel_conventions.md, "Elementwise
// unary ops".
//
// The float-rule math (exp ... gelu) is MathOp<Fn, T>: Fn<V> computes in
// V = float or double with CUDA's math library (within its documented ulp
// bounds, like PyTorch's CUDA kernels; the CPU plugin rounds correctly in
// double, so float results may differ from it in the last bit), using the
// CPU's cancellation-free forms so special values (inf, NaN, -0) agree.
//
// The plugin's own functors live in loom::<plugin>::ew: a kernel
// instantiation is named after its functor, so a functor name another
// kernel family may also use in the same namespace would let one definition
// silently replace the other at link time.
#pragma once

#include "scalar_math.cuh"

#include <loom/plugin/scalar_ops.hpp>
#include "vendor/gpu_target.hpp"

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::ew {

// ------------------------------------- same-dtype ops, bool-valued tests ---

// loom's shared reference semantics (loom/plugin/scalar_ops.hpp): integers
// wrap (abs(INT_MIN) = INT_MIN), NaN passes through relu and clamp,
// sign(NaN) = 0, a NaN clamp bound gives NaN.
using plugin::ops::Abs;
using plugin::ops::Clamp;
using plugin::ops::FpClass;
using plugin::ops::IsClass;
using plugin::ops::LogicalNot;
using plugin::ops::NanToNum;
using plugin::ops::Neg;
using plugin::ops::Relu;
using plugin::ops::Round;
using plugin::ops::Rounding;
using plugin::ops::RoundTo;
using plugin::ops::Sign;
using plugin::ops::Square;

// --------------------------------------------------- float-rule math ---

// Fn<opmath_t<T>> on a floating storage type T.
template <template <class> class Fn, class T>
struct MathOp {
  Fn<opmath_t<T>> fn;
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
