// Dispatch from many threads at once: the same ops on shared read-only
// tensors, different ops on each thread's own tensors, and the CPU plugin's
// block caches (per-thread small blocks, the process-wide large-block cache)
// under allocation churn and cross-thread frees. Each result is checked
// against one computed before the threads start or in plain C++.
#include "run_threads.hpp"

#include <catch2/catch.hpp>

#include <deque>
#include <mutex>

using conc::kThreads;
using conc::compare;

namespace {

// The ops every thread runs on the shared inputs: elementwise, reduction,
// matmul (oneDNN), softmax, a composite (gelu) and a dtype cast.
std::vector<loom::Tensor> same_ops(const loom::Tensor& a, const loom::Tensor& b) {
  return {a + b,
          a * b,
          loom::exp(a),
          loom::matmul(a, b),
          loom::sum(a, {1}),
          loom::softmax(b, 0),
          loom::gelu(a),
          (a.to(loom::DType::Float64) * 2).to(loom::DType::Float32)};
}

}  // namespace

TEST_CASE("8 threads dispatch the same ops on shared read-only tensors", "[concurrency]") {
  loom::manual_seed(1);
  const auto a = loom::randn({48, 48});
  const auto b = loom::randn({48, 48});
  const auto a_before = a.to_vector<float>();
  const auto b_before = b.to_vector<float>();
  std::vector<std::vector<float>> want;
  for (const auto& r : same_ops(a, b)) want.push_back(r.to_vector<float>());

  auto failures = conc::run_threads(kThreads, [&](int) -> std::string {
    for (int iter = 0; iter < 20; ++iter) {
      auto got = same_ops(a, b);
      for (size_t i = 0; i < got.size(); ++i)
        if (auto bad = compare("op " + std::to_string(i), got[i].to_vector<float>(), want[i]);
            !bad.empty())
          return bad;
    }
    return {};
  });
  CHECK(failures == std::vector<std::string>{});
  // Read-only means read-only: no thread wrote into the shared inputs.
  CHECK(a.to_vector<float>() == a_before);
  CHECK(b.to_vector<float>() == b_before);
}

TEST_CASE("8 threads dispatch different ops on their own tensors", "[concurrency]") {
  auto failures = conc::run_threads(kThreads, [](int t) -> std::string {
    const float base = static_cast<float>(t + 1);
    for (int iter = 0; iter < 30; ++iter) {
      // x = [base, base + 1, ..., base + 63]
      auto x = loom::arange(64, loom::DType::Float32) + base;
      std::vector<float> xs(64);
      for (int i = 0; i < 64; ++i) xs[static_cast<size_t>(i)] = base + static_cast<float>(i);
      std::vector<float> want(64);
      loom::Tensor got;
      switch (t % 4) {
        case 0:  // elementwise chain
          got = (x * x - x) / 2;
          for (size_t i = 0; i < 64; ++i) want[i] = (xs[i] * xs[i] - xs[i]) / 2;
          break;
        case 1:  // in-place on the thread's own tensor
          got = x.clone();
          got.add_(x, 3);
          for (size_t i = 0; i < 64; ++i) want[i] = 4 * xs[i];
          break;
        case 2: {  // matmul of [8, 8] by the identity times t
          got = loom::matmul(x.view({8, 8}), loom::eye(8) * base).view({64});
          for (size_t i = 0; i < 64; ++i) want[i] = xs[i] * base;
          break;
        }
        default: {  // reduction along a dim, broadcast back
          got = (x.view({8, 8}) - loom::sum(x.view({8, 8}), {1}, true) / 8).view({64});
          for (size_t r = 0; r < 8; ++r) {
            float mean = 0;
            for (size_t c = 0; c < 8; ++c) mean += xs[r * 8 + c] / 8;
            for (size_t c = 0; c < 8; ++c) want[r * 8 + c] = xs[r * 8 + c] - mean;
          }
        }
      }
      if (auto bad = compare("op kind " + std::to_string(t % 4), got.to_vector<float>(), want, 1e-4f);
          !bad.empty())
        return bad;
    }
    return {};
  });
  CHECK(failures == std::vector<std::string>{});
}

TEST_CASE("the CPU block caches survive allocation churn and cross-thread frees", "[concurrency]") {
  // Sizes on both sides of the large-block threshold (8 KiB): small blocks
  // go through each thread's own free list, large ones through the
  // process-wide cache. Every tensor is filled with a value unique to its
  // thread and iteration and checked before it dies, so two threads ever
  // holding the same block shows up as a wrong value.
  const std::vector<int64_t> sizes{1, 7, 64, 1000, 2047, 2048, 4096, 20000, 70000};
  // Half the tensors are freed by another thread (a block allocated on one
  // thread's list ends up on another's).
  std::mutex handoff_mutex;
  std::deque<loom::Tensor> handoff;

  auto failures = conc::run_threads(kThreads, [&](int t) -> std::string {
    for (int iter = 0; iter < 40; ++iter) {
      std::vector<loom::Tensor> live;
      for (size_t s = 0; s < sizes.size(); ++s) {
        const float value = static_cast<float>(t * 1000 + iter);
        live.push_back(loom::full({sizes[s]}, value));
      }
      for (size_t s = 0; s < sizes.size(); ++s) {
        const float value = static_cast<float>(t * 1000 + iter);
        auto v = live[s].to_vector<float>();
        for (size_t i = 0; i < v.size(); ++i)
          if (v[i] != value)
            return "size " + std::to_string(sizes[s]) + " element " + std::to_string(i) + " is " +
                   std::to_string(v[i]) + ", expected " + std::to_string(value);
      }
      std::lock_guard<std::mutex> lock(handoff_mutex);
      for (size_t s = 0; s < live.size(); s += 2) handoff.push_back(live[s]);
      // Free what other threads handed over (on this thread).
      while (handoff.size() > static_cast<size_t>(kThreads) * 4) handoff.pop_front();
    }
    return {};
  });
  CHECK(failures == std::vector<std::string>{});
  handoff.clear();
}
