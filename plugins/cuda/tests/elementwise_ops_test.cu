// Host tests of the CUDA elementwise functors (kernels/unary_ops.cuh,
// kernels/binary_ops.cuh). They are __host__ __device__, so the per-element
// rules — integer wrap and division, Python's floor and modulo, NaN and -0
// handling, the cancellation-free activation forms — are checked here
// against values computed independently (hand-worked edge cases, <cmath> in
// double). Built with nvcc as a host program: it never launches a kernel,
// so it runs on machines without a GPU. On the host the math functions are
// glibc's; CUDA's own (within their documented ulp bounds) run only on a GPU.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/binary_ops.cuh"
#include "kernels/unary_ops.cuh"

#include <cmath>
#include <cstdint>
#include <limits>

using namespace loom::cuda;
using namespace loom::cuda::ew;

namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

__half h(float x) { return __float2half_rn(x); }
float f(__half x) { return __half2float(x); }
__nv_bfloat16 bf(float x) { return __float2bfloat16_rn(x); }
float f(__nv_bfloat16 x) { return __bfloat162float(x); }

// `got` is `want` rounded to float within `ulps` units in the last place;
// NaN matches NaN, infinities match exactly.
bool near(float got, double want, double ulps = 4) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || want == 0) return static_cast<double>(got) == want;
  const double w = static_cast<float>(want);
  const double ulp = std::ldexp(1.0, std::ilogb(w) - 23);
  return std::fabs(got - w) <= ulps * std::max(ulp, std::ldexp(1.0, -149));
}
bool near(double got, double want, double rel = 1e-14) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || want == 0) return got == want;
  return std::fabs(got - want) <= rel * std::fabs(want);
}

// PyTorch's allclose: |got - want| <= atol + rtol |want|.
bool close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

bool is_neg_zero(double x) { return x == 0 && std::signbit(x); }
bool is_pos_zero(double x) { return x == 0 && !std::signbit(x); }

}  // namespace

// ------------------------------------------------------------- unary ---

TEST_CASE("neg, abs and square wrap integers") {
  CHECK(Neg<int8_t>{}(-128) == -128);
  CHECK(Neg<int32_t>{}(std::numeric_limits<int32_t>::min()) == std::numeric_limits<int32_t>::min());
  CHECK(Neg<uint8_t>{}(5) == 251);
  CHECK(Neg<int64_t>{}(7) == -7);
  CHECK(is_neg_zero(Neg<float>{}(0.0f)));
  CHECK(f(Neg<__half>{}(h(1.5f))) == -1.5f);

  CHECK(Abs<int8_t>{}(-128) == -128);
  CHECK(Abs<int32_t>{}(std::numeric_limits<int32_t>::min()) == std::numeric_limits<int32_t>::min());
  CHECK(Abs<int16_t>{}(-300) == 300);
  CHECK(Abs<uint8_t>{}(200) == 200);
  CHECK(is_pos_zero(Abs<double>{}(-0.0)));
  CHECK(f(Abs<__nv_bfloat16>{}(bf(-2.5f))) == 2.5f);

  CHECK(Square<int32_t>{}(65536) == 0);  // 2^32 wraps
  CHECK(Square<int8_t>{}(16) == 0);
  CHECK(Square<uint16_t>{}(65535) == 1);  // 65535^2 = 1 mod 2^16, no signed int overflow
  CHECK(Square<int64_t>{}(-3) == 9);
  CHECK(Square<float>{}(-1.5f) == 2.25f);
}

TEST_CASE("relu keeps NaN and -0, zeroes negatives") {
  CHECK(std::isnan(Relu<float>{}(kNaNf)));
  CHECK(is_neg_zero(Relu<float>{}(-0.0f)));
  CHECK(Relu<double>{}(-3.0) == 0.0);
  CHECK(Relu<int32_t>{}(-5) == 0);
  CHECK(Relu<int8_t>{}(5) == 5);
  CHECK(Relu<uint8_t>{}(200) == 200);
  CHECK(f(Relu<__half>{}(h(-2.0f))) == 0.0f);
}

TEST_CASE("sign: NaN gives 0, -0 gives +0, bool is identity") {
  CHECK(is_pos_zero(Sign<float>{}(kNaNf)));
  CHECK(is_pos_zero(Sign<float>{}(-0.0f)));
  CHECK(Sign<double>{}(-3.5) == -1.0);
  CHECK(Sign<double>{}(kInf) == 1.0);
  CHECK(Sign<int8_t>{}(-7) == -1);
  CHECK(Sign<int64_t>{}(0) == 0);
  CHECK(Sign<uint8_t>{}(9) == 1);
  CHECK(Sign<bool>{}(true) == true);
  CHECK(f(Sign<__half>{}(h(-0.25f))) == -1.0f);
}

