// Tests of loom's shared reference semantics (loom/plugin/scalar_ops.hpp,
// opmath.hpp, welford.hpp, reduce_dims.hpp, dtype_visit.hpp,
// lru_cache.hpp) on the host, with the host's 16-bit types. Every expected
// value is independent of the code under test: hand-worked edge cases
// (integer wrap, Python's floor and modulo signs, NaN and -0 rules as
// PyTorch documents them), <cmath> in double, or exact integer arithmetic.
// The CUDA plugin's tests instantiate the same functors on __half and
// __nv_bfloat16 (plugins/cuda/tests/elementwise_ops_test.cu).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <loom/plugin/dtype_visit.hpp>
#include <loom/plugin/lru_cache.hpp>
#include <loom/plugin/reduce_dims.hpp>
#include <loom/plugin/scalar_ops.hpp>
#include <loom/plugin/welford.hpp>

#include "value_checks.hpp"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using namespace loom::plugin;
using namespace loom::plugin::ops;
using namespace loom::test;

namespace {

Half h(float x) { return Half(x); }
float f(Half x) { return static_cast<float>(x); }
BFloat16 bf(float x) { return BFloat16(x); }
float f(BFloat16 x) { return static_cast<float>(x); }

}  // namespace
// ------------------------------------------------------------- unary ---

TEST_CASE("neg, abs and square wrap integers") {
  CHECK(Neg<int8_t>{}(-128) == -128);
  CHECK(Neg<int32_t>{}(std::numeric_limits<int32_t>::min()) == std::numeric_limits<int32_t>::min());
  CHECK(Neg<uint8_t>{}(5) == 251);
  CHECK(Neg<int64_t>{}(7) == -7);
  CHECK(is_neg_zero(Neg<float>{}(0.0f)));
  CHECK(f(Neg<Half>{}(h(1.5f))) == -1.5f);

  CHECK(Abs<int8_t>{}(-128) == -128);
  CHECK(Abs<int32_t>{}(std::numeric_limits<int32_t>::min()) == std::numeric_limits<int32_t>::min());
  CHECK(Abs<int16_t>{}(-300) == 300);
  CHECK(Abs<uint8_t>{}(200) == 200);
  CHECK(is_pos_zero(Abs<double>{}(-0.0)));
  CHECK(f(Abs<BFloat16>{}(bf(-2.5f))) == 2.5f);

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
  CHECK(f(Relu<Half>{}(h(-2.0f))) == 0.0f);
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
  CHECK(f(Sign<Half>{}(h(-0.25f))) == -1.0f);
}

TEST_CASE("floor, ceil, trunc and round half to even") {
  CHECK(RoundTo<Rounding::Floor, float>{}(-2.5f) == -3.0f);
  CHECK(RoundTo<Rounding::Ceil, float>{}(-2.5f) == -2.0f);
  CHECK(is_neg_zero(RoundTo<Rounding::Ceil, double>{}(-0.5)));
  CHECK(RoundTo<Rounding::Trunc, double>{}(-2.7) == -2.0);
  CHECK(std::isnan(RoundTo<Rounding::Floor, float>{}(kNaNf)));
  CHECK(f(RoundTo<Rounding::Floor, Half>{}(h(1.75f))) == 1.0f);

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
  const NanToNum<Half> nh{0.0f, 65504.0f, -65504.0f};
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
  const Clamp<Half> ch{0.0f, 1.0f, false};
  CHECK(f(ch(h(1.5f))) == 1.0f);
}

