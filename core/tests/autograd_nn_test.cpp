// autograd_nn_test.cpp — gradient tests of the nn family beyond the per-op cases of
// opinfo/.
#include <loom/dispatch_trace.h>
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

TEST_CASE("dropout's gradient repeats the forward's draw: one dropout call, no mask kept", "[autograd][nn]") {
  loom::manual_seed(5);
  const Tensor x = loom::randn({4, 300}).requires_grad_();
  const Tensor y = loom::dropout(x, 0.25, true);
  CHECK(y.grad_fn()->name() == "NativeDropoutBackward0");
  loom::DispatchTrace trace;
  const Tensor g = loom::autograd::grad({y}, {x}, {loom::full({4, 300}, 3.0)})[0];
  int dropouts = 0;
  for (const auto& e : trace.events()) dropouts += e.op && e.op->name() == "dropout";
  CHECK(dropouts == 1);
  // Kept exactly where the forward kept, scaled by 1/(1 - p); a later draw
  // from the generator does not disturb it.
  (void)loom::rand({10});
  CHECK(loom::all(loom::eq(g != 0, y != 0)).item<bool>());
  CHECK(loom::allclose(loom::masked_select(g, y != 0), loom::full({}, 3.0 / 0.75)));
}
