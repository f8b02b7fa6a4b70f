// layer_util.h (loom::nn internal) — small helpers the layer sources share.
#pragma once

#include <loom/tensor.h>

#include <optional>

namespace loom::nn::detail {

// An absent (undefined) bias as the ops' std::optional.
inline std::optional<Tensor> optional_bias(const Tensor& bias) {
  return bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
}

// Python's spelling, as PyTorch's reprs print booleans.
inline const char* py_bool(bool b) { return b ? "True" : "False"; }

}  // namespace loom::nn::detail
