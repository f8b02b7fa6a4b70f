// ops_activation_backward.cpp — activations' input gradients as catalog ops
// (activation_backward.h):
//   _gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor
// Each op's composite is the formula in elementwise ops, so every device
// runs it; the CPU and CUDA plugins register one-pass kernels. Their own
// gradients (double backward) come from differentiating the composite.
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

}  // namespace

namespace detail {
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate) {
  return run_op(gelu_backward_def(), {&grad_output, &self}, {string_value(approximate)});
}
}  // namespace detail

}  // namespace loom
