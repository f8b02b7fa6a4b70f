// effects.h (jit-internal) — what the passes must know about a node or value
// before moving, merging or removing it (loom/jit/passes.h).
#pragma once

#include <loom/jit/graph.h>

#include <vector>

namespace loom::jit::internal {

// Writes an input in place (its schema marks an argument `(a!)`).
inline bool writes_in_place(const Node& n) { return n.op->schema().is_inplace(); }
// Draws random numbers (takes a Generator).
inline bool draws_random(const Node& n) {
  for (const Argument& a : n.op->schema().args)
    if (a.type == ArgType::Generator) return true;
  return false;
}
// A view: its result aliases input 0 (schema return `Tensor(a)`).
inline bool returns_view(const Node& n) {
  const Schema& s = n.op->schema();
  return !s.is_inplace() && !s.returns.empty() && !s.returns[0].alias.empty();
}
// A constant of the graph (not an input, a parameter or a node's result).
inline bool is_constant(const Value* v) { return v && !v->producer && v->kind == InputKind::Constant; }

// The node's attr for the schema argument `name` (attrs skip the tensor
// arguments), or nullptr.
inline const Attr* attr_named(const Node& n, const char* name) {
  size_t i = 0;
  for (const Argument& a : n.op->schema().args) {
    if (a.type == ArgType::Tensor) continue;
    if (a.name == name) return i < n.attrs.size() ? &n.attrs[i] : nullptr;
    ++i;
  }
  return nullptr;
}

// The inputs a node updates besides its result, which its schema does not
// mark: batch_norm in training mode writes its running_mean and
// running_var (inputs 1 and 2, when given), as PyTorch's does. Such a node
// is never removed, merged or folded, and the values it writes count as
// written (written_values).
inline std::vector<const Value*> state_written(const Node& n) {
  std::vector<const Value*> out;
  if (n.op->name() == "batch_norm") {
    const Attr* training = attr_named(n, "training");
    if (training && training->i != 0)
      for (size_t k : {size_t{1}, size_t{2}})
        if (k < n.inputs.size() && n.inputs[k]) out.push_back(n.inputs[k]);
  }
  return out;
}
inline bool writes_state(const Node& n) { return !state_written(n).empty(); }

inline bool pure(const Node& n) { return !writes_in_place(n) && !draws_random(n) && !writes_state(n); }

// By Value::index: whether an in-place node writes the value, directly or
// through a chain of views of it (both the views and what they view).
std::vector<bool> written_values(const Graph& g);

}  // namespace loom::jit::internal