TEST_CASE("floor, ceil, trunc and round half to even") {
  CHECK(RoundTo<Rounding::Floor, float>{}(-2.5f) == -3.0f);
  CHECK(RoundTo<Rounding::Ceil, float>{}(-2.5f) == -2.0f);
  CHECK(is_neg_zero(RoundTo<Rounding::Ceil, double>{}(-0.5)));
  CHECK(RoundTo<Rounding::Trunc, double>{}(-2.7) == -2.0);
  CHECK(std::isnan(RoundTo<Rounding::Floor, float>{}(kNaNf)));
  CHECK(f(RoundTo<Rounding::Floor, __half>{}(h(1.75f))) == 1.0f);

  const Round<float> r0{1.0f, false};
  CHECK(r0(2.5f) == 2.0f);
  CHECK(r0(3.5f) == 4.0f);
  CHECK(r0(-2.5f) == -2.0f);
  CHECK(is_neg_zero(r0(-0.4f)));
  const Round<double> r1{10.0, false};  // decimals = 1
  CHECK(r1(0.25) == std::nearbyint(0.25 * 10) / 10);
  CHECK(r1(1.26) == 1.3);
  const Round<double> rm1{10.0, true};  // decimals = -1
  CHECK(rm1(15.0) == 20.0);
  CHECK(rm1(25.0) == 20.0);
  CHECK(rm1(-35.0) == -40.0);
}

TEST_CASE("nan_to_num replaces NaN and infinities only") {
  const NanToNum<float> n{1.0f, 100.0f, -100.0f};
  CHECK(n(kNaNf) == 1.0f);
  CHECK(n(kInff) == 100.0f);
  CHECK(n(-kInff) == -100.0f);
  CHECK(n(-3.0f) == -3.0f);
  const NanToNum<__half> nh{0.0f, 65504.0f, -65504.0f};
  CHECK(f(nh(h(kInff))) == 65504.0f);
  CHECK(f(nh(h(kNaNf))) == 0.0f);
}

TEST_CASE("clamp: NaN input stays, NaN bound spreads, lo > hi gives hi") {
  const Clamp<float> c{-1.0f, 2.0f, false};
  CHECK(c(-5.0f) == -1.0f);
  CHECK(c(5.0f) == 2.0f);
  CHECK(c(0.5f) == 0.5f);
  CHECK(std::isnan(c(kNaNf)));
  const Clamp<float> swapped{3.0f, 1.0f, false};
  CHECK(swapped(0.0f) == 1.0f);
  CHECK(swapped(2.0f) == 1.0f);
  CHECK(swapped(9.0f) == 1.0f);
  const Clamp<double> nan_bound{kNaN, 1.0, true};
  CHECK(std::isnan(nan_bound(0.0)));
  const Clamp<double> only_hi{-kInf, 1.0, false};
  CHECK(only_hi(-1e300) == -1e300);
  const Clamp<int8_t> ci{-3, 100, false};
  CHECK(ci(-128) == -3);
  CHECK(ci(127) == 100);
  const Clamp<uint8_t> cu{10, 250, false};
  CHECK(cu(255) == 250);
  CHECK(cu(0) == 10);
  const Clamp<__half> ch{0.0f, 1.0f, false};
  CHECK(f(ch(h(1.5f))) == 1.0f);
}

TEST_CASE("logical_not and the fp class tests") {
  CHECK(LogicalNot<float>{}(-0.0f));
  CHECK_FALSE(LogicalNot<float>{}(kNaNf));
  CHECK(LogicalNot<int32_t>{}(0));
  CHECK_FALSE(LogicalNot<int32_t>{}(-1));
  CHECK(LogicalNot<bool>{}(false));
  CHECK(LogicalNot<__half>{}(h(0.0f)));

  CHECK(IsClass<FpClass::Nan, float>{}(kNaNf));
  CHECK_FALSE(IsClass<FpClass::Nan, float>{}(kInff));
  CHECK(IsClass<FpClass::Inf, double>{}(-kInf));
  CHECK_FALSE(IsClass<FpClass::Inf, double>{}(kNaN));
  CHECK(IsClass<FpClass::Finite, float>{}(1e38f));
  CHECK_FALSE(IsClass<FpClass::Finite, float>{}(kNaNf));
  CHECK_FALSE(IsClass<FpClass::Finite, __half>{}(h(1e6f)));  // overflows to inf in float16
  CHECK(IsClass<FpClass::Inf, __nv_bfloat16>{}(bf(-kInff)));
  CHECK(IsClass<FpClass::Finite, int64_t>{}(5));
  CHECK_FALSE(IsClass<FpClass::Nan, int32_t>{}(0));
  CHECK_FALSE(IsClass<FpClass::Inf, bool>{}(true));
}

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