TEST_CASE("logical_not and the fp class tests") {
  CHECK(LogicalNot<float>{}(-0.0f));
  CHECK_FALSE(LogicalNot<float>{}(kNaNf));
  CHECK(LogicalNot<int32_t>{}(0));
  CHECK_FALSE(LogicalNot<int32_t>{}(-1));
  CHECK(LogicalNot<bool>{}(false));
  CHECK(LogicalNot<Half>{}(h(0.0f)));

  CHECK(IsClass<FpClass::Nan, float>{}(kNaNf));
  CHECK_FALSE(IsClass<FpClass::Nan, float>{}(kInff));
  CHECK(IsClass<FpClass::Inf, double>{}(-kInf));
  CHECK_FALSE(IsClass<FpClass::Inf, double>{}(kNaN));
  CHECK(IsClass<FpClass::Finite, float>{}(1e38f));
  CHECK_FALSE(IsClass<FpClass::Finite, float>{}(kNaNf));
  CHECK_FALSE(IsClass<FpClass::Finite, Half>{}(h(1e6f)));  // overflows to inf in float16
  CHECK(IsClass<FpClass::Inf, BFloat16>{}(bf(-kInff)));
  CHECK(IsClass<FpClass::Finite, int64_t>{}(5));
  CHECK_FALSE(IsClass<FpClass::Nan, int32_t>{}(0));
  CHECK_FALSE(IsClass<FpClass::Inf, bool>{}(true));
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
  CHECK(f(Add<Half>{2.0f}(h(1.0f), h(0.25f))) == 1.5f);
  CHECK(Sub<uint8_t>{1}(0, 1) == 255);
  CHECK(Sub<int16_t>{1}(-32768, 1) == 32767);
  CHECK(Sub<double>{2.0}(1.0, 0.25) == 0.5);
  CHECK(Mul<int64_t>{}(std::numeric_limits<int64_t>::max(), 2) == -2);
  CHECK(Mul<uint16_t>{}(65535, 65535) == 1);
  CHECK(Mul<bool>{}(true, false) == false);
  CHECK(Mul<bool>{}(true, true) == true);
  CHECK(f(Mul<BFloat16>{}(bf(3.0f), bf(-0.5f))) == -1.5f);
}

