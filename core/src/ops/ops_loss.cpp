// ops_loss.cpp — the regression and binary classification losses (mse,
// l1, smooth_l1, huber, binary_cross_entropy[_with_logits]) as catalog ops:
// a composite forward of elementwise ops and a final mean/sum, so every
// device runs them, and a derivative formula of PyTorch's, so the gradient
// is PyTorch's at the edges too (binary_cross_entropy at inputs of exactly 0
// or 1: differentiating the composite's clamped logs gives 0 * inf = NaN
// there, PyTorch's formula clamps the denominator). Validation follows
// torch 1.13: the regression losses broadcast input and target, the binary
// cross entropies need equal shapes.
#include "autograd/formula.h"
#include "core_op.h"
#include "nn_loss.h"

#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/ops.h>

namespace loom {
namespace {

using detail::str_of;

enum class Reduction { None, Mean, Sum };

Reduction parse_reduction(const char* op, std::string_view r) {
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (r == "none") return Reduction::None;
  throw Error(detail::cat(op, ": '", r,
                          "' is not a valid value for reduction (expected 'none', 'mean' or 'sum')"));
}

// An empty mean is NaN and an empty sum 0, as PyTorch.
Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::Mean: return mean(loss);
    case Reduction::Sum: return sum(loss);
    case Reduction::None: break;
  }
  return loss;
}

// The gradient of the reduced loss as a factor of the elementwise one:
// g itself ('none', 'sum'), g / n ('mean' over n elements).
Tensor elementwise_grad(const autograd::BackwardContext& c, std::string_view reduction, int64_t n) {
  const Tensor g = c.grad();
  return reduction == "mean" ? g / static_cast<double>(n) : g;
}

// Checks that input and target broadcast; returns their promoted dtype.
DType regression_dtype(const char* op, const Tensor& input, const Tensor& target) {
  broadcast_shapes(op, input.sizes(), target.sizes());
  return result_type({&input, &target}, op);
}

void require_floating(const char* op, const Tensor& input, const Tensor& target, DType t) {
  LOOM_CHECK(is_floating_point(t), op, ": expected floating point input and target, got ",
             name(input.dtype()), " and ", name(target.dtype()));
}

// `w` cast to `dtype`, checked to broadcast to `shape` without growing it.
Tensor weight_like(const char* op, const char* arg, const Tensor& w, IntArrayRef shape,
                   DType dtype) {
  const DimVector b = broadcast_shapes(op, shape, w.sizes());
  LOOM_CHECK(IntArrayRef(b) == shape, op, ": '", arg, "' of shape ", shape_str(w.sizes()),
             " cannot be broadcast to the input shape ", shape_str(shape));
  return w.to(dtype);
}

// A C++ number as PyTorch wraps a Python float: a 0-d float64 wrapped
// number, so it never changes the result dtype but is not rounded to
// float32 first (operator*(Tensor, Scalar) stores doubles as float32).
Tensor num(double v, Device device) {
  Tensor t = full({}, v, DType::Float64, device);
  t.impl()->set_wrapped_number(true);
  return t;
}

void plan_loss(OpCall& call, DType dtype, IntArrayRef elementwise_shape, Reduction r) {
  auto& plan = call.outputs.emplace_back();
  plan.dtype = dtype;
  if (r == Reduction::None) plan.sizes = DimVector(elementwise_shape);
  call.compute_dtype = dtype;
}

// ------------------------------------------------ mse, l1, smooth_l1, huber ---
// values: reduction, then beta / delta for smooth_l1 / huber.

void prepare_regression(OpCall& call) {
  const char* op = call.op->name().c_str();
  const Tensor &input = call.arg(0), &target = call.arg(1);
  const Reduction r = parse_reduction(op, str_of(call.values[0]));
  const DType t = regression_dtype(op, input, target);
  const std::string_view name_view = call.op->name();
  if (name_view == "l1_loss") {
    LOOM_CHECK(t != DType::Bool, op, ": bool input and target are not supported");
    LOOM_CHECK(r != Reduction::Mean || is_floating_point(t), op,
               ": reduction 'mean' needs a floating point dtype, got ", name(t),
               " (use reduction 'sum' or 'none' for integers)");
  } else {
    require_floating(op, input, target, t);
  }
  if (name_view == "smooth_l1_loss")
    LOOM_CHECK(call.values[1].u.f >= 0, op, ": beta must be >= 0, got ", call.values[1].u.f);
  if (name_view == "huber_loss")
    LOOM_CHECK(call.values[1].u.f > 0, op, ": delta must be > 0, got ", call.values[1].u.f);
  plan_loss(call, t, broadcast_shapes(op, input.sizes(), target.sizes()), r);
}

