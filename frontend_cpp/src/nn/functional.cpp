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
