// The conv/pool kernels through the fake host: oneDNN (float32, bfloat16)
// and loop (float64, integers) paths against a naive loop, strided inputs
// and outputs, absent bias, repeated calls through the primitive cache, the
// backward kernels, and malformed calls that must fail cleanly.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>

using namespace loom_test;

namespace {

LoomTensorDesc absent() {
  LoomTensorDesc d{};
  d.struct_size = sizeof d;
  d.ndim = -1;
  return d;
}

struct Conv {
  int64_t s[2], p[2], d[2], groups;
};

// y[n, o, oh, ow] for a forward conv, in long double; integers wrap as the
// dtype does because the test keeps values small.
void check_conv(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y, const Conv& c,
                long double tol) {
  const int64_t Cg = w.shape[1], Og = y.shape[1] / c.groups;
  for_each_index(y.shape, [&](const std::vector<int64_t>& i) {
    long double s = b ? get(*b, {i[1]}) : 0;
    for (int64_t ci = 0; ci < Cg; ++ci)
      for (int64_t kh = 0; kh < w.shape[2]; ++kh)
        for (int64_t kw = 0; kw < w.shape[3]; ++kw) {
          const int64_t ih = i[2] * c.s[0] - c.p[0] + kh * c.d[0], iw = i[3] * c.s[1] - c.p[1] + kw * c.d[1];
          if (ih < 0 || ih >= x.shape[2] || iw < 0 || iw >= x.shape[3]) continue;
          s += get(x, {i[0], (i[1] / Og) * Cg + ci, ih, iw}) * get(w, {i[1], ci, kh, kw});
        }
    const long double g = get(y, i);
    INFO("at " << i[0] << "," << i[1] << "," << i[2] << "," << i[3] << " got " << (double)g << " want " << (double)s);
    REQUIRE(std::fabs(g - s) <= tol * (1 + std::fabs(s)));
  });
}

std::vector<LoomValue> conv_values(const Conv& c) {
  return {int_list_value({c.s[0], c.s[1]}), int_list_value({c.p[0], c.p[1]}), int_list_value({c.d[0], c.d[1]}),
          int_value(c.groups)};
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

}  // namespace

TEST_CASE("conv2d kernel: oneDNN and loop paths against a naive loop") {
  const Conv cases[] = {{{1, 1}, {1, 1}, {1, 1}, 1}, {{2, 1}, {0, 2}, {1, 2}, 2}, {{1, 2}, {2, 1}, {2, 1}, 4}};
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_INT32}) {
    const long double tol = dt == LOOM_DTYPE_BFLOAT16 ? 2e-2L : dt == LOOM_DTYPE_FLOAT16 ? 2e-3L : dt == LOOM_DTYPE_FLOAT32 ? 1e-5L : 0;
    for (const Conv& c : cases) {
      CAPTURE(dt, c.groups);
      Tensor x = make(dt, {2, 8, 9, 7});
      Tensor w = make(dt, {8, 8 / c.groups, 3, 3});
      Tensor b = make(dt, {8});
      fill_pattern(x, 1);
      fill_pattern(w, 2);
      fill_pattern(b, 3);
      Tensor y = make(dt, {2, 8, out_size(9, 3, c.s[0], c.p[0], c.d[0]), out_size(7, 3, c.s[1], c.p[1], c.d[1])});
      for (int rep = 0; rep < 2; ++rep) {  // the second call hits the primitive cache
        run("conv2d", {x.desc(), w.desc(), b.desc()}, {y.desc()}, conv_values(c));
        check_conv(x, w, &b, y, c, tol);
      }
    }
  }
}

TEST_CASE("conv2d kernel: strided input, weight and output; no bias") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    Tensor xb = make(dt, {2, 4, 8, 10});
    fill_pattern(xb, 4);
    Tensor x = slice(transpose(xb, 2, 3), 3, 1, 6);  // [2, 4, 10, 6], W stride 10
    Tensor w = transpose(make(dt, {4, 4, 3, 3}), 0, 1);
    fill_pattern(w, 5);
    Tensor yb = make(dt, {2, 4, 10, 12});
    Tensor y = slice(yb, 3, 0, 6, 2);  // every other column of a wider buffer
    const Conv c{{1, 1}, {1, 1}, {1, 1}, 1};
    run("conv2d", {x.desc(), w.desc(), absent()}, {y.desc()}, conv_values(c));
    check_conv(x, w, nullptr, y, c, 1e-5L);
  }
}

