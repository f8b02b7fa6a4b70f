// loom/plugin/cast.hpp — value conversion between the ten loom dtypes, with
// the rules of docs/kernel_conventions.md ("Casting between dtypes") and no
// undefined behaviour for any input:
//   * to bool is `x != 0` (so NaN -> true); from bool is 0 or 1;
//   * float -> integer truncates toward zero, NaN -> 0, and values outside
//     the target range saturate to its min/max;
//   * integer -> integer is C++ (modular) conversion;
//   * float16/bfloat16 results are rounded to nearest even from the exact
//     source value — a wide source (float64, int32, int64) is first narrowed
//     to float with round-to-odd, which makes the second rounding exact.
// Every device should convert exactly like this; CPU-side code (the CPU
// plugin, the core's scalar handling) can include it directly.
#pragma once

#include <loom/plugin/half.hpp>
#include <loom/plugin/opmath.hpp>  // is_half_v, is_floating_v

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace loom::plugin {

namespace detail {

// `d` narrowed to float with round-to-odd: truncate, and set the last
// mantissa bit when anything was cut off. Rounding that result to a format
// with at least 2 fewer significand bits (half: 11, bfloat16: 8, float: 24)
// equals rounding `d` directly.
inline float float_round_to_odd(double d) {
  const float f = static_cast<float>(d);  // IEEE: overflow gives inf
  if (!std::isfinite(f)) return f;  // NaN, or beyond every 16-bit format
  const double back = f;
  if (back == d) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::fabs(back) > std::fabs(d)) bits -= 1;  // one step toward zero
  bits |= 1u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

// A 64-bit integer narrowed to float with round-to-odd (see above).
inline float float_round_to_odd(int64_t v) {
  if (v > -(int64_t{1} << 24) && v < (int64_t{1} << 24)) return static_cast<float>(v);
  const bool neg = v < 0;
  const uint64_t u = neg ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const int shift = 64 - __builtin_clzll(u) - 24;  // keep the top 24 bits
  uint64_t mant = u >> shift;
  if (u & ((uint64_t{1} << shift) - 1)) mant |= 1u;
  const float f = std::ldexp(static_cast<float>(mant), shift);  // exact
  return neg ? -f : f;
}

// Float -> integer: truncate, NaN -> 0, saturate. Every double that passes
// the range checks truncates to a representable value, so the final
// static_cast is defined (for int64, hi rounds up to 2^63, and the largest
// double below it is 2^63 - 1024).
template <class To>
inline To float_to_int(double d) {
  constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
  if (d != d) return To(0);
  if (d <= lo) return std::numeric_limits<To>::min();
  if (d >= hi) return std::numeric_limits<To>::max();
  return static_cast<To>(d);
}

}  // namespace detail

// Converts one value of dtype-type `From` to `To` (both among bool, uint8_t,
// int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float, double).
template <class To, class From>
inline To cast(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_half_v<From>) return static_cast<float>(v) != 0.0f;
    else return v != From(0);
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (is_half_v<To>) return To(v ? 1.0f : 0.0f);
    else return static_cast<To>(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<To>) {
    if constexpr (is_half_v<From>) return detail::float_to_int<To>(static_cast<float>(v));
    else if constexpr (std::is_floating_point_v<From>) return detail::float_to_int<To>(v);
    else return static_cast<To>(v);  // modular since C++20
  } else if constexpr (std::is_floating_point_v<To>) {
    if constexpr (is_half_v<From>) return static_cast<To>(static_cast<float>(v));
    else return static_cast<To>(v);  // round to nearest even
  } else {  // To is Half or BFloat16
    if constexpr (is_half_v<From>) return To(static_cast<float>(v));  // float is exact
    else if constexpr (std::is_same_v<From, float>) return To(v);
    else if constexpr (std::is_same_v<From, double>) return To(detail::float_round_to_odd(v));
    else if constexpr (sizeof(From) <= 2) return To(static_cast<float>(v));  // exact in float
    else return To(detail::float_round_to_odd(static_cast<int64_t>(v)));
  }
}

}  // namespace loom::plugin
