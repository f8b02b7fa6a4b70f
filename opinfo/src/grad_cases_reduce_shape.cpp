// grad_cases_reduce_shape.cpp — gradcheck cases for the reductions,
// linear algebra and shape ops (see loom/opinfo.h).
#include <loom/opinfo.h>

#include <cmath>

using loom::IntArrayRef;
using loom::Tensor;
using namespace loom::opinfo;

// ---- reductions ----------------------------------------------------------------------

LOOM_GRAD_CASES("prod", [] {
  return std::vector<GradCase>{
      {"all, strided", {strided_arg({2, 3}, 0.5, 1.5)}, [](const Args& x) { return out(loom::prod(x[0])); }},
      {"dims, keepdim", {arg({2, 3, 4}, 0.5, 1.5)},
       [](const Args& x) { return out(loom::prod(x[0], IntArrayRef{0, 2}, true)); }},
      {"negative dim", {arg({3, 2})}, [](const Args& x) { return out(loom::prod(x[0], IntArrayRef{-1})); }},
      // A zero gets the product of the others; a row with two zeros gets nothing.
      {"zeros", {leaf({1.5, 0, -2, 0, 0, 3, 0.5, 1, 2}, {3, 3})},
       [](const Args& x) { return out(loom::prod(x[0], IntArrayRef{1})); }},
      {"one zero, all", {leaf({1.5, 0, -2, 0.5}, {2, 2})}, [](const Args& x) { return out(loom::prod(x[0])); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::prod(x[0])); }}};
})
LOOM_GRAD_CASES("amax", [] {
  return std::vector<GradCase>{
      {"all", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::amax(x[0])); }},
      {"dims, keepdim", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::amax(x[0], {0, 2}, true)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::amax(x[0])); }}};
})
LOOM_GRAD_CASES("amin", [] {
  return std::vector<GradCase>{
      {"dim", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::amin(x[0], {-1})); }},
      {"all", {arg({2, 3})}, [](const Args& x) { return out(loom::min(x[0])); }}};
})
LOOM_GRAD_CASES("max.dim", [] {
  return std::vector<GradCase>{
      {"dim", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::max(x[0], 1).first); }},
      {"negative dim, keepdim", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::max(x[0], -2, true).first); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::max(x[0], 0).first); }}};
})
LOOM_GRAD_CASES("min.dim", [] {
  return std::vector<GradCase>{
      {"dim", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::min(x[0], 0).first); }},
      {"keepdim", {arg({2, 3})}, [](const Args& x) { return out(loom::min(x[0], 1, true).first); }}};
})
LOOM_GRAD_CASES("var", [] {
  return std::vector<GradCase>{
      {"all", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::var(x[0])); }},
      {"dims, keepdim", {arg({2, 3, 4})},
       [](const Args& x) { return out(loom::var(x[0], IntArrayRef{0, 2}, std::nullopt, true)); }},
      {"correction 0", {arg({3, 4})}, [](const Args& x) { return out(loom::var(x[0], IntArrayRef{1}, 0)); }},
      {"correction 2.5", {arg({2, 6})}, [](const Args& x) { return out(loom::var(x[0], IntArrayRef{-1}, 2.5)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::var(x[0], std::nullopt, 0)); }}};
})
LOOM_GRAD_CASES("std", [] {
  return std::vector<GradCase>{
      {"all", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::std(x[0])); }},
      {"dim, keepdim, correction 0", {arg({2, 3, 4})},
       [](const Args& x) { return out(loom::std(x[0], IntArrayRef{1}, 0, true)); }},
      // std is 0 everywhere on one element: the gradient is 0, not NaN.
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::std(x[0], std::nullopt, 0)); }}};
})
LOOM_GRAD_CASES("norm", [] {
  // Away from 0, where |x| has no derivative.
  auto signs = [] { return leaf({0.5, -1.25, 0.75, -0.3, 1.1, -0.9}, {2, 3}); };
  return std::vector<GradCase>{
      {"2, all", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::norm(x[0])); }},
      {"2, dims, keepdim", {arg({2, 3, 4})},
       [](const Args& x) { return out(loom::norm(x[0], 2, IntArrayRef{0, 2}, true)); }},
      {"1, dim", {signs()}, [](const Args& x) { return out(loom::norm(x[0], 1, IntArrayRef{1})); }},
      {"inf, dim", {signs()}, [](const Args& x) { return out(loom::norm(x[0], INFINITY, IntArrayRef{0})); }},
      {"-inf, all", {signs()}, [](const Args& x) { return out(loom::norm(x[0], -INFINITY)); }},
      {"0", {signs()}, [](const Args& x) { return out(loom::norm(x[0], 0)); }},
      {"3, dim", {signs()}, [](const Args& x) { return out(loom::norm(x[0], 3, IntArrayRef{1})); }},
      {"0.5, all", {signs()}, [](const Args& x) { return out(loom::norm(x[0], 0.5)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::norm(x[0])); }}};
})
LOOM_GRAD_CASES("logsumexp", [] {
  return std::vector<GradCase>{
      {"dim", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::logsumexp(x[0], {1})); }},
      {"dims, keepdim", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::logsumexp(x[0], {0, -1}, true)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::logsumexp(x[0], {})); }}};
})
LOOM_GRAD_CASES("cumsum", [] {
  return std::vector<GradCase>{
      {"dim 0, strided", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::cumsum(x[0], 0)); }},
      {"negative dim", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::cumsum(x[0], -1)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::cumsum(x[0], 0)); }}};
})
LOOM_GRAD_CASES("cumprod", [] {
  return std::vector<GradCase>{
      {"dim 1, strided", {strided_arg({3, 4}, 0.5, 1.5)}, [](const Args& x) { return out(loom::cumprod(x[0], 1)); }},
      {"negative dim, signs", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::cumprod(x[0], -2)); }},
      // A zero last along dim: its double backward is exact too (the
      // "zeros inside" test below checks zeros elsewhere, first order).
      {"a zero last", {leaf({1.5, -2, 0, 0.5, 3, 0}, {2, 3})},
       [](const Args& x) { return out(loom::cumprod(x[0], 1)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::cumprod(x[0], 0)); }}};
})

