// optim_trajectory_test.cpp — every optimizer and option against PyTorch
// 1.13: five steps on loss = sum(A*w*w) + sum(B*w) from w = [1, -2, 0.5].
// The expected values come from python3-torch with the same options:
//
//   A = torch.tensor([0.5, 1.5, 2.0]); B = torch.tensor([0.3, -0.2, 0.1])
//   w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
//   opt = torch.optim.<Name>([w], **options)
//   for _ in range(5):
//       opt.zero_grad(); ((A * w * w).sum() + (B * w).sum()).backward(); opt.step()
#include <loom/loom.h>
#include <loom/optim.h>

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using loom::Tensor;
using Factory = std::function<std::unique_ptr<loom::optim::Optimizer>(std::vector<Tensor>)>;

struct Case {
  std::string label;
  Factory make;
  std::vector<float> expected;
};

#define OPTIM_CASE(Name, options)                                                        \
  #Name " " #options, [](std::vector<Tensor> p) -> std::unique_ptr<loom::optim::Optimizer> { \
    using namespace loom::optim;                                                         \
    return std::make_unique<Name>(std::move(p), options);                                \
  }

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
    {OPTIM_CASE(SGD, SGDOptions(0.1)), {0.467637002f, -0.280677974f, 0.0158239994f}},
    {OPTIM_CASE(SGD, SGDOptions(0.1).momentum(0.9)), {-0.337908059f, 1.67511189f, -0.407724977f}},
    {OPTIM_CASE(SGD, SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01)), {0.283190131f, 0.69464767f, -0.306064963f}},
    {OPTIM_CASE(SGD, SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.1)), {0.0623118132f, 0.773834169f, -0.24388431f}},
    {OPTIM_CASE(SGD, SGDOptions(0.05).momentum(0.5).maximize(true)), {1.587901f, -5.50079298f, 1.81986058f}},
    {OPTIM_CASE(Adam, AdamOptions(0.1)), {0.505346358f, -1.50283241f, 0.0251920819f}},
    {OPTIM_CASE(Adam, AdamOptions(0.1).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.1)), {0.505991936f, -1.5030899f, 0.027836293f}},
    {OPTIM_CASE(Adam, AdamOptions(0.1).betas({0.9, 0.5}).amsgrad(true)), {0.496851683f, -1.49441671f, 0.03649766f}},
    {OPTIM_CASE(Adam, AdamOptions(0.1).betas({0.9, 0.5})), {0.481113434f, -1.48884332f, -0.0571040884f}},
    {OPTIM_CASE(Adam, AdamOptions(0.1).maximize(true)), {1.50198698f, -2.50152564f, 1.00185156f}},
    {OPTIM_CASE(AdamW, AdamWOptions(0.1)), {0.501421094f, -1.49391913f, 0.0238818973f}},
    {OPTIM_CASE(AdamW, AdamWOptions(0.1).weight_decay(0.1).amsgrad(true).betas({0.8, 0.9})), {0.467418134f, -1.4157151f, 0.0182543322f}},
    {OPTIM_CASE(RMSprop, RMSpropOptions(0.01)), {0.69126451f, -1.6851449f, 0.219008565f}},
    {OPTIM_CASE(RMSprop, RMSpropOptions(0.01).alpha(0.9).momentum(0.5).eps(1e-6)), {0.824209988f, -1.8229475f, 0.329630464f}},
    {OPTIM_CASE(RMSprop, RMSpropOptions(0.01).centered(true).weight_decay(0.1)), {0.687846661f, -1.68116999f, 0.216193512f}},
    {OPTIM_CASE(RMSprop, RMSpropOptions(0.01).centered(true).momentum(0.9).maximize(true)), {2.01305032f, -2.99573493f, 1.56625772f}},
    {OPTIM_CASE(Adagrad, AdagradOptions(0.1)), {0.692530274f, -1.68642545f, 0.220145777f}},
    {OPTIM_CASE(Adagrad, AdagradOptions(0.1).lr_decay(0.1).initial_accumulator_value(0.5).weight_decay(0.1).eps(1e-6)), {0.746715367f, -1.72520614f, 0.256216139f}},
    {OPTIM_CASE(Adagrad, AdagradOptions(0.1).maximize(true)), {1.33656502f, -2.33184743f, 0.852720857f}},
  };
  return all;
}

