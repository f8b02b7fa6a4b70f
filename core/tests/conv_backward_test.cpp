// The conv2d gradient ops (_conv2d_backward_input / _weight): the CPU's
// native float32 kernels (oneDNN) against the float64 composites, the path
// each call takes, double backward through the composites, and argument
// errors.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <string>

using loom::DType;
using loom::Tensor;

namespace {

double max_rel_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  const auto x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]) / (1 + std::abs(y[i])));
  return worst;
}

struct Geometry {
  std::vector<int64_t> x, w;
  std::vector<int64_t> stride, pad, dil;
  int64_t groups;
};

// Plain, strided with a trailing row the forward skips, dilated and grouped,
// depthwise, 1-D.
const Geometry kCases[] = {
    {{4, 3, 8, 8}, {16, 3, 3, 3}, {1}, {1}, {1}, 1},
    {{2, 4, 9, 8}, {6, 4, 3, 3}, {2}, {0}, {1}, 1},
    {{2, 4, 10, 9}, {6, 2, 3, 2}, {1, 2}, {2, 1}, {2, 1}, 2},
    {{2, 8, 7, 7}, {8, 1, 3, 3}, {1}, {1}, {1}, 8},
};

std::string name_of(loom::DispatchPath p) { return loom::to_string(p); }

// The path each call of `op` took inside `trace`.
std::vector<std::string> paths_of(const loom::DispatchTrace& trace, const std::string& op) {
  std::vector<std::string> r;
  for (const auto& e : trace.events())
    if (e.op && e.op->name() == op) r.push_back(name_of(e.path));
  return r;
}

}  // namespace

TEST_CASE("conv2d backward in float32 (native kernels) matches float64 (composites)", "[conv]") {
  loom::manual_seed(7);
  for (const Geometry& g : kCases) {
    CAPTURE(g.groups, g.stride[0]);
    const Tensor x64 = loom::randn(g.x, DType::Float64), w64 = loom::randn(g.w, DType::Float64);
    const Tensor b64 = loom::randn({g.w[0]}, DType::Float64);
    auto grads = [&](DType t) {
      Tensor x = x64.to(t).detach().requires_grad_(), w = w64.to(t).detach().requires_grad_(),
             b = b64.to(t).detach().requires_grad_();
      Tensor y = loom::conv2d(x, w, b, g.stride, g.pad, g.dil, g.groups);
      Tensor dy = loom::cos(loom::arange(0, y.numel(), 1, t)).view(y.sizes());
      return loom::autograd::grad({y}, {x, w, b}, {dy});
    };
    loom::DispatchTrace trace;
    const auto f32 = grads(DType::Float32);
    CHECK(paths_of(trace, "_conv2d_backward_input") == std::vector<std::string>{"kernel"});
    CHECK(paths_of(trace, "_conv2d_backward_weight") == std::vector<std::string>{"kernel"});
    trace.clear();
    const auto f64 = grads(DType::Float64);
    CHECK(paths_of(trace, "_conv2d_backward_input").at(0) == "composite");
    for (size_t i = 0; i < 3; ++i) CHECK(max_rel_diff(f32[i], f64[i]) < 1e-4);
  }
}

TEST_CASE("conv1d and unbatched conv2d reach the gradient ops through their 4-D form", "[conv]") {
  Tensor x = loom::randn({3, 12}).requires_grad_(), w = loom::randn({5, 3, 3}).requires_grad_();
  Tensor y = loom::conv1d(x.unsqueeze(0), w, std::nullopt, {2}, {1}).squeeze(0);
  const auto g = loom::autograd::grad({y.sum()}, {x, w});
  const Tensor x64 = x.detach().to(DType::Float64).requires_grad_(), w64 = w.detach().to(DType::Float64).requires_grad_();
  const auto g64 = loom::autograd::grad({loom::conv1d(x64, w64, std::nullopt, {2}, {1}).sum()}, {x64, w64});
  CHECK(max_rel_diff(g[0], g64[0]) < 1e-5);
  CHECK(max_rel_diff(g[1], g64[1]) < 1e-5);
}

