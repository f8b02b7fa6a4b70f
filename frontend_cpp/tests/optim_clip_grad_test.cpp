// optim_clip_grad_test.cpp — clip_grad_norm_ / clip_grad_value_ against
// torch.nn.utils (1.13) with gradients [3, -4, 1] and [[0.5, -2], [1.5, 0]]
// and max_norm 2.
#include <loom/loom.h>
#include <loom/optim.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace {

using loom::Tensor;

std::vector<Tensor> params_with_grads() {
  Tensor a = loom::zeros({3}).requires_grad_();
  Tensor b = loom::zeros({2, 2}).requires_grad_();
  a.mutable_grad() = loom::from_vector<float>({3.0f, -4.0f, 1.0f}, {3});
  b.mutable_grad() = loom::from_vector<float>({0.5f, -2.0f, 1.5f, 0.0f}, {2, 2});
  return {a, b};
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-7));
}

}  // namespace

TEST_CASE("clip_grad_norm_ matches torch for each norm type") {
  struct Expected {
    double norm_type, total;
    std::vector<float> a, b;
  };
  const std::vector<Expected> cases = {
      {2.0, 5.70087719, {1.05246937f, -1.40329254f, 0.350823134f}, {0.175411567f, -0.701646268f, 0.526234686f, 0}},
      {1.0, 12, {0.49999997f, -0.666666627f, 0.166666657f}, {0.0833333284f, -0.333333313f, 0.249999985f, 0}},
      {3.0, 4.69512129, {1.27792203f, -1.70389605f, 0.425974011f}, {0.212987006f, -0.851948023f, 0.638961017f, 0}},
      {loom::optim::kInfNorm, 4, {1.49999964f, -1.99999952f, 0.499999881f}, {0.24999994f, -0.999999762f, 0.749999821f, 0}},
  };
  for (const auto& c : cases) {
    SECTION("norm_type " + std::to_string(c.norm_type)) {
      auto params = params_with_grads();
      CHECK(loom::optim::clip_grad_norm_(params, 2.0, c.norm_type) == Approx(c.total).epsilon(1e-6));
      check_close(params[0].grad().to_vector<float>(), c.a);
      check_close(params[1].grad().to_vector<float>(), c.b);
    }
  }
}

TEST_CASE("clip_grad_norm_ leaves small gradients alone and skips missing ones") {
  auto params = params_with_grads();
  params.push_back(loom::zeros({2}).requires_grad_());  // no grad
  CHECK(loom::optim::clip_grad_norm_(params, 100.0) == Approx(std::sqrt(26.0 + 6.5)));
  check_close(params[0].grad().to_vector<float>(), {3.0f, -4.0f, 1.0f});
  CHECK(loom::optim::clip_grad_norm_(std::vector<Tensor>{}, 1.0) == 0.0);
}

TEST_CASE("clip_grad_norm_ reports a non-finite norm when asked") {
  auto params = params_with_grads();
  params[0].mutable_grad() = loom::from_vector<float>({NAN, 1.0f, 1.0f}, {3});
  CHECK_THROWS_WITH(loom::optim::clip_grad_norm_(params, 1.0, 2.0, true), Catch::Contains("non-finite"));
}

TEST_CASE("clip_grad_value_ clamps every element") {
  auto params = params_with_grads();
  loom::optim::clip_grad_value_(params, 1.0);
  check_close(params[0].grad().to_vector<float>(), {1.0f, -1.0f, 1.0f});
  check_close(params[1].grad().to_vector<float>(), {0.5f, -1.0f, 1.0f, 0.0f});
  CHECK_THROWS_WITH(loom::optim::clip_grad_value_(params, -1.0), Catch::Contains("clip_value"));
}
