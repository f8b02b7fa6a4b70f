// loom/optim/lr_scheduler.h — learning-rate schedulers with PyTorch's lr
// sequences (its recursive "chainable" formulas, so they compose with other
// changes to a group's lr). Each writes every parameter group's lr.
//
//   loom::optim::StepLR sched(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 100; ++epoch) { train(); sched.step(); }
//
// Construction counts as the first step (epoch 0), as in PyTorch: the
// groups then hold the epoch-0 lr. OneCycleLR is stepped once per batch.
#pragma once

#include <loom/options.h>
#include <loom/optim/optimizer.h>

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace loom::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Advances one epoch and writes the new lrs into the optimizer's groups.
  void step();
  // The lrs the last step() set, one per parameter group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  // Steps taken since epoch 0 (0 right after construction).
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  // Subclass constructors call this last: it takes epoch 0's step.
  void start() { step(); }
  // The lrs for last_epoch_, from the groups' current lrs (chainable form).
  virtual std::vector<double> get_lr() = 0;
  std::vector<double> current_lrs() const;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;  // the groups' lrs when the scheduler was made
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;

 private:
  std::vector<double> last_lr_;
};

// lr = base_lr * gamma^(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base_lr * gamma^(milestones passed); a repeated milestone counts twice.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, const std::vector<int64_t>& milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::map<int64_t, int> milestones_;  // epoch -> how many times it is listed
  double gamma_;
};

// lr = base_lr * gamma^epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lr() override;

 private:
  double gamma_;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2,
// continuing as a cosine wave past T_max (PyTorch's behaviour).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> get_lr() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// Multiplies base_lr by a factor going linearly from start_factor to
// end_factor over total_iters epochs, then keeps it.
class LinearLR : public LRScheduler {
 public:
  explicit LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
                    int64_t total_iters = 5);

 protected:
  std::vector<double> get_lr() override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

enum class AnnealStrategy { Cos, Linear };

// OneCycleLR's settings (PyTorch's defaults). Give total_steps, or epochs
// and steps_per_epoch.
struct OneCycleLROptions {
  LOOM_ARG(int64_t, total_steps) = 0;
  LOOM_ARG(int64_t, epochs) = 0;
  LOOM_ARG(int64_t, steps_per_epoch) = 0;
  LOOM_ARG(double, pct_start) = 0.3;
  LOOM_ARG(AnnealStrategy, anneal_strategy) = AnnealStrategy::Cos;
  LOOM_ARG(bool, cycle_momentum) = true;
  LOOM_ARG(double, base_momentum) = 0.85;
  LOOM_ARG(double, max_momentum) = 0.95;
  LOOM_ARG(double, div_factor) = 25.0;
  LOOM_ARG(double, final_div_factor) = 1e4;
  LOOM_ARG(bool, three_phase) = false;
};

// The 1cycle policy (Smith): lr warms up from max_lr/div_factor to max_lr,
// then anneals to max_lr/(div_factor*final_div_factor); with cycle_momentum
// the momentum (SGD, RMSprop) or beta1 (Adam) moves the other way. Stepping
// past total_steps is an error.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, const OneCycleLROptions& options = {});
  // One max_lr per parameter group.
  OneCycleLR(Optimizer& optimizer, const std::vector<double>& max_lrs, const OneCycleLROptions& options = {});
  int64_t total_steps() const { return total_steps_; }

 protected:
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;  // the phase runs up to this step
    int start_lr, end_lr;              // indices into the per-group lr table
    int start_momentum, end_momentum;  // indices into the per-group momentum table
  };
  double anneal(double start, double end, double pct) const;

  OneCycleLROptions options_;
  int64_t total_steps_;
  std::vector<Phase> phases_;
  std::vector<std::array<double, 3>> lrs_;        // per group: initial, max, min
  std::vector<std::array<double, 2>> momentums_;  // per group: max, base
};

}  // namespace loom::optim