TEST_CASE("true division") {
  CHECK(Div<float>{}(1.0f, 0.0f) == kInff);
  CHECK(Div<float>{}(-1.0f, 0.0f) == -kInff);
  CHECK(std::isnan(Div<double>{}(0.0, 0.0)));
  CHECK(Div<double>{}(7.0, 2.0) == 3.5);
  CHECK(f(Div<Half>{}(h(1.0f), h(4.0f))) == 0.25f);
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
  CHECK(f(DivFloor<Half>{}(h(-3.0f), h(2.0f))) == -2.0f);
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

TEST_CASE("fmod takes the sign of the dividend (C's fmod, torch.fmod)") {
  CHECK(Fmod<int32_t>{}(-7, 3) == -1);  // remainder gives 2
  CHECK(Fmod<int32_t>{}(7, -3) == 1);   // remainder gives -2
  CHECK(Fmod<int8_t>{}(-128, -1) == 0);  // no trap
  CHECK(Fmod<int64_t>{}(std::numeric_limits<int64_t>::min(), -1) == 0);
  CHECK(Fmod<uint8_t>{}(250, 7) == 5);
  CHECK(Fmod<int16_t>{}(5, 0) == 0);  // rejected by Invalid first; no UB if reached
  CHECK(Fmod<double>{}(-5.5, 2.0) == -1.5);
  CHECK(Fmod<float>{}(5.5f, -2.0f) == 1.5f);
  CHECK(is_neg_zero(Fmod<double>{}(-4.0, 2.0)));  // the sign of the dividend, even for zero
  CHECK(std::isnan(Fmod<double>{}(1.0, 0.0)));
  CHECK(std::isnan(Fmod<float>{}(kInff, 1.0f)));
  CHECK(Fmod<double>{}(3.0, kInf) == 3.0);
  CHECK(f(Fmod<Half>{}(h(-7.5f), h(2.0f))) == -1.5f);
  STATIC_REQUIRE(std::is_same_v<Fmod<int32_t>::Invalid, DivisionByZero>);
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
  CHECK(f(Pow<Half>{}(h(3.0f), h(2.0f))) == 9.0f);

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
  CHECK(std::isnan(f(Maximum<Half>{}(h(kNaNf), h(2.0f)))));
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
  CHECK(f(Lerp<Half>{}(h(0.0f), h(8.0f), h(0.5f))) == 4.0f);
  CHECK(std::isnan(Lerp<double>{}(0.0, 1.0, kNaN)));
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
  CHECK(Predicate<bool, Half, Lt>{}(h(0.5f), h(0.75f)));
  CHECK(Predicate<bool, bool, Gt>{}(true, false));

  CHECK(Predicate<bool, float, LogicalAnd>{}(kNaNf, 2.0f));  // NaN is not zero
  CHECK_FALSE(Predicate<bool, float, LogicalAnd>{}(-0.0f, 2.0f));
  CHECK(Predicate<bool, int32_t, LogicalOr>{}(0, -3));
  CHECK_FALSE(Predicate<bool, int32_t, LogicalXor>{}(4, -3));
  CHECK(Predicate<bool, bool, LogicalXor>{}(true, false));
  // In-place forms store 0 or 1 in self's dtype.
  CHECK(Predicate<int32_t, int32_t, LogicalAnd>{}(5, 7) == 1);
  CHECK(Predicate<double, double, LogicalOr>{}(0.0, 0.0) == 0.0);
  CHECK(f(Predicate<Half, Half, LogicalOr>{}(h(0.0f), h(-2.0f))) == 1.0f);
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

// ---------------------------------------------------- compute types ---

TEST_CASE("the compute-type rule") {
  STATIC_REQUIRE(std::is_same_v<opmath_t<Half>, float>);
  STATIC_REQUIRE(std::is_same_v<opmath_t<BFloat16>, float>);
  STATIC_REQUIRE(std::is_same_v<opmath_t<int8_t>, int8_t>);  // signed stays signed
  STATIC_REQUIRE(std::is_same_v<opmath_t<double>, double>);
  STATIC_REQUIRE(std::is_same_v<arith_t<int8_t>, uint32_t>);
  STATIC_REQUIRE(std::is_same_v<arith_t<uint16_t>, uint32_t>);
  STATIC_REQUIRE(std::is_same_v<arith_t<int64_t>, uint64_t>);
  STATIC_REQUIRE(std::is_same_v<arith_t<Half>, float>);
  STATIC_REQUIRE(std::is_same_v<arith_t<bool>, bool>);
  STATIC_REQUIRE(is_floating_v<BFloat16>);
  STATIC_REQUIRE_FALSE(is_floating_v<int32_t>);
  STATIC_REQUIRE(is_integer_v<uint8_t>);
  STATIC_REQUIRE_FALSE(is_integer_v<bool>);
  CHECK(from_arith<int8_t>(to_arith(int8_t{-1}) * 200u) == int8_t{56});  // -200 mod 256
  CHECK(f(from_bool<Half>(true)) == 1.0f);
  CHECK(select(true, 1.5, -2.0) == 1.5);
  CHECK(select(false, 1.5f, -2.0f) == -2.0f);
  CHECK(std::isnan(select(true, kNaNf, 0.0f)));
}

// ---------------------------------------------------------- welford ---

TEST_CASE("welford: one pass and pairwise merges give the float64 two-pass moments") {
  std::vector<double> x;
  for (int i = 0; i < 1000; ++i) x.push_back(1e6 + std::sin(i) * 3.0);  // a large mean: naive Σx² cancels
  double mean = 0;
  for (double v : x) mean += v;
  mean /= x.size();
  double m2 = 0;
  for (double v : x) m2 += (v - mean) * (v - mean);

  Moments all{0, 0, 0};
  for (double v : x) welford_add(all, v);
  CHECK(all.n == 1000);
  CHECK(all.mean == Approx(mean).epsilon(1e-13));
  CHECK(all.m2 == Approx(m2).epsilon(1e-9));

  // Split unevenly, merged in another order: the same statistics.
  Moments a{0, 0, 0}, b{0, 0, 0}, c{0, 0, 0}, empty{0, 0, 0};
  for (size_t i = 0; i < 7; ++i) welford_add(a, x[i]);
  for (size_t i = 7; i < 600; ++i) welford_add(b, x[i]);
  for (size_t i = 600; i < x.size(); ++i) welford_add(c, x[i]);
  welford_combine(c, empty);
  welford_combine(empty, b);  // into an empty partial: a copy
  CHECK(empty.n == b.n);
  welford_combine(c, a);
  welford_combine(c, b);
  CHECK(c.n == 1000);
  CHECK(c.mean == Approx(mean).epsilon(1e-13));
  CHECK(c.m2 == Approx(m2).epsilon(1e-9));

  // torch.var's divisor max(0, N - correction).
  CHECK(welford_variance(c, 1000, 1) == Approx(m2 / 999).epsilon(1e-9));
  CHECK(welford_variance(c, 1000, 0) == Approx(m2 / 1000).epsilon(1e-9));
  Moments one{0, 0, 0};
  welford_add(one, 3.0);
  CHECK(std::isnan(welford_variance(one, 1, 1)));  // 0 / 0, as PyTorch
  CHECK(std::isnan(welford_variance(one, 1, 5)));  // divisor clamps at 0
}

// ------------------------------------------------------ reduce dims ---

TEST_CASE("read_reduced_dims: none, empty list, int, list and range errors") {
  bool r[3];
  LoomValue none{};
  none.kind = LOOM_VALUE_NONE;
  read_reduced_dims(none, 3, "dev", "sum", r);
  CHECK((r[0] && r[1] && r[2]));
  LoomValue l{};
  l.kind = LOOM_VALUE_INT_LIST;
  l.u.ints = {nullptr, 0};
  read_reduced_dims(l, 3, "dev", "sum", r);
  CHECK((r[0] && r[1] && r[2]));
  const int64_t list[] = {2, 0};
  l.u.ints = {list, 2};
  read_reduced_dims(l, 3, "dev", "sum", r);
  CHECK((r[0] && !r[1] && r[2]));
  LoomValue one{};
  one.kind = LOOM_VALUE_INT;
  one.u.i = 1;
  read_reduced_dims(one, 3, "dev", "sum", r);
  CHECK((!r[0] && r[1] && !r[2]));
  one.u.i = 0;
  read_reduced_dims(one, 0, "dev", "sum", r);  // a 0-d input: dim 0 reduces nothing
  const int64_t bad[] = {3};
  l.u.ints = {bad, 1};
  CHECK_THROWS_WITH(read_reduced_dims(l, 3, "dev", "sum", r), "dev sum: dim 3 out of range for 3 dims");
  LoomValue f{};
  f.kind = LOOM_VALUE_FLOAT;
  CHECK_THROWS_WITH(read_reduced_dims(f, 3, "dev", "amax", r),
                    Catch::StartsWith("dev amax: dim must be an int list"));
}

TEST_CASE("expect_keepdim names the dim and both sizes") {
  const int64_t in_shape[] = {4, 5}, ok_shape[] = {4, 1}, bad_shape[] = {4, 5};
  LoomTensorDesc in{}, out{};
  in.ndim = out.ndim = 2;
  in.dtype = out.dtype = LOOM_DTYPE_FLOAT32;
  in.shape = in_shape;
  out.shape = ok_shape;
  const bool reduced[] = {false, true};
  expect_keepdim(in, reduced, out, LOOM_DTYPE_FLOAT32, "dev", "sum");
  out.shape = bad_shape;
  CHECK_THROWS_WITH(expect_keepdim(in, reduced, out, LOOM_DTYPE_FLOAT32, "dev", "sum"),
                    "dev sum: output dim 1 has size 5, expected 1 (keepdim form)");
  out.shape = ok_shape;
  CHECK_THROWS_WITH(expect_keepdim(in, reduced, out, LOOM_DTYPE_INT64, "dev", "sum"),
                    Catch::Contains("dtype int64, got 2 and float32"));
}

// ---------------------------------------------------- dtype visitor ---

template <DTypes Set>
std::string visited(int32_t dtype) {
  std::string got;
  visit_dtype<Set>(dtype, "dev", "op", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half>) got = "Half";
    else if constexpr (std::is_same_v<T, BFloat16>) got = "BFloat16";
    else if constexpr (std::is_same_v<T, bool>) got = "bool";
    else got = (is_floating_v<T> ? "f" : std::is_signed_v<T> ? "i" : "u") + std::to_string(8 * sizeof(T));
  });
  return got;
}

