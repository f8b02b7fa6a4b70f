// loom/ops/loss.h — the op catalog, part: loss functions (mse, l1, smooth_l1,
// binary_cross_entropy, binary_cross_entropy_with_logits).
// Included by loom/ops.h; the ops are defined in core/src/ops_loss.cpp.
#pragma once

#include <loom/tensor.h>

namespace loom {}  // namespace loom
