// fill_ and copy_: every dtype pair against an independent reference cast
// (correct rounding into 16-bit floats found by searching neighbours),
// special values, and strided / broadcast / overlapping layouts.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <limits>

using namespace loom_test;

namespace {

// Correctly rounded |v| into a 16-bit format, by checking the neighbours of
// an approximate candidate. Infinity counts as the next power of two, which
// makes IEEE overflow (round to inf at max + ulp/2, ties to even) fall out.
long double round16(long double v, bool half) {
  if (std::isnan(v)) return v;
  const bool neg = std::signbit(v);
  const long double a = std::fabs(v);
  const uint16_t inf_bits = half ? 0x7c00 : 0x7f80;
  const long double inf_value = half ? 65536.0L : std::ldexp(1.0L, 128);
  auto value = [&](int b) -> long double {
    if (b >= inf_bits) return inf_value;
    return half ? static_cast<float>(loom::plugin::Half::from_bits(static_cast<uint16_t>(b)))
                : static_cast<float>(loom::plugin::BFloat16::from_bits(static_cast<uint16_t>(b)));
  };
  int approx;
  if (a >= inf_value) {
    approx = inf_bits;
  } else {
    const float f = static_cast<float>(a);
    approx = half ? loom::plugin::Half(f).bits : loom::plugin::BFloat16(f).bits;
  }
  int best = -1;
  long double best_d = 0;
  for (int b = approx - 2; b <= approx + 2; ++b) {
    if (b < 0 || b > inf_bits) continue;
    const long double d = std::fabs(value(b) - a);
    if (best < 0 || d < best_d || (d == best_d && (b % 2 == 0))) {
      best = b;
      best_d = d;
    }
  }
  const long double r = best == inf_bits ? std::numeric_limits<long double>::infinity() : value(best);
  return neg ? -r : r;
}

template <class T>
long double int_ref(long double v, bool from_float) {
  if (from_float) {
    if (std::isnan(v)) return 0;
    const long double t = std::trunc(v);
    if (t <= static_cast<long double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (t >= static_cast<long double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return t;
  }
  return static_cast<T>(static_cast<int64_t>(v));  // modular
}

// The exact value a cast of exact value v from `from` to `to` must give.
long double ref_cast(long double v, int32_t from, int32_t to) {
  const bool ff = is_floating(from);
  switch (to) {
    case LOOM_DTYPE_BOOL: return (v != 0 || std::isnan(v)) ? 1 : 0;
    case LOOM_DTYPE_UINT8: return int_ref<uint8_t>(v, ff);
    case LOOM_DTYPE_INT8: return int_ref<int8_t>(v, ff);
    case LOOM_DTYPE_INT16: return int_ref<int16_t>(v, ff);
    case LOOM_DTYPE_INT32: return int_ref<int32_t>(v, ff);
    case LOOM_DTYPE_INT64: return int_ref<int64_t>(v, ff);
    case LOOM_DTYPE_FLOAT16: return round16(v, true);
    case LOOM_DTYPE_BFLOAT16: return round16(v, false);
    case LOOM_DTYPE_FLOAT32: return static_cast<float>(v);
    default: return static_cast<double>(v);
  }
}

bool same_value(long double got, long double want, int32_t to) {
  if (std::isnan(want)) return std::isnan(got);
  if (got != want) return false;
  return !is_floating(to) || std::signbit(got) == std::signbit(want);
}

std::vector<long double> float_candidates() {
  const long double inf = std::numeric_limits<long double>::infinity();
  return {0.0L, -0.0L, 0.5L, -0.5L, 1, -1, 1.5L, -1.5L, 2.5L, -2.5L, 127.9L, 128, -128.5L, -129,
          255.5L, 256, 300, -300, 32767.5L, 32768, -32769, 65504, 65519, 65520, 70000, 1e-8L,
          -1e-8L, 3e-5L, 1e10L, -1e10L, 2147483647.0L, 2147483648.0L, -2147483649.0L, 9.3e18L,
          -9.3e18L, 9223372036854775807.0L, 1e30L, 1e300L, -1e300L, inf, -inf,
          std::numeric_limits<long double>::quiet_NaN(), 16777217, 1.00048828125L,
          1.000732421875L, 1.00390625L, 1.005859375L, 3.4e38L, 1e39L, 5.9604644775390625e-8L,
          2.98e-8L};
}

std::vector<long double> int_candidates() {
  return {0, 1, -1, 2, 100, 127, 128, 255, 256, -128, -129, 1000, 32767, 32768, -32769, 65504,
          65520, 70000, 2147483647.0L, -2147483648.0L, 4294967296.0L, 16777217, 33554435,
          16777216 + 65536 + 1, 9007199254740993.0L,
          static_cast<long double>(std::numeric_limits<int64_t>::max()),
          static_cast<long double>(std::numeric_limits<int64_t>::min())};
}

Tensor source_with_specials(int32_t dt) {
  std::vector<long double> vals;
  if (dt == LOOM_DTYPE_BOOL) vals = {0, 1, 1, 0};
  else if (is_floating(dt)) vals = float_candidates();
  else vals = int_candidates();
  Tensor t = make(dt, {static_cast<int64_t>(vals.size())});
  for (size_t i = 0; i < vals.size(); ++i) set(t, {static_cast<int64_t>(i)}, vals[i]);
  return t;
}

void check_copy(const Tensor& dst, const Tensor& src) {
  for_each_index(dst.shape, [&](const std::vector<int64_t>& idx) {
    const long double v = get(src, idx);
    const long double want = ref_cast(v, src.dtype, dst.dtype);
    const long double got = get(dst, idx);
    if (!same_value(got, want, dst.dtype)) {
      FAIL_CHECK(loom::plugin::dtype_name(src.dtype)
                 << " -> " << loom::plugin::dtype_name(dst.dtype) << ": " << static_cast<double>(v)
                 << " gave " << static_cast<double>(got) << ", want " << static_cast<double>(want));
    }
  });
}

}  // namespace

TEST_CASE("copy_ casts every dtype pair with the documented rules", "[copy_]") {
  for (int32_t from : all_dtypes()) {
    const Tensor src = source_with_specials(from);
    for (int32_t to : all_dtypes()) {
      Tensor dst = make(to, src.shape);
      run("copy_", {dst.desc(), src.desc()}, {dst.desc()});
      check_copy(dst, src);
    }
  }
}

TEST_CASE("copy_ known answers", "[copy_]") {
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  Tensor src = make(LOOM_DTYPE_FLOAT32, {6});
  const long double vals[] = {nan, 1e10L, -1e10L, -3.9L, 3.9L, 300.0L};
  for (int i = 0; i < 6; ++i) set(src, {i}, vals[i]);
  Tensor i32 = make(LOOM_DTYPE_INT32, {6}), u8 = make(LOOM_DTYPE_UINT8, {6}),
         b = make(LOOM_DTYPE_BOOL, {6});
  run("copy_", {i32.desc(), src.desc()}, {i32.desc()});
  run("copy_", {u8.desc(), src.desc()}, {u8.desc()});
  run("copy_", {b.desc(), src.desc()}, {b.desc()});
  const long double want_i32[] = {0, 2147483647.0L, -2147483648.0L, -3, 3, 300};
  const long double want_u8[] = {0, 255, 0, 0, 3, 255};
  for (int i = 0; i < 6; ++i) {
    CHECK(get(i32, {i}) == want_i32[i]);
    CHECK(get(u8, {i}) == want_u8[i]);
    CHECK(get(b, {i}) == 1);  // NaN and every nonzero are true
  }
  // Round to nearest even into float16: 1 + 2^-11 is a tie -> 1.
  Tensor h = make(LOOM_DTYPE_FLOAT16, {1});
  Tensor d = make(LOOM_DTYPE_FLOAT64, {1});
  set(d, {0}, 1.00048828125L);
  run("copy_", {h.desc(), d.desc()}, {h.desc()});
  CHECK(get(h, {0}) == 1.0L);
}

TEST_CASE("copy_ with strided, broadcast and offset layouts", "[copy_]") {
  for (int32_t from : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT16, LOOM_DTYPE_FLOAT16}) {
    for (int32_t to : {LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT8, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32}) {
      INFO(loom::plugin::dtype_name(from) << " -> " << loom::plugin::dtype_name(to));
      // Transposed source into a contiguous destination.
      Tensor s = make(from, {5, 7});
      fill_pattern(s, 1);
      const Tensor st = transpose(s, 0, 1);
      Tensor d = make(to, {7, 5});
      run("copy_", {d.desc(), st.desc()}, {d.desc()});
      check_copy(d, st);
      // Broadcast row (stride 0) into a sliced destination with an offset.
      Tensor row = make(from, {1, 6});
      fill_pattern(row, 2);
      const Tensor rb = expand(row, {4, 6});
      Tensor big = make(to, {6, 9});
      fill_pattern(big, 3);
      const Tensor before = make(to, big.shape);
      run("copy_", {before.desc(), big.desc()}, {before.desc()});
      const Tensor window = slice(slice(big, 0, 1, 4), 1, 2, 6);
      run("copy_", {window.desc(), rb.desc()}, {window.desc()});
      check_copy(window, rb);
      for_each_index(big.shape, [&](const std::vector<int64_t>& idx) {
        const bool inside = idx[0] >= 1 && idx[0] < 5 && idx[1] >= 2 && idx[1] < 8;
        if (!inside) CHECK(get(big, idx) == get(before, idx));
      });
    }
  }
}

TEST_CASE("copy_ large tensors take the parallel paths", "[copy_]") {
  Tensor s = make(LOOM_DTYPE_FLOAT32, {300, 500});
  fill_pattern(s, 4);
  Tensor d = make(LOOM_DTYPE_FLOAT16, {300, 500});
  run("copy_", {d.desc(), s.desc()}, {d.desc()});
  check_copy(d, s);
  const Tensor st = transpose(s, 0, 1);
  Tensor d2 = make(LOOM_DTYPE_INT32, {500, 300});
  run("copy_", {d2.desc(), st.desc()}, {d2.desc()});
  check_copy(d2, st);
  Tensor same = make(LOOM_DTYPE_FLOAT32, {300, 500});
  run("copy_", {same.desc(), s.desc()}, {same.desc()});
  check_copy(same, s);
}

TEST_CASE("copy_ from an overlapping view reads before it writes", "[copy_]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT64}) {
    Tensor x = make(dt, {4, 4});
    fill_pattern(x, 5);
    Tensor orig = make(dt, {4, 4});
    run("copy_", {orig.desc(), x.desc()}, {orig.desc()});
    const Tensor xt = transpose(x, 0, 1);
    run("copy_", {x.desc(), xt.desc()}, {x.desc()});  // x = x.T
    for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
      CHECK(get(x, idx) == get(orig, {idx[1], idx[0]}));
    });
    // Shifted overlap within one row: y[0:7] = y[1:8].
    Tensor y = make(dt, {8});
    fill_pattern(y, 6);
    Tensor yo = make(dt, {8});
    run("copy_", {yo.desc(), y.desc()}, {yo.desc()});
    const Tensor lo = slice(y, 0, 0, 7), hi = slice(y, 0, 1, 7);
    run("copy_", {lo.desc(), hi.desc()}, {lo.desc()});
    for (int64_t i = 0; i < 7; ++i) CHECK(get(y, {i}) == get(yo, {i + 1}));
    // Exact alias: a no-op.
    run("copy_", {x.desc(), x.desc()}, {x.desc()});
  }
}

