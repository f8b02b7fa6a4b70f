// loom/ops/nn.h — the op catalog, part: neural-net functions (softmax, attention, normalisation, dropout, embedding, losses, pad).
// Included by loom/ops.h; the ops are defined in core/src/ops/ops_nn*.cpp, ops_attention*.cpp (and the files each section names).
#pragma once

#include <loom/tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace loom {

// ---- dropout, embedding, pad (core/src/ops/ops_dropout_embedding.cpp, ops_pad.cpp) ----

// Zeroes each element with probability p and scales the rest by 1/(1-p)
// (torch.nn.functional.dropout). The mask comes from loom's default
// generator, so manual_seed makes it reproducible, with the same mask on
// every device. training=false, p = 0 or an empty input return `input`
// itself; p = 1 gives input * 0 (zeros; NaN stays NaN, as PyTorch). p
// outside [0, 1] and non-floating inputs are errors.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
// In place: `input` becomes dropout(input, p, training); returns it.
Tensor& dropout_(Tensor& input, double p = 0.5, bool training = true);

// weight[indices] (torch.nn.functional.embedding): `weight` is 2-D
// [num_embeddings, embedding_dim], `indices` int64 or int32 of any shape;
// the result has shape indices.shape + [embedding_dim] and weight's dtype.
// An index outside [0, num_embeddings) is an error naming it. padding_idx
// (negative counts from the end) only affects gradients, so the forward
// result is the same with or without it; it is validated.
Tensor embedding(const Tensor& weight, const Tensor& indices,
                 std::optional<int64_t> padding_idx = std::nullopt);

// torch.nn.functional.pad. `pad` lists (before, after) pairs starting from the
// last dimension: {left, right, top, bottom, front, back}.
//   "constant": any number of dims (pad.size()/2 <= input.dim()), fills
//               with `value` (default 0); negative pads crop.
//   "reflect":  the last 1, 2 or 3 dims of a 2-D/3-D, 3-D/4-D or 4-D/5-D
//               input; each pad must be < that dim's size; mirrors without
//               repeating the edge.
//   "replicate": same shapes as reflect; repeats the edge element.
// `value` is only allowed with "constant".
Tensor pad(const Tensor& input, const std::vector<int64_t>& pad,
           const std::string& mode = "constant", std::optional<double> value = std::nullopt);

// ---- end of dropout, embedding, pad ------------------------------------------------

// ---- softmax, attention, normalisation, classification losses ------------------
// (torch.nn.functional semantics; defined in core/src/ops/ops_nn.cpp,
// ops_nn_norm.cpp, ops_batch_norm.cpp, ops_nn_loss.cpp and ops_cross_entropy_backward.cpp.) An undefined Tensor stands for None.

// Along `dim` (negative counts from the end). `dtype`: the input is cast to
// it first and the result has it; otherwise the input must be floating.
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);

// softmax(q kᵀ · scale + mask) v over q [..., L, E], k [..., S, E],
// v [..., S, Ev] (batch dims broadcast); scale defaults to 1/√E. A bool mask
// keeps the positions where it is true; a floating mask is added. is_causal
// keeps j <= i (and excludes attn_mask). Result [..., L, Ev].
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

// What scaled_dot_product_attention runs without dropout (ops a device may
// implement as fused kernels; docs/kernel_conventions.md, "Nn"). The fused
// forward returns (output [batch..., L, Ev], logsumexp [batch..., L]): the
// log of each row's softmax denominator, float32 for float16/bfloat16
// inputs, the input dtype otherwise. `scale` is explicit; `attn_mask` may
// be undefined; batch dims broadcast. A row whose every key is masked gives
// NaN and lse −inf.
std::tuple<Tensor, Tensor> scaled_dot_product_attention_fused(const Tensor& query, const Tensor& key,
                                                              const Tensor& value, const Tensor& attn_mask,
                                                              bool is_causal, double scale);
