// Unary ops that keep the dtype or classify values — abs, sign, square,
// floor, ceil, trunc, round, nan_to_num, clamp, logical_not, isnan, isinf,
// isfinite — and the registration of every unary kernel with the dtype mask
// of its rule (docs/kernel_conventions.md, "Elementwise unary ops"). The
// float-rule ops and activations are in unary_float.cpp; the loops in
// unary_loops.hpp.
//
// Integers compute in compute_t (unsigned, wrapping) so abs(INT_MIN) and
// square overflow wrap without undefined behaviour; 16-bit floats compute in
// float; comparisons are written as selects so the loops vectorise.
#include "common.hpp"
#include "kernels.hpp"
#include "unary_loops.hpp"

#include <loom/plugin/scalar_ops.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace loom::cpu {
namespace {

template <class T>
inline constexpr bool is_float_v = plugin::is_floating_v<T>;

// make() of a family without values.
#define LOOM_UNARY_NO_VALUES                 \
  template <class T>                         \
  static Fn<T> make(const LoomKernelCall&) { \
    return {};                               \
  }

// The largest finite value of a floating dtype-type, in its compute type.
template <class T>
opmath_t<T> finite_max() {
  if constexpr (std::is_same_v<T, Half>)
    return Half::from_bits(0x7bff);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16::from_bits(0x7f7f);
  else
    return std::numeric_limits<T>::max();
}

struct Abs {
  static constexpr const char* name = "abs";
  template <class T>
  using Fn = plugin::ops::Abs<T>;
  LOOM_UNARY_NO_VALUES
};

// -1, 0 or 1; NaN gives 0 (both comparisons fail), -0 gives +0.
struct Sign {
  static constexpr const char* name = "sign";
  template <class T>
  using Fn = plugin::ops::Sign<T>;
  LOOM_UNARY_NO_VALUES
};

struct Square {
  static constexpr const char* name = "square";
  template <class T>
  using Fn = plugin::ops::Square<T>;
  LOOM_UNARY_NO_VALUES
};

// floor, ceil, trunc: integers are whole already and are copied.
using plugin::ops::Rounding;

template <Rounding M>
struct RoundTo {
  static constexpr const char* name = M == Rounding::Floor  ? "floor"
                                      : M == Rounding::Ceil ? "ceil"
                                                            : "trunc";
  template <class T>
  using Fn = plugin::ops::RoundTo<M, T>;
  LOOM_UNARY_NO_VALUES
};

// round(x, decimals): half to even in the compute type, PyTorch's formula.
// decimals = 0 uses p = 1, which is exact.
struct Round {
  static constexpr const char* name = "round";
  template <class T>
  using Fn = plugin::ops::Round<T>;
  template <class T>
  static Fn<T> make(const LoomKernelCall& c) {
    const LoomValue& v = value_at(c, name, 0);
    if (v.kind != LOOM_VALUE_INT) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu round: decimals must be an int, got value kind %d",
           v.kind);
    Fn<T> f{};
    if constexpr (is_float_v<T>) {
      const double d = static_cast<double>(v.u.i);
      f.p = static_cast<opmath_t<T>>(std::pow(10.0, std::fabs(d)));
      f.divide_first = d < 0;
    }
    return f;
  }
};

// NaN, +inf and -inf replaced; integers and bool copied. A NONE value (the
// core resolves them, but a direct caller may not) takes PyTorch's default.
struct NanToNum {
  static constexpr const char* name = "nan_to_num";
  template <class T>
  using Fn = plugin::ops::NanToNum<T>;
  template <class T>
  static Fn<T> make(const LoomKernelCall& c) {
    opmath_t<T> v[3] = {};  // nan, posinf, neginf
    for (int32_t i = 0; i < 3; ++i) {
      const bool none = value_at(c, name, i).kind == LOOM_VALUE_NONE;
      const T x = none ? T{} : scalar_arg<T>(c, name, i);  // checks the kind
      if constexpr (is_float_v<T>) {
        const arith_t<T> defaults[3] = {0, finite_max<T>(), -finite_max<T>()};
        v[i] = none ? defaults[i] : to_arith(x);
      }
    }
    return {v[0], v[1], v[2]};
  }
};

