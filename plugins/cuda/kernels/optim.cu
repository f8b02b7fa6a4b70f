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

template <class T>
__global__ void adam_step_kernel(T* p, const T* g, T* m, T* v, int64_t n, AdamStep<T> f) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    T pi = p[i], mi = m[i], vi = v[i];
    f(pi, g[i], mi, vi);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

// inputs: self, grad, exp_avg, exp_avg_sq (each of self's dtype and shape);
// values: decay, beta1, beta2, step_size, eps; output: self; exp_avg and
// exp_avg_sq written in place. One launch for the whole step of a parameter
// (the composite is five). Dense tensors only, else declined to the composite.
void adam_step(const LoomKernelCall& c) {
  constexpr const char* name = "_adam_step_";
  expect_arity(c, name, 4, 1);
  if (c.num_values < 5) fail_args(name, "expected decay, beta1, beta2, step_size and eps");
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 4; ++i) expect_like(c.inputs[i], out, name);
  for (const LoomTensorDesc* t : {&out, &c.inputs[1], &c.inputs[2], &c.inputs[3]})
    if (!plugin::is_contiguous(*t))
      throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " _adam_step_: dense tensors only");
  const int64_t n = plugin::numel(out);
  const cudaStream_t s = enter(c);
  if (n == 0) return;
  visit<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const AdamStep<T> f{c.values[0].u.f, c.values[1].u.f, c.values[2].u.f, c.values[3].u.f, c.values[4].u.f};
    adam_step_kernel<<<grid_for(n), kBlock, 0, s>>>(plugin::data_ptr<T>(out), plugin::data_ptr<const T>(c.inputs[1]),
                                                     plugin::data_ptr<T>(c.inputs[2]), plugin::data_ptr<T>(c.inputs[3]),
                                                     n, f);
  });
  check(cudaGetLastError(), out.device.index, "_adam_step_ kernel launch");
}

template <class T>
__global__ void sgd_step_kernel(T* p, const T* g, T* b, int64_t n, plugin::ops::SgdStep<T> f) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    T pi = p[i], bi = b[i];
    f(pi, g[i], bi);
    p[i] = pi;
    b[i] = bi;
  }
}

// inputs: self, grad, momentum_buffer (each of self's dtype and shape);
// values: weight_decay, momentum, dampening, nesterov, lr; output: self; the
// buffer written in place. One launch for the step (the composite is four);
// the per-element step is the CPU's (loom/plugin/scalar_ops.hpp). Dense
// tensors only, else declined to the composite.
void sgd_step(const LoomKernelCall& c) {
  constexpr const char* name = "_sgd_step_";
  expect_arity(c, name, 3, 1);
  if (c.num_values < 5) fail_args(name, "expected weight_decay, momentum, dampening, nesterov and lr");
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, name);
  for (const LoomTensorDesc* t : {&out, &c.inputs[1], &c.inputs[2]})
    if (!plugin::is_contiguous(*t))
      throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " _sgd_step_: dense tensors only");
  const int64_t n = plugin::numel(out);
  const cudaStream_t s = enter(c);
  if (n == 0) return;
  visit<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const plugin::ops::SgdStep<T> f{c.values[0].u.f, c.values[1].u.f, c.values[2].u.f, c.values[4].u.f,
                                    c.values[3].u.i != 0};
    sgd_step_kernel<<<grid_for(n), kBlock, 0, s>>>(plugin::data_ptr<T>(out), plugin::data_ptr<const T>(c.inputs[1]),
                                                    plugin::data_ptr<T>(c.inputs[2]), n, f);
  });
  check(cudaGetLastError(), out.device.index, "_sgd_step_ kernel launch");
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
