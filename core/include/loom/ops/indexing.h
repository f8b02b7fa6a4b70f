// loom/ops/indexing.h — the op catalog, part: gather/scatter-style indexing (index_select, gather, scatter, index_add, masked ops, nonzero, advanced indexing).
// Included by loom/ops.h; the ops are defined in core/src/ops_indexing.cpp.
#pragma once

#include <loom/tensor.h>

namespace loom {}  // namespace loom