Reduction reduction_of(const OpCall& call) { return parse_reduction(call.op->name().c_str(), str_of(call.values[0])); }

void mse_composite(OpCall& call) {
  call.result() = reduce(square(sub(call.arg(0), call.arg(1))), reduction_of(call));
}

void l1_composite(OpCall& call) {
  call.result() = reduce(abs(sub(call.arg(0), call.arg(1))), reduction_of(call));
}

void smooth_l1_composite(OpCall& call) {
  const double beta = call.values[1].u.f;
  const Tensor d = sub(call.arg(0), call.arg(1));
  const Tensor ad = abs(d);
  const Device dev = d.device();
  // PyTorch: beta = 0 is exactly l1_loss; else 0.5 d^2 / beta below beta,
  // |d| - beta / 2 above.
  call.result() = reduce(beta == 0 ? ad
                                   : where(lt(ad, num(beta, dev)), mul(square(d), num(0.5 / beta, dev)),
                                           sub(ad, num(0.5 * beta, dev))),
                         reduction_of(call));
}

void huber_composite(OpCall& call) {
  const double delta = call.values[1].u.f;
  const Tensor d = sub(call.arg(0), call.arg(1));
  const Tensor ad = abs(d);
  const Device dev = d.device();
  call.result() = reduce(where(lt(ad, num(delta, dev)), square(d) * 0.5,
                               mul(sub(ad, num(0.5 * delta, dev)), num(delta, dev))),
                         reduction_of(call));
}

LOOM_CORE_OP(mse_loss_op, "mse_loss(Tensor input, Tensor target, str reduction='mean') -> Tensor",
             prepare_regression, mse_composite)
LOOM_CORE_OP(l1_loss_op, "l1_loss(Tensor input, Tensor target, str reduction='mean') -> Tensor",
             prepare_regression, l1_composite)
LOOM_CORE_OP(smooth_l1_loss_op,
             "smooth_l1_loss(Tensor input, Tensor target, str reduction='mean', float beta=1.0) -> Tensor",
             prepare_regression, smooth_l1_composite)
LOOM_CORE_OP(huber_loss_op,
             "huber_loss(Tensor input, Tensor target, str reduction='mean', float delta=1.0) -> Tensor",
             prepare_regression, huber_composite)

// The derivative d loss / d input of a regression loss as a function of
// d = input - target; the target's is its negation.
template <Tensor (*dloss)(const Tensor& d, const autograd::BackwardContext& c)>
void regression_backward(autograd::BackwardContext& c) {
  const Tensor d = c.input(0) - c.input(1);
  const Tensor g = elementwise_grad(c, c.str(0), d.numel()) * dloss(d, c);
  if (c.needs_grad(0)) c.set(0, g);
  if (c.needs_grad(1)) c.set(1, neg(g));
}

Tensor mse_dloss(const Tensor& d, const autograd::BackwardContext&) { return d * 2.0; }
Tensor l1_dloss(const Tensor& d, const autograd::BackwardContext&) { return sign(d); }
// PyTorch's: d / beta inside (-beta, beta), sign(d) outside (and for beta 0).
Tensor smooth_l1_dloss(const Tensor& d, const autograd::BackwardContext& c) {
  const double beta = c.float_arg(1);
  if (beta == 0) return sign(d);
  return where(lt(abs(d), num(beta, d.device())), div(d, num(beta, d.device())), sign(d));
}
// d inside [-delta, delta], delta sign(d) outside.
Tensor huber_dloss(const Tensor& d, const autograd::BackwardContext& c) {
  const double delta = c.float_arg(1);
  return where(le(abs(d), num(delta, d.device())), d, mul(sign(d), num(delta, d.device())));
}

LOOM_DERIVATIVE(mse_loss_op, "MseLossBackward0", autograd::inputs(0, 1), autograd::none(),
                regression_backward<mse_dloss>)
LOOM_DERIVATIVE(l1_loss_op, "MeanBackward0", autograd::inputs(0, 1), autograd::none(),
                regression_backward<l1_dloss>)
// PyTorch's l1_loss is a composite: abs(input - target), then mean or sum.
LOOM_DERIVATIVE_NAME(l1_loss_op, [](const OpCall& call) {
  const std::string_view r = str_of(call.values[0]);
  return r == "none" ? "AbsBackward0" : r == "sum" ? "SumBackward0" : "MeanBackward0";
})
LOOM_DERIVATIVE(smooth_l1_loss_op, "SmoothL1LossBackward0", autograd::inputs(0, 1), autograd::none(),
                regression_backward<smooth_l1_dloss>)
