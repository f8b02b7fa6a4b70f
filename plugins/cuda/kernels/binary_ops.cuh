// The per-element functors of the binary and ternary CUDA kernels
// (binary.cu, compare.cu), __host__ __device__ so
// tests/elementwise_ops_test.cu checks them on the host. Definitions:
// docs/kernel_conventions.md, "Elementwise binary and ternary ops"; the
// reference is the CPU plugin (elementwise.cpp, binary.cpp,
// binary_compare.cpp), whose integer rules these keep exactly: Python's
// floor division and modulo signs, INT_MIN / -1 and INT_MIN % -1 wrapping
// (-INT_MIN == INT_MIN, remainder 0), exact integer powers by squaring.
//
// Integer division by zero and negative integer powers are rejected by the
// kernel before it writes anything (a scan with Op::invalid); the functors
// still return 0 there so no input is undefined behaviour on the device.
// Floats compute in compute_t<T> (float for the 16-bit floats), products
// and sums rounded separately as the CPU does (scalar_math.cuh: mul_rn).
#pragma once

#include "scalar_math.cuh"
#include "vendor/gpu_target.hpp"

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::ew {

// ------------------------------------------------------- arithmetic ---

// out = a + alpha b; bool: a or (alpha and b).
template <class T>
struct Add {
  arith_t<T> alpha;
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || (alpha && b);
    else return from_arith<T>(add_rn(to_arith(a), mul_rn(alpha, to_arith(b))));
  }
};

template <class T>
struct Sub {
  arith_t<T> alpha;
  __host__ __device__ T operator()(T a, T b) const {
    return from_arith<T>(sub_rn(to_arith(a), mul_rn(alpha, to_arith(b))));
  }
};

// bool: a and b.
template <class T>
struct Mul {
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return from_arith<T>(mul_rn(to_arith(a), to_arith(b)));
  }
};

// True division; floating T only.
template <class T>
struct Div {
  __host__ __device__ T operator()(T a, T b) const { return narrow<T>(widen(a) / widen(b)); }
};

// Two's complement negation without signed overflow.
template <class T>
__host__ __device__ inline T wrap_neg(T a) {
  return from_arith<T>(wrap_t<T>(0) - to_arith(a));
}

// Integer rules that reject an input pair before the kernel runs.
struct DivisionByZero {
  static constexpr const char* message = "division by zero";
  template <class T>
  __host__ __device__ bool operator()(T, T b) const { return b == T(0); }
};
// Integer bases other than 1 and -1 to a negative power (PyTorch's rule).
struct NegativeIntegerPower {
  static constexpr const char* message = "Integers to negative integer powers are not allowed.";
  template <class T>
  __host__ __device__ bool operator()([[maybe_unused]] T a, [[maybe_unused]] T e) const {
    if constexpr (std::is_signed_v<T>) return e < 0 && a != 1 && a != -1;
    else return false;
  }
};

