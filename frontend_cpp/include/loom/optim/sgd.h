// loom/optim/sgd.h — stochastic gradient descent with (Nesterov) momentum,
// PyTorch 1.13's update:
//   g = grad (+ weight_decay * p) (negated under maximize)
//   buf = g on the first step, else momentum * buf + (1 - dampening) * g
//   p -= lr * (nesterov ? g + momentum * buf : buf)      (p -= lr * g without momentum)
#pragma once

#include <loom/optim/optimizer.h>

namespace loom::optim {

class SGDOptions : public OptimizerOptions {
 public:
  SGDOptions(double lr) : OptimizerOptions(lr) {}  // NOLINT: implicit, SGD(params, 0.01) as libtorch
  void visit(const OptionVisitor& f) override;
  std::optional<double> cycled_momentum() const override { return momentum_; }
  void set_cycled_momentum(double m) override { momentum_ = m; }
  LOOM_OPTIM_OPTIONS_COMMON(SGDOptions)
  LOOM_ARG(double, momentum) = 0;
  LOOM_ARG(double, dampening) = 0;
  LOOM_ARG(double, weight_decay) = 0;
  LOOM_ARG(bool, nesterov) = false;
  LOOM_ARG(bool, maximize) = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults);
  SGD(std::vector<Tensor> params, const SGDOptions& defaults)
      : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}
  void step() override;
  using Optimizer::step;  // step(closure)

 protected:
  std::vector<std::string> state_names() const override { return {"momentum_buffer"}; }
};

}  // namespace loom::optim
