// The conv/pool kernels through the fake host: oneDNN (float32, bfloat16)
// and loop (float64, integers) paths against a naive loop, strided inputs
// and outputs, absent bias, repeated calls through the primitive cache, and
// malformed calls that must fail cleanly.
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
