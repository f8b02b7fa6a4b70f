// loom/optim/clip_grad.h — gradient clipping (torch.nn.utils.clip_grad_*),
// also under libtorch's loom::nn::utils:
//
//   loss.backward();
//   double norm = loom::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
//   opt.step();
#pragma once

#include <loom/tensor.h>

#include <limits>
#include <vector>

namespace loom::optim {

// Scales every gradient by max_norm / (total_norm + 1e-6) when that is below
// 1, where total_norm is the norm_type-norm of all gradients together
// (norm_type = infinity: the largest |element|). Returns total_norm.
// Parameters without a gradient are skipped; error_if_nonfinite makes a
// NaN or infinite total norm an error instead of scaling by it.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// Clamps every gradient element to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

inline constexpr double kInfNorm = std::numeric_limits<double>::infinity();

// One tensor's gradient, as libtorch's overloads.
inline double clip_grad_norm_(const Tensor& param, double max_norm, double norm_type = 2.0,
                              bool error_if_nonfinite = false) {
  return clip_grad_norm_(std::vector<Tensor>{param}, max_norm, norm_type, error_if_nonfinite);
}
inline void clip_grad_value_(const Tensor& param, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{param}, clip_value);
}

}  // namespace loom::optim

namespace loom::nn::utils {
using optim::clip_grad_norm_;
using optim::clip_grad_value_;
}  // namespace loom::nn::utils