TEST_CASE("conv_transpose2d kernel equals the forward conv's adjoint") {
  // <conv(x), y> == <x, conv_transpose(y)> for the same weight: checks the
  // transposed kernel against the forward one on both paths.
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    const Conv c{{2, 2}, {1, 1}, {1, 1}, 2};
    Tensor x = make(dt, {1, 4, 7, 7}), w = make(dt, {6, 2, 3, 3});
    fill_pattern(x, 6);
    fill_pattern(w, 7);
    Tensor fx = make(dt, {1, 6, 4, 4});
    run("conv2d", {x.desc(), w.desc(), absent()}, {fx.desc()}, conv_values(c));
    Tensor yv = make(dt, {1, 6, 4, 4});
    fill_pattern(yv, 8);
    Tensor ty = make(dt, {1, 4, 7, 7});  // (4-1)*2 - 2 + 3 = 7
    std::vector<LoomValue> v{int_list_value({2, 2}), int_list_value({1, 1}), int_list_value({0, 0}), int_value(2),
                             int_list_value({1, 1})};
    run("conv_transpose2d", {yv.desc(), w.desc(), absent()}, {ty.desc()}, v);
    long double lhs = 0, rhs = 0;
    for_each_index(fx.shape, [&](const std::vector<int64_t>& i) { lhs += get(fx, i) * get(yv, i); });
    for_each_index(x.shape, [&](const std::vector<int64_t>& i) { rhs += get(x, i) * get(ty, i); });
    CHECK(std::fabs(lhs - rhs) <= 1e-4L * (1 + std::fabs(lhs)));
  }
}

// The backward kernels against naive sums of the forward's taps. The
// values: size (input or kernel), stride, padding, dilation, groups.
std::vector<LoomValue> backward_values(int64_t h, int64_t w, const Conv& c) {
  std::vector<LoomValue> v{int_list_value({h, w})};
  for (const LoomValue& e : conv_values(c)) v.push_back(e);
  return v;
}

// Calls f(n, o, i, j, c, ih, iw, ci, kh, kw) for every in-range tap of the
// forward conv (ci: the weight's channel within the group).
template <class F>
void for_each_tap(const std::vector<int64_t>& x, const std::vector<int64_t>& w, const std::vector<int64_t>& y,
                  const Conv& c, F&& f) {
  const int64_t Cg = w[1], Og = y[1] / c.groups;
  for_each_index(y, [&](const std::vector<int64_t>& i) {
    for (int64_t ci = 0; ci < Cg; ++ci)
      for (int64_t kh = 0; kh < w[2]; ++kh)
        for (int64_t kw = 0; kw < w[3]; ++kw) {
          const int64_t ih = i[2] * c.s[0] - c.p[0] + kh * c.d[0], iw = i[3] * c.s[1] - c.p[1] + kw * c.d[1];
          if (ih < 0 || ih >= x[2] || iw < 0 || iw >= x[3]) continue;
          f(i, (i[1] / Og) * Cg + ci, ih, iw, ci, kh, kw);
        }
  });
}

