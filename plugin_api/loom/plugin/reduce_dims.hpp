// loom/plugin/reduce_dims.hpp — reading a reduction kernel's arguments as
// docs/kernel_conventions.md defines them (sum's row): the reduced dims in
// values[0], and outputs in keepdim form. Host code (throws
// plugin::Failure with INVALID_ARGUMENT, naming the device and op); C++17.
#pragma once

#include <loom/plugin.hpp>

#include <cstdint>
#include <string>

namespace loom::plugin {

// values[0] -> reduced[0, ndim). NONE or an empty list: every dim; an INT is
// taken as a one-element list. A 0-d input accepts dim 0 (PyTorch wraps dim
// 0 and -1 of a scalar) and reduces nothing. Dims arrive non-negative from
// the core; anything else is refused.
inline void read_reduced_dims(const LoomValue& v, int32_t ndim, const char* device, const char* op,
                              bool* reduced) {
  const bool all = v.kind == LOOM_VALUE_NONE || (v.kind == LOOM_VALUE_INT_LIST && v.u.ints.size == 0);
  if (!all && v.kind != LOOM_VALUE_INT_LIST && v.kind != LOOM_VALUE_INT)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(device) + " " + op +
                                                    ": dim must be an int list, got value kind " +
                                                    std::to_string(v.kind));
  for (int32_t d = 0; d < ndim; ++d) reduced[d] = all;
  if (all) return;
  const int64_t* list = v.kind == LOOM_VALUE_INT ? &v.u.i : v.u.ints.data;
  const int64_t size = v.kind == LOOM_VALUE_INT ? 1 : v.u.ints.size;
  for (int64_t i = 0; i < size; ++i) {
    const int64_t d = list[i];
    if (d < 0 || d >= (ndim > 0 ? ndim : 1))
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(device) + " " + op + ": dim " + std::to_string(d) +
                                                      " out of range for " + std::to_string(ndim) + " dims");
    if (ndim > 0) reduced[d] = true;
  }
}

// `out` must be `in` in keepdim form (size 1 at each reduced dim, the
// input's ndim) with dtype `dtype`.
inline void expect_keepdim(const LoomTensorDesc& in, const bool* reduced, const LoomTensorDesc& out,
                           int32_t dtype, const char* device, const char* op) {
  const std::string where = std::string(device) + " " + op + ": ";
  if (out.ndim != in.ndim || out.dtype != dtype)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  where + "output must have the input's ndim " + std::to_string(in.ndim) +
                      " (keepdim form) and dtype " + dtype_name(dtype) + ", got " + std::to_string(out.ndim) +
                      " and " + dtype_name(out.dtype));
  for (int32_t d = 0; d < in.ndim; ++d) {
    const int64_t want = reduced[d] ? 1 : in.shape[d];
    if (out.shape[d] != want)
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, where + "output dim " + std::to_string(d) + " has size " +
                                                      std::to_string(out.shape[d]) + ", expected " +
                                                      std::to_string(want) + " (keepdim form)");
  }
}

}  // namespace loom::plugin
