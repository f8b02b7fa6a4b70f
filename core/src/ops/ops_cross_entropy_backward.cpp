// ops_cross_entropy_backward.cpp — cross_entropy's input gradient as an op of
// its own, and cross_entropy's derivative written with it:
//
//   _cross_entropy_backward(grad_output, self, target, weight, reduction, ignore_index, label_smoothing)
//     the gradient w.r.t. self (self's shape and dtype), given the gradient
//     of the loss (the loss's shape: 0-d, or the target's for 'none').
//
// A device may run it natively (the CPU and CUDA plugins fuse it for
// class-index targets: one pass per row instead of the ~15 ops of the
// composite's graph). Its composite is written with loom ops (softmax,
// where, sums), so a device without a kernel runs that, and autograd
// differentiates through it (double backward): the op has no formula.
#include "autograd/formula.h"
#include "core_op.h"
#include "nn_loss.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

using namespace detail::loss;

void prepare_backward(OpCall& call) {
  check_cross_entropy_args(call, 1);
  const Tensor &g = call.arg(0), &input = call.arg(1);
  const std::string& op = call.op->name();
  const std::string_view reduction = str_of(call.values[0]);
  LOOM_CHECK(is_floating_point(g.dtype()), op, ": expected a floating point grad_output, got ", name(g.dtype()));
  const DimVector want = loss_shape(input, reduction);
  LOOM_CHECK(g.sizes() == IntArrayRef(want), op, ": expected grad_output of shape ", shape_str(want),
             " (the loss's for reduction='", reduction, "' and input of shape ", shape_str(input.sizes()),
             "), got ", shape_str(g.sizes()));
  set_input(call, 0, input.dtype(), g.sizes());
  set_cross_entropy_inputs(call, 1);
  auto& plan = call.outputs.emplace_back();
  plan.dtype = input.dtype();
  plan.sizes = DimVector(input.sizes());
  call.compute_dtype = input.dtype();
}

// The coefficient of sample i's gradient, broadcastable against the input:
// grad_output (one per sample for 'none', with the class dim re-inserted),
// divided for 'mean' by `mean_divisor`. In dtype dt.
Tensor sample_coefficient(const Tensor& grad_output, const Tensor& input, std::string_view reduction,
                          const Tensor& mean_divisor, DType dt) {
  Tensor g = grad_output.to(dt);
  if (reduction == "none") return g.unsqueeze(class_dim_of(input));
  if (reduction == "mean") g = g / mean_divisor;
  return g;
}

// The smoothed probability target q' = (1 - ls) q + ls / C, in dt.
Tensor smoothed_target(const Tensor& target, double ls, int64_t C, const Tensor& like) {
  const Tensor q = target.to(like.dtype());
  return ls > 0 ? q * num(1 - ls, like) + num(ls / static_cast<double>(C), like) : q;
}

// The gradient w.r.t. the input, p = softmax(input) over the class dim, w
// the class weights (1 without), g_i the sample coefficient:
//  class index t: g_i [(1 - ls) w_t (p - onehot_t) + ls/C (p Σ_c w_c - w)],
//                 0 for an ignored target; 'mean' divides by Σ_i w_{t_i};
//  probabilities: g_i [p Σ_c w_c q'_c - w q']; 'mean' divides by numel / C.
void backward_composite(OpCall& call) {
  const Tensor &input = call.arg(1), &target = call.arg(2);
  const Tensor* weight = call.args[3];
  const bool weighted = weight && weight->defined();
  const std::string_view reduction = str_of(call.values[0]);
  const int64_t ignore_index = call.values[1].u.i, cd = class_dim_of(input), C = input.size(cd);
  const double ls = call.values[2].u.f;
  const DType dt = stats_dtype(input.dtype());
  const Tensor p = softmax(input, cd, dt);
  const Tensor w = weighted ? weight->to(dt).reshape(class_shape(input)) : Tensor();
  Tensor r;
  if (is_prob_target(input, target)) {
    Tensor q = smoothed_target(target, ls, C, p);
    if (weighted) q = q * w;
    const Tensor g = sample_coefficient(call.arg(0), input, reduction, prob_mean_divisor(input, dt), dt);
    r = g * (p * sum(q, IntArrayRef{cd}, true) - q);
  } else {
    check_target_range(call.op->name(), target, C, ignore_index);
    const Tensor onehot = one_hot_mask(input, target);
    const Tensor wt = target_weights(input, target, onehot, weight, ignore_index, dt);
    const Tensor g = sample_coefficient(call.arg(0), input, reduction, sum(wt), dt);
    Tensor d = (p - onehot.to(dt)) * (wt.unsqueeze(cd) * num(1 - ls, p));
    if (ls > 0)
      d = d + (weighted ? (p * sum(w) - w) * num(ls / static_cast<double>(C), p)
                        : (p - num(1.0 / static_cast<double>(C), p)) * num(ls, p));
    // Ignored samples get exactly 0, also where 'mean' divided by a zero sum.
    r = where((target != Scalar(ignore_index)).unsqueeze(cd), g * d, Scalar(0.0));
  }
  call.result() = r.to(input.dtype());
}

