// fused_region.cpp — the `_fused` op and its body (fused_region.h).
#include "fused_region.h"

#include "passes/effects.h"
#include "run_node.h"

#include <loom/autograd.h>
#include <loom/jit/jit.h>
#include <loom/jit/passes.h>
#include <loom/ops.h>
#include <loom/error.h>
#include <loom/op_call.h>

#include <functional>
#include <string_view>
#include <unordered_map>

namespace loom::jit::internal {
namespace {

using detail::cat;

bool carried(const Attr& a) {
  using K = Attr::Kind;
  return a.kind == K::None || a.kind == K::Bool || a.kind == K::Int || a.kind == K::Float || a.kind == K::String;
}

// The body as plugin_api.h's region (fusion::RegionBuilder inserts the
// casts each op's promotion makes).
std::unique_ptr<fusion::RegionBuilder> describe(const Graph& body) {
  auto b = std::make_unique<fusion::RegionBuilder>();
  std::vector<int32_t> instr_of(body.num_values(), -1);
  for (const Value* v : body.inputs())
    instr_of[v->index] = b->input(v->dtype, static_cast<int64_t>(v->sizes.size()), v->wrapped_number);
  for (const auto& np : body.nodes()) {
    const Node& n = *np;
    const int32_t code = fusion_code(n);
    LOOM_CHECK(code >= 0, "fused region: ", node_str(n), " cannot be part of a region");
    const Value& out = *n.outputs[0];
    int32_t r;
    if (code == LOOM_FUSED_CAST) {
      r = b->cast(instr_of[n.inputs[0]->index], out.dtype);
    } else {
      std::vector<int32_t> args;
      for (const Value* in : n.inputs) args.push_back(instr_of[in->index]);
      std::vector<LoomValue> values;
      for (const Attr& a : n.attrs) values.push_back(a.as_value());
      r = b->add(*n.op, args, values);
    }
    LOOM_CHECK(b->dtype(r) == out.dtype, "fused region: ", node_str(n), " gives ", name(b->dtype(r)),
               " when run, not its recorded ", name(out.dtype));
    instr_of[out.index] = r;
  }
  for (const Value* v : body.outputs()) b->output(instr_of[v->index]);
  return b;
}

std::string_view body_text(const OpCall& call) {
  const LoomValue& v = call.values.back();
  LOOM_CHECK(v.kind == LOOM_VALUE_STRING, "_fused: the body must be a string");
  return {v.u.str.data, static_cast<size_t>(v.u.str.size)};
}

void prepare_fused(OpCall& call) {
  LOOM_CHECK(!call.args.empty(), "_fused: a region needs at least one input");
  auto body = fused_body(body_text(call));
  const Graph& g = body->graph();
  LOOM_CHECK(call.args.size() == g.inputs().size(), "_fused: the body takes ", g.inputs().size(),
             " input(s), the node gives ", call.args.size());
  DimVector shape;
  call.inputs.resize(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* t = call.args[i];
    LOOM_CHECK(t && t->defined(), "_fused: input ", i, " is undefined");
    LOOM_CHECK(t->dtype() == g.inputs()[i]->dtype, "_fused: input ", i, " is ", name(t->dtype()), ", the body reads ",
               name(g.inputs()[i]->dtype), " (%", g.inputs()[i]->name, ")");
    call.inputs[i].tensor = t->impl();
    shape = i ? broadcast_shapes("_fused", shape, t->sizes()) : DimVector(t->sizes());
  }
  auto& plan = call.outputs.emplace_back();
  plan.dtype = g.outputs()[0]->dtype;
  plan.sizes = shape;
  call.compute_dtype = plan.dtype;
}

// The device's compiled kernel, or the body op by op where the device
// declined. Where autograd records, the forward runs the same way unseen
// and the result gets the region's own derivative (FusedBody::backward).
void run_fused(OpCall& call) {
  auto body = fused_body(body_text(call));
  std::vector<const Tensor*> inputs(call.args.begin(), call.args.end());
  std::vector<bool> needs;
  bool grad = false;
  if (autograd::GradMode::is_enabled())
    for (const Tensor* t : inputs) {
      needs.push_back(t->requires_grad());
      grad = grad || t->requires_grad();
    }
  if (call.outputs.empty()) call.outputs.emplace_back();
  auto forward = [&] {
    if (auto kernel = body->kernel(call.device)) return std::move(kernel->run(inputs)[0]);
    return std::move(body->run_node_by_node(inputs)[0]);
  };
  if (!grad) {
    call.outputs[0].result = forward();
    return;
  }
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    out = forward();
  }
  // The inputs themselves (not detached): a create_graph backward
  // recomputes the body from them, so its gradient reaches them.
  std::vector<Tensor> args;
  for (const Tensor* t : inputs) args.push_back(*t);
  autograd::record_custom_function("FusedBackward", args, {out}, [body, args, needs](const std::vector<Tensor>& grads) {
    return body->backward(args, needs, grads[0]);
  });
  call.outputs[0].result = out;
}

}  // namespace

