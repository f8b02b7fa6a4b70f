// ops_nn_norm.cpp — layer_norm (a CPU kernel, and a composite for other
// devices), group_norm and batch_norm (composites). What the layer_norm
// kernel sees is docs/kernel_conventions.md, "Nn". The composites compute
// float16/bfloat16 inputs in float32 and cast the result back. Each has a
// fused derivative: the composites' own graphs would be several times
// larger, and batch_norm must not record its running-statistics update.
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>

namespace loom {
namespace {

// The dtype statistics are computed in: float32 for the 16-bit floats.
DType stats_dtype(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

void check_floating(const std::string& op, const Tensor& t, const char* what) {
  LOOM_CHECK(is_floating_point(t.dtype()), op, ": expected a floating point ", what, ", got ", name(t.dtype()));
}

// An optional per-channel (or per-feature) parameter: absent, or of the
// input's dtype with `n` elements.
void check_param(const std::string& op, const Tensor* p, const char* what, DType dtype, int64_t n) {
  if (!p || !p->defined()) return;
  LOOM_CHECK(p->dtype() == dtype, op, ": expected ", what, " of dtype ", name(dtype), " (the input's), got ",
             name(p->dtype()));
  LOOM_CHECK(p->numel() == n, op, ": ", what, " should contain ", n, " elements not ", p->numel(),
             " (shape ", shape_str(p->sizes()), ")");
}

// One output shaped and typed like the input (for the composites).
void plan_like_input(OpCall& call) {
  auto& plan = call.outputs.emplace_back();
  plan.dtype = call.arg(0).dtype();
  plan.sizes = DimVector(call.arg(0).sizes());
  call.compute_dtype = plan.dtype;
}

// y * weight + bias, each (when given) reshaped to `pshape`.
Tensor affine(Tensor y, const Tensor* weight, const Tensor* bias, IntArrayRef pshape) {
  if (weight && weight->defined()) y = y * weight->reshape(pshape);
  if (bias && bias->defined()) y = y + bias->reshape(pshape);
  return y;
}

// A number as a 0-d tensor of `like`'s dtype. (A loom Scalar becomes a
// float32 tensor, which would round eps or momentum for float64 inputs.)
Tensor num(double v, const Tensor& like) { return full({}, v, like.dtype(), like.device()); }

Tensor normalize(const Tensor& x, const Tensor& mean, const Tensor& var, double eps) {
  return (x - mean) * rsqrt(var + num(eps, var));
}

// ---- derivatives ----------------------------------------------------------------------
// Backward recomputes the statistics from the saved input (the ops have one
// output, so they cannot hand them over).

// x normalised over `dims` (biased variance): x̂ = (x - mean) · rstd.
struct Standardized {
  Tensor xhat, rstd;
};

Standardized standardize(const Tensor& x, IntArrayRef dims, double eps) {
  const Tensor m = mean(x, dims, true);
  const Tensor rstd = rsqrt(var(x, dims, Scalar(0), true) + num(eps, x));
  return {(x - m) * rstd, rstd};
}

// d/dx of x̂ given the gradient g of x̂ (the dims' statistics depend on x):
// rstd · (g - mean(g) - x̂ · mean(g x̂)).
Tensor standardize_backward(const Standardized& s, const Tensor& g, IntArrayRef dims) {
  return s.rstd * (g - mean(g, dims, true) - s.xhat * mean(g * s.xhat, dims, true));
}

// Every dim but the channels (1): the dims batch_norm reduces and its
// per-channel parameters' gradients sum over.
DimVector all_but_channels(int64_t ndim) {
  DimVector dims;
  for (int64_t d = 0; d < ndim; ++d)
    if (d != 1) dims.push_back(d);
  return dims;
}

// [1, C, 1, ...]: a per-channel parameter shaped to broadcast over the input.
DimVector channel_shape(int64_t ndim, int64_t C) {
  DimVector s(static_cast<size_t>(ndim), 1);
  s[1] = C;
  return s;
}

// The gradients of group_norm's and batch_norm's per-channel weight and bias.
void set_channel_affine_grads(autograd::BackwardContext& c, const Tensor& g, const Tensor& xhat,
                              size_t weight, size_t bias) {
  const DimVector dims = all_but_channels(g.dim());
  if (c.needs_grad(weight)) c.set(weight, sum(g * xhat, IntArrayRef(dims)));
  if (c.needs_grad(bias)) c.set(bias, sum(g, IntArrayRef(dims)));
}

// ------------------------------------------------------------ layer_norm ---

void prepare_layer_norm(OpCall& call) {
  const Tensor& x = call.arg(0);
  const std::string& op = call.op->name();
  check_floating(op, x, "input");
  const LoomValue& ns = call.values[0];
  const IntArrayRef shape(ns.u.ints.data, static_cast<size_t>(ns.u.ints.size));
  LOOM_CHECK(!shape.empty(), op, ": expected normalized_shape to have at least one element, got []");
  const int64_t k = static_cast<int64_t>(shape.size());
  bool match = x.dim() >= k;
  for (int64_t i = 0; match && i < k; ++i) match = x.size(x.dim() - k + i) == shape[i];
  LOOM_CHECK(match, op, ": given normalized_shape=", shape_str(shape), ", expected input with shape [*, ",
             shape_str(shape).substr(1), ", but got input of size ", shape_str(x.sizes()));
  for (int i = 1; i < 3; ++i) {
    const Tensor* p = call.args[i];
    if (!p || !p->defined()) continue;
    const char* what = i == 1 ? "weight" : "bias";
    LOOM_CHECK(p->sizes() == shape, op, ": expected ", what, " of shape normalized_shape=", shape_str(shape),
               ", got ", shape_str(p->sizes()));
    check_param(op, p, what, x.dtype(), p->numel());
  }
  call.inputs.resize(3);
  for (size_t i = 0; i < 3; ++i) {
    const Tensor* t = call.args[i];
    set_input(call, i, x.dtype(), t && t->defined() ? t->sizes() : IntArrayRef());
  }
  plan_like_input(call);
}

// The last k dims of an ndim-d tensor: those layer_norm normalises.
DimVector last_dims(int64_t ndim, int64_t k) {
  DimVector dims;
  for (int64_t d = ndim - k; d < ndim; ++d) dims.push_back(d);
  return dims;
}

void layer_norm_composite(OpCall& call) {
  const Tensor& in = call.arg(0);
  const int64_t k = call.values[0].u.ints.size;
  const DimVector dims = last_dims(in.dim(), k);
  const Tensor x = in.to(stats_dtype(in.dtype()));
  const Tensor m = mean(x, IntArrayRef(dims), true);
  const Tensor v = var(x, IntArrayRef(dims), Scalar(0), true);
  const IntArrayRef pshape(call.values[0].u.ints.data, static_cast<size_t>(k));
  call.result() = affine(normalize(x, m, v, call.values[1].u.f), call.args[1], call.args[2], pshape).to(in.dtype());
}

LOOM_CORE_OP(layer_norm_op,
             "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
             "float eps=1e-05) -> Tensor",
             prepare_layer_norm, layer_norm_composite)

LOOM_DERIVATIVE(layer_norm_op, "NativeLayerNormBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor in = c.input(0);
                  const DimVector dims = last_dims(in.dim(), static_cast<int64_t>(c.int_list(0).size()));
                  const Tensor x = in.to(stats_dtype(in.dtype())), g = c.grad().to(x.dtype());
                  const Standardized s = standardize(x, dims, c.float_arg(1));
                  if (c.needs_grad(0))
                    c.set(0, standardize_backward(s, c.has_input(1) ? g * c.input(1).to(x.dtype()) : g, dims));
                  // The node sums these over the leading dims, down to normalized_shape.
                  if (c.needs_grad(1)) c.set(1, g * s.xhat);
                  if (c.needs_grad(2)) c.set(2, g);
                })

// ------------------------------------------------------------ group_norm ---

void prepare_group_norm(OpCall& call) {
  const Tensor& x = call.arg(0);
  const std::string& op = call.op->name();
  check_floating(op, x, "input");
  LOOM_CHECK(x.dim() >= 2, op, ": expected an input of at least 2 dims (N, C, *), got ", shape_str(x.sizes()));
  const int64_t groups = call.values[0].u.i, C = x.size(1);
  LOOM_CHECK(groups > 0, op, ": num_groups must be positive, got ", groups);
  LOOM_CHECK(C % groups == 0, op,
             ": expected number of channels in input to be divisible by num_groups, but got input of shape ",
             shape_str(x.sizes()), " and num_groups=", groups);
  check_param(op, call.args[1], "weight", x.dtype(), C);
  check_param(op, call.args[2], "bias", x.dtype(), C);
  plan_like_input(call);
}

// t [N, C, *] as [N, groups, C / groups · *]: the groups statistics run over.
Tensor grouped(const Tensor& t, int64_t groups) {
  const int64_t N = t.size(0), C = t.size(1);
  return t.reshape({N, groups, N * C == 0 ? 0 : t.numel() / (N * groups)});
}

void group_norm_composite(OpCall& call) {
  const Tensor& in = call.arg(0);
  const Tensor x = grouped(in.to(stats_dtype(in.dtype())), call.values[0].u.i);
  const Tensor m = mean(x, IntArrayRef{2}, true);
  const Tensor v = var(x, IntArrayRef{2}, Scalar(0), true);
  const Tensor y = normalize(x, m, v, call.values[1].u.f).reshape(in.sizes());
  call.result() = affine(y, call.args[1], call.args[2], channel_shape(in.dim(), in.size(1))).to(in.dtype());
}

LOOM_CORE_OP(group_norm_op,
             "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
             "float eps=1e-05) -> Tensor",
             prepare_group_norm, group_norm_composite)

LOOM_DERIVATIVE(group_norm_op, "NativeGroupNormBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor in = c.input(0);
                  const int64_t groups = c.int_arg(0);
                  const Tensor x = in.to(stats_dtype(in.dtype())), g = c.grad().to(x.dtype());
                  const Standardized s = standardize(grouped(x, groups), IntArrayRef{2}, c.float_arg(1));
                  if (c.needs_grad(0)) {
                    const Tensor gxhat =
                        c.has_input(1) ? g * c.input(1).to(x.dtype()).reshape(channel_shape(in.dim(), in.size(1))) : g;
                    c.set(0, standardize_backward(s, grouped(gxhat, groups), IntArrayRef{2}).reshape(in.sizes()));
                  }
                  set_channel_affine_grads(c, g, s.xhat.reshape(in.sizes()), 1, 2);
                })

// ------------------------------------------------------------ batch_norm ---

void prepare_batch_norm(OpCall& call) {
  const Tensor& x = call.arg(0);
  const std::string& op = call.op->name();
  check_floating(op, x, "input");
  LOOM_CHECK(x.dim() >= 2, op, ": expected an input of at least 2 dims (N, C, *), got ", shape_str(x.sizes()));
  const int64_t C = x.size(1);
  const bool training = call.values[0].u.i != 0;
  const Tensor *rm = call.args[1], *rv = call.args[2];
  const bool has_rm = rm && rm->defined(), has_rv = rv && rv->defined();
  if (!training) {
    LOOM_CHECK(has_rm, op, ": running_mean must be defined in evaluation mode");
    LOOM_CHECK(has_rv, op, ": running_var must be defined in evaluation mode");
  } else {
    LOOM_CHECK(x.numel() / std::max<int64_t>(C, 1) > 1 || C == 0, op,
               ": expected more than 1 value per channel when training, got input size ", shape_str(x.sizes()));
  }
  const char* names[] = {"input", "running_mean", "running_var", "weight", "bias"};
  for (int i = 1; i < 5; ++i) {
    const Tensor* p = call.args[i];
    if (!p || !p->defined()) continue;
    check_floating(op, *p, names[i]);
    LOOM_CHECK(p->numel() == C, op, ": ", names[i], " should contain ", C, " elements not ", p->numel());
    if (i >= 3) check_param(op, p, names[i], x.dtype(), C);
  }
  plan_like_input(call);
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

// The forward runs below autograd, so the running statistics' update
// records nothing. They get no gradient; in eval mode they are constants.
LOOM_DERIVATIVE(batch_norm_op, "NativeBatchNormBackward0", autograd::inputs(0, 1, 2, 3), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor in = c.input(0);
                  const bool training = c.bool_arg(0);
                  const double eps = c.float_arg(2);
                  const DimVector dims = all_but_channels(in.dim()), pshape = channel_shape(in.dim(), in.size(1));
                  const Tensor x = in.to(stats_dtype(in.dtype())), g = c.grad().to(x.dtype());
                  Standardized s;
                  if (training) {
                    s = standardize(x, dims, eps);
                  } else {
                    // Read only in eval mode: training updated them in place after they were saved.
                    const Tensor rstd = rsqrt(c.input(2).to(x.dtype()).reshape(pshape) + num(eps, x));
                    s = {(x - c.input(1).to(x.dtype()).reshape(pshape)) * rstd, rstd};
                  }
                  if (c.needs_grad(0)) {
                    const Tensor gxhat = c.has_input(3) ? g * c.input(3).to(x.dtype()).reshape(pshape) : g;
                    c.set(0, training ? standardize_backward(s, gxhat, dims) : gxhat * s.rstd);
                  }
                  set_channel_affine_grads(c, g, s.xhat, 3, 4);
                })

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return detail::run_op(layer_norm_op(), {&input, &weight, &bias},
                        {detail::int_list_value(normalized_shape), detail::float_value(eps)});
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  LoomValue g{};
  g.kind = LOOM_VALUE_INT;
  g.u.i = num_groups;
  return detail::run_op(group_norm_op(), {&input, &weight, &bias}, {g, detail::float_value(eps)});
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum, double eps) {
  return detail::run_op(batch_norm_op(), {&input, &running_mean, &running_var, &weight, &bias},
                        {detail::bool_value(training), detail::float_value(momentum), detail::float_value(eps)});
}

}  // namespace loom
