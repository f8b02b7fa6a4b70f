// The indexing kernels through the fake host: gather/index_select,
// scatter_/scatter_add_/index_add_, masked_fill_, nonzero, masked_select —
// every dtype, int32 and int64 indices, strided/broadcast operands, inputs
// past kParallelGrain (parallel paths), out-of-range indices (an error and
// no write), against naive loops written here.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <cstring>

using namespace loom_test;

namespace {

using I64 = std::vector<int64_t>;

Tensor index_tensor(int32_t dtype, const I64& shape, int64_t modulo, int seed) {
  Tensor t = make(dtype, shape);
  int64_t k = 0;
  for_each_index(t.shape, [&](const I64& i) { set(t, i, static_cast<long double>((k++ * 7 + seed) % modulo)); });
  return t;
}

// Column-major strides for the same shape: a non-contiguous layout.
Tensor column_major(int32_t dtype, const I64& shape) {
  Tensor t = make(dtype, shape);
  int64_t acc = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    t.strides[d] = acc;
    acc *= shape[d];
  }
  return t;
}

void check_gather(int32_t dt, int32_t idt, const I64& sshape, const I64& ishape, int64_t dim, bool strided) {
  Tensor self = strided ? column_major(dt, sshape) : make(dt, sshape);
  fill_pattern(self, 3);
  Tensor index = index_tensor(idt, ishape, sshape[static_cast<size_t>(dim)], static_cast<int>(dim));
  Tensor out = strided ? column_major(dt, ishape) : make(dt, ishape);
  run("gather", {self.desc(), index.desc()}, {out.desc()}, {int_value(dim), bool_value(false)});
  int64_t bad = 0;
  for_each_index(ishape, [&](const I64& p) {
    I64 q = p;
    q[static_cast<size_t>(dim)] = static_cast<int64_t>(get(index, p));
    if (get(out, p) != get(self, q) && bad++ < 3) FAIL_CHECK("gather mismatch");
  });
  CHECK(bad == 0);
}

