// Scalar arithmetic the elementwise functors (unary_ops.cuh, binary_ops.cuh)
// share, callable on the host (so the functors are testable without a GPU)
// and on the device:
//   - wrap_t<T>: the type integer arithmetic runs in, unsigned and at least
//     32 bits wide, so overflow wraps like two's complement (as the CPU
//     plugin and PyTorch do) instead of being undefined behaviour, and
//     uint8/uint16 products never promote to a signed int that overflows;
//   - mul_rn / add_rn / sub_rn: float and double products and sums rounded
//     once each. nvcc contracts `a + b * c` into one fma by default, which
//     rounds once where the CPU rounds twice; these keep add's alpha, lerp
//     and friends bit-identical to the CPU plugin;
//   - math::name(x): <cmath> functions overloaded for float and double with
//     the same name on host and device (CUDA's expf / exp, glibc's on the
//     host), so one functor template serves both precisions.
#pragma once

#include "dtype.cuh"

#include "vendor/gpu_runtime.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE {

template <class T> struct WrapOf { using type = T; };  // floats and bool: themselves
template <> struct WrapOf<uint8_t> { using type = uint32_t; };
template <> struct WrapOf<int8_t> { using type = uint32_t; };
template <> struct WrapOf<int16_t> { using type = uint32_t; };
template <> struct WrapOf<int32_t> { using type = uint32_t; };
template <> struct WrapOf<int64_t> { using type = uint64_t; };
template <class T> using wrap_t = typename WrapOf<T>::type;

// The type + - * run in: float for the 16-bit floats, the wrapping type
// for integers, bool and float/double themselves.
template <class T>
using arith_t = std::conditional_t<is_floating_v<T>, compute_t<T>, wrap_t<T>>;

template <class T>
inline constexpr bool is_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Storage -> arithmetic type and back; integer round trips are modular.
template <class T>
__host__ __device__ inline arith_t<T> to_arith(T v) {
  if constexpr (is_floating_v<T>) return widen(v);
  else return static_cast<arith_t<T>>(v);
}
template <class T>
__host__ __device__ inline T from_arith(arith_t<T> v) {
  if constexpr (is_floating_v<T>) return narrow<T>(v);
  else return static_cast<T>(v);
}

// A bool result stored as dtype-type O (0 or 1; the in-place logical ops).
template <class O>
__host__ __device__ inline O from_bool(bool b) {
  if constexpr (is_half_v<O>) return narrow<O>(b ? 1.0f : 0.0f);
  else return static_cast<O>(b);
}

// Products and sums that are never fused with a neighbouring operation.
// Integers (wrap types) have nothing to fuse and use the plain operators.
#ifdef __CUDA_ARCH__
#define LOOM_CUDA_RN(name, op, f32, f64)                                                         \
  __host__ __device__ inline float name(float a, float b) { return f32(a, b); }  \
  __host__ __device__ inline double name(double a, double b) { return f64(a, b); }
#else
#define LOOM_CUDA_RN(name, op, f32, f64)                                          \
  __host__ __device__ inline float name(float a, float b) { return a op b; }    \
  __host__ __device__ inline double name(double a, double b) { return a op b; }
#endif
LOOM_CUDA_RN(mul_rn, *, __fmul_rn, __dmul_rn)
LOOM_CUDA_RN(add_rn, +, __fadd_rn, __dadd_rn)
LOOM_CUDA_RN(sub_rn, -, __fsub_rn, __dsub_rn)
#undef LOOM_CUDA_RN

template <class V>
__host__ __device__ inline V mul_rn(V a, V b) requires std::is_integral_v<V> {
  return a * b;
}
template <class V>
__host__ __device__ inline V add_rn(V a, V b) requires std::is_integral_v<V> {
  return a + b;
}
template <class V>
__host__ __device__ inline V sub_rn(V a, V b) requires std::is_integral_v<V> {
  return a - b;
}

template <class V>
__host__ __device__ inline V quiet_nan() {
  return std::numeric_limits<V>::quiet_NaN();
}
template <class V>
__host__ __device__ inline V infinity() {
  return std::numeric_limits<V>::infinity();
}

namespace math {

#define LOOM_CUDA_MATH1(name, f32, f64)                                  \
  __host__ __device__ inline float name(float x) { return ::f32(x); }   \
  __host__ __device__ inline double name(double x) { return ::f64(x); }
#define LOOM_CUDA_MATH2(name, f32, f64)                                                \
  __host__ __device__ inline float name(float x, float y) { return ::f32(x, y); }     \
  __host__ __device__ inline double name(double x, double y) { return ::f64(x, y); }

LOOM_CUDA_MATH1(fabs, fabsf, fabs)
LOOM_CUDA_MATH1(floor, floorf, floor)
LOOM_CUDA_MATH1(ceil, ceilf, ceil)
LOOM_CUDA_MATH1(trunc, truncf, trunc)
LOOM_CUDA_MATH1(rint, rintf, rint)  // half to even (the default rounding mode)
LOOM_CUDA_MATH1(sqrt, sqrtf, sqrt)
LOOM_CUDA_MATH1(exp, expf, exp)
LOOM_CUDA_MATH1(exp2, exp2f, exp2)
LOOM_CUDA_MATH1(expm1, expm1f, expm1)
LOOM_CUDA_MATH1(log, logf, log)
LOOM_CUDA_MATH1(log2, log2f, log2)
LOOM_CUDA_MATH1(log1p, log1pf, log1p)
LOOM_CUDA_MATH1(sin, sinf, sin)
LOOM_CUDA_MATH1(cos, cosf, cos)
LOOM_CUDA_MATH1(tan, tanf, tan)
LOOM_CUDA_MATH1(tanh, tanhf, tanh)
LOOM_CUDA_MATH1(erf, erff, erf)
LOOM_CUDA_MATH1(erfc, erfcf, erfc)
LOOM_CUDA_MATH2(fmod, fmodf, fmod)
LOOM_CUDA_MATH2(pow, powf, pow)
LOOM_CUDA_MATH2(atan2, atan2f, atan2)
LOOM_CUDA_MATH2(copysign, copysignf, copysign)

#undef LOOM_CUDA_MATH1
#undef LOOM_CUDA_MATH2

}  // namespace math
}  // namespace loom::LOOM_GPU_NAMESPACE
