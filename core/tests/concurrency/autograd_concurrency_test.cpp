// Concurrent backward passes: 8 threads each build their own graph from
// their own leaves and run backward at the same time; every gradient is
// checked against its closed form.
#include "run_threads.hpp"

#include <catch2/catch.hpp>

using conc::kThreads;
using conc::compare;

TEST_CASE("8 threads run backward on separate graphs at once", "[concurrency]") {
  const std::vector<float> xs{0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};
  auto failures = conc::run_threads(kThreads, [&](int t) -> std::string {
    for (int iter = 0; iter < 20; ++iter) {
      // loss = sum(tanh(w * x)) + sum(w * w) + sum(W @ v), per thread
      std::vector<float> ws(xs.size());
      for (size_t i = 0; i < ws.size(); ++i)
        ws[i] = 0.1f * static_cast<float>(t + 1) - 0.05f * static_cast<float>(i + iter % 3);
      auto w = loom::from_vector<float>(ws, {static_cast<int64_t>(ws.size())}).requires_grad_();
      auto x = loom::from_vector<float>(xs, {static_cast<int64_t>(xs.size())});
      auto W = loom::full({3, 2}, static_cast<float>(t)).requires_grad_();
      auto v = loom::from_vector<float>({1.0f, -2.0f}, {2});

      auto loss = loom::tanh(w * x).sum() + (w * w).sum() + loom::matmul(W, v).sum();
      loss.backward();

      std::vector<float> want_w(ws.size());
      for (size_t i = 0; i < ws.size(); ++i) {
        const float th = std::tanh(ws[i] * xs[i]);
        want_w[i] = xs[i] * (1 - th * th) + 2 * ws[i];
      }
      // d/dW sum(W @ v) = 1 (row) outer v
      const std::vector<float> want_W{1.0f, -2.0f, 1.0f, -2.0f, 1.0f, -2.0f};
      if (!w.grad().defined() || !W.grad().defined()) return "a leaf got no gradient";
      if (auto bad = compare("dloss/dw", w.grad().to_vector<float>(), want_w, 1e-5f); !bad.empty())
        return bad;
      if (auto bad = compare("dloss/dW", W.grad().to_vector<float>(), want_W); !bad.empty())
        return bad;
    }
    return {};
  });
  CHECK(failures == std::vector<std::string>{});
}

TEST_CASE("threads switching grad mode do not disturb each other", "[concurrency]") {
  // Grad mode is per thread (as in PyTorch): a thread under no_grad records
  // nothing while its neighbours record graphs.
  auto failures = conc::run_threads(kThreads, [](int t) -> std::string {
    for (int iter = 0; iter < 50; ++iter) {
      auto w = loom::ones({4}).requires_grad_();
      if (t % 2 == 0) {
        loom::autograd::NoGradGuard no_grad;
        auto y = w * 2;
        if (y.requires_grad()) return "no_grad result requires grad";
      } else {
        auto y = (w * 3).sum();
        if (!y.requires_grad()) return "grad-mode result does not require grad";
        y.backward();
        if (auto bad = compare("grad", w.grad().to_vector<float>(), {3, 3, 3, 3}); !bad.empty())
          return bad;
      }
    }
    return {};
  });
  CHECK(failures == std::vector<std::string>{});
}
