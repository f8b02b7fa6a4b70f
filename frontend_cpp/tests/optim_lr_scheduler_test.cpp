// optim_lr_scheduler_test.cpp — each scheduler's lr sequence (and OneCycleLR's
// momentum) against PyTorch 1.13, over 12 steps of an optimizer with two
// groups (lr 0.1 and 0.01). Expected values from python3-torch:
//
//   opt = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.01}], lr=0.1, momentum=0.9)
//   s = torch.optim.lr_scheduler.<Scheduler>(opt, ...)
//   for _ in range(12): lrs += s.get_last_lr(); opt.step(); s.step()
// (Adam with the same groups for the beta1 case.)
#include <loom/loom.h>
#include <loom/optim.h>

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using loom::Tensor;
using namespace loom::optim;
using SchedulerFactory = std::function<std::unique_ptr<LRScheduler>(Optimizer&)>;

struct Case {
  std::string label;
  SchedulerFactory make;
  std::vector<double> lrs;  // group 0, group 1, for each of 12 steps
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
    {"StepLR(opt, 3, 0.5)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<StepLR>(opt, 3, 0.5); },
     {0.10000000000000001, 0.01, 0.10000000000000001, 0.01, 0.10000000000000001, 0.01, 0.050000000000000003, 0.0050000000000000001, 0.050000000000000003, 0.0050000000000000001, 0.050000000000000003, 0.0050000000000000001, 0.025000000000000001, 0.0025000000000000001, 0.025000000000000001, 0.0025000000000000001, 0.025000000000000001, 0.0025000000000000001, 0.012500000000000001, 0.00125, 0.012500000000000001, 0.00125, 0.012500000000000001, 0.00125}},
    {"StepLR(opt, 4)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<StepLR>(opt, 4); },
     {0.10000000000000001, 0.01, 0.10000000000000001, 0.01, 0.10000000000000001, 0.01, 0.10000000000000001, 0.01, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001, 0.0010000000000000002, 0.0001, 0.0010000000000000002, 0.0001, 0.0010000000000000002, 0.0001, 0.0010000000000000002, 0.0001}},
    {"MultiStepLR(opt, {2, 5, 5, 9}, 0.5)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<MultiStepLR>(opt, std::vector<int64_t>{2, 5, 5, 9}, 0.5); },
     {0.10000000000000001, 0.01, 0.10000000000000001, 0.01, 0.050000000000000003, 0.0050000000000000001, 0.050000000000000003, 0.0050000000000000001, 0.050000000000000003, 0.0050000000000000001, 0.012500000000000001, 0.00125, 0.012500000000000001, 0.00125, 0.012500000000000001, 0.00125, 0.012500000000000001, 0.00125, 0.0062500000000000003, 0.00062500000000000001, 0.0062500000000000003, 0.00062500000000000001, 0.0062500000000000003, 0.00062500000000000001}},
    {"ExponentialLR(opt, 0.8)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<ExponentialLR>(opt, 0.8); },
     {0.10000000000000001, 0.01, 0.080000000000000016, 0.0080000000000000002, 0.064000000000000015, 0.0064000000000000003, 0.051200000000000016, 0.0051200000000000004, 0.040960000000000017, 0.0040960000000000007, 0.032768000000000012, 0.0032768000000000007, 0.026214400000000013, 0.0026214400000000009, 0.020971520000000011, 0.002097152000000001, 0.016777216000000008, 0.0016777216000000009, 0.013421772800000007, 0.0013421772800000008, 0.010737418240000006, 0.0010737418240000006, 0.008589934592000005, 0.00085899345920000057}},
    {"CosineAnnealingLR(opt, 5)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<CosineAnnealingLR>(opt, 5); },
     {0.10000000000000001, 0.01, 0.090450849718747381, 0.009045084971874737, 0.065450849718747373, 0.0065450849718747366, 0.034549150281252633, 0.0034549150281252628, 0.0095491502812526333, 0.00095491502812526316, 0, 0, 0.0095491502812526281, 0.00095491502812526273, 0.034549150281252647, 0.0034549150281252641, 0.065450849718747414, 0.00654508497187474, 0.090450849718747436, 0.0090450849718747423, 0.10000000000000006, 0.010000000000000005, 0.090450849718747464, 0.0090450849718747457}},
    {"CosineAnnealingLR(opt, 4, 0.001)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<CosineAnnealingLR>(opt, 4, 0.001); },
     {0.10000000000000001, 0.01, 0.085501785668734107, 0.0086819805153394644, 0.050500000000000003, 0.0055000000000000005, 0.0154982143312659, 0.0023180194846605367, 0.001, 0.001, 0.015498214331265896, 0.0023180194846605358, 0.05050000000000001, 0.0055000000000000005, 0.085501785668734134, 0.0086819805153394661, 0.10000000000000003, 0.010000000000000002, 0.085501785668734134, 0.0086819805153394644, 0.050500000000000031, 0.0055000000000000014, 0.015498214331265945, 0.0023180194846605402}},
    {"LinearLR(opt)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<LinearLR>(opt); },
     {0.033333333333333333, 0.0033333333333333331, 0.046666666666666669, 0.0046666666666666671, 0.060000000000000005, 0.006000000000000001, 0.073333333333333348, 0.0073333333333333349, 0.086666666666666684, 0.0086666666666666697, 0.10000000000000001, 0.010000000000000002, 0.10000000000000001, 0.010000000000000002, 0.10000000000000001, 0.010000000000000002, 0.10000000000000001, 0.010000000000000002, 0.10000000000000001, 0.010000000000000002, 0.10000000000000001, 0.010000000000000002, 0.10000000000000001, 0.010000000000000002}},
    {"LinearLR(opt, 1.0, 0.1, 6)", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> { return std::make_unique<LinearLR>(opt, 1.0, 0.1, 6); },
     {0.10000000000000001, 0.01, 0.085000000000000006, 0.0085000000000000006, 0.070000000000000007, 0.0070000000000000001, 0.055000000000000007, 0.0054999999999999997, 0.040000000000000008, 0.0040000000000000001, 0.025000000000000005, 0.0025000000000000001, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001, 0.010000000000000002, 0.001}},
  };
  return all;
}

