// ops_activation_backward.cpp — activations' input gradients as catalog ops
// (activation_backward.h):
//   _gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor
//   _threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor
//   _sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor
//   _tanh_backward(Tensor grad_output, Tensor output) -> Tensor
//   _silu_backward(Tensor grad_output, Tensor self) -> Tensor
//   _softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor
//   _elu_backward(Tensor grad_output, Tensor self, Scalar alpha, Scalar scale, Scalar input_scale) -> Tensor
//   _leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope) -> Tensor
//   _hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor
// Each op's composite is the formula in elementwise ops, so every device
// runs it; the CPU and CUDA plugins register one-pass kernels (the math is
// loom/plugin/scalar_ops.hpp's, shared by both). Their own gradients
// (double backward) come from differentiating the composite.
#include "activation_backward.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <numbers>
#include <string_view>

namespace loom {
namespace {

using detail::str_of;

// grad_output and self broadcast together, in their promoted floating dtype.
void prepare_activation_backward(OpCall& call) {
  const std::string& op = call.op->name();
  const DType g = call.arg(0).dtype(), x = call.arg(1).dtype();
  LOOM_CHECK(is_floating_point(g) && is_floating_point(x), op,
             ": expected floating point grad_output and self, got ", name(g), " and ", name(x));
  const DType t = promote_types(g, x);
  prepare_elementwise(call, t, t);
}

void prepare_gelu_backward(OpCall& call) {
  const LoomValue& v = call.values[0];
  LOOM_CHECK(v.kind == LOOM_VALUE_STRING && (str_of(v) == "none" || str_of(v) == "tanh"), call.op->name(),
             ": approximate must be 'none' or 'tanh', got '", v.kind == LOOM_VALUE_STRING ? str_of(v) : "?", "'");
  prepare_activation_backward(call);
}

// d/dx of x Phi(x) (Phi the normal CDF), or of its tanh approximation
// x/2 (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi); computed in float32
// or wider.
void gelu_backward_composite(OpCall& call) {
  const DType out = call.outputs[0].dtype;
  const DType wide = out == DType::Float64 ? out : DType::Float32;
  const Tensor g = call.arg(0).to(wide), x = call.arg(1).to(wide);
  Tensor r;
  if (str_of(call.values[0]) == "tanh") {
    constexpr double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi, k3 = 0.044715;
    const Tensor t = tanh((x + x * x * x * k3) * k);
    const Tensor inner_dx = (x * x * (3 * k3) + 1.0) * k;
    // Where t is exactly ±1 the second term is 0; computed, it is 0·∞ = NaN
    // once x² overflows (|x| > 1.8e19 in float32, well inside the range).
    const Tensor sech2 = 1.0 - t * t;
    r = g * ((t + 1.0) * 0.5 + where(sech2 != 0.0, x * 0.5 * sech2 * inner_dx, 0.0));
  } else {
    constexpr double inv_sqrt2 = 1.0 / std::numbers::sqrt2;
    const Tensor cdf = (erf(x * inv_sqrt2) + 1.0) * 0.5;
    const Tensor pdf = exp(x * x * -0.5) * (inv_sqrt2 * std::numbers::inv_sqrtpi);
    r = g * (cdf + x * pdf);
  }
  call.result() = r.to(out);
}

LOOM_CORE_OP(gelu_backward_def, "_gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
             prepare_gelu_backward, gelu_backward_composite)

// The others: grad_output (g) and the activation's input or result (x) in
// float32 or wider, the result cast back to the promoted dtype.
template <class Formula>
void activation_backward_composite(OpCall& call, Formula formula) {
  const DType out = call.outputs[0].dtype;
  const DType wide = out == DType::Float64 ? out : DType::Float32;
  call.result() = formula(call.arg(0).to(wide), call.arg(1).to(wide), call).to(out);
}

Scalar value(const OpCall& call, size_t i) { return detail::scalar_from_value(call.values[i]); }

#define LOOM_ACTIVATION_BACKWARD(def, schema, expr)                                                   \
  LOOM_CORE_OP(def, schema, prepare_activation_backward, [](OpCall& call) {                          \
    activation_backward_composite(call, [](const Tensor& g, const Tensor& x, const OpCall& c) {      \
      (void)c;                                                                                        \
      return expr;                                                                                    \
    });                                                                                               \
  })

LOOM_ACTIVATION_BACKWARD(threshold_backward_def,
                         "_threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
                         where(x <= value(c, 0), 0.0, g))
LOOM_ACTIVATION_BACKWARD(sigmoid_backward_def, "_sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
                         g * (x * (1.0 - x)))
LOOM_ACTIVATION_BACKWARD(tanh_backward_def, "_tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
                         g * (1.0 - x * x))
LOOM_ACTIVATION_BACKWARD(silu_backward_def, "_silu_backward(Tensor grad_output, Tensor self) -> Tensor",
                         g * (sigmoid(x) * (x * (1.0 - sigmoid(x)) + 1.0)))
LOOM_ACTIVATION_BACKWARD(softplus_backward_def,
                         "_softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
                         where(x * value(c, 0) > value(c, 1), g, g * sigmoid(x * value(c, 0))))
LOOM_ACTIVATION_BACKWARD(elu_backward_def,
                         "_elu_backward(Tensor grad_output, Tensor self, Scalar alpha, Scalar scale, "
                         "Scalar input_scale) -> Tensor",
                         where(x > 0, g * value(c, 1),
                               g * exp(x * value(c, 2)) *
                                   (value(c, 0).to_double() * value(c, 1).to_double() * value(c, 2).to_double())))
LOOM_ACTIVATION_BACKWARD(leaky_relu_backward_def,
                         "_leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope) -> Tensor",
                         where(x > 0, g, g * value(c, 0)))
// NaN passes, as PyTorch's: only the comparisons that hold are zeroed. The
// bounds are rounded to the result's dtype first (as the kernels, and
// PyTorch's min.to<scalar_t>()).
Tensor bound_in(const OpCall& c, size_t i, const Tensor& like) {
  return full({}, value(c, i), c.outputs[0].dtype, like.device()).to(like.dtype());
}
LOOM_ACTIVATION_BACKWARD(hardtanh_backward_def,
                         "_hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
                         where((x <= bound_in(c, 0, x)).logical_or(x >= bound_in(c, 1, x)), 0.0, g))
#undef LOOM_ACTIVATION_BACKWARD

}  // namespace

namespace detail {
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate) {
  return run_op(gelu_backward_def(), {&grad_output, &self}, {string_value(approximate)});
}
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, Scalar threshold) {
  return run_op(threshold_backward_def(), {&grad_output, &self}, {threshold.abi()});
}
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  return run_op(sigmoid_backward_def(), {&grad_output, &output});
}
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  return run_op(tanh_backward_def(), {&grad_output, &output});
}
Tensor silu_backward(const Tensor& grad_output, const Tensor& self) {
  return run_op(silu_backward_def(), {&grad_output, &self});
}
Tensor softplus_backward(const Tensor& grad_output, const Tensor& self, Scalar beta, Scalar threshold) {
  return run_op(softplus_backward_def(), {&grad_output, &self}, {beta.abi(), threshold.abi()});
}
Tensor elu_backward(const Tensor& grad_output, const Tensor& self, Scalar alpha, Scalar scale, Scalar input_scale) {
  return run_op(elu_backward_def(), {&grad_output, &self}, {alpha.abi(), scale.abi(), input_scale.abi()});
}
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self, Scalar negative_slope) {
  return run_op(leaky_relu_backward_def(), {&grad_output, &self}, {negative_slope.abi()});
}
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, Scalar min_val, Scalar max_val) {
  return run_op(hardtanh_backward_def(), {&grad_output, &self}, {min_val.abi(), max_val.abi()});
}
}  // namespace detail

}  // namespace loom
