// Loss functions end to end: values against naive loops and torch 1.13
// literals, reductions, broadcasting, dtypes, errors, and sim (the losses are
// composites, so they run wherever their parts do).
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <functional>

using loom::DType;

namespace {
std::vector<double> vals(const loom::Tensor& t) { return t.to_vector<double>(); }

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}

// x, y as in the torch reference (2x3, float64).
loom::Tensor xs() { return loom::from_vector<double>({0.3, -1.2, 2.5, 0.0, 4.0, -3.1}, {2, 3}); }
loom::Tensor ys() { return loom::from_vector<double>({0.1, 0.4, -0.5, 2.0, 3.9, -1.0}, {2, 3}); }

// Elementwise f over xs/ys, with a naive loop.
std::vector<double> naive(const std::function<double(double, double)>& f) {
  const auto x = vals(xs()), y = vals(ys());
  std::vector<double> out;
  for (size_t i = 0; i < x.size(); ++i) out.push_back(f(x[i], y[i]));
  return out;
}
double total(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e;
  return s;
}
}  // namespace

TEST_CASE("mse, l1, smooth_l1 and huber match torch and a naive loop", "[loss]") {
  // Literals from torch 1.13 (at::mse_loss etc. on float64).
  check_close({loom::mse_loss(xs(), ys()).item<double>()}, {3.3366666666666664});
  check_close({loom::mse_loss(xs(), ys(), "sum").item<double>()}, {20.02});
  check_close({loom::l1_loss(xs(), ys()).item<double>()}, {1.5});
  check_close({loom::smooth_l1_loss(xs(), ys()).item<double>()}, {1.1208333333333333});
  check_close({loom::smooth_l1_loss(xs(), ys(), "sum", 0.5).item<double>()}, {7.75});
  check_close(vals(loom::huber_loss(xs(), ys(), "none", 1.5)),
              {0.019999999999999997, 1.2750000000000001, 3.375, 1.875, 0.0050000000000000088, 2.0250000000000004});

  auto sl1 = [](double b) {
    return [b](double x, double y) {
      const double d = std::abs(x - y);
      return d < b ? 0.5 * d * d / b : d - 0.5 * b;
    };
  };
  check_close(vals(loom::smooth_l1_loss(xs(), ys(), "none", 2.0)), naive(sl1(2.0)));
  check_close({loom::smooth_l1_loss(xs(), ys(), "mean", 0.25).item<double>()},
              {total(naive(sl1(0.25))) / 6});
  // Betas and deltas that float32 cannot hold are not rounded to float32 for
  // float64 inputs (|d| = 0.3 sits exactly on beta = 0.3 here).
  auto x3 = loom::from_vector<double>({0.3, 1.0, 0.1}, {3});
  auto y3 = loom::zeros({3}, DType::Float64);
  check_close(vals(loom::smooth_l1_loss(x3, y3, "none", 0.3)),
              {0.3 - 0.15, 1.0 - 0.15, 0.5 * 0.1 * 0.1 / 0.3});
  check_close(vals(loom::huber_loss(x3, y3, "none", 0.3)),
              {0.3 * (0.3 - 0.15), 0.3 * (1.0 - 0.15), 0.5 * 0.1 * 0.1});
  // beta = 0 is l1.
  check_close(vals(loom::smooth_l1_loss(xs(), ys(), "none", 0.0)),
              naive([](double x, double y) { return std::abs(x - y); }));
  check_close(vals(loom::mse_loss(xs(), ys(), "none")),
              naive([](double x, double y) { return (x - y) * (x - y); }));
  CHECK(loom::mse_loss(xs(), ys(), "none").sizes() == loom::IntArrayRef({2, 3}));
  CHECK(loom::mse_loss(xs(), ys()).dim() == 0);
}

