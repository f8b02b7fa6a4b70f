// ops_conv_backward.cpp — the two gradients of a 2-D convolution as ops of
// their own, so a device can compute them natively (the CPU plugin with
// oneDNN's backward primitives) instead of through forward convolutions:
//
//   _conv2d_backward_input(grad_output, weight, input_size, stride, padding, dilation, groups)
//     the gradient of conv2d's input [N, C, H, W] (input_size = [H, W]);
//   _conv2d_backward_weight(grad_output, input, kernel_size, stride, padding, dilation, groups)
//     the gradient of conv2d's weight [O, C/groups, kH, kW].
//
// Both take the batched 4-D case only (the conv formulas reshape 1-D and
// unbatched calls first). Their composites are the adjoint written with
// conv_transpose2d / conv2d: a device without kernels runs those, and
// autograd differentiates through them (double backward), since the ops
// have no formula of their own.
#include "conv_args.h"

#include <loom/ops.h>

namespace loom {
namespace {

using detail::Pair;

// The schema's value positions (both ops).
enum : size_t { kSize = 0, kStride = 1, kPadding = 2, kDilation = 3, kGroups = 4 };

IntArrayRef pair_ref(const Pair& p) { return {p.data(), 2}; }

struct Params {
  Pair size, stride, pad, dil;
  int64_t groups;
};

Params read_params(const OpCall& call, const char* size_name) {
  const std::string_view op = call.op->name();
  Params p{detail::read_pair(call, kSize, 2, size_name, 1), detail::read_pair(call, kStride, 2, "stride", 1),
           detail::read_pair(call, kPadding, 2, "padding", 0), detail::read_pair(call, kDilation, 2, "dilation", 1),
           call.values[kGroups].u.i};
  detail::check_positive(op, size_name, p.size, 2);
  detail::check_positive(op, "stride", p.stride, 2);
  detail::check_positive(op, "padding", p.pad, 2, true);
  detail::check_positive(op, "dilation", p.dil, 2);
  LOOM_CHECK(p.groups > 0, op, ": expected 'groups' to be positive, but got ", p.groups);
  return p;
}

// grad_output and the other operand: 4-D, one floating-or-integer dtype, one device.
void check_operands(const OpCall& call, const char* other) {
  const std::string_view op = call.op->name();
  const Tensor& g = call.arg(0);
  const Tensor& t = call.arg(1);
  LOOM_CHECK(g.dim() == 4, op, ": expected a 4-D grad_output [N, O, OH, OW], but got size ", shape_str(g.sizes()));
  LOOM_CHECK(t.dim() == 4, op, ": expected a 4-D ", other, ", but got size ", shape_str(t.sizes()));
  LOOM_CHECK(g.dtype() != DType::Bool, op, ": bool grad_output is not supported");
  LOOM_CHECK(g.dtype() == t.dtype(), op, ": expected grad_output and ", other, " to have the same dtype, but got ",
             name(g.dtype()), " and ", name(t.dtype()));
  LOOM_CHECK(g.device() == t.device(), op, ": grad_output and ", other, " are on different devices");
}

// The output rows of the forward convolution over `in` rows.
int64_t forward_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t padded = in + 2 * p, extent = d * (k - 1) + 1;
  return padded < extent ? 0 : (padded - extent) / s + 1;
}

void set_views(OpCall& call) {
  call.inputs.resize(2);
  for (size_t i = 0; i < 2; ++i) {
    call.inputs[i].tensor = call.args[i]->impl();
    call.inputs[i].view = detail::as_nchw(call, *call.args[i]->impl(), 2);
  }
  call.compute_dtype = call.arg(0).dtype();
}

void prepare_backward_input(OpCall& call) {
  const std::string_view op = call.op->name();
  check_operands(call, "weight");
  const Params p = read_params(call, "input_size");
  const Tensor& g = call.arg(0);
  const Tensor& w = call.arg(1);
  const int64_t N = g.size(0), O = g.size(1), C = w.size(1) * p.groups;
  LOOM_CHECK(w.size(0) == O && O % p.groups == 0, op, ": given groups=", p.groups, ", weight of size ",
             shape_str(w.sizes()), " does not match grad_output ", shape_str(g.sizes()), " (", O,
             " channels, divisible by groups)");
  LOOM_CHECK(w.size(2) > 0 && w.size(3) > 0, op, ": expected a non-empty kernel, but got weight of size ",
             shape_str(w.sizes()));
  for (size_t d = 0; d < 2; ++d) {
    const int64_t rows = forward_extent(p.size[d], w.size(2 + d), p.stride[d], p.pad[d], p.dil[d]);
    LOOM_CHECK(rows == g.size(2 + static_cast<int64_t>(d)), op, ": grad_output of size ", shape_str(g.sizes()),
               " does not fit input_size ", shape_str({p.size[0], p.size[1]}), ": the convolution makes ", rows,
               " outputs along spatial dim ", d);
  }
  detail::set_pairs(call, {kSize, kStride, kPadding, kDilation}, {p.size, p.stride, p.pad, p.dil});
  set_views(call);
  detail::add_nchw_output(call, call.compute_dtype, N, C, p.size[0], p.size[1], true, 2);
}

void prepare_backward_weight(OpCall& call) {
  const std::string_view op = call.op->name();
  check_operands(call, "input");
  const Params p = read_params(call, "kernel_size");
  const Tensor& g = call.arg(0);
  const Tensor& x = call.arg(1);
  const int64_t O = g.size(1), C = x.size(1);
  LOOM_CHECK(g.size(0) == x.size(0), op, ": grad_output ", shape_str(g.sizes()), " and input ",
             shape_str(x.sizes()), " have different batch sizes");
  LOOM_CHECK(O % p.groups == 0 && C % p.groups == 0, op, ": given groups=", p.groups,
             ", expected grad_output's and input's channels (", O, ", ", C, ") to be divisible by it");
  // grad_output may have fewer rows than the forward makes (the trailing ones
  // count as zero): conv_transpose2d's weight gradient, with an
  // output_padding past the stride, asks for that.
  for (size_t d = 0; d < 2; ++d) {
    const int64_t rows = forward_extent(x.size(2 + static_cast<int64_t>(d)), p.size[d], p.stride[d], p.pad[d],
                                        p.dil[d]);
    const int64_t have = g.size(2 + static_cast<int64_t>(d));
    LOOM_CHECK(have >= 1 && have <= rows, op, ": grad_output of size ", shape_str(g.sizes()),
               " does not fit input ", shape_str(x.sizes()), " and kernel_size ", shape_str({p.size[0], p.size[1]}),
               ": the convolution makes ", rows, " outputs along spatial dim ", d);
  }
  detail::set_pairs(call, {kSize, kStride, kPadding, kDilation}, {p.size, p.stride, p.pad, p.dil});
  set_views(call);
  detail::add_nchw_output(call, call.compute_dtype, O, C / p.groups, p.size[0], p.size[1], true, 2);
}

// The composites read the pairs prepare normalised.
Params prepared_params(const OpCall& call) {
  auto pair = [&](size_t i) {
    const int64_t* d = call.values[i].u.ints.data;
    return Pair{d[0], d[1]};
  };
  return {pair(kSize), pair(kStride), pair(kPadding), pair(kDilation), call.values[kGroups].u.i};
}

// conv_transpose2d is the adjoint; output_padding restores the trailing
// input rows a strided forward never reached.
void composite_backward_input(OpCall& call) {
  const Params p = prepared_params(call);
  const Tensor& g = call.arg(0);
  const Tensor& w = call.arg(1);
  Pair opad;
  for (size_t d = 0; d < 2; ++d) {
    const int64_t k = w.size(2 + static_cast<int64_t>(d));
    const int64_t reached = (g.size(2 + static_cast<int64_t>(d)) - 1) * p.stride[d] + p.dil[d] * (k - 1) + 1;
    opad[d] = p.size[d] + 2 * p.pad[d] - reached;
  }
  call.result() = conv_transpose2d(g, w, std::nullopt, pair_ref(p.stride), pair_ref(p.pad), pair_ref(opad),
                                   p.groups, pair_ref(p.dil));
}

// r[o, c, i, j] = Σ_{n,h,w} g[n, o, h, w] · x_padded[n, c', h·stride + i·dil,
// w·stride + j·dil] over the channels c' of o's group. It is itself a
// convolution with the batch as the channels: x's channels become the
// batch, g is the kernel, stride and dilation swap roles. The result can
// have rows past k (what the forward's strides skipped): dropped.
void composite_backward_weight(OpCall& call) {
  const Params p = prepared_params(call);
  const Tensor& g = call.arg(0);
  const Tensor& x = call.arg(1);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), G = p.groups;
  const Tensor as_batch =
      permute(x.reshape({N, G, C / G, H, W}), {2, 1, 0, 3, 4}).reshape({C / G, G * N, H, W});
  const Tensor r = conv2d(as_batch, g.transpose(0, 1), std::nullopt, pair_ref(p.dil), pair_ref(p.pad),
                          pair_ref(p.stride), G);
  call.result() = r.narrow(2, 0, p.size[0]).narrow(3, 0, p.size[1]).transpose(0, 1).contiguous();
}

LOOM_CORE_OP(conv2d_backward_input_op,
             "_conv2d_backward_input(Tensor grad_output, Tensor weight, int[2] input_size, int[2] stride=1, "
             "int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor",
             prepare_backward_input, composite_backward_input)
LOOM_CORE_OP(conv2d_backward_weight_op,
             "_conv2d_backward_weight(Tensor grad_output, Tensor input, int[2] kernel_size, int[2] stride=1, "
             "int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor",
             prepare_backward_weight, composite_backward_weight)

Tensor run_backward(const OpDef& op, const Tensor& grad_output, const Tensor& other, IntArrayRef size,
                    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return detail::run_op(op, {&grad_output, &other},
                        {detail::int_list_value(size), detail::int_list_value(stride),
                         detail::int_list_value(padding), detail::int_list_value(dilation),
                         detail::int_value(groups)});
}

}  // namespace

Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_size,
                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return run_backward(conv2d_backward_input_op(), grad_output, weight, input_size, stride, padding, dilation,
                      groups);
}

Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, IntArrayRef kernel_size,
                              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return run_backward(conv2d_backward_weight_op(), grad_output, input, kernel_size, stride, padding, dilation,
                      groups);
}

}  // namespace loom
