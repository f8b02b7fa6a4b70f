// loom/nn/functional.h — loom::nn::functional: the losses with module-style
// options, plus the stateless ops of the catalog under their
// torch.nn.functional names.
//
//   namespace F = loom::nn::functional;
//   auto loss = F::cross_entropy(logits, target,
//                                loom::nn::CrossEntropyLossOptions().label_smoothing(0.1));
#pragma once

#include <loom/nn/loss_options.h>
#include <loom/ops.h>

namespace loom::nn::functional {

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossOptions& options = {});
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossOptions& options = {});
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossOptions& options = {});
// input log-probabilities (N, C, ...), target int64 class indices (N, ...).
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossOptions& options = {});
// input logits (N, C, ...); target class indices (N, ...) or class
// probabilities of the input's shape.
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyLossOptions& options = {});
// input probabilities in [0, 1], target of the same shape.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BCELossOptions& options = {});
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BCEWithLogitsLossOptions& options = {});

// The catalog's stateless functions, as torch.nn.functional has them.
using loom::adaptive_avg_pool2d;
using loom::avg_pool2d;
using loom::batch_norm;
using loom::conv1d;
using loom::conv2d;
using loom::conv_transpose2d;
using loom::dropout;
using loom::elu;
using loom::embedding;
using loom::gelu;
using loom::group_norm;
using loom::layer_norm;
using loom::leaky_relu;
using loom::linear;
using loom::log_softmax;
using loom::max_pool2d;
using loom::pad;
using loom::relu;
using loom::scaled_dot_product_attention;
using loom::sigmoid;
using loom::silu;
using loom::softmax;
using loom::softplus;
using loom::tanh;

}  // namespace loom::nn::functional
