// fuse_elementwise.cpp — maximal regions of elementwise ops become one
// `_fused` node (loom/jit/passes.h).
//
// Regions grow backwards from a root (walking the graph from its end): a
// producer joins when it is elementwise (fusion_code), computes over the
// root's shape on the root's device, and every use of its result is inside
// the region — so nothing outside needs the intermediate, and the region
// has one result, the root's. The fused node takes the root's place; its
// body is the members, in order, as a graph over the region's inputs.
#include <loom/jit/passes.h>

#include "../fused_region.h"
#include "effects.h"

#include <algorithm>
#include <map>
#include <set>

namespace loom::jit {
namespace {

using internal::fusion_code;

// A node that may join a region: elementwise, and reading no value an
// in-place node writes (moving the read to the root could cross the write).
bool joinable(const Node& n, const std::vector<bool>& written) {
  if (fusion_code(n) < 0) return false;
  for (const Value* in : n.inputs)
    if (written[in->index]) return false;
  return !written[n.outputs[0]->index];
}

// The body graph of `members` (in graph order), reading `inputs`.
Graph make_body(const std::vector<Node*>& members, const std::vector<Value*>& inputs, const Value* result) {
  Graph body;
  std::map<const Value*, Value*> inner;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Value* v = body.add_input("i" + std::to_string(k), inputs[k]->dtype, inputs[k]->sizes, inputs[k]->device);
    v->wrapped_number = inputs[k]->wrapped_number;
    inner[inputs[k]] = v;
  }
  for (const Node* m : members) {
    std::vector<Value*> args;
    for (const Value* in : m->inputs) args.push_back(inner.at(in));
    std::vector<Attr> attrs = m->attrs;
    if (m->op->name() == "_to_copy") attrs[1] = Attr{};  // same device: the body names none
    Node* n = body.add_node(*m->op, std::move(args), std::move(attrs));
    const Value* out = m->outputs[0];
    inner[out] = body.add_output_value(*n, out->dtype, out->sizes, out->device);
  }
  body.add_graph_output(inner.at(result));
  body.validate();
  return body;
}

}  // namespace

size_t fuse_elementwise(Graph& g) {
  const std::vector<bool> written = internal::written_values(g);
  const std::vector<size_t> uses = g.use_counts();
  std::vector<Node*> nodes;
  std::map<const Node*, size_t> position;
  for (const auto& n : g.nodes()) {
    position[n.get()] = nodes.size();
    nodes.push_back(n.get());
  }
  std::vector<bool> taken(nodes.size(), false);
  std::set<const Node*> fused_away;
  size_t fused = 0;
  for (size_t i = nodes.size(); i-- > 0;) {
    Node* root = nodes[i];
    if (taken[i] || !joinable(*root, written)) continue;
    const Value& result = *root->outputs[0];
    std::set<size_t> members = {i};
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t m : std::vector<size_t>(members.begin(), members.end()))
        for (const Value* in : nodes[m]->inputs) {
          const Node* p = in->producer;
          if (!p) continue;
          const size_t j = position.at(p);
          if (members.count(j) || taken[j] || !joinable(*p, written)) continue;
          if (in->sizes != result.sizes || in->device != result.device) continue;
          size_t inside = 0;
          for (size_t k : members)
            inside += static_cast<size_t>(std::count(nodes[k]->inputs.begin(), nodes[k]->inputs.end(), in));
          if (inside != uses[in->index]) continue;
          members.insert(j);
          grew = true;
        }
    }
    if (members.size() < 2) continue;
    std::vector<Node*> ordered;
    std::vector<Value*> inputs;
    for (size_t m : members) {  // std::set: graph order
      ordered.push_back(nodes[m]);
      taken[m] = true;
    }
    for (const Node* m : ordered)
      for (Value* in : m->inputs) {
        const bool inner = in->producer && members.count(position.at(in->producer));
        if (!inner && std::find(inputs.begin(), inputs.end(), in) == inputs.end()) inputs.push_back(in);
      }
    const std::string text = make_body(ordered, inputs, &result).str();
    Attr list;
    list.kind = Attr::Kind::TensorList;
    list.i = static_cast<int64_t>(inputs.size());
    Attr body;
    body.kind = Attr::Kind::String;
    body.s = text;
    Node* f = g.add_node(internal::fused_op(), inputs, {list, body});
    Value* out = g.add_output_value(*f, result.dtype, result.sizes, result.device);
    g.move_before(f, root);
    g.replace_uses(&result, out);
    for (const Node* m : ordered) fused_away.insert(m);
    fused += members.size() - 1;
  }
  if (!fused_away.empty()) g.remove_nodes([&](const Node& n) { return fused_away.count(&n) > 0; });
  return fused;
}

}  // namespace loom::jit
