// autograd_nn_test.cpp — gradient tests of the nn family beyond the per-op cases of
// opinfo/.
#include <loom/opinfo.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using loom::Tensor;
using namespace loom::opinfo;
using loom::DType;

TEST_CASE("autograd: batch_norm updates its running statistics without recording them", "[autograd]") {
  const Tensor x = loom::from_vector<double>({1, 2, 3, 5}, {2, 2}).requires_grad_();
  Tensor rm = loom::zeros({2}, DType::Float64), rv = loom::ones({2}, DType::Float64);
  const Tensor y = loom::batch_norm(x, rm, rv, {}, {}, true, 0.5);
  CHECK(y.grad_fn()->name() == "NativeBatchNormBackward0");
  CHECK_FALSE(rm.requires_grad());
  CHECK_FALSE(rv.requires_grad());
  CHECK(rm.to_vector<double>() == std::vector<double>{1.0, 1.75});  // 0.5 · batch mean
  CHECK(rv.to_vector<double>() == std::vector<double>{1.5, 2.75});  // 0.5 + 0.5 · unbiased var
  y.sum().backward();  // the statistics changed in place: backward must not read them
  CHECK(x.grad().defined());
}
