// Reductions and scans end to end: dims, keepdim, dtype rules, indices,
// errors, and sim through the fallback (exhaustive numerics live in
// plugins/cpu/tests).
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;

namespace {
std::vector<double> vals(const loom::Tensor& t) { return t.to_vector<double>(); }
}  // namespace

TEST_CASE("mean, prod, amax, amin over dims with keepdim") {
  auto a = loom::arange(1, 7, 1, DType::Float32).view({2, 3});  // [[1,2,3],[4,5,6]]
  CHECK(loom::mean(a).item<float>() == 3.5f);
  CHECK(vals(loom::mean(a, loom::IntArrayRef{1})) == std::vector<double>{2, 5});
  CHECK(loom::mean(a, loom::IntArrayRef{0}, true).sizes() == loom::IntArrayRef({1, 3}));
  CHECK(vals(loom::prod(a, loom::IntArrayRef{1})) == std::vector<double>{6, 120});
  CHECK(loom::prod(loom::arange(1, 5)).item<int64_t>() == 24);
  CHECK(loom::prod(loom::arange(1, 5)).dtype() == DType::Int64);
  CHECK(vals(loom::amax(a, {0})) == std::vector<double>{4, 5, 6});
  CHECK(vals(loom::amin(a, {1}, true)) == std::vector<double>{1, 4});
  CHECK(loom::max(a).item<float>() == 6);
  CHECK(loom::min(a.t()).item<float>() == 1);
  CHECK_THROWS_WITH(loom::mean(loom::arange(3)), Catch::Contains("mean: expected a floating point input"));
  CHECK(loom::mean(loom::arange(3), std::nullopt, false, DType::Float64).item<double>() == 1.0);
  CHECK_THROWS_WITH(loom::amax(loom::zeros({0, 2}), {0}), Catch::Contains("to have non-zero size"));
  CHECK(loom::prod(loom::zeros({0})).item<float>() == 1.0f);  // empty product
}

TEST_CASE("max/min with indices and argmax/argmin") {
  auto a = loom::from_vector<float>({3, 7, 7, 1, 0, 9}, {2, 3});
  auto [values, indices] = loom::max(a, 1);
  CHECK(vals(values) == std::vector<double>{7, 9});
  CHECK(indices.dtype() == DType::Int64);
  CHECK(indices.to_vector<int64_t>() == std::vector<int64_t>{1, 2});  // first of the tie
  auto [mv, mi] = loom::min(a, 0, true);
  CHECK(mv.sizes() == loom::IntArrayRef({1, 3}));
  CHECK(mi.to_vector<int64_t>() == std::vector<int64_t>{1, 1, 0});
  CHECK(loom::argmax(a).item<int64_t>() == 5);  // flattened
  CHECK(loom::argmax(a, std::nullopt, true).sizes() == loom::IntArrayRef({1, 1}));
  CHECK(loom::argmin(a, 1).to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  auto n = loom::from_vector<float>({1, NAN, 5}, {3});
  CHECK(std::isnan(loom::max(n).item<float>()));
  CHECK(loom::argmax(n).item<int64_t>() == 1);
  CHECK_THROWS_WITH(loom::argmax(loom::zeros({0})), Catch::Contains("non-empty"));
}

TEST_CASE("var and std with correction, norm, logsumexp") {
  auto a = loom::from_vector<double>({1, 2, 3, 4}, {4});
  CHECK(loom::var(a).item<double>() == Approx(1.6666666666666667));
  CHECK(loom::var(a, std::nullopt, 0).item<double>() == Approx(1.25));
  CHECK(loom::std(a).item<double>() == Approx(std::sqrt(1.6666666666666667)));
  CHECK(std::isnan(loom::var(loom::ones({1})).item<float>()));  // N - correction = 0
  CHECK_THROWS_WITH(loom::var(loom::arange(3)), Catch::Contains("floating point"));
  CHECK(loom::norm(a).item<double>() == Approx(std::sqrt(30.0)));
  CHECK(loom::norm(a, 1).item<double>() == Approx(10.0));
  CHECK(loom::norm(a, INFINITY).item<double>() == 4.0);
  CHECK(loom::norm(loom::from_vector<double>({0, 2, 0}, {3}), 0).item<double>() == 1.0);
  CHECK(loom::norm(a, 3).item<double>() == Approx(std::cbrt(100.0)));
  CHECK(vals(loom::norm(a.view({2, 2}), 2, loom::IntArrayRef{1})) ==
        std::vector<double>{std::sqrt(5.0), 5.0});
  CHECK(loom::logsumexp(a, {0}).item<double>() ==
        Approx(std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0))));
  CHECK(loom::logsumexp(loom::from_vector<float>({1000, 1000}, {2}), {0}).item<float>() ==
        Approx(1000 + std::log(2.0f)));  // no overflow
  CHECK(loom::logsumexp(loom::arange(3), {0}).dtype() == DType::Float32);
}

TEST_CASE("all, any, cumsum, cumprod") {
  auto b = loom::from_vector<int32_t>({1, 0, 2, 3}, {2, 2});
  CHECK_FALSE(loom::all(b).item<bool>());
  CHECK(loom::any(b).item<bool>());
  CHECK(loom::all(b, loom::IntArrayRef{0}).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK(loom::all(loom::zeros({0})).item<bool>());  // empty: true
  CHECK(loom::cumsum(b, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 2, 5});
  CHECK(loom::cumsum(b, 0).dtype() == DType::Int64);
  CHECK(vals(loom::cumprod(loom::from_vector<float>({1, 2, 3, 4}, {4}), 0)) ==
        std::vector<double>{1, 2, 6, 24});
  CHECK(vals(loom::cumsum(loom::arange(6, DType::Float32).view({2, 3}).t(), -1)) ==
        std::vector<double>{0, 3, 1, 5, 2, 7});
  CHECK_THROWS_WITH(loom::cumsum(b, 2), Catch::Contains("dimension 2 is out of range"));
}

TEST_CASE("reductions run on sim through the fallback") {
  loom::Device sim("sim");
  auto a = loom::arange(6, DType::Float32).view({2, 3}).to(sim);
  CHECK(loom::mean(a).item<float>() == 2.5f);
  auto [v, i] = loom::max(a, 1);
  CHECK(v.device() == sim);
  CHECK(i.device() == sim);
  CHECK(i.cpu().to_vector<int64_t>() == std::vector<int64_t>{2, 2});
  CHECK(loom::fallback_count("max.dim", "sim") >= 1);
}
