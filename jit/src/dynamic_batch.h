// dynamic_batch.h (jit-internal) — see TraceOptions::dynamic_batch.
#pragma once

#include <loom/jit/graph.h>

#include <string>

namespace loom::jit::internal {

inline std::string cat_error(const Node& n, const std::string& what) {
  return "jit::trace(dynamic_batch): " + node_str(n) + ": " + what;
}

// Marks the Input values whose dim 0 is `batch`, and what nodes compute from
// them with that leading size, as `?`; rewrites view and expand sizes to -1
// there. Throws naming the node where the batch cannot stay dynamic.
void make_batch_dynamic(Graph& g, int64_t batch);

}  // namespace loom::jit::internal
