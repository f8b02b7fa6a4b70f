// one_cycle_lr.cpp — OneCycleLR (PyTorch 1.13's phases and annealing).
#include <loom/error.h>
#include <loom/optim/lr_scheduler.h>

#include <cmath>
#include <numbers>

namespace loom::optim {

namespace {
enum { kInitialLr, kMaxLr, kMinLr };
enum { kMaxMomentum, kBaseMomentum };
}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, const OneCycleLROptions& options)
    : OneCycleLR(optimizer, std::vector<double>(optimizer.param_groups().size(), max_lr), options) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, const std::vector<double>& max_lrs,
                       const OneCycleLROptions& options)
    : LRScheduler(optimizer), options_(options) {
  const auto& o = options;
  if (o.total_steps() > 0) {
    total_steps_ = o.total_steps();
  } else {
    LOOM_CHECK(o.epochs() > 0 && o.steps_per_epoch() > 0,
               "optim: OneCycleLR: give total_steps, or epochs and steps_per_epoch (positive)");
    total_steps_ = o.epochs() * o.steps_per_epoch();
  }
  LOOM_CHECK(o.pct_start() >= 0 && o.pct_start() <= 1, "optim: OneCycleLR: pct_start must be in [0, 1], got ",
             o.pct_start());
  auto& groups = optimizer.param_groups();
  LOOM_CHECK(max_lrs.size() == groups.size(), "optim: OneCycleLR: expected ", groups.size(),
             " values for max_lr (one per parameter group), got ", max_lrs.size());

  const double steps = static_cast<double>(total_steps_);
  const double up_end = o.pct_start() * steps - 1;
  if (o.three_phase()) {
    phases_ = {{up_end, kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
               {2 * o.pct_start() * steps - 2, kMaxLr, kInitialLr, kBaseMomentum, kMaxMomentum},
               {steps - 1, kInitialLr, kMinLr, kMaxMomentum, kMaxMomentum}};
  } else {
    phases_ = {{up_end, kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
               {steps - 1, kMaxLr, kMinLr, kBaseMomentum, kMaxMomentum}};
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const double initial = max_lrs[g] / o.div_factor();
    lrs_.push_back({initial, max_lrs[g], initial / o.final_div_factor()});
    if (o.cycle_momentum()) {
      OptimizerOptions& group_options = groups[g].options();
      LOOM_CHECK(group_options.cycled_momentum().has_value(),
                 "optim: OneCycleLR: the optimizer has no momentum to cycle (use cycle_momentum(false))");
      group_options.set_cycled_momentum(o.max_momentum());
      momentums_.push_back({o.max_momentum(), o.base_momentum()});
    }
  }
  start();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == AnnealStrategy::Cos)
    return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  LOOM_CHECK(last_epoch_ <= total_steps_, "optim: OneCycleLR: tried to step ", last_epoch_ + 1,
             " times; the specified number of total steps is ", total_steps_);
  const double step = static_cast<double>(last_epoch_);
  auto& groups = optimizer_.param_groups();
  std::vector<double> lrs(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    double start_step = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (step <= phase.end_step || i + 1 == phases_.size()) {
        const double pct = (step - start_step) / (phase.end_step - start_step);
        lrs[g] = anneal(lrs_[g][phase.start_lr], lrs_[g][phase.end_lr], pct);
        if (options_.cycle_momentum()) {
          groups[g].options().set_cycled_momentum(
              anneal(momentums_[g][phase.start_momentum], momentums_[g][phase.end_momentum], pct));
        }
        break;
      }
      start_step = phase.end_step;
    }
  }
  return lrs;
}

}  // namespace loom::optim
