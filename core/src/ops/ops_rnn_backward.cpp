// ops_rnn_backward.cpp — _rnn's derivative: the op
//
//   _rnn_backward(Tensor grad_output, Tensor? grad_hy, Tensor? grad_cy, Tensor input, Tensor hx,
//                 Tensor? cx, Tensor[] params, <_rnn's other arguments>)
//     -> (Tensor grad_input, Tensor grad_hx, Tensor grad_cx, Tensor grad_params)
//
// (grad_params: every parameter's gradient flattened and concatenated, in
// params' order; grad_cx is [0] but for LSTM), which a device may fuse (its
// kernel recomputes what its forward kept, so _rnn needs to save nothing but
// its inputs). The composite recomputes the forward through loom ops with
// autograd on and asks the engine for the gradients; run under create_graph
// it differentiates the original tensors, so double backward works.
#include "autograd/formula.h"
#include "core_op.h"
#include "rnn.h"

#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/ops.h>

namespace loom {

const OpDef& rnn_op();

namespace {

using namespace detail::rnn;

constexpr size_t kFirstParam = 6;  // grad_output, grad_hy, grad_cy, input, hx, cx

std::vector<const Tensor*> params_of(const OpCall& call) {
  return {call.args.begin() + static_cast<std::ptrdiff_t>(kFirstParam), call.args.end()};
}

const Tensor* given(const Tensor* t) { return t && t->defined() ? t : nullptr; }

void prepare_rnn_backward(OpCall& call) {
  const std::string& op = call.op->name();
  const Config c = parse(op, call.values.data(), call.arg(3), call.arg(4), call.args[5], params_of(call));
  const DimVector state{c.layers * c.directions(), c.batch, c.hidden};
  LOOM_CHECK(call.arg(0).sizes() == IntArrayRef(output_shape(c)), op, ": grad_output has shape ",
             shape_str(call.arg(0).sizes()), ", the output's is ", shape_str(output_shape(c)));
  if (const Tensor* g = given(call.args[1]))
    LOOM_CHECK(g->sizes() == IntArrayRef(state), op, ": grad_hy has shape ", shape_str(g->sizes()), ", expected ",
               shape_str(state));
  if (const Tensor* g = given(call.args[2]))
    LOOM_CHECK(c.mode != Mode::LSTM || g->sizes() == IntArrayRef(state), op, ": grad_cy has shape ",
               shape_str(g->sizes()), ", expected ", shape_str(state));
  for (const Tensor* t : call.args) call.inputs.emplace_back().tensor = given(t) ? t->impl() : nullptr;
  const DType dt = call.arg(3).dtype();
  call.compute_dtype = dt;
  int64_t total = 0;
  for (const Tensor* p : params_of(call)) total += p->numel();
  call.outputs.push_back({dt, DimVector(call.arg(3).sizes()), {}, {}});
  call.outputs.push_back({dt, state, {}, {}});
  call.outputs.push_back({dt, c.mode == Mode::LSTM ? state : DimVector{0}, {}, {}});
  call.outputs.push_back({dt, DimVector{total}, {}, {}});
}

// A tensor the recomputed forward differentiates: the original itself under
// create_graph when it requires grad (so the result stays connected to it),
// else a detached copy that requires grad.
Tensor differentiable(const Tensor& t) {
  if (autograd::GradMode::is_enabled() && t.requires_grad()) return t;
  return t.detach().requires_grad_();
}

void rnn_backward_composite(OpCall& call) {
  const Config c = parse(call.op->name(), call.values.data(), call.arg(3), call.arg(4), call.args[5],
                         params_of(call));
  const bool lstm = c.mode == Mode::LSTM;
  const bool create_graph = autograd::GradMode::is_enabled();
  std::vector<Tensor> inputs{differentiable(call.arg(3)), differentiable(call.arg(4))};
  if (lstm) inputs.push_back(differentiable(*call.args[5]));
  std::vector<Tensor> params;
  for (const Tensor* p : params_of(call)) params.push_back(differentiable(*p));
  inputs.insert(inputs.end(), params.begin(), params.end());

  std::vector<Tensor> outs, grads_out;
  {
    autograd::EnableGradGuard recording;
    auto [output, hy, cy] = forward(c, inputs[0], inputs[1], lstm ? inputs[2] : Tensor(), params);
    outs = {output};
    grads_out = {call.arg(0)};
    if (const Tensor* g = given(call.args[1])) {
      outs.push_back(hy);
      grads_out.push_back(*g);
    }
    if (const Tensor* g = given(call.args[2]); g && lstm) {
      outs.push_back(cy);
      grads_out.push_back(*g);
    }
  }
  // Under create_graph the gradients stay functions of the recomputed graph, which must outlive this call.
  std::vector<Tensor> g = autograd::grad(outs, inputs, grads_out, create_graph, create_graph, /*allow_unused=*/true);
  auto or_zeros = [](Tensor grad, const Tensor& like) { return grad.defined() ? grad : zeros_like(like); };
  call.outputs[0].result = or_zeros(g[0], inputs[0]);
  call.outputs[1].result = or_zeros(g[1], inputs[1]);
  call.outputs[2].result = lstm ? or_zeros(g[2], inputs[2]) : empty({0}, call.arg(3).dtype(), call.arg(3).device());
  std::vector<Tensor> flat;
  for (size_t i = 0; i < params.size(); ++i)
    flat.push_back(or_zeros(g[i + (lstm ? 3 : 2)], params[i]).reshape({-1}));
  call.outputs[3].result = flat.empty() ? empty({0}, call.arg(3).dtype(), call.arg(3).device()) : cat(flat, 0);
}

LOOM_CORE_OP(rnn_backward_op,
             "_rnn_backward(Tensor grad_output, Tensor? grad_hy, Tensor? grad_cy, Tensor input, Tensor hx, Tensor? cx, "
             "Tensor[] params, str mode, bool has_biases, int num_layers, bool bidirectional, bool batch_first, "
             "int[]? batch_sizes=None) -> (Tensor grad_input, Tensor grad_hx, Tensor grad_cx, Tensor grad_params)",
             prepare_rnn_backward, rnn_backward_composite)

// _rnn's tensor arguments: input, hx, cx, then the parameters.
void rnn_derivative(autograd::BackwardContext& ctx) {
  const size_t n = ctx.num_inputs();
  std::vector<Tensor> saved;  // input, hx, cx (maybe undefined), params
  for (size_t i = 0; i < n; ++i) saved.push_back(i == 2 && !ctx.has_input(2) ? Tensor() : ctx.input(i));
  const Tensor grad_output = ctx.grad(0);
  const Tensor grad_hy = ctx.has_grad(1) ? ctx.grad(1) : Tensor();
  const Tensor grad_cy = ctx.has_grad(2) && saved[2].defined() ? ctx.grad(2) : Tensor();
  OpCall call(rnn_backward_op());
  for (const Tensor* t : {&grad_output, &grad_hy, &grad_cy}) call.args.push_back(t);
  for (const Tensor& t : saved) call.args.push_back(&t);
  for (size_t i = 0; i < 7; ++i) call.values.push_back(ctx.value(i));
  dispatch(call);
  if (ctx.needs_grad(0)) ctx.set(0, call.outputs[0].result);
  if (ctx.needs_grad(1)) ctx.set(1, call.outputs[1].result);
  if (saved[2].defined() && ctx.needs_grad(2)) ctx.set(2, call.outputs[2].result);
  const Tensor& flat = call.outputs[3].result;
  int64_t at = 0;
  for (size_t i = 3; i < n; ++i) {
    const int64_t k = saved[i].numel();
    if (ctx.needs_grad(i)) ctx.set(i, flat.narrow(0, at, k).view(saved[i].sizes()));
    at += k;
  }
}

LOOM_DERIVATIVE(rnn_op, "RnnBackward0", autograd::kAllInputs, autograd::none(), rnn_derivative)

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> _rnn_backward(
    const Tensor& grad_output, const Tensor& grad_hy, const Tensor& grad_cy, const Tensor& input, const Tensor& hx,
    const Tensor& cx, const std::vector<Tensor>& params, const std::string& mode, bool has_biases, int64_t num_layers,
    bool bidirectional, bool batch_first, std::optional<IntArrayRef> batch_sizes) {
  OpCall call(rnn_backward_op());
  for (const Tensor* t : {&grad_output, &grad_hy, &grad_cy, &input, &hx, &cx}) call.args.push_back(t);
  for (const Tensor& p : params) call.args.push_back(&p);
  detail::rnn::push_values(call, params.size(), mode, has_biases, num_layers, bidirectional, batch_first, batch_sizes);
  dispatch(call);
  auto& o = call.outputs;
  return {std::move(o[0].result), std::move(o[1].result), std::move(o[2].result), std::move(o[3].result)};
}

}  // namespace loom
