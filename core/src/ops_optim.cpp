// ops_optim.cpp — fused optimizer updates: ops no user differentiates
// through, there so an optimizer step costs one pass per parameter instead
// of a chain of elementwise ops with temporaries.
//
//   _adam_update_(self, exp_avg, exp_avg_sq, step_size, eps):
//     self -= step_size * exp_avg / (sqrt(exp_avg_sq) + eps)
// Adam's parameter update with the bias corrections folded into step_size
// and eps (loom::optim::Adam). A device without a kernel runs the composite
// (the same math as four ops).
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

void prepare_adam_update(OpCall& call) {
  const Tensor& self = call.arg(0);
  const std::string& op = call.op->name();
  LOOM_CHECK(is_floating_point(self.dtype()), op, ": expected a floating point parameter, got ", name(self.dtype()));
  for (size_t i = 1; i < 3; ++i)
    LOOM_CHECK(call.arg(i).dtype() == self.dtype(), op, ": ", i == 1 ? "exp_avg" : "exp_avg_sq", " has dtype ",
               name(call.arg(i).dtype()), " but the parameter has ", name(self.dtype()));
  prepare_inplace(call);
}

void composite_adam_update(OpCall& call) {
  Tensor self = call.arg(0);
  Tensor denom = sqrt(call.arg(2));
  denom.add_(full({}, Scalar(call.values[1].u.f), denom.dtype(), denom.device()));
  self.add_(call.arg(1).div(denom), Scalar(-call.values[0].u.f));
}

}  // namespace

LOOM_CORE_OP(adam_update_def,
             "_adam_update_(Tensor(a!) self, Tensor exp_avg, Tensor exp_avg_sq, float step_size, float eps) "
             "-> Tensor(a!)",
             prepare_adam_update, composite_adam_update)
LOOM_NOT_DIFFERENTIABLE(adam_update_def)

Tensor& adam_update_(Tensor& self, const Tensor& exp_avg, const Tensor& exp_avg_sq, double step_size, double eps) {
  detail::run_op(adam_update_def(), {&self, &exp_avg, &exp_avg_sq},
                 {detail::float_value(step_size), detail::float_value(eps)});
  return self;
}

}  // namespace loom
