// The pooling kernels' window math (kernels/pool_ops.cuh) on the host: window
// bounds against brute force over every tap, hand-computed divisors, and the
// max's index and NaN rules. Built by nvcc as a host program (no launches).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/pool_ops.cuh"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace loom::cuda::pool;

namespace {

// Every tap position of the window that lies inside [0, length), in order.
std::vector<int64_t> brute_taps(int64_t out, int64_t k, int64_t s, int64_t p, int64_t d, int64_t length) {
  std::vector<int64_t> taps;
  for (int64_t t = 0; t < k; ++t) {
    const int64_t at = out * s - p + t * d;
    if (at >= 0 && at < length) taps.push_back(at);
  }
  return taps;
}

std::vector<int64_t> window_taps(const DilatedWindow& w, int64_t d) {
  std::vector<int64_t> taps;
  for (int64_t t = w.k_begin; t < w.k_end; ++t) taps.push_back(w.position(t, d));
  return taps;
}

}  // namespace

TEST_CASE("dilated windows hold exactly the in-range taps", "[pool]") {
  for (int64_t length = 1; length <= 9; ++length)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d = 1; d <= 3; ++d)
          for (int64_t p = 0; p <= k / 2; ++p)
            // Output positions past the floor-mode count reach ceil-mode windows
            // and beyond (windows that start in the right padding or after it).
            for (int64_t out = 0; out < length + 3; ++out) {
              INFO("length " << length << " k " << k << " s " << s << " d " << d << " p " << p << " out " << out);
              CHECK(window_taps(dilated_window(out, k, s, p, d, length), d) == brute_taps(out, k, s, p, d, length));
            }
}

TEST_CASE("a max window starting in the padding begins at its first in-range tap", "[pool]") {
  // k 3, padding 2, dilation 2: taps -2, 0, 2 -> the first in range is 0 (k = 1).
  const DilatedWindow w = dilated_window(0, 3, 1, 2, 2, 5);
  CHECK(w.start == -2);
  CHECK(w.k_begin == 1);
  CHECK(w.k_end == 3);
  // Stride 2, output 3 of a length-6 input, k 3, padding 1: taps 5, 6, 7 -> only 5.
  const DilatedWindow tail = dilated_window(3, 3, 2, 1, 1, 6);
  CHECK(window_taps(tail, 1) == std::vector<int64_t>{5});
}

TEST_CASE("average windows: the padded extent stops at the padding, the sum at the input", "[pool]") {
  // length 5, k 3, s 2, p 1: windows [-1, 2), [1, 4), [3, 6) -> clipped [0, 2), [1, 4), [3, 5).
  const AvgWindow a = avg_window(0, 3, 2, 1, 5), b = avg_window(1, 3, 2, 1, 5), c = avg_window(2, 3, 2, 1, 5);
  CHECK((a.begin == 0 && a.end == 2 && a.padded_extent == 3));
  CHECK((b.begin == 1 && b.end == 4 && b.padded_extent == 3));
  CHECK((c.begin == 3 && c.end == 5 && c.padded_extent == 3));
  // Ceil mode adds a window starting at 5 (the last input row is 4, padding
  // reaches 5): [5, 6) in the padding, nothing to sum, padded extent 1.
  const AvgWindow ceil_extra = avg_window(3, 3, 2, 1, 5);
  CHECK(ceil_extra.begin >= ceil_extra.end);
  CHECK(ceil_extra.padded_extent == 1);
  // Without padding a ceil-mode window past the end is cut at the input.
  const AvgWindow no_pad = avg_window(2, 2, 2, 0, 5);
  CHECK((no_pad.begin == 4 && no_pad.end == 5 && no_pad.padded_extent == 1));
}

TEST_CASE("average divisors: override, padded area or clipped area", "[pool]") {
  const AvgWindow rows = avg_window(0, 3, 2, 1, 5), cols = avg_window(0, 2, 1, 1, 4);  // 2 of 3 rows, 1 of 2 cols
  CHECK(avg_divisor(rows, cols, true, false, 0) == 6);
  CHECK(avg_divisor(rows, cols, false, false, 0) == 2);
  CHECK(avg_divisor(rows, cols, true, true, 7) == 7);
  CHECK(avg_divisor(rows, cols, false, true, -3) == -3);
}

