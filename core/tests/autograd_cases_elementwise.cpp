// autograd_cases_elementwise.cpp — gradcheck cases for the elementwise family (see autograd_cases.h).
#include "autograd_cases.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using loom::Tensor;
using loom_test::Args;
using loom_test::arg;
using loom_test::constant;
using loom_test::GradCase;
using loom_test::out;
using loom_test::strided_arg;

namespace {

// A float64 leaf that requires grad, holding `v` (for points chosen away
// from kinks, jumps and ties).
Tensor values(const std::vector<double>& v, std::vector<int64_t> shape) {
  return loom::from_vector<double>(v, shape).requires_grad_();
}
Tensor mixed_signs() { return values({-1.7, -0.4, 0.6, 1.3}, {2, 2}); }

// A strided matrix and a 0-d input in [lo, hi), through `op`.
std::vector<GradCase> unary_cases(Tensor (*op)(const Tensor&), double lo, double hi) {
  auto f = [op](const Args& x) { return out(op(x[0])); };
  return {{"strided", {strided_arg({2, 3}, lo, hi)}, f}, {"0-d", {arg({}, lo, hi)}, f}};
}
// The same plus mixed signs, for ops whose formula depends on the sign.
std::vector<GradCase> signed_unary_cases(Tensor (*op)(const Tensor&), double lo, double hi) {
  std::vector<GradCase> cases = unary_cases(op, lo, hi);
  cases.push_back({"mixed signs", {mixed_signs()}, [op](const Args& x) { return out(op(x[0])); }});
  return cases;
}

// maximum / minimum, without ties (the test below covers those).
std::vector<GradCase> extremum_cases(Tensor (*op)(const Tensor&, const Tensor&)) {
  auto f = [op](const Args& x) { return out(op(x[0], x[1])); };
  return {{"broadcast", {values({-1, 0.2, 0.9, 0.1, -0.6, 0.4}, {2, 3}), values({0, 0.5, -0.3}, {3})}, f},
          {"strided", {strided_arg({2, 3}, 0, 1), strided_arg({2, 3}, 2, 3)},
           [op](const Args& x) { return out(op(x[1], x[0]) * x[0]); }},
          {"0-d", {arg({}, 0.5, 1), values({0.2, 1.5}, {2})}, f}};
}

}  // namespace

// ---- unary ----------------------------------------------------------------------------
LOOM_GRAD_CASES("abs", [] { return signed_unary_cases(loom::abs, -1, -0.2); })
// Piecewise constant: away from their jumps, the gradient is zero.
LOOM_GRAD_CASES("sign", [] { return signed_unary_cases(loom::sign, 0.1, 0.9); })
LOOM_GRAD_CASES("floor", [] { return signed_unary_cases(loom::floor, 0.1, 0.9); })
LOOM_GRAD_CASES("ceil", [] { return signed_unary_cases(loom::ceil, -0.9, -0.1); })
LOOM_GRAD_CASES("trunc", [] { return signed_unary_cases(loom::trunc, 1.1, 1.9); })
LOOM_GRAD_CASES("round", [] {
  return std::vector<GradCase>{
      {"strided", {strided_arg({2, 3}, 0.1, 0.4)}, [](const Args& x) { return out(loom::round(x[0])); }},
      {"decimals", {arg({3}, 0.111, 0.114)}, [](const Args& x) { return out(loom::round(x[0], 2)); }},
      {"negative decimals, 0-d", {arg({}, 11, 14)}, [](const Args& x) { return out(x[0].round(-1)); }}};
})
LOOM_GRAD_CASES("square", [] { return signed_unary_cases(loom::square, -1, 1); })
LOOM_GRAD_CASES("exp2", [] { return unary_cases(loom::exp2, -1, 1); })
LOOM_GRAD_CASES("expm1", [] { return unary_cases(loom::expm1, -1, 1); })
LOOM_GRAD_CASES("log", [] { return unary_cases(loom::log, 0.5, 2); })
LOOM_GRAD_CASES("log2", [] { return unary_cases(loom::log2, 0.5, 2); })
LOOM_GRAD_CASES("log1p", [] { return unary_cases(loom::log1p, -0.5, 1); })
LOOM_GRAD_CASES("sqrt", [] { return unary_cases(loom::sqrt, 0.5, 2); })
LOOM_GRAD_CASES("rsqrt", [] { return unary_cases(loom::rsqrt, 0.5, 2); })
LOOM_GRAD_CASES("reciprocal", [] { return signed_unary_cases(loom::reciprocal, 0.5, 2); })
LOOM_GRAD_CASES("sin", [] { return unary_cases(loom::sin, -2, 2); })
LOOM_GRAD_CASES("cos", [] { return unary_cases(loom::cos, -2, 2); })
LOOM_GRAD_CASES("tan", [] { return unary_cases(loom::tan, -1, 1); })
LOOM_GRAD_CASES("tanh", [] { return unary_cases(loom::tanh, -2, 2); })
LOOM_GRAD_CASES("sigmoid", [] { return unary_cases(loom::sigmoid, -3, 3); })
LOOM_GRAD_CASES("erf", [] { return unary_cases(loom::erf, -2, 2); })
LOOM_GRAD_CASES("silu", [] { return unary_cases(loom::silu, -3, 3); })

