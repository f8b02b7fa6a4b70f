// loom/plugin/opmath.hpp — the compute-type rule every device follows, and
// the scalar arithmetic helpers the shared functors (scalar_ops.hpp) are
// written with. Host and device (LOOM_HD); C++17.
//
// Three types per storage type T (the C++ type a dtype is stored as):
//   opmath_t<T>  the type values compute in: float for the 16-bit floats,
//                T itself otherwise (signed integers stay signed, so
//                comparisons, floor division and clamp see the sign);
//   arith_t<T>   the type + - * run in: opmath_t for floats and bool, an
//                unsigned type of at least 32 bits for integers, so overflow
//                wraps like two's complement (as PyTorch's does) instead of
//                being undefined behaviour, and uint8/uint16 products never
//                promote to a signed int that overflows;
//   T            what is stored: results are rounded once, to nearest even.
// widen / narrow convert storage <-> opmath_t, to_arith / from_arith storage
// <-> arith_t (integer round trips are modular).
//
// A backend whose 16-bit storage types are its own (CUDA's __half and
// __nv_bfloat16) specialises StorageTraits for them, as this header does for
// loom::plugin::Half and BFloat16; everything below then works on them.
#pragma once

#include <loom/plugin/half.hpp>
#include <loom/plugin/host_device.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace loom::plugin {

// How storage type T computes. The primary template is for the types that
// compute as themselves: bool, the integers, float and double.
template <class T>
struct StorageTraits {
  using opmath = T;
  static constexpr bool is_half = false;
  LOOM_HD static T widen(T v) { return v; }
  LOOM_HD static T narrow(T v) { return v; }
};
template <>
struct StorageTraits<Half> {
  using opmath = float;
  static constexpr bool is_half = true;
  static float widen(Half v) { return static_cast<float>(v); }
  static Half narrow(float v) { return Half(v); }
};
template <>
struct StorageTraits<BFloat16> {
  using opmath = float;
  static constexpr bool is_half = true;
  static float widen(BFloat16 v) { return static_cast<float>(v); }
  static BFloat16 narrow(float v) { return BFloat16(v); }
};

template <class T>
using opmath_t = typename StorageTraits<T>::opmath;

// A 16-bit float storage type (float16 or bfloat16, any backend's).
template <class T>
inline constexpr bool is_half_v = StorageTraits<T>::is_half;
// Floating dtypes, the 16-bit storage types included.
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<opmath_t<T>>;
// Integer dtypes (bool is not one).
template <class T>
inline constexpr bool is_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
LOOM_HD inline opmath_t<T> widen(T v) {
  return StorageTraits<T>::widen(v);
}
template <class T>
LOOM_HD inline T narrow(opmath_t<T> v) {
  return StorageTraits<T>::narrow(v);
}

namespace detail {
template <class T, bool Integer = is_integer_v<T>>
struct WrapOf {
  using type = opmath_t<T>;  // floats and bool
};
template <class T>
struct WrapOf<T, true> {
  using type = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;
};
}  // namespace detail

template <class T>
using arith_t = typename detail::WrapOf<T>::type;

template <class T>
LOOM_HD inline arith_t<T> to_arith(T v) {
  if constexpr (is_floating_v<T>) return widen(v);
  else return static_cast<arith_t<T>>(v);
}
template <class T>
LOOM_HD inline T from_arith(arith_t<T> v) {
  if constexpr (is_floating_v<T>) return narrow<T>(v);
  else return static_cast<T>(v);
}

// A bool result stored as type O: 0 or 1 (the in-place logical ops store
// their result in self's own dtype).
template <class O>
LOOM_HD inline O from_bool(bool b) {
  if constexpr (is_half_v<O>) return narrow<O>(b ? 1.0f : 0.0f);
  else return static_cast<O>(b);
}

template <class V>
LOOM_HD inline V quiet_nan() {
  return std::numeric_limits<V>::quiet_NaN();
}
template <class V>
LOOM_HD inline V infinity() {
  return std::numeric_limits<V>::infinity();
}

// c ? a : b. On the host, floats are blended bit by bit: a ?: whose arms are
// computed stays a branch (GCC will not if-convert code that might trap),
// which stops a loop from vectorising. On a GPU a select is already
// branch-free.
template <class V>
LOOM_HD inline V select(bool c, V a, V b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return c ? a : b;
#else
  if constexpr (std::is_floating_point_v<V>) {
    using U = std::conditional_t<sizeof(V) == 4, uint32_t, uint64_t>;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof a);
    std::memcpy(&ub, &b, sizeof b);
    const U m = U(0) - U(c);
    const U r = (ua & m) | (ub & ~m);
    V out;
    std::memcpy(&out, &r, sizeof out);
    return out;
  } else {
    return c ? a : b;
  }
