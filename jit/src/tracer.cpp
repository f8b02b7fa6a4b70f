// tracer.cpp — recording a program's catalog ops into a Graph
// (loom/jit/jit.h), through the dispatcher's observer hook
// (loom/dispatch_observer.h).
#include <loom/jit/jit.h>

#include "dynamic_batch.h"

#include <loom/dispatch_observer.h>
#include <loom/error.h>
#include <loom/op_call.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace loom::jit {
namespace {

using detail::cat;

class Tracer final : public DispatchObserver {
 public:
  explicit Tracer(Graph& g) : g_(g) {}

  Value* add(const Tensor& t, const std::string& name, InputKind kind) {
    LOOM_CHECK(t.defined(), "jit::trace: ", kind == InputKind::Input ? "input" : "parameter", " '", name,
               "' is an undefined tensor");
    if (auto it = values_.find(t.impl()); it != values_.end()) return it->second;  // a tied parameter
    Value* v = g_.add_input(name, t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), t.device(),
                            kind);
    // Parameters stay the module's own tensors (requires_grad included), so
    // a graph run with grad on trains them; anything else is detached.
    if (kind == InputKind::Parameter) g_.tensors()[name] = t;
    remember(t, v);
    return v;
  }

  void after(const OpCall& call, std::span<const LoomValue> values) override {
    const OpDef& op = *call.op;
    std::vector<Value*> inputs;
    inputs.reserve(call.args.size());
    const std::string user = "loom::" + op.name();
    const int constants_before = constants_;
    for (const Tensor* t : call.args) inputs.push_back(t && t->defined() ? value_of(*t, user) : nullptr);
    // An in-place op on a tensor first seen here (a scalar's fresh 0-d
    // tensor being filled) that reads only constants: the constant was
    // captured with the op's result already in it, so the node would only
    // redo that.
    if (op.schema().is_inplace() && constants_ > constants_before && !inputs.empty() && inputs[0] &&
        inputs[0]->kind == InputKind::Constant && inputs[0]->name == std::string("c").append(std::to_string(constants_before)) &&
        std::all_of(inputs.begin(), inputs.end(), [](const Value* v) { return !v || (!v->producer && v->kind == InputKind::Constant); }))
      return;
    std::vector<Attr> attrs;
    size_t vi = 0;
    for (const Argument& a : op.schema().args) {
      if (a.type == ArgType::Tensor) continue;
      LOOM_CHECK(vi < values.size(), "jit::trace: ", op.name(), ": fewer values than the schema has");
      attrs.push_back(Attr::from_value(values[vi++], op.name(), a.name));
    }
    Node* n = g_.add_node(op, std::move(inputs), std::move(attrs));
    for (const OutputPlan& p : call.outputs) {
      const Tensor& r = p.result;
      Value* v = g_.add_output_value(*n, r.dtype(), std::vector<int64_t>(r.sizes().begin(), r.sizes().end()),
                                     r.device());
      remember(r, v);  // an in-place op's self now stands for this value
    }
  }

  // The value a tensor the program produced or read stands for.
  // `user` names who reads it, for the error: "loom::matmul", "output 0".
  Value* value_of(const Tensor& t, const std::string& user) {
    if (auto it = values_.find(t.impl()); it != values_.end()) {
      // A number's 0-d tensor is first seen being filled, before it is
      // marked a wrapped number.
      Value* v = it->second;
      if (!v->producer && v->kind == InputKind::Constant && t.impl()->is_wrapped_number() && !v->wrapped_number) {
        v->wrapped_number = true;
        g_.tensors()[v->name].impl()->set_wrapped_number(true);  // the graph's own (detached) handle
      }
      return v;
    }
    // An alias with the same view of a value's memory — what autograd saves
    // for its formulas (a detached handle of an input or a result) — is
    // that value (the latest one: an in-place write makes a new value of
    // the same memory).
    if (auto it = same_memory_.find(t.storage().get()); it != same_memory_.end())
      for (auto k = it->second.rbegin(); k != it->second.rend(); ++k) {
        const Tensor& known = k->first;
        if (known.dtype() == t.dtype() && known.sizes() == t.sizes() && known.strides() == t.strides() &&
            known.storage_offset() == t.storage_offset()) {
          values_[t.impl()] = k->second;
          alive_.push_back(t);
          return k->second;
        }
      }
    if (auto it = storages_.find(t.storage().get()); it != storages_.end())
      throw Error(ErrorKind::Unsupported,
                  cat("jit::trace: ", user, " reads a tensor that shares the memory of %", it->second->name,
                      " but was not made by the traced program's ops (a view made before the trace began, or by "
                      "code outside the catalog); make it inside the traced program, or pass it as an input"));
    // Anything else the program read: a constant the graph holds.
    const std::string name = std::string("c").append(std::to_string(constants_++));
    Value* v = g_.add_input(name, t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), t.device(),
                            InputKind::Constant);
    Tensor kept = t.detach();
    v->wrapped_number = t.impl()->is_wrapped_number();
    kept.impl()->set_wrapped_number(v->wrapped_number);  // held() then hands it out as is
    g_.tensors()[name] = std::move(kept);
    remember(t, v);
    return v;
  }

 private:
  void remember(const Tensor& t, Value* v) {
    values_[t.impl()] = v;
    storages_[t.storage().get()] = v;
    same_memory_[t.storage().get()].emplace_back(t, v);
    alive_.push_back(t);  // keeps the address from being reused by another tensor
  }

  Graph& g_;
  std::unordered_map<const TensorImpl*, Value*> values_;
  std::unordered_map<const StorageImpl*, Value*> storages_;
  std::unordered_map<const StorageImpl*, std::vector<std::pair<Tensor, Value*>>> same_memory_;
  std::vector<Tensor> alive_;
  int constants_ = 0;
};

}  // namespace

Graph trace(const Program& program, const std::vector<Tensor>& inputs,
            const std::vector<std::pair<std::string, Tensor>>& parameters, const TraceOptions& options) {
  Graph g;
  Tracer tracer(g);
  for (size_t i = 0; i < inputs.size(); ++i)
    tracer.add(inputs[i], i < options.input_names.size() ? options.input_names[i] : "input" + std::to_string(i),
               InputKind::Input);
  for (const auto& [name, t] : parameters) tracer.add(t, name, InputKind::Parameter);
  std::vector<Tensor> outputs;
  {
    ObserveDispatch observe(tracer);
    outputs = program(inputs);
  }
  LOOM_CHECK(!outputs.empty(), "jit::trace: the program returned no tensor");
  for (size_t i = 0; i < outputs.size(); ++i) {
    LOOM_CHECK(outputs[i].defined(), "jit::trace: output ", i, " is an undefined tensor");
    g.add_graph_output(tracer.value_of(outputs[i], "output " + std::to_string(i)));
  }
  if (options.dynamic_batch) {
    LOOM_CHECK(!inputs.empty() && inputs[0].dim() > 0,
               "jit::trace(dynamic_batch): the first input must have a batch dimension (dim 0)");
    internal::make_batch_dynamic(g, inputs[0].size(0));
  }
  g.validate();
  return g;
}

}  // namespace loom::jit
