// common_subexpressions.cpp — eliminate_common_subexpressions
// (loom/jit/passes.h).
#include <loom/jit/passes.h>

#include "effects.h"

#include <unordered_map>

namespace loom::jit {

size_t eliminate_common_subexpressions(Graph& g) {
  const std::vector<bool> written = internal::written_values(g);
  std::unordered_map<const OpDef*, std::vector<const Node*>> seen;
  size_t merged = 0;
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    if (internal::writes_in_place(n) || internal::writes_state(n)) {  // what came before may read other data now
      seen.clear();
      continue;
    }
    if (!internal::pure(n)) continue;
    bool results_written = false;
    for (const Value* out : n.outputs) results_written = results_written || written[out->index];
    if (results_written) continue;
    auto& candidates = seen[n.op];
    const Node* same = nullptr;
    for (const Node* c : candidates)
      if (c->inputs == n.inputs && c->attrs == n.attrs) {
        same = c;
        break;
      }
    if (!same) {
      candidates.push_back(&n);
      continue;
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) g.replace_uses(n.outputs[i], same->outputs[i]);
    ++merged;
  }
  if (merged) eliminate_dead_code(g);
  return merged;
}

}  // namespace loom::jit
