// CPU kernels cat, flip, roll, tril/triu (and in place) against naive
// reference loops, for every dtype, contiguous and strided operands, and
// sizes large enough to take the parallel paths.
#include "test_support.hpp"

using namespace loom_test;

namespace {

// Element (idx) of t compared exactly with ref(idx) for every index.
template <class F>
void check_all(const Tensor& out, F&& ref) {
  int64_t bad = 0;
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    if (get(out, idx) != ref(idx)) ++bad;
  });
  CHECK(bad == 0);
}

LoomValue tensor_list(int64_t n) {
  LoomValue v{};
  v.kind = LOOM_VALUE_TENSOR_LIST;
  v.u.i = n;
  return v;
}

}  // namespace

TEST_CASE("cpu cat: every dtype, strided inputs, any dim", "[cpu][shape]") {
  for (int32_t dt : all_dtypes()) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      CAPTURE(dt, dim);
      std::vector<int64_t> s0{2, 3, 4}, s1{2, 3, 4};
      s1[static_cast<size_t>(dim)] = 5;
      Tensor a = make(dt, s0);
      fill_pattern(a, 1);
      Tensor full = make(dt, {s1[2], s1[1], s1[0]});  // b is a transposed view
      fill_pattern(full, 2);
      Tensor b = transpose(full, 0, 2);
      std::vector<int64_t> so = s0;
      so[static_cast<size_t>(dim)] += 5;
      Tensor out = make(dt, so);
      run("cat", {a.desc(), b.desc()}, {out.desc()}, {tensor_list(2), int_value(dim)});
      check_all(out, [&](std::vector<int64_t> idx) {
        const int64_t i = idx[static_cast<size_t>(dim)];
        if (i < s0[static_cast<size_t>(dim)]) return get(a, idx);
        idx[static_cast<size_t>(dim)] = i - s0[static_cast<size_t>(dim)];
        return get(b, idx);
      });
    }
  }
}