struct OneCycleCase {
  std::string label;
  bool adam;
  std::vector<double> lrs, momentums;
};

const std::vector<OneCycleCase>& one_cycle_cases() {
  static const std::vector<OneCycleCase> all = {
    {"OneCycleLR(opt, 1.0, OneCycleLROptions().total_steps(12))", false,
     {0.040000000000000036, 0.040000000000000036, 0.34978965421958308, 0.34978965421958308, 0.87928515912212868, 0.87928515912212868, 0.99441543545091171, 0.99441543545091171, 0.93301296984141169, 0.93301296984141169, 0.81174565394976295, 0.81174565394976295, 0.64737899769510332, 0.64737899769510332, 0.46263710266697505, 0.46263710266697505, 0.28306099820869923, 0.28306099820869923, 0.1334775301888306, 0.1334775301888306, 0.034566987425395219, 0.034566987425395219, 3.9999999999999998e-06, 3.9999999999999998e-06},
     {0.94999999999999996, 0.91773024435212669, 0.86257446259144488, 0.85055845868874358, 0.85669872981077799, 0.86882550990706331, 0.88526224127945474, 0.90373650467932121, 0.9216941869558779, 0.93665259359149122, 0.94654368743221018, 0.94999999999999996}},
    {"OneCycleLR(opt, {1.0, 0.5}, OneCycleLROptions().epochs(3).steps_per_epoch(4).pct_start(0.25).anneal_strategy(AnnealStrategy::Linear).div_factor(10).final_div_factor(100).three_phase(true))", false,
     {0.10000000000000001, 0.050000000000000003, 0.55000000000000004, 0.27500000000000002, 1, 0.5, 0.55000000000000004, 0.27500000000000002, 0.099999999999999978, 0.049999999999999989, 0.085857142857142868, 0.042928571428571434, 0.071714285714285717, 0.035857142857142858, 0.057571428571428579, 0.028785714285714289, 0.043428571428571434, 0.021714285714285717, 0.02928571428571429, 0.014642857142857145, 0.015142857142857152, 0.0075714285714285762, 0.0010000000000000009, 0.00050000000000000044},
     {0.94999999999999996, 0.89999999999999991, 0.84999999999999998, 0.89999999999999991, 0.94999999999999996, 0.94999999999999996, 0.94999999999999996, 0.94999999999999996, 0.94999999999999996, 0.94999999999999996, 0.94999999999999996, 0.94999999999999996}},
    {"OneCycleLR(opt, 0.5, OneCycleLROptions().total_steps(12).base_momentum(0.8).max_momentum(0.9))", true,
     {0.020000000000000018, 0.020000000000000018, 0.17489482710979154, 0.17489482710979154, 0.43964257956106434, 0.43964257956106434, 0.49720771772545586, 0.49720771772545586, 0.46650648492070584, 0.46650648492070584, 0.40587282697488147, 0.40587282697488147, 0.32368949884755166, 0.32368949884755166, 0.23131855133348753, 0.23131855133348753, 0.14153049910434962, 0.14153049910434962, 0.0667387650944153, 0.0667387650944153, 0.01728349371269761, 0.01728349371269761, 1.9999999999999999e-06, 1.9999999999999999e-06},
     {0.90000000000000002, 0.86773024435212676, 0.81257446259144495, 0.80055845868874365, 0.80669872981077817, 0.81882550990706338, 0.83526224127945481, 0.85373650467932127, 0.87169418695587797, 0.88665259359149129, 0.89654368743221025, 0.90000000000000002}},
  };
  return all;
}

