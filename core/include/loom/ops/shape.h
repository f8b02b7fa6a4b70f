// loom/ops/shape.h — the op catalog, part: views, joins, splits and reorderings (permute, flatten, cat, stack, split, repeat, flip, roll, tril/triu, sort, topk).
// Included by loom/ops.h; the ops are defined in core/src/ops_shape.cpp.
#pragma once

#include <loom/tensor.h>

namespace loom {}  // namespace loom