TEST_CASE("double backward through conv2d in float32 differentiates the composites", "[conv]") {
  // d/dx of <d(sum(conv(x, w)²))/dw, v>: needs the weight gradient's own
  // gradient, which the native kernel cannot give; create_graph takes the
  // composite path. Checked against float64.
  loom::manual_seed(3);
  const Tensor x0 = loom::randn({2, 3, 6, 6}, DType::Float64), w0 = loom::randn({4, 3, 3, 3}, DType::Float64);
  const Tensor v0 = loom::randn({4, 3, 3, 3}, DType::Float64);
  auto second = [&](DType t) {
    Tensor x = x0.to(t).detach().requires_grad_(), w = w0.to(t).detach().requires_grad_();
    Tensor y = loom::conv2d(x, w, std::nullopt, {1}, {1});
    const auto gw = loom::autograd::grad({(y * y).sum()}, {w}, {}, std::nullopt, /*create_graph=*/true);
    return loom::autograd::grad({(gw[0] * v0.to(t)).sum()}, {x})[0];
  };
  CHECK(max_rel_diff(second(DType::Float32), second(DType::Float64)) < 1e-4);
}

TEST_CASE("conv2d gradient ops: direct calls and argument errors", "[conv]") {
  const Tensor g = loom::randn({2, 4, 6, 6}), w = loom::randn({4, 3, 3, 3}), x = loom::randn({2, 3, 8, 8});
  // Direct calls agree with autograd's gradients.
  Tensor xr = x.clone().requires_grad_(), wr = w.clone().requires_grad_();
  const auto ref = loom::autograd::grad({loom::conv2d(xr, wr)}, {xr, wr}, {g});
  CHECK(max_rel_diff(loom::conv2d_backward_input(g, w, {8, 8}), ref[0]) < 1e-5);
  CHECK(max_rel_diff(loom::conv2d_backward_weight(g, x, {3, 3}), ref[1]) < 1e-5);
  // Empty batch: the weight gradient is zeros.
  const Tensor dw0 = loom::conv2d_backward_weight(loom::ones({0, 4, 6, 6}), loom::ones({0, 3, 8, 8}), {3, 3});
  CHECK(dw0.sizes() == loom::IntArrayRef({4, 3, 3, 3}));
  CHECK(dw0.abs().sum().item<float>() == 0);

  CHECK_THROWS_WITH(loom::conv2d_backward_input(g, w, {9, 9}),
                    Catch::Contains("_conv2d_backward_input: grad_output of size [2, 4, 6, 6] does not fit input_size "
                                    "[9, 9]: the convolution makes 7 outputs along spatial dim 0"));
  CHECK_THROWS_WITH(loom::conv2d_backward_input(g.view({8, 6, 6}), w, {8, 8}),
                    Catch::Contains("_conv2d_backward_input: expected a 4-D grad_output [N, O, OH, OW], but got size [8, 6, 6]"));
  CHECK_THROWS_WITH(loom::conv2d_backward_input(g, loom::randn({5, 3, 3, 3}), {8, 8}),
                    Catch::Contains("weight of size [5, 3, 3, 3] does not match grad_output [2, 4, 6, 6]"));
  CHECK_THROWS_WITH(loom::conv2d_backward_input(g, w.to(DType::Float64), {8, 8}),
                    Catch::Contains("expected grad_output and weight to have the same dtype, but got float32 and float64"));
  CHECK_THROWS_WITH(loom::conv2d_backward_weight(g, x, {3, 3}, {1}, {0}, {1}, 3),
                    Catch::Contains("_conv2d_backward_weight: given groups=3, expected grad_output's and input's "
                                    "channels (4, 3) to be divisible by it"));
  CHECK_THROWS_WITH(loom::conv2d_backward_weight(g, loom::randn({3, 3, 8, 8}), {3, 3}),
                    Catch::Contains("grad_output [2, 4, 6, 6] and input [3, 3, 8, 8] have different batch sizes"));
  CHECK_THROWS_WITH(loom::conv2d_backward_weight(g, x, {4, 4}),
                    Catch::Contains("does not fit input [2, 3, 8, 8] and kernel_size [4, 4]: the convolution makes 5"));
  CHECK_THROWS_WITH(loom::conv2d_backward_weight(g, x, {0, 3}),
                    Catch::Contains("_conv2d_backward_weight: expected 'kernel_size' to be positive"));
  CHECK_THROWS_WITH(loom::conv2d_backward_weight(g, x, {3, 3}, {1}, {-1}),
                    Catch::Contains("expected 'padding' to be non-negative"));
}