#endif
}

// Products and sums rounded once each, never contracted into one fused
// multiply-add with a neighbour: nvcc contracts `a + b * c` by default,
// which rounds once where a host compiler (and the CPU plugin) rounds twice.
// These keep add's alpha, lerp and friends bit-identical across devices.
// Integers (wrap types) have nothing to fuse and use the plain operators.
#if defined(__CUDA_ARCH__)
LOOM_HD inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
LOOM_HD inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
LOOM_HD inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
LOOM_HD inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
LOOM_HD inline float sub_rn(float a, float b) { return __fsub_rn(a, b); }
LOOM_HD inline double sub_rn(double a, double b) { return __dsub_rn(a, b); }
#else
LOOM_HD inline float mul_rn(float a, float b) { return a * b; }
LOOM_HD inline double mul_rn(double a, double b) { return a * b; }
LOOM_HD inline float add_rn(float a, float b) { return a + b; }
LOOM_HD inline double add_rn(double a, double b) { return a + b; }
LOOM_HD inline float sub_rn(float a, float b) { return a - b; }
LOOM_HD inline double sub_rn(double a, double b) { return a - b; }
#endif
template <class V, std::enable_if_t<std::is_integral_v<V>, int> = 0>
LOOM_HD inline V mul_rn(V a, V b) {
  return a * b;
}
template <class V, std::enable_if_t<std::is_integral_v<V>, int> = 0>
LOOM_HD inline V add_rn(V a, V b) {
  return a + b;
}
template <class V, std::enable_if_t<std::is_integral_v<V>, int> = 0>
LOOM_HD inline V sub_rn(V a, V b) {
  return a - b;
}

// math::name(x): the <math.h> functions overloaded for float and double
// under one name on host and device (the C library's on the host, the GPU
// runtime's on the device), so one functor template serves both precisions.
namespace math {

#define LOOM_PLUGIN_MATH1(name, f32, f64)                         \
  LOOM_HD inline float name(float x) { return ::f32(x); }         \
  LOOM_HD inline double name(double x) { return ::f64(x); }
#define LOOM_PLUGIN_MATH2(name, f32, f64)                                     \
  LOOM_HD inline float name(float x, float y) { return ::f32(x, y); }         \
  LOOM_HD inline double name(double x, double y) { return ::f64(x, y); }

LOOM_PLUGIN_MATH1(fabs, fabsf, fabs)
LOOM_PLUGIN_MATH1(floor, floorf, floor)
LOOM_PLUGIN_MATH1(ceil, ceilf, ceil)
LOOM_PLUGIN_MATH1(trunc, truncf, trunc)
LOOM_PLUGIN_MATH1(rint, rintf, rint)  // half to even (the default rounding mode)
LOOM_PLUGIN_MATH1(sqrt, sqrtf, sqrt)
LOOM_PLUGIN_MATH1(exp, expf, exp)
LOOM_PLUGIN_MATH1(exp2, exp2f, exp2)
LOOM_PLUGIN_MATH1(expm1, expm1f, expm1)
LOOM_PLUGIN_MATH1(log, logf, log)
LOOM_PLUGIN_MATH1(log2, log2f, log2)
LOOM_PLUGIN_MATH1(log1p, log1pf, log1p)
LOOM_PLUGIN_MATH1(sin, sinf, sin)
LOOM_PLUGIN_MATH1(cos, cosf, cos)
LOOM_PLUGIN_MATH1(tan, tanf, tan)
LOOM_PLUGIN_MATH1(tanh, tanhf, tanh)
LOOM_PLUGIN_MATH1(erf, erff, erf)
LOOM_PLUGIN_MATH1(erfc, erfcf, erfc)
LOOM_PLUGIN_MATH2(fmod, fmodf, fmod)
LOOM_PLUGIN_MATH2(pow, powf, pow)
LOOM_PLUGIN_MATH2(atan2, atan2f, atan2)
LOOM_PLUGIN_MATH2(copysign, copysignf, copysign)

#undef LOOM_PLUGIN_MATH1
#undef LOOM_PLUGIN_MATH2

}  // namespace math
}  // namespace loom::plugin
