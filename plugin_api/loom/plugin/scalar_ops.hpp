// loom/plugin/scalar_ops.hpp — loom's reference semantics of the elementwise
// ops, one functor per op on one element. Every device plugin computes with
// these (the CPU plugin in its vectorised loops, the CUDA and HIP plugins in
// their kernels), so a third-party backend that uses them gets loom's exact
// results for free: integer overflow that wraps, Python's floor division and
// modulo signs, NaN rules of maximum/minimum, comparisons and clamp, the
// rounding of add's alpha and of lerp. Host and device (LOOM_HD); C++17.
//
// A functor takes and returns storage values (T, or bool for the
// predicates) and computes in opmath_t<T> / arith_t<T> (opmath.hpp). What a
// kernel receives and which dtypes each op takes: docs/kernel_conventions.md.
// The float-rule math (exp, sin, sigmoid, ...) is not here: its accuracy is
// each device's choice within the documented bounds.
//
// Integer division by zero and negative integer powers are errors a kernel
// reports (INVALID_ARGUMENT with Op::Invalid::message) before it writes
// anything; the functors still return 0 there, so no input is undefined
// behaviour. INT_MIN / -1 and INT_MIN % -1, which trap on x86, wrap instead
// (-INT_MIN == INT_MIN, remainder 0).
#pragma once

#include <loom/plugin/opmath.hpp>

#include <cstdint>
#include <type_traits>

namespace loom::plugin::ops {

// ------------------------------------------------------- arithmetic ---

// Two's complement negation without signed overflow.
template <class T>
LOOM_HD inline T wrap_neg(T a) {
  return from_arith<T>(arith_t<T>(0) - to_arith(a));
}

// out = a + alpha b; bool: a or (alpha and b). alpha is in arith_t<T>
// (integers: a negative alpha wraps into the unsigned type).
template <class T>
struct Add {
  arith_t<T> alpha;
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || (alpha && b);
    else return from_arith<T>(add_rn(to_arith(a), mul_rn(alpha, to_arith(b))));
  }
};

// out = a - alpha b; never bool.
template <class T>
struct Sub {
  arith_t<T> alpha;
  LOOM_HD T operator()(T a, T b) const {
    return from_arith<T>(sub_rn(to_arith(a), mul_rn(alpha, to_arith(b))));
  }
};

// bool: a and b.
template <class T>
struct Mul {
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return from_arith<T>(mul_rn(to_arith(a), to_arith(b)));
  }
};

// True division; floating T only.
template <class T>
struct Div {
  LOOM_HD T operator()(T a, T b) const { return narrow<T>(widen(a) / widen(b)); }
};

// Integer rules that reject an input pair before the kernel runs.
struct DivisionByZero {
  static constexpr const char* message = "division by zero";
  template <class T>
  LOOM_HD bool operator()(T, T b) const {
    return b == T(0);
  }
};
// Integer bases other than 1 and -1 to a negative power (PyTorch's rule).
struct NegativeIntegerPower {
  static constexpr const char* message = "Integers to negative integer powers are not allowed.";
  template <class T>
  LOOM_HD bool operator()([[maybe_unused]] T a, [[maybe_unused]] T e) const {
    if constexpr (std::is_signed_v<T>) return e < 0 && a != 1 && a != -1;
    else return false;
  }
};

// div(rounding_mode='trunc').
template <class T>
struct DivTrunc {
  using Invalid = DivisionByZero;
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      return narrow<T>(math::trunc(widen(a) / widen(b)));
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return wrap_neg(a);
      return static_cast<T>(a / b);
    }
  }
};

// PyTorch's div_floor_floating: the quotient from fmod rather than
// floor(a / b), so a rounded a / b cannot land on the wrong integer;
// b == 0 gives the IEEE a / b.
template <class V>
LOOM_HD inline V div_floor_floating(V a, V b) {
  if (b == 0) return a / b;
  const V mod = math::fmod(a, b);
  V div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= V(1);
  if (div == 0) return math::copysign(V(0), a / b);
  V floordiv = math::floor(div);
  if (div - floordiv > V(0.5)) floordiv += V(1);
  return floordiv;
}

// div(rounding_mode='floor'): Python's floor division.
template <class T>
struct DivFloor {
  using Invalid = DivisionByZero;
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      return narrow<T>(div_floor_floating(widen(a), widen(b)));
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return wrap_neg(a);
        const T q = static_cast<T>(a / b);
        return (a % b != 0 && (a < 0) != (b < 0)) ? static_cast<T>(q - 1) : q;
      }
      return static_cast<T>(a / b);
    }
  }
};

