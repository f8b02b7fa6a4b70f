// loom dtypes on the device: the C++ type each dtype is stored as
// (__half and __nv_bfloat16 for the 16-bit floats, registered with the
// shared compute-type rule of loom/plugin/opmath.hpp), the host-side switch
// that instantiates a kernel for the dtypes of a class, and Scalar
// arguments in a compute type.
#pragma once

#include <loom/plugin.hpp>
#include <loom/plugin/cast.hpp>
#include <loom/plugin/dtype_visit.hpp>
#include <loom/plugin/opmath.hpp>

#include "vendor/gpu_runtime.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

// The GPU's 16-bit storage types compute in float, as the host's do
// (loom/plugin/opmath.hpp); conversions round to nearest even.
template <>
struct loom::plugin::StorageTraits<__half> {
  using opmath = float;
  static constexpr bool is_half = true;
  __host__ __device__ static float widen(__half v) { return __half2float(v); }
  __host__ __device__ static __half narrow(float v) { return __float2half_rn(v); }
};
template <>
struct loom::plugin::StorageTraits<__nv_bfloat16> {
  using opmath = float;
  static constexpr bool is_half = true;
  __host__ __device__ static float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
  __host__ __device__ static __nv_bfloat16 narrow(float v) { return __float2bfloat16_rn(v); }
};

namespace loom::LOOM_GPU_NAMESPACE {

// The compute-type rule, the dtype classes and their masks are loom's
// shared ones (loom/plugin/opmath.hpp, loom/plugin/dtype_visit.hpp).
using plugin::arith_t;
using plugin::dtype_bit;
using plugin::DTypes;
using plugin::from_arith;
using plugin::is_floating_v;
using plugin::is_half_v;
using plugin::is_integer_v;
using plugin::kAllMask;
using plugin::kFloatingMask;
using plugin::kIntegralMask;
using plugin::kIntegralOrBoolMask;
using plugin::kNoBoolMask;
using plugin::narrow;
using plugin::opmath_t;
using plugin::to_arith;
using plugin::widen;

using GpuStorage = plugin::StorageTypes<__half, __nv_bfloat16>;

// Calls f(T{}) with the device storage type of `dtype` when it is in the
// class; otherwise a LOOM_STATUS_UNSUPPORTED failure naming op and dtype.
template <DTypes Set, class F>
void visit(int32_t dtype, const char* op, F&& f) {
  plugin::visit_dtype<Set, GpuStorage>(dtype, LOOM_GPU_NAME, op, f);
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
