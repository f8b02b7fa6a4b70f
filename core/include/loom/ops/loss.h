// loom/ops/loss.h — the op catalog, part: loss functions (mse, l1, smooth_l1,
// huber, binary_cross_entropy, binary_cross_entropy_with_logits).
// Included by loom/ops.h; the ops are defined in core/src/ops/ops_loss.cpp.
//
// torch.nn.functional semantics (torch 1.13). `reduction` is "none" (the
// elementwise loss, broadcast shape), "mean" (default) or "sum" (0-d
// results); any other string is an error naming it. The losses are
// composites of other loom ops, so every device runs them and autograd will
// differentiate them through their parts.
#pragma once

#include <loom/tensor.h>

#include <string>

namespace loom {

// (input - target)^2. input and target must broadcast; the result dtype is
// their promotion, which must be floating (integer tensors are rejected).
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
// |input - target|; integers are allowed with reduction "none" or "sum"
// (mean needs a floating dtype), as PyTorch.
Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
// |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta, with d = input - target;
// beta = 0 is l1_loss, beta < 0 is an error.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const std::string& reduction = "mean", double beta = 1.0);
// |d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta); delta must be > 0.
Tensor huber_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
                  double delta = 1.0);
// -w (t log(x) + (1 - t) log(1 - x)), each log clamped at -100. input,
// target must have the same shape and a floating dtype; every input element
// must lie in [0, 1] (checked: the check reads the data). `weight`
// (optional, undefined = none) broadcasts to the input's shape.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const Tensor& weight = Tensor(),
                            const std::string& reduction = "mean");
// The stable form of binary_cross_entropy(sigmoid(input), target):
// (1 - t) x + l (log(1 + e^-|x|) + max(-x, 0)), l = 1 + (pos_weight - 1) t,
// times `weight`. Same shapes required; weight and pos_weight broadcast.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(),
                                        const std::string& reduction = "mean");

// ---- libtorch's reduction codes ------------------------------------------------------
// torch::nll_loss(out, target, {}, Reduction::Sum) and the other ATen-style
// calls pass the reduction as at::Reduction's code; these overloads take it.
namespace Reduction {
enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };
}  // namespace Reduction
// "none", "mean" or "sum"; loom::Error for another code.
std::string reduction_name(int64_t reduction);

inline Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction::Reduction reduction) {
  return mse_loss(input, target, reduction_name(reduction));
}
inline Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction::Reduction reduction) {
  return l1_loss(input, target, reduction_name(reduction));
}
inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction::Reduction reduction,
                             double beta = 1.0) {
  return smooth_l1_loss(input, target, reduction_name(reduction), beta);
}
inline Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction::Reduction reduction,
                         double delta = 1.0) {
  return huber_loss(input, target, reduction_name(reduction), delta);
}
inline Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction::Reduction reduction) {
  return binary_cross_entropy(input, target, weight, reduction_name(reduction));
}
inline Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                               const Tensor& pos_weight, Reduction::Reduction reduction) {
  return binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_name(reduction));
}

}  // namespace loom