int32_t fusion_code(const Node& n) {
  if (!n.op || n.outputs.size() != 1 || !pure(n)) return -1;
  for (const Value* in : n.inputs)
    if (!in) return -1;
  if (n.op->name() == "_to_copy") {
    // A cast on the same device (the body's device arguments are None).
    const bool cast = n.attrs.size() == 2 && n.attrs[0].kind == Attr::Kind::DType &&
                      (n.attrs[1].kind == Attr::Kind::None ||
                       (n.attrs[1].kind == Attr::Kind::Device && n.attrs[1].device == n.inputs[0]->device));
    return cast ? LOOM_FUSED_CAST : -1;
  }
  for (const Attr& a : n.attrs)
    if (!carried(a)) return -1;
  if (!n.op->prepare()) return -1;
  return fusion::op_code(n.op->name());
}

FusedBody::FusedBody(Graph body) : body_(std::move(body)) {
  try {
    spec_ = describe(body_);
    region_ = &spec_->region(body_.str());
  } catch (const Error& e) {
    spec_error_ = e.what();
  }
}

std::vector<Tensor> FusedBody::run_node_by_node(const std::vector<const Tensor*>& inputs) const {
  std::vector<Tensor> env(body_.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) env[body_.inputs()[i]->index] = *inputs[i];
  for (const auto& np : body_.nodes()) {
    const Node& n = *np;
    OpCall call(*n.op);
    detail::SmallVector<const Tensor*, 4> args;
    for (const Value* in : n.inputs) args.push_back(&env[in->index]);
    run_node(n, args.data(), call);
    env[n.outputs[0]->index] = std::move(call.outputs[0].result);
  }
  std::vector<Tensor> out;
  for (const Value* v : body_.outputs()) out.push_back(env[v->index]);
  return out;
}

