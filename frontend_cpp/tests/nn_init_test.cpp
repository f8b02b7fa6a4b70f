// nn_init_test.cpp — loom::nn::init: gains, fans, and the statistics of each
// initialiser over a large tensor; layers start from PyTorch's distributions.
#include "nn_test_util.h"

#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace nn = loom::nn;
namespace init = loom::nn::init;
using loom::Tensor;

namespace {
struct Stats {
  double mean, std, min, max;
};
Stats stats(const Tensor& t) {
  const auto v = nn_test::values(t);
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / static_cast<double>(v.size() - 1)), *std::min_element(v.begin(), v.end()),
          *std::max_element(v.begin(), v.end())};
}
}  // namespace

TEST_CASE("nn::init: gains and fans are PyTorch's") {
  CHECK(init::calculate_gain("linear") == 1.0);
  CHECK(init::calculate_gain("conv2d") == 1.0);
  CHECK(init::calculate_gain("tanh") == Approx(5.0 / 3.0));
  CHECK(init::calculate_gain("relu") == Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain("leaky_relu") == Approx(std::sqrt(2.0 / (1 + 0.01 * 0.01))));
  CHECK(init::calculate_gain("leaky_relu", std::sqrt(5.0)) == Approx(std::sqrt(1.0 / 3.0)));
  CHECK(init::calculate_gain("selu") == 0.75);
  CHECK_THROWS_WITH(init::calculate_gain("swish"), Catch::Contains("unsupported nonlinearity 'swish'"));
  CHECK(init::calculate_fan_in_and_fan_out(loom::empty({8, 3, 5, 5})) == std::pair<int64_t, int64_t>{75, 200});
  CHECK_THROWS_WITH(init::calculate_fan_in_and_fan_out(loom::empty({4})), Catch::Contains("fewer than 2"));
}

TEST_CASE("nn::init: initialisers have the documented distribution") {
  loom::manual_seed(7);
  const Tensor t = loom::empty({400, 500});  // fan_in 500, fan_out 400
  auto s = stats(init::uniform_(t, -2.0, 3.0));
  CHECK(s.min >= -2.0);
  CHECK(s.max <= 3.0);
  CHECK(s.mean == Approx(0.5).margin(0.02));
  s = stats(init::normal_(t, 1.0, 2.0));
  CHECK(s.mean == Approx(1.0).margin(0.02));
  CHECK(s.std == Approx(2.0).epsilon(0.01));
  s = stats(init::constant_(t, 0.25));
  CHECK((s.min == 0.25 && s.max == 0.25));
  CHECK(stats(init::ones_(t)).min == 1.0);
  CHECK(stats(init::zeros_(t)).max == 0.0);

  const double xavier_a = std::sqrt(6.0 / 900.0);
  s = stats(init::xavier_uniform_(t));
  CHECK(s.max <= xavier_a);
  CHECK(s.max > 0.99 * xavier_a);
  CHECK(s.std == Approx(xavier_a / std::sqrt(3.0)).epsilon(0.01));
  s = stats(init::xavier_normal_(t, 2.0));
  CHECK(s.std == Approx(2.0 * std::sqrt(2.0 / 900.0)).epsilon(0.01));

  // kaiming defaults: a = 0, fan_in, leaky_relu -> gain sqrt(2).
  const double k_bound = std::sqrt(2.0) * std::sqrt(3.0 / 500.0);
  s = stats(init::kaiming_uniform_(t));
  CHECK(s.max <= k_bound);
  CHECK(s.min >= -k_bound);
  CHECK(s.max > 0.99 * k_bound);
  s = stats(init::kaiming_normal_(t, 0.0, "fan_out", "relu"));
  CHECK(s.mean == Approx(0.0).margin(0.005));
  CHECK(s.std == Approx(std::sqrt(2.0 / 400.0)).epsilon(0.01));
  CHECK_THROWS_WITH(init::kaiming_uniform_(t, 0.0, "fan_avg"), Catch::Contains("fan_avg"));

  // Works on a parameter (runs under no-grad) and returns the same tensor.
  Tensor p = loom::empty({3, 3}).requires_grad_();
  CHECK(init::normal_(p).is_same(p));
  CHECK(p.is_leaf());
}

TEST_CASE("nn::init: layers start from PyTorch's distributions") {
  loom::manual_seed(11);
  // Linear: weight U(±1/sqrt(in)) (kaiming_uniform_ with a = sqrt(5)), bias U(±1/sqrt(in)).
  nn::Linear fc(1000, 300);
  const double bound = 1.0 / std::sqrt(1000.0);
  auto s = stats(fc->weight);
  CHECK(s.max <= bound);
  CHECK(s.min >= -bound);
  CHECK(s.max > 0.99 * bound);
  CHECK(s.std == Approx(bound / std::sqrt(3.0)).epsilon(0.02));
  s = stats(fc->bias);
  CHECK(s.max <= bound);
  CHECK(s.min >= -bound);
  // Conv2d: fan_in = in * kH * kW.
  nn::Conv2d conv(nn::Conv2dOptions(16, 64, 3));
  const double cbound = 1.0 / std::sqrt(16.0 * 9.0);
  s = stats(conv->weight);
  CHECK(s.max <= cbound);
  CHECK(s.max > 0.98 * cbound);
  CHECK(stats(conv->bias).max <= cbound);
  // Embedding N(0, 1); norms ones and zeros.
  s = stats(nn::Embedding(1000, 64)->weight);
  CHECK(s.mean == Approx(0.0).margin(0.01));
  CHECK(s.std == Approx(1.0).epsilon(0.02));
  nn::LayerNorm ln(nn::LayerNormOptions({8}));
  CHECK(nn_test::values(ln->weight) == std::vector<double>(8, 1.0));
  CHECK(nn_test::values(ln->bias) == std::vector<double>(8, 0.0));
  // MultiheadAttention: xavier_uniform_ over in_proj_weight [3E, E].
  nn::MultiheadAttention mha(64, 4);
  const double mbound = std::sqrt(6.0 / (64.0 + 192.0));
  s = stats(mha->in_proj_weight);
  CHECK(s.max <= mbound);
  CHECK(s.max > 0.97 * mbound);
}
