// autograd_test.cpp — the engine: leaves and grad_fn, accumulation,
// broadcasting, retain_graph, version checks, in-place ops and views,
// grad() and double backward, hooks, grad mode, errors, gradcheck.
#include <catch2/catch.hpp>
#include <loom/autograd.h>
#include <loom/loom.h>

#include <cmath>
#include <memory>

using loom::DType;
using loom::Tensor;
namespace ag = loom::autograd;

namespace {
Tensor vec(std::vector<double> v) {
  const auto n = static_cast<int64_t>(v.size());
  return loom::from_vector(v, {n});
}
std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor leaf(std::vector<double> v) { return vec(std::move(v)).requires_grad_(); }
}  // namespace

TEST_CASE("autograd: leaves, grad_fn names and a first backward") {
  Tensor w = leaf({1, 2, 3});
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  CHECK_FALSE(w.grad_fn());
  Tensor y = w * w;
  CHECK_FALSE(y.is_leaf());
  CHECK(y.grad_fn()->name() == "MulBackward0");
  Tensor loss = y.sum();
  CHECK(loss.grad_fn()->name() == "SumBackward0");  // sum() as PyTorch names it; sum(dim) is SumBackward1
  loss.backward();
  CHECK(values(w.grad()) == std::vector<double>{2, 4, 6});
  CHECK_FALSE(y.grad().defined());  // non-leaf: not retained
}

TEST_CASE("autograd: gradients accumulate across backward calls and sum over broadcasting") {
  Tensor a = loom::ones({2, 3}, DType::Float64).requires_grad_();
  Tensor b = leaf({1, 2, 3});
  (a * b).sum().backward();
  CHECK(values(b.grad()) == std::vector<double>{2, 2, 2});
  CHECK(values(a.grad()) == std::vector<double>{1, 2, 3, 1, 2, 3});
  (a + b).sum().backward();
  CHECK(values(b.grad()) == std::vector<double>{4, 4, 4});
}

TEST_CASE("autograd: ops on tensors that need no grad record nothing; NoGradGuard stops recording") {
  Tensor x = vec({1, 2});
  CHECK_FALSE((x * x).requires_grad());
  Tensor w = leaf({1, 2});
  {
    ag::NoGradGuard guard;
    CHECK_FALSE((w * w).requires_grad());
    ag::EnableGradGuard inner;
    CHECK((w * w).requires_grad());
  }
  CHECK((w * w).requires_grad());
  CHECK_FALSE((w > 1).requires_grad());  // bool outputs never require grad
}

TEST_CASE("autograd: a second backward through freed saved tensors says so; retain_graph allows it") {
  Tensor w = leaf({1, 2});
  Tensor loss = (w * w).sum();
  loss.backward();
  CHECK_THROWS_WITH(loss.backward(), Catch::Contains("backward through the graph a second time") &&
                                         Catch::Contains("MulBackward0") &&
                                         Catch::Contains("retain_graph"));
  Tensor l2 = (w * w).sum();
  l2.backward(Tensor(), /*retain_graph=*/true);
  l2.backward();
  CHECK(values(w.grad()) == std::vector<double>{2 + 4, 4 + 8});  // 1st + 2 more passes
}

TEST_CASE("autograd: modifying a saved tensor in place is caught at backward, naming the node") {
  Tensor w = leaf({1, 2});
  Tensor e = w.exp();  // saves its output
  Tensor loss = e.sum();
  {
    ag::NoGradGuard guard;
    e.mul_(vec({2, 2}));
  }
  CHECK_THROWS_WITH(loss.backward(), Catch::Contains("modified by an inplace operation") &&
                                         Catch::Contains("ExpBackward0") &&
                                         Catch::Contains("version 1; expected version 0"));
}

TEST_CASE("autograd: in-place ops on leaves that require grad are refused") {
  Tensor w = leaf({1, 2});
  CHECK_THROWS_WITH(w.add_(vec({1, 1})), Catch::Contains("add_") && Catch::Contains("leaf tensor"));
  CHECK_THROWS_WITH(w.narrow(0, 0, 1).mul_(vec({2})),
                    Catch::Contains("view of a leaf tensor that requires grad"));
  ag::NoGradGuard guard;  // as an optimizer step does
  w.add_(vec({1, 1}));
  CHECK(values(w) == std::vector<double>{2, 3});
}

