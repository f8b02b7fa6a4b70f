// CPU sort and topk against a reference built on std::stable_sort of
// indices: every dtype, NaN, duplicates, strided rows, both directions.
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace loom_test;

namespace {

// Ascending rank of a value: NaN above everything.
bool ref_less(long double a, long double b) {
  if (std::isnan(b)) return !std::isnan(a);
  if (std::isnan(a)) return false;
  return a < b;
}

// The row of `t` through index `idx` along `dim`.
std::vector<long double> row_of(const Tensor& t, std::vector<int64_t> idx, int dim) {
  std::vector<long double> r;
  for (int64_t j = 0; j < t.shape[static_cast<size_t>(dim)]; ++j) {
    idx[static_cast<size_t>(dim)] = j;
    r.push_back(get(t, idx));
  }
  return r;
}

// Stable order of a row's indices.
std::vector<int64_t> ref_order(const std::vector<long double>& row, bool descending) {
  std::vector<int64_t> ix(row.size());
  std::iota(ix.begin(), ix.end(), 0);
  std::stable_sort(ix.begin(), ix.end(), [&](int64_t a, int64_t b) {
    return descending ? ref_less(row[b], row[a]) : ref_less(row[a], row[b]);
  });
  return ix;
}

bool same_value(long double a, long double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

Tensor sample(int32_t dt, std::vector<int64_t> shape, int seed) {
  Tensor t = make(dt, std::move(shape));
  fill_pattern(t, seed);
  if (is_floating(dt)) {  // a few NaNs and infinities
    int64_t i = 0;
    for_each_index(t.shape, [&](const std::vector<int64_t>& idx) {
      if (i % 7 == 3) set(t, idx, NAN);
      if (i % 11 == 5) set(t, idx, -INFINITY);
      ++i;
    });
  }
  return t;
}

// Checks (values, indices) of every row along dim against the reference's first k.
void check_rows(const Tensor& in, const Tensor& values, const Tensor& indices, int dim, bool descending,
                int64_t k) {
  std::vector<int64_t> outer = in.shape;
  outer[static_cast<size_t>(dim)] = 1;
  int64_t bad = 0;
  for_each_index(outer, [&](std::vector<int64_t> idx) {
    const auto row = row_of(in, idx, dim);
    const auto order = ref_order(row, descending);
    for (int64_t j = 0; j < k; ++j) {
      idx[static_cast<size_t>(dim)] = j;
      const long double v = get(values, idx);
      const auto x = static_cast<int64_t>(get(indices, idx));
      if (x != order[static_cast<size_t>(j)] || !same_value(v, row[static_cast<size_t>(x)])) ++bad;
    }
  });
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("cpu sort: every dtype, both dims of a strided input, both directions", "[cpu][sort]") {
  for (int32_t dt : all_dtypes()) {
    for (int dim : {0, 1}) {
      for (bool desc : {false, true}) {
        CAPTURE(dt, dim, desc);
        Tensor base = sample(dt, {37, 23}, dim + 1);
        Tensor in = transpose(base, 0, 1);  // [23, 37]
        Tensor v = make(dt, in.shape), ix = make(LOOM_DTYPE_INT64, in.shape);
        run("sort", {in.desc()}, {v.desc(), ix.desc()}, {int_value(dim), bool_value(desc), bool_value(false)});
        check_rows(in, v, ix, dim, desc, in.shape[static_cast<size_t>(dim)]);
      }
    }
  }
}

TEST_CASE("cpu sort: many rows in parallel, one long row, 0-d", "[cpu][sort]") {
  Tensor in = sample(LOOM_DTYPE_FLOAT32, {2000, 64}, 9);
  Tensor v = make(LOOM_DTYPE_FLOAT32, in.shape), ix = make(LOOM_DTYPE_INT64, in.shape);
  run("sort", {in.desc()}, {v.desc(), ix.desc()}, {int_value(1), bool_value(false), bool_value(true)});
  check_rows(in, v, ix, 1, false, 64);
  Tensor row = sample(LOOM_DTYPE_INT32, {50000}, 10);
  Tensor rv = make(LOOM_DTYPE_INT32, row.shape), rx = make(LOOM_DTYPE_INT64, row.shape);
  run("sort", {row.desc()}, {rv.desc(), rx.desc()}, {int_value(0), bool_value(true), bool_value(false)});
  check_rows(row, rv, rx, 0, true, 50000);
  Tensor s = make(LOOM_DTYPE_FLOAT32, {}), sv = make(LOOM_DTYPE_FLOAT32, {}), sx = make(LOOM_DTYPE_INT64, {});
  set(s, {}, 2.5);
  run("sort", {s.desc()}, {sv.desc(), sx.desc()}, {int_value(0), bool_value(false), bool_value(false)});
  CHECK(get(sv, {}) == 2.5);
  CHECK(get(sx, {}) == 0);
  CHECK(status_of("sort", {in.desc()}, {v.desc(), ix.desc()}, {int_value(2), bool_value(false)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("sort", {in.desc()}, {v.desc(), v.desc()}, {int_value(1), bool_value(false)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("cpu topk: every number dtype, largest and smallest, several k", "[cpu][sort]") {
  for (int32_t dt : all_dtypes()) {
    if (dt == LOOM_DTYPE_BOOL) continue;
    for (int64_t k : {0, 1, 5, 29}) {
      for (bool largest : {true, false}) {
        CAPTURE(dt, k, largest);
        Tensor base = sample(dt, {29, 13}, 11);
        Tensor in = transpose(base, 0, 1);  // [13, 29], rows along dim 1 are strided
        Tensor v = make(dt, {13, k}), ix = make(LOOM_DTYPE_INT64, {13, k});
        run("topk", {in.desc()}, {v.desc(), ix.desc()},
            {int_value(k), int_value(1), bool_value(largest), bool_value(true)});
        check_rows(in, v, ix, 1, largest, k);
      }
    }
  }
  Tensor in = sample(LOOM_DTYPE_FLOAT32, {4, 10}, 12);
  Tensor v = make(LOOM_DTYPE_FLOAT32, {4, 11}), ix = make(LOOM_DTYPE_INT64, {4, 11});
  CHECK(status_of("topk", {in.desc()}, {v.desc(), ix.desc()},
                  {int_value(11), int_value(1), bool_value(true), bool_value(true)}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(host().kernels.count("topk") == 1);
}

TEST_CASE("cpu topk unsorted returns the right set", "[cpu][sort]") {
  Tensor in = sample(LOOM_DTYPE_FLOAT64, {3, 100}, 13);
  Tensor v = make(LOOM_DTYPE_FLOAT64, {3, 10}), ix = make(LOOM_DTYPE_INT64, {3, 10});
  run("topk", {in.desc()}, {v.desc(), ix.desc()}, {int_value(10), int_value(1), bool_value(true), bool_value(false)});
  for (int64_t r = 0; r < 3; ++r) {
    const auto row = row_of(in, {r, 0}, 1);
    auto order = ref_order(row, true);
    std::vector<int64_t> want(order.begin(), order.begin() + 10), got;
    for (int64_t j = 0; j < 10; ++j) got.push_back(static_cast<int64_t>(get(ix, {r, j})));
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK(got == want);
  }
}
