// loom/optim/adam.h — Adam and AdamW, PyTorch 1.13's updates:
//   g = grad (negated under maximize); Adam adds weight_decay * p to g,
//   AdamW instead shrinks p *= 1 - lr * weight_decay
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
//   v_hat = amsgrad ? (vmax = max(vmax, v)) : v
//   p -= lr / (1 - beta1^t) * m / (sqrt(v_hat) / sqrt(1 - beta2^t) + eps)
#pragma once

#include <loom/optim/optimizer.h>

#include <tuple>
#include <utility>

namespace loom::optim {

class AdamOptions : public OptimizerOptions {
 public:
  AdamOptions(double lr = 1e-3) : OptimizerOptions(lr) {}  // NOLINT: implicit, as libtorch
  void visit(const OptionVisitor& f) override;
  std::optional<double> cycled_momentum() const override { return std::get<0>(betas_); }
  void set_cycled_momentum(double m) override { std::get<0>(betas_) = m; }
  LOOM_OPTIM_OPTIONS_COMMON(AdamOptions)
  using Betas = std::tuple<double, double>;  // libtorch's type: .betas(std::make_tuple(0.5, 0.999)) or .betas({0.5, 0.999})
  LOOM_ARG(Betas, betas) = {0.9, 0.999};
  LOOM_ARG(double, eps) = 1e-8;
  LOOM_ARG(double, weight_decay) = 0;
  LOOM_ARG(bool, amsgrad) = false;
  LOOM_ARG(bool, maximize) = false;
};

// AdamW's options: Adam's, with weight_decay defaulting to 1e-2.
class AdamWOptions : public AdamOptions {
 public:
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { AdamOptions::weight_decay(1e-2); }
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamWOptions>(*this); }
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults = AdamOptions());
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = AdamOptions())
      : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}
  void step() override;
  using Optimizer::step;  // step(closure)

 protected:
  // AdamW: weight decay shrinks the parameters instead of joining the gradient.
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled_weight_decay);
  std::vector<std::string> state_names() const override {
    return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  }

 private:
  bool decoupled_weight_decay_ = false;
};

class AdamW : public Adam {
 public:
  // AdamOptions work too (weight_decay is then whatever they say).
  AdamW(std::vector<ParamGroup> groups, const AdamOptions& defaults = AdamWOptions())
      : Adam(std::move(groups), defaults, true) {}
  AdamW(std::vector<Tensor> params, const AdamOptions& defaults = AdamWOptions())
      : AdamW(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}
};

}  // namespace loom::optim
