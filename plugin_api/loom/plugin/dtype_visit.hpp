// loom/plugin/dtype_visit.hpp — from a runtime dtype code to a C++ storage
// type: the dtype classes kernels accept, their registration masks, and the
// visitor that instantiates a kernel body once per dtype of a class. Host
// code (it throws plugin::Failure); C++17.
#pragma once

#include <loom/plugin.hpp>
#include <loom/plugin/half.hpp>

#include <cstdint>
#include <string>

namespace loom::plugin {

// The dtype classes a kernel family accepts. Integral is the integers
// without bool.
enum class DTypes { All, NoBool, Floating, Integral };

inline constexpr uint64_t dtype_bit(int32_t dtype) { return LOOM_DTYPE_BIT(dtype); }
inline constexpr uint64_t kAllMask = (uint64_t{1} << LOOM_DTYPE_COUNT) - 1;
inline constexpr uint64_t kFloatingMask = dtype_bit(LOOM_DTYPE_FLOAT16) | dtype_bit(LOOM_DTYPE_BFLOAT16) |
                                          dtype_bit(LOOM_DTYPE_FLOAT32) | dtype_bit(LOOM_DTYPE_FLOAT64);
inline constexpr uint64_t kNoBoolMask = kAllMask & ~dtype_bit(LOOM_DTYPE_BOOL);
inline constexpr uint64_t kIntegralMask = kNoBoolMask & ~kFloatingMask;
inline constexpr uint64_t kIntegralOrBoolMask = kAllMask & ~kFloatingMask;

// The registration mask of a class: a kernel registered with it is visited
// with the same class, so the two cannot disagree.
inline constexpr uint64_t dtype_mask(DTypes set) {
  switch (set) {
    case DTypes::All: return kAllMask;
    case DTypes::NoBool: return kNoBoolMask;
    case DTypes::Floating: return kFloatingMask;
    case DTypes::Integral: return kIntegralMask;
  }
  return 0;
}

// The C++ types a device stores the 16-bit floats as. The host's are
// loom::plugin::Half and BFloat16; a GPU plugin names its own (__half,
// __nv_bfloat16) and specialises StorageTraits (opmath.hpp) for them.
template <class Float16, class BFloat16Type>
struct StorageTypes {
  using float16 = Float16;
  using bfloat16 = BFloat16Type;
};
using HostStorage = StorageTypes<Half, BFloat16>;

// Throws LOOM_STATUS_UNSUPPORTED "<device> <op>: dtype <name> is not
// supported" (or "unknown dtype code N"). Kept out of the callers' hot paths.
#if defined(__GNUC__)
#define LOOM_PLUGIN_COLD __attribute__((noinline, cold))
#else
#define LOOM_PLUGIN_COLD
#endif
[[noreturn]] LOOM_PLUGIN_COLD inline void fail_unsupported_dtype(const char* device, const char* op, int32_t dtype) {
  const std::string where = std::string(device) + " " + op + ": ";
  if (dtype >= 0 && dtype < LOOM_DTYPE_COUNT)
    throw Failure(LOOM_STATUS_UNSUPPORTED, where + "dtype " + dtype_name(dtype) + " is not supported");
  throw Failure(LOOM_STATUS_UNSUPPORTED, where + "unknown dtype code " + std::to_string(dtype));
}

// Calls f(T{}) with the storage type of `dtype` when it is in the class Set;
// otherwise fail_unsupported_dtype(device, op, dtype). Returns what f returns
// (void, typically).
template <DTypes Set, class Storage = HostStorage, class F>
decltype(auto) visit_dtype(int32_t dtype, const char* device, const char* op, F&& f) {
  constexpr bool ints = Set != DTypes::Floating;
  constexpr bool floats = Set == DTypes::All || Set == DTypes::NoBool || Set == DTypes::Floating;
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
      case LOOM_DTYPE_FLOAT16: return f(typename Storage::float16{});
      case LOOM_DTYPE_BFLOAT16: return f(typename Storage::bfloat16{});
      case LOOM_DTYPE_FLOAT32: return f(float{});
      case LOOM_DTYPE_FLOAT64: return f(double{});
      default: break;
    }
  }
  fail_unsupported_dtype(device, op, dtype);
}

}  // namespace loom::plugin