TEST_CASE("conv2d backward kernels (oneDNN) against naive sums") {
  if (!host().kernels.count("_conv2d_backward_input")) {
    WARN("skipped: built without oneDNN, so the core's composites run");
    return;
  }
  const Conv cases[] = {{{1, 1}, {1, 1}, {1, 1}, 1}, {{2, 1}, {0, 2}, {1, 2}, 2}, {{1, 2}, {2, 1}, {2, 1}, 4},
                        {{3, 3}, {0, 0}, {1, 1}, 1}};
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_BFLOAT16}) {
    const long double tol = dt == LOOM_DTYPE_BFLOAT16 ? 3e-2L : 1e-5L;
    for (const Conv& c : cases) {
      CAPTURE(dt, c.s[0], c.groups);
      Tensor x = make(dt, {2, 8, 9, 7}), w = make(dt, {8, 8 / c.groups, 3, 3});
      Tensor dy = make(dt, {2, 8, out_size(9, 3, c.s[0], c.p[0], c.d[0]), out_size(7, 3, c.s[1], c.p[1], c.d[1])});
      fill_pattern(x, 1);
      fill_pattern(w, 2);
      fill_pattern(dy, 3);
      std::vector<long double> want_dx(9 * 7 * 8 * 2, 0), want_dw(8 * (8 / c.groups) * 9, 0);
      for_each_tap(x.shape, w.shape, dy.shape, c, [&](const std::vector<int64_t>& i, int64_t ch, int64_t ih,
                                                      int64_t iw, int64_t ci, int64_t kh, int64_t kw) {
        want_dx[static_cast<size_t>(((i[0] * 8 + ch) * 9 + ih) * 7 + iw)] += get(dy, i) * get(w, {i[1], ci, kh, kw});
        want_dw[static_cast<size_t>(((i[1] * (8 / c.groups) + ci) * 3 + kh) * 3 + kw)] +=
            get(dy, i) * get(x, {i[0], ch, ih, iw});
      });
      Tensor dx = make(dt, x.shape), dw = make(dt, w.shape);
      fill_pattern(dx, 4);  // every element must be written, untouched rows as 0
      for (int rep = 0; rep < 2; ++rep) {  // the second call hits the primitive cache
        run("_conv2d_backward_input", {dy.desc(), w.desc()}, {dx.desc()}, backward_values(9, 7, c));
        run("_conv2d_backward_weight", {dy.desc(), x.desc()}, {dw.desc()}, backward_values(3, 3, c));
        for_each_index(dx.shape, [&](const std::vector<int64_t>& i) {
          const long double want = want_dx[static_cast<size_t>(((i[0] * 8 + i[1]) * 9 + i[2]) * 7 + i[3])];
          INFO("dx at " << i[0] << "," << i[1] << "," << i[2] << "," << i[3]);
          REQUIRE(std::fabs(get(dx, i) - want) <= tol * (1 + std::fabs(want)));
        });
        for_each_index(dw.shape, [&](const std::vector<int64_t>& i) {
          const long double want = want_dw[static_cast<size_t>(((i[0] * (8 / c.groups) + i[1]) * 3 + i[2]) * 3 + i[3])];
          INFO("dw at " << i[0] << "," << i[1] << "," << i[2] << "," << i[3]);
          REQUIRE(std::fabs(get(dw, i) - want) <= tol * (1 + std::fabs(want)));
        });
      }
    }
  }
}

