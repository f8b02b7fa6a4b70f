// loom/nn/functional.h — loom::nn::functional: the losses with module-style
// options, plus the stateless ops of the catalog under their
// torch.nn.functional names.
//
//   namespace F = loom::nn::functional;
//   auto loss = F::cross_entropy(logits, target,
//                                loom::nn::CrossEntropyLossOptions().label_smoothing(0.1));
#pragma once

#include <loom/nn/functional_options.h>
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

// ---- libtorch's FuncOptions forms (functional_options.h) ---------------------------------
// `inplace` options are accepted for relu, hardtanh and relu6 (which have
// an in-place op); the others compute out of place and return the result (the input keeps its
// values), which is what code that uses the returned tensor sees.
Tensor relu(const Tensor& input, const ReLUFuncOptions& options);
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options);
// clamp to [min_val, max_val] with a gradient of 0 at the bounds; relu6 is
// hardtanh to [0, 6]. min_val > max_val is an error.
Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options = {});
Tensor relu6(const Tensor& input, const ReLU6FuncOptions& options = {});
Tensor elu(const Tensor& input, const ELUFuncOptions& options);
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options);
Tensor gelu(const Tensor& input, const GELUFuncOptions& options);
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options);
// Zeroes whole channels (dim 1 of a batched input, dim 0 of an unbatched
// one) with probability p, scaling the rest by 1 / (1 - p): inputs of
// 2 or 3 dims (dropout1d), 3 or 4 (dropout2d), 4 or 5 (dropout3d).
Tensor dropout1d(const Tensor& input, const Dropout1dFuncOptions& options = {});
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {});
Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options = {});
// The channel dropout above for a `batched_dims`-dim batched input (in
// place: multiplies `input` by the mask); `fn` names the caller in errors
// (Python's dropout1d/2d/3d use this too).
Tensor feature_dropout(const Tensor& input, double p, bool training, bool inplace, int64_t batched_dims,
                       const char* fn);
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options);
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options);
Tensor pad(const Tensor& input, const PadFuncOptions& options);
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options);
// input / max(||input||_p along dim, eps).
Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options = {});
// sum(x1 * x2) / max(||x1|| ||x2||, eps) along dim (inputs broadcast).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});
// int64 class indices -> int64 one-hot rows with a trailing dim of
// num_classes (max + 1 when -1).
Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1);

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
using loom::interpolate;
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
