// Fused graphs from several threads at once (make test-tsan runs this
// [concurrency] case): the first runs race to parse the body, offer it to the
// device and trace its backward graph — one of each must win, and every
// thread must get eager's results.
#include <catch2/catch.hpp>
#include <loom/jit/jit.h>
#include <loom/jit/passes.h>
#include <loom/loom.h>

#include <atomic>
#include <thread>

using loom::Tensor;

namespace {

Tensor chain(const Tensor& x, const Tensor& b) {
  return loom::sigmoid(x + b) * x * 0.75 - loom::tanh(x) / 3.0;
}

}  // namespace

TEST_CASE("threads run one fused graph forward and backward at once", "[concurrency]") {
  const Tensor x0 = loom::randn({33, 70});
  const Tensor b0 = loom::randn({70});
  loom::jit::Graph g = loom::jit::trace(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{chain(in[0], in[1])}; }, {x0, b0});
  REQUIRE(loom::jit::fuse_elementwise(g) > 0);
  Tensor want_x = x0.clone().requires_grad_(), want_b = b0.clone().requires_grad_();
  const Tensor want = chain(want_x, want_b);
  loom::sum(want).backward();
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int rep = 0; rep < 5; ++rep) {
        Tensor x = x0.clone().requires_grad_(), b = b0.clone().requires_grad_();
        const Tensor y = loom::jit::run(g, {x, b})[0];
        loom::sum(y).backward();
        if (y.allclose(want, 0, 0) && x.grad().allclose(want_x.grad(), 0, 0) && b.grad().allclose(want_b.grad(), 0, 0))
          ++good;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(good.load() == 20);
}