TEST_CASE("average results: integers truncate toward zero and wrap, floats round once", "[pool]") {
  CHECK(avg_result<int32_t>(7, 2, false) == 3);
  CHECK(avg_result<int32_t>(-7, 2, false) == -3);
  CHECK(avg_result<int64_t>(-7, -2, false) == 3);
  CHECK(avg_result<int8_t>(4 * 200, 4, false) == static_cast<int8_t>(200));  // wraps to -56
  CHECK(avg_result<uint8_t>(-4, 4, false) == 255);
  CHECK(avg_result<float>(1.0, 3, false) == static_cast<float>(1.0 / 3.0));
  CHECK(avg_result<double>(1.0, 3, false) == 1.0 / 3.0);
  CHECK(avg_result<float>(123.0, 0, true) == 0.0f);
  CHECK(__half2float(avg_result<__half>(1.0, 3, false)) == __half2float(__double2half(1.0 / 3.0)));
  CHECK(__bfloat162float(avg_result<__nv_bfloat16>(5.0, 2, false)) == 2.5f);
  CHECK(std::isnan(avg_result<double>(0.0, 0, false)));  // an empty adaptive plane: 0 / 0
  CHECK(to_acc(int8_t{-5}) == -5);
  CHECK(to_acc(uint8_t{250}) == 250);
  CHECK(to_acc(__float2half(1.5f)) == 1.5);
}

TEST_CASE("adaptive spans cover floor(i L / n) to ceil((i + 1) L / n)", "[pool]") {
  // L 5 into 3: [0, 2), [1, 4), [3, 5).
  CHECK((adaptive_span(0, 3, 5).begin == 0 && adaptive_span(0, 3, 5).end == 2));
  CHECK((adaptive_span(1, 3, 5).begin == 1 && adaptive_span(1, 3, 5).end == 4));
  CHECK((adaptive_span(2, 3, 5).begin == 3 && adaptive_span(2, 3, 5).end == 5));
  // Upsampling (L 2 into 5): every window has one or two rows, all in range.
  for (int64_t i = 0; i < 5; ++i) {
    const Span s = adaptive_span(i, 5, 2);
    CHECK(s.begin >= 0);
    CHECK(s.end <= 2);
    CHECK(s.end - s.begin >= 1);
  }
  // Global pooling: one window, the whole length.
  CHECK((adaptive_span(0, 1, 7).begin == 0 && adaptive_span(0, 1, 7).end == 7));
}

TEST_CASE("running max: first of equals, last NaN, -inf keeps the first position", "[pool]") {
  constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  MaxWithIndex<float> m{-inf, 10};
  m.step(1.0f, 10);
  m.step(3.0f, 11);
  m.step(3.0f, 12);
  CHECK(m.best == 3.0f);
  CHECK(m.at == 11);

  MaxWithIndex<float> with_nan{-inf, 0};
  with_nan.step(nan, 0);
  with_nan.step(5.0f, 1);
  with_nan.step(nan, 2);
  with_nan.step(inf, 3);
  CHECK(std::isnan(with_nan.best));
  CHECK(with_nan.at == 2);

  MaxWithIndex<double> all_neg_inf{-std::numeric_limits<double>::infinity(), 4};
  all_neg_inf.step(-std::numeric_limits<double>::infinity(), 4);
  all_neg_inf.step(-std::numeric_limits<double>::infinity(), 5);
  CHECK(all_neg_inf.at == 4);
  CHECK(std::isinf(all_neg_inf.best));

  MaxWithIndex<float> neg_zero{-inf, 0};
  neg_zero.step(-0.0f, 0);
  neg_zero.step(0.0f, 1);  // equal to -0: the first stays
  CHECK(neg_zero.at == 0);
  CHECK(std::signbit(neg_zero.best));
}