// Python's modulo: the result has the sign of b (fmod / %, then + b when the
// signs differ and the result is non-zero; |r| < |b|, so exact for integers).
template <class T>
struct Remainder {
  using Invalid = DivisionByZero;
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      const opmath_t<T> y = widen(b);
      opmath_t<T> m = math::fmod(widen(a), y);
      if (m != 0 && (y < 0) != (m < 0)) m += y;
      return narrow<T>(m);
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T(0);
        T m = static_cast<T>(a % b);
        if (m != 0 && (b < 0) != (m < 0)) m = static_cast<T>(m + b);
        return m;
      }
      return static_cast<T>(a % b);
    }
  }
};

// C's fmod: the result has the sign of a (truncated division's remainder),
// |r| < |b|, exact for every dtype. Integers: % with INT_MIN % -1 = 0.
template <class T>
struct Fmod {
  using Invalid = DivisionByZero;
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      return narrow<T>(math::fmod(widen(a), widen(b)));
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return T(0);
      return static_cast<T>(a % b);
    }
  }
};

// Floats: pow. Integers: exact by squaring in the wrapping type; a negative
// exponent reaches the loop only with base 1 or -1 (Invalid rejects the
// rest first).
template <class T>
struct Pow {
  using Invalid = NegativeIntegerPower;
  LOOM_HD T operator()(T a, T e) const {
    if constexpr (is_floating_v<T>) {
      return narrow<T>(math::pow(widen(a), widen(e)));
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (e < 0) return a == 1 ? T(1) : a == -1 ? static_cast<T>((e & 1) ? -1 : 1) : T(0);
      }
      arith_t<T> result = 1, base = to_arith(a);
      for (auto k = static_cast<std::make_unsigned_t<T>>(e); k != 0; k >>= 1) {
        if (k & 1) result *= base;
        base *= base;
      }
      return from_arith<T>(result);
    }
  }
};

// NaN if either is NaN; bool: or / and. `|` rather than `||` keeps the
// host loop branch-free so it vectorises.
template <class T>
struct Maximum {
  LOOM_HD T operator()(T a, T b) const {
    using V = opmath_t<T>;
    const V x = widen(a), y = widen(b);
    if constexpr (is_floating_v<T>)
      if ((x != x) | (y != y)) return narrow<T>(quiet_nan<V>());
    return narrow<T>(x < y ? y : x);
  }
};

template <class T>
struct Minimum {
  LOOM_HD T operator()(T a, T b) const {
    using V = opmath_t<T>;
    const V x = widen(a), y = widen(b);
    if constexpr (is_floating_v<T>)
      if ((x != x) | (y != y)) return narrow<T>(quiet_nan<V>());
    return narrow<T>(y < x ? y : x);
  }
};

// Floating T only.
template <class T>
struct Atan2 {
  LOOM_HD T operator()(T a, T b) const { return narrow<T>(math::atan2(widen(a), widen(b))); }
};

// lerp(self, end, weight) (the op, and Adam's running averages). Two forms
// so that w == 0 gives exactly `self` and w == 1 exactly `end`; the split at
// |w| < 0.5 is PyTorch's, so rounding matches it for any w. Floating T only.
template <class T>
struct Lerp {
  LOOM_HD T operator()(T s, T e, T w) const {
    using V = opmath_t<T>;
    const V x = widen(s), y = widen(e), t = widen(w), d = sub_rn(y, x);
    const V abs_t = t < V(0) ? -t : t;
    return narrow<T>(select(abs_t < V(0.5), add_rn(x, mul_rn(t, d)), sub_rn(y, mul_rn(d, sub_rn(V(1), t)))));
  }
};

// _gelu_backward(grad, x): grad times gelu's slope, in opmath. Erf form:
// Phi(x) + x phi(x), Phi = erfc(-x/sqrt2)/2 (no cancellation for x < 0);
// tanh form: (1 + t)/2 + x (1 - t^2) k (1 + 3 c x^2) / 2, t = tanh(k (x +
// c x^3)), k = sqrt(2/pi), c = 0.044715, its second term 0 where t is
// exactly +-1 (x^2 may overflow there: 0 * inf). Floating types only.
template <class T, bool TanhForm>
struct GeluBackward {
  LOOM_HD T operator()(T grad, T self) const {
    using V = opmath_t<T>;
    const V g = widen(grad), x = widen(self);
    V slope;
    if constexpr (TanhForm) {
      const V k = V(0.79788456080286535588), c3 = V(0.044715);
      const V t = math::tanh(k * (x + c3 * (x * x * x)));
      const V sech2 = V(1) - t * t;
      slope = V(0.5) * (V(1) + t) + (sech2 != V(0) ? V(0.5) * x * sech2 * k * (V(1) + V(3) * c3 * x * x) : V(0));
    } else {
      slope = V(0.5) * math::erfc(-x * V(0.70710678118654752440)) +
              x * math::exp(V(-0.5) * x * x) * V(0.39894228040143267794);
    }
    return narrow<T>(g * slope);
  }
};

