// A tensor seen around one dim as [outer, n, inner], for the kernels that
// work along a dim (softmax, log_softmax and their gradient ops).
#pragma once

#include "common.hpp"

#include <cstdint>

namespace loom::cpu {

struct AlongDim {
  int64_t dim, outer, n, inner;
};

// values[0] of the call as a dim of `t` (checked: the core wraps it), and
// the sizes before, at and after it.
inline AlongDim along_dim(const LoomKernelCall& c, const LoomTensorDesc& t, const char* op) {
  const int64_t dim = plugin::value_int(c, 0);
  if (dim < 0 || dim >= t.ndim) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: dim %lld out of range for a %d-d tensor", op,
         static_cast<long long>(dim), t.ndim);
  AlongDim a{dim, 1, t.shape[dim], 1};
  for (int32_t d = 0; d < dim; ++d) a.outer *= t.shape[d];
  for (int32_t d = static_cast<int32_t>(dim) + 1; d < t.ndim; ++d) a.inner *= t.shape[d];
  return a;
}

}  // namespace loom::cpu
