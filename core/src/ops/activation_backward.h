// activation_backward.h (core-internal) — activations' input gradients as
// ops of the catalog (ops_activation_backward.cpp), which their derivatives
// call: a device with a kernel for one runs a single fused pass where the
// formula would take a chain of elementwise ops; a device without runs the
// op's composite, the formula itself.
#pragma once

#include <loom/scalar.h>
#include <loom/tensor.h>

#include <string>

namespace loom::detail {

// grad_output times gelu's slope at self, for approximate 'none' or 'tanh'.
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate);
// grad_output where self > threshold, else 0 (relu's, with its result).
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, Scalar threshold);
// Of sigmoid and tanh, from their result.
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output);
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output);
// Of silu, softplus, elu and leaky_relu, from their input and parameters.
Tensor silu_backward(const Tensor& grad_output, const Tensor& self);
Tensor softplus_backward(const Tensor& grad_output, const Tensor& self, Scalar beta, Scalar threshold);
Tensor elu_backward(const Tensor& grad_output, const Tensor& self, Scalar alpha, Scalar scale, Scalar input_scale);
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self, Scalar negative_slope);
// Of hardtanh: grad_output strictly inside (min_val, max_val), else 0.
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, Scalar min_val, Scalar max_val);

}  // namespace loom::detail
