// batch_norm's gradient op (_batch_norm_backward): direct calls against
// autograd through a formula written here with elementwise ops, the path
// batch_norm's backward takes, the running statistics' version bump, and
// argument errors.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  const auto x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

std::vector<int64_t> channel_shape(const Tensor& x) {
  std::vector<int64_t> s(static_cast<size_t>(x.dim()), 1);
  s[1] = x.size(1);
  return s;
}

std::vector<int64_t> all_but_channels(const Tensor& x) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i != 1) d.push_back(i);
  return d;
}

// batch_norm written out with elementwise ops and reductions, so autograd
// derives its gradients independently of the op's formula.
Tensor reference_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm, const Tensor& rv,
                            bool training, double eps) {
  const std::vector<int64_t> dims = all_but_channels(x), p = channel_shape(x);
  const Tensor m = training ? loom::mean(x, dims, true) : rm.reshape(p);
  const Tensor v = training ? loom::var(x, dims, loom::Scalar(0), true) : rv.reshape(p);
  // eps as a float64 0-d tensor: a Scalar would round it to float32.
  return (x - m) / loom::sqrt(v + loom::full({}, eps, DType::Float64)) * w.reshape(p) + b.reshape(p);
}

std::vector<std::string> paths_of(const loom::DispatchTrace& trace, const std::string& op) {
  std::vector<std::string> r;
  for (const auto& e : trace.events())
    if (e.op && e.op->name() == op) r.push_back(loom::to_string(e.path));
  return r;
}

}  // namespace

TEST_CASE("batch_norm_backward matches autograd of the written-out formula", "[nn]") {
  loom::manual_seed(11);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{6, 3}, {4, 3, 5}, {2, 3, 4, 3}, {2, 3, 2, 3, 2}}) {
    for (const bool training : {true, false}) {
      CAPTURE(shape, training);
      const int64_t C = shape[1];
      const Tensor x = loom::randn(shape, DType::Float64), g = loom::randn(shape, DType::Float64);
      const Tensor w = loom::randn({C}, DType::Float64), b = loom::randn({C}, DType::Float64);
      const Tensor rm = loom::randn({C}, DType::Float64), rv = loom::rand({C}, DType::Float64) + 0.5;
      const double eps = 1e-3;
      Tensor xr = x.clone().requires_grad_(), wr = w.clone().requires_grad_(), br = b.clone().requires_grad_();
      const auto ref = loom::autograd::grad({reference_batch_norm(xr, wr, br, rm, rv, training, eps)}, {xr, wr, br}, {g});
      const auto [gi, gw, gb] = loom::batch_norm_backward(g, x, w, training ? Tensor() : rm,
                                                          training ? Tensor() : rv, training, eps);
      CHECK(max_abs_diff(gi, ref[0]) < 1e-10);
      CHECK(max_abs_diff(gw, ref[1]) < 1e-10);
      CHECK(max_abs_diff(gb, ref[2]) < 1e-10);
      // Without a weight: grad_input as with ones; grad_weight is still Σ g·x̂.
      const auto [gi1, gw1, gb1] = loom::batch_norm_backward(g, x, {}, training ? Tensor() : rm,
                                                             training ? Tensor() : rv, training, eps);
      const auto ones = loom::batch_norm_backward(g, x, loom::ones({C}, DType::Float64), training ? Tensor() : rm,
                                                  training ? Tensor() : rv, training, eps);
      CHECK(max_abs_diff(gi1, std::get<0>(ones)) < 1e-12);
      CHECK(max_abs_diff(gw1, ref[1]) < 1e-10);
      CHECK(max_abs_diff(gb1, ref[2]) < 1e-10);
    }
  }
}

TEST_CASE("batch_norm_backward keeps the input's dtype; 16-bit inputs compute in float32", "[nn]") {
  loom::manual_seed(5);
  const Tensor x = loom::randn({8, 4, 3}), g = loom::randn({8, 4, 3}), w = loom::randn({4});
  const auto f64 = loom::batch_norm_backward(g.to(DType::Float64), x.to(DType::Float64), w.to(DType::Float64), {},
                                             {}, true);
  for (const DType t : {DType::Float32, DType::BFloat16}) {
    const auto [gi, gw, gb] = loom::batch_norm_backward(g.to(t), x.to(t), w.to(t), {}, {}, true);
    CHECK(gi.dtype() == t);
    CHECK(gw.dtype() == t);
    CHECK(gw.sizes() == loom::IntArrayRef({4}));
    CHECK(gb.sizes() == loom::IntArrayRef({4}));
    const double tol = t == DType::Float32 ? 1e-5 : 0.1;
    CHECK(max_abs_diff(gi, std::get<0>(f64)) < tol);
    CHECK(max_abs_diff(gb, std::get<2>(f64)) < tol);
  }
  // Running statistics of another dtype than the input's are read as they are.
  const Tensor rm = loom::randn({4}, DType::Float64), rv = loom::rand({4}, DType::Float64) + 0.5;
  const auto mixed = loom::batch_norm_backward(g, x, w, rm, rv, false);
  const auto same = loom::batch_norm_backward(g, x, w, rm.to(DType::Float32), rv.to(DType::Float32), false);
  CHECK(max_abs_diff(std::get<0>(mixed), std::get<0>(same)) < 1e-6);
}