std::vector<Tensor> FusedBody::backward(const std::vector<Tensor>& inputs, const std::vector<bool>& needs,
                                        const Tensor& grad_output) {
  const size_t n = inputs.size();
  std::vector<Tensor> out(n);
  if (!grad_output.defined()) return out;
  // Under create_graph the backward must itself record: the body op by op
  // from the inputs themselves, differentiated with create_graph, so the
  // gradient is connected to them (double backward).
  if (autograd::GradMode::is_enabled()) {
    std::vector<const Tensor*> ptrs;
    std::vector<Tensor> wrt;
    std::vector<size_t> where;
    for (size_t i = 0; i < n; ++i) {
      ptrs.push_back(&inputs[i]);
      if (needs[i]) wrt.push_back(inputs[i]), where.push_back(i);
    }
    const Tensor y = run_node_by_node(ptrs)[0];
    auto g = autograd::grad({y}, wrt, {grad_output}, true, true, true);
    for (size_t k = 0; k < where.size(); ++k) out[where[k]] = g[k];
    return out;
  }
  std::string key;
  for (size_t i = 0; i < n; ++i)
    key += detail::cat(name(inputs[i].dtype()), shape_str(inputs[i].sizes()), inputs[i].device().str(),
                       inputs[i].impl()->is_wrapped_number() ? "w" : "", needs[i] ? "+" : "-", ";");
  key += detail::cat(name(grad_output.dtype()), shape_str(grad_output.sizes()));
  std::shared_ptr<const Graph> graph;
  {
    std::lock_guard lock(mutex_);
    if (auto it = backward_graphs_.find(key); it != backward_graphs_.end()) graph = it->second;
  }
  if (!graph) {
    // The forward recomputed from the inputs, then autograd's backward of
    // it, captured as one graph and optimised (fused).
    auto program = [&](const std::vector<Tensor>& in) {
      autograd::EnableGradGuard enable;
      std::vector<Tensor> leaves(in.begin(), in.end() - 1), wrt;
      for (size_t i = 0; i < n; ++i)
        if (needs[i]) leaves[i] = leaves[i].detach().requires_grad_(), wrt.push_back(leaves[i]);
      std::vector<const Tensor*> ptrs;
      for (const Tensor& t : leaves) ptrs.push_back(&t);
      const Tensor y = run_node_by_node(ptrs)[0];
      auto g = autograd::grad({y}, wrt, {in.back()}, false, false, true);
      for (size_t k = 0; k < g.size(); ++k)
        if (!g[k].defined()) g[k] = zeros_like(wrt[k]);
      return g;
    };
    std::vector<Tensor> examples(inputs);
    examples.push_back(grad_output);
    auto g = std::make_shared<Graph>(trace(program, examples));
    // This graph never records autograd (create_graph takes the path
    // above), so its detaches — autograd's handles on saved values — are
    // the values themselves; gone, they no longer split fused regions.
    for (const auto& node : g->nodes())
      if (node->op->name() == "detach") g->replace_uses(node->outputs[0], node->inputs[0]);
    optimize(*g);
    graph = g;
    std::lock_guard lock(mutex_);
    backward_graphs_.emplace(key, graph);
  }
  std::vector<Tensor> args(inputs);
  args.push_back(grad_output);
  std::vector<Tensor> g = run(*graph, args);
  size_t k = 0;
  for (size_t i = 0; i < n; ++i)
    if (needs[i]) out[i] = g[k++];
  return out;
}

std::shared_ptr<const fusion::Kernel> FusedBody::kernel(Device device) {
  std::lock_guard lock(mutex_);
  auto key = std::make_pair(static_cast<int>(device.type), static_cast<int>(device.index));
  auto it = compiled_.find(key);
  if (it == compiled_.end()) {
    fusion::Compiled c;
    if (region_) c = fusion::compile(device, *region_);
    else c.declined = spec_error_;
    it = compiled_.emplace(key, std::move(c)).first;
  }
  return it->second.kernel;
}

// Bodies by text; found by a string_view (the node's attribute), so a run
// copies no text to look its body up.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

std::shared_ptr<FusedBody> fused_body(std::string_view text) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<FusedBody>, TextHash, std::equal_to<>> bodies;
  {
    std::lock_guard lock(mutex);
    auto it = bodies.find(text);
    if (it != bodies.end()) return it->second;
  }
  Graph g = parse_graph(text, cpu_device());  // the body's devices do not matter: the node's inputs say
  LOOM_CHECK(g.outputs().size() == 1, "_fused: the body must return one value, it returns ", g.outputs().size());
  for (const auto& n : g.nodes())
    LOOM_CHECK(fusion_code(*n) >= 0, "_fused: the body's ", node_str(*n), " is not an elementwise op a region can hold");
  auto body = std::make_shared<FusedBody>(std::move(g));
  std::lock_guard lock(mutex);
  return bodies.emplace(std::string(text), std::move(body)).first->second;
}

const OpDef& fused_op() {
  static const OpDef& op = Dispatcher::instance().def("_fused(Tensor[] inputs, str body) -> Tensor",
                                                     "loom::jit (jit/src/fused_region.cpp)", &prepare_fused, &run_fused);
  return op;
}

[[maybe_unused]] static const OpDef& fused_op_registered_at_load = fused_op();

}  // namespace loom::jit::internal
