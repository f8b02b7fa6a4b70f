// grad_cases_core.cpp — gradcheck cases for the first formulas: add, sub,
// mul, div, neg, relu, exp, sum, mean, matmul, copy_, fill_, where.
#include <loom/opinfo.h>

using loom::Tensor;
using namespace loom::opinfo;

LOOM_GRAD_CASES("add", [] {
  return std::vector<GradCase>{
      {"broadcast", {arg({2, 3}), arg({3})}, [](const Args& x) { return out(x[0] + x[1]); }},
      {"alpha, strided", {strided_arg({3, 2}), arg({3, 2})},
       [](const Args& x) { return out(loom::add(x[0], x[1], 2.5)); }},
      {"0-d and a number", {arg({}), arg({2})}, [](const Args& x) { return out(x[0] + x[1] + 1.0); }}};
})
LOOM_GRAD_CASES("sub", [] {
  return std::vector<GradCase>{
      {"broadcast, alpha", {arg({2, 1}), arg({3})}, [](const Args& x) { return out(loom::sub(x[0], x[1], 3)); }},
      {"0-d", {arg({}), arg({})}, [](const Args& x) { return out(x[0] - x[1]); }}};
})
LOOM_GRAD_CASES("mul", [] {
  return std::vector<GradCase>{
      {"broadcast", {arg({2, 3}), arg({3})}, [](const Args& x) { return out(x[0] * x[1]); }},
      {"strided, same tensor twice", {strided_arg({2, 2})}, [](const Args& x) { return out(x[0] * x[0]); }},
      {"0-d", {arg({}), arg({4})}, [](const Args& x) { return out(x[0] * x[1]); }}};
})
LOOM_GRAD_CASES("div", [] {
  return std::vector<GradCase>{
      {"broadcast", {arg({2, 3}), arg({3}, 0.5, 2)}, [](const Args& x) { return out(x[0] / x[1]); }},
      {"strided divisor", {arg({2, 3}), strided_arg({2, 3}, 0.5, 2)},
       [](const Args& x) { return out(x[0] / x[1]); }}};
})
LOOM_GRAD_CASES("neg", [] {
  return std::vector<GradCase>{{"strided", {strided_arg({2, 3})}, [](const Args& x) { return out(-x[0]); }}};
})
LOOM_GRAD_CASES("relu", [] {
  // Away from 0, where relu has no derivative.
  return std::vector<GradCase>{{"mixed signs", {Tensor(loom::from_vector<double>({-2, -0.5, 0.5, 2}, {2, 2})).requires_grad_()},
                                [](const Args& x) { return out(x[0].relu()); }}};
})
LOOM_GRAD_CASES("exp", [] {
  return std::vector<GradCase>{
      {"strided", {strided_arg({2, 3})}, [](const Args& x) { return out(x[0].exp()); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(x[0].exp()); }}};
})
LOOM_GRAD_CASES("sum", [] {
  return std::vector<GradCase>{
      {"all", {strided_arg({2, 3})}, [](const Args& x) { return out(x[0].sum()); }},
      {"dims, keepdim", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::sum(x[0], {0, 2}, true)); }},
      {"negative dim", {arg({2, 3})}, [](const Args& x) { return out(x[0].sum({-1})); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(x[0].sum()); }}};
})
LOOM_GRAD_CASES("mean", [] {
  return std::vector<GradCase>{
      {"all", {arg({2, 3})}, [](const Args& x) { return out(loom::mean(x[0])); }},
      {"dim", {strided_arg({3, 2})}, [](const Args& x) { return out(loom::mean(x[0], loom::IntArrayRef{1})); }}};
})
LOOM_GRAD_CASES("matmul", [] {
  return std::vector<GradCase>{
      {"batch broadcast", {arg({2, 1, 2, 3}), arg({3, 3, 2})},
       [](const Args& x) { return out(loom::matmul(x[0], x[1])); }},
      {"vector-matrix", {arg({3}), strided_arg({3, 2})}, [](const Args& x) { return out(loom::matmul(x[0], x[1])); }},
      {"dot", {arg({3}), arg({3})}, [](const Args& x) { return out(loom::matmul(x[0], x[1])); }}};
})
LOOM_GRAD_CASES("copy_", [] {
  // Into a fresh tensor and into a view of one: the source's gradient.
  return std::vector<GradCase>{
      {"broadcast source", {arg({3})},
       [](const Args& x) {
         Tensor dst = loom::zeros({2, 3}, loom::DType::Float64);
         dst.copy_(x[0]);
         return out(dst * 2.0);
       }},
      {"into a view", {arg({2})}, [](const Args& x) {
         Tensor dst = loom::ones({4}, loom::DType::Float64);
         dst.narrow(0, 1, 2).copy_(x[0]);
         return out(dst * dst);
       }}};
})
LOOM_GRAD_CASES("fill_", [] {
  // A filled region gets no gradient; the rest keeps its own.
  return std::vector<GradCase>{{"part of a non-leaf", {arg({4})}, [](const Args& x) {
                                  Tensor y = x[0] * 3.0;
                                  y.narrow(0, 0, 2).fill_(1.5);
                                  return out(y * y);
                                }}};
})
LOOM_GRAD_CASES("where", [] {
  auto cond = loom::from_vector<bool>({true, false, true}, {3});
  return std::vector<GradCase>{
      {"broadcast", {arg({2, 3}), arg({3})}, [cond](const Args& x) { return out(loom::where(cond, x[0], x[1])); }},
      {"with a number", {strided_arg({2, 3})}, [cond](const Args& x) { return out(loom::where(cond, x[0], 0.5)); }}};
})