// min(max(x, lo), hi) for the bounds present. Written as two selects, NaN x
// fails both comparisons and stays NaN, and lo > hi gives hi. A NaN bound
// makes every result NaN (as maximum/minimum propagate NaN).
struct Clamp {
  static constexpr const char* name = "clamp";
  template <class T>
  using Fn = plugin::ops::Clamp<T>;
  // A bound in T: integers saturate to T's range (a bound beyond it clamps
  // like the nearest representable one); floats round to T first.
  template <class T>
  static opmath_t<T> bound(const LoomKernelCall& c, int32_t i) {
    if constexpr (std::is_integral_v<T>) {
      const LoomValue& v = c.values[i];
      if (v.kind == LOOM_VALUE_FLOAT) return scalar_arg<T>(c, name, i);  // saturates
      const int64_t b = scalar_arg<int64_t>(c, name, i);
      if (b < static_cast<int64_t>(std::numeric_limits<T>::min()))
        return std::numeric_limits<T>::min();
      if (b > static_cast<int64_t>(std::numeric_limits<T>::max()))
        return std::numeric_limits<T>::max();
      return static_cast<T>(b);
    } else {
      return to_arith(scalar_arg<T>(c, name, i));
    }
  }
  template <class T>
  static Fn<T> make(const LoomKernelCall& c) {
    using L = std::numeric_limits<opmath_t<T>>;
    const bool has_lo = value_at(c, name, 0).kind != LOOM_VALUE_NONE;
    const bool has_hi = value_at(c, name, 1).kind != LOOM_VALUE_NONE;
    Fn<T> f{};
    if constexpr (std::is_integral_v<T>) {
      f.lo = has_lo ? bound<T>(c, 0) : L::min();
      f.hi = has_hi ? bound<T>(c, 1) : L::max();
    } else {
      f.lo = has_lo ? bound<T>(c, 0) : -L::infinity();
      f.hi = has_hi ? bound<T>(c, 1) : L::infinity();
      f.nan_bound = f.lo != f.lo || f.hi != f.hi;
    }
    return f;
  }
};

// -------------------------------------------------- bool-valued tests ---

struct LogicalNot {
  static constexpr const char* name = "logical_not";
  template <class T>
  using Fn = plugin::ops::LogicalNot<T>;
  LOOM_UNARY_NO_VALUES
};

// isnan, isinf, isfinite; integers and bool are finite.
using plugin::ops::FpClass;

template <FpClass K>
struct IsClass {
  static constexpr const char* name = K == FpClass::Nan   ? "isnan"
                                      : K == FpClass::Inf ? "isinf"
                                                          : "isfinite";
  template <class T>
  using Fn = plugin::ops::IsClass<K, T>;
  LOOM_UNARY_NO_VALUES
};

#undef LOOM_UNARY_NO_VALUES

}  // namespace

void register_unary_kernels(plugin::Registrar& r) {
  register_unary<Abs>(r);
  register_unary<Sign>(r);
  register_unary<Square>(r);
  register_unary<RoundTo<Rounding::Floor>>(r);
  register_unary<RoundTo<Rounding::Ceil>>(r);
  register_unary<RoundTo<Rounding::Trunc>>(r);
  register_unary<Round>(r);
  register_unary<NanToNum>(r);
  register_unary<Clamp>(r);
  // To-bool ops have no in-place form: self could not hold the result.
  register_unary<LogicalNot>(r);
  register_unary<IsClass<FpClass::Nan>>(r);
  register_unary<IsClass<FpClass::Inf>>(r);
  register_unary<IsClass<FpClass::Finite>>(r);
}

}  // namespace loom::cpu
