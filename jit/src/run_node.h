// run_node.h (jit-internal) — one node through the dispatcher: what the
// executor does per node, and what constant folding does once.
#pragma once

#include <loom/jit/graph.h>
#include <loom/op_call.h>

#include <vector>

namespace loom::jit::internal {

// `args`: one tensor per node input (nullptr where the input is absent).
// The node's attrs are passed as its values (they point into the node).
inline void run_node(const Node& n, const Tensor* const* args, OpCall& call) {
  for (size_t i = 0; i < n.inputs.size(); ++i) call.args.push_back(args[i]);
  for (const Attr& a : n.attrs) call.values.push_back(a.as_value());
  dispatch(call);
}

}  // namespace loom::jit::internal
