// rmsprop.cpp — RMSprop (formulas in loom/optim/rmsprop.h).
#include <loom/autograd.h>
#include <loom/optim/rmsprop.h>

#include "update_helpers.h"

namespace loom::optim {

void RMSpropOptions::visit(const OptionVisitor& f) {
  f("lr", lr_);
  f("alpha", alpha_);
  f("eps", eps_);
  f("weight_decay", weight_decay_);
  f("momentum", momentum_);
  detail::visit_flag(f, "centered", centered_);
  detail::visit_flag(f, "maximize", maximize_);
}

RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults)
    : Optimizer(std::move(groups), defaults.clone()) {
  for (const auto& group : param_groups()) {
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    detail::check_option(o.lr() >= 0, "RMSprop", "lr", o.lr());
    detail::check_option(o.eps() >= 0, "RMSprop", "eps", o.eps());
    detail::check_option(o.momentum() >= 0, "RMSprop", "momentum", o.momentum());
    detail::check_option(o.weight_decay() >= 0, "RMSprop", "weight_decay", o.weight_decay());
    detail::check_option(o.alpha() >= 0, "RMSprop", "alpha", o.alpha());
  }
}

void RMSprop::step() {
  autograd::NoGradGuard no_grad;
  enum { kSquareAvg, kMomentum, kGradAvg };
  for (size_t g = 0; g < param_groups().size(); ++g) {
    const ParamGroup& group = param_groups()[g];
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    for (size_t i = 0; i < group.params().size(); ++i) {
      Tensor p = group.params()[i];
      if (!p.grad().defined()) continue;
      ParamState& s = state(g, i);
      if (!s.initialized()) s.buffers = {zeros_like(p), Tensor(), Tensor()};
      // Buffers an option turned on after the first step start at zero.
      if (o.momentum() > 0 && !s.buffers[kMomentum].defined()) s.buffers[kMomentum] = zeros_like(p);
      if (o.centered() && !s.buffers[kGradAvg].defined()) s.buffers[kGradAvg] = zeros_like(p);
      s.step += 1;
      const Tensor grad = detail::effective_grad(p, o.maximize(), o.weight_decay());
      const Tensor weight = detail::number_like(1 - o.alpha(), p);
      // lerp_(x, 1 - alpha) is alpha * v + (1 - alpha) * x in one op.
      Tensor& square_avg = s.buffers[kSquareAvg];
      square_avg.lerp_(grad.square(), weight);
      Tensor avg;
      if (o.centered()) {
        Tensor& grad_avg = s.buffers[kGradAvg];
        grad_avg.lerp_(grad, weight);
        avg = square_avg.sub(grad_avg.square()).sqrt_();
      } else {
        avg = square_avg.sqrt();
      }
      avg.add_(detail::number_like(o.eps(), p));
      if (o.momentum() > 0) {
        Tensor& buf = s.buffers[kMomentum];
        buf.mul_(detail::number_like(o.momentum(), p)).add_(grad.div(avg));
        p.add_(buf, -o.lr());
      } else {
        p.add_(grad.div(avg), -o.lr());
      }
    }
  }
}

}  // namespace loom::optim