TEST_CASE("fill_ writes the converted scalar everywhere", "[fill_]") {
  for (int32_t dt : all_dtypes()) {
    INFO(loom::plugin::dtype_name(dt));
    Tensor t = make(dt, {3, 5});
    run("fill_", {t.desc()}, {t.desc()}, {int_value(3)});
    for_each_index(t.shape, [&](const std::vector<int64_t>& i) {
      CHECK(get(t, i) == (dt == LOOM_DTYPE_BOOL ? 1 : 3));
    });
    run("fill_", {t.desc()}, {t.desc()}, {float_value(-2.5)});
    const long double want = dt == LOOM_DTYPE_BOOL ? 1 : dt == LOOM_DTYPE_UINT8 ? 0 : is_floating(dt) ? -2.5L : -2;
    for_each_index(t.shape, [&](const std::vector<int64_t>& i) { CHECK(get(t, i) == want); });
    run("fill_", {t.desc()}, {t.desc()}, {bool_value(false)});
    for_each_index(t.shape, [&](const std::vector<int64_t>& i) { CHECK(get(t, i) == 0); });
    // A strided view (every other column) leaves the rest alone.
    const Tensor cols = slice(t, 1, 0, 3, 2);
    run("fill_", {cols.desc()}, {cols.desc()}, {int_value(1)});
    for_each_index(t.shape, [&](const std::vector<int64_t>& i) {
      CHECK(get(t, i) == (i[1] % 2 == 0 ? 1 : 0));
    });
  }
  Tensor big = make(LOOM_DTYPE_FLOAT32, {200, 400});
  const Tensor bt = transpose(big, 0, 1);
  run("fill_", {bt.desc()}, {bt.desc()}, {float_value(0.25)});
  for_each_index(big.shape, [&](const std::vector<int64_t>& i) {
    if (get(big, i) != 0.25L) FAIL_CHECK("big fill");
  });
  Tensor empty = make(LOOM_DTYPE_FLOAT32, {0, 3});
  run("fill_", {empty.desc()}, {empty.desc()}, {float_value(1)});
}