// The other activations' input gradients (ops_activation_backward.cpp's
// ops), each grad_output times the slope, in opmath; floating types only.
// Those of a second input `r` take the activation's result, the others its
// input x. A parameter the op takes is a field, in opmath.

// _threshold_backward(grad, x, threshold): 0 where x <= threshold, else
// grad (relu's gradient with its result and threshold 0). NaN x passes the
// gradient, as PyTorch's threshold_backward does.
template <class T>
struct ThresholdBackward {
  opmath_t<T> threshold;
  LOOM_HD T operator()(T grad, T x) const {
    using V = opmath_t<T>;
    return narrow<T>(widen(x) <= threshold ? V(0) : widen(grad));
  }
};

// _sigmoid_backward(grad, r): grad r (1 - r).
template <class T>
struct SigmoidBackward {
  LOOM_HD T operator()(T grad, T result) const {
    using V = opmath_t<T>;
    const V r = widen(result);
    return narrow<T>(widen(grad) * (r * (V(1) - r)));
  }
};

// _tanh_backward(grad, r): grad (1 - r^2).
template <class T>
struct TanhBackward {
  LOOM_HD T operator()(T grad, T result) const {
    using V = opmath_t<T>;
    const V r = widen(result);
    return narrow<T>(widen(grad) * (V(1) - r * r));
  }
};

// _silu_backward(grad, x): grad s (1 + x (1 - s)), s = sigmoid(x) (1/(1 +
// e^-x): 0, not NaN, where e^-x overflows).
template <class T>
struct SiluBackward {
  LOOM_HD T operator()(T grad, T self) const {
    using V = opmath_t<T>;
    const V x = widen(self), s = V(1) / (V(1) + math::exp(-x));
    return narrow<T>(widen(grad) * (s * (V(1) + x * (V(1) - s))));
  }
};

// _softplus_backward(grad, x, beta, threshold): grad where x beta >
// threshold (softplus is x there), else grad sigmoid(x beta).
template <class T>
struct SoftplusBackward {
  opmath_t<T> beta, threshold;
  LOOM_HD T operator()(T grad, T self) const {
    using V = opmath_t<T>;
    const V xb = widen(self) * beta, g = widen(grad);
    return narrow<T>(xb > threshold ? g : g / (V(1) + math::exp(-xb)));
  }
};

// _elu_backward(grad, x, alpha, scale, input_scale): grad scale for x > 0,
// else grad alpha scale input_scale e^(x input_scale). NaN x is NaN.
template <class T>
struct EluBackward {
  opmath_t<T> alpha, scale, input_scale;
  LOOM_HD T operator()(T grad, T self) const {
    using V = opmath_t<T>;
    const V x = widen(self), g = widen(grad);
    return narrow<T>(x > V(0) ? g * scale : g * (math::exp(x * input_scale) * (alpha * scale * input_scale)));
  }
};

// _leaky_relu_backward(grad, x, negative_slope): grad for x > 0, else grad
// slope.
template <class T>
struct LeakyReluBackward {
  opmath_t<T> negative_slope;
  LOOM_HD T operator()(T grad, T self) const {
    using V = opmath_t<T>;
    const V g = widen(grad);
    return narrow<T>(widen(self) > V(0) ? g : g * negative_slope);
  }
};

// _hardtanh_backward(grad, x, min_val, max_val): 0 where x <= min_val or
// x >= max_val — at the bounds too, as PyTorch's (clamp's gradient passes
// there) — else grad; NaN x passes grad, as PyTorch's. The bounds are
// first rounded to T, as PyTorch's min.to<scalar_t>() (a bfloat16 x of
// 0.10009765625 is at the bound 0.1).
template <class T>
struct HardtanhBackward {
  opmath_t<T> min_val, max_val;
  LOOM_HD T operator()(T grad, T self) const {
    using V = opmath_t<T>;
    const V x = widen(self), lo = widen(narrow<T>(min_val)), hi = widen(narrow<T>(max_val));
    return narrow<T>(x <= lo || x >= hi ? V(0) : widen(grad));
  }
};