Tensor quadratic_loss(const Tensor& w) {
  const Tensor a = loom::from_vector<float>({0.5f, 1.5f, 2.0f}, {3});
  const Tensor b = loom::from_vector<float>({0.3f, -0.2f, 0.1f}, {3});
  return (a * w * w).sum() + (b * w).sum();
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-6));
}

}  // namespace

TEST_CASE("each optimizer follows PyTorch's trajectory on a quadratic") {
  for (const Case& c : cases()) {
    SECTION(c.label) {
      Tensor w = loom::from_vector<float>({1.0f, -2.0f, 0.5f}, {3}).requires_grad_();
      auto opt = c.make({w});
      for (int step = 0; step < 5; ++step) {
        opt->zero_grad();
        quadratic_loss(w).backward();
        opt->step();
      }
      check_close(w.to_vector<float>(), c.expected);
    }
  }
}

TEST_CASE("parameter groups keep their own options") {
  // torch.optim.SGD([{"params": [w], "lr": 0.1, "momentum": 0.0}, {"params": [b]}],
  //                 lr=0.01, momentum=0.9), 4 steps of quadratic_loss(w) + sum(b^3).
  using namespace loom::optim;
  Tensor w = loom::from_vector<float>({1.0f, -2.0f, 0.5f}, {3}).requires_grad_();
  Tensor b = loom::from_vector<float>({0.7f, -0.4f}, {2}).requires_grad_();
  SGD opt({ParamGroup({w}, SGDOptions(0.1)), ParamGroup({b})}, SGDOptions(0.01).momentum(0.9));
  REQUIRE(opt.param_groups().size() == 2);
  CHECK(opt.param_groups()[1].options().get_lr() == 0.01);
  for (int step = 0; step < 4; ++step) {
    opt.zero_grad();
    (quadratic_loss(w) + (b * b * b).sum()).backward();
    opt.step();
  }
  check_close(w.to_vector<float>(), {0.552929997f, -0.429539979f, 0.0430399999f});
  check_close(b.to_vector<float>(), {0.575040638f, -0.445082963f});
}

TEST_CASE("add_param_group adds parameters with the defaults") {
  using namespace loom::optim;
  Tensor w = loom::ones({2}).requires_grad_();
  Tensor b = loom::ones({2}).requires_grad_();
  Adam opt(std::vector<Tensor>{w}, AdamOptions(0.5));
  opt.add_param_group(ParamGroup({b}));
  CHECK(opt.param_groups()[1].options().get_lr() == 0.5);
  CHECK_THROWS_WITH(opt.add_param_group(ParamGroup({w})), Catch::Contains("more than once"));
}

TEST_CASE("step skips parameters without a gradient; zero_grad clears or zeroes") {
  using namespace loom::optim;
  Tensor w = loom::ones({2}).requires_grad_();
  Tensor unused = loom::ones({2}).requires_grad_();
  SGD opt(std::vector<Tensor>{w, unused}, SGDOptions(0.5));
  (w * w).sum().backward();
  opt.step();
  CHECK(w.to_vector<float>() == std::vector<float>{0.0f, 0.0f});
  CHECK(unused.to_vector<float>() == std::vector<float>{1.0f, 1.0f});
  CHECK(opt.state_dict().contains("state.0.step"));
  CHECK_FALSE(opt.state_dict().contains("state.1.step"));
  opt.zero_grad(/*set_to_none=*/false);
  REQUIRE(w.grad().defined());
  CHECK(w.grad().to_vector<float>() == std::vector<float>{0.0f, 0.0f});
  opt.zero_grad();
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("bad optimizer arguments name the problem") {
  using namespace loom::optim;
  Tensor w = loom::ones({2}).requires_grad_();
  CHECK_THROWS_WITH(SGD(std::vector<Tensor>{w}, SGDOptions(-1)), Catch::Contains("invalid lr"));
  CHECK_THROWS_WITH(SGD(std::vector<Tensor>{w}, SGDOptions(0.1).nesterov(true)), Catch::Contains("Nesterov"));
  CHECK_THROWS_WITH(Adam(std::vector<Tensor>{w}, AdamOptions().betas({1.0, 0.9})), Catch::Contains("beta1"));
  CHECK_THROWS_WITH(Adam(std::vector<Tensor>{}), Catch::Contains("empty parameter list"));
  CHECK_THROWS_WITH(Adam(std::vector<Tensor>{w * 2}), Catch::Contains("not a leaf"));
  CHECK_THROWS_WITH(Adam(std::vector<Tensor>{loom::ones({2}, loom::DType::Int64)}),
                    Catch::Contains("not floating point"));
}