LOOM_CORE_OP(cross_entropy_backward_op,
             "_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, "
             "str reduction='mean', int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
             prepare_backward, backward_composite)

// ---- cross_entropy's derivative -------------------------------------------------------
// self: through _cross_entropy_backward. A probability target gets its
// gradient, -g_i (1 - ls) w log p, and so does the weight then,
// -Σ_samples g_i q' log p (PyTorch computes that loss with differentiable
// ops). With class-index targets PyTorch refuses a weight that requires
// grad; so does this formula, when that gradient is asked for.

// Every dim of the input but the class dim.
DimVector sample_dims(const Tensor& input) {
  DimVector dims;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != class_dim_of(input)) dims.push_back(d);
  return dims;
}

void cross_entropy_derivative(autograd::BackwardContext& c) {
  const Tensor input = c.input(0), target = c.input(1);
  const Tensor weight = c.has_input(2) ? c.input(2) : Tensor();
  const std::string reduction(c.str(0));
  const int64_t ignore_index = c.int_arg(1);
  const double ls = c.float_arg(2);
  if (c.needs_grad(0))
    c.set(0, cross_entropy_backward(c.grad(), input, target, weight, ignore_index, reduction, ls));
  if (!c.needs_grad(1) && !c.needs_grad(2)) return;
  LOOM_CHECK(is_prob_target(input, target), "cross_entropy: the derivative for 'weight' is not implemented for "
             "class-index targets (PyTorch refuses a weight that requires grad there too); detach the weight");
  const DType dt = stats_dtype(input.dtype());
  const Tensor logp = log_softmax(input, class_dim_of(input), dt);
  const Tensor g = sample_coefficient(c.grad(), input, reduction, prob_mean_divisor(input, dt), dt);
  if (c.needs_grad(1)) {
    Tensor d = -(g * logp) * num(1 - ls, logp);
    if (weight.defined()) d = d * weight.to(dt).reshape(class_shape(input));
    c.set(1, d);
  }
  if (c.needs_grad(2)) {
    const Tensor d = -(g * smoothed_target(target, ls, input.size(class_dim_of(input)), logp) * logp);
    const DimVector dims = sample_dims(input);
    c.set(2, dims.empty() ? d : sum(d, IntArrayRef(dims)));
  }
}

LOOM_DERIVATIVE(cross_entropy_op, "CrossEntropyLossBackward0", autograd::inputs(0, 1, 2), autograd::none(),
                cross_entropy_derivative)
// PyTorch's cross_entropy is log_softmax then nll_loss: with class
// indices its loss's node is NllLossBackward0 (this one node also covers
// the log_softmax); with probabilities, it keeps this name.
LOOM_DERIVATIVE_NAME(cross_entropy_op, [](const OpCall& call) {
  return is_prob_target(call.arg(0), call.arg(1)) && call.arg(1).is_floating_point() ? "CrossEntropyLossBackward0"
                                                                                       : "NllLossBackward0";
})

}  // namespace

Tensor cross_entropy_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                              const Tensor& weight, int64_t ignore_index, const std::string& reduction,
                              double label_smoothing) {
  return detail::run_op(cross_entropy_backward_op(), {&grad_output, &input, &target, &weight},
                        {string_value(reduction), int_value(ignore_index), detail::float_value(label_smoothing)});
}

}  // namespace loom