// ---- parametric unary --------------------------------------------------------------------
LOOM_GRAD_CASES("gelu", [] {
  return std::vector<GradCase>{
      {"exact, strided", {strided_arg({2, 3}, -3, 3)}, [](const Args& x) { return out(loom::gelu(x[0])); }},
      {"tanh, strided", {strided_arg({2, 3}, -3, 3)},
       [](const Args& x) { return out(loom::gelu(x[0], "tanh")); }},
      {"tanh, 0-d", {arg({}, -3, 3)}, [](const Args& x) { return out(loom::gelu(x[0], "tanh")); }}};
})
LOOM_GRAD_CASES("softplus", [] {
  // beta 2, threshold 1: 0.8 and 1.2 lie above the threshold (softplus is x
  // there), the rest below; none near the switch at 0.5.
  return std::vector<GradCase>{
      {"strided", {strided_arg({2, 3}, -3, 3)}, [](const Args& x) { return out(loom::softplus(x[0])); }},
      {"beta, threshold", {values({-1, -0.2, 0.3, 0.8, 1.2}, {5})},
       [](const Args& x) { return out(loom::softplus(x[0], 2, 1)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::softplus(x[0])); }}};
})
LOOM_GRAD_CASES("elu", [] {
  return std::vector<GradCase>{
      {"mixed signs", {mixed_signs()}, [](const Args& x) { return out(loom::elu(x[0])); }},
      {"alpha, scale, input_scale", {mixed_signs()},
       [](const Args& x) { return out(loom::elu(x[0], 0.7, 1.5, 2.0)); }},
      {"strided", {strided_arg({2, 3}, 0.1, 1)}, [](const Args& x) { return out(loom::elu(x[0], 2)); }}};
})
LOOM_GRAD_CASES("leaky_relu", [] {
  return std::vector<GradCase>{
      {"mixed signs", {mixed_signs()}, [](const Args& x) { return out(loom::leaky_relu(x[0])); }},
      {"slope, strided", {strided_arg({2, 3}, -1, -0.1)},
       [](const Args& x) { return out(loom::leaky_relu(x[0], 0.2)); }}};
})
LOOM_GRAD_CASES("nan_to_num", [] {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  // The replaced elements get no gradient; the rest pass it.
  return std::vector<GradCase>{
      {"replacements", {values({nan, inf, -inf, 0.5, -1.5, 2}, {2, 3})},
       [](const Args& x) { return out(loom::nan_to_num(x[0], 1.0, 2.0, -2.0)); }},
      {"defaults", {values({nan, 0.5, -0.25}, {3})}, [](const Args& x) { return out(loom::nan_to_num(x[0])); }},
      {"strided", {strided_arg({2, 3})}, [](const Args& x) { return out(loom::nan_to_num(x[0])); }}};
})
LOOM_GRAD_CASES("clamp", [] {
  auto x = [] { return values({-2, -0.7, -0.2, 0.3, 0.8, 1.5}, {2, 3}); };
  return std::vector<GradCase>{
      {"min and max", {x()}, [](const Args& a) { return out(loom::clamp(a[0], -0.5, 0.5)); }},
      {"min only", {x()}, [](const Args& a) { return out(loom::clamp(a[0], 0.0)); }},
      {"max only, integer", {x()}, [](const Args& a) { return out(loom::clamp(a[0], std::nullopt, 1)); }},
      {"strided, bounds outside", {strided_arg({2, 3})}, [](const Args& a) { return out(a[0].clamp(-2, 2)); }}};
})

