// ops_nn_norm.cpp — layer_norm and rms_norm with their gradient ops
// _layer_norm_backward and _rms_norm_backward (CPU kernels, composites for
// other devices), and group_norm (a composite); batch_norm is in
// ops_batch_norm.cpp.
// What the layer_norm kernel sees is docs/kernel_conventions.md, "Nn". The
// composites compute float16/bfloat16 inputs in float32 and cast the result
// back. Each has a fused derivative: the composites' own graphs would be
// several times larger.
#include "core_op.h"
#include "nn_norm_util.h"

namespace loom {
namespace {

using namespace detail::norm;

// Backward recomputes the statistics from the saved input (the ops have one
// output, so they cannot hand them over).

// The gradients of group_norm's per-channel weight and bias.
void set_channel_affine_grads(autograd::BackwardContext& c, const Tensor& g, const Tensor& xhat,
                              size_t weight, size_t bias) {
  const DimVector dims = all_but_channels(g.dim());
  if (c.needs_grad(weight)) c.set(weight, sum(g * xhat, IntArrayRef(dims)));
  if (c.needs_grad(bias)) c.set(bias, sum(g, IntArrayRef(dims)));
}

// ------------------------------------------------------------ layer_norm ---

// normalized_shape (values[0]) against the input's trailing sizes, and
// the per-feature parameters args[1, 1 + params) (absent, or of that shape
// and the input's dtype). Returns normalized_shape.
IntArrayRef check_normalized(OpCall& call, const Tensor& x, size_t first_param, size_t params) {
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
  for (size_t i = first_param; i < first_param + params; ++i) {
    const Tensor* p = call.args[i];
    if (!p || !p->defined()) continue;
    const char* what = i == first_param ? "weight" : "bias";
    LOOM_CHECK(p->sizes() == shape, op, ": expected ", what, " of shape normalized_shape=", shape_str(shape),
               ", got ", shape_str(p->sizes()));
    check_param(op, p, what, x.dtype(), p->numel());
  }
  return shape;
}

// Every tensor argument in the input's dtype (absent ones stay absent).
void set_inputs_in(OpCall& call, DType dtype) {
  call.inputs.resize(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* t = call.args[i];
    set_input(call, i, dtype, t && t->defined() ? t->sizes() : IntArrayRef());
  }
}

void prepare_layer_norm(OpCall& call) {
  check_normalized(call, call.arg(0), 1, 2);
  set_inputs_in(call, call.arg(0).dtype());
  plan_like_input(call);
}

// rms_norm's eps (values[1]): None becomes the input dtype's machine
// epsilon (PyTorch's default), so a kernel always sees a FLOAT.
void resolve_rms_eps(OpCall& call, DType dtype) {
  if (call.values[1].kind == LOOM_VALUE_NONE) call.values[1] = detail::float_value(dtype_epsilon(dtype));
}

void prepare_rms_norm(OpCall& call) {
  check_normalized(call, call.arg(0), 1, 1);
  resolve_rms_eps(call, call.arg(0).dtype());
  set_inputs_in(call, call.arg(0).dtype());
  plan_like_input(call);
}

// The gradient ops: (grad_output, input, weight) with values
// (normalized_shape, eps); outputs grad_input like the input and `params`
// parameter gradients of normalized_shape, in the input's dtype.
void prepare_norm_backward(OpCall& call, size_t params) {
  const Tensor& g = call.arg(0);
  const Tensor& x = call.arg(1);
  const std::string& op = call.op->name();
  const IntArrayRef shape = check_normalized(call, x, 2, 1);
  LOOM_CHECK(g.sizes() == x.sizes() && g.dtype() == x.dtype(), op,
             ": expected grad_output of the input's size ", shape_str(x.sizes()), " and dtype ", name(x.dtype()),
             ", got ", shape_str(g.sizes()), " and ", name(g.dtype()));
  if (call.values[1].kind == LOOM_VALUE_NONE) resolve_rms_eps(call, x.dtype());
  set_inputs_in(call, x.dtype());
  plan_output(call, x.dtype(), x.sizes());
  for (size_t i = 0; i < params; ++i) plan_output(call, x.dtype(), shape);
  call.compute_dtype = x.dtype();
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

// x normalised over its last k dims: x̂ = (x - mean)·rstd for layer_norm,
// x·rstd with rstd = 1/√(mean(x²) + eps) for rms_norm (not centred).
Standardized normalized(const Tensor& x, int64_t k, double eps, bool centred) {
  const DimVector dims = last_dims(x.dim(), k);
  if (centred) return standardize(x, dims, eps);
  const Tensor rstd = rsqrt(mean(x * x, IntArrayRef(dims), true) + num(eps, x));
  return {x * rstd, rstd};
}

// The gradient ops' composite: grad_input, then the weight's (Σ g·x̂ over
// the leading dims) and, for layer_norm, the bias's (Σ g). rms_norm's
// grad_input has no mean(g) term: rstd·(g·w - x̂·mean(g·w·x̂)).
void norm_backward_composite(OpCall& call, bool centred) {
  const Tensor& in = call.arg(1);
  const int64_t k = call.values[0].u.ints.size;
  const DimVector dims = last_dims(in.dim(), k);
  const Tensor x = in.to(stats_dtype(in.dtype())), g = call.arg(0).to(x.dtype());
  const Standardized s = normalized(x, k, call.values[1].u.f, centred);
  const Tensor* w = call.args[2];
  const Tensor gxhat = w && w->defined() ? g * w->to(x.dtype()) : g;
  const Tensor gi = centred ? standardize_backward(s, gxhat, dims)
                            : s.rstd * (gxhat - s.xhat * mean(gxhat * s.xhat, IntArrayRef(dims), true));
  call.result(0) = gi.to(in.dtype());
  // The parameters' gradients: summed over the leading dims, down to normalized_shape.
  const IntArrayRef pshape(call.values[0].u.ints.data, static_cast<size_t>(k));
  call.result(1) = autograd::sum_to(g * s.xhat, pshape).to(in.dtype());
  if (centred) call.result(2) = autograd::sum_to(g, pshape).to(in.dtype());
}

LOOM_CORE_OP(layer_norm_backward_op,
             "_layer_norm_backward(Tensor grad_output, Tensor input, int[] normalized_shape, Tensor? weight, "
             "float eps) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)",
             [](OpCall& call) { prepare_norm_backward(call, 2); },
             [](OpCall& call) { norm_backward_composite(call, true); })

// The gradient op computes every output; a device kernel computes the
// parameters' cross-row sums in the same pass as grad_input.
LOOM_DERIVATIVE(layer_norm_op, "NativeLayerNormBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor in = c.input(0);
                  const Tensor w = c.has_input(1) ? c.input(1) : Tensor();
                  // A root gradient may come in another dtype; the gradient op takes the input's.
                  const auto [gi, gw, gb] =
                      layer_norm_backward(c.grad().to(in.dtype()), in, c.int_list(0), w, c.float_arg(1));
                  if (c.needs_grad(0)) c.set(0, gi);
                  if (c.needs_grad(1)) c.set(1, gw);
                  if (c.needs_grad(2)) c.set(2, gb);
                })

// -------------------------------------------------------------- rms_norm ---

void rms_norm_composite(OpCall& call) {
  const Tensor& in = call.arg(0);
  const Tensor x = in.to(stats_dtype(in.dtype()));
  const int64_t k = call.values[0].u.ints.size;
  const IntArrayRef pshape(call.values[0].u.ints.data, static_cast<size_t>(k));
  call.result() = affine(normalized(x, k, call.values[1].u.f, false).xhat, call.args[1], nullptr, pshape)
                      .to(in.dtype());
}

LOOM_CORE_OP(rms_norm_op,
             "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
             prepare_rms_norm, rms_norm_composite)

LOOM_CORE_OP(rms_norm_backward_op,
             "_rms_norm_backward(Tensor grad_output, Tensor input, int[] normalized_shape, Tensor? weight, "
             "float eps) -> (Tensor grad_input, Tensor grad_weight)",
             [](OpCall& call) { prepare_norm_backward(call, 1); },
             [](OpCall& call) { norm_backward_composite(call, false); })

LOOM_DERIVATIVE(rms_norm_op, "RmsNormBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor in = c.input(0);
                  const Tensor w = c.has_input(1) ? c.input(1) : Tensor();
                  const double eps = c.is_none(1) ? dtype_epsilon(in.dtype()) : c.float_arg(1);
                  const auto [gi, gw] = rms_norm_backward(c.grad().to(in.dtype()), in, c.int_list(0), w, eps);
                  if (c.needs_grad(0)) c.set(0, gi);
                  if (c.needs_grad(1)) c.set(1, gw);
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

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return detail::run_op(layer_norm_op(), {&input, &weight, &bias},
                        {detail::int_list_value(normalized_shape), detail::float_value(eps)});
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       IntArrayRef normalized_shape, const Tensor& weight,
                                                       double eps) {
  OpCall call(layer_norm_backward_op());
  for (const Tensor* t : {&grad_output, &input, &weight}) call.args.push_back(t);
  call.values.push_back(detail::int_list_value(normalized_shape));
  call.values.push_back(detail::float_value(eps));
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result), std::move(call.outputs[2].result)};
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  return detail::run_op(rms_norm_op(), {&input, &weight},
                        {detail::int_list_value(normalized_shape), eps ? detail::float_value(*eps) : detail::none_value()});
}

std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_output, const Tensor& input,
                                             IntArrayRef normalized_shape, const Tensor& weight, double eps) {
  OpCall call(rms_norm_backward_op());
  for (const Tensor* t : {&grad_output, &input, &weight}) call.args.push_back(t);
  call.values.push_back(detail::int_list_value(normalized_shape));
  call.values.push_back(detail::float_value(eps));
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result)};
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  LoomValue g{};
  g.kind = LOOM_VALUE_INT;
  g.u.i = num_groups;
  return detail::run_op(group_norm_op(), {&input, &weight, &bias}, {g, detail::float_value(eps)});
}

}  // namespace loom
