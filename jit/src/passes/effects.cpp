// effects.cpp — written_values (effects.h).
#include "effects.h"

namespace loom::jit::internal {

std::vector<bool> written_values(const Graph& g) {
  std::vector<bool> written(g.num_values(), false);
  for (const auto& n : g.nodes()) {
    std::vector<const Value*> targets = state_written(*n);
    if (writes_in_place(*n) && !n->inputs.empty() && n->inputs[0]) targets.push_back(n->inputs[0]);
    // Walk back through the views to the base they all alias.
    for (const Value* target : targets)
      for (const Value* v = target; v;) {
        written[v->index] = true;
        const Node* p = v->producer;
        v = p && returns_view(*p) && !p->inputs.empty() ? p->inputs[0] : nullptr;
      }
  }
  // Views of a written base see the write too.
  for (const auto& n : g.nodes())
    if (returns_view(*n) && !n->inputs.empty() && n->inputs[0] && written[n->inputs[0]->index])
      for (const Value* out : n->outputs) written[out->index] = true;
  return written;
}

}  // namespace loom::jit::internal
