// loom/optim/lbfgs.h — L-BFGS with an optional strong-Wolfe line search,
// PyTorch's algorithm (torch.optim.LBFGS, after minFunc):
//
//   loom::optim::LBFGS opt(model->parameters(), loom::optim::LBFGSOptions(1).line_search_fn("strong_wolfe"));
//   auto closure = [&] { opt.zero_grad(); auto loss = criterion(model(x), y); loss.backward(); return loss; };
//   opt.step(closure);
//
// All parameters are one vector; one parameter group only. Each step runs
// up to max_iter iterations, each evaluating the closure (several times
// with the line search). The scalars of the algorithm (losses, step
// sizes, directional derivatives) are doubles here, where PyTorch keeps
// some as 0-d float32 tensors: iterates agree with PyTorch's to rounding.
#pragma once

#include <loom/optim/optimizer.h>

#include <deque>
#include <optional>
#include <string>

namespace loom::optim {

class LBFGSOptions : public OptimizerOptions {
 public:
  LBFGSOptions(double lr = 1) : OptimizerOptions(lr) {}  // NOLINT: implicit, as libtorch
  void visit(const OptionVisitor& f) override;
  LOOM_OPTIM_OPTIONS_COMMON(LBFGSOptions)
  LOOM_ARG(int64_t, max_iter) = 20;
  // max_iter * 5 / 4 when absent.
  LOOM_ARG(std::optional<int64_t>, max_eval);
  LOOM_ARG(double, tolerance_grad) = 1e-7;
  LOOM_ARG(double, tolerance_change) = 1e-9;
  LOOM_ARG(int64_t, history_size) = 100;
  // "strong_wolfe", or none (a fixed step of lr).
  LOOM_ARG(std::optional<std::string>, line_search_fn);
};

class LBFGS : public Optimizer {
 public:
  LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults = {});
  // An error: L-BFGS re-evaluates the model, so it needs step(closure).
  void step() override;
  // Runs the iterations; returns the loss of the first closure call.
  Tensor step(const LossClosure& closure) override;
  // The base layout plus "lbfgs.*": the direction, step, history and
  // counters that carry from one step() to the next.
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 protected:
  std::vector<std::string> state_names() const override { return {}; }

 private:
  struct History {
    Tensor d, prev_flat_grad;
    double t = 0, H_diag = 1, prev_loss = 0;
    std::deque<Tensor> old_dirs, old_stps;
    std::deque<double> ro;
    int64_t n_iter = 0, func_evals = 0;
  };
  const LBFGSOptions& options() const;
  Tensor gather_flat_grad() const;
  void add_grad(double step_size, const Tensor& update);
  std::vector<Tensor> clone_params() const;
  void set_params(const std::vector<Tensor>& values);
  // Loss and flat gradient at x + t d (the parameters are restored to x).
  std::pair<double, Tensor> directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x, double t,
                                                 const Tensor& d);
  History history_;
};

}  // namespace loom::optim
