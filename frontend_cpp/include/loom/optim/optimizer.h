// loom/optim/optimizer.h — the Optimizer base of loom::optim: parameter
// groups with per-group options, per-parameter state, zero_grad, state_dict.
//
//   loom::optim::Adam opt(model->parameters(), loom::optim::AdamOptions(1e-3));
//   loss.backward(); opt.step(); opt.zero_grad();
//
//   // groups with their own options (others take the optimizer's defaults):
//   loom::optim::SGD sgd({loom::optim::ParamGroup({w}, loom::optim::SGDOptions(0.1)),
//                         loom::optim::ParamGroup({b})},
//                        loom::optim::SGDOptions(0.01).momentum(0.9));
//
// State dict layout (one loom::StateDict, all tensors, so loom::io saves it
// without Metadata):
//   "param_groups.<g>.params"        int64 [n]: the group's parameter indices
//   "param_groups.<g>.<option>"      float64 0-d: each hyper-parameter (bools
//                                    as 0/1, betas as beta1/beta2)
//   "state.<i>.step"                 float64 0-d: steps taken by parameter i
//   "state.<i>.<buffer>"             the optimizer's buffers (exp_avg, ...)
// Parameter indices run across all groups in order, as in PyTorch. A
// parameter with no entries has not been stepped yet.
#pragma once

#include <loom/options.h>
#include <loom/state_dict.h>
#include <loom/tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace loom::optim {

// Re-evaluates the model and returns the loss (its gradients computed):
// what step(closure) calls, as libtorch's LossClosure.
using LossClosure = std::function<Tensor()>;

// Calls f(name, value) for each numeric hyper-parameter (state_dict's view).
using OptionVisitor = std::function<void(std::string_view name, double& value)>;

// Options every optimizer shares: the learning rate. Subclasses add theirs
// with builder setters (AdamOptions(1e-3).betas({0.9, 0.999})).
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // Every hyper-parameter, lr first; setting through the reference writes it.
  virtual void visit(const OptionVisitor& f) = 0;
  // The momentum OneCycleLR cycles (SGD/RMSprop momentum, Adam's beta1);
  // nullopt for an optimizer without one.
  virtual std::optional<double> cycled_momentum() const { return std::nullopt; }
  virtual void set_cycled_momentum(double) {}

  double get_lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }

 protected:
  explicit OptimizerOptions(double lr) : lr_(lr) {}
  double lr_;
};

namespace detail {
// Visits a bool option as 0/1.
void visit_flag(const OptionVisitor& f, std::string_view name, bool& flag);
}  // namespace detail

// The lr setter/getter and clone() for an options class.
#define LOOM_OPTIM_OPTIONS_COMMON(Self)                                  \
 public:                                                                 \
  Self& lr(double value) {                                               \
    lr_ = value;                                                         \
    return *this;                                                        \
  }                                                                      \
  double lr() const { return lr_; }                                      \
  std::unique_ptr<OptimizerOptions> clone() const override {             \
    return std::make_unique<Self>(*this);                                \
  }

// A list of leaf tensors and, optionally, options of their own (without
// them the group takes a copy of the optimizer's defaults when added).
class ParamGroup {
 public:
  ParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT: implicit
  template <class Options, class = std::enable_if_t<std::is_base_of_v<OptimizerOptions, Options>>>
  ParamGroup(std::vector<Tensor> params, const Options& options)
      : params_(std::move(params)), options_(options.clone()) {}
  ParamGroup(const ParamGroup& other);
  ParamGroup& operator=(const ParamGroup& other);
  ParamGroup(ParamGroup&&) = default;
  ParamGroup& operator=(ParamGroup&&) = default;

  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return static_cast<bool>(options_); }
  // The group's options (an error before the group joins an optimizer
  // when it was made without them).
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// What an optimizer keeps per parameter: a step count and named buffers
// (the names come from Optimizer::state_names(); an undefined tensor is a
// buffer this parameter's options do not use).
struct ParamState {
  double step = 0;
  std::vector<Tensor> buffers;
  bool initialized() const { return !buffers.empty(); }
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (under no-grad,
  // in place). Parameters without a gradient are left alone.
  virtual void step() = 0;
  // Calls `closure` (with grad mode on), then steps; returns its loss.
  // LBFGS, which evaluates the model several times per step, needs this form.
  virtual Tensor step(const LossClosure& closure);
  // Clears each parameter's gradient: undefined (the default) or zeros.
  void zero_grad(bool set_to_none = true);

  // Adds a group; it takes the defaults when it has no options. An error
  // when a tensor is not a floating-point leaf or is already optimized.
  void add_param_group(ParamGroup group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  // The state of parameter `index` of group `group` (created empty on demand).
  ParamState& state(size_t group, size_t index);

  // See the layout at the top of this file. The tensors are copies.
  virtual StateDict state_dict() const;
  // Restores what state_dict() returned; checks the group count, each
  // group's size, the names and the buffer shapes, and names what differs.
  virtual void load_state_dict(const StateDict& state);

 protected:
  Optimizer(std::vector<ParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults);
  // The buffer names of this optimizer's ParamState, in order.
  virtual std::vector<std::string> state_names() const = 0;

 private:
  std::vector<ParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<std::vector<ParamState>> state_;  // [group][param]
};

}  // namespace loom::optim
