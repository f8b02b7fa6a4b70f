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
inline bool pure(const Node& n) { return !writes_in_place(n) && !draws_random(n); }
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

// By Value::index: whether an in-place node writes the value, directly or
// through a chain of views of it (both the views and what they view).
std::vector<bool> written_values(const Graph& g);

}  // namespace loom::jit::internal
