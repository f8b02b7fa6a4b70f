// ops_nn_norm.cpp — layer_norm (a CPU kernel, and a composite for other
// devices) and group_norm (a composite); batch_norm is in ops_batch_norm.cpp.
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

}  // namespace loom