TEST_CASE("visit_dtype: each class visits exactly its mask's dtypes") {
  const char* want[LOOM_DTYPE_COUNT] = {};
  want[LOOM_DTYPE_BOOL] = "bool";
  want[LOOM_DTYPE_UINT8] = "u8";
  want[LOOM_DTYPE_INT8] = "i8";
  want[LOOM_DTYPE_INT16] = "i16";
  want[LOOM_DTYPE_INT32] = "i32";
  want[LOOM_DTYPE_INT64] = "i64";
  want[LOOM_DTYPE_FLOAT16] = "Half";
  want[LOOM_DTYPE_BFLOAT16] = "BFloat16";
  want[LOOM_DTYPE_FLOAT32] = "f32";
  want[LOOM_DTYPE_FLOAT64] = "f64";
  for (int32_t d = 0; d < LOOM_DTYPE_COUNT; ++d) {
    CAPTURE(d);
    REQUIRE(want[d] != nullptr);
    const auto check = [&](auto set_tag, uint64_t mask) {
      constexpr DTypes Set = decltype(set_tag)::value;
      if (mask & dtype_bit(d)) CHECK(visited<Set>(d) == want[d]);
      else CHECK_THROWS_WITH(visited<Set>(d), std::string("dev op: dtype ") + dtype_name(d) + " is not supported");
    };
    check(std::integral_constant<DTypes, DTypes::All>{}, dtype_mask(DTypes::All));
    check(std::integral_constant<DTypes, DTypes::NoBool>{}, dtype_mask(DTypes::NoBool));
    check(std::integral_constant<DTypes, DTypes::Floating>{}, dtype_mask(DTypes::Floating));
    check(std::integral_constant<DTypes, DTypes::Integral>{}, dtype_mask(DTypes::Integral));
  }
  CHECK(__builtin_popcountll(kAllMask) == LOOM_DTYPE_COUNT);
  CHECK(__builtin_popcountll(kFloatingMask) == 4);
  CHECK(__builtin_popcountll(kIntegralMask) == 5);
  CHECK(kIntegralOrBoolMask == (kIntegralMask | dtype_bit(LOOM_DTYPE_BOOL)));
  CHECK_THROWS_WITH(visited<DTypes::All>(99), "dev op: unknown dtype code 99");
}

