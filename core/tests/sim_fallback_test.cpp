// The reference backend "sim" (testing/sim_device): native add/mul, and
// everything else through the CPU fallback, counted and governed by policy.
#include <catch2/catch.hpp>
#include <loom/loom.h>

using loom::DType;

namespace {
struct PolicyGuard {
  loom::FallbackPolicy saved = loom::fallback_policy();
  ~PolicyGuard() { loom::set_fallback_policy(saved); }
};
}  // namespace

TEST_CASE("sim's own kernels run natively, without the fallback") {
  loom::Device sim("sim");
  auto a = loom::from_vector<float>({1, 2, 3}, {3}).to(sim);
  const auto before = loom::fallback_count("add", "sim");
  auto b = a + a;
  CHECK(b.device() == sim);
  CHECK(b.cpu().to_vector<float>() == std::vector<float>{2, 4, 6});
  CHECK((a * a).cpu().to_vector<float>() == std::vector<float>{1, 4, 9});
  CHECK(loom::fallback_count("add", "sim") == before);
  // Broadcasting inside sim's kernel.
  auto m = loom::ones({2, 3}).to(sim);
  CHECK((m + a).cpu().to_vector<float>() == std::vector<float>{2, 3, 4, 2, 3, 4});
}

TEST_CASE("matmul on sim works through the CPU fallback and is counted") {
  PolicyGuard guard;
  loom::set_fallback_policy(loom::FallbackPolicy::Allow);
  loom::Device sim("sim");
  auto a = loom::arange(6, DType::Float32).view({2, 3});
  auto b = loom::arange(6, DType::Float32).view({3, 2});
  const auto before = loom::fallback_count("matmul", "sim");
  auto c = a.to(sim).matmul(b.to(sim));
  CHECK(c.device() == sim);
  CHECK(c.cpu().to_vector<float>() == a.matmul(b).to_vector<float>());
  CHECK(loom::fallback_count("matmul", "sim") == before + 1);

  // Non-contiguous and broadcast arguments cross the fallback intact.
  auto ct = a.to(sim).t().matmul(a.to(sim));
  CHECK(ct.cpu().to_vector<float>() == a.t().matmul(a).to_vector<float>());
  // In-place ops through the fallback write back into sim memory.
  auto z = loom::zeros({3}).to(sim);
  z.fill_(4);
  CHECK(z.cpu().to_vector<float>() == std::vector<float>{4, 4, 4});
  auto view = loom::zeros({2, 3}).to(sim).select(1, 1);
  view.fill_(1);
  CHECK(view.cpu().to_vector<float>() == std::vector<float>{1, 1});
  // Ops with other dtypes than sim's kernels take (int64) fall back too.
  auto i = loom::arange(3).to(sim);
  CHECK((i + i).cpu().to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4});
  CHECK(loom::fallback_count("add", "sim") >= 1);
  // exp, relu, sum: all via the CPU.
  CHECK(a.to(sim).relu().sum().item<float>() == 15.0f);
}

TEST_CASE("LOOM_FALLBACK=error refuses the fallback naming the op and the device") {
  PolicyGuard guard;
  loom::set_fallback_policy(loom::FallbackPolicy::Error);
  loom::Device sim("sim");
  auto a = loom::ones({2, 2}).to(sim);
  CHECK_THROWS_WITH(a.matmul(a), Catch::Contains("op 'matmul' has no kernel on device 'sim'") &&
                                     Catch::Contains("LOOM_FALLBACK=error"));
  CHECK_NOTHROW(a + a);  // native kernels are unaffected
}
