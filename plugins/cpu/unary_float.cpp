// The float-rule unary ops (exp2 ... erf: the core casts integers and bool
// to float32 first) and the float-only activations gelu, silu, softplus,
// elu, leaky_relu (docs/kernel_conventions.md, "Elementwise unary ops").
//
// float, float16 and bfloat16 compute through unary_math.hpp, whose float
// functions vectorise and round correctly but for rare near-ties (tanh
// alone computes in float lanes: nn_math.hpp says its bound); float64
// goes through <cmath>. The loops are unary_loops.hpp's.
#include "binary_loops.hpp"
#include "common.hpp"
#include "kernels.hpp"
#include "nn_math.hpp"
#include "unary_loops.hpp"
#include "unary_math.hpp"

#include <loom/plugin/scalar_ops.hpp>

#include <cmath>
#include <concepts>
#include <cstring>
#include <limits>
#include <type_traits>

namespace loom::cpu {
namespace {

// A math function object: `float operator()(float)` (exact) and
// `double operator()(double)`. One that needs libm for a rare float range
// also has `fast_ok(float)` / `fast(float)` (see unary_loops.hpp).
template <class F>
concept FloatFastPath = requires(const F& f, float x) {
  { f.fast_ok(x) } -> std::convertible_to<bool>;
  { f.fast(x) } -> std::same_as<float>;
};

// F on a floating dtype-type T, through T's compute type.
template <class F, class T>
struct FloatFn {
  F f;
  T operator()(T a) const { return from_arith<T>(f(to_arith(a))); }
  bool fast_ok(T a) const requires(FloatFastPath<F> && !std::is_same_v<T, double>) {
    return f.fast_ok(to_arith(a));
  }
  T fast(T a) const requires(FloatFastPath<F> && !std::is_same_v<T, double>) {
    return from_arith<T>(f.fast(to_arith(a)));
  }
};

// The family of a value-less float op.
template <class F>
struct FloatOp {
  static constexpr const char* name = F::name;
  template <class T>
  static FloatFn<F, T> make(const LoomKernelCall&) {
    return {F{}};
  }
};

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

// ----------------------------------------------------------- activations ---

// gelu's `approximate` value (values[0]): true for 'tanh', false for
// 'none'; anything else fails naming the op.
bool gelu_tanh_form(const LoomKernelCall& c, const char* op) {
  const LoomValue& v = value_at(c, op, 0);
  if (v.kind != LOOM_VALUE_STRING) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: approximate must be a string ('none' or 'tanh'), got value kind %d",
         op, v.kind);
  const char* s = v.u.str.data ? v.u.str.data : "";
  const int64_t n = v.u.str.data ? v.u.str.size : 0;
  const auto is = [&](const char* word) {
    return n == static_cast<int64_t>(std::strlen(word)) && std::memcmp(s, word, n) == 0;
  };
  if (is("tanh")) return true;
  if (is("none")) return false;
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: approximate must be 'none' or 'tanh', got '%.*s'", op,
       static_cast<int>(n < 0 ? 0 : n > 64 ? 64 : n), s);
}

// gelu(x, approximate): erf form x/2 (1 + erf(x/sqrt2)) = x/2 erfc(-x/sqrt2);
// tanh form x/2 (1 + tanh(y)) = x / (1 + e^(-2y)). The rewritten forms are
// the same functions without cancellation for negative x.
struct Gelu {
  static constexpr const char* name = "gelu";
  template <class T, bool TanhForm>
  struct Fn {
    T operator()(T a) const {
      const arith_t<T> x = to_arith(a);
      if constexpr (std::is_same_v<T, double>) {
        if constexpr (TanhForm) {
          const double y = vmath::kSqrt2OverPi * (x + 0.044715 * (x * x * x));
          return x / (1.0 + std::exp(-2.0 * y));
        } else {
          return 0.5 * x * std::erfc(-x * vmath::kSqrtHalf);
        }
      } else {
        return from_arith<T>(
            static_cast<float>(TanhForm ? vmath::gelu_tanh_d(x) : vmath::gelu_erf_d(x)));
      }
    }
  };
  // Two functor types, so each loop is branch-free.
  template <class T, class K>
  static void visit(const LoomKernelCall& c, K&& k) {
    if (gelu_tanh_form(c, name)) return k(Fn<T, true>{});
    k(Fn<T, false>{});
  }
};

// softplus(x, beta, threshold): x where x*beta > threshold, else
// log1p(e^(x*beta))/beta, evaluated as max(xb, 0) + log1p(e^-|xb|) so a
// large threshold cannot overflow the exponential.
struct Softplus {
  static constexpr const char* name = "softplus";
  template <class T>
  struct Fn {
    arith_t<T> beta, threshold;
    T operator()(T a) const {
      const arith_t<T> x = to_arith(a);
      const double xb = static_cast<double>(x) * beta;  // exact for float x
      double soft;
      if constexpr (std::is_same_v<T, double>)
        soft = std::log1p(std::exp(-std::fabs(xb)));
      else
        soft = vmath::log1p_d(vmath::exp_d(-std::fabs(xb)));
      const double y = ((xb > 0 ? xb : 0.0) + soft) / beta;
      return from_arith<T>(static_cast<arith_t<T>>(xb > threshold ? x : y));
    }
  };
  template <class T>
  static Fn<T> make(const LoomKernelCall& c) {
    return {scalar_arg<arith_t<T>>(c, name, 0), scalar_arg<arith_t<T>>(c, name, 1)};
  }
};

