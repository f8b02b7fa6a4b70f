// Host tests of the CUDA reductions' combine functors
// (kernels/reduce_ops.cuh, reduce_stats_ops.cuh), built by nvcc as a host
// program: no kernel runs. Each functor folds values the way a kernel
// does (elements into lanes, lanes and splits combined) and is checked
// against values computed here independently (std:: math, hand-worked
// edge cases: NaN, ±inf, -0, integer wrap, empty slices) that are the CPU
// plugin's semantics (docs/kernel_conventions.md "Reductions").
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/reduce_ops.cuh"
#include "kernels/reduce_stats_ops.cuh"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace loom::cuda;
using namespace loom::cuda::reduce;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Folds xs as a kernel would with `lanes` lanes (lane l takes indices
// l, l + lanes, ...), the lanes combined in order; returns the accumulator.
template <class Op, class T>
typename Op::Acc fold(const Op& op, const std::vector<T>& xs, int lanes = 1) {
  typename Op::Acc total = op.init();
  for (int l = 0; l < lanes; ++l) {
    typename Op::Acc a = op.init();
    for (size_t i = static_cast<size_t>(l); i < xs.size(); i += static_cast<size_t>(lanes))
      op.add(a, xs[i], static_cast<int64_t>(i));
    op.combine(total, a);
  }
  return total;
}

template <class T>
T sum_of(const std::vector<T>& xs, int lanes = 1) {
  T out{};
  const SumOp<T, false> op{&out};
  op.store(fold(op, xs, lanes), static_cast<int64_t>(xs.size()), 0, 0);
  return out;
}

template <class T>
T prod_of(const std::vector<T>& xs) {
  T out{};
  const ProdOp<T> op{&out};
  op.store(fold(op, xs), static_cast<int64_t>(xs.size()), 0, 0);
  return out;
}

template <class T, bool IsMax>
T extreme_of(const std::vector<T>& xs, int lanes = 1) {
  T out{};
  const ExtremeOp<T, IsMax> op{&out};
  op.store(fold(op, xs, lanes), static_cast<int64_t>(xs.size()), 0, 0);
  return out;
}

template <class T, bool IsMax>
int64_t arg_of(const std::vector<T>& xs, int lanes = 1) {
  int64_t idx = -7;
  const ArgOp<T, IsMax> op{nullptr, &idx};
  op.store(fold(op, xs, lanes), static_cast<int64_t>(xs.size()), 0, 0);
  return idx;
}

template <class T>
double as_double(T x) {
  return static_cast<double>(widen(x));
}

}  // namespace

TEST_CASE("sum: float accumulation, lanes, mean of nothing is NaN") {
  std::vector<float> xs;
  for (int i = 1; i <= 1000; ++i) xs.push_back(static_cast<float>(i) * 0.5f);
  CHECK(sum_of(xs) == Approx(250250.0));
  CHECK(sum_of(xs, 32) == Approx(250250.0));
  float m = 0;
  const SumOp<float, true> mean{&m};
  mean.store(fold(mean, xs, 8), 1000, 0, 0);
  CHECK(m == Approx(250.25));
  mean.store(mean.init(), 0, 0, 0);
  CHECK(std::isnan(m));
  CHECK(std::isnan(sum_of(std::vector<float>{1.0f, static_cast<float>(kNaN), 2.0f})));
  CHECK(sum_of(std::vector<double>{1e308, 1e308}) == kInf);
}

TEST_CASE("sum: integers wrap like int64 and narrow by wrapping; bool is any") {
  CHECK(sum_of(std::vector<int8_t>{100, 100}) == static_cast<int8_t>(-56));
  CHECK(sum_of(std::vector<int8_t>{-100, -100, 50}) == static_cast<int8_t>(106));
  CHECK(sum_of(std::vector<uint8_t>{255, 1}) == 0);
  CHECK(sum_of(std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 1}) == std::numeric_limits<int64_t>::min());
  CHECK(sum_of(std::vector<int32_t>{-5, 3}) == -2);
  CHECK(sum_of(std::vector<bool>{false, true, false}) == true);
  CHECK(sum_of(std::vector<bool>{}) == false);
}