TEST_CASE("regression losses broadcast and promote like PyTorch", "[loss]") {
  // torch: mse_loss(x, [1, -2, 0.5], reduction='none') broadcasts (with a warning).
  auto t = loom::from_vector<double>({1.0, -2.0, 0.5}, {3});
  check_close(vals(loom::mse_loss(xs(), t, "none")),
              {0.48999999999999994, 0.64000000000000012, 4, 1, 36, 12.960000000000001});
  CHECK(loom::mse_loss(xs(), t, "none").sizes() == loom::IntArrayRef({2, 3}));
  auto f = loom::from_vector<float>({1, 2, 4}, {3});
  CHECK(loom::mse_loss(f, f.to(DType::Float64)).dtype() == DType::Float64);
  CHECK(loom::mse_loss(f, loom::arange(3)).dtype() == DType::Float32);  // float32 with int64 -> float32
  CHECK(loom::mse_loss(f, loom::arange(3)).item<float>() == Approx((1 + 1 + 4) / 3.0));
  auto h = f.to(DType::Float16);
  CHECK(loom::mse_loss(h, h * 0.5).dtype() == DType::Float16);
  CHECK(loom::mse_loss(h, h * 0.5).item<float>() == Approx((0.25 + 1 + 4) / 3.0));
  CHECK(loom::l1_loss(f.to(DType::BFloat16), f.to(DType::BFloat16) + 1.0, "sum").item<float>() == 3.0f);
  // l1 on integers: fine for none/sum (int64 results), mean needs floats.
  auto i = loom::from_vector<int64_t>({1, 5, -3}, {3});
  auto j = loom::from_vector<int64_t>({4, 5, 3}, {3});
  CHECK(loom::l1_loss(i, j, "none").to_vector<int64_t>() == std::vector<int64_t>{3, 0, 6});
  CHECK(loom::l1_loss(i, j, "sum").dtype() == DType::Int64);
  CHECK(loom::l1_loss(i, j, "sum").item<int64_t>() == 9);
  // Empty inputs: mean is NaN, sum 0 (as PyTorch).
  CHECK(std::isnan(loom::mse_loss(loom::ones({0}), loom::ones({0})).item<float>()));
  CHECK(loom::l1_loss(loom::ones({0}), loom::ones({0}), "sum").item<float>() == 0.0f);
}

TEST_CASE("binary_cross_entropy matches torch, clamps the log at -100", "[loss]") {
  auto p = loom::from_vector<double>({0.2, 0.9, 0.5, 0.0, 1.0, 0.7}, {2, 3});
  auto t = loom::from_vector<double>({0, 1, 0.3, 1, 0, 0.5}, {2, 3});
  auto w = loom::from_vector<double>({1, 2, 3}, {3});
  // x = 0 with t = 1 and x = 1 with t = 0 give 100: the clamped log.
  check_close(vals(loom::binary_cross_entropy(p, t, {}, "none")),
              {0.22314355131420971, 0.10536051565782628, 0.69314718055994529, 100, 100,
               0.78032387413233417});
  check_close({loom::binary_cross_entropy(p, t, w).item<double>()}, {50.809046291117788});
  check_close({loom::binary_cross_entropy(p, t, w, "sum").item<double>()}, {304.85427774670671});
  // float32 against a naive loop.
  auto pf = p.to(DType::Float32), tf = t.to(DType::Float32);
  const auto pv = vals(pf), tv = vals(tf);
  std::vector<double> want;
  for (size_t i = 0; i < pv.size(); ++i)
    want.push_back(-(tv[i] * std::max(std::log(pv[i]), -100.0) +
                     (1 - tv[i]) * std::max(std::log1p(-pv[i]), -100.0)));
  check_close(vals(loom::binary_cross_entropy(pf, tf, {}, "none")), want, 1e-6);
  CHECK(loom::binary_cross_entropy(pf, tf).dtype() == DType::Float32);
  CHECK(std::isnan(loom::binary_cross_entropy(loom::ones({0}), loom::ones({0})).item<float>()));
}

TEST_CASE("binary_cross_entropy_with_logits is stable and matches torch", "[loss]") {
  auto z = loom::from_vector<double>({0.3, -1.2, 25.0, -30.0, 4.0, -3.1}, {2, 3});
  auto t = loom::from_vector<double>({0, 1, 0.3, 1, 0, 0.5}, {2, 3});
  auto pw = loom::from_vector<double>({1.5, 0.5, 2.0}, {3});
  auto w = loom::from_vector<double>({2.0, 0.5}, {2, 1});
  check_close(vals(loom::binary_cross_entropy_with_logits(z, t, {}, {}, "none")),
              {0.85435524446852695, 1.4632824673380314, 17.500000000013888, 30.000000000000092,
               4.0181499279178094, 1.594063967938574},
              1e-11);
  check_close(vals(loom::binary_cross_entropy_with_logits(z, t, w, pw, "none")),
              {1.7087104889370539, 1.4632824673380314, 35.00000000003611, 22.500000000000071,
               2.0090749639589047, 1.5830479759539302},
              1e-11);
  check_close({loom::binary_cross_entropy_with_logits(z, t, {}, pw).item<double>()},
              {11.878373726330233}, 1e-11);
  // Large logits in float32 stay finite (the naive log(sigmoid) would not).
  auto big = loom::from_vector<float>({100.0f, -100.0f}, {2});
  auto tt = loom::from_vector<float>({0.0f, 1.0f}, {2});
  check_close(vals(loom::binary_cross_entropy_with_logits(big, tt, {}, loom::from_vector<float>({2, 3}, {2}), "none")),
              {100, 300}, 1e-6);
  CHECK(loom::binary_cross_entropy_with_logits(big, tt.to(DType::Float64)).dtype() == DType::Float64);
}