// -------------------------------------------------------- LRU cache ---

TEST_CASE("LruCache: hits, least-recently-used eviction, a failing build caches nothing") {
  LruCache<int> cache(2);
  int builds = 0;
  const auto make = [&](int v) {
    return [&builds, v] {
      ++builds;
      return v;
    };
  };
  CHECK(*cache.get({1}, make(10)) == 10);
  CHECK(*cache.get({2}, make(20)) == 20);
  CHECK(*cache.get({1}, make(-1)) == 10);  // hit: {1} is now the most recent
  CHECK(builds == 2);
  auto held = cache.get({2}, make(-1));
  CHECK(*cache.get({1}, make(-1)) == 10);
  CHECK(*cache.get({3}, make(30)) == 30);  // evicts {2}, the least recently used
  CHECK(cache.size() == 2);
  CHECK(*held == 20);  // an evicted entry stays valid while held
  CHECK(*cache.get({2}, make(21)) == 21);  // rebuilt
  CHECK_THROWS(cache.get({4}, [] () -> int { throw std::runtime_error("no plan"); }));
  CHECK(cache.size() == 2);

  // Many threads on a few keys: every result is the key's value.
  LruCache<int> shared(4);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const int k = (i * 7 + t) % 6;
        if (*shared.get({k}, [k] { return k * 3; }) != k * 3) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
  CHECK(shared.size() == 4);
}

