// autocast_test.cpp — loom/autocast.h: the per-op policy in the dispatcher,
// on the CPU and on a plugin's device (sim), gradients through the casts,
// the refused op, guards restoring state, and backward with autocast off.
#include <catch2/catch.hpp>
#include <loom/autocast.h>
#include <loom/loom.h>

using loom::DType;
using loom::autocast::AutocastGuard;

TEST_CASE("autocast: lower precision, float32 and promote ops on every device type") {
  for (const char* type : {"cpu", "sim"}) {
    INFO(type);
    const loom::Device d(type);
    const auto x = loom::randn({4, 8}, DType::Float32, d), w = loom::randn({8, 3}, DType::Float32, d);
    {
      AutocastGuard on(type, DType::Float16);
      const auto y = loom::matmul(x, w);
      CHECK(y.dtype() == DType::Float16);
      CHECK(loom::softmax(y, 1).dtype() == DType::Float32);
      CHECK(loom::sum(y).dtype() == DType::Float32);
      CHECK(loom::cat({y, x.narrow(1, 0, 3)}, 0).dtype() == DType::Float32);
      CHECK(loom::add(y, y).dtype() == DType::Float16);  // no policy: as it is
      const auto d64 = loom::randn({2, 2}, DType::Float64, d);
      CHECK(loom::matmul(d64, d64).dtype() == DType::Float64);
      CHECK(loom::autocast::is_enabled(type));
    }
    CHECK_FALSE(loom::autocast::is_enabled(type));
    CHECK(loom::matmul(x, w).dtype() == DType::Float32);
  }
}

TEST_CASE("autocast: parameters get float32 gradients, backward runs with autocast off") {
  auto w = loom::randn({8, 3}).requires_grad_();
  const auto x = loom::randn({5, 8});
  AutocastGuard on("cpu");  // bfloat16 on the CPU
  const auto loss = loom::sum(loom::matmul(x, w));
  CHECK(loss.dtype() == DType::Float32);
  loss.backward();
  CHECK(w.grad().dtype() == DType::Float32);
  CHECK(w.grad().sizes()[0] == 8);
}

TEST_CASE("autocast: binary_cross_entropy is refused with the alternative named") {
  AutocastGuard on("cpu");
  CHECK_THROWS_WITH(loom::binary_cross_entropy(loom::rand({3}), loom::rand({3})),
                    Catch::Contains("unsafe to autocast") && Catch::Contains("with_logits"));
}

TEST_CASE("autocast: guards nest and restore dtype and state; bad dtypes are named") {
  {
    AutocastGuard outer("cpu", DType::Float16);
    {
      AutocastGuard inner("cpu", std::nullopt, false);
      CHECK_FALSE(loom::autocast::is_enabled("cpu"));
    }
    CHECK(loom::autocast::is_enabled("cpu"));
    CHECK(loom::autocast::dtype("cpu") == DType::Float16);
  }
  CHECK(loom::autocast::dtype("cpu") == DType::BFloat16);
  CHECK_THROWS_WITH(loom::autocast::set_dtype("cpu", DType::Int32), Catch::Contains("float16, bfloat16"));
  CHECK(loom::autocast::policy("matmul") == loom::autocast::Policy::LowerPrecision);
  CHECK(loom::autocast::policy("relu") == loom::autocast::Policy::None);
}
