// dtype.cpp — dtype names and PyTorch's promotion table.
#include <loom/dtype.h>

#include "opmath.h"

#include <loom/error.h>

#include <string>

namespace loom {

std::string dtype_mask_str(uint64_t mask) {
  const uint64_t all = (uint64_t{1} << kNumDTypes) - 1;
  if (mask == 0 || (mask & all) == all) return "every dtype";
  std::string out;
  for (int code = 0; code < kNumDTypes; ++code)
    if ((mask >> code) & 1u) out += (out.empty() ? "" : ", ") + std::string(name(static_cast<DType>(code)));
  return out;
}

DType dtype_from_name(std::string_view s) {
  if (s.starts_with("loom.")) s.remove_prefix(5);
#define LOOM_DTYPE_PARSE(Name, py, code, dl, bits) \
  if (s == #py) return DType::Name;
  LOOM_DTYPE_LIST(LOOM_DTYPE_PARSE)
#undef LOOM_DTYPE_PARSE
  if (s == "float") return DType::Float32;
  if (s == "double") return DType::Float64;
  if (s == "half") return DType::Float16;
  if (s == "long") return DType::Int64;
  if (s == "int") return DType::Int32;
  if (s == "short") return DType::Int16;
  throw Error(detail::cat("unknown dtype '", s,
                          "'; expected one of bool, uint8, int8, int16, int32, int64, float16, "
                          "bfloat16, float32, float64"));
}

namespace {
int int_rank(DType t) {  // by width, signedness handled separately
  switch (t) {
    case DType::Int8: case DType::UInt8: return 0;
    case DType::Int16: return 1;
    case DType::Int32: return 2;
    default: return 3;
  }
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const bool fa = is_floating_point(a), fb = is_floating_point(b);
  if (fa && fb) {
    if (detail::is_reduced_float(a) && detail::is_reduced_float(b)) return DType::Float32;  // f16 with bf16
    return itemsize(a) >= itemsize(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  // Both integers. uint8 with a signed type needs a signed type wider than 8 bits.
  if (a == DType::UInt8 || b == DType::UInt8) {
    DType other = a == DType::UInt8 ? b : a;
    return other == DType::Int8 ? DType::Int16 : other;
  }
  return int_rank(a) >= int_rank(b) ? a : b;
}

}  // namespace loom