TEST_CASE("gelu's gradient: Phi(x) + x phi(x), and the tanh form's slope") {
  // The normal distribution's tabulated values: Phi(1) = 0.8413447460685429,
  // phi(1) = 0.24197072451914337.
  const GeluBackward<double, false> erf_form;
  CHECK(erf_form(1.0, 0.0) == Approx(0.5).epsilon(1e-15));
  CHECK(erf_form(1.0, 1.0) == Approx(0.8413447460685429 + 0.24197072451914337).epsilon(1e-14));
  CHECK(erf_form(2.0, -1.0) == Approx(2 * (0.15865525393145707 - 0.24197072451914337)).epsilon(1e-13));
  CHECK(erf_form(1.0, -40.0) == 0.0);  // both terms underflow, no NaN
  CHECK(std::isnan(erf_form(1.0, -std::numeric_limits<double>::infinity())));  // -inf * 0, as the formula
  // The tanh form against central differences of its own forward,
  // x/2 (1 + tanh(k (x + c x^3))).
  const GeluBackward<double, true> tanh_form;
  auto gelu_tanh = [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); };
  for (double x : {-3.0, -1.0, -0.25, 0.0, 0.5, 2.0}) {
    const double h = 1e-5, fd = (gelu_tanh(x + h) - gelu_tanh(x - h)) / (2 * h);
    CHECK(tanh_form(1.0, x) == Approx(fd).margin(1e-9));
  }
  CHECK(tanh_form(3.0, 1e20) == 3.0);  // t = 1 exactly: the second term is 0, not 0 * inf
  CHECK(GeluBackward<float, false>{}(1.0f, 1.0f) == Approx(1.0833155f).epsilon(1e-6));
}

TEST_CASE("the activations' gradients: central differences of each forward, and their edges") {
  // Each slope against (f(x + h) - f(x - h)) / 2h of the activation itself.
  auto slope_of = [](auto f, double x) {
    const double h = 1e-6;
    return (f(x + h) - f(x - h)) / (2 * h);
  };
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  auto softplus = [](double beta, double x) { return std::log1p(std::exp(beta * x)) / beta; };
  auto elu = [](double a, double s, double is, double x) { return x > 0 ? s * x : s * a * std::expm1(x * is); };
  for (double x : {-4.0, -1.5, -0.25, 0.3, 1.0, 3.5}) {
    CAPTURE(x);
    CHECK(SiluBackward<double>{}(1.0, x) == Approx(slope_of([&](double v) { return v * sigmoid(v); }, x)).margin(1e-8));
    CHECK(SigmoidBackward<double>{}(2.0, sigmoid(x)) == Approx(2 * slope_of(sigmoid, x)).margin(1e-8));
    CHECK(TanhBackward<double>{}(1.0, std::tanh(x)) ==
          Approx(slope_of([](double v) { return std::tanh(v); }, x)).margin(1e-8));
    const SoftplusBackward<double> sp{2.0, 20.0};
    CHECK(sp(1.0, x) == Approx(slope_of([&](double v) { return softplus(2.0, v); }, x)).margin(1e-8));
    const EluBackward<double> e{0.5, 2.0, 1.5};
    CHECK(e(1.0, x) == Approx(slope_of([&](double v) { return elu(0.5, 2.0, 1.5, v); }, x)).margin(1e-7));
    const LeakyReluBackward<double> lr{0.2};
    CHECK(lr(3.0, x) == (x > 0 ? 3.0 : 3.0 * 0.2));
  }
  // relu's gradient from its result: 0 at and below the threshold; NaN
  // passes it, as PyTorch's threshold_backward.
  const ThresholdBackward<float> relu{0.0f};
  CHECK(relu(5.0f, 2.0f) == 5.0f);
  CHECK(relu(5.0f, 0.0f) == 0.0f);
  CHECK(relu(5.0f, std::numeric_limits<float>::quiet_NaN()) == 5.0f);
  CHECK(ThresholdBackward<double>{0.5}(1.0, 0.5) == 0.0);
  // Above softplus's threshold the slope is exactly 1; silu's stays finite
  // where e^-x overflows.
  CHECK(SoftplusBackward<double>{1.0, 20.0}(3.0, 25.0) == 3.0);
  CHECK(SiluBackward<float>{}(1.0f, -200.0f) == 0.0f);
  CHECK(std::isnan(EluBackward<double>{1.0, 1.0, 1.0}(1.0, std::nan(""))));
}
