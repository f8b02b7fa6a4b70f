// ops_pool.cpp — max_pool2d (with and without indices), avg_pool2d and
// adaptive_avg_pool2d: argument checks and output shapes.
//
// The kernel sees [N, C, H, W] input and output views (an unbatched input is
// N = 1) and every int[2] argument as a 2-element list, stride filled in
// (conv_args.h).
#include "autograd/formula.h"
#include "conv_args.h"

#include <loom/ops.h>

#include <algorithm>
#include <vector>

namespace loom {
namespace {

using autograd::BackwardContext;
using detail::Pair;

// Value positions: max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode);
// avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override).
enum : size_t { kKernel = 0, kStride = 1, kPadding = 2, kMaxDilation = 3, kMaxCeil = 4 };
enum : size_t { kAvgCeil = 3, kAvgIncludePad = 4, kAvgDivisor = 5 };

// An empty (or None) stride means the kernel size.
bool stride_given(const LoomValue& v) {
  return !(v.kind == LOOM_VALUE_INT_LIST && v.u.ints.size == 0) && v.kind != LOOM_VALUE_NONE;
}

// The input is [N, C, H, W] or [C, H, W] with non-empty C, H, W (N may be 0);
// returns whether it is batched.
bool check_pool_input(const OpCall& call, bool allow_integers) {
  const std::string_view op = call.op->name();
  const Tensor& in = call.arg(0);
  LOOM_CHECK(in.dim() == 3 || in.dim() == 4, op,
             ": expected a 3D (unbatched) or 4D (batched) input, but got input of size ",
             shape_str(in.sizes()));
  for (int64_t d = in.dim() - 3; d < in.dim(); ++d)
    LOOM_CHECK(in.size(d) > 0, op, ": expected input with non-zero size for non-batch dimensions, but got ",
               shape_str(in.sizes()));
  const DType t = in.dtype();
  LOOM_CHECK(t != DType::Bool && (allow_integers || is_floating_point(t)), op,
             ": expected a floating point input, but got ", name(t));
  return in.dim() == 4;
}

// PyTorch's pooling_output_shape: floor or ceil division, and in ceil mode
// the last window must start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

void prepare_window_pool(OpCall& call, bool with_dilation, bool allow_integers, size_t ceil_at,
                         int outputs) {
  const std::string_view op = call.op->name();
  const bool batched = check_pool_input(call, allow_integers);
  const Pair k = detail::read_pair(call, kKernel, 2, "kernel_size", 1);
  const Pair stride = stride_given(call.values[kStride]) ? detail::read_pair(call, kStride, 2, "stride", 1) : k;
  const Pair pad = detail::read_pair(call, kPadding, 2, "padding", 0);
  const Pair dil = with_dilation ? detail::read_pair(call, kMaxDilation, 2, "dilation", 1) : Pair{1, 1};
  const bool ceil = call.values[ceil_at].u.i != 0;
  detail::check_positive(op, "kernel_size", k, 2);
  detail::check_positive(op, "stride", stride, 2);
  detail::check_positive(op, "padding", pad, 2, true);
  detail::check_positive(op, "dilation", dil, 2);
  LOOM_CHECK(pad[0] <= k[0] / 2 && pad[1] <= k[1] / 2, op,
             ": expected padding to be at most half of kernel_size, but got padding=",
             shape_str({pad[0], pad[1]}), " and kernel_size=", shape_str({k[0], k[1]}));

  call.inputs.resize(1);
  call.inputs[0].tensor = call.args[0]->impl();
  call.inputs[0].view = detail::as_nchw(call, *call.args[0]->impl(), 2);
  call.compute_dtype = call.arg(0).dtype();
  const View& x = call.inputs[0].view;
  const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  const int64_t OH = pooled_size(H, k[0], pad[0], stride[0], dil[0], ceil);
  const int64_t OW = pooled_size(W, k[1], pad[1], stride[1], dil[1], ceil);
  LOOM_CHECK(OH >= 1 && OW >= 1, op, ": given input size (", C, "x", H, "x", W,
             "), the calculated output size (", C, "x", OH, "x", OW, ") is too small");
  if (with_dilation)
    detail::set_pairs(call, {kKernel, kStride, kPadding, kMaxDilation}, {k, stride, pad, dil});
  else
    detail::set_pairs(call, {kKernel, kStride, kPadding}, {k, stride, pad});
  detail::add_nchw_output(call, call.compute_dtype, N, C, OH, OW, batched, 2);
  if (outputs == 2) detail::add_nchw_output(call, DType::Int64, N, C, OH, OW, batched, 2);
}

void prepare_max_pool2d(OpCall& call) { prepare_window_pool(call, true, false, kMaxCeil, 1); }
void prepare_max_pool2d_with_indices(OpCall& call) {
  prepare_window_pool(call, true, false, kMaxCeil, 2);
}
void prepare_avg_pool2d(OpCall& call) {
  const LoomValue& d = call.values[kAvgDivisor];
  LOOM_CHECK(d.kind == LOOM_VALUE_NONE || d.u.i != 0, call.op->name(),
             ": expected divisor_override to be non-zero");
  prepare_window_pool(call, false, true, kAvgCeil, 1);
}

void prepare_adaptive_avg_pool2d(OpCall& call) {
  const std::string_view op = call.op->name();
  const bool batched = check_pool_input(call, false);
  const Pair size = detail::read_pair(call, 0, 2, "output_size", 1);
  detail::check_positive(op, "output_size", size, 2, true);
  call.inputs.resize(1);
  call.inputs[0].tensor = call.args[0]->impl();
  call.inputs[0].view = detail::as_nchw(call, *call.args[0]->impl(), 2);
  call.compute_dtype = call.arg(0).dtype();
  const View& x = call.inputs[0].view;
  detail::set_pairs(call, {0}, {size});
  detail::add_nchw_output(call, call.compute_dtype, x.sizes[0], x.sizes[1], size[0], size[1], batched, 2);
}

LOOM_CORE_OP(max_pool2d_op,
             "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
             "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
             prepare_max_pool2d, nullptr)
LOOM_CORE_OP(max_pool2d_with_indices_op,
             "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
             "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
             prepare_max_pool2d_with_indices, nullptr)
LOOM_CORE_OP(avg_pool2d_op,
             "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
             "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
             prepare_avg_pool2d, nullptr)
LOOM_CORE_OP(adaptive_avg_pool2d_op, "adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor",
             prepare_adaptive_avg_pool2d, nullptr)

// ---- derivatives ----------------------------------------------------------------------

// Max pooling routes each output's gradient to the input element its index
// names (a flat h * W + w within its plane); overlapping windows add up.
Tensor max_pool_backward(const Tensor& grad, const Tensor& indices, IntArrayRef in_sizes) {
  const size_t lead = in_sizes.size() - 2;
  DimVector plane(in_sizes.begin(), in_sizes.begin() + static_cast<std::ptrdiff_t>(lead)), flat_out(plane);
  plane.push_back(in_sizes[lead] * in_sizes[lead + 1]);
  flat_out.push_back(-1);
  // Into a fresh zero buffer in place: scatter_add out of place would copy it first.
  Tensor result = zeros(plane, grad.dtype(), grad.device());
  result.scatter_add_(static_cast<int64_t>(lead), indices.reshape(flat_out), grad.reshape(flat_out));
  return result.reshape(in_sizes);
}

// max_pool2d keeps no indices: backward finds them again with the forward's arguments.
Tensor max_pool_indices(const BackwardContext& c) {
  const Tensor x = c.input(0).detach();
  OpCall call(max_pool2d_with_indices_op());
  call.args.push_back(&x);
  for (size_t i = 0; i <= kMaxCeil; ++i) call.values.push_back(c.value(i));
  dispatch(call);
  return std::move(call.outputs[1].result);
}

LOOM_DERIVATIVE(max_pool2d_op, "MaxPool2DBackward0", autograd::inputs(0), autograd::none(),
                [](BackwardContext& c) { c.set(0, max_pool_backward(c.grad(), max_pool_indices(c), c.input_sizes(0))); })
LOOM_DERIVATIVE(max_pool2d_with_indices_op, "MaxPool2DWithIndicesBackward0", autograd::none(),
                autograd::outputs(1),
                [](BackwardContext& c) { c.set(0, max_pool_backward(c.grad(0), c.output(1), c.input_sizes(0))); })

// Average pooling is separable: each output averages a window of rows
// times a window of columns, and the divisor (the window's size, clipped
// to the padded or to the real input) is a product of one count per dim.
// So pooling is A_h · x · A_wᵀ with A [out, in] holding 1/count over each
// window, and its gradient A_hᵀ · g · A_w: two matmuls, differentiable again.
struct Span {
  int64_t begin, end, count;
};

// A for `out` outputs over `in` inputs; `window(o)` gives output o's Span.
template <class Window>
Tensor window_matrix(int64_t out, int64_t in, Window window, const Tensor& like) {
  std::vector<double> a(static_cast<size_t>(out * in), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    const auto [begin, end, count] = window(o);
    for (int64_t i = begin; i < end; ++i) a[static_cast<size_t>(o * in + i)] = 1.0 / static_cast<double>(count);
  }
  return from_vector(a, {out, in}).to(like.device(), like.dtype());
}

Tensor separable_pool_backward(const Tensor& grad, const Tensor& a_h, const Tensor& a_w) {
  return matmul(matmul(a_h.t(), grad), a_w);
}

LOOM_DERIVATIVE(avg_pool2d_op, "AvgPool2DBackward0", autograd::none(), autograd::none(), [](BackwardContext& c) {
  const IntArrayRef in = c.input_sizes(0), out = c.output_sizes(0);
  const Pair k = detail::pair_of(c.value(kKernel), 2, 1);
  const Pair stride = stride_given(c.value(kStride)) ? detail::pair_of(c.value(kStride), 2, 1) : k;
  const Pair pad = detail::pair_of(c.value(kPadding), 2, 0);
  const bool include_pad = c.bool_arg(kAvgIncludePad);
  const bool has_divisor = !c.is_none(kAvgDivisor);
  const Tensor g = c.grad();
  Tensor a[2];
  for (size_t d = 0; d < 2; ++d) {
    const int64_t n = in[in.size() - 2 + d];
    a[d] = window_matrix(out[out.size() - 2 + d], n, [&](int64_t o) {
      // PyTorch's window: clipped to the padded input for the count, to the
      // input for the sum. divisor_override divides once, in the rows' matrix.
      const int64_t start = o * stride[d] - pad[d], end = std::min(start + k[d], n + pad[d]);
      const int64_t b = std::max<int64_t>(start, 0), e = std::min(end, n);
      const int64_t count = has_divisor ? (d == 0 ? c.int_arg(kAvgDivisor) : 1) : include_pad ? end - start : e - b;
      return Span{b, e, count};
    }, g);
  }
  c.set(0, separable_pool_backward(g, a[0], a[1]));
})

LOOM_DERIVATIVE(adaptive_avg_pool2d_op, "AdaptiveAvgPool2DBackward0", autograd::none(), autograd::none(),
                [](BackwardContext& c) {
                  const IntArrayRef in = c.input_sizes(0), out = c.output_sizes(0);
                  const Tensor g = c.grad();
                  Tensor a[2];
                  for (size_t d = 0; d < 2; ++d) {
                    const int64_t n = in[in.size() - 2 + d], m = out[out.size() - 2 + d];
                    // PyTorch's bins: [floor(o n / m), ceil((o + 1) n / m)).
                    a[d] = window_matrix(m, n, [&](int64_t o) {
                      const int64_t b = o * n / m, e = ((o + 1) * n + m - 1) / m;
                      return Span{b, e, e - b};
                    }, g);
                  }
                  c.set(0, separable_pool_backward(g, a[0], a[1]));
                })
// PyTorch reduces a pool to 1x1 with mean over the plane: MeanBackward1.
LOOM_DERIVATIVE_NAME(adaptive_avg_pool2d_op, [](const OpCall& call) {
  const LoomValue& size = call.values[0];
  const bool to_one = size.kind == LOOM_VALUE_INT_LIST && size.u.ints.size == 2 && size.u.ints.data[0] == 1 &&
                      size.u.ints.data[1] == 1;
  return to_one ? "MeanBackward1" : "AdaptiveAvgPool2DBackward0";
})

}  // namespace

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  // When backward will need the argmax positions, keep them now rather than
  // pooling again in backward (PyTorch does the same: the grad_fn is
  // MaxPool2DWithIndicesBackward0 there too).
  if (input.requires_grad() && autograd::GradMode::is_enabled())
    return std::get<0>(max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
  return detail::run_op(max_pool2d_op(), {&input},
                        {detail::int_list_value(kernel_size), detail::int_list_value(stride),
                         detail::int_list_value(padding), detail::int_list_value(dilation),
                         detail::bool_value(ceil_mode)});
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  OpCall call(max_pool2d_with_indices_op());
  call.args.push_back(&input);
  // Each value borrows its argument's ints (a one-value IntArrayRef holds
  // its int inside), so they are the parameters themselves, not copies.
  call.values.push_back(detail::int_list_value(kernel_size));
  call.values.push_back(detail::int_list_value(stride));
  call.values.push_back(detail::int_list_value(padding));
  call.values.push_back(detail::int_list_value(dilation));
  call.values.push_back(detail::bool_value(ceil_mode));
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result)};
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return detail::run_op(avg_pool2d_op(), {&input},
                        {detail::int_list_value(kernel_size), detail::int_list_value(stride),
                         detail::int_list_value(padding), detail::bool_value(ceil_mode),
                         detail::bool_value(count_include_pad),
                         divisor_override ? detail::int_value(*divisor_override) : detail::none_value()});
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return detail::run_op(adaptive_avg_pool2d_op(), {&input}, {detail::int_list_value(output_size)});
}

}  // namespace loom
