// loom/optim/rmsprop.h — RMSprop, PyTorch 1.13's update:
//   g = grad (+ weight_decay * p) (negated under maximize)
//   v = alpha * v + (1 - alpha) * g^2
//   avg = sqrt(v - (centered ? mean_g^2 : 0)) + eps, mean_g = alpha * mean_g + (1 - alpha) * g
//   momentum > 0: buf = momentum * buf + g / avg; p -= lr * buf   else p -= lr * g / avg
#pragma once

#include <loom/optim/optimizer.h>

namespace loom::optim {

class RMSpropOptions : public OptimizerOptions {
 public:
  RMSpropOptions(double lr = 1e-2) : OptimizerOptions(lr) {}
  void visit(const OptionVisitor& f) override;
  std::optional<double> cycled_momentum() const override { return momentum_; }
  void set_cycled_momentum(double m) override { momentum_ = m; }
  LOOM_OPTIM_OPTIONS_COMMON(RMSpropOptions)
  LOOM_ARG(double, alpha) = 0.99;
  LOOM_ARG(double, eps) = 1e-8;
  LOOM_ARG(double, weight_decay) = 0;
  LOOM_ARG(double, momentum) = 0;
  LOOM_ARG(bool, centered) = false;
  LOOM_ARG(bool, maximize) = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults = RMSpropOptions());
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults = RMSpropOptions())
      : RMSprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}
  void step() override;
  using Optimizer::step;  // step(closure)

 protected:
  std::vector<std::string> state_names() const override {
    return {"square_avg", "momentum_buffer", "grad_avg"};
  }
};

}  // namespace loom::optim
