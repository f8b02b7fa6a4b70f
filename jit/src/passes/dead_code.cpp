// dead_code.cpp — eliminate_dead_code (loom/jit/passes.h).
#include <loom/jit/passes.h>

#include "effects.h"

#include <set>

namespace loom::jit {

size_t eliminate_dead_code(Graph& g) {
  // Backwards: a node is live when it has an effect or a live user.
  std::vector<bool> used(g.num_values(), false);
  for (const Value* v : g.outputs()) used[v->index] = true;
  std::set<const Node*> dead;
  for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it) {
    const Node& n = **it;
    bool live = !internal::pure(n);
    for (const Value* out : n.outputs) live = live || used[out->index];
    if (!live) {
      dead.insert(&n);
      continue;
    }
    for (const Value* in : n.inputs)
      if (in) used[in->index] = true;
  }
  const size_t removed = g.remove_nodes([&](const Node& n) { return dead.count(&n) > 0; });
  g.remove_unused_constants();
  return removed;
}

}  // namespace loom::jit
