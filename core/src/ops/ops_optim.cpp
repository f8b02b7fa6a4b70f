// ops_optim.cpp — fused optimizer updates: ops no user differentiates
// through, there so an optimizer step costs one pass per parameter instead
// of a chain of elementwise ops with temporaries.
//
//   _adam_update_(self, exp_avg, exp_avg_sq, step_size, eps):
//     self -= step_size * exp_avg / (sqrt(exp_avg_sq) + eps)
// Adam's parameter update with the bias corrections folded into step_size
// and eps (loom::optim::Adam). A device without a kernel runs the composite
// (the same math as four ops).
//
//   _adam_step_(self, grad, exp_avg, exp_avg_sq, decay, beta1, beta2, step_size, eps):
//     self *= decay                                  (AdamW's decoupled weight decay; 1: none)
//     exp_avg    = lerp(exp_avg, grad, 1 - beta1)
//     exp_avg_sq = lerp(exp_avg_sq, grad^2, 1 - beta2)
//     self -= step_size * exp_avg / (sqrt(exp_avg_sq) + eps)
// The whole Adam/AdamW step of one parameter in one pass (one launch on a
// GPU instead of five). A kernel writes exp_avg and exp_avg_sq in place; the
// schema does not annotate them (an annotated argument would make them
// outputs), so prepare bumps their versions as batch_norm does for its
// running statistics. float16/bfloat16 compute in float32, rounding each
// tensor once. A kernel may decline (UNSUPPORTED) non-dense tensors; the
// composite takes any layout.
//
//   _sgd_step_(self, grad, momentum_buffer, weight_decay, momentum, dampening, nesterov, lr):
//     d = grad + weight_decay * self                 (0: grad)
//     momentum_buffer = momentum_buffer * momentum + (1 - dampening) * d
//     self += -lr * (nesterov ? d + momentum * momentum_buffer : momentum_buffer)
// SGD with momentum after its first step (which clones d into the buffer):
// four ops and a temporary per parameter as one pass, the buffer written in
// place as _adam_step_'s averages, with the same dtype rules.
#include "autograd/formula.h"
#include "core_op.h"
#include "nn_norm_util.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <initializer_list>
#include <vector>

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

// A tensor in the dtype the kernels compute in: float32 for float16 and
// bfloat16 (a copy), the tensor itself otherwise.
Tensor widened(const Tensor& t) { return t.to(detail::norm::stats_dtype(t.dtype())); }

// float16/bfloat16 in float32, rounded once at the end, as the kernels.
void composite_adam_update(OpCall& call) {
  Tensor self = call.arg(0);
  Tensor p = widened(self);
  Tensor denom = sqrt(widened(call.arg(2)));
  denom.add_(full({}, Scalar(call.values[1].u.f), denom.dtype(), denom.device()));
  p.add_(widened(call.arg(1)).div(denom), Scalar(-call.values[0].u.f));
  if (!p.is_same(self)) self.copy_(p);
}

// Every tensor of a step has the parameter's dtype and shape (no
// broadcasting: these are one parameter's state); names[i] is argument i's.
// The state (arguments 2..) is written in place: its versions are bumped.
void prepare_optimizer_step(OpCall& call, std::initializer_list<const char*> arg_names) {
  const Tensor& self = call.arg(0);
  const std::string& op = call.op->name();
  LOOM_CHECK(is_floating_point(self.dtype()), op, ": expected a floating point parameter, got ", name(self.dtype()));
  const std::vector<const char*> names(arg_names);
  for (size_t i = 1; i < names.size(); ++i) {
    const Tensor& t = call.arg(i);
    LOOM_CHECK(t.dtype() == self.dtype(), op, ": ", names[i], " has dtype ", name(t.dtype()), " but the parameter has ",
               name(self.dtype()));
    LOOM_CHECK(t.sizes() == self.sizes(), op, ": ", names[i], " has shape ", shape_str(t.sizes()),
               " but the parameter has ", shape_str(self.sizes()));
    LOOM_CHECK(t.device() == self.device(), op, ": ", names[i], " is on ", t.device().str(), " but the parameter is on ",
               self.device().str());
  }
  prepare_inplace(call);
  for (size_t i = 2; i < names.size(); ++i) call.args[i]->storage()->bump_version();
}
void prepare_adam_step(OpCall& call) { prepare_optimizer_step(call, {"self", "grad", "exp_avg", "exp_avg_sq"}); }
void prepare_sgd_step(OpCall& call) { prepare_optimizer_step(call, {"self", "grad", "momentum_buffer"}); }

