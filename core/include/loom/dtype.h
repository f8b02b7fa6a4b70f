// loom/dtype.h — element types and PyTorch's type-promotion rules.
//
// Generated from LOOM_DTYPE_LIST in loom/plugin_api.h, the single source of
// truth, so the C++ enum value IS the ABI code.
#pragma once

#include <loom/plugin_api.h>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace loom {

enum class DType : int8_t {
#define LOOM_DTYPE_ENUM(Name, py, code, dl, bits) Name = code,
  LOOM_DTYPE_LIST(LOOM_DTYPE_ENUM)
#undef LOOM_DTYPE_ENUM
};

inline constexpr int kNumDTypes = LOOM_DTYPE_COUNT;

constexpr size_t itemsize(DType t) {
  switch (t) {
#define LOOM_DTYPE_SIZE(Name, py, code, dl, bits) \
  case DType::Name:                               \
    return (bits) / 8;
    LOOM_DTYPE_LIST(LOOM_DTYPE_SIZE)
#undef LOOM_DTYPE_SIZE
  }
  return 0;
}

// "float32", as in loom.float32.
constexpr std::string_view name(DType t) {
  switch (t) {
#define LOOM_DTYPE_NAME(Name, py, code, dl, bits) \
  case DType::Name:                               \
    return #py;
    LOOM_DTYPE_LIST(LOOM_DTYPE_NAME)
#undef LOOM_DTYPE_NAME
  }
  return "unknown";
}

// Parses "float32" (also "float", "double", "half", "long", "int") or throws.
DType dtype_from_name(std::string_view s);
// A kernel's registration mask (LOOM_DTYPE_BIT per dtype) named: "float32,
// float64", or "every dtype" for 0 or a mask of them all.
std::string dtype_mask_str(uint64_t mask);

constexpr bool is_floating_point(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 ||
         t == DType::Float64;
}
// Integer types, bool included when include_bool.
constexpr bool is_integral(DType t, bool include_bool = false) {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::Int16 || t == DType::Int32 ||
         t == DType::Int64 || (include_bool && t == DType::Bool);
}
constexpr bool is_valid(int code) { return code >= 0 && code < kNumDTypes; }

// torch.promote_types: the smallest type both convert to without losing the
// category (bool < integer < floating).
DType promote_types(DType a, DType b);

// torch.can_cast: may a result of dtype `from` be stored in `to` (in-place
// ops, out= arguments)? No floating -> integer, no number -> bool.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  return !(from != DType::Bool && to == DType::Bool);
}

// The dtype of floating results (true division, exp of integers): float32,
// as torch.get_default_dtype().
inline constexpr DType kDefaultFloat = DType::Float32;

// libtorch's spellings (torch::kFloat, torch::ScalarType ...), so ported
// code reads unchanged.
using ScalarType = DType;
inline constexpr DType kFloat = DType::Float32, kFloat32 = DType::Float32;
inline constexpr DType kDouble = DType::Float64, kFloat64 = DType::Float64;
inline constexpr DType kHalf = DType::Float16, kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kLong = DType::Int64, kInt64 = DType::Int64;
inline constexpr DType kInt = DType::Int32, kInt32 = DType::Int32;
inline constexpr DType kShort = DType::Int16, kInt16 = DType::Int16;
inline constexpr DType kChar = DType::Int8, kInt8 = DType::Int8;
inline constexpr DType kByte = DType::UInt8, kUInt8 = DType::UInt8;
inline constexpr DType kBool = DType::Bool;

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << "loom." << name(t); }

}  // namespace loom
