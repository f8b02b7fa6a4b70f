// autograd_device_test.cpp — backward on the out-of-tree "sim" device (its
// own add/mul kernels plus the CPU fallback) gives CPU's gradients, with no
// autograd code in the plugin.
#include <catch2/catch.hpp>
#include <loom/autograd.h>
#include <loom/loom.h>

using loom::DType;
using loom::Tensor;

namespace {
struct PolicyGuard {
  loom::FallbackPolicy saved = loom::fallback_policy();
  PolicyGuard() { loom::set_fallback_policy(loom::FallbackPolicy::Allow); }
  ~PolicyGuard() { loom::set_fallback_policy(saved); }
};

// loss(w, x) on `device`: mul and add (sim's own kernels), matmul, exp, div,
// sum (fallback), views, an in-place op through a view, a device copy.
std::vector<std::vector<double>> grads_on(loom::Device device, const Tensor& w0, const Tensor& x0) {
  Tensor w = w0.to(device).detach().requires_grad_();
  Tensor x = x0.to(device).detach().requires_grad_();
  Tensor h = loom::matmul(x, w.t()) + x.sum({1}, true);  // [2, 2]
  Tensor y = h * h;
  y.narrow(1, 0, 1).mul_(h.exp().narrow(1, 1, 1));
  Tensor z = (y / (x.narrow(1, 0, 2) * x.narrow(1, 0, 2) + 1.0)).transpose(0, 1).reshape({4});
  Tensor loss = (z.cpu() * loom::from_vector<double>({1, 2, 3, 4}, {4})).sum();
  loss.backward();
  return {w.grad().cpu().to_vector<double>(), x.grad().cpu().to_vector<double>()};
}
}  // namespace

TEST_CASE("autograd on sim: the same gradients as on CPU, through native kernels and fallback",
          "[autograd]") {
  PolicyGuard policy;
  loom::Device sim("sim");
  Tensor w = loom::randn({2, 3}, DType::Float64);
  Tensor x = loom::randn({2, 3}, DType::Float64);
  const auto cpu = grads_on(loom::cpu_device(), w, x);
  const auto on_sim = grads_on(sim, w, x);
  REQUIRE(cpu.size() == on_sim.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    REQUIRE(cpu[i].size() == on_sim[i].size());
    for (size_t k = 0; k < cpu[i].size(); ++k) CHECK(on_sim[i][k] == Approx(cpu[i][k]).epsilon(1e-12));
  }
}

TEST_CASE("autograd on sim: gradients land on the leaf's device; double backward works", "[autograd]") {
  PolicyGuard policy;
  loom::Device sim("sim");
  Tensor x = loom::from_vector<double>({1, 2, 3}, {3}).to(sim).requires_grad_();
  Tensor y = (x * x * x).sum();
  auto g = loom::autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  CHECK(g[0].device() == sim);
  CHECK(g[0].cpu().to_vector<double>() == std::vector<double>{3, 12, 27});
  g[0].sum().backward();
  CHECK(x.grad().device() == sim);
  CHECK(x.grad().cpu().to_vector<double>() == std::vector<double>{6, 12, 18});
}
