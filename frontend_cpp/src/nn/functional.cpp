// functional.cpp — loom::nn::functional losses: the catalog's loss ops
// called with module-style options.
#include <loom/nn/functional.h>

namespace loom::nn::functional {

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossOptions& options) {
  return loom::mse_loss(input, target, options.reduction());
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossOptions& options) {
  return loom::l1_loss(input, target, options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossOptions& options) {
  return loom::smooth_l1_loss(input, target, options.reduction(), options.beta());
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossOptions& options) {
  return loom::nll_loss(input, target, options.weight(), options.reduction(), options.ignore_index());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyLossOptions& options) {
  LOOM_CHECK(options.label_smoothing() >= 0.0 && options.label_smoothing() <= 1.0,
             "cross_entropy: label_smoothing must be in [0, 1], got ", options.label_smoothing());
  return loom::cross_entropy(input, target, options.weight(), options.ignore_index(),
                             options.reduction(), options.label_smoothing());
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BCELossOptions& options) {
  return loom::binary_cross_entropy(input, target, options.weight(), options.reduction());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BCEWithLogitsLossOptions& options) {
  return loom::binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(),
                                                options.reduction());
}

}  // namespace loom::nn::functional

namespace loom::nn::functional {

Tensor relu(const Tensor& input, const ReLUFuncOptions& options) {
  if (options.inplace()) {
    Tensor t = input;
    return t.relu_();
  }
  return loom::relu(input);
}
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options) {
  return loom::leaky_relu(input, options.negative_slope());
}
Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options) {
  LOOM_CHECK(options.min_val() <= options.max_val(), "hardtanh: min_val (", options.min_val(),
             ") cannot be greater than max_val (", options.max_val(), ")");
  if (options.inplace()) {
    Tensor t = input;
    return loom::hardtanh_(t, options.min_val(), options.max_val());
  }
  return loom::hardtanh(input, options.min_val(), options.max_val());
}
Tensor relu6(const Tensor& input, const ReLU6FuncOptions& options) {
  return hardtanh(input, HardtanhFuncOptions().min_val(0).max_val(6).inplace(options.inplace()));
}
Tensor elu(const Tensor& input, const ELUFuncOptions& options) { return loom::elu(input, options.alpha()); }
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options) {
  return loom::softplus(input, options.beta(), options.threshold());
}
Tensor gelu(const Tensor& input, const GELUFuncOptions& options) { return loom::gelu(input, options.approximate()); }
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  return loom::softmax(input, options.dim(), options.dtype());
}
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  return loom::log_softmax(input, options.dim(), options.dtype());
}
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options) {
  return loom::dropout(input, options.p(), options.training());
}

Tensor feature_dropout(const Tensor& input, double p, bool training, bool inplace, int64_t batched_dims,
                       const char* fn) {
  LOOM_CHECK(p >= 0.0 && p <= 1.0, "dropout probability has to be between 0 and 1, but got ", p);
  LOOM_CHECK(input.dim() == batched_dims - 1 || input.dim() == batched_dims, fn, ": Expected ", batched_dims - 1, "D or ",
             batched_dims, "D input, but received a ", input.dim(), "D input");
  if (!training || p == 0 || input.numel() == 0) return input;
  Tensor target = input;
  if (p == 1) return inplace ? target.zero_() : input * 0.0;
  // One draw per (sample, channel), broadcast over the rest.
  const int64_t lead = input.dim() == batched_dims ? 2 : 1;
  DimVector mask_shape;
  for (int64_t d = 0; d < input.dim(); ++d) mask_shape.push_back(d < lead ? input.size(d) : 1);
  const Tensor keep = lt(rand(mask_shape, DType::Float32, input.device()), scalar_tensor(1.0 - p, input.device()));
  const Tensor mask = keep.to(input.dtype()) * (1.0 / (1.0 - p));
  return inplace ? target.mul_(mask) : input * mask;
}
Tensor dropout1d(const Tensor& input, const Dropout1dFuncOptions& options) {
  return feature_dropout(input, options.p(), options.training(), options.inplace(), 3, "dropout1d");
}
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options) {
  return feature_dropout(input, options.p(), options.training(), options.inplace(), 4, "dropout2d");
}
Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options) {
  return feature_dropout(input, options.p(), options.training(), options.inplace(), 5, "dropout3d");
}

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return loom::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return loom::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                          o.divisor_override());
}
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return loom::adaptive_avg_pool2d(input, o.output_size());
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& o) {
  return loom::conv2d(input, weight, o.bias().defined() ? std::optional<Tensor>(o.bias()) : std::nullopt, o.stride(),
                      o.padding(), o.dilation(), o.groups());
}
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  return loom::interpolate(input, o.size(), o.scale_factor(), o.mode(), o.align_corners(), o.recompute_scale_factor());
}
Tensor pad(const Tensor& input, const PadFuncOptions& o) {
  return loom::pad(input, o.pad(), o.mode(), o.mode() == "constant" ? std::optional<double>(o.value()) : std::nullopt);
}
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  return loom::layer_norm(input, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& o) {
  return loom::batch_norm(input, running_mean, running_var, o.weight(), o.bias(), o.training(), o.momentum(), o.eps());
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& o) {
  return input / loom::norm(input, o.p(), IntArrayRef(o.dim()), true).clamp_min(o.eps());
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& o) {
  // ATen's: the norms' product clamped at eps, not each norm.
  const Tensor dot = (x1 * x2).sum(IntArrayRef(o.dim()));
  const Tensor n12 = loom::norm(x1, 2, IntArrayRef(o.dim())) * loom::norm(x2, 2, IntArrayRef(o.dim()));
  return dot / n12.clamp_min(o.eps());
}

Tensor one_hot(const Tensor& tensor, int64_t num_classes) {
  LOOM_CHECK(tensor.dtype() == kLong, "one_hot is only applicable to index tensor of type int64, got ",
             name(tensor.dtype()));
  if (tensor.numel() > 0) {
    LOOM_CHECK(tensor.min().item<int64_t>() >= 0, "one_hot: Class values must be non-negative.");
    const int64_t top = tensor.max().item<int64_t>();
    if (num_classes == -1)
      num_classes = top + 1;
    else
      LOOM_CHECK(top < num_classes, "one_hot: Class values must be smaller than num_classes (", num_classes,
                 "), got ", top);
  } else {
    LOOM_CHECK(num_classes != -1, "one_hot: Can not infer total number of classes from empty tensor.");
  }
  const Tensor classes = arange(num_classes, TensorOptions(kLong).device(tensor.device()));
  return eq(tensor.unsqueeze(-1), classes).to(kLong);
}

}  // namespace loom::nn::functional