// ---- binary -----------------------------------------------------------------------------
LOOM_GRAD_CASES("remainder", [] {
  // self / other stays away from integers, where remainder jumps.
  return std::vector<GradCase>{
      {"broadcast", {values({-2.3, -0.4, 0.6, 1.7, 2.5, 3.1}, {2, 3}), values({0.7, 1.1, -0.9}, {3})},
       [](const Args& x) { return out(loom::remainder(x[0], x[1])); }},
      {"strided, number", {strided_arg({2, 3}, 0.1, 0.7)},
       [](const Args& x) { return out(loom::remainder(x[0], 0.75)); }},
      {"0-d divisor", {arg({3}, 0.1, 1.4), arg({}, 1.5, 2)}, [](const Args& x) { return out(x[0] % x[1]); }}};
})
LOOM_GRAD_CASES("fmod", [] {
  // self / other stays away from integers, where fmod jumps.
  return std::vector<GradCase>{
      {"broadcast", {values({-2.3, -0.4, 0.6, 1.7, 2.5, 3.1}, {2, 3}), values({0.7, 1.1, -0.9}, {3})},
       [](const Args& x) { return out(loom::fmod(x[0], x[1])); }},
      {"strided, number", {strided_arg({2, 3}, -0.7, 0.7)}, [](const Args& x) { return out(loom::fmod(x[0], 0.75)); }},
      {"0-d divisor", {arg({3}, 0.1, 1.4), arg({}, 1.5, 2)}, [](const Args& x) { return out(loom::fmod(x[0], x[1])); }}};
})
LOOM_GRAD_CASES("pow", [] {
  return std::vector<GradCase>{
      {"tensor exponent, broadcast", {arg({2, 3}, 0.5, 2), arg({3}, -1, 2)},
       [](const Args& x) { return out(loom::pow(x[0], x[1])); }},
      {"integer exponent, strided, negative base", {strided_arg({2, 3}, -2, -0.5)},
       [](const Args& x) { return out(loom::pow(x[0], 3)); }},
      {"float exponent", {arg({4}, 0.5, 2)}, [](const Args& x) { return out(loom::pow(x[0], -1.5)); }},
      {"0-d base", {arg({}, 0.5, 2), strided_arg({2, 2}, -1, 2)},
       [](const Args& x) { return out(loom::pow(x[0], x[1])); }}};
})
LOOM_GRAD_CASES("maximum", [] { return extremum_cases(loom::maximum); })
LOOM_GRAD_CASES("minimum", [] { return extremum_cases(loom::minimum); })
LOOM_GRAD_CASES("atan2", [] {
  // The divisor stays positive: atan2 jumps across the negative x axis.
  return std::vector<GradCase>{
      {"broadcast", {arg({2, 3}), arg({3}, 0.5, 1)}, [](const Args& x) { return out(loom::atan2(x[0], x[1])); }},
      {"strided", {strided_arg({2, 3}), strided_arg({2, 3}, 0.5, 1)},
       [](const Args& x) { return out(loom::atan2(x[0], x[1])); }},
      {"0-d and a number", {arg({})}, [](const Args& x) { return out(loom::atan2(x[0], 0.5)); }}};
})
LOOM_GRAD_CASES("lerp", [] {
  return std::vector<GradCase>{
      {"broadcast", {arg({2, 3}), arg({3}), arg({2, 1})},
       [](const Args& x) { return out(loom::lerp(x[0], x[1], x[2])); }},
      {"strided, number weight", {strided_arg({2, 3}), arg({2, 3})},
       [](const Args& x) { return out(loom::lerp(x[0], x[1], 0.3)); }},
      {"0-d weight", {arg({3}), arg({3}), arg({})}, [](const Args& x) { return out(loom::lerp(x[0], x[1], x[2])); }}};
})

// ---- random -------------------------------------------------------------------------------
// The drawn numbers differ on every call, so the outputs never show them:
// they check that the overwritten value gets no gradient and the rest keep theirs.
LOOM_GRAD_CASES("uniform_", [] {
  const Tensor keep = loom::from_vector<double>({0, 0, 1, 1}, {4});
  return std::vector<GradCase>{
      {"part of a non-leaf", {arg({4})},
       [keep](const Args& x) {
         Tensor y = x[0] * 3.0;
         y.narrow(0, 0, 2).uniform_(-1, 1);
         return out(y * y * keep);
       }},
      {"whole non-leaf", {arg({2, 2})}, [](const Args& x) {
         Tensor y = x[0] * 2.0;
         y.uniform_();
         return out(y * 0.0 + x[0]);
       }}};
})
LOOM_GRAD_CASES("normal_", [] {
  const Tensor keep = loom::from_vector<double>({1, 0, 0, 1}, {4});
  return std::vector<GradCase>{{"part of a non-leaf", {arg({4})}, [keep](const Args& x) {
                                  Tensor y = x[0] * x[0];
                                  y.narrow(0, 1, 2).normal_(0, 2);
                                  return out(y * keep);
                                }}};
})

