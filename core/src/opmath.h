// opmath.h (core-internal) — the dtype arithmetic runs in for a storage
// dtype (PyTorch's opmath_type): float32 for the 16-bit floats, the dtype
// itself otherwise. The composites that compute statistics, softmax rows,
// losses and attention in it, and the 16-bit derivative rule
// (LOOM_DERIVATIVE_IN_FLOAT), share this one definition.
#pragma once

#include <loom/dtype.h>

namespace loom::detail {

inline bool is_reduced_float(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

inline DType opmath_dtype(DType t) { return is_reduced_float(t) ? DType::Float32 : t; }

}  // namespace loom::detail