LOOM_DERIVATIVE(huber_loss_op, "HuberLossBackward0", autograd::inputs(0, 1), autograd::none(),
                regression_backward<huber_dloss>)

// ------------------------------------------------------ binary_cross_entropy ---

void prepare_bce(OpCall& call) {
  const char* op = "binary_cross_entropy";
  const Tensor &input = call.arg(0), &target = call.arg(1);
  const Reduction r = parse_reduction(op, str_of(call.values[0]));
  LOOM_CHECK(input.sizes() == target.sizes(), op, ": target size ", shape_str(target.sizes()),
             " must be the same as input size ", shape_str(input.sizes()));
  LOOM_CHECK(input.is_floating_point(), op, ": expected a floating point input, got ",
             name(input.dtype()));
  LOOM_CHECK(target.dtype() == input.dtype(), op, ": expected target of the input's dtype ",
             name(input.dtype()), ", got ", name(target.dtype()));
  if (call.args[2] && call.args[2]->defined())
    weight_like(op, "weight", *call.args[2], input.sizes(), input.dtype());
  plan_loss(call, input.dtype(), input.sizes(), r);
}

// PyTorch's CPU formula: (t - 1) max(log1p(-x), -100) - t max(log x, -100);
// the clamp keeps 0 * log(0) from becoming NaN.
Tensor bce_elementwise(const Tensor& input, const Tensor& target) {
  const Tensor log_x = clamp(log(input), -100.0);
  const Tensor log_1mx = clamp(log1p(neg(input)), -100.0);
  return sub(mul(target - 1.0, log_1mx), mul(target, log_x));
}

void bce_composite(OpCall& call) {
  const Tensor &input = call.arg(0), &target = call.arg(1);
  if (input.numel() > 0) {
    // min/max propagate NaN, so a NaN input fails the check too.
    const double lo = min(input).item<double>(), hi = max(input).item<double>();
    LOOM_CHECK(lo >= 0 && hi <= 1, "binary_cross_entropy: all elements of input should be between 0 and 1, "
               "got values in [", lo, ", ", hi, "]");
  }
  Tensor loss = bce_elementwise(input, target);
  if (call.args[2] && call.args[2]->defined()) loss = mul(loss, call.args[2]->to(input.dtype()));
  call.result() = reduce(loss, reduction_of(call));
}

LOOM_CORE_OP(binary_cross_entropy_op,
             "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, str reduction='mean') -> Tensor",
             prepare_bce, bce_composite)

// PyTorch's: d/dx = (x - t) / max(x (1 - x), 1e-12), finite at x = 0 and 1;
// d/dt = log(1 - x) - log(x) = -logit(x), unclamped (+-inf at 0 and 1).
LOOM_DERIVATIVE_IN_FLOAT(binary_cross_entropy_op, "BinaryCrossEntropyBackward0", autograd::inputs(0, 1, 2),
                         autograd::none(), [](autograd::BackwardContext& c) {
                           const Tensor x = c.input(0), t = c.input(1);
                           Tensor g = elementwise_grad(c, c.str(0), x.numel());
                           const bool weighted = c.has_input(2);
                           if (weighted) {
                             if (c.needs_grad(2)) c.set(2, g * bce_elementwise(x, t));
                             g = g * c.input(2).to(x.dtype());
                           }
                           if (c.needs_grad(0))
                             c.set(0, g * (x - t) / clamp(x * (1.0 - x), 1e-12));
                           if (c.needs_grad(1)) c.set(1, g * (log1p(neg(x)) - log(x)));
                         })

// ------------------------------------------ binary_cross_entropy_with_logits ---

void prepare_bce_logits(OpCall& call) {
  const char* op = "binary_cross_entropy_with_logits";
  const Tensor &input = call.arg(0), &target = call.arg(1);
  const Reduction r = parse_reduction(op, str_of(call.values[0]));
  LOOM_CHECK(input.sizes() == target.sizes(), op, ": target size ", shape_str(target.sizes()),
             " must be the same as input size ", shape_str(input.sizes()));
  LOOM_CHECK(input.is_floating_point() && target.is_floating_point(), op,
             ": expected floating point input and target, got ", name(input.dtype()), " and ",
             name(target.dtype()));
  const DType t = result_type({&input, &target}, op);
  if (call.args[2] && call.args[2]->defined()) weight_like(op, "weight", *call.args[2], input.sizes(), t);
  if (call.args[3] && call.args[3]->defined()) weight_like(op, "pos_weight", *call.args[3], input.sizes(), t);
  plan_loss(call, t, input.sizes(), r);
}