// ---- linear algebra ------------------------------------------------------------------

LOOM_GRAD_CASES("mm", [] {
  return std::vector<GradCase>{
      {"plain", {arg({2, 3}), arg({3, 4})}, [](const Args& x) { return out(loom::mm(x[0], x[1])); }},
      {"strided", {strided_arg({3, 2}), strided_arg({2, 3})}, [](const Args& x) { return out(loom::mm(x[0], x[1])); }}};
})
LOOM_GRAD_CASES("bmm", [] {
  return std::vector<GradCase>{
      {"plain", {arg({2, 2, 3}), arg({2, 3, 2})}, [](const Args& x) { return out(loom::bmm(x[0], x[1])); }},
      {"strided", {strided_arg({3, 2, 2}), arg({3, 2, 1})}, [](const Args& x) { return out(loom::bmm(x[0], x[1])); }}};
})
LOOM_GRAD_CASES("dot", [] {
  return std::vector<GradCase>{
      {"plain", {arg({4}), arg({4})}, [](const Args& x) { return out(loom::dot(x[0], x[1])); }},
      {"same vector", {arg({3})}, [](const Args& x) { return out(loom::dot(x[0], x[0])); }}};
})
LOOM_GRAD_CASES("outer", [] {
  return std::vector<GradCase>{
      {"plain", {arg({3}), arg({2})}, [](const Args& x) { return out(loom::outer(x[0], x[1])); }},
      {"a strided column", {strided_arg({3, 2})},
       [](const Args& x) { return out(loom::outer(x[0].select(1, 0), x[0].select(1, 1))); }}};
})
LOOM_GRAD_CASES("addmm", [] {
  return std::vector<GradCase>{
      {"plain", {arg({2, 4}), arg({2, 3}), arg({3, 4})},
       [](const Args& x) { return out(loom::addmm(x[0], x[1], x[2])); }},
      {"broadcast self, beta, alpha", {arg({4}), strided_arg({2, 3}), arg({3, 4})},
       [](const Args& x) { return out(loom::addmm(x[0], x[1], x[2], 0.5, -2)); }},
      {"beta 0, 0-d self", {arg({}), arg({2, 3}), arg({3, 1})},
       [](const Args& x) { return out(loom::addmm(x[0], x[1], x[2], 0)); }}};
})
LOOM_GRAD_CASES("baddbmm", [] {
  return std::vector<GradCase>{
      {"plain", {arg({2, 2, 4}), arg({2, 2, 3}), arg({2, 3, 4})},
       [](const Args& x) { return out(loom::baddbmm(x[0], x[1], x[2])); }},
      {"broadcast self, beta, alpha", {arg({1, 4}), strided_arg({2, 2, 3}), arg({2, 3, 4})},
       [](const Args& x) { return out(loom::baddbmm(x[0], x[1], x[2], 2, 0.5)); }}};
})
LOOM_GRAD_CASES("linear", [] {
  return std::vector<GradCase>{
      {"bias", {arg({2, 3}), arg({4, 3}), arg({4})}, [](const Args& x) { return out(loom::linear(x[0], x[1], x[2])); }},
      {"batched, no bias, strided weight", {arg({2, 2, 3}), strided_arg({4, 3})},
       [](const Args& x) { return out(loom::linear(x[0], x[1])); }},
      {"1-D input, 0-d bias", {arg({3}), arg({2, 3}), arg({})},
       [](const Args& x) { return out(loom::linear(x[0], x[1], x[2])); }},
      {"1-D weight", {arg({2, 3}), arg({3}), arg({2})},
       [](const Args& x) { return out(loom::linear(x[0], x[1], x[2])); }}};
})

