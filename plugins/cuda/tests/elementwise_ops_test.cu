// Host tests of the CUDA plugin's own elementwise functors: the float-rule
// math and activations (kernels/unary_ops.cuh) and the fused optimizer
// steps (kernels/binary_ops.cuh), against values computed independently
// (hand-worked edge cases, <cmath> in double). The shared functors
// (loom/plugin/scalar_ops.hpp) are tested in plugin_api/tests; here they are
// only instantiated on the GPU's own 16-bit types, __half and
// __nv_bfloat16, through the plugin's StorageTraits. Built with nvcc as a host program: it never launches a kernel,
// so it runs on machines without a GPU. On the host the math functions are
// glibc's; CUDA's own (within their documented ulp bounds) run only on a GPU.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/binary_ops.cuh"
#include "kernels/unary_ops.cuh"
#include "value_checks.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

using namespace loom::cuda;
using namespace loom::cuda::ew;
using namespace loom::test;

namespace {

__half h(float x) { return __float2half_rn(x); }
float f(__half x) { return __half2float(x); }
__nv_bfloat16 bf(float x) { return __float2bfloat16_rn(x); }
float f(__nv_bfloat16 x) { return __bfloat162float(x); }

}  // namespace

TEST_CASE("float math matches <cmath> in double") {
  const float xs[] = {-20.0f, -3.25f, -1.0f, -0.1f, -1e-6f, 0.0f, 1e-6f, 0.3f, 1.0f, 2.5f, 10.0f, 80.0f};
  for (float x : xs) {
    const double d = x;
    INFO("x = " << x);
    CHECK(near(MathOp<ExpFn, float>{}(x), std::exp(d)));
    CHECK(near(MathOp<Exp2Fn, float>{}(x), std::exp2(d)));
    CHECK(near(MathOp<Expm1Fn, float>{}(x), std::expm1(d)));
    CHECK(near(MathOp<SinFn, float>{}(x), std::sin(d)));
    CHECK(near(MathOp<CosFn, float>{}(x), std::cos(d)));
    CHECK(near(MathOp<TanFn, float>{}(x), std::tan(d)));
    CHECK(near(MathOp<TanhFn, float>{}(x), std::tanh(d)));
    CHECK(near(MathOp<ErfFn, float>{}(x), std::erf(d)));
    CHECK(near(MathOp<SigmoidFn, float>{}(x), 1.0 / (1.0 + std::exp(-d))));
    CHECK(near(MathOp<SiluFn, float>{}(x), d / (1.0 + std::exp(-d))));
    // Float rounds the erfc argument, which costs relative accuracy in the far
    // negative tail (unary_ops.cuh); absolute accuracy stays float's.
    CHECK(close(MathOp<GeluErfFn, float>{}(x), 0.5 * d * std::erfc(-d / std::sqrt(2.0)), 1e-6, 1e-7));
    const double y = std::sqrt(2.0 / M_PI) * (d + 0.044715 * d * d * d);
    CHECK(near(MathOp<GeluTanhFn, float>{}(x), 0.5 * d * (1.0 + std::tanh(y)), 8));
    CHECK(near(MathOp<ReciprocalFn, float>{}(x), 1.0 / d));
    CHECK(near(MathOp<ExpFn, double>{}(d), std::exp(d)));
    CHECK(near(MathOp<GeluErfFn, double>{}(d), 0.5 * d * std::erfc(-d / std::sqrt(2.0)), 1e-13));
    if (x > -1) CHECK(near(MathOp<Log1pFn, float>{}(x), std::log1p(d)));
    if (x > 0) {
      CHECK(near(MathOp<LogFn, float>{}(x), std::log(d)));
      CHECK(near(MathOp<Log2Fn, float>{}(x), std::log2(d)));
      CHECK(near(MathOp<SqrtFn, float>{}(x), std::sqrt(d), 1));
      CHECK(near(MathOp<RsqrtFn, float>{}(x), 1.0 / std::sqrt(d)));
    }
  }
  CHECK(near(f(MathOp<ExpFn, __half>{}(h(1.0f))), f(h(static_cast<float>(std::exp(1.0)))), 0));
  CHECK(near(f(MathOp<TanhFn, __nv_bfloat16>{}(bf(0.5f))), f(bf(static_cast<float>(std::tanh(0.5)))), 0));
}

