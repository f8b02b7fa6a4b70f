// loom/optim/adagrad.h — Adagrad, PyTorch 1.13's update (dense gradients):
//   g = grad (+ weight_decay * p) (negated under maximize)
//   sum += g^2;  p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)
// sum starts at initial_accumulator_value.
#pragma once

#include <loom/optim/optimizer.h>

namespace loom::optim {

class AdagradOptions : public OptimizerOptions {
 public:
  AdagradOptions(double lr = 1e-2) : OptimizerOptions(lr) {}
  void visit(const OptionVisitor& f) override;
  LOOM_OPTIM_OPTIONS_COMMON(AdagradOptions)
  LOOM_ARG(double, lr_decay) = 0;
  LOOM_ARG(double, weight_decay) = 0;
  LOOM_ARG(double, initial_accumulator_value) = 0;
  LOOM_ARG(double, eps) = 1e-10;
  LOOM_ARG(bool, maximize) = false;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults = AdagradOptions());
  Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults = AdagradOptions())
      : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}
  void step() override;
  using Optimizer::step;  // step(closure)

 protected:
  std::vector<std::string> state_names() const override { return {"sum"}; }
};

}  // namespace loom::optim