// (1 - t) x + l softplus(-x), l = 1 + (pos_weight - 1) t: log(1 + e^-x)
// as softplus never overflows.
Tensor bce_logits_elementwise(const Tensor& x, const Tensor& y, const Tensor* pos_weight) {
  const Tensor sp = softplus(neg(x));
  if (!pos_weight) return add(mul(1.0 - y, x), sp);
  return add(mul(1.0 - y, x), mul(mul(*pos_weight - 1.0, y) + 1.0, sp));
}

const Tensor* given(const Tensor* t) { return t && t->defined() ? t : nullptr; }

void bce_logits_composite(OpCall& call) {
  const DType t = call.outputs[0].dtype;
  const Tensor x = call.arg(0).to(t), y = call.arg(1).to(t);
  Tensor pw;
  if (given(call.args[3])) pw = call.args[3]->to(t);
  Tensor loss = bce_logits_elementwise(x, y, pw.defined() ? &pw : nullptr);
  if (given(call.args[2])) loss = mul(loss, call.args[2]->to(t));
  call.result() = reduce(loss, reduction_of(call));
}

LOOM_CORE_OP(binary_cross_entropy_with_logits_op,
             "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, "
             "Tensor? pos_weight=None, str reduction='mean') -> Tensor",
             prepare_bce_logits, bce_logits_composite)

// d/dx = l sigmoid(x) - pos_weight t (sigmoid(x) - t without pos_weight);
// d/dt = -x + (pos_weight - 1) softplus(-x); d/dpos_weight = t softplus(-x).
LOOM_DERIVATIVE_IN_FLOAT(binary_cross_entropy_with_logits_op, "BinaryCrossEntropyWithLogitsBackward0",
                         autograd::inputs(0, 1, 2, 3), autograd::none(), [](autograd::BackwardContext& c) {
                           const Tensor x = c.input(0), t = c.input(1).to(x.dtype());
                           const bool has_pw = c.has_input(3);
                           const Tensor pw = has_pw ? c.input(3).to(x.dtype()) : Tensor();
                           Tensor g = elementwise_grad(c, c.str(0), x.numel());
                           if (c.has_input(2)) {
                             if (c.needs_grad(2))
                               c.set(2, g * bce_logits_elementwise(x, t, has_pw ? &pw : nullptr));
                             g = g * c.input(2).to(x.dtype());
                           }
                           const Tensor s = sigmoid(x);
                           if (c.needs_grad(0)) {
                             if (!has_pw) c.set(0, g * (s - t));
                             else c.set(0, g * ((mul(pw - 1.0, t) + 1.0) * s - pw * t));
                           }
                           if (c.needs_grad(1)) {
                             if (!has_pw) c.set(1, g * neg(x));
                             else c.set(1, g * (neg(x) + (pw - 1.0) * softplus(neg(x))));
                           }
                           if (has_pw && c.needs_grad(3)) c.set(3, g * t * softplus(neg(x)));
                         })

}  // namespace

std::string reduction_name(int64_t reduction) {
  switch (reduction) {
    case Reduction::None: return "none";
    case Reduction::Mean: return "mean";
    case Reduction::Sum: return "sum";
  }
  throw Error(loom::detail::cat("reduction code ", reduction, " is not one of Reduction::None (0), Mean (1), Sum (2)"));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  return detail::run_op(mse_loss_op(), {&input, &target}, {detail::string_value(reduction)});
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  return detail::run_op(l1_loss_op(), {&input, &target}, {detail::string_value(reduction)});
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction, double beta) {
  return detail::run_op(smooth_l1_loss_op(), {&input, &target},
                        {detail::string_value(reduction), detail::float_value(beta)});
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const std::string& reduction, double delta) {
  return detail::run_op(huber_loss_op(), {&input, &target},
                        {detail::string_value(reduction), detail::float_value(delta)});
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            const std::string& reduction) {
  return detail::run_op(binary_cross_entropy_op(), {&input, &target, &weight},
                        {detail::string_value(reduction)});
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, const std::string& reduction) {
  return detail::run_op(binary_cross_entropy_with_logits_op(), {&input, &target, &weight, &pos_weight},
                        {detail::string_value(reduction)});
}

}  // namespace loom
