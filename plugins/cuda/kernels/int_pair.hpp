// Reading the `int[2]` arguments of the convolution and pooling kernels:
// the core hands each as a 2-element INT_LIST (docs/kernel_conventions.md,
// "Convolution and pooling").
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin.hpp>

#include <cstdint>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE {

// values[i] as two int64s; an INVALID_ARGUMENT failure naming op, the
// argument and its position when it is anything else.
inline const int64_t* int_pair(const LoomKernelCall& c, int i, const char* op, const char* name) {
  if (i >= c.num_values || c.values[i].kind != LOOM_VALUE_INT_LIST || c.values[i].u.ints.size != 2)
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": expected '" + name +
                                                            "' (value " + std::to_string(i) +
                                                            ") as a 2-element int list");
  return c.values[i].u.ints.data;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
