// Pooling kernels (pool.cpp), registered by register_conv_kernels (conv.cpp).
#pragma once

#include <loom/plugin_api.h>

namespace loom::cpu {

// max_pool2d and max_pool2d_with_indices (one or two outputs).
void max_pool2d(const LoomKernelCall& c);
void avg_pool2d(const LoomKernelCall& c);
void adaptive_avg_pool2d(const LoomKernelCall& c);

}  // namespace loom::cpu
