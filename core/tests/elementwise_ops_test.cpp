// The elementwise catalog end to end: dtype rules, broadcasting, in-place
// forms, errors, and values against <cmath> (the kernels' own exhaustive
// tests live in plugins/cpu/tests).
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>
#include <limits>

using loom::DType;

namespace {
std::vector<double> vals(const loom::Tensor& t) { return t.to_vector<double>(); }
void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else CHECK(got[i] == Approx(want[i]).epsilon(tol).margin(tol));
  }
}
}  // namespace

TEST_CASE("unary math matches <cmath> and promotes integers to float32") {
  const std::vector<double> x = {0.25, 0.5, 1.0, 2.0, 3.5};
  auto t = loom::from_vector(x, {5});
  struct Case { loom::Tensor (*op)(const loom::Tensor&); double (*ref)(double); };
  const Case cases[] = {
      {loom::exp2, [](double v) { return std::exp2(v); }},
      {loom::expm1, [](double v) { return std::expm1(v); }},
      {loom::log, [](double v) { return std::log(v); }},
      {loom::log2, [](double v) { return std::log2(v); }},
      {loom::log1p, [](double v) { return std::log1p(v); }},
      {loom::sqrt, [](double v) { return std::sqrt(v); }},
      {loom::rsqrt, [](double v) { return 1 / std::sqrt(v); }},
      {loom::reciprocal, [](double v) { return 1 / v; }},
      {loom::sin, [](double v) { return std::sin(v); }},
      {loom::cos, [](double v) { return std::cos(v); }},
      {loom::tan, [](double v) { return std::tan(v); }},
      {loom::tanh, [](double v) { return std::tanh(v); }},
      {loom::sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {loom::erf, [](double v) { return std::erf(v); }},
  };
  for (const auto& c : cases) {
    std::vector<double> want;
    for (double v : x) want.push_back(c.ref(v));
    check_close(vals(c.op(t)), want, 1e-12);
    check_close(vals(c.op(t.to(DType::Float32))), want, 1e-5);
  }
  auto ints = loom::from_vector<int32_t>({1, 4}, {2});
  CHECK(loom::sqrt(ints).dtype() == DType::Float32);
  CHECK(vals(loom::sqrt(ints)) == std::vector<double>{1, 2});
}

TEST_CASE("rounding, sign, abs and predicates keep or report dtypes like PyTorch") {
  auto t = loom::from_vector<float>({-2.5f, -0.5f, 0.5f, 1.5f, 2.5f}, {5});
  CHECK(vals(loom::round(t)) == std::vector<double>{-2, -0, 0, 2, 2});  // half to even
  CHECK(vals(loom::floor(t)) == std::vector<double>{-3, -1, 0, 1, 2});
  CHECK(vals(loom::ceil(t)) == std::vector<double>{-2, -0, 1, 2, 3});
  CHECK(vals(loom::trunc(t)) == std::vector<double>{-2, -0, 0, 1, 2});
  check_close(vals(loom::round(loom::from_vector<double>({1.2345, 125.0}, {2}), 2)), {1.23, 125.0});
  check_close(vals(loom::round(loom::from_vector<double>({1234.0}, {1}), -2)), {1200.0});
  CHECK(vals(loom::sign(t)) == std::vector<double>{-1, -1, 1, 1, 1});
  auto i = loom::from_vector<int64_t>({-3, 0, 7}, {3});
  CHECK(loom::abs(i).to_vector<int64_t>() == std::vector<int64_t>{3, 0, 7});
  CHECK(loom::floor(i).dtype() == DType::Int64);
  CHECK(loom::square(loom::from_vector<bool>({true, false}, {2})).dtype() == DType::Int64);

  auto special = loom::from_vector<float>({NAN, INFINITY, -INFINITY, 1.0f}, {4});
  CHECK(loom::isnan(special).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK(loom::isinf(special).to_vector<bool>() == std::vector<bool>{false, true, true, false});
  CHECK(loom::isfinite(special).to_vector<bool>() == std::vector<bool>{false, false, false, true});
  CHECK(loom::isfinite(i).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(loom::logical_not(i).to_vector<bool>() == std::vector<bool>{false, true, false});
  auto cleaned = loom::nan_to_num(special).to_vector<float>();
  CHECK(cleaned[0] == 0.0f);
  CHECK(cleaned[1] == std::numeric_limits<float>::max());
  CHECK(cleaned[2] == std::numeric_limits<float>::lowest());
  CHECK(loom::nan_to_num(special, 5.0, 1.0, -1.0).to_vector<float>() == std::vector<float>{5, 1, -1, 1});
}

TEST_CASE("activations and clamp") {
  const std::vector<double> x = {-3.0, -0.5, 0.0, 0.5, 3.0};
  auto t = loom::from_vector(x, {5});
  std::vector<double> gelu, gelu_tanh, silu, softplus, elu, leaky;
  for (double v : x) {
    gelu.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    gelu_tanh.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    silu.push_back(v / (1 + std::exp(-v)));
    softplus.push_back(std::log1p(std::exp(v)));
    elu.push_back(v > 0 ? v : std::exp(v) - 1);
    leaky.push_back(v > 0 ? v : 0.1 * v);
  }
  check_close(vals(loom::gelu(t)), gelu, 1e-12);
  check_close(vals(loom::gelu(t, "tanh")), gelu_tanh, 1e-12);
  check_close(vals(loom::silu(t)), silu, 1e-12);
  check_close(vals(loom::softplus(t)), softplus, 1e-12);
  check_close(vals(loom::elu(t)), elu, 1e-12);
  check_close(vals(loom::leaky_relu(t, 0.1)), leaky, 1e-12);
  CHECK_THROWS_WITH(loom::gelu(t, "fast"), Catch::Contains("approximate must be 'none' or 'tanh'"));
  CHECK_THROWS_WITH(loom::silu(loom::ones({2}, DType::Int32)),
                    Catch::Contains("silu: expected a floating point tensor for 'self', got int32"));

  CHECK(vals(loom::clamp(t, -1.0, 1.0)) == std::vector<double>{-1, -0.5, 0, 0.5, 1});
  CHECK(vals(loom::clamp(t, std::nullopt, 0)) == std::vector<double>{-3, -0.5, 0, 0, 0});
  auto i = loom::from_vector<int32_t>({-5, 5}, {2});
  CHECK(loom::clamp(i, 0).dtype() == DType::Int32);
  CHECK(loom::clamp(i, 0.5).dtype() == DType::Float32);  // a float bound promotes
  CHECK(vals(loom::clamp(t, 2, 1)) == std::vector<double>{1, 1, 1, 1, 1});  // lo > hi gives hi
  CHECK_THROWS_WITH(loom::clamp(t, std::nullopt, std::nullopt), Catch::Contains("at least one of 'min' or 'max'"));
}

TEST_CASE("binary ops: arithmetic, comparisons, logical and bitwise") {
  auto a = loom::from_vector<int64_t>({7, -7, 7, -7}, {4});
  auto b = loom::from_vector<int64_t>({2, 2, -2, -2}, {4});
  CHECK(loom::remainder(a, b).to_vector<int64_t>() == std::vector<int64_t>{1, 1, -1, -1});
  CHECK(loom::div(a, b, std::string("floor")).to_vector<int64_t>() == std::vector<int64_t>{3, -4, -4, 3});
  CHECK(loom::div(a, b, std::string("trunc")).to_vector<int64_t>() == std::vector<int64_t>{3, -3, -3, 3});
  CHECK(loom::div(a, b).dtype() == DType::Float32);
  CHECK(loom::floor_divide(a.to(DType::Float64), b).to_vector<double>() == std::vector<double>{3, -4, -4, 3});
  CHECK(loom::pow(loom::from_vector<int64_t>({2, 3, -2}, {3}), 3).to_vector<int64_t>() ==
        std::vector<int64_t>{8, 27, -8});
  check_close(vals(loom::pow(loom::from_vector<double>({4, 9}, {2}), 0.5)), {2, 3});
  CHECK_THROWS_WITH(loom::pow(a, -1), Catch::Contains("negative integer powers"));
  CHECK_THROWS_WITH(loom::remainder(a, loom::zeros({4}, DType::Int64)), Catch::Contains("division by zero"));

  auto x = loom::from_vector<float>({1, NAN, 3}, {3});
  auto y = loom::from_vector<float>({2, 0, 1}, {3});
  auto mx = loom::maximum(x, y).to_vector<float>();
  CHECK(mx[0] == 2);
  CHECK(std::isnan(mx[1]));
  CHECK(loom::minimum(x, y).to_vector<float>()[2] == 1);
  check_close(vals(loom::atan2(y, loom::ones({3}))), {std::atan2(2.0, 1.0), 0.0, std::atan2(1.0, 1.0)}, 1e-6);

  CHECK((x > y).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK((x == x).to_vector<bool>() == std::vector<bool>{true, false, true});  // NaN != NaN
  CHECK((x != 1).to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK((a >= 0).dtype() == DType::Bool);
  CHECK(loom::logical_and(x, y).to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(loom::logical_xor(x, y).to_vector<bool>() == std::vector<bool>{false, true, false});
  auto m = loom::from_vector<int32_t>({0b1100, 0b1010}, {2});
  auto n = loom::from_vector<int32_t>({0b1010, 0b0110}, {2});
  CHECK((m & n).to_vector<int32_t>() == std::vector<int32_t>{0b1000, 0b0010});
  CHECK((m | n).to_vector<int32_t>() == std::vector<int32_t>{0b1110, 0b1110});
  CHECK((m ^ n).to_vector<int32_t>() == std::vector<int32_t>{0b0110, 0b1100});
  CHECK_THROWS_WITH(loom::bitwise_and(x, y), Catch::Contains("bitwise_and: expected integer or bool tensors, got float32"));
  CHECK_THROWS_WITH(loom::remainder(loom::ones({1}, DType::Bool), loom::ones({1}, DType::Bool)),
                    Catch::Contains("not supported for bool"));
  CHECK_THROWS_WITH(loom::div(a, b, std::string("round")), Catch::Contains("rounding_mode"));
}

TEST_CASE("where and lerp broadcast their three arguments") {
  auto cond = loom::from_vector<bool>({true, false, true}, {3});
  auto a = loom::from_vector<int32_t>({1, 2, 3}, {3});
  auto b = loom::from_vector<double>({10}, {1});
  auto w = loom::where(cond, a, b);
  CHECK(w.dtype() == DType::Float64);
  CHECK(vals(w) == std::vector<double>{1, 10, 3});
  CHECK(vals(loom::where(cond.view({3, 1}), a, -1)) ==
        std::vector<double>{1, 2, 3, -1, -1, -1, 1, 2, 3});
  CHECK_THROWS_WITH(loom::where(a, a, a), Catch::Contains("'condition' to be a bool tensor, got int32"));
  auto start = loom::zeros({3});
  auto end = loom::full({3}, 10.0);
  CHECK(vals(loom::lerp(start, end, 0.25)) == std::vector<double>{2.5, 2.5, 2.5});
  CHECK(vals(loom::lerp(start, end, loom::from_vector<float>({0, 0.5f, 1}, {3}))) == std::vector<double>{0, 5, 10});
  CHECK_THROWS_WITH(loom::lerp(a, a, a), Catch::Contains("lerp: expected floating point tensors, got int32"));
}

TEST_CASE("in-place forms write through views and reject dtypes self cannot hold") {
  auto base = loom::from_vector<float>({-1, 4, -9, 16}, {2, 2});
  auto col = base.select(1, 1);  // [4, 16], strided
  col.sqrt_();
  CHECK(vals(base) == std::vector<double>{-1, 2, -9, 4});
  base.abs_();
  CHECK(vals(base) == std::vector<double>{1, 2, 9, 4});
  base.clamp_(2, 5);
  CHECK(vals(base) == std::vector<double>{2, 2, 5, 4});
  base.sub_(loom::ones({2}), 2);
  CHECK(vals(base) == std::vector<double>{0, 0, 3, 2});
  base.div_(loom::full({}, 2.0));
  CHECK(vals(base) == std::vector<double>{0, 0, 1.5, 1});
  base.pow_(loom::full({}, 2.0));
  CHECK(vals(base) == std::vector<double>{0, 0, 2.25, 1});

  auto i = loom::from_vector<int64_t>({4, 9}, {2});
  CHECK_THROWS_WITH(i.sqrt_(), Catch::Contains("sqrt_: result type float32 can't be cast to the dtype of 'self', int64"));
  CHECK_THROWS_WITH(i.div_(i), Catch::Contains("can't be cast"));
  i.div_(loom::full({}, 2), std::string("floor"));
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{2, 4});
  auto f = loom::from_vector<int32_t>({0, 3}, {2});
  f.logical_or_(loom::from_vector<float>({0.5f, 0}, {2}));  // 0.5 is true
  CHECK(f.to_vector<int32_t>() == std::vector<int32_t>{1, 1});
}

TEST_CASE("new ops run on sim through the CPU fallback, in-place included") {
  loom::Device sim("sim");
  auto x = loom::from_vector<float>({0.25f, 4.0f}, {2}).to(sim);
  CHECK(loom::sqrt(x).device() == sim);
  CHECK(vals(loom::sqrt(x)) == std::vector<double>{0.5, 2});
  CHECK((x > 1).cpu().to_vector<bool>() == std::vector<bool>{false, true});
  x.exp_();
  check_close(vals(x), {std::exp(0.25), std::exp(4.0)}, 1e-6);
  CHECK(loom::fallback_count("sqrt", "sim") >= 1);
}

TEST_CASE("creation: linspace, eye, randint") {
  check_close(vals(loom::linspace(0, 1, 5)), {0, 0.25, 0.5, 0.75, 1});
  CHECK(loom::linspace(-1, 1, 1).to_vector<float>() == std::vector<float>{-1});
  CHECK(loom::linspace(0, 1, 0).numel() == 0);
  CHECK(vals(loom::eye(2, 3)) == std::vector<double>{1, 0, 0, 0, 1, 0});
  CHECK(loom::eye(3).sum().item<float>() == 3);
  loom::manual_seed(3);
  auto r = loom::randint(-2, 3, {1000});
  CHECK(r.dtype() == DType::Int64);
  auto v = r.to_vector<int64_t>();
  CHECK(*std::min_element(v.begin(), v.end()) == -2);
  CHECK(*std::max_element(v.begin(), v.end()) == 2);
  loom::manual_seed(3);
  CHECK(loom::randint(-2, 3, {1000}).to_vector<int64_t>() == v);
  CHECK_THROWS_WITH(loom::randint(3, 3, {2}), Catch::Contains("expected low < high"));
}
