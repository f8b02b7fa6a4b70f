// loom/nn/conv.h — Conv1d, Conv2d, ConvTranspose2d.
//
//   loom::nn::Conv2d conv(loom::nn::Conv2dOptions(1, 32, 3).stride(1).padding(1));
//   auto y = conv(x);   // x [N, 1, H, W] (or unbatched [1, H, W])
//
// Weights are initialised as PyTorch's: kaiming_uniform_(a = √5), bias
// U(±1/√fan_in) with fan_in from the weight's shape.
#pragma once

#include <loom/nn/module.h>

namespace loom::nn {

// D = number of spatial dims. output_padding is for the transposed
// convolution only.
template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  LOOM_ARG(int64_t, in_channels);
  LOOM_ARG(int64_t, out_channels);
  LOOM_ARG(ExpandingArray<D>, kernel_size);
  LOOM_ARG(ExpandingArray<D>, stride) = 1;
  LOOM_ARG(ExpandingArray<D>, padding) = 0;
  LOOM_ARG(ExpandingArray<D>, dilation) = 1;
  LOOM_ARG(ExpandingArray<D>, output_padding) = 0;
  LOOM_ARG(int64_t, groups) = 1;
  LOOM_ARG(bool, bias) = true;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using ConvTranspose2dOptions = ConvOptions<2>;

namespace detail {
// Parameters, init and printing shared by the convolutions.
template <size_t D>
class ConvBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;  // undefined without bias

 protected:
  ConvBase(const char* type_name, const ConvOptions<D>& options, bool transposed);
  bool transposed_;
};
}  // namespace detail

// weight [out, in / groups, k]; input [N, C, L] or [C, L].
class Conv1dImpl : public detail::ConvBase<1> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv1dImpl(const Conv1dOptions& options) : ConvBase("Conv1d", options, false) {}
  LOOM_CLONE_FROM_OPTIONS(Conv1dImpl)
  Tensor forward(const Tensor& input);
};
LOOM_MODULE(Conv1d);

// weight [out, in / groups, kH, kW]; input [N, C, H, W] or [C, H, W].
class Conv2dImpl : public detail::ConvBase<2> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options) : ConvBase("Conv2d", options, false) {}
  LOOM_CLONE_FROM_OPTIONS(Conv2dImpl)
  Tensor forward(const Tensor& input);
};
LOOM_MODULE(Conv2d);

// weight [in, out / groups, kH, kW].
class ConvTranspose2dImpl : public detail::ConvBase<2> {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options)
      : ConvBase("ConvTranspose2d", options, true) {}
  LOOM_CLONE_FROM_OPTIONS(ConvTranspose2dImpl)
  Tensor forward(const Tensor& input);
};
LOOM_MODULE(ConvTranspose2d);

}  // namespace loom::nn
