// autograd_reduce_shape_test.cpp — gradient tests of reductions at zeros and ties, and of
// the views and plain C++ shape functions, which are not catalog ops.
#include <loom/opinfo.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using loom::Tensor;
using namespace loom::opinfo;
using loom::IntArrayRef;

namespace {
// gradcheck and gradgradcheck of `fn` on `inputs`.
void check_both(const loom::autograd::GradcheckFn& fn, const Args& inputs) {
  CHECK_NOTHROW(loom::autograd::gradcheck(fn, inputs));
  CHECK_NOTHROW(loom::autograd::gradgradcheck(fn, inputs));
}
}  // namespace

TEST_CASE("autograd: cumprod with zeros inside the scanned dim, and ties of amax", "[autograd]") {
  using loom::autograd::gradcheck;
  // Rows: one zero in the middle, a zero first, two zeros.
  const Tensor x = leaf({1.5, 0, -2, 0.5, 0, 3, 0.5, 2, 2, 0, 1.5, 0}, {3, 4});
  CHECK(gradcheck([](const Args& a) { return out(loom::cumprod(a[0], 1)); }, {x}));
  CHECK(gradcheck([](const Args& a) { return out(loom::cumprod(a[0], 0)); }, {x}));

  // A tie splits the gradient evenly (PyTorch's amax/amin, and inf-norm).
  const Tensor t = leaf({1, 3, 3, -3}, {4});
  loom::amax(t).backward();
  CHECK(t.grad().to_vector<double>() == std::vector<double>{0, 0.5, 0.5, 0});
  const Tensor u = leaf({1, 3, 3, -3}, {4});
  loom::norm(u, INFINITY).backward();
  const double third = 1.0 / 3;
  CHECK(u.grad().to_vector<double>() == std::vector<double>{0, third, third, -third});
}

TEST_CASE("autograd: views of a tensor", "[autograd]") {
  const Args x{strided_arg({2, 3, 4})};
  SECTION("view, reshape") {
    check_both([](const Args& a) { return out(a[0].contiguous().view({6, 4})); }, x);
    check_both([](const Args& a) { return out(a[0].reshape({4, -1})); }, x);  // copies: strided
  }
  SECTION("transpose, t, permute, movedim") {
    check_both([](const Args& a) { return out(a[0].transpose(0, 2)); }, x);
    check_both([](const Args& a) { return out(a[0].select(2, 1).t()); }, x);
    check_both([](const Args& a) { return out(loom::permute(a[0], {2, 0, 1})); }, x);
    check_both([](const Args& a) { return out(loom::movedim(a[0], {0, 1}, {2, 0})); }, x);
  }
  SECTION("expand, squeeze, unsqueeze") {
    check_both([](const Args& a) { return out(a[0].unsqueeze(1).expand({2, 5, 3, 4})); }, x);
    check_both([](const Args& a) { return out(a[0].narrow(1, 1, 1).squeeze(1)); }, x);
  }
  SECTION("narrow, select, slice with steps") {
    check_both([](const Args& a) { return out(a[0].narrow(2, 1, 2).select(0, -1)); }, x);
    check_both([](const Args& a) { return out(loom::slice(a[0], -1, 0, std::nullopt, 3)); }, x);
    check_both([](const Args& a) { return out(loom::slice(loom::slice(a[0], 1, 1), 2, 1, 4, 2)); }, x);
  }
  SECTION("as_strided") {
    check_both([](const Args& a) { return out(a[0].contiguous().as_strided({2, 2}, {1, 6}, 3)); }, x);
  }
  SECTION("flatten, unflatten") {
    check_both([](const Args& a) { return out(loom::flatten(a[0], 1)); }, x);
    check_both([](const Args& a) { return out(loom::unflatten(a[0], -1, {2, -1})); }, x);
  }
}

TEST_CASE("autograd: shape functions", "[autograd]") {
  const Args x{strided_arg({2, 3, 4})};
  SECTION("split, chunk, unbind") {
    check_both([](const Args& a) { return loom::split(a[0], 3, -1); }, x);
    check_both([](const Args& a) { return loom::split(a[0], {1, 2}, 1); }, x);
    check_both([](const Args& a) { return loom::chunk(a[0], 2, 1); }, x);
    check_both([](const Args& a) { return loom::unbind(a[0], 1); }, x);
  }
  SECTION("stack") {
    check_both([](const Args& a) { return out(loom::stack({a[0], a[1], a[0]}, -1)); }, {x[0], arg({2, 3, 4})});
  }
  SECTION("repeat, tile: each copy adds to the gradient") {
    check_both([](const Args& a) { return out(loom::repeat(a[0], {2, 1, 3, 1})); }, x);
    check_both([](const Args& a) { return out(loom::tile(a[0], {2, 1})); }, x);
  }
}

TEST_CASE("autograd: views and shape ops are named as PyTorch names them", "[autograd]") {
  const Tensor x = arg({2, 3, 4});
  auto name = [](const Tensor& t) { return t.grad_fn()->name(); };
  CHECK(name(x.view({6, 4})) == "ViewBackward0");
  CHECK(name(x.transpose(0, 1)) == "TransposeBackward0");
  CHECK(name(loom::permute(x, {2, 0, 1})) == "PermuteBackward0");
  CHECK(name(x.unsqueeze(0)) == "UnsqueezeBackward0");
  CHECK(name(x.narrow(0, 0, 1).squeeze(0)) == "SqueezeBackward1");
  CHECK(name(x.unsqueeze(0).expand({2, 2, 3, 4})) == "ExpandBackward0");
  CHECK(name(x.select(1, 0)) == "SelectBackward0");
  CHECK(name(x.narrow(1, 0, 2)) == "SliceBackward0");
  CHECK(name(loom::slice(x, 2, 0, 4, 2)) == "SliceBackward0");
  CHECK(name(x.as_strided({2}, {1})) == "AsStridedBackward0");
  CHECK(name(loom::cat({x, x}, 1)) == "CatBackward0");
  CHECK(name(loom::mm(x.select(0, 0), x.select(0, 1).t())) == "MmBackward0");
  CHECK(name(loom::max(x, 1).first) == "MaxBackward0");
  CHECK(name(loom::sort(x).first) == "SortBackward0");
}
