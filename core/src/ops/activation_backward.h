// activation_backward.h (core-internal) — activations' input gradients as
// ops of the catalog (ops_activation_backward.cpp), which their derivatives
// call: a device with a kernel for one runs a single fused pass where the
// formula would take a chain of elementwise ops; a device without runs the
// op's composite, the formula itself.
#pragma once

#include <loom/tensor.h>

#include <string>

namespace loom::detail {

// grad_output times gelu's slope at self, for approximate 'none' or 'tanh'.
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate);

}  // namespace loom::detail