// elu(x, alpha, scale, input_scale): x > 0 ? scale x : scale alpha
// (e^(x input_scale) - 1), with expm1 for accuracy near 0. NaN takes the
// second branch and stays NaN.
struct Elu {
  static constexpr const char* name = "elu";
  template <class T>
  struct Fn {
    arith_t<T> alpha, scale, input_scale;
    T operator()(T a) const {
      const double x = to_arith(a);
      double em1;
      if constexpr (std::is_same_v<T, double>)
        em1 = std::expm1(x * input_scale);
      else
        em1 = vmath::expm1_d(x * input_scale);
      const double y = x > 0 ? double(scale) * x : double(scale) * alpha * em1;
      return from_arith<T>(static_cast<arith_t<T>>(y));
    }
  };
  template <class T>
  static Fn<T> make(const LoomKernelCall& c) {
    using C = arith_t<T>;
    return {scalar_arg<C>(c, name, 0), scalar_arg<C>(c, name, 1), scalar_arg<C>(c, name, 2)};
  }
};

// leaky_relu(x, slope): x > 0 ? x : x slope, in the compute type.
struct LeakyRelu {
  static constexpr const char* name = "leaky_relu";
  template <class T>
  struct Fn {
    arith_t<T> slope;
    T operator()(T a) const {
      const arith_t<T> x = to_arith(a);
      return from_arith<T>(x > 0 ? x : x * slope);
    }
  };
  template <class T>
  static Fn<T> make(const LoomKernelCall& c) {
    return {scalar_arg<arith_t<T>>(c, name, 0)};
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
      const double g = static_cast<double>(to_arith(grad)), x = static_cast<double>(to_arith(self));
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
      return from_arith<T>(static_cast<arith_t<T>>(g * slope));
    }
  }
};

// Contiguous operands: one flat loop in the math clones (an AVX-512 one
// too), since the slope is bound by arithmetic; binary_loops.hpp's loop
// has only the AVX2 and baseline clones.
template <class T, class F>
[[gnu::flatten]] LOOM_CPU_MATH_CLONES void gelu_backward_flat(T* o, const T* g, const T* x, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(g[i], x[i]);
}

template <class T, bool TanhForm>
void gelu_backward_typed(const LoomTensorDesc& out, const LoomTensorDesc& g, const LoomTensorDesc& x) {
  if (all_contiguous(out, g, x)) {
    T* o = plugin::data_ptr<T>(out);
    const T* pg = plugin::data_ptr<const T>(g);
    const T* px = plugin::data_ptr<const T>(x);
    parallel_for(plugin::numel(out), kParallelGrain, [&](int64_t s, int64_t e) {
      gelu_backward_flat(o + s, pg + s, px + s, e - s, GeluBackward<T, TanhForm>{});
    });
    return;
  }
  apply_elementwise<T>(out, GeluBackward<T, TanhForm>{}, In<T>{g}, In<T>{x});
}

void gelu_backward(const LoomKernelCall& c) {
  constexpr const char* name = "_gelu_backward";
  const bool tanh_form = gelu_tanh_form(c, name);
  const LoomTensorDesc& out = c.outputs[0];
  dispatch<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    if (tanh_form) gelu_backward_typed<T, true>(out, c.inputs[0], c.inputs[1]);
    else gelu_backward_typed<T, false>(out, c.inputs[0], c.inputs[1]);
  });
}

}  // namespace

void register_unary_float_kernels(plugin::Registrar& r) {
  r.kernel("_gelu_backward", "cpu", plugin::kernel<gelu_backward>, kFloatingMask);
  register_unary<FloatOp<Exp2>>(r);
  register_unary<FloatOp<Expm1>>(r);
  register_unary<FloatOp<Log>>(r);
  register_unary<FloatOp<Log2>>(r);
  register_unary<FloatOp<Log1p>>(r);
  register_unary<FloatOp<Sqrt>>(r);
  register_unary<FloatOp<Rsqrt>>(r);
  register_unary<FloatOp<Reciprocal>>(r);
  register_unary<FloatOp<TrigFn<Trig::Sin>>>(r);
  register_unary<FloatOp<TrigFn<Trig::Cos>>>(r);
  register_unary<FloatOp<TrigFn<Trig::Tan>>>(r);
  register_unary<FloatOp<Tanh>>(r);
  register_unary<FloatOp<Sigmoid>>(r);
  register_unary<FloatOp<Erf>>(r);
  register_unary<Gelu>(r);
  register_unary<FloatOp<Silu>>(r);
  register_unary<Softplus>(r);
  register_unary<Elu>(r);
  register_unary<LeakyRelu>(r);
}

}  // namespace loom::cpu