TEST_CASE("sum: 16-bit floats accumulate in float and round once") {
  std::vector<__half> xs(4096, __float2half(1.0f));
  CHECK(as_double(sum_of(xs, 4)) == 4096.0);  // a half accumulator would stop at 2048
  std::vector<__nv_bfloat16> bs(512, __float2bfloat16(1.0f));
  CHECK(as_double(sum_of(bs)) == 512.0);  // bfloat16 steps are 2 above 256; 512 is exact
  __half hm{};
  const SumOp<__half, true> mean{&hm};
  mean.store(fold(mean, std::vector<__half>{__float2half(1.0f), __float2half(2.0f)}), 2, 0, 0);
  CHECK(as_double(hm) == 1.5);
}

TEST_CASE("prod: double for floats, wrapping integers, all for bool") {
  CHECK(prod_of(std::vector<float>{1e30f, 1e30f, 1e-30f}) == Approx(1e30f));  // float would overflow
  CHECK(prod_of(std::vector<int32_t>{65536, 65536}) == 0);
  CHECK(prod_of(std::vector<int32_t>{65536, 65535}) == static_cast<int32_t>(int64_t{65536} * 65535));
  CHECK(prod_of(std::vector<int8_t>{-2, 100}) == static_cast<int8_t>(56));  // -200 wraps to 56
  CHECK(prod_of(std::vector<int64_t>{}) == 1);
  CHECK(prod_of(std::vector<bool>{true, true}) == true);
  CHECK(prod_of(std::vector<bool>{true, false}) == false);
  CHECK(std::isnan(prod_of(std::vector<double>{0.0, kInf})));
}

TEST_CASE("amax/amin: NaN propagates from any lane, integers and bool") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(extreme_of<float, true>({1, 5, -2}) == 5);
  CHECK(extreme_of<float, false>({1, 5, -2}) == -2);
  for (int lanes : {1, 2, 3}) {
    CHECK(std::isnan(extreme_of<float, true>({1, nan, 7, 3}, lanes)));
    CHECK(std::isnan(extreme_of<float, false>({1, 7, 3, nan}, lanes)));
  }
  CHECK(extreme_of<double, true>({-kInf, -kInf}) == -kInf);
  CHECK(extreme_of<int64_t, false>({std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) ==
        std::numeric_limits<int64_t>::min());
  CHECK(extreme_of<uint8_t, true>({0, 255, 3}) == 255);
  CHECK(extreme_of<bool, true>({false, true}) == true);   // or
  CHECK(extreme_of<bool, false>({true, false}) == false); // and
  CHECK(extreme_of<bool, false>({true, true}) == true);
  CHECK(as_double(extreme_of<__half, true>({__float2half(-3.0f), __float2half(0.5f)})) == 0.5);
}

TEST_CASE("argmax/argmin: first occurrence, first NaN, whatever the lanes") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int lanes : {1, 2, 3, 32}) {
    INFO("lanes " << lanes);
    CHECK(arg_of<float, true>({1, 9, 3, 9, 9}, lanes) == 1);
    CHECK(arg_of<float, false>({4, 0, 0, 7, 0}, lanes) == 1);
    CHECK(arg_of<float, true>({1, nan, 9, nan}, lanes) == 1);
    CHECK(arg_of<float, false>({1, 2, nan, 0, nan}, lanes) == 2);
    CHECK(arg_of<int32_t, true>({-5, -5, -5}, lanes) == 0);
    CHECK(arg_of<bool, true>({false, false, true, true}, lanes) == 2);
    CHECK(arg_of<bool, false>({true, false, false}, lanes) == 1);
  }
  // max.dim: values and indices at their own offsets.
  float value = 0;
  int64_t index = -1;
  const ArgOp<float, true> op{&value, &index};
  op.store(fold(op, std::vector<float>{2, 8, 8}, 2), 3, 0, 0);
  CHECK(value == 8);
  CHECK(index == 1);
}

