// ops_conv.cpp — conv1d, conv2d and conv_transpose2d: argument checks,
// output shapes and the "same"/"valid" padding forms.
//
// The kernel always sees the batched 2-D case (conv_args.h): input
// [N, C, H, W], weight [O, C/groups, kH, kW] (conv_transpose2d:
// [C, O/groups, kH, kW]), bias [O] or absent, output [N, O, OH, OW];
// stride, padding, dilation (and output_padding) as 2-element lists.
#include "autograd/formula.h"
#include "conv_args.h"

#include <loom/ops.h>

namespace loom {
namespace {

using autograd::BackwardContext;
using autograd::inputs;
using detail::Pair;

// The schema's value positions.
enum : size_t { kStride = 0, kPadding = 1, kDilation = 2, kGroups = 3 };
enum : size_t { kTStride = 0, kTPadding = 1, kTOutPad = 2, kTGroups = 3, kTDilation = 4 };

const char* rank_text(int spatial) { return spatial == 1 ? "2D (unbatched) or 3D (batched)" : "3D (unbatched) or 4D (batched)"; }

// Dtype and rank checks common to both directions; returns whether batched.
bool check_operands(const OpCall& call, int spatial) {
  const std::string_view op = call.op->name();
  const Tensor& in = call.arg(0);
  const Tensor& w = call.arg(1);
  const int64_t nd = in.dim();
  LOOM_CHECK(nd == spatial + 1 || nd == spatial + 2, op, ": expected ", rank_text(spatial),
             " input, but got input of size ", shape_str(in.sizes()));
  LOOM_CHECK(w.dim() == spatial + 2, op, ": expected weight to be ", spatial + 2,
             "-D, but got weight of size ", shape_str(w.sizes()));
  LOOM_CHECK(in.dtype() != DType::Bool, op, ": bool input is not supported");
  LOOM_CHECK(in.dtype() == w.dtype(), op, ": expected input and weight to have the same dtype, but got ",
             name(in.dtype()), " and ", name(w.dtype()));
  LOOM_CHECK(in.device() == w.device(), op, ": input and weight are on different devices");
  if (call.args[2] && call.args[2]->defined()) {
    const Tensor& b = call.arg(2);
    LOOM_CHECK(b.dtype() == in.dtype(), op, ": expected bias to have the input's dtype ",
               name(in.dtype()), ", but got ", name(b.dtype()));
    LOOM_CHECK(b.device() == in.device(), op, ": input and bias are on different devices");
  }
  return nd == spatial + 2;
}

void check_bias(const OpCall& call, int64_t out_channels) {
  if (!call.args[2] || !call.args[2]->defined()) return;
  const Tensor& b = call.arg(2);
  LOOM_CHECK(b.dim() == 1 && b.size(0) == out_channels, call.op->name(),
             ": expected bias of size [", out_channels, "], but got ", shape_str(b.sizes()));
}

void set_inputs(OpCall& call, int spatial) {
  call.inputs.resize(3);
  for (size_t i = 0; i < 2; ++i) {
    call.inputs[i].tensor = call.args[i]->impl();
    call.inputs[i].view = detail::as_nchw(call, *call.args[i]->impl(), spatial);
  }
  if (call.args[2] && call.args[2]->defined()) call.inputs[2].tensor = call.args[2]->impl();
  call.compute_dtype = call.arg(0).dtype();
}

std::string spatial_str(int spatial, int64_t h, int64_t w) {
  return spatial == 1 ? std::to_string(w) : std::to_string(h) + " x " + std::to_string(w);
}

void prepare_conv(OpCall& call, int spatial) {
  const std::string_view op = call.op->name();
  const bool batched = check_operands(call, spatial);
  const Pair stride = detail::read_pair(call, kStride, spatial, "stride", 1);
  const Pair pad = detail::read_pair(call, kPadding, spatial, "padding", 0);
  const Pair dil = detail::read_pair(call, kDilation, spatial, "dilation", 1);
  const int64_t groups = call.values[kGroups].u.i;
  detail::check_positive(op, "stride", stride, spatial);
  detail::check_positive(op, "padding", pad, spatial, true);
  detail::check_positive(op, "dilation", dil, spatial);
  LOOM_CHECK(groups > 0, op, ": expected 'groups' to be positive, but got ", groups);

  set_inputs(call, spatial);
  const View& x = call.inputs[0].view;
  const View& w = call.inputs[1].view;
  const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  const int64_t O = w.sizes[0], kH = w.sizes[2], kW = w.sizes[3];
  LOOM_CHECK(O % groups == 0, op, ": given groups=", groups,
             ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
             shape_str(call.arg(1).sizes()));
  LOOM_CHECK(C == w.sizes[1] * groups, op, ": given groups=", groups, ", weight of size ",
             shape_str(call.arg(1).sizes()), ", expected input ", shape_str(call.arg(0).sizes()),
             " to have ", w.sizes[1] * groups, " channels, but got ", C, " channels");
  LOOM_CHECK(kH > 0 && kW > 0, op, ": expected a non-empty kernel, but got weight of size ",
             shape_str(call.arg(1).sizes()));
  check_bias(call, O);
  const int64_t eh = dil[0] * (kH - 1) + 1, ew = dil[1] * (kW - 1) + 1;
  const int64_t ph = H + 2 * pad[0], pw = W + 2 * pad[1];
  LOOM_CHECK(ph >= eh && pw >= ew, op, ": calculated padded input size per channel: (",
             spatial_str(spatial, ph, pw), "); kernel size (dilated): (", spatial_str(spatial, eh, ew),
             "); the kernel can't be greater than the padded input");
  const int64_t OH = (ph - eh) / stride[0] + 1, OW = (pw - ew) / stride[1] + 1;
  detail::set_pairs(call, {kStride, kPadding, kDilation}, {stride, pad, dil});
  detail::add_nchw_output(call, call.compute_dtype, N, O, OH, OW, batched, spatial);
}

void prepare_conv1d(OpCall& call) { prepare_conv(call, 1); }
void prepare_conv2d(OpCall& call) { prepare_conv(call, 2); }

void prepare_conv_transpose2d(OpCall& call) {
  const std::string_view op = call.op->name();
  const bool batched = check_operands(call, 2);
  const Pair stride = detail::read_pair(call, kTStride, 2, "stride", 1);
  const Pair pad = detail::read_pair(call, kTPadding, 2, "padding", 0);
  const Pair opad = detail::read_pair(call, kTOutPad, 2, "output_padding", 0);
  const Pair dil = detail::read_pair(call, kTDilation, 2, "dilation", 1);
  const int64_t groups = call.values[kTGroups].u.i;
  detail::check_positive(op, "stride", stride, 2);
  detail::check_positive(op, "padding", pad, 2, true);
  detail::check_positive(op, "output_padding", opad, 2, true);
  detail::check_positive(op, "dilation", dil, 2);
  LOOM_CHECK(groups > 0, op, ": expected 'groups' to be positive, but got ", groups);
  for (size_t d = 0; d < 2; ++d)
    LOOM_CHECK(opad[d] < stride[d] || opad[d] < dil[d], op,
               ": output_padding must be smaller than either stride or dilation, but got output_padding=",
               shape_str({opad[0], opad[1]}), ", stride=", shape_str({stride[0], stride[1]}),
               ", dilation=", shape_str({dil[0], dil[1]}));

  set_inputs(call, 2);
  const View& x = call.inputs[0].view;
  const View& w = call.inputs[1].view;
  const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  const int64_t kH = w.sizes[2], kW = w.sizes[3];
  LOOM_CHECK(w.sizes[0] % groups == 0, op, ": given groups=", groups,
             ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
             shape_str(call.arg(1).sizes()));
  LOOM_CHECK(C == w.sizes[0], op, ": given transposed=1, weight of size ", shape_str(call.arg(1).sizes()),
             ", expected input ", shape_str(call.arg(0).sizes()), " to have ", w.sizes[0],
             " channels, but got ", C, " channels");
  LOOM_CHECK(kH > 0 && kW > 0, op, ": expected a non-empty kernel, but got weight of size ",
             shape_str(call.arg(1).sizes()));
  const int64_t O = w.sizes[1] * groups;
  check_bias(call, O);
  const int64_t OH = (H - 1) * stride[0] - 2 * pad[0] + dil[0] * (kH - 1) + opad[0] + 1;
  const int64_t OW = (W - 1) * stride[1] - 2 * pad[1] + dil[1] * (kW - 1) + opad[1] + 1;
  LOOM_CHECK(OH > 0 && OW > 0, op, ": given input size (", H, " x ", W, "), the calculated output size (",
             OH, " x ", OW, ") is too small");
  detail::set_pairs(call, {kTStride, kTPadding, kTOutPad, kTDilation}, {stride, pad, opad, dil});
  detail::add_nchw_output(call, call.compute_dtype, N, O, OH, OW, batched, 2);
}

LOOM_CORE_OP(conv1d_op,
             "conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, "
             "int[1] dilation=1, int groups=1) -> Tensor",
             prepare_conv1d, nullptr)
LOOM_CORE_OP(conv2d_op,
             "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
             "int[2] dilation=1, int groups=1) -> Tensor",
             prepare_conv2d, nullptr)
LOOM_CORE_OP(conv_transpose2d_op,
             "conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
             "int[2] padding=0, int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor",
             prepare_conv_transpose2d, nullptr)

// ---- derivatives ----------------------------------------------------------------------
// Written with the gradient ops of ops_conv_backward.cpp (native on a device
// with kernels for them, conv2d / conv_transpose2d composites elsewhere and
// under double backward) and conv2d. They work on the batched 2-D
// case, as the kernels do: conv1d is height 1, an unbatched input a batch
// of one.

Tensor to_nchw(const Tensor& t, int spatial, bool batched) {
  const Tensor r = spatial == 1 ? t.unsqueeze(-2) : t;
  return batched ? r : r.unsqueeze(0);
}
Tensor from_nchw(const Tensor& t, int spatial, bool batched) {
  const Tensor r = batched ? t : t.squeeze(0);
  return spatial == 1 ? r.squeeze(-2) : r;
}

IntArrayRef pair_ref(const Pair& p) { return {p.data(), 2}; }

template <int Spatial>
void conv_backward(BackwardContext& c) {
  const bool batched = c.input_sizes(0).size() == Spatial + 2;
  const Pair stride = detail::pair_of(c.value(kStride), Spatial, 1);
  const Pair pad = detail::pair_of(c.value(kPadding), Spatial, 0);
  const Pair dil = detail::pair_of(c.value(kDilation), Spatial, 1);
  const int64_t groups = c.int_arg(kGroups);
  const Tensor g = to_nchw(c.grad(), Spatial, batched);
  const Tensor w = to_nchw(c.input(1), Spatial, true);
  const int64_t kH = w.size(2), kW = w.size(3);
  if (c.needs_grad(0)) {
    const IntArrayRef in = c.input_sizes(0);
    const Pair size{Spatial == 1 ? 1 : in[in.size() - 2], in.back()};
    c.set(0, from_nchw(conv2d_backward_input(g, w, pair_ref(size), pair_ref(stride), pair_ref(pad), pair_ref(dil),
                                             groups),
                       Spatial, batched));
  }
  if (c.needs_grad(1)) {
    const Tensor x = to_nchw(c.input(0), Spatial, batched);
    const Pair k{kH, kW};
    c.set(1, from_nchw(conv2d_backward_weight(g, x, pair_ref(k), pair_ref(stride), pair_ref(pad), pair_ref(dil),
                                              groups),
                       Spatial, true));
  }
  if (c.needs_grad(2)) c.set(2, sum(g, IntArrayRef{0, 2, 3}));
}

LOOM_DERIVATIVE(conv1d_op, "ConvolutionBackward0", inputs(0, 1), autograd::none(), conv_backward<1>)
LOOM_DERIVATIVE(conv2d_op, "ConvolutionBackward0", inputs(0, 1), autograd::none(), conv_backward<2>)

LOOM_DERIVATIVE(conv_transpose2d_op, "ConvolutionBackward0", inputs(0, 1), autograd::none(),
                [](BackwardContext& c) {
                  const bool batched = c.input_sizes(0).size() == 4;
                  const Pair stride = detail::pair_of(c.value(kTStride), 2, 1);
                  const Pair pad = detail::pair_of(c.value(kTPadding), 2, 0);
                  const Pair dil = detail::pair_of(c.value(kTDilation), 2, 1);
                  const int64_t groups = c.int_arg(kTGroups);
                  const Tensor g = to_nchw(c.grad(), 2, batched);
                  const Tensor w = c.input(1);
                  if (c.needs_grad(0)) {
                    // conv2d is the adjoint; an output_padding of at least the
                    // stride gives it rows past the input's: dropped.
                    const IntArrayRef in = c.input_sizes(0);
                    const Tensor r = conv2d(g, w, std::nullopt, pair_ref(stride), pair_ref(pad), pair_ref(dil), groups);
                    c.set(0, from_nchw(r.narrow(2, 0, in[in.size() - 2]).narrow(3, 0, in.back()), 2, batched));
                  }
                  if (c.needs_grad(1)) {
                    const Tensor x = to_nchw(c.input(0), 2, batched);
                    // The weight gradient of the conv2d that maps g to x.
                    const Pair k{w.size(2), w.size(3)};
                    c.set(1, conv2d_backward_weight(x, g, pair_ref(k), pair_ref(stride), pair_ref(pad),
                                                    pair_ref(dil), groups));
                  }
                  if (c.needs_grad(2)) c.set(2, sum(g, IntArrayRef{0, 2, 3}));
                })

Tensor run_conv(const OpDef& op, const Tensor& input, const Tensor& weight,
                const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                IntArrayRef dilation, int64_t groups) {
  const Tensor none;
  const Tensor* b = bias ? &*bias : &none;
  return detail::run_op(op, {&input, &weight, b},
                        {detail::int_list_value(stride), detail::int_list_value(padding),
                         detail::int_list_value(dilation), detail::int_value(groups)});
}

// padding="same" / "valid" as explicit padding. "same" needs stride 1; when
// the dilated kernel's extent is even the extra padding goes at the end, as
// PyTorch does: pad one more at both ends and drop the first output.
Tensor conv_padding_str(const OpDef& op, int spatial, const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        std::string_view padding, IntArrayRef dilation, int64_t groups) {
  const std::string_view name = op.name();
  if (padding == "valid") {
    const DimVector zeros(static_cast<size_t>(spatial), 0);
    return run_conv(op, input, weight, bias, stride, zeros, dilation, groups);
  }
  LOOM_CHECK(padding == "same", name, ": invalid padding string '", padding,
             "', expected 'same' or 'valid'");
  for (int64_t s : stride)
    LOOM_CHECK(s == 1, name, ": padding='same' is not supported for strided convolutions");
  LOOM_CHECK(weight.dim() == spatial + 2, name, ": expected weight to be ", spatial + 2,
             "-D, but got weight of size ", shape_str(weight.sizes()));
  DimVector pad, extra;
  for (int d = 0; d < spatial; ++d) {
    // A malformed dilation list is reported by the op's own checks below.
    const int64_t dl = dilation.size() == 1                                   ? dilation[0]
                       : dilation.size() == static_cast<size_t>(spatial) ? dilation[static_cast<size_t>(d)]
                                                                          : 1;
    const int64_t total = dl * (weight.size(2 + d) - 1);
    pad.push_back(total / 2 + total % 2);
    extra.push_back(total % 2);
  }
  Tensor out = run_conv(op, input, weight, bias, stride, pad, dilation, groups);
  const int64_t first = out.dim() - spatial;
  for (int d = 0; d < spatial; ++d)
    if (extra[static_cast<size_t>(d)]) out = out.narrow(first + d, 1, out.size(first + d) - 1);
  return out;
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return run_conv(conv1d_op(), input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return run_conv(conv2d_op(), input, weight, bias, stride, padding, dilation, groups);
}
Tensor detail::conv_padding_mode(int spatial, const Tensor& input, const Tensor& weight,
                                 const std::optional<Tensor>& bias, IntArrayRef stride,
                                 std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_str(spatial == 1 ? conv1d_op() : conv2d_op(), spatial, input, weight, bias,
                          stride, padding, dilation, groups);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  const Tensor none;
  const Tensor* b = bias ? &*bias : &none;
  return detail::run_op(conv_transpose2d_op(), {&input, &weight, b},
                        {detail::int_list_value(stride), detail::int_list_value(padding),
                         detail::int_list_value(output_padding), detail::int_value(groups),
                         detail::int_list_value(dilation)});
}

}  // namespace loom