// The ops above, for a plugin's registration: X(kernel name, op, functor,
// number of Scalar values the functor takes in order). The CPU and CUDA
// plugins expand this one list.
#define LOOM_PLUGIN_ACTIVATION_BACKWARD_OPS(X)                         \
  X(threshold_backward, "_threshold_backward", ThresholdBackward, 1)   \
  X(sigmoid_backward, "_sigmoid_backward", SigmoidBackward, 0)         \
  X(tanh_backward, "_tanh_backward", TanhBackward, 0)                  \
  X(silu_backward, "_silu_backward", SiluBackward, 0)                  \
  X(softplus_backward, "_softplus_backward", SoftplusBackward, 2)      \
  X(elu_backward, "_elu_backward", EluBackward, 3)                     \
  X(leaky_relu_backward, "_leaky_relu_backward", LeakyReluBackward, 1) \
  X(hardtanh_backward, "_hardtanh_backward", HardtanhBackward, 2)

// ------------------------------------------------------- optimizers ---

// _sgd_step_ on one element (p the parameter, g its gradient, b the
// momentum buffer): d = g + weight_decay p (0: g); b = b momentum +
// (1 - dampening) d; p += -lr (nesterov ? d + momentum b : b). Each product
// and sum rounded once in the compute type, as the ops of the composite
// (core/src/ops/ops_optim.cpp) round them; float16/bfloat16 in float, each
// tensor rounded once. The CPU and CUDA kernels run this one.
template <class T>
struct SgdStep {
  double weight_decay, momentum, dampening, lr;
  bool nesterov;
  LOOM_HD void operator()(T& p, T g, T& b) const {
    using V = opmath_t<T>;
    const V x = widen(p);
    V d = widen(g);
    if (weight_decay != 0) d = add_rn(d, mul_rn(V(weight_decay), x));
    V buf = mul_rn(widen(b), V(momentum));
    buf = add_rn(buf, mul_rn(V(1 - dampening), d));
    const V step = nesterov ? add_rn(d, mul_rn(V(momentum), buf)) : buf;
    p = narrow<T>(add_rn(x, mul_rn(V(-lr), step)));
    b = narrow<T>(buf);
  }
};

// ---------------------------------------------- comparisons, logical ---

// Predicates on opmath values: NaN compares unequal to everything; signed
// integers compare as signed. Non-short-circuit & and | keep host loops
// branch-free.
#define LOOM_PLUGIN_PREDICATE(Name, expr)            \
  struct Name {                                      \
    template <class V>                               \
    LOOM_HD bool operator()(V a, V b) const {        \
      return expr;                                   \
    }                                                \
  };
LOOM_PLUGIN_PREDICATE(Eq, a == b)
LOOM_PLUGIN_PREDICATE(Ne, a != b)
LOOM_PLUGIN_PREDICATE(Lt, a < b)
LOOM_PLUGIN_PREDICATE(Le, a <= b)
LOOM_PLUGIN_PREDICATE(Gt, a > b)
LOOM_PLUGIN_PREDICATE(Ge, a >= b)
LOOM_PLUGIN_PREDICATE(LogicalAnd, (a != V(0)) & (b != V(0)))
LOOM_PLUGIN_PREDICATE(LogicalOr, (a != V(0)) | (b != V(0)))
LOOM_PLUGIN_PREDICATE(LogicalXor, (a != V(0)) != (b != V(0)))
#undef LOOM_PLUGIN_PREDICATE

// Predicate P on two storage values of T, stored as O: bool, or T itself
// (0 or 1) for the in-place logical ops.
template <class O, class T, class P>
struct Predicate {
  LOOM_HD O operator()(T a, T b) const { return from_bool<O>(P{}(widen(a), widen(b))); }
};

