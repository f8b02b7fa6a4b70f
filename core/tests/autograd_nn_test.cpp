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

TEST_CASE("the gradient ops take a root gradient of another dtype", "[autograd][nn]") {
  loom::manual_seed(6);
  const Tensor x = loom::randn({3, 8}).requires_grad_();
  const Tensor g64 = loom::randn({3, 8}, DType::Float64), g32 = g64.to(DType::Float32);
  for (auto f : {+[](const Tensor& t) { return loom::layer_norm(t, {8}); },
                 +[](const Tensor& t) { return loom::rms_norm(t, {8}); }}) {
    const Tensor y = f(x);
    const Tensor a = loom::autograd::grad({y}, {x}, {g64}, /*retain_graph=*/true)[0];
    const Tensor b = loom::autograd::grad({y}, {x}, {g32})[0];
    CHECK(a.dtype() == DType::Float32);
    CHECK(loom::allclose(a, b));
  }
  // dropout draws in float32 for a float32 input: a float64 gradient must not
  // change which elements are kept.
  const Tensor y = loom::dropout(x, 0.5, true);
  const Tensor gd = loom::autograd::grad({y}, {x}, {loom::ones({3, 8}, DType::Float64)})[0];
  CHECK(loom::all(loom::eq(gd != 0, y != 0)).item<bool>());
}

TEST_CASE("relu's gradient passes at NaN, as PyTorch's threshold_backward", "[autograd][nn]") {
  const Tensor x = loom::tensor({1.0f, -1.0f, std::nanf(""), 0.0f}).requires_grad_();
  const Tensor g = loom::autograd::grad({loom::relu(x)}, {x}, {loom::full({4}, 2.0)})[0];
  CHECK(g.to(DType::Float64).to_vector<double>() == std::vector<double>{2.0, 0.0, 2.0, 0.0});
}
