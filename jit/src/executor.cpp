// executor.cpp — running a graph node by node through the dispatcher
// (loom/jit/jit.h).
#include <loom/jit/jit.h>

#include <loom/error.h>
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
    auto it = graph.tensors().find(v->name);
    LOOM_CHECK(it != graph.tensors().end(), "jit::run: the graph holds no tensor for its ",
               v->kind == InputKind::Parameter ? "parameter" : "constant", " %", v->name);
    env[v->index] = it->second;
  }
  for (const auto& np : graph.nodes()) {
    const Node& n = *np;
    OpCall call(*n.op);
    detail::SmallVector<const Tensor*, 4> args;
    for (const Value* in : n.inputs) args.push_back(in ? &env[in->index] : nullptr);
    internal::run_node(n, args.data(), call);
    for (size_t i = 0; i < n.outputs.size(); ++i) env[n.outputs[i]->index] = std::move(call.outputs[i].result);
  }
  std::vector<Tensor> out;
  out.reserve(graph.outputs().size());
  for (const Value* v : graph.outputs()) out.push_back(env[v->index]);
  return out;
}

}  // namespace loom::jit