std::unique_ptr<Optimizer> two_groups(bool adam) {
  Tensor w = loom::zeros({2}).requires_grad_();
  Tensor b = loom::zeros({2}).requires_grad_();
  if (adam) return std::make_unique<Adam>(std::vector<ParamGroup>{ParamGroup({w}), ParamGroup({b}, AdamOptions(0.01))}, AdamOptions(0.1));
  return std::make_unique<SGD>(std::vector<ParamGroup>{ParamGroup({w}), ParamGroup({b}, SGDOptions(0.01).momentum(0.9))},
                               SGDOptions(0.1).momentum(0.9));
}

std::unique_ptr<OneCycleLR> make_one_cycle(const std::string& label, Optimizer& opt) {
  if (label.find("{1.0, 0.5}") != std::string::npos)
    return std::make_unique<OneCycleLR>(opt, std::vector<double>{1.0, 0.5},
                                        OneCycleLROptions().epochs(3).steps_per_epoch(4).pct_start(0.25)
                                            .anneal_strategy(AnnealStrategy::Linear).div_factor(10)
                                            .final_div_factor(100).three_phase(true));
  if (label.find("base_momentum") != std::string::npos)
    return std::make_unique<OneCycleLR>(opt, 0.5, OneCycleLROptions().total_steps(12).base_momentum(0.8).max_momentum(0.9));
  return std::make_unique<OneCycleLR>(opt, 1.0, OneCycleLROptions().total_steps(12));
}

}  // namespace

TEST_CASE("each scheduler gives PyTorch's lr sequence") {
  for (const Case& c : cases()) {
    SECTION(c.label) {
      auto opt = two_groups(false);
      auto sched = c.make(*opt);
      for (size_t step = 0; step < 12; ++step) {
        const auto& lrs = sched->get_last_lr();
        REQUIRE(lrs.size() == 2);
        for (size_t g = 0; g < 2; ++g) {
          CHECK(lrs[g] == Approx(c.lrs[2 * step + g]).epsilon(1e-12).margin(1e-15));
          CHECK(opt->param_groups()[g].options().get_lr() == lrs[g]);
        }
        sched->step();
      }
    }
  }
}

TEST_CASE("OneCycleLR cycles the lr and the momentum as PyTorch does") {
  for (const OneCycleCase& c : one_cycle_cases()) {
    SECTION(c.label) {
      auto opt = two_groups(c.adam);
      auto sched = make_one_cycle(c.label, *opt);
      for (size_t step = 0; step < 12; ++step) {
        for (size_t g = 0; g < 2; ++g)
          CHECK(sched->get_last_lr()[g] == Approx(c.lrs[2 * step + g]).epsilon(1e-12).margin(1e-15));
        CHECK(*opt->param_groups()[0].options().cycled_momentum() == Approx(c.momentums[step]).epsilon(1e-12));
        sched->step();
      }
      CHECK_THROWS_WITH(sched->step(), Catch::Contains("total steps is 12"));
    }
  }
}

TEST_CASE("schedulers reject bad settings") {
  auto opt = two_groups(false);
  CHECK_THROWS_WITH(StepLR(*opt, 0), Catch::Contains("step_size must be positive"));
  CHECK_THROWS_WITH(LinearLR(*opt, 0.0), Catch::Contains("start_factor"));
  CHECK_THROWS_WITH(OneCycleLR(*opt, 1.0), Catch::Contains("give total_steps"));
  CHECK_THROWS_WITH(OneCycleLR(*opt, std::vector<double>{1.0}, OneCycleLROptions().total_steps(5)),
                    Catch::Contains("expected 2 values for max_lr"));
  Tensor w = loom::zeros({2}).requires_grad_();
  Adagrad adagrad(std::vector<Tensor>{w});
  CHECK_THROWS_WITH(OneCycleLR(adagrad, 1.0, OneCycleLROptions().total_steps(5)),
                    Catch::Contains("no momentum to cycle"));
}
