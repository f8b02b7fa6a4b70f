// optimizer.cpp — Optimizer's groups, per-parameter state and zero_grad.
#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/optim/optimizer.h>

#include <unordered_set>

namespace loom::optim {

namespace detail {
void visit_flag(const OptionVisitor& f, std::string_view name, bool& flag) {
  double value = flag ? 1 : 0;
  f(name, value);
  flag = value != 0;
}
}  // namespace detail

ParamGroup::ParamGroup(const ParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}

ParamGroup& ParamGroup::operator=(const ParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
  }
  return *this;
}

OptimizerOptions& ParamGroup::options() {
  LOOM_CHECK(options_, "optim: this parameter group has no options yet (it gets the optimizer's "
             "defaults when added to one)");
  return *options_;
}

const OptimizerOptions& ParamGroup::options() const {
  return const_cast<ParamGroup*>(this)->options();
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  LOOM_CHECK(!groups.empty() && !(groups.size() == 1 && groups[0].params().empty()),
             "optim: optimizer got an empty parameter list");
  for (auto& group : groups) add_param_group(std::move(group));
}

void Optimizer::add_param_group(ParamGroup group) {
  const size_t g = groups_.size();
  LOOM_CHECK(!group.params().empty(), "optim: parameter group ", g, " is empty");
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& other : groups_)
    for (const auto& p : other.params()) seen.insert(p.impl());
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    LOOM_CHECK(p.defined(), "optim: parameter ", i, " of group ", g, " is an undefined tensor");
    LOOM_CHECK(p.is_floating_point(), "optim: parameter ", i, " of group ", g,
               " is not floating point (", loom::name(p.dtype()), ")");
    LOOM_CHECK(p.is_leaf() || p.retains_grad(), "optim: parameter ", i, " of group ", g,
               " is not a leaf tensor (can't optimize a non-leaf tensor)");
    LOOM_CHECK(seen.insert(p.impl()).second, "optim: parameter ", i, " of group ", g,
               " appears more than once in the optimizer");
  }
  if (!group.has_options()) group.set_options(defaults_->clone());
  groups_.push_back(std::move(group));
  state_.emplace_back(groups_.back().params().size());
}

ParamState& Optimizer::state(size_t group, size_t index) {
  LOOM_CHECK(group < groups_.size(), "optim: no parameter group ", group, " (there are ",
             groups_.size(), ")");
  auto& states = state_[group];
  LOOM_CHECK(index < groups_[group].params().size(), "optim: group ", group, " has no parameter ",
             index);
  if (states.size() <= index) states.resize(index + 1);
  return states[index];
}

Tensor Optimizer::step(const LossClosure& closure) {
  LOOM_CHECK(static_cast<bool>(closure), "optim: step(closure) needs a closure");
  Tensor loss;
  {
    autograd::EnableGradGuard grad;
    loss = closure();
  }
  step();
  return loss;
}

void Optimizer::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    for (const Tensor& p : group.params()) {
      Tensor param = p;  // a handle: its grad is the parameter's
      Tensor& grad = param.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad = Tensor();
      } else {
        // A gradient made with create_graph is part of a graph: cut it out first.
        if (grad.grad_fn()) grad.detach_();
        grad.zero_();
      }
    }
  }
}

}  // namespace loom::optim
