// freeze.cpp — freeze_parameters, fold_batch_norm and freeze
// (loom/jit/passes.h): torch.jit.freeze's inference rewrites.
#include <loom/jit/passes.h>

#include "effects.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <set>

namespace loom::jit {
namespace {

bool bn_training(const Node& n) {
  const Attr* t = internal::attr_named(n, "training");
  return !t || t->i != 0;
}

// A held tensor in float64 on the host, where the folding computes (so it
// rounds once, into the weight's dtype, whatever the device).
Tensor host64(const Graph& g, const Value* v) { return g.held(*v).cpu().to(DType::Float64); }

// The layer (conv1d, conv2d or a 2-D linear) whose only reader is `bn`, an
// evaluation-mode batch_norm over its output channels with every tensor a
// constant; nullptr where the pair cannot fold.
Node* foldable_layer(const Node& bn, const std::vector<size_t>& uses,
                     const std::vector<bool>& written) {
  if (bn.op->name() != "batch_norm" || bn_training(bn) || bn.inputs.size() != 5 || !bn.inputs[0]) return nullptr;
  for (size_t k = 1; k < 5; ++k)
    if (bn.inputs[k] && !internal::is_constant(bn.inputs[k])) return nullptr;
  if (!bn.inputs[1] || !bn.inputs[2]) return nullptr;  // evaluation needs the running statistics
  const Value* y = bn.inputs[0];
  Node* layer = y->producer;
  if (!layer || uses[y->index] != 1 || written[y->index] || layer->outputs.size() != 1) return nullptr;
  const std::string& op = layer->op->name();
  const bool conv = op == "conv1d" || op == "conv2d";
  if (!conv && !(op == "linear" && y->sizes.size() == 2)) return nullptr;
  if (layer->inputs.size() != 3 || !internal::is_constant(layer->inputs[1]) ||
      (layer->inputs[2] && !internal::is_constant(layer->inputs[2])))
    return nullptr;
  // Batched input only: channels are dim 1 of the output, dim 0 of the weight.
  if (y->sizes.size() < 2 || (conv && y->sizes.size() != (op == "conv1d" ? 3u : 4u))) return nullptr;
  const Value* w = layer->inputs[1];
  if (!is_floating_point(w->dtype) || w->sizes.empty() || w->sizes[0] != y->sizes[1]) return nullptr;
  return layer;
}

// Folds `bn` into `layer`: weight W·s (s per output channel), bias
// (b − mean)·s + β, with s = γ / √(var + ε).
void fold_into(Graph& g, Node& layer, const Node& bn) {
  const Value* wv = layer.inputs[1];
  const Tensor& w = g.held(*wv);
  const int64_t channels = wv->sizes[0];
  const double eps = internal::attr_named(bn, "eps")->f;
  const Tensor mean = host64(g, bn.inputs[1]).reshape({channels});
  const Tensor var = host64(g, bn.inputs[2]).reshape({channels});
  const Tensor gamma = bn.inputs[3] ? host64(g, bn.inputs[3]).reshape({channels}) : loom::ones({channels}, DType::Float64);
  const Tensor beta = bn.inputs[4] ? host64(g, bn.inputs[4]).reshape({channels}) : loom::zeros({channels}, DType::Float64);
  const Tensor bias = layer.inputs[2] ? host64(g, layer.inputs[2]).reshape({channels})
                                      : loom::zeros({channels}, DType::Float64);
  const Tensor s = gamma / (var + eps).sqrt();
  std::vector<int64_t> per_channel(wv->sizes.size(), 1);
  per_channel[0] = channels;
  const Tensor folded_w = (w.cpu().to(DType::Float64) * s.reshape(per_channel)).to(w.dtype()).to(w.device());
  const Tensor folded_b = ((bias - mean) * s + beta).to(w.dtype()).to(w.device());
  layer.inputs[1] = g.add_constant(folded_w);
  layer.inputs[2] = g.add_constant(folded_b);
}

}  // namespace

size_t freeze_parameters(Graph& g) {
  const std::vector<bool> written = internal::written_values(g);
  for (const auto& n : g.nodes())
    if (n->op->name() == "batch_norm" && bn_training(*n))
      throw Error(ErrorKind::InvalidArgument,
                  "jit::freeze: the graph has a batch_norm in training mode (node %" + n->outputs[0]->name +
                      "), which updates its running statistics; trace the model in eval mode (model.eval()) "
                      "before freezing it");
  size_t frozen = 0;
  for (Value* v : g.inputs()) {
    if (v->kind != InputKind::Parameter || written[v->index]) continue;
    v->kind = InputKind::Constant;
    // Detached: a frozen graph is for inference; autograd stops at it.
    Tensor& t = g.tensors().at(v->name);
    t = t.detach();
    ++frozen;
  }
  return frozen;
}

size_t fold_batch_norm(Graph& g) {
  const std::vector<size_t> uses = g.use_counts();
  const std::vector<bool> written = internal::written_values(g);
  std::set<const Node*> folded;
  std::vector<std::pair<Node*, const Node*>> pairs;
  for (const auto& n : g.nodes())
    if (Node* layer = foldable_layer(*n, uses, written)) pairs.emplace_back(layer, n.get());
  for (auto& [layer, bn] : pairs) {
    fold_into(g, *layer, *bn);
    g.replace_uses(bn->outputs[0], layer->outputs[0]);
    folded.insert(bn);
  }
  g.remove_nodes([&](const Node& n) { return folded.count(&n) > 0; });
  g.remove_unused_constants();
  if (!folded.empty()) g.validate();
  return folded.size();
}

size_t freeze(Graph& g) {
  size_t changed = freeze_parameters(g);
  changed += fold_batch_norm(g);
  changed += optimize(g);
  return changed;
}

}  // namespace loom::jit