TEST_CASE("float math special values") {
  CHECK(MathOp<LogFn, float>{}(0.0f) == -kInff);
  CHECK(std::isnan(MathOp<LogFn, float>{}(-1.0f)));
  CHECK(MathOp<RsqrtFn, float>{}(-0.0f) == -kInff);
  CHECK(MathOp<RsqrtFn, double>{}(0.0) == kInf);
  CHECK(MathOp<RsqrtFn, float>{}(kInff) == 0.0f);
  CHECK(std::isnan(MathOp<RsqrtFn, float>{}(-1.0f)));
  CHECK(std::isnan(MathOp<SqrtFn, float>{}(-1.0f)));
  CHECK(is_neg_zero(MathOp<SinFn, float>{}(-0.0f)));
  CHECK(std::isnan(MathOp<SinFn, float>{}(kInff)));
  CHECK(MathOp<SigmoidFn, float>{}(-kInff) == 0.0f);
  CHECK(MathOp<SigmoidFn, float>{}(kInff) == 1.0f);
  CHECK(MathOp<SigmoidFn, float>{}(-200.0f) >= 0.0f);  // e^200 overflows: 0, never NaN
  CHECK(std::isnan(MathOp<SiluFn, float>{}(-kInff)));
  CHECK(MathOp<SiluFn, float>{}(kInff) == kInff);
  CHECK(std::isnan(MathOp<GeluErfFn, float>{}(-kInff)));
  CHECK(MathOp<GeluErfFn, float>{}(kInff) == kInff);
  CHECK(std::isnan(MathOp<GeluTanhFn, double>{}(-kInf)));
  CHECK(MathOp<GeluTanhFn, double>{}(kInf) == kInf);
  // No cancellation for negative x: the erfc form keeps the tiny tail.
  const double g = MathOp<GeluErfFn, double>{}(-10.0);
  CHECK(g < 0);
  CHECK(near(g, -5.0 * std::erfc(10.0 / std::sqrt(2.0)), 1e-12));
  CHECK(is_neg_zero(MathOp<GeluTanhFn, float>{}(-1e20f)));
  CHECK(is_neg_zero(MathOp<Expm1Fn, float>{}(-0.0f)));
  CHECK(MathOp<TanhFn, float>{}(-kInff) == -1.0f);
  CHECK(std::isnan(MathOp<ExpFn, float>{}(kNaNf)));
}

TEST_CASE("softplus, elu and leaky_relu") {
  const MathOp<SoftplusFn, float> sp{{1.0f, 20.0f}};
  CHECK(sp(30.0f) == 30.0f);  // past the threshold: x itself
  CHECK(near(sp(0.0f), std::log(2.0)));
  CHECK(near(sp(-100.0f), std::log1p(std::exp(-100.0))));
  CHECK(near(sp(5.0f), std::log1p(std::exp(5.0))));
  const MathOp<SoftplusFn, double> sp2{{2.0, 1e6}};  // a huge threshold cannot overflow exp
  CHECK(near(sp2(1000.0), 1000.0 + std::log1p(std::exp(-2000.0)) / 2));
  CHECK(near(sp2(-0.5), std::log1p(std::exp(-1.0)) / 2));
  CHECK(std::isnan(sp(kNaNf)));

  const MathOp<EluFn, float> elu{{1.5f, 2.0f, 0.5f}};
  CHECK(elu(3.0f) == 6.0f);
  CHECK(near(elu(-2.0f), 2.0 * 1.5 * std::expm1(-1.0)));
  CHECK(std::isnan(elu(kNaNf)));
  CHECK(near(elu(-kInff), -3.0));

  const MathOp<LeakyReluFn, float> lr{{0.01f}};
  CHECK(lr(-2.0f) == -2.0f * 0.01f);
  CHECK(lr(3.0f) == 3.0f);
  CHECK(std::isnan(lr(kNaNf)));
  CHECK(f(MathOp<LeakyReluFn, __half>{{0.5f}}(h(-4.0f))) == -2.0f);
}