TEST_CASE("loss errors name the op, the argument and what was expected", "[loss]") {
  auto f = loom::ones({3});
  auto i = loom::ones({3}, DType::Int64);
  CHECK_THROWS_WITH(loom::mse_loss(f, f, "avg"),
                    Catch::Contains("mse_loss: 'avg' is not a valid value for reduction"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy(f * 0.5, f * 0.5, {}, "Mean"),
                    Catch::Contains("binary_cross_entropy: 'Mean' is not a valid value for reduction"));
  CHECK_THROWS_WITH(loom::mse_loss(f, loom::ones({2})),
                    Catch::Contains("mse_loss: shapes [3] and [2] cannot be broadcast"));
  CHECK_THROWS_WITH(loom::mse_loss(i, i), Catch::Contains("mse_loss: expected floating point input and target, got int64 and int64"));
  CHECK_THROWS_WITH(loom::smooth_l1_loss(i, i), Catch::Contains("smooth_l1_loss: expected floating point"));
  CHECK_THROWS_WITH(loom::huber_loss(i, i), Catch::Contains("huber_loss: expected floating point"));
  CHECK_THROWS_WITH(loom::l1_loss(i, i), Catch::Contains("l1_loss: reduction 'mean' needs a floating point dtype, got int64"));
  CHECK_THROWS_WITH(loom::l1_loss(loom::ones({2}, DType::Bool), loom::ones({2}, DType::Bool), "sum"),
                    Catch::Contains("l1_loss: bool"));
  CHECK_THROWS_WITH(loom::smooth_l1_loss(f, f, "mean", -1.0), Catch::Contains("smooth_l1_loss: beta must be >= 0, got -1"));
  CHECK_THROWS_WITH(loom::huber_loss(f, f, "mean", 0.0), Catch::Contains("huber_loss: delta must be > 0, got 0"));
  // binary_cross_entropy: same shape, floating, same dtype, values in [0, 1].
  CHECK_THROWS_WITH(loom::binary_cross_entropy(f * 0.5, loom::ones({2, 3})),
                    Catch::Contains("binary_cross_entropy: target size [2, 3] must be the same as input size [3]"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy(i, i), Catch::Contains("binary_cross_entropy: expected a floating point input, got int64"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy(f * 0.5, (f * 0.5).to(DType::Float64)),
                    Catch::Contains("expected target of the input's dtype float32, got float64"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy(f * 2.0, f),
                    Catch::Contains("binary_cross_entropy: all elements of input should be between 0 and 1"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy(f * -0.5, f), Catch::Contains("between 0 and 1"));
  auto nan = loom::from_vector<float>({0.5f, NAN}, {2});
  CHECK_THROWS_WITH(loom::binary_cross_entropy(nan, loom::ones({2})), Catch::Contains("between 0 and 1"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy(f * 0.5, f, loom::ones({2})),
                    Catch::Contains("binary_cross_entropy: shapes [3] and [2] cannot be broadcast"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy(f * 0.5, f, loom::ones({2, 3})),
                    Catch::Contains("'weight' of shape [2, 3] cannot be broadcast to the input shape [3]"));
  // ..._with_logits
  CHECK_THROWS_WITH(loom::binary_cross_entropy_with_logits(f, loom::ones({1, 3})),
                    Catch::Contains("binary_cross_entropy_with_logits: target size [1, 3] must be the same as input size [3]"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy_with_logits(f, i),
                    Catch::Contains("expected floating point input and target, got float32 and int64"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy_with_logits(f, f, {}, loom::ones({4})),
                    Catch::Contains("binary_cross_entropy_with_logits: shapes [3] and [4] cannot be broadcast"));
  CHECK_THROWS_WITH(loom::binary_cross_entropy_with_logits(f, f, {}, {}, "bad"),
                    Catch::Contains("'bad' is not a valid value for reduction"));
}

TEST_CASE("losses run on sim (composites of ops that fall back)", "[loss]") {
  loom::Device sim("sim");
  auto x = xs().to(sim), y = ys().to(sim);
  auto l = loom::mse_loss(x, y);
  CHECK(l.device() == sim);
  check_close({l.cpu().item<double>()}, {3.3366666666666664});
  auto p = loom::from_vector<float>({0.25f, 0.75f}, {2}).to(sim);
  auto t = loom::from_vector<float>({0.0f, 1.0f}, {2}).to(sim);
  check_close({loom::binary_cross_entropy(p, t).cpu().item<double>()}, {-std::log(0.75)}, 1e-6);
  check_close({loom::binary_cross_entropy_with_logits(p, t, {}, {}, "sum").cpu().item<double>()},
              {std::log1p(std::exp(0.25)) + std::log1p(std::exp(-0.75))}, 1e-6);
}
