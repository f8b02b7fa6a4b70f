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

// ---- whole tensors: the kernels' per-output bodies against brute force ----

namespace {

// PyTorch's pooled length, floor or ceil mode (a ceil-mode window must
// start inside the input or its left padding).
int64_t pooled_size(int64_t L, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = L + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= L + p) --out;
  return out;
}

struct Case {
  int64_t N, C, H, W, k[2], s[2], p[2], d[2];
  bool ceil_mode;
};

// x channels-last, y with its plane dims swapped (both strided), indices
// contiguous: the bodies must follow the strides they are given.
PoolGeometry geometry_of(const Case& t) {
  PoolGeometry g{};
  g.N = t.N, g.C = t.C, g.H = t.H, g.W = t.W;
  for (int i = 0; i < 2; ++i) {
    g.kernel[i] = t.k[i], g.stride[i] = t.s[i], g.padding[i] = t.p[i], g.dilation[i] = t.d[i];
  }
  g.OH = pooled_size(t.H, t.k[0], t.s[0], t.p[0], t.d[0], t.ceil_mode);
  g.OW = pooled_size(t.W, t.k[1], t.s[1], t.p[1], t.d[1], t.ceil_mode);
  const int64_t xs[4] = {t.H * t.W * t.C, 1, t.W * t.C, t.C};
  const int64_t ys[4] = {t.C * g.OH * g.OW, g.OH * g.OW, 1, g.OH};
  const int64_t is[4] = {t.C * g.OH * g.OW, g.OH * g.OW, g.OW, 1};
  for (int i = 0; i < 4; ++i) g.xs[i] = xs[i], g.ys[i] = ys[i], g.is[i] = is[i];
  return g;
}

std::vector<Case> cases() {
  return {
      {2, 3, 7, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
      {2, 3, 7, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
      {1, 2, 9, 8, {3, 2}, {2, 3}, {1, 0}, {2, 3}, true},
      {1, 2, 5, 5, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
      {1, 1, 1, 10, {1, 4}, {1, 3}, {0, 2}, {1, 1}, true},  // conv1d-like height 1
      {2, 2, 4, 4, {4, 4}, {1, 1}, {2, 2}, {1, 1}, false},
  };
}

// Deterministic values with repeats, NaN and -inf among them.
double value_at(int64_t i, bool specials) {
  const uint64_t h = static_cast<uint64_t>(i) * 2654435761u % 1000;
  if (specials && h % 37 == 0) return std::numeric_limits<double>::quiet_NaN();
  if (specials && h % 23 == 0) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(static_cast<int64_t>(h % 19) - 9);
}

template <class T>
std::vector<T> input_of(const PoolGeometry& g, bool specials) {
  std::vector<T> x(static_cast<size_t>(g.N * g.C * g.H * g.W));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(value_at(static_cast<int64_t>(i), specials));
  return x;
}

template <class T>
T at(const std::vector<T>& x, const PoolGeometry& g, int64_t n, int64_t c, int64_t h, int64_t w) {
  return x[static_cast<size_t>(n * g.xs[0] + c * g.xs[1] + h * g.xs[2] + w * g.xs[3])];
}

}  // namespace

TEST_CASE("max pooling over whole tensors matches brute force, indices included", "[pool]") {
  for (const Case& t : cases()) {
    const PoolGeometry g = geometry_of(t);
    const std::vector<double> x = input_of<double>(g, true);
    const int64_t total = g.N * g.C * g.OH * g.OW;
    std::vector<double> y(static_cast<size_t>(total));
    std::vector<int64_t> ind(static_cast<size_t>(total));
    for (int64_t o = 0; o < total; ++o) max_pool_output<double, true>(g, o, x.data(), y.data(), ind.data());
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t c = 0; c < g.C; ++c)
        for (int64_t i = 0; i < g.OH; ++i)
          for (int64_t j = 0; j < g.OW; ++j) {
            double best = -std::numeric_limits<double>::infinity();
            int64_t best_at = -1;
            for (int64_t kh = 0; kh < t.k[0]; ++kh)
              for (int64_t kw = 0; kw < t.k[1]; ++kw) {
                const int64_t ih = i * t.s[0] - t.p[0] + kh * t.d[0], iw = j * t.s[1] - t.p[1] + kw * t.d[1];
                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                const double v = at(x, g, n, c, ih, iw);
                if (best_at < 0) best_at = ih * g.W + iw;  // the first in-range position, kept by -inf
                if (v > best || std::isnan(v)) {
                  best = v;
                  best_at = ih * g.W + iw;
                }
              }
            INFO("case " << g.H << "x" << g.W << " k " << t.k[0] << "x" << t.k[1] << " out " << i << "," << j);
            const double got = y[static_cast<size_t>(n * g.ys[0] + c * g.ys[1] + i * g.ys[2] + j * g.ys[3])];
            CHECK((got == best || (std::isnan(got) && std::isnan(best))));
            CHECK(ind[static_cast<size_t>(n * g.is[0] + c * g.is[1] + i * g.is[2] + j * g.is[3])] == best_at);
          }
  }
}

TEST_CASE("average pooling over whole tensors matches brute force", "[pool]") {
  for (const Case& t : cases()) {
    if (t.d[0] != 1 || t.d[1] != 1 || 2 * t.p[0] > t.k[0] || 2 * t.p[1] > t.k[1]) continue;  // avg has no dilation
    const PoolGeometry g = geometry_of(t);
    const std::vector<int32_t> x = input_of<int32_t>(g, false);
    const std::vector<float> xf = input_of<float>(g, false);
    const int64_t total = g.N * g.C * g.OH * g.OW;
    for (const AvgOptions opt : {AvgOptions{true, false, 0}, AvgOptions{false, false, 0}, AvgOptions{true, true, -3}}) {
      std::vector<int32_t> y(static_cast<size_t>(total));
      std::vector<float> yf(static_cast<size_t>(total));
      for (int64_t o = 0; o < total; ++o) {
        avg_pool_output<int32_t>(g, o, x.data(), y.data(), opt);
        avg_pool_output<float>(g, o, xf.data(), yf.data(), opt);
      }
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t c = 0; c < g.C; ++c)
          for (int64_t i = 0; i < g.OH; ++i)
            for (int64_t j = 0; j < g.OW; ++j) {
              // Count taps: inside the padded input (count_include_pad) and
              // inside the input (summed).
              int64_t sum = 0, padded_rows = 0, padded_cols = 0, rows = 0, cols = 0;
              for (int64_t kh = 0; kh < t.k[0]; ++kh) {
                const int64_t ih = i * t.s[0] - t.p[0] + kh;
                padded_rows += ih < g.H + t.p[0];
                rows += ih >= 0 && ih < g.H;
              }
              for (int64_t kw = 0; kw < t.k[1]; ++kw) {
                const int64_t iw = j * t.s[1] - t.p[1] + kw;
                padded_cols += iw < g.W + t.p[1];
                cols += iw >= 0 && iw < g.W;
              }
              for (int64_t kh = 0; kh < t.k[0]; ++kh)
                for (int64_t kw = 0; kw < t.k[1]; ++kw) {
                  const int64_t ih = i * t.s[0] - t.p[0] + kh, iw = j * t.s[1] - t.p[1] + kw;
                  if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) sum += at(x, g, n, c, ih, iw);
                }
              const int64_t div = opt.has_divisor_override ? opt.divisor_override
                                  : opt.count_include_pad  ? padded_rows * padded_cols
                                                           : rows * cols;
              const size_t yi = static_cast<size_t>(n * g.ys[0] + c * g.ys[1] + i * g.ys[2] + j * g.ys[3]);
              INFO("out " << i << "," << j << " include_pad " << opt.count_include_pad);
              CHECK(y[yi] == static_cast<int32_t>(sum / div));
              CHECK(yf[yi] == static_cast<float>(static_cast<double>(sum) / static_cast<double>(div)));
            }
    }
  }
}