TEST_CASE("_adam_update_ rounds as the CPU kernel: in the compute type, one rounding per step") {
  // The CPU kernel's expression, in float: x - step * m / (sqrt(v) + eps).
  const float x = 0.3f, m = -0.02f, v = 4e-4f, step = 1e-3f, eps = 1e-8f;
  CHECK(AdamUpdate<float>{step, eps}(x, m, v) == x - step * m / (std::sqrt(v) + eps));
  CHECK(AdamUpdate<double>{1e-3, 1e-8}(0.3, -0.02, 4e-4) == 0.3 - 1e-3 * -0.02 / (std::sqrt(4e-4) + 1e-8));
  // float16 widens to float, computes, rounds once at the end.
  const float hx = f(h(0.3f)), hm = f(h(-0.02f)), hv = f(h(4e-4f));
  CHECK(f(AdamUpdate<__half>{0.1, 0.1}(h(0.3f), h(-0.02f), h(4e-4f))) ==
        f(h(hx - 0.1f * hm / (std::sqrt(hv) + 0.1f))));
  CHECK(std::isnan(AdamUpdate<float>{step, eps}(x, m, kNaNf)));
}

TEST_CASE("_adam_step_ follows the composite's steps: decay, two lerps, the update") {
  float p = 0.5f, m = 0.1f, v = 0.04f;
  const float g = -0.3f;
  AdamStep<float>{0.99, 0.9, 0.999, 1e-3, 1e-8}(p, g, m, v);
  const float x = 0.5f * 0.99f;
  const float m1 = Lerp<float>{}(0.1f, g, static_cast<float>(1 - 0.9));
  const float v1 = Lerp<float>{}(0.04f, g * g, static_cast<float>(1 - 0.999));
  CHECK(m == m1);
  CHECK(v == v1);
  CHECK(p == x - 1e-3f * m1 / (std::sqrt(v1) + 1e-8f));
  // decay 1 leaves p exactly as it was before the update; weights past 0.5 take lerp's other branch.
  double dp = 2.0, dm = 1.0, dv = 1.0;
  AdamStep<double>{1.0, 0.3, 0.2, 0.5, 0.1}(dp, 3.0, dm, dv);
  CHECK(dm == 3.0 - (3.0 - 1.0) * (1 - 0.7));
  CHECK(dv == 9.0 - (9.0 - 1.0) * (1 - 0.8));
  CHECK(dp == 2.0 - 0.5 * dm / (std::sqrt(dv) + 0.1));
  // float16 state rounds once per tensor.
  __half hp = h(0.5f), hm = h(0.1f), hv = h(0.04f);
  AdamStep<__half>{1.0, 0.9, 0.999, 1e-3, 1e-8}(hp, h(-0.3f), hm, hv);
  const float fm = Lerp<float>{}(f(h(0.1f)), f(h(-0.3f)), static_cast<float>(1 - 0.9));
  CHECK(f(hm) == f(h(fm)));
}
// ------------------------------- shared functors on the GPU's 16-bit types ---

TEST_CASE("shared functors compute __half and __nv_bfloat16 in float") {
  CHECK(f(Add<__half>{2.0f}(h(1.0f), h(0.25f))) == 1.5f);
  CHECK(f(Mul<__nv_bfloat16>{}(bf(3.0f), bf(-0.5f))) == -1.5f);
  CHECK(f(Remainder<__half>{}(h(-3.0f), h(2.0f))) == 1.0f);  // sign of the divisor
  CHECK(f(DivFloor<__nv_bfloat16>{}(bf(-7.0f), bf(2.0f))) == -4.0f);
  CHECK(std::isnan(f(Maximum<__half>{}(h(kNaNf), h(1.0f)))));
  CHECK(f(Lerp<__half>{}(h(1.0f), h(3.0f), h(1.0f))) == 3.0f);  // w == 1 gives end exactly
  CHECK(Predicate<bool, __half, Lt>{}(h(0.5f), h(0.75f)));
  CHECK(f(Predicate<__half, __half, LogicalOr>{}(h(0.0f), h(-2.0f))) == 1.0f);
  CHECK(f(Neg<__nv_bfloat16>{}(bf(2.5f))) == -2.5f);
  CHECK(f(Clamp<__half>{0.0f, 1.0f, false}(h(1.5f))) == 1.0f);
  CHECK_FALSE(IsClass<FpClass::Finite, __half>{}(h(1e6f)));  // overflows to inf in float16
  CHECK(f(RoundTo<Rounding::Floor, __half>{}(h(1.75f))) == 1.0f);
}
