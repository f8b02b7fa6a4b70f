// grad_cases_elementwise.cpp — gradcheck cases of the elementwise family that
// its samples cannot express (see loom/opinfo.h): non-finite inputs, pow's
// guards, random ops writing part of a non-leaf. The other elementwise ops
// are gradchecked on their samples marked for it.
#include <loom/opinfo.h>

#include <cmath>
#include <limits>

using loom::Tensor;
using namespace loom::opinfo;

// ---- unary --------------------------------------------------------------------------------
LOOM_GRAD_CASES("nan_to_num", [] {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  // The replaced elements get no gradient; the rest pass it.
  return std::vector<GradCase>{
      {"replacements", {leaf({nan, inf, -inf, 0.5, -1.5, 2}, {2, 3})},
       [](const Args& x) { return out(loom::nan_to_num(x[0], 1.0, 2.0, -2.0)); }},
      {"defaults", {leaf({nan, 0.5, -0.25}, {3})}, [](const Args& x) { return out(loom::nan_to_num(x[0])); }},
      {"strided", {strided_arg({2, 3})}, [](const Args& x) { return out(loom::nan_to_num(x[0])); }}};
})

// ---- binary -----------------------------------------------------------------------------
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
