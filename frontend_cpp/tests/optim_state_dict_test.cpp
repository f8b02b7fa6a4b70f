// optim_state_dict_test.cpp — Optimizer::state_dict / load_state_dict: the
// layout, a round trip that resumes training identically, and bad dicts.
#include <loom/loom.h>
#include <loom/optim.h>

#include <catch2/catch.hpp>

#include <vector>

namespace {

using loom::Tensor;
using namespace loom::optim;

Tensor loss_of(const Tensor& w, const Tensor& b) {
  const Tensor a = loom::from_vector<float>({0.5f, 1.5f, 2.0f}, {3});
  return (a * w * w).sum() + (b * b * b).sum();
}

void train(Optimizer& opt, const Tensor& w, const Tensor& b, int steps) {
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    loss_of(w, b).backward();
    opt.step();
  }
}

Tensor fresh(const Tensor& t) { return t.detach().clone().requires_grad_(); }

}  // namespace

TEST_CASE("optimizer state dict has the documented layout") {
  Tensor w = loom::from_vector<float>({1.0f, -2.0f, 0.5f}, {3}).requires_grad_();
  Tensor b = loom::from_vector<float>({0.7f, -0.4f}, {2}).requires_grad_();
  Adam opt({ParamGroup({w}), ParamGroup({b}, AdamOptions(0.01).amsgrad(true))}, AdamOptions(0.1));
  train(opt, w, b, 2);
  const loom::StateDict sd = opt.state_dict();
  CHECK(sd.at("param_groups.0.params").to_vector<int64_t>() == std::vector<int64_t>{0});
  CHECK(sd.at("param_groups.1.params").to_vector<int64_t>() == std::vector<int64_t>{1});
  CHECK(sd.at("param_groups.0.lr").item<double>() == 0.1);
  CHECK(sd.at("param_groups.1.lr").item<double>() == 0.01);
  CHECK(sd.at("param_groups.1.amsgrad").item<double>() == 1);
  CHECK(sd.at("param_groups.0.beta2").item<double>() == 0.999);
  CHECK(sd.at("state.1.step").item<double>() == 2);
  CHECK(sd.at("state.0.exp_avg").shape() == std::vector<int64_t>{3});
  CHECK(sd.contains("state.1.max_exp_avg_sq"));
  CHECK_FALSE(sd.contains("state.0.max_exp_avg_sq"));
}

TEST_CASE("loading a state dict resumes training identically") {
  Tensor w = loom::from_vector<float>({1.0f, -2.0f, 0.5f}, {3}).requires_grad_();
  Tensor b = loom::from_vector<float>({0.7f, -0.4f}, {2}).requires_grad_();
  SECTION("Adam") {
    Adam opt({ParamGroup({w}), ParamGroup({b}, AdamOptions(0.01))}, AdamOptions(0.1));
    train(opt, w, b, 3);
    Tensor w2 = fresh(w), b2 = fresh(b);
    // Other options on purpose: the dict carries the hyper-parameters.
    Adam resumed({ParamGroup({w2}), ParamGroup({b2})}, AdamOptions(0.5).betas({0.5, 0.5}));
    resumed.load_state_dict(opt.state_dict());
    train(opt, w, b, 3);
    train(resumed, w2, b2, 3);
    CHECK(w2.to_vector<float>() == w.to_vector<float>());
    CHECK(b2.to_vector<float>() == b.to_vector<float>());
  }
  SECTION("SGD with momentum") {
    SGD opt(std::vector<Tensor>{w, b}, SGDOptions(0.05).momentum(0.9).nesterov(true));
    train(opt, w, b, 3);
    Tensor w2 = fresh(w), b2 = fresh(b);
    SGD resumed(std::vector<Tensor>{w2, b2}, SGDOptions(0.05));
    resumed.load_state_dict(opt.state_dict());
    train(opt, w, b, 3);
    train(resumed, w2, b2, 3);
    CHECK(w2.to_vector<float>() == w.to_vector<float>());
    CHECK(b2.to_vector<float>() == b.to_vector<float>());
  }
}

TEST_CASE("a mismatched optimizer state dict is rejected and names the problem") {
  Tensor w = loom::ones({3}).requires_grad_();
  Tensor b = loom::ones({2}).requires_grad_();
  Adam opt(std::vector<Tensor>{w, b});
  train(opt, w, b, 1);
  const loom::StateDict sd = opt.state_dict();

  Adam one_param(std::vector<Tensor>{fresh(w)});
  CHECK_THROWS_WITH(one_param.load_state_dict(sd), Catch::Contains("has 1 parameters but the saved group has 2"));

  Adam swapped(std::vector<Tensor>{fresh(b), fresh(w)});
  CHECK_THROWS_WITH(swapped.load_state_dict(sd), Catch::Contains("'state.0.exp_avg' has shape [3]"));

  SGD sgd(std::vector<Tensor>{fresh(w), fresh(b)}, SGDOptions(0.1));
  CHECK_THROWS_WITH(sgd.load_state_dict(sd), Catch::Contains("missing 'param_groups.0.momentum'"));

  Adam two_groups({ParamGroup({fresh(w)}), ParamGroup({fresh(b)})});
  CHECK_THROWS_WITH(two_groups.load_state_dict(sd), Catch::Contains("has 1 parameter groups but this one has 2"));

  loom::StateDict extra = sd;
  extra.insert("state.7.exp_avg", loom::ones({3}));
  Adam same(std::vector<Tensor>{fresh(w), fresh(b)}, AdamOptions(0.3));
  CHECK_THROWS_WITH(same.load_state_dict(extra), Catch::Contains("unexpected entry 'state.7.exp_avg'"));
  // A rejected dict leaves the optimizer as it was.
  CHECK(same.param_groups()[0].options().get_lr() == 0.3);
}
