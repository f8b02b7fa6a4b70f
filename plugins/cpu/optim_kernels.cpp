// Optimizer kernels (docs/kernel_conventions.md, "Optimizer updates"): _adam_update_, Adam's
// parameter update in one pass, self -= step_size * m / (sqrt(v) + eps),
// with the bias corrections folded into step_size and eps by the caller.
// Without it the update is four ops and two temporaries per parameter.
#include "binary_loops.hpp"
#include "common.hpp"
#include "kernels.hpp"

#include <cmath>

namespace loom::cpu {
namespace {

template <class T>
struct AdamUpdate {
  double step_size, eps;
  T operator()(T p, T m, T v) const {
    using V = value_t<T>;
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

}  // namespace

void register_optim_kernels(plugin::Registrar& r) {
  r.kernel("_adam_update_", "cpu", plugin::kernel<adam_update>, kFloatingMask);
}

}  // namespace loom::cpu
