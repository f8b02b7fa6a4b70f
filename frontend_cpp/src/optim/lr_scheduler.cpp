// lr_scheduler.cpp — the schedulers' lr rules (PyTorch 1.13's chainable forms).
#include <loom/error.h>
#include <loom/optim/lr_scheduler.h>

#include <cmath>
#include <numbers>

namespace loom::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lrs_(current_lrs()) {}

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_.param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  const std::vector<double> lrs = get_lr();
  auto& groups = optimizer_.param_groups();
  LOOM_CHECK(lrs.size() == groups.size(), "optim: the optimizer has ", groups.size(),
             " parameter groups but its scheduler was made for ", lrs.size());
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(lrs[g]);
  last_lr_ = lrs;
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  LOOM_CHECK(step_size > 0, "optim: StepLR: step_size must be positive, got ", step_size);
  start();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, const std::vector<int64_t>& milestones, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  for (int64_t m : milestones) ++milestones_[m];
  start();
}

std::vector<double> MultiStepLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  const auto it = milestones_.find(last_epoch_);
  if (it == milestones_.end()) return lrs;
  for (double& lr : lrs) lr *= std::pow(gamma_, it->second);
  return lrs;
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  start();
}

std::vector<double> ExponentialLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  LOOM_CHECK(T_max > 0, "optim: CosineAnnealingLR: T_max must be positive, got ", T_max);
  start();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  constexpr double pi = std::numbers::pi;
  std::vector<double> lrs = current_lrs();
  const double t = static_cast<double>(last_epoch_), T = static_cast<double>(T_max_);
  if (last_epoch_ == 0) return lrs;
  for (size_t g = 0; g < lrs.size(); ++g) {
    const double base = base_lrs_[g];
    if (step_count_ == 1 && last_epoch_ > 0) {
      lrs[g] = eta_min_ + (base - eta_min_) * (1 + std::cos(t * pi / T)) / 2;
    } else if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0) {
      lrs[g] = lrs[g] + (base - eta_min_) * (1 - std::cos(pi / T)) / 2;
    } else {
      lrs[g] = (1 + std::cos(pi * t / T)) / (1 + std::cos(pi * (t - 1) / T)) * (lrs[g] - eta_min_) + eta_min_;
    }
  }
  return lrs;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  LOOM_CHECK(start_factor > 0 && start_factor <= 1,
             "optim: LinearLR: start_factor must be in (0, 1], got ", start_factor);
  LOOM_CHECK(end_factor >= 0 && end_factor <= 1, "optim: LinearLR: end_factor must be in [0, 1], got ",
             end_factor);
  LOOM_CHECK(total_iters > 0, "optim: LinearLR: total_iters must be positive, got ", total_iters);
  start();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double delta = end_factor_ - start_factor_;
  const double t = static_cast<double>(last_epoch_);
  for (double& lr : lrs)
    lr *= 1.0 + delta / (static_cast<double>(total_iters_) * start_factor_ + (t - 1) * delta);
  return lrs;
}

}  // namespace loom::optim