// ------------------------------------------------------------ binary ---

TEST_CASE("add, sub, mul: wrap, alpha and bool") {
  CHECK(Add<int8_t>{1}(127, 1) == -128);
  CHECK(Add<int32_t>{static_cast<uint32_t>(-2)}(5, 3) == -1);
  CHECK(Add<int64_t>{1}(std::numeric_limits<int64_t>::max(), 1) == std::numeric_limits<int64_t>::min());
  CHECK(Add<uint8_t>{3}(250, 2) == 0);  // 250 + 6 = 256
  CHECK(Add<bool>{true}(false, true) == true);
  CHECK(Add<bool>{false}(false, true) == false);
  CHECK(Add<float>{0.5f}(1.0f, 3.0f) == 2.5f);
  CHECK(f(Add<__half>{2.0f}(h(1.0f), h(0.25f))) == 1.5f);
  CHECK(Sub<uint8_t>{1}(0, 1) == 255);
  CHECK(Sub<int16_t>{1}(-32768, 1) == 32767);
  CHECK(Sub<double>{2.0}(1.0, 0.25) == 0.5);
  CHECK(Mul<int64_t>{}(std::numeric_limits<int64_t>::max(), 2) == -2);
  CHECK(Mul<uint16_t>{}(65535, 65535) == 1);
  CHECK(Mul<bool>{}(true, false) == false);
  CHECK(Mul<bool>{}(true, true) == true);
  CHECK(f(Mul<__nv_bfloat16>{}(bf(3.0f), bf(-0.5f))) == -1.5f);
}

TEST_CASE("true division") {
  CHECK(Div<float>{}(1.0f, 0.0f) == kInff);
  CHECK(Div<float>{}(-1.0f, 0.0f) == -kInff);
  CHECK(std::isnan(Div<double>{}(0.0, 0.0)));
  CHECK(Div<double>{}(7.0, 2.0) == 3.5);
  CHECK(f(Div<__half>{}(h(1.0f), h(4.0f))) == 0.25f);
}

TEST_CASE("div trunc and floor on integers") {
  CHECK(DivTrunc<int32_t>{}(-7, 2) == -3);
  CHECK(DivTrunc<int32_t>{}(7, -2) == -3);
  CHECK(DivTrunc<int32_t>{}(std::numeric_limits<int32_t>::min(), -1) == std::numeric_limits<int32_t>::min());
  CHECK(DivTrunc<int8_t>{}(-128, -1) == -128);
  CHECK(DivTrunc<uint8_t>{}(255, 2) == 127);
  CHECK(DivTrunc<int64_t>{}(5, 0) == 0);  // rejected before the kernel; defined anyway

  CHECK(DivFloor<int32_t>{}(-7, 2) == -4);
  CHECK(DivFloor<int32_t>{}(7, -2) == -4);
  CHECK(DivFloor<int32_t>{}(-7, -2) == 3);
  CHECK(DivFloor<int32_t>{}(7, 2) == 3);
  CHECK(DivFloor<int16_t>{}(-6, 3) == -2);
  CHECK(DivFloor<int8_t>{}(-128, -1) == -128);
  CHECK(DivFloor<int64_t>{}(std::numeric_limits<int64_t>::min(), -1) == std::numeric_limits<int64_t>::min());
  CHECK(DivFloor<uint8_t>{}(7, 2) == 3);
  CHECK(DivFloor<int32_t>{}(1, 0) == 0);
}

