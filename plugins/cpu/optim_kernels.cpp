// Optimizer kernels (docs/kernel_conventions.md, "Optimizer updates"): _sgd_step_,
// SGD's whole step with momentum in one pass (below); _adam_update_, Adam's
// parameter update in one pass, self -= step_size * m / (sqrt(v) + eps),
// with the bias corrections folded into step_size and eps by the caller
// (without it the update is four ops and two temporaries per parameter), and
// _adam_step_, the whole step including both running averages.
#include "binary_loops.hpp"
#include "common.hpp"
#include "kernels.hpp"

#include <loom/plugin/scalar_ops.hpp>

#include <cmath>

namespace loom::cpu {

using plugin::ops::Lerp;
namespace {

template <class T>
struct AdamUpdate {
  double step_size, eps;
  T operator()(T p, T m, T v) const {
    using V = opmath_t<T>;
    const V x = p, mm = m, vv = v;
    return static_cast<T>(x - static_cast<V>(step_size) * mm / (std::sqrt(vv) + static_cast<V>(eps)));
  }
};

// inputs: self, exp_avg, exp_avg_sq (broadcast to self by the core);
// values: step_size, eps; output: self.
void adam_update(const LoomKernelCall& c) {
  expect_arity(c, "_adam_update_", 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, "_adam_update_");
  const double step_size = c.values[0].u.f, eps = c.values[1].u.f;
  dispatch<DTypes::Floating>(out.dtype, "_adam_update_", [&](auto tag) {
    using T = decltype(tag);
    apply_elementwise<T>(out, AdamUpdate<T>{step_size, eps}, In<T>{c.inputs[0]}, In<T>{c.inputs[1]},
                         In<T>{c.inputs[2]});
  });
}

// _adam_step_: the whole step of one parameter, in the steps and rounding
// order of its composite (ops_optim.cpp) for float32/float64: p * decay,
// lerp (PyTorch's split at |w| < 0.5) for both running averages, then the
// update above. float16/bfloat16 compute in float and round each tensor once.
template <class T>
struct AdamStep {
  double decay, beta1, beta2, step_size, eps;

  void operator()(T& p, T g, T& m, T& v) const {
    using V = opmath_t<T>;
    const V gg = g;
    const V x = decay == 1.0 ? V(p) : V(p) * static_cast<V>(decay);
    const V m1 = Lerp<V>{}(m, gg, static_cast<V>(1 - beta1));
    const V v1 = Lerp<V>{}(v, gg * gg, static_cast<V>(1 - beta2));
    p = static_cast<T>(x - static_cast<V>(step_size) * m1 / (std::sqrt(v1) + static_cast<V>(eps)));
    m = static_cast<T>(m1);
    v = static_cast<T>(v1);
  }
};

// One thread's range of a dense step. An AVX2 clone: the step is bound by
// its divide and square root, which AVX2 does 8 floats at a time against the
// baseline's 4 (the same IEEE operations, so both clones round alike). The
// pointers never overlap (four distinct tensors of one size), which
// __restrict tells the vectoriser.
template <class T>
LOOM_CPU_CLONES void adam_step_range(const AdamStep<T>& f, T* __restrict p, const T* __restrict g,
                                     T* __restrict m, T* __restrict v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) f(p[i], g[i], m[i], v[i]);
}

// inputs: self, grad, exp_avg, exp_avg_sq (each of self's dtype and shape);
// values: decay, beta1, beta2, step_size, eps; output: self. exp_avg and
// exp_avg_sq are written in place. Dense tensors only: others are declined
// to the composite (optimizer state is allocated dense).
void adam_step(const LoomKernelCall& c) {
  expect_arity(c, "_adam_step_", 4, 1);
  if (c.num_values < 5) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, "_adam_step_: expected 5 values");
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 4; ++i) expect_like(c.inputs[i], out, "_adam_step_");
  if (!plugin::is_contiguous(out) || !plugin::is_contiguous(c.inputs[1]) || !plugin::is_contiguous(c.inputs[2]) ||
      !plugin::is_contiguous(c.inputs[3]))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, "_adam_step_: the cpu kernel takes dense tensors only");
  const double decay = c.values[0].u.f, beta1 = c.values[1].u.f, beta2 = c.values[2].u.f;
  const double step_size = c.values[3].u.f, eps = c.values[4].u.f;
  dispatch<DTypes::Floating>(out.dtype, "_adam_step_", [&](auto tag) {
    using T = decltype(tag);
    const AdamStep<T> f{decay, beta1, beta2, step_size, eps};
    T* p = plugin::data_ptr<T>(out);
    const T* g = plugin::data_ptr<const T>(c.inputs[1]);
    T* m = plugin::data_ptr<T>(c.inputs[2]);
    T* v = plugin::data_ptr<T>(c.inputs[3]);
    parallel_for(plugin::numel(out), kParallelGrain,
                 [&](int64_t s, int64_t e) { adam_step_range(f, p + s, g + s, m + s, v + s, e - s); });
  });
}

template <class T>
LOOM_CPU_CLONES void sgd_step_range(const plugin::ops::SgdStep<T>& f, T* __restrict p, const T* __restrict g, T* __restrict b,
                                    int64_t n) {
  for (int64_t i = 0; i < n; ++i) f(p[i], g[i], b[i]);
}

// inputs: self, grad, momentum_buffer (each of self's dtype and shape);
// values: weight_decay, momentum, dampening, nesterov, lr; output: self.
// The buffer is written in place. Dense tensors only, as _adam_step_. The
// per-element step is loom/plugin/scalar_ops.hpp's, which CUDA runs too.
void sgd_step(const LoomKernelCall& c) {
  expect_arity(c, "_sgd_step_", 3, 1);
  expect_values(c, "_sgd_step_", 5);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, "_sgd_step_");
  if (!plugin::is_contiguous(out) || !plugin::is_contiguous(c.inputs[1]) || !plugin::is_contiguous(c.inputs[2]))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, "_sgd_step_: the cpu kernel takes dense tensors only");
  dispatch<DTypes::Floating>(out.dtype, "_sgd_step_", [&](auto tag) {
    using T = decltype(tag);
    const plugin::ops::SgdStep<T> f{c.values[0].u.f, c.values[1].u.f, c.values[2].u.f, c.values[4].u.f,
                                    c.values[3].u.i != 0};
    T* p = plugin::data_ptr<T>(out);
    const T* g = plugin::data_ptr<const T>(c.inputs[1]);
    T* b = plugin::data_ptr<T>(c.inputs[2]);
    parallel_for(plugin::numel(out), kParallelGrain, [&](int64_t s, int64_t e) { sgd_step_range(f, p + s, g + s, b + s, e - s); });
  });
}

}  // namespace

void register_optim_kernels(plugin::Registrar& r) {
  r.kernel("_adam_update_", "cpu", plugin::kernel<adam_update>, kFloatingMask);
  r.kernel("_adam_step_", "cpu", plugin::kernel<adam_step>, kFloatingMask);
  r.kernel("_sgd_step_", "cpu", plugin::kernel<sgd_step>, kFloatingMask);
}

}  // namespace loom::cpu
