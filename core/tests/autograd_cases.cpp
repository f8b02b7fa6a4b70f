// autograd_cases.cpp — the registry behind LOOM_GRAD_CASES, and the input
// helpers.
#include "autograd_cases.h"

#include <stdexcept>

namespace loom_test {

namespace {
std::map<std::string, CaseMaker>& registry() {
  static std::map<std::string, CaseMaker> r;
  return r;
}
}  // namespace

bool register_grad_cases(const std::string& op, CaseMaker make) {
  if (!registry().emplace(op, std::move(make)).second)
    throw std::logic_error("gradcheck cases registered twice for op '" + op + "'");
  return true;
}

const std::map<std::string, CaseMaker>& grad_cases() { return registry(); }

loom::Tensor constant(std::vector<int64_t> shape, double lo, double hi) {
  loom::Tensor t = loom::rand(shape, loom::DType::Float64);
  loom::autograd::NoGradGuard no_grad;
  return t * (hi - lo) + lo;
}

loom::Tensor arg(std::vector<int64_t> shape, double lo, double hi) {
  return constant(std::move(shape), lo, hi).requires_grad_();
}

loom::Tensor strided_arg(std::vector<int64_t> shape, double lo, double hi) {
  if (shape.size() < 2) throw std::logic_error("strided_arg needs at least 2 dims");
  std::vector<int64_t> swapped = shape;
  std::swap(swapped[0], swapped[1]);
  loom::Tensor t = constant(swapped, lo, hi).transpose(0, 1);
  return t.detach().requires_grad_();
}

}  // namespace loom_test