TEST_CASE("div trunc and floor on floats") {
  CHECK(DivTrunc<float>{}(-7.0f, 2.0f) == -3.0f);
  CHECK(is_neg_zero(DivTrunc<double>{}(-0.5, 2.0)));
  CHECK(DivFloor<float>{}(-7.0f, 2.0f) == -4.0f);
  CHECK(DivFloor<double>{}(5.0, 0.1) == 49.0);  // Python: 5.0 // 0.1 == 49.0 (floor(5/0.1) is 50)
  CHECK(DivFloor<double>{}(1.0, 0.0) == kInf);
  CHECK(DivFloor<double>{}(-1.0, 0.0) == -kInf);
  CHECK(std::isnan(DivFloor<double>{}(0.0, 0.0)));
  CHECK(is_neg_zero(DivFloor<double>{}(-0.0, 5.0)));
  CHECK(DivFloor<double>{}(0.5, -kInf) == -1.0);  // Python: 0.5 // -inf == -1.0
  CHECK(DivFloor<double>{}(-0.5, kInf) == -1.0);
  CHECK(f(DivFloor<__half>{}(h(-3.0f), h(2.0f))) == -2.0f);
}

TEST_CASE("remainder takes the sign of the divisor") {
  CHECK(Remainder<int32_t>{}(-7, 3) == 2);
  CHECK(Remainder<int32_t>{}(7, -3) == -2);
  CHECK(Remainder<int32_t>{}(-7, -3) == -1);
  CHECK(Remainder<int32_t>{}(6, -3) == 0);
  CHECK(Remainder<int32_t>{}(std::numeric_limits<int32_t>::min(), -1) == 0);
  CHECK(Remainder<int8_t>{}(-128, 7) == 5);  // -128 = -19 * 7 + 5
  CHECK(Remainder<uint8_t>{}(200, 7) == 4);
  CHECK(Remainder<int64_t>{}(3, 0) == 0);
  CHECK(Remainder<float>{}(-7.5f, 2.0f) == 0.5f);
  CHECK(Remainder<double>{}(5.0, -3.0) == -1.0);
  CHECK(Remainder<double>{}(-6.0, 3.0) == 0.0);
  CHECK(std::isnan(Remainder<double>{}(1.0, 0.0)));
  CHECK(std::isnan(Remainder<float>{}(kNaNf, 1.0f)));
}

TEST_CASE("integer pow by squaring, negative exponents of 1 and -1") {
  CHECK(Pow<int32_t>{}(2, 10) == 1024);
  CHECK(Pow<int32_t>{}(-3, 3) == -27);
  CHECK(Pow<int64_t>{}(7, 0) == 1);
  CHECK(Pow<int64_t>{}(0, 0) == 1);
  uint32_t want = 1;
  for (int i = 0; i < 40; ++i) want *= 3u;
  CHECK(Pow<int32_t>{}(3, 40) == static_cast<int32_t>(want));
  CHECK(Pow<uint8_t>{}(2, 8) == 0);
  CHECK(Pow<uint8_t>{}(3, 5) == 243);
  CHECK(Pow<int8_t>{}(-2, 7) == -128);
  CHECK(Pow<int32_t>{}(1, -5) == 1);
  CHECK(Pow<int32_t>{}(-1, -3) == -1);
  CHECK(Pow<int32_t>{}(-1, -4) == 1);
  CHECK(Pow<double>{}(2.0, 0.5) == std::pow(2.0, 0.5));
  CHECK(std::isnan(Pow<float>{}(-8.0f, 1.0f / 3.0f)));
  CHECK(f(Pow<__half>{}(h(3.0f), h(2.0f))) == 9.0f);

  const NegativeIntegerPower bad{};
  CHECK(bad(int32_t{2}, int32_t{-1}));
  CHECK(bad(int32_t{0}, int32_t{-1}));
  CHECK_FALSE(bad(int32_t{1}, int32_t{-7}));
  CHECK_FALSE(bad(int32_t{-1}, int32_t{-2}));
  CHECK_FALSE(bad(int32_t{5}, int32_t{0}));
  CHECK_FALSE(bad(uint8_t{2}, uint8_t{255}));
  CHECK(DivisionByZero{}(int8_t{3}, int8_t{0}));
  CHECK_FALSE(DivisionByZero{}(int8_t{0}, int8_t{3}));
}