TEST_CASE("all/any: raw bits, -0 is zero, NaN is true, empty is the identity") {
  auto bits_of = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  bool out = false;
  const LogicalOp<uint32_t, false> any_f{0x7fffffffu, &out};
  any_f.store(fold(any_f, std::vector<uint32_t>{bits_of(0.0f), bits_of(-0.0f)}), 2, 0, 0);
  CHECK(out == false);
  any_f.store(fold(any_f, std::vector<uint32_t>{bits_of(-0.0f), bits_of(std::nanf(""))}), 2, 0, 0);
  CHECK(out == true);
  const LogicalOp<uint32_t, true> all_i{0xffffffffu, &out};
  all_i.store(fold(all_i, std::vector<uint32_t>{1u, 0x80000000u}), 2, 0, 0);  // INT_MIN is non-zero
  CHECK(out == true);
  all_i.store(fold(all_i, std::vector<uint32_t>{1u, 0u}, 2), 2, 0, 0);
  CHECK(out == false);
  all_i.store(all_i.init(), 0, 0, 0);
  CHECK(out == true);
  const LogicalOp<uint16_t, true> all_h{0x7fff, &out};
  all_h.store(fold(all_h, std::vector<uint16_t>{0x3c00, 0x8000}), 2, 0, 0);  // 1.0, -0.0 in half
  CHECK(out == false);
  const LogicalOp<uint64_t, false> any_d{~uint64_t{0} >> 1, &out};
  any_d.store(any_d.init(), 0, 0, 0);
  CHECK(out == false);
}

TEST_CASE("var/std: correction, partials combined, empty and NaN") {
  double out = 0;
  const std::vector<double> xs{1, 2, 3, 4};
  const MomentsOp<double> var1{1.0, false, &out};
  var1.store(fold(var1, xs), 4, 0, 0);
  CHECK(out == Approx(5.0 / 3.0));
  const MomentsOp<double> var0{0.0, false, &out};
  var0.store(fold(var0, xs, 3), 4, 0, 0);
  CHECK(out == Approx(1.25));
  const MomentsOp<double> std1{1.0, true, &out};
  std1.store(fold(std1, xs, 2), 4, 0, 0);
  CHECK(out == Approx(std::sqrt(5.0 / 3.0)));
  // Large offset, small spread: Welford/Chan keep the digits.
  std::vector<float> big;
  for (int i = 0; i < 1000; ++i) big.push_back(1e4f + static_cast<float>(i % 10));
  float f = 0;
  const MomentsOp<float> varf{0.0, false, &f};
  varf.store(fold(varf, big, 32), 1000, 0, 0);
  CHECK(f == Approx(8.25));
  var1.store(var1.init(), 0, 0, 0);
  CHECK(std::isnan(out));  // empty: 0 / max(0, -1) = 0/0
  var1.store(fold(var1, std::vector<double>{3.0}), 1, 0, 0);
  CHECK(std::isnan(out));  // one element, correction 1: 0/0
  var1.store(fold(var1, std::vector<double>{1.0, kNaN, 2.0}, 2), 3, 0, 0);
  CHECK(std::isnan(out));
}

TEST_CASE("norm: every p, NaN, empty slices") {
  auto norm = [](double p, const std::vector<float>& xs, int lanes = 1) {
    float out = -1;
    const NormOp<float> op{norm_kind(p), p, &out};
    op.store(fold(op, xs, lanes), static_cast<int64_t>(xs.size()), 0, 0);
    return static_cast<double>(out);
  };
  const std::vector<float> xs{3, -4, 0};
  CHECK(norm(2, xs) == Approx(5));
  CHECK(norm(1, xs, 2) == Approx(7));
  CHECK(norm(0, xs) == 2);
  CHECK(norm(kInf, xs) == 4);
  CHECK(norm(-kInf, xs, 3) == 0);
  CHECK(norm(3, xs) == Approx(std::cbrt(91.0)));
  CHECK(norm(0.5, xs) == Approx(std::pow(std::sqrt(3.0) + 2.0, 2.0)));
  CHECK(norm(2, {1e30f, 1e30f}) == Approx(std::sqrt(2.0) * 1e30));  // squares in double
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(norm(0, {nan, 0}) == 1);  // NaN counts as non-zero
  CHECK(std::isnan(norm(kInf, {1, nan, 2}, 2)));
  CHECK(std::isnan(norm(-kInf, {1, nan, 2}, 2)));
  CHECK(std::isnan(norm(2, {1, nan})));
  CHECK(norm(2, {}) == 0);
  CHECK(norm(kInf, {}) == 0);
  CHECK(norm(-kInf, {}) == kInf);
}