TEST_CASE("autograd: in-place ops on non-leaves take over the graph") {
  Tensor x = leaf({1, 2, 3});
  Tensor w = leaf({4, 5, 6});
  Tensor y = x * 2.0;
  y.mul_(w);  // y = 2x * w
  CHECK(y.grad_fn()->name() == "MulBackward0");
  y.add_(x);  // y = 2xw + x
  y.sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{2 * 4 + 1, 2 * 5 + 1, 2 * 6 + 1});
  CHECK(values(w.grad()) == std::vector<double>{2, 4, 6});
}

TEST_CASE("autograd: gradients flow through views and in-place writes through views") {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor v = x.view({2, 2}).transpose(0, 1);
  CHECK(v.grad_fn()->name() == "TransposeBackward0");
  (v * vec({10, 20})).sum().backward();  // v[i][j] = x[2j + i], times 10 or 20 by j
  CHECK(values(x.grad()) == std::vector<double>{10, 10, 20, 20});

  Tensor y = leaf({1, 2, 3, 4});
  Tensor z = y * 1.0;
  z.narrow(0, 1, 2).mul_(vec({3, 5}));  // z = [1, 6, 15, 4] * y-ish
  CHECK(z.grad_fn()->name() == "CopySlices");
  CHECK(values(z) == std::vector<double>{1, 6, 15, 4});
  (z * z).sum().backward();  // d/dy (c_i y_i)^2 = 2 c_i^2 y_i
  CHECK(values(y.grad()) == std::vector<double>{2, 2 * 9 * 2, 2 * 25 * 3, 8});
}

TEST_CASE("autograd: copying into a view of a plain tensor makes the base require grad") {
  Tensor w = leaf({7, 8});
  Tensor base = loom::zeros({4}, DType::Float64);
  Tensor part = base.narrow(0, 1, 2);
  part.copy_(w);
  CHECK(base.requires_grad());
  CHECK(base.grad_fn()->name() == "CopySlices");
  (base * vec({1, 2, 3, 4})).sum().backward();
  CHECK(values(w.grad()) == std::vector<double>{2, 3});
}

TEST_CASE("autograd: grad() returns gradients without touching .grad; create_graph gives double backward") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = (x * x * x).sum();
  auto g = ag::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  CHECK(values(g[0]) == std::vector<double>{3, 12, 27});
  CHECK_FALSE(x.grad().defined());
  CHECK(g[0].requires_grad());
  auto gg = ag::grad({g[0].sum()}, {x});
  CHECK(values(gg[0]) == std::vector<double>{6, 12, 18});
  Tensor unused = leaf({1});
  CHECK_THROWS_WITH(ag::grad({(x * 2.0).sum()}, {unused}), Catch::Contains("not to have been used"));
  auto none = ag::grad({(x * 2.0).sum()}, {unused}, {}, std::nullopt, false, /*allow_unused=*/true);
  CHECK_FALSE(none[0].defined());
}

TEST_CASE("autograd: hooks see and replace gradients; retain_grad keeps a non-leaf's") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 3.0;
  y.retain_grad();
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) {
    seen = values(g);
    return g * 10.0;
  });
  const int64_t id = x.register_hook([](const Tensor& g) { return g + 1.0; });
  y.sum().backward();
  CHECK(seen == std::vector<double>{1, 1});
  CHECK(values(y.grad()) == std::vector<double>{10, 10});  // retain_grad's hook runs last
  CHECK(values(x.grad()) == std::vector<double>{31, 31});
  x.remove_hook(id);
  x.mutable_grad() = Tensor();
  (x * 3.0).sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{3, 3});
}

TEST_CASE("autograd: errors for backward without a gradient, without grad, and requires_grad_ misuse") {
  Tensor w = leaf({1, 2});
  CHECK_THROWS_WITH((w * 2.0).backward(), Catch::Contains("only for scalar outputs") &&
                                              Catch::Contains("[2]"));
  CHECK_THROWS_WITH(vec({1.0}).backward(), Catch::Contains("does not require grad"));
  CHECK_THROWS_WITH((w * 2.0).requires_grad_(false), Catch::Contains("leaf"));
  CHECK_THROWS_WITH(loom::ones({2}, DType::Int64).requires_grad_(),
                    Catch::Contains("floating point"));
  CHECK_THROWS_WITH(loom::mul_out(w, w, w), Catch::Contains("out= arguments don't support"));
}

TEST_CASE("autograd: detach shares data outside the graph") {
  Tensor w = leaf({1, 2});
  Tensor d = (w * 2.0).detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  Tensor y = w * 2.0;
  y.detach_();
  CHECK_FALSE(y.requires_grad());
}

