// adagrad.cpp — Adagrad (formulas in loom/optim/adagrad.h).
#include <loom/autograd.h>
#include <loom/optim/adagrad.h>

#include "update_helpers.h"

namespace loom::optim {

void AdagradOptions::visit(const OptionVisitor& f) {
  f("lr", lr_);
  f("lr_decay", lr_decay_);
  f("weight_decay", weight_decay_);
  f("initial_accumulator_value", initial_accumulator_value_);
  f("eps", eps_);
  detail::visit_flag(f, "maximize", maximize_);
}

Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults)
    : Optimizer(std::move(groups), defaults.clone()) {
  for (const auto& group : param_groups()) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    detail::check_option(o.lr() >= 0, "Adagrad", "lr", o.lr());
    detail::check_option(o.lr_decay() >= 0, "Adagrad", "lr_decay", o.lr_decay());
    detail::check_option(o.weight_decay() >= 0, "Adagrad", "weight_decay", o.weight_decay());
    detail::check_option(o.initial_accumulator_value() >= 0, "Adagrad", "initial_accumulator_value",
                         o.initial_accumulator_value());
    detail::check_option(o.eps() >= 0, "Adagrad", "eps", o.eps());
  }
}

void Adagrad::step() {
  autograd::NoGradGuard no_grad;
  for (size_t g = 0; g < param_groups().size(); ++g) {
    const ParamGroup& group = param_groups()[g];
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    for (size_t i = 0; i < group.params().size(); ++i) {
      Tensor p = group.params()[i];
      if (!p.grad().defined()) continue;
      ParamState& s = state(g, i);
      // PyTorch fills the sum when the parameter joins; filling it at the
      // first step gives the same updates.
      if (!s.initialized()) s.buffers = {full(p.sizes(), o.initial_accumulator_value(), p.dtype(), p.device())};
      const Tensor grad = detail::effective_grad(p, o.maximize(), o.weight_decay());
      const double step = s.step += 1;
      const double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
      Tensor& sum = s.buffers[0];
      sum.add_(grad.square());
      Tensor std = sum.sqrt();
      std.add_(detail::number_like(o.eps(), p));
      p.add_(grad.div(std), -clr);
    }
  }
}

}  // namespace loom::optim
