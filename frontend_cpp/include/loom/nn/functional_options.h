// loom/nn/functional_options.h — the options of loom::nn::functional's
// calls, libtorch's F::*FuncOptions:
//
//   namespace F = loom::nn::functional;
//   F::dropout(x, F::DropoutFuncOptions().p(0.2).training(is_training()));
//   F::max_pool2d(x, F::MaxPool2dFuncOptions(2).stride(2));
//   F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(loom::kBilinear));
//   F::nll_loss(out, target, F::NLLLossFuncOptions().reduction(loom::kSum));
//
// A loss's FuncOptions are its module's options (loss_options.h).
#pragma once

#include <loom/nn/holder.h>
#include <loom/nn/loss_options.h>
#include <loom/tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace loom::nn::functional {

using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;

struct ReLUFuncOptions {
  ReLUFuncOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  LOOM_ARG(bool, inplace);
};
struct LeakyReLUFuncOptions {
  LOOM_ARG(double, negative_slope) = 1e-2;
  LOOM_ARG(bool, inplace) = false;
};
struct HardtanhFuncOptions {
  LOOM_ARG(double, min_val) = -1.0;
  LOOM_ARG(double, max_val) = 1.0;
  LOOM_ARG(bool, inplace) = false;
};
struct ReLU6FuncOptions {
  ReLU6FuncOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  LOOM_ARG(bool, inplace);
};
struct ELUFuncOptions {
  LOOM_ARG(double, alpha) = 1.0;
  LOOM_ARG(bool, inplace) = false;
};
struct SoftplusFuncOptions {
  LOOM_ARG(double, beta) = 1.0;
  LOOM_ARG(double, threshold) = 20.0;
};
struct GELUFuncOptions {
  LOOM_ARG(std::string, approximate) = "none";
};

struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: F::softmax(x, 1)
  LOOM_ARG(int64_t, dim);
  LOOM_ARG(std::optional<DType>, dtype);
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

// Dropout of elements (dropout) or of whole channels (dropout1d/2d/3d).
struct DropoutFuncOptions {
  DropoutFuncOptions(double p = 0.5) : p_(p) {}  // NOLINT
  LOOM_ARG(double, p);
  LOOM_ARG(bool, training) = true;
  LOOM_ARG(bool, inplace) = false;
};
using Dropout1dFuncOptions = DropoutFuncOptions;
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;

struct MaxPool2dFuncOptions {
  MaxPool2dFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  LOOM_ARG(ExpandingArray<2>, kernel_size);
  LOOM_ARG(ExpandingArray<2>, stride);  // the kernel size by default
  LOOM_ARG(ExpandingArray<2>, padding) = 0;
  LOOM_ARG(ExpandingArray<2>, dilation) = 1;
  LOOM_ARG(bool, ceil_mode) = false;
};
struct AvgPool2dFuncOptions {
  AvgPool2dFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  LOOM_ARG(ExpandingArray<2>, kernel_size);
  LOOM_ARG(ExpandingArray<2>, stride);
  LOOM_ARG(ExpandingArray<2>, padding) = 0;
  LOOM_ARG(bool, ceil_mode) = false;
  LOOM_ARG(bool, count_include_pad) = true;
  LOOM_ARG(std::optional<int64_t>, divisor_override);
};
struct AdaptiveAvgPool2dFuncOptions {
  AdaptiveAvgPool2dFuncOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}  // NOLINT
  LOOM_ARG(ExpandingArray<2>, output_size);
};

struct Conv2dFuncOptions {
  LOOM_ARG(Tensor, bias);
  LOOM_ARG(ExpandingArray<2>, stride) = 1;
  LOOM_ARG(ExpandingArray<2>, padding) = 0;
  LOOM_ARG(ExpandingArray<2>, dilation) = 1;
  LOOM_ARG(int64_t, groups) = 1;
};

// size or scale_factor (one value per spatial dim, or one for all).
struct InterpolateFuncOptions {
  LOOM_ARG(std::optional<std::vector<int64_t>>, size);
  LOOM_ARG(std::optional<std::vector<double>>, scale_factor);
  LOOM_ARG(std::string, mode) = "nearest";
  LOOM_ARG(std::optional<bool>, align_corners);
  LOOM_ARG(std::optional<bool>, recompute_scale_factor);
};

struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT
  LOOM_ARG(std::vector<int64_t>, pad);
  LOOM_ARG(std::string, mode) = "constant";
  LOOM_ARG(double, value) = 0.0;
};

struct NormalizeFuncOptions {
  LOOM_ARG(double, p) = 2.0;
  LOOM_ARG(int64_t, dim) = 1;
  LOOM_ARG(double, eps) = 1e-12;
};
struct CosineSimilarityFuncOptions {
  LOOM_ARG(int64_t, dim) = 1;
  LOOM_ARG(double, eps) = 1e-8;
};

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  LOOM_ARG(std::vector<int64_t>, normalized_shape);
  LOOM_ARG(Tensor, weight);
  LOOM_ARG(Tensor, bias);
  LOOM_ARG(double, eps) = 1e-5;
};
struct BatchNormFuncOptions {
  LOOM_ARG(Tensor, weight);
  LOOM_ARG(Tensor, bias);
  LOOM_ARG(bool, training) = false;
  LOOM_ARG(double, momentum) = 0.1;
  LOOM_ARG(double, eps) = 1e-5;
};

}  // namespace loom::nn::functional