TEST_CASE("gradcheck: passes for correct formulas, on broadcast, strided and 0-d inputs") {
  auto a = loom::randn({2, 3}, DType::Float64).requires_grad_();
  auto b = loom::randn({3}, DType::Float64).requires_grad_();
  auto s = loom::randn({}, DType::Float64).requires_grad_();
  auto t = loom::randn({3, 2}, DType::Float64).t().requires_grad_();  // non-contiguous leaf
  auto fn = [](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{(x[0] * x[1] + x[2]) / (x[3] * x[3] + 1.0) - x[0].exp()};
  };
  CHECK(ag::gradcheck(fn, {a, b, s, t}));
  CHECK(ag::gradgradcheck(fn, {a, b, s, t}));
  auto reductions = [](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{x[0].sum({1}), loom::mean(x[0], loom::IntArrayRef{0}, true), x[0].sum()};
  };
  CHECK(ag::gradcheck(reductions, {a}));
  CHECK(ag::gradgradcheck(reductions, {a}));
}

TEST_CASE("gradcheck: matmul in every rank combination, with batch broadcasting") {
  auto r = [](std::vector<int64_t> s) { return loom::randn(s, DType::Float64).requires_grad_(); };
  auto mm = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{loom::matmul(x[0], x[1])}; };
  for (auto shapes : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{3}, {3}}, {{3}, {3, 2}}, {{2, 3}, {3}}, {{2, 3}, {3, 4}}, {{2, 2, 3}, {3, 2}},
           {{2, 1, 2, 3}, {3, 3, 2}}}) {
    INFO("shapes " << loom::shape_str(shapes.first) << " @ " << loom::shape_str(shapes.second));
    CHECK(ag::gradcheck(mm, {r(shapes.first), r(shapes.second)}));
    CHECK(ag::gradgradcheck(mm, {r(shapes.first), r(shapes.second)}));
  }
}

TEST_CASE("gradcheck: a wrong gradient is reported with input, element and both values") {
  auto x = loom::randn({2, 2}, DType::Float64).requires_grad_();
  auto wrong = [](const std::vector<Tensor>& v) {  // d(x * x.detach()) / dx misses a term
    return std::vector<Tensor>{v[0] * v[0].detach()};
  };
  CHECK_THROWS_WITH(ag::gradcheck(wrong, {x}),
                    Catch::Contains("Jacobian mismatch for output 0 element [0, 0] with respect "
                                    "to input 0 element [0, 0]") &&
                        Catch::Contains("numerical") && Catch::Contains("analytical"));
}

TEST_CASE("autograd: printing shows grad_fn or requires_grad, as PyTorch does") {
  Tensor w = loom::from_vector<float>({1, 2}, {2}).requires_grad_();
  CHECK(w.str() == "tensor([1., 2.], requires_grad=True)");
  CHECK((w * w).str() == "tensor([1., 4.], grad_fn=<MulBackward0>)");
}

TEST_CASE("autograd: views see in-place writes to their base, and to their siblings") {
  Tensor x = leaf({1, 2, 3, 4});
  {
    Tensor y = x * 1.0;
    Tensor v = y.narrow(0, 0, 2);
    y.mul_(vec({2, 2, 2, 2}));  // the base changes after the view was taken
    CHECK(values(v) == std::vector<double>{2, 4});
    (v * v).sum().backward();  // d/dx (2x)^2 = 8x on the view's part
    CHECK(values(x.grad()) == std::vector<double>{8, 16, 0, 0});
  }
  x.mutable_grad() = Tensor();
  {
    Tensor y = x * 1.0;
    Tensor v1 = y.narrow(0, 0, 2);
    Tensor v2 = y.narrow(0, 2, 2);
    v1.mul_(vec({3, 3}));
    (v1.sum() + v2.sum() + y.sum()).backward();
    CHECK(values(x.grad()) == std::vector<double>{6, 6, 2, 2});
  }
  x.mutable_grad() = Tensor();
  {
    Tensor y = x * 1.0;
    y.view({2, 2}).select(0, 1).mul_(vec({5, 5}));  // a view of a view
    y.sum().backward();
    CHECK(values(x.grad()) == std::vector<double>{1, 1, 5, 5});
  }
}

TEST_CASE("autograd: detach shares the version counter, so a saved tensor changed through it is caught") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 1.0;
  Tensor z = y * y;  // saves y
  y.detach().mul_(vec({2, 2}));
  CHECK_THROWS_WITH(z.sum().backward(), Catch::Contains("MulBackward0"));
}