// Its gradient from the saved output and logsumexp: (grad_query, grad_key,
// grad_value), each with the full batch shape. Differentiable (through its
// composite), so attention has double backward.
std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    const Tensor& output, const Tensor& logsumexp, bool is_causal, double scale);

// Normalises over the trailing dims given by normalized_shape; weight and
// bias have that shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// Root-mean-square normalisation over the trailing dims given by
// normalized_shape: x / sqrt(mean(x²) + eps) · weight (weight of that
// shape, or none); eps defaults to the input dtype's machine epsilon.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
// The gradient ops layer_norm's and rms_norm's backward call: grad_input,
// then the weight's gradient (and layer_norm's bias's), of normalized_shape.
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       IntArrayRef normalized_shape, const Tensor& weight,
                                                       double eps);
std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_output, const Tensor& input,
                                             IntArrayRef normalized_shape, const Tensor& weight, double eps);
// input (N, C, *): statistics per sample over each group of C / num_groups
// channels; weight and bias are per channel [C].
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// input (N, C, *). training: normalises with the batch statistics and, when
// given, updates running_mean/running_var in place (unbiased variance,
// new = (1 - momentum) * old + momentum * batch). Otherwise uses them.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = {}, const Tensor& bias = {}, bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
// batch_norm's gradients, what its backward computes (op
// `_batch_norm_backward`; devices may run it natively): (grad_input shaped
// like input, grad_weight [C], grad_bias [C]), all of the input's dtype.
// grad_output has the input's size and dtype. training: the statistics are
// the batch's (running_mean/running_var are ignored; give none); otherwise
// the running ones (both required). weight absent acts as ones; grad_weight
// is then still Σ grad_output · x̂. Defined in core/src/ops/ops_batch_norm.cpp.
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       const Tensor& weight, const Tensor& running_mean,
                                                       const Tensor& running_var, bool training,
                                                       double eps = 1e-5);

// ---- resizing ---------------------------------------------------------------------------
// torch.nn.functional.interpolate for (N, C, d1[, d2[, d3]]) inputs: `size`
// (one value, or one per spatial dim) or `scale_factor` (likewise; output
// size floor(in * scale)), mode "nearest", "nearest-exact", "linear" (3-D),
// "bilinear" (4-D), "trilinear" (5-D) or "area"; align_corners only for the
// linear modes. recompute_scale_factor places pixels by in / out instead of
// the given scale. (ops_upsample.cpp)
Tensor interpolate(const Tensor& input, std::optional<std::vector<int64_t>> size,
                   std::optional<std::vector<double>> scale_factor = std::nullopt, const std::string& mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt);
// The op under interpolate: the output spatial size, and the scales that
// place the output pixels (in / out when absent).
Tensor upsample(const Tensor& input, IntArrayRef output_size, const std::string& mode = "nearest",
                bool align_corners = false, const std::optional<std::vector<double>>& scales = std::nullopt);

// input (N, C) or (N, C, d1, ...) or (C) of log-probabilities, target int64
// class indices (N) / (N, d1, ...) / (). reduction "none", "mean" (divided
// by the summed weights of the counted targets) or "sum".
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                const std::string& reduction = "mean", int64_t ignore_index = -100);
// The same with libtorch's reduction code (Reduction::Sum, loom/ops/loss.h).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index = -100);
// log_softmax over the class dim, then nll_loss for class-index targets;
// a floating target of the input's shape holds class probabilities.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     int64_t ignore_index = -100, const std::string& reduction = "mean",
                     double label_smoothing = 0.0);
// The gradient of cross_entropy w.r.t. `input` (input's shape and dtype)
// given `grad_output`, the gradient of its result (0-d, or for reduction
// "none" the target's shape without the class dim): what cross_entropy's
// backward computes (op `_cross_entropy_backward`, which devices may run
// natively), for both kinds of target, with the same arguments.
Tensor cross_entropy_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                              const Tensor& weight = {}, int64_t ignore_index = -100,
                              const std::string& reduction = "mean", double label_smoothing = 0.0);

}  // namespace loom
