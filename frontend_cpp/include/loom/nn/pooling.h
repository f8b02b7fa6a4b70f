// loom/nn/pooling.h — MaxPool2d, AvgPool2d, AdaptiveAvgPool2d.
#pragma once

#include <loom/nn/module.h>
#include <loom/ops.h>

#include <optional>

namespace loom::nn {

struct MaxPool2dOptions {
  MaxPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  LOOM_ARG(ExpandingArray<2>, kernel_size);
  // Defaults to kernel_size.
  LOOM_ARG(std::optional<ExpandingArray<2>>, stride);
  LOOM_ARG(ExpandingArray<2>, padding) = 0;
  LOOM_ARG(ExpandingArray<2>, dilation) = 1;
  LOOM_ARG(bool, ceil_mode) = false;
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Module("MaxPool2d"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(MaxPool2dImpl)
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

  MaxPool2dOptions options;
};
LOOM_MODULE(MaxPool2d);

struct AvgPool2dOptions {
  AvgPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  LOOM_ARG(ExpandingArray<2>, kernel_size);
  LOOM_ARG(std::optional<ExpandingArray<2>>, stride);
  LOOM_ARG(ExpandingArray<2>, padding) = 0;
  LOOM_ARG(bool, ceil_mode) = false;
  LOOM_ARG(bool, count_include_pad) = true;
  LOOM_ARG(std::optional<int64_t>, divisor_override);
};

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Module("AvgPool2d"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(AvgPool2dImpl)
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

  AvgPool2dOptions options;
};
LOOM_MODULE(AvgPool2d);

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}  // NOLINT
  LOOM_ARG(ExpandingArray<2>, output_size);
};

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size) : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
      : Module("AdaptiveAvgPool2d"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(AdaptiveAvgPool2dImpl)
  Tensor forward(const Tensor& input) { return adaptive_avg_pool2d(input, options.output_size()); }
  std::string extra_repr() const override;

  AdaptiveAvgPool2dOptions options;
};
LOOM_MODULE(AdaptiveAvgPool2d);

}  // namespace loom::nn
