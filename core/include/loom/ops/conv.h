// loom/ops/conv.h — the op catalog, part: convolution and pooling (conv1d/2d, conv_transpose2d, max/avg/adaptive pools).
// Included by loom/ops.h; the ops are defined in core/src/ops_conv.cpp.
#pragma once

#include <loom/tensor.h>

namespace loom {}  // namespace loom