TEST_CASE("conv2d backward kernels: strided operands; float64 and empty problems are declined") {
  if (!host().kernels.count("_conv2d_backward_input")) {
    WARN("skipped: built without oneDNN, so the core's composites run");
    return;
  }
  const Conv c{{1, 1}, {1, 1}, {1, 1}, 1};
  // dy a transposed view, dx every other column of a wider buffer.
  Tensor dyb = make(LOOM_DTYPE_FLOAT32, {2, 4, 6, 5});
  fill_pattern(dyb, 5);
  Tensor dy = transpose(dyb, 2, 3);  // [2, 4, 5, 6]
  Tensor w = make(LOOM_DTYPE_FLOAT32, {4, 3, 3, 3});
  fill_pattern(w, 6);
  Tensor dxb = make(LOOM_DTYPE_FLOAT32, {2, 3, 5, 12});
  Tensor dx = slice(dxb, 3, 0, 6, 2);
  run("_conv2d_backward_input", {dy.desc(), w.desc()}, {dx.desc()}, backward_values(5, 6, c));
  std::vector<long double> want(2 * 3 * 5 * 6, 0);
  for_each_tap({2, 3, 5, 6}, w.shape, dy.shape, c, [&](const std::vector<int64_t>& i, int64_t ch, int64_t ih,
                                                       int64_t iw, int64_t ci, int64_t kh, int64_t kw) {
    want[static_cast<size_t>(((i[0] * 3 + ch) * 5 + ih) * 6 + iw)] += get(dy, i) * get(w, {i[1], ci, kh, kw});
  });
  for_each_index(dx.shape, [&](const std::vector<int64_t>& i) {
    const long double e = want[static_cast<size_t>(((i[0] * 3 + i[1]) * 5 + i[2]) * 6 + i[3])];
    REQUIRE(std::fabs(get(dx, i) - e) <= 1e-5L * (1 + std::fabs(e)));
  });
  Tensor dy64 = make(LOOM_DTYPE_FLOAT64, {2, 4, 5, 6}), w64 = make(LOOM_DTYPE_FLOAT64, {4, 3, 3, 3});
  Tensor dx64 = make(LOOM_DTYPE_FLOAT64, {2, 3, 5, 6});
  CHECK(status_of("_conv2d_backward_input", {dy64.desc(), w64.desc()}, {dx64.desc()}, backward_values(5, 6, c)) ==
        LOOM_STATUS_UNSUPPORTED);
  Tensor dy0 = make(LOOM_DTYPE_FLOAT32, {0, 4, 5, 6}), x0 = make(LOOM_DTYPE_FLOAT32, {0, 3, 5, 6});
  Tensor dw = make(LOOM_DTYPE_FLOAT32, {4, 3, 3, 3});
  CHECK(status_of("_conv2d_backward_weight", {dy0.desc(), x0.desc()}, {dw.desc()}, backward_values(3, 3, c)) ==
        LOOM_STATUS_UNSUPPORTED);
  // A weight whose channels do not match is an error, not a decline.
  Tensor wbad = make(LOOM_DTYPE_FLOAT32, {5, 3, 3, 3});
  CHECK(status_of("_conv2d_backward_input", {dy.desc(), wbad.desc()}, {dx.desc()}, backward_values(5, 6, c)) ==
        LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("pool kernels: max with indices and averages") {
  Tensor x = make(LOOM_DTYPE_FLOAT32, {1, 2, 5, 5});
  fill_pattern(x, 9);
  Tensor y = make(LOOM_DTYPE_FLOAT32, {1, 2, 3, 3}), idx = make(LOOM_DTYPE_INT64, {1, 2, 3, 3});
  std::vector<LoomValue> v{int_list_value({3, 3}), int_list_value({2, 2}), int_list_value({1, 1}),
                           int_list_value({1, 1}), bool_value(false)};
  run("max_pool2d_with_indices", {x.desc()}, {y.desc(), idx.desc()}, v);
  for_each_index(y.shape, [&](const std::vector<int64_t>& i) {
    long double best = -INFINITY;
    int64_t bi = -1;
    for (int64_t ih = i[2] * 2 - 1; ih < i[2] * 2 + 2; ++ih)
      for (int64_t iw = i[3] * 2 - 1; iw < i[3] * 2 + 2; ++iw) {
        if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5) continue;
        const long double e = get(x, {i[0], i[1], ih, iw});
        if (e > best) best = e, bi = ih * 5 + iw;
      }
    CHECK(get(y, i) == best);
    CHECK(get(idx, i) == bi);
  });
  // avg with divisor_override, on int8 (truncating division).
  Tensor xi = make(LOOM_DTYPE_INT8, {1, 1, 2, 2});
  set(xi, {0, 0, 0, 0}, -7);
  set(xi, {0, 0, 0, 1}, 1);
  Tensor yi = make(LOOM_DTYPE_INT8, {1, 1, 1, 1});
  std::vector<LoomValue> av{int_list_value({2, 2}), int_list_value({2, 2}), int_list_value({0, 0}),
                            bool_value(false), bool_value(true), int_value(3)};
  run("avg_pool2d", {xi.desc()}, {yi.desc()}, av);
  CHECK(get(yi, {0, 0, 0, 0}) == -2);
}

TEST_CASE("2x2 max pooling fast path: ties, NaNs and strided outputs as the sequential rule") {
  // Values from a small set so windows tie, with NaNs sprinkled in; widths
  // past one SIMD step (4 outputs) and odd leftovers.
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    for (int64_t W : {8, 10, 22}) {
      CAPTURE(dt, W);
      Tensor x = make(dt, {2, 3, 6, W});
      int64_t k = 0;
      for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
        const int64_t r = (k++ * 7919) % 13;
        set(x, i, r == 0 ? NAN : static_cast<long double>(r % 4));
      });
      Tensor yb = make(dt, {2, 3, 3, W});  // every other column of a wider buffer
      Tensor y = slice(yb, 3, 0, W / 2, 2);
      Tensor idx = make(LOOM_DTYPE_INT64, {2, 3, 3, W / 2});
      std::vector<LoomValue> v{int_list_value({2, 2}), int_list_value({2, 2}), int_list_value({0, 0}),
                               int_list_value({1, 1}), bool_value(false)};
      run("max_pool2d_with_indices", {x.desc()}, {y.desc(), idx.desc()}, v);
      for_each_index(y.shape, [&](const std::vector<int64_t>& i) {
        long double best = -INFINITY;
        int64_t at = -1;
        for (int64_t ih = 2 * i[2]; ih < 2 * i[2] + 2; ++ih)
          for (int64_t iw = 2 * i[3]; iw < 2 * i[3] + 2; ++iw) {
            const long double e = get(x, {i[0], i[1], ih, iw});
            if (e > best || std::isnan(e)) best = e, at = ih * W + iw;  // the first max, the last NaN
          }
        INFO("at " << i[0] << "," << i[1] << "," << i[2] << "," << i[3]);
        CHECK(get(idx, i) == at);
        if (std::isnan(best))
          CHECK(std::isnan(get(y, i)));
        else
          CHECK(get(y, i) == best);
      });
    }
  }
}