TEST_CASE("logsumexp: max-shifted, special values, partials") {
  auto lse = [](const std::vector<double>& xs, int lanes = 1) {
    double out = 0;
    const LseOp<double> op{&out};
    op.store(fold(op, xs, lanes), static_cast<int64_t>(xs.size()), 0, 0);
    return out;
  };
  CHECK(lse({0, 0}) == Approx(std::log(2.0)));
  CHECK(lse({1000, 1000}, 2) == Approx(1000 + std::log(2.0)));  // no overflow
  CHECK(lse({-1000, -1000}) == Approx(-1000 + std::log(2.0)));  // no underflow
  CHECK(lse({1, 2, 3}, 2) == Approx(std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0))));
  CHECK(lse({-kInf, 0}) == Approx(0));
  CHECK(lse({-kInf, -kInf}) == -kInf);
  CHECK(lse({}) == -kInf);
  CHECK(lse({1, kInf, 2}, 2) == kInf);
  CHECK(std::isnan(lse({kNaN, kInf})));
  CHECK(std::isnan(lse({kInf, 1, kNaN}, 3)));
  CHECK(std::isnan(lse({1, kNaN, 2})));
  float f = 0;
  const LseOp<float> opf{&f};
  opf.store(fold(opf, std::vector<float>{88.0f, 88.0f}), 2, 0, 0);  // exp(88) * 2 overflows float
  CHECK(f == Approx(88.0 + std::log(2.0)));
}

TEST_CASE("scan ops: wrap, bool any/all so far, float in double") {
  const ScanOp<int8_t, false> cs;
  auto a = cs.init();
  a = cs.combine(a, cs.value(100));
  a = cs.combine(a, cs.value(100));
  CHECK(cs.result(a) == static_cast<int8_t>(-56));
  const ScanOp<bool, false> any_so_far;
  const ScanOp<bool, true> all_so_far;
  auto s = any_so_far.combine(any_so_far.init(), any_so_far.value(false));
  CHECK(any_so_far.result(s) == false);
  s = any_so_far.combine(s, any_so_far.value(true));
  s = any_so_far.combine(s, any_so_far.value(false));
  CHECK(any_so_far.result(s) == true);
  auto p = all_so_far.combine(all_so_far.init(), all_so_far.value(true));
  CHECK(all_so_far.result(p) == true);
  p = all_so_far.combine(p, all_so_far.value(false));
  p = all_so_far.combine(p, all_so_far.value(true));
  CHECK(all_so_far.result(p) == false);
  const ScanOp<float, false> fs;
  double acc = fs.init();
  for (int i = 0; i < 20000000; i += 1000) acc = fs.combine(acc, fs.value(0.1f));
  CHECK(fs.result(acc) == static_cast<float>(20000 * static_cast<double>(0.1f)));
}

TEST_CASE("from_acc: rounding to the 16-bit floats and wrapping to integers") {
  CHECK(as_double(from_acc<__half>(65519.0)) == 65504.0);   // rounds down to the largest half
  CHECK(std::isinf(as_double(from_acc<__half>(65520.0))));  // rounds up to inf
  CHECK(as_double(from_acc<__nv_bfloat16>(1.0 + 1.0 / 256)) == 1.0);  // a tie: to even
  CHECK(from_acc<int16_t>(uint64_t{70000}) == static_cast<int16_t>(70000 - 65536));
  CHECK(from_acc<bool>(uint64_t{2}) == true);
}
