// The activations' input gradients other than gelu's (unary_float.cpp):
// _threshold_backward (relu's), _sigmoid_backward, _tanh_backward,
// _silu_backward, _softplus_backward, _elu_backward and _leaky_relu_backward
// (core/src/ops/ops_activation_backward.cpp has their schemas and
// composites). Each is one pass of the shared functor of
// loom/plugin/scalar_ops.hpp — the CUDA plugin runs the same ones — built
// per dtype from the op's Scalar values, over binary_loops.hpp's loop. The
// core hands over grad_output and self (or the result) in the output's
// dtype and shape (broadcast dims with stride 0).
#include "binary_loops.hpp"
#include "common.hpp"
#include "kernels.hpp"
#include "unary_loops.hpp"

#include <loom/plugin/scalar_ops.hpp>

#include <utility>

namespace loom::cpu {
namespace {

// out = F(grad_output, x) with F's parameters the op's values, in order.
template <template <class> class F, size_t... I>
void activation_backward(const LoomKernelCall& c, const char* name, std::index_sequence<I...>) {
  expect_arity(c, name, 2, 1);
  expect_values(c, name, static_cast<int32_t>(sizeof...(I)));
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 2; ++i) expect_like(c.inputs[i], out, name);
  dispatch<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const F<T> f{scalar_arg<opmath_t<T>>(c, name, static_cast<int32_t>(I))...};
    apply_elementwise<T>(out, f, In<T>{c.inputs[0]}, In<T>{c.inputs[1]});
  });
}

#define LOOM_CPU_ACTIVATION_BACKWARD(fn, op, Functor, values)                                 \
  void fn(const LoomKernelCall& c) {                                                           \
    activation_backward<plugin::ops::Functor>(c, op, std::make_index_sequence<values>{});      \
  }
LOOM_PLUGIN_ACTIVATION_BACKWARD_OPS(LOOM_CPU_ACTIVATION_BACKWARD)
#undef LOOM_CPU_ACTIVATION_BACKWARD

}  // namespace

void register_activation_backward_kernels(plugin::Registrar& r) {
#define LOOM_CPU_REGISTER(fn, op, Functor, values) r.kernel(op, "cpu", plugin::kernel<fn>, kFloatingMask);
  LOOM_PLUGIN_ACTIVATION_BACKWARD_OPS(LOOM_CPU_REGISTER)
#undef LOOM_CPU_REGISTER
}

}  // namespace loom::cpu