TEST_CASE("autograd: a custom function's backward is used, and checked by gradcheck") {
  // cube(x) computed outside autograd, with a hand-written backward.
  auto cube = [](const std::vector<Tensor>& in) {
    Tensor y;
    {
      ag::NoGradGuard no_grad;
      y = in[0] * in[0] * in[0];
    }
    Tensor x = in[0];
    ag::record_custom_function("CubeBackward", {x}, {y}, [x](const std::vector<Tensor>& g) {
      return std::vector<Tensor>{g[0] * x * x * 3.0};
    });
    return std::vector<Tensor>{y};
  };
  Tensor x = leaf({1, 2});
  Tensor y = cube({x})[0];
  CHECK(y.grad_fn()->name() == "CubeBackward");
  CHECK(ag::gradcheck(cube, {loom::randn({3}, DType::Float64).requires_grad_()}));
  CHECK(ag::gradgradcheck(cube, {loom::randn({3}, DType::Float64).requires_grad_()}));
}

TEST_CASE("autograd: backward from several roots sums their contributions") {
  Tensor x = leaf({1, 2});
  Tensor a = x * 2.0;
  Tensor b = x * x;
  ag::backward({a, b}, {vec({1, 1}), vec({10, 10})});
  CHECK(values(x.grad()) == std::vector<double>{2 + 20, 2 + 40});
}

TEST_CASE("autograd: a very long graph is freed without deep recursion") {
  Tensor x = leaf({1});
  Tensor w = vec({1.0});
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = y * w;
  y.backward();
  CHECK(values(x.grad()) == std::vector<double>{1});
  y = Tensor();  // drops the whole chain
}

TEST_CASE("autograd: an overlapping as_strided view sums its gradient per memory location") {
  Tensor x = leaf({1, 2, 3});
  // Sliding windows of 2 over 3 elements: x[1] appears twice.
  Tensor w = x.as_strided({2, 2}, {1, 1}, 0);
  (w * vec({10, 20})).sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{10, 30, 20});
  auto fn = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0].as_strided({3, 2}, {1, 0}, 0) * 2.0};
  };
  CHECK(ag::gradcheck(fn, {loom::randn({3}, DType::Float64).requires_grad_()}));
}

TEST_CASE("autograd: a view of an expanded tensor counts each element's gradient once") {
  // The expanded elements share memory; the expand's node sums them.
  Tensor x = leaf({1, 2});
  (x.expand({3, 2}).reshape({3, 2}) * loom::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2})).sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{9, 12});
  Tensor y = leaf({1, 2});
  (y.expand({3, 2}).narrow(0, 1, 1) * 5.0).sum().backward();
  CHECK(values(y.grad()) == std::vector<double>{5, 5});
  auto fn = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0].expand({4, 3}).t().narrow(1, 1, 2) * loom::arange(6.0).reshape({3, 2})};
  };
  const Tensor z = loom::randn({4, 1}, DType::Float64).requires_grad_();
  CHECK(ag::gradcheck(fn, {z}));
  CHECK(ag::gradgradcheck(fn, {z}));
}

namespace {
// x * 1 through a custom function whose backward holds `alive`: while any
// node of the graph above it lives, `alive` cannot expire.
Tensor tracked(const Tensor& x, const std::shared_ptr<int>& alive) {
  Tensor y;
  {
    ag::NoGradGuard no_grad;
    y = x * 1.0;
  }
  ag::record_custom_function("TrackedBackward", {x}, {y},
                             [alive](const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0]}; });
  return y;
}
}  // namespace

// A saved tensor kept as itself would be a reference cycle once an in-place
// op gives it a new history that reaches the node that saved it (dropout_
// on a non-leaf did this: the graph leaked). Saved tensors are detached
// aliases that get their history back on unpack (nodes.h, SavedVariable).
TEST_CASE("autograd: an in-place op on a saved tensor makes no reference cycle; the graph is freed") {
  std::weak_ptr<int> watch;
  SECTION("a saved non-leaf that requires grad") {
    auto alive = std::make_shared<int>(0);
    watch = alive;
    Tensor x = leaf({1, 2});
    Tensor y = tracked(x, alive) * 2.0;
    y.copy_(y * vec({3, 4}));  // MulBackward0 saved y; y's grad_fn is now CopyBackward, above it
    CHECK(y.grad_fn()->name() != "MulBackward0");
    y.sum().backward();
    CHECK(values(x.grad()) == std::vector<double>{6, 8});
  }
  SECTION("a saved tensor that required no grad") {
    auto alive = std::make_shared<int>(0);
    watch = alive;
    Tensor x = tracked(leaf({1, 2}), alive);
    Tensor w = vec({3, 4});
    w.copy_(x * w);  // MulBackward0 saved w; w now has a history through it
    CHECK(values(w) == std::vector<double>{3, 8});
  }
  CHECK(watch.expired());
}
