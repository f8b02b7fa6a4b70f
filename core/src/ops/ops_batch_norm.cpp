// ops_batch_norm.cpp — batch_norm and its gradient op:
//
//   batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
//   _batch_norm_backward(grad_output, input, weight, running_mean, running_var, training, eps)
//     -> (grad_input, grad_weight, grad_bias)
//
// Both are composites any device runs; a device may implement either
// natively (the CUDA plugin through cuDNN). batch_norm's derivative calls
// the gradient op, as conv2d's calls _conv2d_backward_*; the gradient op
// has no formula of its own, so double backward differentiates its
// composite. The composites compute float16/bfloat16 in float32.
//
// A kernel sees every tensor argument as given (own dtype, shape and
// strides; running statistics may have any floating dtype). batch_norm's
// kernel writes the running statistics in place in training mode (the
// schema cannot say so: an annotated argument would make the op in-place
// for autograd), so prepare bumps their version for it.
#include "core_op.h"
#include "nn_norm_util.h"

#include <algorithm>
#include <tuple>

namespace loom {
namespace {

using namespace detail::norm;

// Every tensor argument reaches the kernel as it is.
void set_own_inputs(OpCall& call) {
  call.inputs.resize(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* t = call.args[i];
    const bool given = t && t->defined();
    set_input(call, i, given ? t->dtype() : DType::Float32, given ? t->sizes() : IntArrayRef());
  }
}

// The checks both ops share. `x` is the input [N, C, *]; `rm`/`rv` the
// running statistics (required in evaluation mode, any floating dtype),
// `w` (and `b`) per-channel parameters of the input's dtype.
void check_batch_norm_args(const std::string& op, const Tensor& x, const Tensor* rm, const Tensor* rv,
                           const Tensor* w, const Tensor* b, bool training) {
  check_floating(op, x, "input");
  LOOM_CHECK(x.dim() >= 2, op, ": expected an input of at least 2 dims (N, C, *), got ", shape_str(x.sizes()));
  const int64_t C = x.size(1);
  const bool has_rm = rm && rm->defined(), has_rv = rv && rv->defined();
  if (!training) {
    LOOM_CHECK(has_rm, op, ": running_mean must be defined in evaluation mode");
    LOOM_CHECK(has_rv, op, ": running_var must be defined in evaluation mode");
  } else {
    LOOM_CHECK(x.numel() / std::max<int64_t>(C, 1) > 1 || C == 0, op,
               ": expected more than 1 value per channel when training, got input size ", shape_str(x.sizes()));
  }
  const std::pair<const Tensor*, const char*> stats[] = {{rm, "running_mean"}, {rv, "running_var"}};
  for (const auto& [p, what] : stats) {
    if (!p || !p->defined()) continue;
    check_floating(op, *p, what);
    LOOM_CHECK(p->numel() == C, op, ": ", what, " should contain ", C, " elements not ", p->numel());
  }
  check_param(op, w, "weight", x.dtype(), C);
  check_param(op, b, "bias", x.dtype(), C);
}

// ------------------------------------------------------------ batch_norm ---

void prepare_batch_norm(OpCall& call) {
  const bool training = call.values[0].u.i != 0;
  check_batch_norm_args(call.op->name(), call.arg(0), call.args[1], call.args[2], call.args[3], call.args[4],
                        training);
  set_own_inputs(call);
  plan_like_input(call);
  // A kernel writes the running statistics without the core seeing it:
  // tensors saved for backward before this call must read as modified.
  if (training)
    for (size_t i : {1, 2})
      if (call.args[i] && call.args[i]->defined()) call.args[i]->storage()->bump_version();
}

void batch_norm_composite(OpCall& call) {
  const Tensor& in = call.arg(0);
  const Tensor *rm = call.args[1], *rv = call.args[2];
  const bool training = call.values[0].u.i != 0;
  const double momentum = call.values[1].u.f, eps = call.values[2].u.f;
  const int64_t C = in.size(1);
  const DimVector pshape = channel_shape(in.dim(), C), dims = all_but_channels(in.dim());
  const DType sd = stats_dtype(in.dtype());
  const Tensor x = in.to(sd);
  Tensor m, v;
  if (training) {
    m = mean(x, IntArrayRef(dims), true);
    v = var(x, IntArrayRef(dims), Scalar(0), true);
    const double n = static_cast<double>(in.numel() / std::max<int64_t>(C, 1));
    // Running statistics blend in place, in their own dtype; the variance
    // they keep is the unbiased one (PyTorch's rule).
    if (rm && rm->defined()) {
      Tensor r = *rm;
      r.copy_(r * num(1 - momentum, r) + m.reshape(r.sizes()).to(r.dtype()) * num(momentum, r));
    }
    if (rv && rv->defined()) {
      Tensor r = *rv;
      r.copy_(r * num(1 - momentum, r) + v.reshape(r.sizes()).to(r.dtype()) * num(momentum * n / (n - 1), r));
    }
  } else {
    m = rm->to(sd).reshape(pshape);
    v = rv->to(sd).reshape(pshape);
  }
  call.result() = affine(normalize(x, m, v, eps), call.args[3], call.args[4], pshape).to(in.dtype());
}

LOOM_CORE_OP(batch_norm_op,
             "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, "
             "Tensor? bias=None, bool training=False, float momentum=0.1, float eps=1e-05) -> Tensor",
             prepare_batch_norm, batch_norm_composite)

// ------------------------------------------------------ _batch_norm_backward ---

void prepare_batch_norm_backward(OpCall& call) {
  const std::string& op = call.op->name();
  const Tensor& g = call.arg(0);
  const Tensor& x = call.arg(1);
  const bool training = call.values[0].u.i != 0;
  check_batch_norm_args(op, x, call.args[3], call.args[4], call.args[2], nullptr, training);
  LOOM_CHECK(g.sizes() == x.sizes() && g.dtype() == x.dtype(), op,
             ": expected grad_output of the input's size ", shape_str(x.sizes()), " and dtype ", name(x.dtype()),
             ", got ", shape_str(g.sizes()), " and ", name(g.dtype()));
  set_own_inputs(call);
  const int64_t C = x.size(1);
  plan_output(call, x.dtype(), x.sizes());
  plan_output(call, x.dtype(), {C});
  plan_output(call, x.dtype(), {C});
  call.compute_dtype = x.dtype();
}

// The math batch_norm's derivative had inline: with the batch's statistics
// in training (which depend on x), the running ones in evaluation mode.
void batch_norm_backward_composite(OpCall& call) {
  const Tensor& in = call.arg(1);
  const Tensor *w = call.args[2], *rm = call.args[3], *rv = call.args[4];
  const bool training = call.values[0].u.i != 0;
  const double eps = call.values[1].u.f;
  const DimVector dims = all_but_channels(in.dim()), pshape = channel_shape(in.dim(), in.size(1));
  const Tensor x = in.to(stats_dtype(in.dtype())), g = call.arg(0).to(x.dtype());
  Standardized s;
  if (training) {
    s = standardize(x, dims, eps);
  } else {
    const Tensor rstd = rsqrt(rv->to(x.dtype()).reshape(pshape) + num(eps, x));
    s = {(x - rm->to(x.dtype()).reshape(pshape)) * rstd, rstd};
  }
  const Tensor gxhat = w && w->defined() ? g * w->to(x.dtype()).reshape(pshape) : g;
  const Tensor gi = training ? standardize_backward(s, gxhat, dims) : gxhat * s.rstd;
  call.result(0) = gi.to(in.dtype());
  call.result(1) = sum(g * s.xhat, IntArrayRef(dims)).to(in.dtype());
  call.result(2) = sum(g, IntArrayRef(dims)).to(in.dtype());
}

LOOM_CORE_OP(batch_norm_backward_op,
             "_batch_norm_backward(Tensor grad_output, Tensor input, Tensor? weight, Tensor? running_mean, "
             "Tensor? running_var, bool training, float eps) -> (Tensor grad_input, Tensor grad_weight, "
             "Tensor grad_bias)",
             prepare_batch_norm_backward, batch_norm_backward_composite)

// The forward runs below autograd, so the running statistics' update
// records nothing. They get no gradient; in eval mode they are constants.
LOOM_DERIVATIVE(batch_norm_op, "NativeBatchNormBackward0", autograd::inputs(0, 1, 2, 3), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const bool training = c.bool_arg(0);
                  const Tensor in = c.input(0);
                  const Tensor w = c.has_input(3) ? c.input(3) : Tensor();
                  // Read only in eval mode: training updated them in place after they were saved.
                  const Tensor rm = training ? Tensor() : c.input(1), rv = training ? Tensor() : c.input(2);
                  const auto [gi, gw, gb] =
                      batch_norm_backward(c.grad().to(in.dtype()), in, w, rm, rv, training, c.float_arg(2));
                  if (c.needs_grad(0)) c.set(0, gi);
                  if (c.needs_grad(3)) c.set(3, gw);
                  if (c.needs_grad(4)) c.set(4, gb);
                })

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum, double eps) {
  return detail::run_op(batch_norm_op(), {&input, &running_mean, &running_var, &weight, &bias},
                        {detail::bool_value(training), detail::float_value(momentum), detail::float_value(eps)});
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       const Tensor& weight, const Tensor& running_mean,
                                                       const Tensor& running_var, bool training, double eps) {
  OpCall call(batch_norm_backward_op());
  for (const Tensor* t : {&grad_output, &input, &weight, &running_mean, &running_var}) call.args.push_back(t);
  call.values.push_back(detail::bool_value(training));
  call.values.push_back(detail::float_value(eps));
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result), std::move(call.outputs[2].result)};
}

}  // namespace loom
