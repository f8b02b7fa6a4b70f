// The fused optimizer kernels (_adam_update_, _adam_step_, _sgd_step_): one pass over a
// parameter instead of the composites' four to five ops and their
// temporaries. Functors: binary_ops.cuh (AdamUpdate, AdamStep), shared with
// the elementwise loops.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "binary_ops.cuh"
#include "device_blocks.hpp"
#include "elementwise_args.hpp"
#include "loops.cuh"
#include "vendor/gpu_target.hpp"

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace ew {
namespace {

// inputs: self, exp_avg, exp_avg_sq (cast and broadcast to self by the
// core); values: step_size, eps; output: self. One pass per parameter
// instead of the composite's four ops and two temporaries.
void adam_update(const LoomKernelCall& c) {
  constexpr const char* name = "_adam_update_";
  expect_arity(c, name, 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, name);
  if (c.num_values < 2) fail_args(name, "expected step_size and eps");
  const double step_size = c.values[0].u.f, eps = c.values[1].u.f;
  visit<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    elementwise<T, T, T, T>(out, {&c.inputs[0], &c.inputs[1], &c.inputs[2]}, AdamUpdate<T>{step_size, eps},
                            enter(c), name);
  });
}

// One pass of a whole optimizer step over a dense parameter: f(p, g,
// state...) per element, the state (Adam's two averages, SGD's buffer)
// written back in place.
template <class T, class F, class... State>
__global__ void step_kernel(F f, int64_t n, T* p, const T* g, State*... state) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    T pi = p[i];
    f(pi, g[i], state[i]...);
    p[i] = pi;
  }
}

// What the fused steps share: inputs (self, grad, then States state
// tensors), each of self's dtype and shape, and `values` values (`expected`
// names them); output self. One launch of step_kernel with make(T{}) as the
// functor. Dense tensors only, else declined to the composite.
template <int States, class Make>
void dense_step(const LoomKernelCall& c, const char* name, int32_t values, const char* expected, Make make) {
  constexpr int32_t inputs = 2 + States;
  expect_arity(c, name, inputs, 1);
  if (c.num_values < values) fail_args(name, expected);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < inputs; ++i) expect_like(c.inputs[i], out, name);
  if (!plugin::is_contiguous(out))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + name + ": dense tensors only");
  for (int32_t i = 1; i < inputs; ++i)
    if (!plugin::is_contiguous(c.inputs[i]))
      throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + name + ": dense tensors only");
  const int64_t n = plugin::numel(out);
  const cudaStream_t s = enter(c);
  if (n == 0) return;
  visit<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    T* p = plugin::data_ptr<T>(out);
    const T* g = plugin::data_ptr<const T>(c.inputs[1]);
    if constexpr (States == 2)
      step_kernel<<<grid_for(n), kBlock, 0, s>>>(make(tag), n, p, g, plugin::data_ptr<T>(c.inputs[2]),
                                                 plugin::data_ptr<T>(c.inputs[3]));
    else
      step_kernel<<<grid_for(n), kBlock, 0, s>>>(make(tag), n, p, g, plugin::data_ptr<T>(c.inputs[2]));
  });
  check(cudaGetLastError(), out.device.index, name);
}

// _adam_step_: inputs self, grad, exp_avg, exp_avg_sq; values decay, beta1,
// beta2, step_size, eps. One launch for the whole step (the composite is five).
void adam_step(const LoomKernelCall& c) {
  dense_step<2>(c, "_adam_step_", 5, "expected decay, beta1, beta2, step_size and eps", [&c](auto tag) {
    return AdamStep<decltype(tag)>{c.values[0].u.f, c.values[1].u.f, c.values[2].u.f, c.values[3].u.f,
                                   c.values[4].u.f};
  });
}

// _sgd_step_: inputs self, grad, momentum_buffer; values weight_decay,
// momentum, dampening, nesterov, lr. One launch (the composite is four);
// the per-element step is the CPU's (loom/plugin/scalar_ops.hpp).
void sgd_step(const LoomKernelCall& c) {
  dense_step<1>(c, "_sgd_step_", 5, "expected weight_decay, momentum, dampening, nesterov and lr", [&c](auto tag) {
    return plugin::ops::SgdStep<decltype(tag)>{c.values[0].u.f, c.values[1].u.f, c.values[2].u.f, c.values[4].u.f,
                                               c.values[3].u.i != 0};
  });
}

}  // namespace
}  // namespace ew

void register_optim_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("_adam_update_", LOOM_GPU_NAME, kernel<ew::adam_update>, kFloatingMask);
  r.kernel("_adam_step_", LOOM_GPU_NAME, kernel<ew::adam_step>, kFloatingMask);
  r.kernel("_sgd_step_", LOOM_GPU_NAME, kernel<ew::sgd_step>, kFloatingMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