void composite_adam_step(OpCall& call) {
  Tensor self = call.arg(0), exp_avg = call.arg(2), exp_avg_sq = call.arg(3);
  const double decay = call.values[0].u.f, beta1 = call.values[1].u.f, beta2 = call.values[2].u.f;
  const double step_size = call.values[3].u.f, eps = call.values[4].u.f;
  Tensor p = widened(self), m = widened(exp_avg), v = widened(exp_avg_sq);
  const Tensor g = widened(call.arg(1));
  // Scalars as 0-d tensors of the compute dtype, so float64 keeps them exact.
  auto number = [&p](double x) { return full({}, Scalar(x), p.dtype(), p.device()); };
  if (decay != 1.0) p.mul_(number(decay));
  m.lerp_(g, number(1 - beta1));
  v.lerp_(g.square(), number(1 - beta2));
  adam_update_(p, m, v, step_size, eps);
  if (!p.is_same(self)) {
    self.copy_(p);
    exp_avg.copy_(m);
    exp_avg_sq.copy_(v);
  }
}

// The steps and rounding points the kernels follow: each op of the Python
// and C++ SGD in the compute dtype.
void composite_sgd_step(OpCall& call) {
  Tensor self = call.arg(0), buf = call.arg(2);
  const double weight_decay = call.values[0].u.f, momentum = call.values[1].u.f, dampening = call.values[2].u.f;
  const bool nesterov = call.values[3].u.i != 0;
  const double lr = call.values[4].u.f;
  Tensor p = widened(self), b = widened(buf), g = widened(call.arg(1));
  if (weight_decay != 0) g = g.add(p, Scalar(weight_decay));
  b.mul_(Scalar(momentum)).add_(g, Scalar(1 - dampening));
  p.add_(nesterov ? g.add(b, Scalar(momentum)) : b, Scalar(-lr));
  if (!p.is_same(self)) {
    self.copy_(p);
    buf.copy_(b);
  }
}

}  // namespace

LOOM_CORE_OP(adam_update_def,
             "_adam_update_(Tensor(a!) self, Tensor exp_avg, Tensor exp_avg_sq, float step_size, float eps) "
             "-> Tensor(a!)",
             prepare_adam_update, composite_adam_update)
LOOM_NOT_DIFFERENTIABLE(adam_update_def)
LOOM_CORE_OP(adam_step_def,
             "_adam_step_(Tensor(a!) self, Tensor grad, Tensor exp_avg, Tensor exp_avg_sq, float decay, float beta1, "
             "float beta2, float step_size, float eps) -> Tensor(a!)",
             prepare_adam_step, composite_adam_step)
LOOM_NOT_DIFFERENTIABLE(adam_step_def)
LOOM_CORE_OP(sgd_step_def,
             "_sgd_step_(Tensor(a!) self, Tensor grad, Tensor momentum_buffer, float weight_decay, float momentum, "
             "float dampening, bool nesterov, float lr) -> Tensor(a!)",
             prepare_sgd_step, composite_sgd_step)
LOOM_NOT_DIFFERENTIABLE(sgd_step_def)

Tensor& adam_update_(Tensor& self, const Tensor& exp_avg, const Tensor& exp_avg_sq, double step_size, double eps) {
  detail::run_op(adam_update_def(), {&self, &exp_avg, &exp_avg_sq},
                 {detail::float_value(step_size), detail::float_value(eps)});
  return self;
}

Tensor& adam_step_(Tensor& self, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq, double decay,
                   double beta1, double beta2, double step_size, double eps) {
  detail::run_op(adam_step_def(), {&self, &grad, &exp_avg, &exp_avg_sq},
                 {detail::float_value(decay), detail::float_value(beta1), detail::float_value(beta2),
                  detail::float_value(step_size), detail::float_value(eps)});
  return self;
}

Tensor& sgd_step_(Tensor& self, const Tensor& grad, const Tensor& momentum_buffer, double weight_decay,
                  double momentum, double dampening, bool nesterov, double lr) {
  detail::run_op(sgd_step_def(), {&self, &grad, &momentum_buffer},
                 {detail::float_value(weight_decay), detail::float_value(momentum), detail::float_value(dampening),
                  detail::bool_value(nesterov), detail::float_value(lr)});
  return self;
}

}  // namespace loom
