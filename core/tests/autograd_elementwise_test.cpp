// autograd_elementwise_test.cpp — gradient tests of the elementwise family beyond the
// per-op cases of opinfo/ (in-place chains, number overloads, ties, guards).
#include <loom/dispatch_trace.h>
#include <loom/opinfo.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using loom::Tensor;
using namespace loom::opinfo;

TEST_CASE("autograd: in-place elementwise ops on a non-leaf", "[autograd]") {
  const Args in = {arg({2, 3}), arg({2, 3}, 0.5, 2), arg({3}, 0.1, 0.9)};
  const loom::autograd::GradcheckFn fn = [](const Args& x) {
    Tensor s = x[0] * 2.0;
    s.sigmoid_();  // keeps its result for backward (as PyTorch's): clamp a copy
    Tensor y = s * 1.0;
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

TEST_CASE("autograd: an in-place op on a non-leaf runs in place, as PyTorch's", "[autograd]") {
  const Tensor x = loom::randn({4, 5}).requires_grad_();
  Tensor y = x * 2.0;
  std::vector<std::string> ops;
  {
    loom::DispatchTrace trace;
    y.add_(x);  // a residual connection, then its activation
    y.relu_();
    for (const auto& e : trace.events())
      if (e.op) ops.push_back(e.op->name());
  }
  // One kernel each: no out-of-place add or relu, no copy into y.
  CHECK(ops == std::vector<std::string>{"add_", "relu_"});
  CHECK(y.grad_fn()->name() == "ReluBackward0");
  y.sum().backward();
  const Tensor want = loom::where(x > 0.0, loom::full({}, 3.0), loom::full({}, 0.0));
  CHECK(loom::allclose(x.grad(), want));
  // An argument overlapping self (not the same view): the out-of-place path,
  // so every element reads the old values.
  {
    Tensor z = x * 1.0;
    const Tensor before = z.detach().clone();
    z.narrow(1, 1, 4).add_(z.narrow(1, 0, 4));
    CHECK(loom::allclose(z.narrow(1, 1, 4), before.narrow(1, 1, 4) + before.narrow(1, 0, 4)));
  }
  // relu_ keeps its result for backward: writing it again is an error at
  // backward that names the node, as PyTorch's.
  Tensor w = x * 2.0;
  w.relu_();
  w.mul_(3.0);
  CHECK_THROWS_WITH(w.sum().backward(), Catch::Contains("modified by an inplace operation") &&
                                            Catch::Contains("ReluBackward0"));
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
  const Args in = {leaf({1, 2, 3}, {3}), leaf({1, 0, 3}, {3})};
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
  const Tensor base = leaf({0, 0.5, 2}, {3});
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
