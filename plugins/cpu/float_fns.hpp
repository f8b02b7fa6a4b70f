// The float-rule elementwise functions of the CPU plugin, one functor per op
// on one float or double: the unary kernels (unary_float.cpp, exp in
// elementwise.cpp) run them in their loops, and a fused region compiled to
// C++ at run time (region_codegen.cpp) calls the same functors, so the
// compiled region gives eager's bits. Header-only and free of the plugin's
// other headers for that reason: region_compiler.cpp writes it, with what it
// includes, beside each generated source.
#pragma once

#include "nn_math.hpp"
#include "unary_math.hpp"

#include <loom/plugin/opmath.hpp>
#include <loom/plugin/scalar_ops.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace loom::cpu::fns {

// One line per op: its name, the float form (x is a float, widened to
// double inside vmath) and the float64 form.
#define LOOM_FLOAT_FN(Type, op_name, float_expr, double_expr)                  \
  struct Type {                                                                \
    static constexpr const char* name = op_name;                               \
    float operator()(float x) const { return static_cast<float>(float_expr); } \
    double operator()(double x) const { return double_expr; }                  \
  };

LOOM_FLOAT_FN(Exp2, "exp2", vmath::exp2_d(x), std::exp2(x))
LOOM_FLOAT_FN(Expm1, "expm1", vmath::expm1_d(x), std::expm1(x))
LOOM_FLOAT_FN(Log, "log", vmath::log_d(x), std::log(x))
LOOM_FLOAT_FN(Log2, "log2", vmath::log2_d(x), std::log2(x))
LOOM_FLOAT_FN(Log1p, "log1p", vmath::log1p_d(x), std::log1p(x))
LOOM_FLOAT_FN(Sqrt, "sqrt", std::sqrt(x), std::sqrt(x))
// In double, 1/sqrt rounds once to float: correctly rounded but for ties.
LOOM_FLOAT_FN(Rsqrt, "rsqrt", 1.0 / std::sqrt(static_cast<double>(x)), 1.0 / std::sqrt(x))
LOOM_FLOAT_FN(Reciprocal, "reciprocal", 1.0f / x, 1.0 / x)
// In float lanes (nn_math.hpp's tanh_f, 4x faster than in double):
// tanh is the hot op of GELU written out and of recurrent cells.
LOOM_FLOAT_FN(Tanh, "tanh", nnmath::tanh_f(x), std::tanh(x))
// e^-x overflowing to inf gives 0, never NaN.
LOOM_FLOAT_FN(Sigmoid, "sigmoid", vmath::sigmoid_d(x), 1.0 / (1.0 + std::exp(-x)))
LOOM_FLOAT_FN(Erf, "erf", vmath::erf_d(x), std::erf(x))
// x * sigmoid(x) as one division.
LOOM_FLOAT_FN(Silu, "silu", x / (1.0 + vmath::exp_d(-static_cast<double>(x))),
              x / (1.0 + std::exp(-x)))

#undef LOOM_FLOAT_FN

// sin, cos, tan: vmath's reduction is exact for |x| < 2^20; larger finite
// floats go to libm in double (then round), so every float is right.
enum class Trig { Sin, Cos, Tan };

template <Trig K>
struct TrigFn {
  static constexpr const char* name = K == Trig::Sin ? "sin" : K == Trig::Cos ? "cos" : "tan";
  bool fast_ok(float x) const {
    const float a = std::fabs(x);  // inf and NaN are fine: the fast form gives NaN
    return !(a > static_cast<float>(vmath::kTrigFastMax) &&
             a < std::numeric_limits<float>::infinity());
  }
  float fast(float x) const {
    if constexpr (K == Trig::Sin)
      return static_cast<float>(vmath::sin_d(x));
    else if constexpr (K == Trig::Cos)
      return static_cast<float>(vmath::cos_d(x));
    else
      return static_cast<float>(vmath::tan_d(x));
  }
  float operator()(float x) const {
    return fast_ok(x) ? fast(x) : static_cast<float>((*this)(static_cast<double>(x)));
  }
  double operator()(double x) const {
    if constexpr (K == Trig::Sin)
      return std::sin(x);
    else if constexpr (K == Trig::Cos)
      return std::cos(x);
    else
      return std::tan(x);
  }
};

// exp: libm's, as PyTorch's CPU exp (the unary ops above are vmath's).
template <class T>
struct Exp {
  T operator()(T a) const { return plugin::from_arith<T>(std::exp(plugin::to_arith(a))); }
};

// gelu(x, approximate): erf form x/2 (1 + erf(x/sqrt2)) = x/2 erfc(-x/sqrt2);
// tanh form x/2 (1 + tanh(y)) = x / (1 + e^(-2y)). The rewritten forms are
// the same functions without cancellation for negative x.
template <class T, bool TanhForm>
struct GeluFn {
  T operator()(T a) const {
    const plugin::arith_t<T> x = plugin::to_arith(a);
    if constexpr (std::is_same_v<T, double>) {
      if constexpr (TanhForm) {
        const double y = vmath::kSqrt2OverPi * (x + 0.044715 * (x * x * x));
        return x / (1.0 + std::exp(-2.0 * y));
      } else {
        return 0.5 * x * std::erfc(-x * vmath::kSqrtHalf);
      }
    } else {
      return plugin::from_arith<T>(
          static_cast<float>(TanhForm ? vmath::gelu_tanh_d(x) : vmath::gelu_erf_d(x)));
    }
  }
};

// _gelu_backward(grad_output, self, approximate): grad times gelu's slope in
// one pass, where the core's composite takes about ten elementwise ops. The
// math is the shared ops::GeluBackward (loom/plugin/scalar_ops.hpp), which
// float64 runs as it is (libm); the other dtypes compute it in double through
// the CPU's vectorised vmath, the erf form reusing erf_pos's e^(-x^2/2).
template <class T, bool TanhForm>
struct GeluBackward {
  // Inlined into the binary loop, so it vectorises (binary_loops.hpp's
  // flat_loop does not flatten as the unary loops do).
  [[gnu::always_inline]] T operator()(T grad, T self) const {
    if constexpr (std::is_same_v<T, double>) {
      return plugin::ops::GeluBackward<double, TanhForm>{}(grad, self);
    } else {
      const double g = static_cast<double>(plugin::to_arith(grad)), x = static_cast<double>(plugin::to_arith(self));
      constexpr double kInvSqrt2Pi = 0.3989422804014327, c3 = 0.044715;
      double slope;
      if constexpr (TanhForm) {
        const double t = vmath::tanh_d(vmath::kSqrt2OverPi * (x + c3 * x * x * x));
        const double sech2 = 1.0 - t * t;
        slope = 0.5 * (1.0 + t) + (sech2 != 0.0 ? 0.5 * x * sech2 * vmath::kSqrt2OverPi * (1.0 + 3 * c3 * x * x) : 0.0);
      } else {
        const vmath::ErfPair p = vmath::erf_pos(std::fabs(x) * vmath::kSqrtHalf);
        const double cdf = x < 0.0 ? 0.5 * p.erfc : 0.5 * (1.0 + p.erf);
        slope = cdf + x * p.gauss * kInvSqrt2Pi;  // p.gauss = e^(-x^2/2)
      }
      return plugin::from_arith<T>(static_cast<plugin::arith_t<T>>(g * slope));
    }
  }
};

}  // namespace loom::cpu::fns
