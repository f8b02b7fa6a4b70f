// adam.cpp — Adam and AdamW (formulas in loom/optim/adam.h).
//
// Per parameter this is one op, _adam_step_ (core/src/ops/ops_optim.cpp; PyTorch
// 1.13 uses 8 or more): weight decay, both running averages by lerp, and the
// update, with the bias corrections and eps folded into its scalars:
//   lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) = lr*sqrt(bc2)/bc1 * m / (sqrt(v) + eps*sqrt(bc2)).
// amsgrad keeps the running maximum between the averages and the update, so
// it runs the steps as ops (lerp_ twice, maximum, _adam_update_).
#include <loom/autograd.h>
#include <loom/optim/adam.h>

#include <cmath>

#include "update_helpers.h"

namespace loom::optim {

void AdamOptions::visit(const OptionVisitor& f) {
  f("lr", lr_);
  f("beta1", std::get<0>(betas_));
  f("beta2", std::get<1>(betas_));
  f("eps", eps_);
  f("weight_decay", weight_decay_);
  detail::visit_flag(f, "amsgrad", amsgrad_);
  detail::visit_flag(f, "maximize", maximize_);
}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults) : Adam(std::move(groups), defaults, false) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled_weight_decay)
    : Optimizer(std::move(groups), defaults.clone()), decoupled_weight_decay_(decoupled_weight_decay) {
  const char* name = decoupled_weight_decay ? "AdamW" : "Adam";
  for (const auto& group : param_groups()) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    detail::check_option(o.lr() >= 0, name, "lr", o.lr());
    detail::check_option(o.eps() >= 0, name, "eps", o.eps());
    detail::check_option(std::get<0>(o.betas()) >= 0 && std::get<0>(o.betas()) < 1, name, "beta1", std::get<0>(o.betas()));
    detail::check_option(std::get<1>(o.betas()) >= 0 && std::get<1>(o.betas()) < 1, name, "beta2", std::get<1>(o.betas()));
    detail::check_option(o.weight_decay() >= 0, name, "weight_decay", o.weight_decay());
  }
}

void Adam::step() {
  autograd::NoGradGuard no_grad;
  enum { kExpAvg, kExpAvgSq, kMaxExpAvgSq };
  for (size_t g = 0; g < param_groups().size(); ++g) {
    const ParamGroup& group = param_groups()[g];
    const auto& o = static_cast<const AdamOptions&>(group.options());
    const double lr = o.lr(), beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    const double wd = o.weight_decay();
    for (size_t i = 0; i < group.params().size(); ++i) {
      Tensor p = group.params()[i];
      if (!p.grad().defined()) continue;
      ParamState& s = state(g, i);
      if (!s.initialized()) {
        s.buffers = {zeros_like(p), zeros_like(p), o.amsgrad() ? zeros_like(p) : Tensor()};
      }
      const double decay = decoupled_weight_decay_ && wd != 0 ? 1 - lr * wd : 1.0;
      const Tensor grad = detail::effective_grad(p, o.maximize(), decoupled_weight_decay_ ? 0 : wd);
      const double step = s.step += 1;
      Tensor& exp_avg = s.buffers[kExpAvg];
      Tensor& exp_avg_sq = s.buffers[kExpAvgSq];
      const double bias_correction1 = 1 - std::pow(beta1, step);
      const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, step));
      const double step_size = lr * bias_correction2_sqrt / bias_correction1;
      const double eps_hat = o.eps() * bias_correction2_sqrt;
      if (!o.amsgrad()) {
        // The whole step in one op (_adam_step_): one pass, one launch on a GPU.
        adam_step_(p, grad, exp_avg, exp_avg_sq, decay, beta1, beta2, step_size, eps_hat);
        continue;
      }
      if (decay != 1.0) p.mul_(detail::number_like(decay, p));
      exp_avg.lerp_(grad, detail::number_like(1 - beta1, p));
      exp_avg_sq.lerp_(grad.square(), detail::number_like(1 - beta2, p));
      Tensor& max_sq = s.buffers[kMaxExpAvgSq];
      if (!max_sq.defined()) max_sq = zeros_like(p);  // amsgrad turned on after a step
      max_sq.copy_(maximum(max_sq, exp_avg_sq));
      adam_update_(p, exp_avg, max_sq, step_size, eps_hat);
    }
  }
}

}  // namespace loom::optim
