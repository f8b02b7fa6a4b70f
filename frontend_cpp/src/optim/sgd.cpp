// sgd.cpp — SGD's options and update (formulas in loom/optim/sgd.h).
#include <loom/autograd.h>
#include <loom/optim/sgd.h>

#include "update_helpers.h"

namespace loom::optim {

void SGDOptions::visit(const OptionVisitor& f) {
  f("lr", lr_);
  f("momentum", momentum_);
  f("dampening", dampening_);
  f("weight_decay", weight_decay_);
  detail::visit_flag(f, "nesterov", nesterov_);
  detail::visit_flag(f, "maximize", maximize_);
}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults)
    : Optimizer(std::move(groups), defaults.clone()) {
  for (const auto& group : param_groups()) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    detail::check_option(o.lr() >= 0, "SGD", "lr", o.lr());
    detail::check_option(o.momentum() >= 0, "SGD", "momentum", o.momentum());
    detail::check_option(o.weight_decay() >= 0, "SGD", "weight_decay", o.weight_decay());
    LOOM_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
               "optim: SGD: Nesterov momentum requires a momentum and zero dampening");
  }
}

void SGD::step() {
  autograd::NoGradGuard no_grad;
  for (size_t g = 0; g < param_groups().size(); ++g) {
    const ParamGroup& group = param_groups()[g];
    const auto& o = static_cast<const SGDOptions&>(group.options());
    for (size_t i = 0; i < group.params().size(); ++i) {
      Tensor p = group.params()[i];
      if (!p.grad().defined()) continue;
      ParamState& s = state(g, i);
      if (!s.initialized()) s.buffers.resize(1);
      s.step += 1;
      const Tensor& buf0 = s.buffers[0];
      const bool matches = buf0.defined() && buf0.dtype() == p.dtype() && buf0.sizes() == p.sizes() &&
                           buf0.device() == p.device() && p.grad().dtype() == p.dtype();
      if (o.momentum() != 0 && !o.maximize() && matches) {
        // After the first step: the whole step in one op (_sgd_step_).
        sgd_step_(p, p.grad(), s.buffers[0], o.weight_decay(), o.momentum(), o.dampening(), o.nesterov(), o.lr());
        continue;
      }
      Tensor d_p = detail::effective_grad(p, o.maximize(), o.weight_decay());
      if (o.momentum() != 0) {
        Tensor& buf = s.buffers[0];
        if (!buf.defined()) {
          buf = d_p.detach().clone();
        } else {
          buf.mul_(detail::number_like(o.momentum(), buf)).add_(d_p, 1 - o.dampening());
        }
        d_p = o.nesterov() ? d_p.add(buf, o.momentum()) : buf;
      }
      p.add_(d_p, -o.lr());
    }
  }
}

}  // namespace loom::optim