TEST_CASE("max pooling with indices, rows' interior windows: ties, NaNs, strides and padding as the sequential rule") {
  // ResNet's 3x3 stride-2 pad-1 window and others; widths past one chunk
  // of the interior loop (64 outputs) and with border columns on each side.
  struct Case {
    int64_t k, s, pad, W;
  };
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_BFLOAT16}) {
    for (const Case& cs : {Case{3, 2, 1, 150}, Case{3, 1, 1, 70}, Case{2, 3, 0, 200}, Case{4, 2, 2, 19}}) {
      CAPTURE(dt, cs.k, cs.s, cs.pad, cs.W);
      const int64_t H = 7, OH = (H + 2 * cs.pad - cs.k) / cs.s + 1, OW = (cs.W + 2 * cs.pad - cs.k) / cs.s + 1;
      Tensor x = make(dt, {1, 2, H, cs.W});
      int64_t n = 0;
      for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
        const int64_t r = (n++ * 7919) % 17;
        set(x, i, r == 0 ? NAN : static_cast<long double>(r % 5));
      });
      Tensor y = make(dt, {1, 2, OH, OW}), idx = make(LOOM_DTYPE_INT64, {1, 2, OH, OW});
      std::vector<LoomValue> v{int_list_value({cs.k, cs.k}), int_list_value({cs.s, cs.s}),
                               int_list_value({cs.pad, cs.pad}), int_list_value({1, 1}), bool_value(false)};
      run("max_pool2d_with_indices", {x.desc()}, {y.desc(), idx.desc()}, v);
      int64_t bad = 0;
      for_each_index(y.shape, [&](const std::vector<int64_t>& i) {
        long double best = -INFINITY;
        int64_t at = -1;
        for (int64_t ih = i[2] * cs.s - cs.pad; ih < i[2] * cs.s - cs.pad + cs.k; ++ih)
          for (int64_t iw = i[3] * cs.s - cs.pad; iw < i[3] * cs.s - cs.pad + cs.k; ++iw) {
            if (ih < 0 || ih >= H || iw < 0 || iw >= cs.W) continue;
            const long double e = get(x, {i[0], i[1], ih, iw});
            if (at < 0 || e > best || std::isnan(e)) best = e, at = ih * cs.W + iw;  // first max, last NaN
          }
        const long double got = get(y, i);
        const bool same = std::isnan(best) ? std::isnan(got) : got == best;
        if ((!same || get(idx, i) != at) && bad++ < 5)
          FAIL_CHECK("output " << i[1] << "," << i[2] << "," << i[3] << ": " << got << " at " << get(idx, i)
                               << ", want " << best << " at " << at);
      });
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("conv/pool kernels reject malformed calls") {
  Tensor x = make(LOOM_DTYPE_FLOAT32, {1, 2, 5, 5}), w = make(LOOM_DTYPE_FLOAT32, {2, 2, 3, 3});
  Tensor y = make(LOOM_DTYPE_FLOAT32, {1, 2, 3, 3});
  const Conv c{{1, 1}, {0, 0}, {1, 1}, 1};
  CHECK(status_of("conv2d", {x.desc(), w.desc()}, {y.desc()}, conv_values(c)) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor w3 = make(LOOM_DTYPE_FLOAT32, {2, 3, 3, 3});
  CHECK(status_of("conv2d", {x.desc(), w3.desc(), absent()}, {y.desc()}, conv_values(c)) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  std::vector<LoomValue> bad{int_value(1), int_list_value({0, 0}), int_list_value({1, 1}), int_value(1)};
  CHECK(status_of("conv2d", {x.desc(), w.desc(), absent()}, {y.desc()}, bad) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor xi = make(LOOM_DTYPE_INT32, {1, 2, 4, 4}), yi = make(LOOM_DTYPE_INT32, {1, 2, 2, 2});
  std::vector<LoomValue> v{int_list_value({2, 2}), int_list_value({2, 2}), int_list_value({0, 0}),
                           int_list_value({1, 1}), bool_value(false)};
  CHECK(status_of("max_pool2d", {xi.desc()}, {yi.desc()}, v) == LOOM_STATUS_UNSUPPORTED);
}
