// autograd_cases.h — gradcheck cases for the ops of the catalog.
//
// Each family file (autograd_cases_<family>.cpp) registers, per catalog op,
// a few cases: float64 inputs (those to check require grad) and a function
// of them that calls the op. autograd_catalog_test.cpp runs gradcheck and
// gradgradcheck on every case, and fails for any differentiable core op
// that has no cases, so a new op cannot arrive without its derivative.
//
//   LOOM_GRAD_CASES("mul", [] {
//     return std::vector<GradCase>{
//         {"broadcast", {arg({2, 3}), arg({3})}, [](const Args& x) { return out(x[0] * x[1]); }},
//         {"strided", {strided_arg({3, 2}), arg({3, 2})}, ...}};
//   })
#pragma once

#include <loom/autograd.h>
#include <loom/loom.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace loom_test {

using Args = std::vector<loom::Tensor>;

struct GradCase {
  std::string label;                 // what the case exercises: "broadcast", "0-d", ...
  Args inputs;                       // float64; those to check require grad
  loom::autograd::GradcheckFn fn;    // calls the op on the inputs
  bool check_double = true;          // also gradgradcheck (false: say why at the case)
  loom::autograd::GradcheckOptions options{};
};

using CaseMaker = std::function<std::vector<GradCase>()>;

// Registers the cases of catalog op `op` (its full name: "max.dim").
bool register_grad_cases(const std::string& op, CaseMaker make);
const std::map<std::string, CaseMaker>& grad_cases();

// A float64 leaf that requires grad, uniform in [lo, hi) (seeded per call).
loom::Tensor arg(std::vector<int64_t> shape, double lo = -1, double hi = 1);
// The same values laid out non-contiguously (a transposed buffer), still a
// leaf that requires grad. Needs at least 2 dims.
loom::Tensor strided_arg(std::vector<int64_t> shape, double lo = -1, double hi = 1);
// A float64 tensor that does not require grad (indices, masks, targets).
loom::Tensor constant(std::vector<int64_t> shape, double lo = -1, double hi = 1);
// One output as a function result.
inline std::vector<loom::Tensor> out(loom::Tensor t) { return {std::move(t)}; }

}  // namespace loom_test

#define LOOM_GRAD_CASES_CONCAT2(a, b) a##b
#define LOOM_GRAD_CASES_CONCAT(a, b) LOOM_GRAD_CASES_CONCAT2(a, b)
#define LOOM_GRAD_CASES(op, ...)                                                        \
  [[maybe_unused]] static const bool LOOM_GRAD_CASES_CONCAT(loom_grad_cases_, __LINE__) = \
      ::loom_test::register_grad_cases(op, __VA_ARGS__);