// ---- shape ---------------------------------------------------------------------------

LOOM_GRAD_CASES("cat", [] {
  return std::vector<GradCase>{
      {"dim 0", {arg({2, 3}), arg({1, 3})}, [](const Args& x) { return out(loom::cat({x[0], x[1]}, 0)); }},
      {"negative dim, strided, three", {strided_arg({2, 3}), arg({2, 1}), arg({2, 2})},
       [](const Args& x) { return out(loom::cat({x[0], x[1], x[2]}, -1)); }},
      {"skipped empty, same tensor twice", {arg({2}), arg({0})},
       [](const Args& x) { return out(loom::cat({x[0], x[1], x[0]})); }}};
})
LOOM_GRAD_CASES("flip", [] {
  return std::vector<GradCase>{
      {"dims, strided", {strided_arg({2, 3, 2})}, [](const Args& x) { return out(loom::flip(x[0], {0, -1})); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::flip(x[0], {})); }}};
})
LOOM_GRAD_CASES("roll", [] {
  return std::vector<GradCase>{
      {"dims, strided", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::roll(x[0], {1, -5}, {0, 1})); }},
      {"flattened", {arg({2, 3})}, [](const Args& x) { return out(loom::roll(x[0], {2})); }}};
})
LOOM_GRAD_CASES("tril", [] {
  return std::vector<GradCase>{
      {"strided", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::tril(x[0])); }},
      {"batched, diagonal", {arg({2, 3, 3})}, [](const Args& x) { return out(loom::tril(x[0], -1)); }}};
})
LOOM_GRAD_CASES("triu", [] {
  return std::vector<GradCase>{
      {"strided", {strided_arg({4, 3})}, [](const Args& x) { return out(loom::triu(x[0])); }},
      {"batched, diagonal", {arg({2, 3, 3})}, [](const Args& x) { return out(loom::triu(x[0], 1)); }}};
})
LOOM_GRAD_CASES("sort", [] {
  return std::vector<GradCase>{
      {"last dim", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::sort(x[0]).first); }},
      {"dim 0, descending", {arg({3, 2})}, [](const Args& x) { return out(loom::sort(x[0], 0, true).first); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::sort(x[0]).first); }}};
})
LOOM_GRAD_CASES("topk", [] {
  return std::vector<GradCase>{
      {"largest", {strided_arg({3, 5})}, [](const Args& x) { return out(loom::topk(x[0], 2).first); }},
      {"smallest, dim 0, unsorted", {arg({4, 2})},
       [](const Args& x) { return out(loom::topk(x[0], 3, 0, false, false).first); }}};
})