template <class T>
struct DivTrunc {
  using Invalid = DivisionByZero;
  __host__ __device__ T operator()(T a, T b) const {
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
__host__ __device__ inline V div_floor_floating(V a, V b) {
  if (b == 0) return a / b;
  const V mod = math::fmod(a, b);
  V div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= V(1);
  if (div == 0) return math::copysign(V(0), a / b);
  V floordiv = math::floor(div);
  if (div - floordiv > V(0.5)) floordiv += V(1);
  return floordiv;
}

// Python's floor division.
template <class T>
struct DivFloor {
  using Invalid = DivisionByZero;
  __host__ __device__ T operator()(T a, T b) const {
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
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (is_floating_v<T>) {
      const compute_t<T> y = widen(b);
      compute_t<T> m = math::fmod(widen(a), y);
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

// Floats: pow. Integers: exact by squaring in the wrapping type; a negative
// exponent reaches here only with base 1 or -1 (the scan rejects the rest).
template <class T>
struct Pow {
  using Invalid = NegativeIntegerPower;
  __host__ __device__ T operator()(T a, T e) const {
    if constexpr (is_floating_v<T>) {
      return narrow<T>(math::pow(widen(a), widen(e)));
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (e < 0) return a == 1 ? T(1) : a == -1 ? static_cast<T>((e & 1) ? -1 : 1) : T(0);
      }
      wrap_t<T> result = 1, base = to_arith(a);
      for (auto k = static_cast<std::make_unsigned_t<T>>(e); k != 0; k >>= 1) {
        if (k & 1) result *= base;
        base *= base;
      }
      return from_arith<T>(result);
    }
  }
};

// NaN if either is NaN; bool: or / and.
template <class T>
struct Maximum {
  __host__ __device__ T operator()(T a, T b) const {
    using V = compute_t<T>;
    const V x = widen(a), y = widen(b);
    if constexpr (is_floating_v<T>)
      if (x != x || y != y) return narrow<T>(quiet_nan<V>());
    return narrow<T>(x < y ? y : x);
  }
};

template <class T>
struct Minimum {
  __host__ __device__ T operator()(T a, T b) const {
    using V = compute_t<T>;
    const V x = widen(a), y = widen(b);
    if constexpr (is_floating_v<T>)
      if (x != x || y != y) return narrow<T>(quiet_nan<V>());
    return narrow<T>(y < x ? y : x);
  }
};

// Floating T only.
template <class T>
struct Atan2 {
  __host__ __device__ T operator()(T a, T b) const { return narrow<T>(math::atan2(widen(a), widen(b))); }
};

// PyTorch's split at |w| < 0.5: w == 0 gives exactly `self`, w == 1 exactly
// `end`. Floating T only.
template <class T>
struct Lerp {
  __host__ __device__ T operator()(T s, T e, T w) const {
    using V = compute_t<T>;
    const V x = widen(s), y = widen(e), t = widen(w), d = sub_rn(y, x);
    const V abs_t = t < V(0) ? -t : t;
    return narrow<T>(abs_t < V(0.5) ? add_rn(x, mul_rn(t, d)) : sub_rn(y, mul_rn(d, sub_rn(V(1), t))));
  }
};

// Adam's parameter update, self - step_size * m / (sqrt(v) + eps), in the
// compute type and in the CPU kernel's order (optim_kernels.cpp), each step
// rounded once (no contraction into FMAs). Floating T only.
template <class T>
struct AdamUpdate {
  double step_size, eps;
  __host__ __device__ T operator()(T p, T m, T v) const {
    using V = compute_t<T>;
    const V x = widen(p), mm = widen(m), vv = widen(v);
    return narrow<T>(sub_rn(x, mul_rn(V(step_size), mm) / add_rn(math::sqrt(vv), V(eps))));
  }
};

// The whole Adam/AdamW step of one element (op _adam_step_), in the order of
// the composite and the CPU kernel: p * decay (skipped at 1), both running
// averages by Lerp, then AdamUpdate's expression; float16/bfloat16 in float,
// each tensor rounded once. Floating T only.
template <class T>
struct AdamStep {
  double decay, beta1, beta2, step_size, eps;
  __host__ __device__ void operator()(T& p, T g, T& m, T& v) const {
    using V = compute_t<T>;
    const V gg = widen(g);
    const V x = decay == 1.0 ? widen(p) : mul_rn(widen(p), V(decay));
    const V m1 = Lerp<V>{}(widen(m), gg, V(1 - beta1));
    const V v1 = Lerp<V>{}(widen(v), mul_rn(gg, gg), V(1 - beta2));
    p = narrow<T>(sub_rn(x, mul_rn(V(step_size), m1) / add_rn(math::sqrt(v1), V(eps))));
    m = narrow<T>(m1);
    v = narrow<T>(v1);
  }
};

// ---------------------------------------------- comparisons, logical ---

// Predicates on compute values: NaN compares unequal to everything; signed
// integers compare as signed.
#define LOOM_CUDA_PREDICATE(Name, expr)                                   \
  struct Name {                                                           \
    template <class V>                                                    \
    __host__ __device__ bool operator()(V a, V b) const { return expr; } \
  };
LOOM_CUDA_PREDICATE(Eq, a == b)
LOOM_CUDA_PREDICATE(Ne, a != b)
LOOM_CUDA_PREDICATE(Lt, a < b)
LOOM_CUDA_PREDICATE(Le, a <= b)
LOOM_CUDA_PREDICATE(Gt, a > b)
LOOM_CUDA_PREDICATE(Ge, a >= b)
LOOM_CUDA_PREDICATE(LogicalAnd, (a != V(0)) && (b != V(0)))
LOOM_CUDA_PREDICATE(LogicalOr, (a != V(0)) || (b != V(0)))
LOOM_CUDA_PREDICATE(LogicalXor, (a != V(0)) != (b != V(0)))
#undef LOOM_CUDA_PREDICATE

// P on two storage values of T, stored as O: bool, or T itself (0 or 1) for
// the in-place logical ops.
template <class O, class T, class P>
struct Predicate {
  __host__ __device__ O operator()(T a, T b) const { return from_bool<O>(P{}(widen(a), widen(b))); }
};

// Integers and bool only.
template <class T>
struct BitAnd {
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
template <class T>
struct BitOr {
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
template <class T>
struct BitXor {
  __host__ __device__ T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// where: moves bit patterns of the element size U; the condition is read
// as its byte (bool storage is 0 or 1).
template <class U>
struct Select {
  __host__ __device__ U operator()(uint8_t c, U x, U y) const { return c ? x : y; }
};

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