// ---- beyond the catalog cases -------------------------------------------------------------
TEST_CASE("autograd: in-place elementwise ops on a non-leaf", "[autograd]") {
  const Args in = {arg({2, 3}), arg({2, 3}, 0.5, 2), arg({3}, 0.1, 0.9)};
  const loom::autograd::GradcheckFn fn = [](const Args& x) {
    Tensor y = x[0] * 2.0;
    y.sigmoid_();
    y.clamp_(0.2, 0.8);
    Tensor z = x[1] * 1.0;
    z.pow_(y);  // pow_ saves its base: the engine must keep the old value
    z.atan2_(x[2]);
    z.lerp_(y, x[2]);
    return out(z);
  };
  CHECK(loom::autograd::gradcheck(fn, in));
  CHECK(loom::autograd::gradgradcheck(fn, in));
}

TEST_CASE("autograd: the number overloads and operators of the elementwise family", "[autograd]") {
  const Args in = {arg({2, 3}, 0.1, 0.7), arg({3}, 0.8, 1.2)};
  const loom::autograd::GradcheckFn fn = [](const Args& x) {
    return std::vector<Tensor>{loom::pow(x[0], 2.5),    loom::remainder(x[0], 0.75), x[0] % x[1],
                               loom::maximum(x[0], 0.4), loom::minimum(x[0], 0.4),   loom::atan2(x[0], 2),
                               loom::lerp(x[0], x[1], 0.25), loom::floor_divide(x[0], x[1])};
  };
  CHECK(loom::autograd::gradcheck(fn, in));
  CHECK(loom::autograd::gradgradcheck(fn, in));
}

TEST_CASE("autograd: maximum and minimum split the gradient evenly on ties", "[autograd]") {
  // Central differences see the same split, so gradcheck holds at a tie; the
  // gradient itself jumps there, so gradgradcheck cannot.
  const Args in = {values({1, 2, 3}, {3}), values({1, 0, 3}, {3})};
  CHECK(loom::autograd::gradcheck([](const Args& x) { return out(loom::maximum(x[0], x[1])); }, in));
  CHECK(loom::autograd::gradcheck([](const Args& x) { return out(loom::minimum(x[0], x[1])); }, in));
  loom::maximum(in[0], in[1]).sum().backward();
  CHECK(in[0].grad().to_vector<double>() == std::vector<double>{0.5, 1, 0.5});
  CHECK(in[1].grad().to_vector<double>() == std::vector<double>{0.5, 0, 0.5});
}

TEST_CASE("autograd: pow's guards at base 0", "[autograd]") {
  // Exponent 0: the slope in the base is 0, not 0 * 0^-1. Base 0 with an
  // exponent >= 0: the slope in the exponent is 0, not 0 * log(0). (Double
  // backward through these guards gives NaN at base 0, as in PyTorch.)
  const Tensor base = values({0, 0.5, 2}, {3});
  CHECK(loom::autograd::gradcheck([](const Args& x) { return out(loom::pow(x[0], 0)); }, {base}));
  const Tensor zero_base = loom::from_vector<double>({0, 0, 1.5}, {3});
  CHECK(loom::autograd::gradcheck([zero_base](const Args& x) { return out(loom::pow(zero_base, x[0])); },
                                  {arg({3}, 0.5, 2)}));
  loom::pow(base, 0).sum().backward();
  CHECK(base.grad().to_vector<double>() == std::vector<double>{0, 0, 0});
}

TEST_CASE("autograd: piecewise constant ops give a zero gradient, not none", "[autograd]") {
  const Tensor x = arg({3}, 0.1, 0.9);
  const auto g = loom::autograd::grad({(loom::floor(x) + loom::round(x) + loom::sign(x)).sum()}, {x});
  CHECK(g[0].to_vector<double>() == std::vector<double>{0, 0, 0});
}
