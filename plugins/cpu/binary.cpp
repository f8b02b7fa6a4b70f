// Arithmetic binary and ternary ops: remainder, pow, maximum, minimum,
// atan2, lerp and div's trunc/floor modes, plus the registration of every
// binary op (comparisons, logical, bitwise and where are in
// binary_compare.cpp). Definitions: docs/kernel_conventions.md, "Elementwise
// binary and ternary ops"; the loops: binary_loops.hpp.
//
// Each op is a functor on storage values computing in value_t<T> (float for
// the 16-bit floats). Integer forms are total and free of UB: division by
// zero is rejected by a scan before the loop (the functor still guards it),
// and INT_MIN / -1 and INT_MIN % -1, which trap on x86, wrap instead
// (-INT_MIN == INT_MIN, remainder 0). Ops with a `kInvalid` message name
// the integer inputs the kernel must reject with INVALID_ARGUMENT.
#include "binary_kernels.hpp"
#include "binary_loops.hpp"
#include "common.hpp"
#include "kernels.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace loom::cpu {
namespace {

template <class T>
constexpr bool is_float = plugin::is_floating_v<T>;

template <class T>
T wrap_neg(T a) {  // two's complement negation without signed overflow
  return static_cast<T>(-static_cast<compute_t<T>>(a));
}

// PyTorch's div_floor_floating: the quotient from fmod rather than
// floor(a / b), so a rounded a / b cannot land on the wrong integer;
// b == 0 gives the IEEE a / b.
template <class V>
V div_floor_floating(V a, V b) {
  if (b == 0) return a / b;
  const V mod = std::fmod(a, b);
  V div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= V(1);
  if (div == 0) return std::copysign(V(0), a / b);
  V floordiv = std::floor(div);
  if (div - floordiv > V(0.5)) floordiv += V(1);
  return floordiv;
}

template <class T>
struct DivTrunc {
  static constexpr const char* kInvalid = "division by zero";
  static bool invalid(T, T b) { return b == 0; }
  T operator()(T a, T b) const {
    if constexpr (is_float<T>) {
      return static_cast<T>(std::trunc(value_t<T>(a) / value_t<T>(b)));
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return wrap_neg(a);
      return static_cast<T>(a / b);
    }
  }
};

// Python's floor division for integers.
template <class T>
struct DivFloor {
  static constexpr const char* kInvalid = "division by zero";
  static bool invalid(T, T b) { return b == 0; }
  T operator()(T a, T b) const {
    if constexpr (is_float<T>) {
      return static_cast<T>(div_floor_floating<value_t<T>>(a, b));
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

// Python's modulo: the result has the sign of b (fmod / %, then + b when
// the signs differ and the result is non-zero; |r| < |b| so that is exact
// for integers).
template <class T>
struct Remainder {
  static constexpr const char* kInvalid = "division by zero";
  static bool invalid(T, T b) { return b == 0; }
  T operator()(T a, T b) const {
    if constexpr (is_float<T>) {
      using V = value_t<T>;
      const V y = b;
      V m = std::fmod(V(a), y);
      if (m != 0 && (y < 0) != (m < 0)) m += y;
      return static_cast<T>(m);
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

// Integers: exact by squaring in the wrapping compute type. A negative
// exponent only reaches the loop with base 1 or -1 (the scan rejects the
// rest, as PyTorch does for integer powers).
template <class T>
struct Pow {
  static constexpr const char* kInvalid = "Integers to negative integer powers are not allowed.";
  static bool invalid([[maybe_unused]] T a, [[maybe_unused]] T e) {
    if constexpr (std::is_signed_v<T>) return e < 0 && a != 1 && a != -1;
    return false;
  }
  T operator()(T a, T e) const {
    if constexpr (is_float<T>) {
      return static_cast<T>(std::pow(value_t<T>(a), value_t<T>(e)));
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (e < 0) return a == 1 ? T(1) : a == -1 ? static_cast<T>((e & 1) ? -1 : 1) : T(0);
      }
      using U = compute_t<T>;
      U result = 1, base = static_cast<U>(a);
      for (auto k = static_cast<std::make_unsigned_t<T>>(e); k != 0; k >>= 1) {
        if (k & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    }
  }
};

// NaN if either is NaN (| rather than || keeps the select branch-free so the
// loop vectorises); bool: or / and.
template <class T>
struct Maximum {
  T operator()(T a, T b) const {
    using V = value_t<T>;
    const V x = a, y = b;
    if constexpr (is_float<T>)
      if ((x != x) | (y != y)) return static_cast<T>(std::numeric_limits<V>::quiet_NaN());
    return static_cast<T>(x < y ? y : x);
  }
};

template <class T>
struct Minimum {
  T operator()(T a, T b) const {
    using V = value_t<T>;
    const V x = a, y = b;
    if constexpr (is_float<T>)
      if ((x != x) | (y != y)) return static_cast<T>(std::numeric_limits<V>::quiet_NaN());
    return static_cast<T>(y < x ? y : x);
  }
};

template <class T>
struct Atan2 {
  T operator()(T a, T b) const {
    return static_cast<T>(std::atan2(value_t<T>(a), value_t<T>(b)));
  }
};


template <template <class> class Op, DTypes Set>
void binary_op(const LoomKernelCall& c, const char* name) {
  const auto [out, a, b] = binary_args(c, name);
  dispatch<Set>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_float<T> && requires { Op<T>::kInvalid; }) {
      const auto invalid = [](T x, T y) { return Op<T>::invalid(x, y); };
      if (any_element(invalid, In<T>{a}, In<T>{b})) [[unlikely]]
        fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: %s", name, Op<T>::kInvalid);
    }
    apply_elementwise<T>(out, Op<T>{}, In<T>{a}, In<T>{b});
  });
}

void remainder(const LoomKernelCall& c) { binary_op<Remainder, DTypes::NoBool>(c, "remainder"); }
void pow(const LoomKernelCall& c) { binary_op<Pow, DTypes::NoBool>(c, "pow"); }
void maximum(const LoomKernelCall& c) { binary_op<Maximum, DTypes::All>(c, "maximum"); }
void minimum(const LoomKernelCall& c) { binary_op<Minimum, DTypes::All>(c, "minimum"); }
void atan2(const LoomKernelCall& c) { binary_op<Atan2, DTypes::Floating>(c, "atan2"); }

void lerp(const LoomKernelCall& c) {
  expect_arity(c, "lerp", 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, "lerp");
  dispatch<DTypes::Floating>(out.dtype, "lerp", [&](auto tag) {
    using T = decltype(tag);
    apply_elementwise<T>(out, Lerp<T>{}, In<T>{c.inputs[0]}, In<T>{c.inputs[1]},
                         In<T>{c.inputs[2]});
  });
}

bool str_is(const LoomValue& v, const char* s) {
  const size_t n = std::strlen(s);
  return v.u.str.size == static_cast<int64_t>(n) && std::memcmp(v.u.str.data, s, n) == 0;
}

}  // namespace

DivMode div_mode(const LoomKernelCall& c) {
  // The existing callers of div (and the core before rounding_mode existed)
  // pass no value at all: that is true division too.
  if (c.num_values < 1 || c.values[0].kind == LOOM_VALUE_NONE) return DivMode::True;
  const LoomValue& v = c.values[0];
  if (v.kind == LOOM_VALUE_STRING) {
    if (str_is(v, "trunc")) return DivMode::Trunc;
    if (str_is(v, "floor")) return DivMode::Floor;
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu div: rounding_mode must be None, 'trunc' or 'floor', got '%.*s'",
         static_cast<int>(v.u.str.size < 64 ? v.u.str.size : 64), v.u.str.data);
  }
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu div: rounding_mode must be a string or None, got kind %d",
       v.kind);
}

void div_rounded(const LoomKernelCall& c, DivMode mode) {
  if (mode == DivMode::Floor) binary_op<DivFloor, DTypes::NoBool>(c, "div");
  else binary_op<DivTrunc, DTypes::NoBool>(c, "div");
}

// In-place forms are the same kernels: outputs[0] aliases inputs[0] and the
// core has cast the other operands to self's dtype.
void register_binary_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("remainder", "cpu", kernel<remainder>, kNoBoolMask);
  r.kernel("remainder_", "cpu", kernel<remainder>, kNoBoolMask);
  r.kernel("pow", "cpu", kernel<pow>, kNoBoolMask);
  r.kernel("pow_", "cpu", kernel<pow>, kNoBoolMask);
  r.kernel("maximum", "cpu", kernel<maximum>, kAllMask);
  r.kernel("minimum", "cpu", kernel<minimum>, kAllMask);
  r.kernel("atan2", "cpu", kernel<atan2>, kFloatingMask);
  r.kernel("atan2_", "cpu", kernel<atan2>, kFloatingMask);
  r.kernel("lerp", "cpu", kernel<lerp>, kFloatingMask);
  r.kernel("lerp_", "cpu", kernel<lerp>, kFloatingMask);
  r.kernel("sub_", "cpu", kernel<sub>, kNoBoolMask);
  // div_ takes integers for its trunc/floor modes; true division of an
  // integer self is rejected by the core (and by the kernel: UNSUPPORTED).
  r.kernel("div_", "cpu", kernel<div>, kNoBoolMask);
  register_compare_kernels(r);
}

}  // namespace loom::cpu
