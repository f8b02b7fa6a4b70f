// safetensors_dtypes.h — the one table of safetensors dtype names (internal).
#pragma once

#include <loom/dtype.h>

#include <bit>

namespace loom::io::detail {

// Tensor bytes are copied to and from files as they sit in memory; the
// format is little-endian.
static_assert(std::endian::native == std::endian::little, "loom::io assumes a little-endian host");

// X(loom DType, safetensors name, rank): rank is the dtype's position in the
// safetensors library's `Dtype` enum (BOOL < U8 < I8 < ... < F64 < I64),
// which it declares in increasing alignment; writers sort tensors by
// descending rank, then by name, and so do we.
#define LOOM_SAFETENSORS_DTYPES(X) \
  X(Bool, "BOOL", 0)               \
  X(UInt8, "U8", 1)                \
  X(Int8, "I8", 2)                 \
  X(Int16, "I16", 5)               \
  X(Float16, "F16", 7)             \
  X(BFloat16, "BF16", 8)           \
  X(Int32, "I32", 9)               \
  X(Float32, "F32", 11)            \
  X(Float64, "F64", 12)            \
  X(Int64, "I64", 13)

int safetensors_rank(DType dtype);

}  // namespace loom::io::detail
