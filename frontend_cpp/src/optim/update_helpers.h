// update_helpers.h — small pieces every optimizer's step() shares (internal).
#pragma once

#include <loom/error.h>
#include <loom/ops.h>
#include <loom/optim/optimizer.h>

namespace loom::optim::detail {

// A wrapped-number 0-d tensor on `like`'s device: the in-place ops take
// tensors, and a wrapped number keeps `like`'s dtype (no promotion).
inline Tensor number_like(double value, const Tensor& like) { return scalar_tensor(value, like.device()); }

// The gradient the update uses: negated under `maximize`, plus
// weight_decay * p (L2 penalty) when weight_decay is not zero.
inline Tensor effective_grad(const Tensor& param, bool maximize, double weight_decay) {
  Tensor grad = param.grad();
  if (maximize) grad = grad.neg();
  if (weight_decay != 0) grad = grad.add(param, weight_decay);
  return grad;
}

// Throws a clear error when an option is out of range.
inline void check_option(bool ok, const char* optimizer, const char* option, double value) {
  LOOM_CHECK(ok, "optim: ", optimizer, ": invalid ", option, " value: ", value);
}

}  // namespace loom::optim::detail