TEST_CASE("cpu cat: many inputs and a large one share the parallel path", "[cpu][shape]") {
  std::vector<Tensor> ins;
  std::vector<LoomTensorDesc> descs;
  int64_t rows = 0;
  for (int64_t i = 0; i < 300; ++i) {
    const int64_t r = i == 7 ? 40000 : 1 + i % 5;  // one input spans many work blocks
    Tensor t = make(LOOM_DTYPE_FLOAT32, {r, 3});
    fill_pattern(t, static_cast<int>(i));
    ins.push_back(t);
    rows += r;
  }
  for (const Tensor& t : ins) descs.push_back(t.desc());
  Tensor out = make(LOOM_DTYPE_FLOAT32, {rows, 3});
  run("cat", descs, {out.desc()}, {tensor_list(300), int_value(0)});
  int64_t at = 0, bad = 0;
  for (const Tensor& t : ins) {
    for_each_index(t.shape, [&](const std::vector<int64_t>& idx) {
      if (get(out, {at + idx[0], idx[1]}) != get(t, idx)) ++bad;
    });
    at += t.shape[0];
  }
  CHECK(bad == 0);
  CHECK(status_of("cat", descs, {out.desc()}, {tensor_list(2), int_value(0)}) == LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("cpu flip and roll: every dtype, strided input", "[cpu][shape]") {
  for (int32_t dt : all_dtypes()) {
    CAPTURE(dt);
    Tensor base = make(dt, {4, 5, 6});
    fill_pattern(base, 3);
    Tensor in = transpose(base, 0, 1);  // [5, 4, 6], non-contiguous
    Tensor out = make(dt, in.shape);
    run("flip", {in.desc()}, {out.desc()}, {int_list_value({0, 2})});
    check_all(out, [&](const std::vector<int64_t>& i) { return get(in, {4 - i[0], i[1], 5 - i[2]}); });
    run("flip", {in.desc()}, {out.desc()}, {int_list_value({1})});
    check_all(out, [&](const std::vector<int64_t>& i) { return get(in, {i[0], 3 - i[1], i[2]}); });
    run("roll", {in.desc()}, {out.desc()}, {int_list_value({2, 0, 5}), int_list_value({})});
    check_all(out, [&](const std::vector<int64_t>& i) {
      return get(in, {(i[0] + 5 - 2) % 5, i[1], (i[2] + 6 - 5) % 6});
    });
    // Output strided too (a transposed destination).
    Tensor obase = make(dt, {6, 4, 5});
    Tensor oview = transpose(obase, 0, 2);  // [5, 4, 6], innermost stride 20
    REQUIRE(oview.shape == in.shape);
    run("roll", {in.desc()}, {oview.desc()}, {int_list_value({0, 3, 1}), int_list_value({})});
    check_all(oview, [&](const std::vector<int64_t>& i) {
      return get(in, {i[0], (i[1] + 4 - 3) % 4, (i[2] + 6 - 1) % 6});
    });
  }
}

TEST_CASE("cpu flip and roll: large tensors, 0-d, bad values", "[cpu][shape]") {
  Tensor in = make(LOOM_DTYPE_FLOAT64, {300, 517});
  fill_pattern(in, 4);
  Tensor out = make(LOOM_DTYPE_FLOAT64, in.shape);
  run("flip", {in.desc()}, {out.desc()}, {int_list_value({1})});
  check_all(out, [&](const std::vector<int64_t>& i) { return get(in, {i[0], 516 - i[1]}); });
  run("roll", {in.desc()}, {out.desc()}, {int_list_value({299, 100}), int_list_value({})});
  check_all(out, [&](const std::vector<int64_t>& i) { return get(in, {(i[0] + 1) % 300, (i[1] + 417) % 517}); });
  Tensor s = make(LOOM_DTYPE_INT32, {}), so = make(LOOM_DTYPE_INT32, {});
  set(s, {}, 42);
  run("flip", {s.desc()}, {so.desc()}, {int_list_value({})});
  CHECK(get(so, {}) == 42);
  CHECK(status_of("roll", {in.desc()}, {out.desc()}, {int_list_value({300, 0}), int_list_value({})}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("flip", {in.desc()}, {out.desc()}, {int_list_value({2})}) == LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("cpu tril/triu: every dtype, diagonals, batches, in place", "[cpu][shape]") {
  for (int32_t dt : all_dtypes()) {
    for (int64_t k : {-4, -1, 0, 2, 7}) {
      CAPTURE(dt, k);
      Tensor base = make(dt, {3, 5, 4});
      fill_pattern(base, 5);
      Tensor in = transpose(base, 1, 2);  // [3, 4, 5] strided
      Tensor lo = make(dt, in.shape), up = make(dt, in.shape);
      run("tril", {in.desc()}, {lo.desc()}, {int_value(k)});
      run("triu", {in.desc()}, {up.desc()}, {int_value(k)});
      check_all(lo, [&](const std::vector<int64_t>& i) { return i[2] <= i[1] + k ? get(in, i) : 0.0L; });
      check_all(up, [&](const std::vector<int64_t>& i) { return i[2] >= i[1] + k ? get(in, i) : 0.0L; });
      Tensor copy = make(dt, {3, 5, 4});
      *copy.store = *base.store;
      Tensor inplace = transpose(copy, 1, 2);
      run("triu_", {inplace.desc()}, {inplace.desc()}, {int_value(k)});
      check_all(inplace, [&](const std::vector<int64_t>& i) { return i[2] >= i[1] + k ? get(in, i) : 0.0L; });
    }
  }
  Tensor big = make(LOOM_DTYPE_FLOAT32, {700, 300});
  fill_pattern(big, 6);
  Tensor out = make(LOOM_DTYPE_FLOAT32, big.shape);
  run("tril", {big.desc()}, {out.desc()}, {int_value(-3)});
  check_all(out, [&](const std::vector<int64_t>& i) { return i[1] <= i[0] - 3 ? get(big, i) : 0.0L; });
  Tensor v = make(LOOM_DTYPE_FLOAT32, {4});
  CHECK(status_of("tril", {v.desc()}, {v.desc()}, {int_value(0)}) == LOOM_STATUS_INVALID_ARGUMENT);
}