// Integers and bool only.
template <class T>
struct BitAnd {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
template <class T>
struct BitOr {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
template <class T>
struct BitXor {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// where: moves bit patterns of the element size U; the condition is read as
// its byte (bool storage is 0 or 1; a byte also vectorises where a bool ->
// integer conversion does not).
template <class U>
struct Select {
  LOOM_HD U operator()(uint8_t c, U x, U y) const { return c ? x : y; }
};

// ------------------------------------------------- same-dtype unary ---

// Integers: two's complement negation (unsigned wraps); floats flip the
// sign, so neg(0) is -0 (0 - x would give +0). Never bool.
template <class T>
struct Neg {
  LOOM_HD T operator()(T a) const {
    if constexpr (is_floating_v<T>) return narrow<T>(-widen(a));
    else return wrap_neg(a);
  }
};

// NaN fails `x < 0` and passes through; -0 stays -0. Never bool.
template <class T>
struct Relu {
  LOOM_HD T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T>) {
      return a;
    } else if constexpr (is_integer_v<T>) {
      return a < 0 ? T(0) : a;
    } else {
      const opmath_t<T> x = widen(a);
      return narrow<T>(x < 0 ? opmath_t<T>(0) : x);
    }
  }
};

// abs(INT_MIN) wraps to INT_MIN, as in PyTorch. Never bool.
template <class T>
struct Abs {
  LOOM_HD T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T>) return a;
    else if constexpr (is_integer_v<T>) return a < 0 ? wrap_neg(a) : a;
    else return narrow<T>(math::fabs(widen(a)));
  }
};

// -1, 0 or 1; NaN gives 0 (both comparisons fail), -0 gives +0.
template <class T>
struct Sign {
  LOOM_HD T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a;
    } else if constexpr (std::is_unsigned_v<T>) {
      return static_cast<T>(a != 0);
    } else if constexpr (is_integer_v<T>) {
      return static_cast<T>((a > 0) - (a < 0));
    } else {
      const opmath_t<T> x = widen(a);
      return narrow<T>(static_cast<opmath_t<T>>((x > 0) - (x < 0)));
    }
  }
};

// Integers wrap. Never bool (the core computes bool in int64).
template <class T>
struct Square {
  LOOM_HD T operator()(T a) const { return from_arith<T>(mul_rn(to_arith(a), to_arith(a))); }
};

enum class Rounding { Floor, Ceil, Trunc };

// floor, ceil, trunc; integers are whole already and pass through.
template <Rounding M, class T>
struct RoundTo {
  LOOM_HD T operator()(T a) const {
    if constexpr (!is_floating_v<T>) {
      return a;
    } else {
      const opmath_t<T> x = widen(a);
      if constexpr (M == Rounding::Floor) return narrow<T>(math::floor(x));
      else if constexpr (M == Rounding::Ceil) return narrow<T>(math::ceil(x));
      else return narrow<T>(math::trunc(x));
    }
  }
};

// round(x, decimals), half to even, PyTorch's formula; integers pass
// through. p = 10^|decimals| (1 for decimals = 0, which is exact).
template <class T>
struct Round {
  opmath_t<T> p;
  bool divide_first;  // decimals < 0
  LOOM_HD T operator()(T a) const {
    if constexpr (!is_floating_v<T>) {
      return a;
    } else {
      const opmath_t<T> x = widen(a);
      return narrow<T>(divide_first ? math::rint(x / p) * p : math::rint(x * p) / p);
    }
  }
};

// NaN, +inf and -inf replaced by values already rounded to T; integers pass
// through.
template <class T>
struct NanToNum {
  opmath_t<T> nan, posinf, neginf;
  LOOM_HD T operator()(T a) const {
    if constexpr (!is_floating_v<T>) {
      return a;
    } else {
      const opmath_t<T> x = widen(a), inf = infinity<opmath_t<T>>();
      return narrow<T>(x != x ? nan : x == inf ? posinf : x == -inf ? neginf : x);
    }
  }
};

// min(max(x, lo), hi) as two selects: a NaN x fails both comparisons and
// stays NaN, lo > hi gives hi, a NaN bound (nan_bound) gives NaN
// everywhere. Absent bounds are the type's extremes (infinities for
// floats). Integers compare in T itself, floats in opmath_t.
template <class T>
struct Clamp {
  opmath_t<T> lo, hi;
  bool nan_bound;
  LOOM_HD T operator()(T a) const {
    using V = opmath_t<T>;
    const V x = widen(a);
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
  LOOM_HD bool operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return widen(a) == opmath_t<T>(0);
  }
};

enum class FpClass { Nan, Inf, Finite };

// isnan, isinf, isfinite; integers and bool are finite.
template <FpClass K, class T>
struct IsClass {
  LOOM_HD bool operator()(T a) const {
    if constexpr (!is_floating_v<T>) {
      return K == FpClass::Finite;
    } else {
      const opmath_t<T> x = widen(a), inf = infinity<opmath_t<T>>();
      if constexpr (K == FpClass::Nan) return x != x;
      else if constexpr (K == FpClass::Inf) return math::fabs(x) == inf;
      else return math::fabs(x) < inf;  // false for NaN
    }
  }
};

}  // namespace loom::plugin::ops
