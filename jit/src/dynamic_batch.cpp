// dynamic_batch.cpp — a traced graph's batch dimension made `?`
// (TraceOptions::dynamic_batch, loom/jit/jit.h).
#include "dynamic_batch.h"

#include <loom/error.h>

namespace loom::jit::internal {

void make_batch_dynamic(Graph& g, int64_t batch) {
  std::vector<bool> dynamic(g.num_values(), false);
  auto batched = [&](const Value* v) { return !v->sizes.empty() && v->sizes[0] == batch; };
  for (const Value* v : g.inputs())
    if (v->kind == InputKind::Input && batched(v)) dynamic[v->index] = true;
  for (const auto& np : g.nodes()) {
    Node& n = *np;
    bool from_batch = false;
    for (const Value* in : n.inputs) from_batch = from_batch || (in && dynamic[in->index]);
    if (!from_batch) continue;
    for (const Value* out : n.outputs)
      if (batched(out)) dynamic[out->index] = true;
    const std::string& op = n.op->name();
    if ((op != "view" && op != "expand") || n.outputs.empty() || !dynamic[n.outputs[0]->index]) continue;
    // The size as the output has it, the batch dimension -1: view infers it,
    // expand keeps the input's.
    Attr& size = n.attrs[0];
    if (op == "expand" && n.inputs[0]->sizes.size() != n.outputs[0]->sizes.size())
      throw Error(cat_error(n, "expand adds leading dimensions to the batched value; the batch cannot stay dynamic"));
    size.kind = Attr::Kind::IntList;
    size.ints = n.outputs[0]->sizes;
    size.ints[0] = -1;
  }
  for (const Value* v : g.inputs())
    if (dynamic[v->index]) const_cast<Value*>(v)->sizes[0] = -1;
  for (const auto& n : g.nodes())
    for (Value* out : n->outputs)
      if (dynamic[out->index]) out->sizes[0] = -1;
}

}  // namespace loom::jit::internal
