// loom dtypes on the device: the C++ type each dtype is stored as
// (__half and __nv_bfloat16 for the 16-bit floats), the type it computes in
// (float for the 16-bit floats, as the CPU plugin does), and a host-side
// switch that instantiates a kernel for the dtypes of a class.
#pragma once

#include <loom/plugin.hpp>
#include <loom/plugin/cast.hpp>

#include "vendor/gpu_runtime.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE {

// The type that computes for storage type T.
template <class T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<__half> { using type = float; };
template <> struct ComputeOf<__nv_bfloat16> { using type = float; };
template <class T> using compute_t = typename ComputeOf<T>::type;

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_half_v<T>;

// Storage <-> compute. 16-bit results round to nearest even.
template <class T>
__host__ __device__ inline compute_t<T> widen(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return v;
}
template <class T>
__host__ __device__ inline T narrow(compute_t<T> v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return static_cast<T>(v);
}

// Dtype classes a kernel family accepts (registration masks match them).
enum class DTypes { All, NoBool, Floating, Integral };

inline constexpr uint64_t dtype_bit(int32_t d) { return uint64_t{1} << d; }
inline constexpr uint64_t kFloatingMask = dtype_bit(LOOM_DTYPE_FLOAT16) | dtype_bit(LOOM_DTYPE_BFLOAT16) |
                                          dtype_bit(LOOM_DTYPE_FLOAT32) | dtype_bit(LOOM_DTYPE_FLOAT64);
inline constexpr uint64_t kAllMask = (uint64_t{1} << LOOM_DTYPE_COUNT) - 1;
inline constexpr uint64_t kNoBoolMask = kAllMask & ~dtype_bit(LOOM_DTYPE_BOOL);
inline constexpr uint64_t kIntegralMask = kNoBoolMask & ~kFloatingMask;

// Calls f(T{}) with the device storage type of `dtype` when it is in the
// class; otherwise a LOOM_STATUS_UNSUPPORTED failure naming op and dtype.
template <DTypes Set, class F>
void visit(int32_t dtype, const char* op, F&& f) {
  constexpr bool ints = Set != DTypes::Floating, floats = Set != DTypes::Integral;
  if constexpr (Set == DTypes::All)
    if (dtype == LOOM_DTYPE_BOOL) return f(bool{});
  if constexpr (ints) {
    switch (dtype) {
      case LOOM_DTYPE_UINT8: return f(uint8_t{});
      case LOOM_DTYPE_INT8: return f(int8_t{});
      case LOOM_DTYPE_INT16: return f(int16_t{});
      case LOOM_DTYPE_INT32: return f(int32_t{});
      case LOOM_DTYPE_INT64: return f(int64_t{});
      default: break;
    }
  }
  if constexpr (floats) {
    switch (dtype) {
      case LOOM_DTYPE_FLOAT16: return f(__half{});
      case LOOM_DTYPE_BFLOAT16: return f(__nv_bfloat16{});
      case LOOM_DTYPE_FLOAT32: return f(float{});
      case LOOM_DTYPE_FLOAT64: return f(double{});
      default: break;
    }
  }
  throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": dtype " +
                                                     plugin::dtype_name(dtype) + " is not supported");
}

// A Scalar argument (BOOL, INT or FLOAT LoomValue) in compute type C (never
// a 16-bit float), converted on the host with the shared casting rules.
template <class C>
C scalar_as(const LoomValue& v, const char* op) {
  switch (v.kind) {
    case LOOM_VALUE_BOOL: return plugin::cast<C>(v.u.i != 0);
    case LOOM_VALUE_INT: return plugin::cast<C>(static_cast<int64_t>(v.u.i));
    case LOOM_VALUE_FLOAT: return plugin::cast<C>(v.u.f);
    default: break;
  }
  throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                        std::string(LOOM_GPU_NAME " ") + op + ": expected a Scalar argument, got value kind " +
                            std::to_string(v.kind));
}

}  // namespace loom::LOOM_GPU_NAMESPACE
