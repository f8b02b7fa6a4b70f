// loom/ops/conv.h — the op catalog, part: convolution and pooling (conv1d/2d, conv_transpose2d, max/avg/adaptive pools).
// Included by loom/ops.h; the ops are defined in core/src/ops/ops_conv.cpp, ops_conv_backward.cpp and
// ops_pool.cpp.
//
// torch.nn.functional semantics (torch 1.13). Inputs are batched
// [N, C, (H,) W] or unbatched [C, (H,) W]. int-list arguments take one value
// for every spatial dim or one per dim. Convolutions need input, weight and
// bias of one dtype (any but bool); pools take floating inputs (avg_pool2d
// integers too).
#pragma once

#include <loom/tensor.h>

#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace loom {

// weight [out_channels, in_channels / groups, kW]; bias [out_channels].
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);

namespace detail {
// padding "same" (stride 1 only) or "valid"; spatial is 1 or 2.
Tensor conv_padding_mode(int spatial, const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride,
                         std::string_view padding, IntArrayRef dilation, int64_t groups);
template <class S>
using if_string = std::enable_if_t<std::is_convertible_v<const S&, std::string_view>, int>;
}  // namespace detail

// padding "same" (stride 1 only) or "valid". A template so that a braced
// list like {0} never matches it (it picks the IntArrayRef overload).
template <class S, detail::if_string<S> = 0>
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, const S& padding, IntArrayRef dilation = {1}, int64_t groups = 1) {
  return detail::conv_padding_mode(1, input, weight, bias, stride, padding, dilation, groups);
}

// weight [out_channels, in_channels / groups, kH, kW]; bias [out_channels].
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);
template <class S, detail::if_string<S> = 0>
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, const S& padding, IntArrayRef dilation = {1}, int64_t groups = 1) {
  return detail::conv_padding_mode(2, input, weight, bias, stride, padding, dilation, groups);
}

// weight [in_channels, out_channels / groups, kH, kW]; bias [out_channels].
// Output size (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
                        IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});

// The gradients of a batched conv2d (4-D operands only), what its backward
// computes; devices may run them natively. grad_output [N, O, OH, OW] with OH
// the forward's output rows; weight [O, C/groups, kH, kW].
// conv2d_backward_input: the input's gradient [N, C, input_size...].
Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_size,
                             IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
                             int64_t groups = 1);
// conv2d_backward_weight: the weight's gradient [O, C/groups, kernel_size...]
// from the input [N, C, H, W]. grad_output may have fewer rows than the
// forward makes; the missing ones count as zero.
Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, IntArrayRef kernel_size,
                              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
                              int64_t groups = 1);

// stride empty: the kernel size. padding at most half the kernel size.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, IntArrayRef dilation = {1}, bool ceil_mode = false);
// (values, indices); indices are int64 offsets into each input H*W plane.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1}, bool ceil_mode = false);
// divisor_override: a non-zero divisor for every window.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
// Window i of n over a size-L dim: [floor(i*L/n), ceil((i+1)*L/n)).
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace loom
