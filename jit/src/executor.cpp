// executor.cpp — running a graph node by node through the dispatcher
// (loom/jit/jit.h).
#include <loom/jit/jit.h>

#include <loom/error.h>
#include <loom/autograd.h>
#include <loom/op_call.h>

#include "run_node.h"


namespace loom::jit {
namespace {

using detail::cat;

std::string type_of(DType dtype, IntArrayRef sizes, Device device) {
  std::string shape = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    shape.append(i ? ", " : "").append(sizes[i] < 0 ? std::string("?") : std::to_string(sizes[i]));
  return cat(name(dtype), shape, "] on ", device.str());
}

void check_input(const Value& v, const Tensor& t, size_t index) {
  LOOM_CHECK(t.defined(), "jit::run: input ", index, " (%", v.name, ") is an undefined tensor");
  // A `?` first dimension takes any size.
  const bool dynamic = !v.sizes.empty() && v.sizes[0] < 0;
  const bool same = t.dtype() == v.dtype && t.device() == v.device &&
                    static_cast<size_t>(t.dim()) == v.sizes.size() &&
                    std::equal(t.sizes().begin() + (dynamic ? 1 : 0), t.sizes().end(), v.sizes.begin() + (dynamic ? 1 : 0));
  LOOM_CHECK(same, "jit::run: input ", index, " (%", v.name, ") is ", type_of(t.dtype(), t.sizes(), t.device()),
             " but the graph was traced with ", type_of(v.dtype, v.sizes, v.device));
}

// The op to run `n` with: its in-place form when input 0 dies here and
// nothing else can see its memory (an intermediate this run made, held only
// by its slot: no view, no other name, no autograd record), and the result
// has input 0's type — so the result lands in the dying input's buffer, not
// a new one. Otherwise its own op.
const OpDef* in_place_if_input_dies(const Node& n, size_t i, const std::vector<size_t>& last_use,
                                    const std::vector<Tensor>& env, bool grad) {
  const OpDef* inplace = n.op->inplace_form();
  if (!inplace || n.inputs.empty() || n.outputs.size() != 1) return n.op;
  const Value* x = n.inputs[0];
  if (!x || !x->producer || last_use[x->index] != i) return n.op;
  for (size_t k = 1; k < n.inputs.size(); ++k)
    if (n.inputs[k] == x) return n.op;
  const Value& out = *n.outputs[0];
  if (out.dtype != x->dtype || out.sizes != x->sizes || out.device != x->device) return n.op;
  const Tensor& t = env[x->index];
  if (!t.defined() || (grad && t.requires_grad())) return n.op;
  if (t.impl()->use_count() != 1 || t.storage()->use_count() != 1) return n.op;
  return inplace;
}

}  // namespace

std::vector<Tensor> run(const Graph& graph, const std::vector<Tensor>& inputs) {
  // One slot per value (Value::index): no hashing, one allocation per run.
  std::vector<Tensor> env(graph.num_values());
  size_t next = 0, wanted = 0;
  for (const Value* v : graph.inputs()) wanted += v->kind == InputKind::Input;
  LOOM_CHECK(inputs.size() == wanted, "jit::run: the graph takes ", wanted, " input(s), got ", inputs.size());
  for (const Value* v : graph.inputs()) {
    if (v->kind == InputKind::Input) {
      check_input(*v, inputs[next], next);
      env[v->index] = inputs[next++];
      continue;
    }
    env[v->index] = graph.held(*v);
  }
  // Each value's last reader: its slot is released right after it, so a
  // run holds no more intermediates than eager code would (graph outputs,
  // inputs and the graph's tensors stay).
  constexpr size_t kKept = ~size_t{0};
  std::vector<size_t> last_use(graph.num_values(), 0);
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* in : nodes[i]->inputs)
      if (in) last_use[in->index] = i;
  for (const Value* v : graph.outputs()) last_use[v->index] = kKept;
  for (const Value* v : graph.inputs()) last_use[v->index] = kKept;
  const bool grad = autograd::GradMode::is_enabled();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    {
      OpCall call(*in_place_if_input_dies(n, i, last_use, env, grad));
      detail::SmallVector<const Tensor*, 4> args;
      for (const Value* in : n.inputs) args.push_back(in ? &env[in->index] : nullptr);
      internal::run_node(n, args.data(), call);
      for (size_t k = 0; k < n.outputs.size(); ++k) env[n.outputs[k]->index] = std::move(call.outputs[k].result);
    }
    for (const Value* in : n.inputs)
      if (in && last_use[in->index] == i) env[in->index] = Tensor();
  }
  std::vector<Tensor> out;
  out.reserve(graph.outputs().size());
  for (const Value* v : graph.outputs()) out.push_back(env[v->index]);
  return out;
}

}  // namespace loom::jit