// scatter_ (assign) or scatter_add_ into self, against a sequential loop.
void check_scatter(const std::string& op, int32_t dt, const I64& sshape, const I64& ishape, int64_t dim,
                   bool strided) {
  Tensor self = strided ? column_major(dt, sshape) : make(dt, sshape);
  fill_pattern(self, 5);
  Tensor want = make(dt, sshape);
  for_each_index(sshape, [&](const I64& p) { set(want, p, get(self, p)); });
  Tensor index = index_tensor(LOOM_DTYPE_INT64, ishape, sshape[static_cast<size_t>(dim)], 1);
  Tensor src = make(dt, ishape);
  fill_pattern(src, 9);
  const bool add = op == "scatter_add_";
  for_each_index(ishape, [&](const I64& p) {
    I64 q = p;
    q[static_cast<size_t>(dim)] = static_cast<int64_t>(get(index, p));
    long double v = get(src, p);
    if (add) {
      v += get(want, q);
      if (dt == LOOM_DTYPE_BOOL) v = v != 0;
    }
    set(want, q, v);  // wraps integers and rounds floats like the kernel
  });
  run(op, {self.desc(), index.desc(), src.desc()}, {self.desc()}, {int_value(dim)});
  int64_t bad = 0;
  for_each_index(sshape, [&](const I64& p) {
    const long double tol = is_floating(dt) ? 4 * eps_of(dt) * (1 + std::fabs(static_cast<double>(get(want, p)))) : 0;
    if (std::fabs(static_cast<double>(get(self, p) - get(want, p))) > tol && bad++ < 3)
      FAIL_CHECK(op << " " << loom::plugin::dtype_name(dt) << " got " << static_cast<double>(get(self, p))
                    << " want " << static_cast<double>(get(want, p)));
  });
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("cpu gather: every dtype, both index dtypes, strided", "[indexing]") {
  for (int32_t dt : all_dtypes())
    for (int32_t idt : {LOOM_DTYPE_INT64, LOOM_DTYPE_INT32}) {
      CAPTURE(dt, idt);
      check_gather(dt, idt, {4, 5, 6}, {3, 5, 2}, 0, false);
      check_gather(dt, idt, {4, 5, 6}, {4, 2, 6}, 2, true);
    }
  check_gather(LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT64, {300, 257}, {300, 200}, 1, false);  // parallel
}

TEST_CASE("cpu index_select reads index through a stride-0 view", "[indexing]") {
  Tensor self = make(LOOM_DTYPE_FLOAT64, {6, 300});
  fill_pattern(self, 1);
  Tensor idx = index_tensor(LOOM_DTYPE_INT32, {200}, 6, 0);
  Tensor out = make(LOOM_DTYPE_FLOAT64, {200, 300});
  Tensor view = idx;  // [200] -> [200, 300], stride 0 along dim 1
  view.shape = {200, 300};
  view.strides = {1, 0};
  run("index_select", {self.desc(), view.desc()}, {out.desc()}, {int_value(0)});
  bool ok = true;
  for_each_index(out.shape, [&](const I64& p) {
    ok = ok && get(out, p) == get(self, {static_cast<int64_t>(get(idx, {p[0]})), p[1]});
  });
  CHECK(ok);
}

TEST_CASE("cpu scatter_ and scatter_add_: every dtype, strided, parallel", "[indexing]") {
  for (int32_t dt : all_dtypes()) {
    CAPTURE(dt);
    check_scatter("scatter_.src", dt, {5, 4, 3}, {4, 4, 2}, 0, false);
    check_scatter("scatter_add_", dt, {5, 4, 3}, {4, 4, 2}, 0, false);
    check_scatter("scatter_add_", dt, {5, 4, 3}, {5, 3, 3}, 1, true);
  }
  check_scatter("scatter_add_", LOOM_DTYPE_FLOAT64, {64, 2000}, {50, 2000}, 0, false);  // dim outer, parallel
  check_scatter("scatter_add_", LOOM_DTYPE_INT64, {2000, 64}, {2000, 50}, 1, false);    // dim inner, parallel
}

TEST_CASE("cpu index_add_ scales by alpha", "[indexing]") {
  Tensor self = make(LOOM_DTYPE_FLOAT32, {3, 2});
  Tensor src = make(LOOM_DTYPE_FLOAT32, {4, 2});
  for_each_index(src.shape, [&](const I64& p) { set(src, p, 1); });
  Tensor idx = make(LOOM_DTYPE_INT64, {4});
  for (int64_t k = 0; k < 4; ++k) set(idx, {k}, k % 2 ? 2 : 0);
  Tensor view = idx;
  view.shape = {4, 2};
  view.strides = {1, 0};
  run("index_add_", {self.desc(), view.desc(), src.desc()}, {self.desc()}, {int_value(0), float_value(0.5)});
  CHECK(get(self, {0, 0}) == 1.0L);
  CHECK(get(self, {1, 1}) == 0.0L);
  CHECK(get(self, {2, 1}) == 1.0L);
}

TEST_CASE("cpu indexing kernels reject out-of-range indices without writing", "[indexing]") {
  Tensor self = make(LOOM_DTYPE_FLOAT32, {3, 4});
  Tensor out = make(LOOM_DTYPE_FLOAT32, {1, 1});
  for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{1} << 40}) {
    Tensor idx = make(LOOM_DTYPE_INT64, {1, 1});
    set(idx, {0, 0}, static_cast<long double>(bad));
    CHECK(status_of("gather", {self.desc(), idx.desc()}, {out.desc()}, {int_value(0)}) ==
          LOOM_STATUS_INVALID_ARGUMENT);
    Tensor src = make(LOOM_DTYPE_FLOAT32, {1, 1});
    set(src, {0, 0}, 9);
    CHECK(status_of("scatter_add_", {self.desc(), idx.desc(), src.desc()}, {self.desc()}, {int_value(0)}) ==
          LOOM_STATUS_INVALID_ARGUMENT);
  }
  bool untouched = true;
  for_each_index(self.shape, [&](const I64& p) { untouched = untouched && get(self, p) == 0; });
  CHECK(untouched);
  Tensor idx = make(LOOM_DTYPE_FLOAT32, {1, 1});
  CHECK(status_of("gather", {self.desc(), idx.desc()}, {out.desc()}, {int_value(0)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("cpu masked_fill_ with a broadcast mask", "[indexing]") {
  for (int32_t dt : all_dtypes()) {
    Tensor self = column_major(dt, {70, 600});
    fill_pattern(self, 2);
    Tensor before = make(dt, self.shape);
    for_each_index(self.shape, [&](const I64& p) { set(before, p, get(self, p)); });
    Tensor mask = make(LOOM_DTYPE_BOOL, {1, 600});
    for (int64_t j = 0; j < 600; ++j) set(mask, {0, j}, j % 3 == 0);
    Tensor mview = expand(mask, self.shape);
    run("masked_fill_.Scalar", {self.desc(), mview.desc()}, {self.desc()}, {int_value(1)});
    bool ok = true;
    for_each_index(self.shape, [&](const I64& p) {
      ok = ok && get(self, p) == (p[1] % 3 == 0 ? 1.0L : get(before, p));
    });
    CHECK(ok);
  }
}

TEST_CASE("cpu nonzero and masked_select: order, strides, parallel, count check", "[indexing]") {
  for (int32_t dt : all_dtypes()) {
    CAPTURE(dt);
    const I64 shape{90, 3, 250};  // 67500 elements: several chunks
    Tensor x = column_major(dt, shape);
    fill_pattern(x, 4);
    std::vector<I64> want;
    for_each_index(shape, [&](const I64& p) {
      if (get(x, p) != 0) want.push_back(p);
    });
    const int64_t n = static_cast<int64_t>(want.size());
    Tensor out = make(LOOM_DTYPE_INT64, {n, 3});
    run("nonzero", {x.desc()}, {out.desc()});
    bool ok = true;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t d = 0; d < 3; ++d) ok = ok && get(out, {r, d}) == want[static_cast<size_t>(r)][static_cast<size_t>(d)];
    CHECK(ok);
    Tensor wrong = make(LOOM_DTYPE_INT64, {n + 1, 3});
    CHECK(status_of("nonzero", {x.desc()}, {wrong.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);

    Tensor mask = make(LOOM_DTYPE_BOOL, shape);
    for_each_index(shape, [&](const I64& p) { set(mask, p, get(x, p) != 0); });
    Tensor sel = make(dt, {n});
    run("masked_select", {x.desc(), mask.desc()}, {sel.desc()});
    ok = true;
    for (int64_t r = 0; r < n; ++r) ok = ok && get(sel, {r}) == get(x, want[static_cast<size_t>(r)]);
    CHECK(ok);
  }
  Tensor empty = make(LOOM_DTYPE_FLOAT32, {0, 3});
  Tensor none = make(LOOM_DTYPE_INT64, {0, 2});
  run("nonzero", {empty.desc()}, {none.desc()});
}