TEST_CASE("batch_norm's backward runs _batch_norm_backward (the CPU's kernel)", "[nn]") {
  Tensor x = loom::randn({4, 3, 5}).requires_grad_(), w = loom::randn({3}).requires_grad_();
  const Tensor y = loom::batch_norm(x, {}, {}, w, {}, true);
  CHECK(y.grad_fn()->name() == "NativeBatchNormBackward0");
  loom::DispatchTrace trace;
  const auto g = loom::autograd::grad({y.sum()}, {x, w});
  CHECK(paths_of(trace, "_batch_norm_backward") == std::vector<std::string>{"kernel"});
  // sum's gradient is all ones: x̂ sums to 0 per channel, so grad_input is 0.
  CHECK(loom::max(g[0].abs()).item<float>() < 1e-5);
}

TEST_CASE("batch_norm in training marks its running statistics as modified", "[nn][autograd]") {
  // An eval-mode call saves the running statistics for backward; a
  // training call then updates them in place, so that backward must refuse
  // to read them (whichever path, kernel or composite, wrote them).
  Tensor x = loom::randn({4, 2}, DType::Float64).requires_grad_();
  Tensor rm = loom::zeros({2}, DType::Float64), rv = loom::ones({2}, DType::Float64);
  const Tensor y = loom::batch_norm(x, rm, rv, {}, {}, false);
  const uint32_t before = rm.storage()->version();
  (void)loom::batch_norm(x.detach(), rm, rv, {}, {}, true);
  CHECK(rm.storage()->version() > before);
  CHECK_THROWS_WITH(y.sum().backward(), Catch::Contains("modified by an inplace operation"));
  // Evaluation mode leaves them alone.
  const uint32_t now = rv.storage()->version();
  (void)loom::batch_norm(x.detach(), rm, rv, {}, {}, false);
  CHECK(rv.storage()->version() == now);
}

TEST_CASE("batch_norm_backward rejects bad arguments with the op's name", "[nn]") {
  const Tensor x = loom::randn({2, 3, 4}), g = loom::randn({2, 3, 4}), w = loom::randn({3});
  const Tensor rm = loom::zeros({3}), rv = loom::ones({3});
  using Catch::Contains;
  CHECK_THROWS_WITH(loom::batch_norm_backward(loom::randn({2, 3}), x, w, {}, {}, true),
                    Contains("_batch_norm_backward: expected grad_output of the input's size [2, 3, 4] and dtype "
                             "float32, got [2, 3] and float32"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g.to(DType::Float64), x, w, {}, {}, true),
                    Contains("got [2, 3, 4] and float64"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g, x, w, {}, rv, false),
                    Contains("_batch_norm_backward: running_mean must be defined in evaluation mode"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g, x, w, rm, {}, false),
                    Contains("_batch_norm_backward: running_var must be defined in evaluation mode"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g, x, loom::randn({4}), {}, {}, true),
                    Contains("_batch_norm_backward: weight should contain 3 elements not 4"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g, x, w.to(DType::Float64), {}, {}, true),
                    Contains("_batch_norm_backward: expected weight of dtype float32 (the input's), got float64"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g, x, w, rm, loom::ones({2}), false),
                    Contains("_batch_norm_backward: running_var should contain 3 elements not 2"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g, x, w, loom::zeros({3}, DType::Int64), rv, false),
                    Contains("_batch_norm_backward: expected a floating point running_mean, got int64"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(g.to(DType::Int32), x.to(DType::Int32), {}, {}, {}, true),
                    Contains("_batch_norm_backward: expected a floating point input, got int32"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(loom::randn({3}), loom::randn({3}), {}, {}, {}, true),
                    Contains("_batch_norm_backward: expected an input of at least 2 dims (N, C, *), got [3]"));
  CHECK_THROWS_WITH(loom::batch_norm_backward(loom::randn({1, 3}), loom::randn({1, 3}), {}, {}, {}, true),
                    Contains("_batch_norm_backward: expected more than 1 value per channel when training"));
  // Evaluation mode takes a single value per channel.
  const auto [gi, gw, gb] = loom::batch_norm_backward(loom::ones({1, 3}), loom::ones({1, 3}), {}, rm, rv, false);
  CHECK(gb.to_vector<float>() == std::vector<float>{1, 1, 1});
}