TEST_CASE("maximum and minimum propagate NaN; bool is or / and") {
  CHECK(std::isnan(Maximum<float>{}(kNaNf, 1.0f)));
  CHECK(std::isnan(Maximum<float>{}(1.0f, kNaNf)));
  CHECK(std::isnan(Minimum<double>{}(kNaN, -kInf)));
  CHECK(std::isnan(Minimum<double>{}(0.0, kNaN)));
  CHECK(std::isnan(f(Maximum<__half>{}(h(kNaNf), h(2.0f)))));
  CHECK(Maximum<float>{}(-1.0f, 2.0f) == 2.0f);
  CHECK(Minimum<float>{}(-1.0f, 2.0f) == -1.0f);
  CHECK(is_neg_zero(Maximum<float>{}(-0.0f, 0.0f)));  // ties keep the first, as the CPU
  CHECK(Maximum<int8_t>{}(-128, 127) == 127);
  CHECK(Minimum<int64_t>{}(-5, 3) == -5);
  CHECK(Maximum<uint8_t>{}(200, 100) == 200);
  CHECK(Maximum<bool>{}(false, true) == true);
  CHECK(Minimum<bool>{}(false, true) == false);
}

TEST_CASE("atan2 and lerp") {
  CHECK(near(Atan2<float>{}(1.0f, -1.0f), 3 * M_PI / 4));
  CHECK(Atan2<double>{}(0.0, -1.0) == std::atan2(0.0, -1.0));
  CHECK(is_neg_zero(Atan2<double>{}(-0.0, 1.0)));

  const Lerp<float> lerp{};
  CHECK(lerp(1.0f, 3.0f, 0.0f) == 1.0f);
  CHECK(lerp(1.0f, 3.0f, 1.0f) == 3.0f);
  CHECK(lerp(0.1f, 1e8f, 1.0f) == 1e8f);  // exact at w = 1 despite the huge range
  CHECK(lerp(1.0f, 3.0f, 0.25f) == 1.5f);
  CHECK(lerp(1.0f, 3.0f, 0.75f) == 2.5f);
  CHECK(lerp(1.0f, 3.0f, 2.0f) == 5.0f);
  CHECK(lerp(1.0f, 3.0f, -1.0f) == -1.0f);
  CHECK(f(Lerp<__half>{}(h(0.0f), h(8.0f), h(0.5f))) == 4.0f);
  CHECK(std::isnan(Lerp<double>{}(0.0, 1.0, kNaN)));
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

TEST_CASE("comparisons and logical predicates") {
  CHECK_FALSE(Predicate<bool, float, Eq>{}(kNaNf, kNaNf));
  CHECK(Predicate<bool, float, Ne>{}(kNaNf, kNaNf));
  CHECK_FALSE(Predicate<bool, double, Lt>{}(kNaN, 1.0));
  CHECK_FALSE(Predicate<bool, double, Ge>{}(kNaN, 1.0));
  CHECK(Predicate<bool, float, Eq>{}(-0.0f, 0.0f));
  CHECK(Predicate<bool, int8_t, Lt>{}(-1, 1));  // signed compare
  CHECK(Predicate<bool, uint8_t, Gt>{}(255, 1));
  CHECK(Predicate<bool, int64_t, Le>{}(std::numeric_limits<int64_t>::min(), 0));
  CHECK(Predicate<bool, __half, Lt>{}(h(0.5f), h(0.75f)));
  CHECK(Predicate<bool, bool, Gt>{}(true, false));

  CHECK(Predicate<bool, float, LogicalAnd>{}(kNaNf, 2.0f));  // NaN is not zero
  CHECK_FALSE(Predicate<bool, float, LogicalAnd>{}(-0.0f, 2.0f));
  CHECK(Predicate<bool, int32_t, LogicalOr>{}(0, -3));
  CHECK_FALSE(Predicate<bool, int32_t, LogicalXor>{}(4, -3));
  CHECK(Predicate<bool, bool, LogicalXor>{}(true, false));
  // In-place forms store 0 or 1 in self's dtype.
  CHECK(Predicate<int32_t, int32_t, LogicalAnd>{}(5, 7) == 1);
  CHECK(Predicate<double, double, LogicalOr>{}(0.0, 0.0) == 0.0);
  CHECK(f(Predicate<__half, __half, LogicalOr>{}(h(0.0f), h(-2.0f))) == 1.0f);
}

TEST_CASE("bitwise ops and where's select") {
  CHECK(BitAnd<int8_t>{}(-1, 0x0f) == 0x0f);
  CHECK(BitOr<uint8_t>{}(0xf0, 0x0f) == 0xff);
  CHECK(BitXor<int64_t>{}(-1, 0) == -1);
  CHECK(BitXor<bool>{}(true, true) == false);
  CHECK(BitOr<bool>{}(false, true) == true);
  CHECK(Select<uint32_t>{}(1, 7u, 9u) == 7u);
  CHECK(Select<uint64_t>{}(0, 7u, 9u) == 9u);
}
