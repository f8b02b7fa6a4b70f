// constant_folding.cpp — fold_constants (loom/jit/passes.h).
#include <loom/jit/passes.h>

#include "../run_node.h"
#include "effects.h"

namespace loom::jit {

size_t fold_constants(Graph& g) {
  const std::vector<bool> written_at_start = internal::written_values(g);
  // Constants made here are never written.
  auto written = [&](const Value* v) { return v->index < written_at_start.size() && written_at_start[v->index]; };
  size_t folded = 0;
  std::vector<Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (Node* n : order) {
    if (!internal::pure(*n) || internal::returns_view(*n) || n->inputs.empty()) continue;
    bool all_constant = true;
    std::vector<const Tensor*> args;
    std::vector<Tensor> held;
    held.reserve(n->inputs.size());  // args point into it
    for (const Value* in : n->inputs) {
      if (!in) {
        args.push_back(nullptr);
        continue;
      }
      const bool constant = internal::is_constant(in) && !written(in);
      all_constant = all_constant && constant;
      if (!all_constant) break;
      held.push_back(g.held(*in));
      args.push_back(&held.back());
    }
    if (!all_constant) continue;
    bool results_written = false;
    for (const Value* out : n->outputs) results_written = results_written || written(out);
    if (results_written) continue;
    OpCall call(*n->op);
    internal::run_node(*n, args.data(), call);
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      // A fresh tensor: the result may alias an input (an op returning self).
      Value* c = g.add_constant(call.outputs[i].result.clone());
      g.replace_uses(n->outputs[i], c);
    }
    ++folded;
  }
  // The folded nodes are dead now.
  if (folded) eliminate_dead_code(g);
  return folded;
}

}  // namespace loom::jit