TEST_CASE("adaptive average pooling over whole tensors matches brute force", "[pool]") {
  for (const int64_t out : {1, 3, 4, 7, 9}) {
    PoolGeometry g = geometry_of({2, 3, 7, 5, {1, 1}, {1, 1}, {0, 0}, {1, 1}, false});
    g.OH = out;
    g.OW = (out + 1) / 2;
    const int64_t ys[4] = {g.C * g.OH * g.OW, g.OH * g.OW, g.OW, 1};
    for (int i = 0; i < 4; ++i) g.ys[i] = ys[i];
    const std::vector<double> x = input_of<double>(g, false);
    std::vector<double> y(static_cast<size_t>(g.N * g.C * g.OH * g.OW));
    for (int64_t o = 0; o < static_cast<int64_t>(y.size()); ++o) adaptive_avg_output<double>(g, o, x.data(), y.data());
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t c = 0; c < g.C; ++c)
        for (int64_t i = 0; i < g.OH; ++i)
          for (int64_t j = 0; j < g.OW; ++j) {
            const auto lo = [](int64_t a, int64_t L, int64_t n_out) {
              return static_cast<int64_t>(std::floor(static_cast<double>(a * L) / static_cast<double>(n_out)));
            };
            const auto hi = [](int64_t a, int64_t L, int64_t n_out) {
              return static_cast<int64_t>(std::ceil(static_cast<double>((a + 1) * L) / static_cast<double>(n_out)));
            };
            double sum = 0;
            int64_t count = 0;
            for (int64_t h = lo(i, g.H, g.OH); h < hi(i, g.H, g.OH); ++h)
              for (int64_t w = lo(j, g.W, g.OW); w < hi(j, g.W, g.OW); ++w, ++count) sum += at(x, g, n, c, h, w);
            CHECK(y[static_cast<size_t>(n * g.ys[0] + c * g.ys[1] + i * g.ys[2] + j * g.ys[3])] ==
                  sum / static_cast<double>(count));
          }
  }
}
