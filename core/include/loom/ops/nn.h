// loom/ops/nn.h — the op catalog, part: neural-net functions (softmax, attention, normalisation, dropout, embedding, losses, pad).
// Included by loom/ops.h; the ops are defined in core/src/ops_nn.cpp.
#pragma once

#include <loom/tensor.h>

namespace loom {}  // namespace loom
