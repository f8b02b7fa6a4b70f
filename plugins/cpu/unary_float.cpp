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
#include "float_fns.hpp"
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

// The math functors (Exp2 ... Silu, the trig ops, gelu and its gradient).
using namespace fns;

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
  // Two functor types, so each loop is branch-free.
  template <class T, class K>
  static void visit(const LoomKernelCall& c, K&& k) {
    if (gelu_tanh_form(c, name)) return k(fns::GeluFn<T, true>{});
    k(fns::GeluFn<T, false>{});
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
