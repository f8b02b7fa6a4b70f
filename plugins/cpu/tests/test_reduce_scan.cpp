// cumsum and cumprod: every dtype along every dim, on contiguous,
// transposed, sliced and broadcast inputs and into strided outputs, 0-d
// and empty tensors, large inputs (both layouts, past kParallelGrain),
// float32 accuracy, NaN propagation and integer wrapping.
#include <catch2/catch.hpp>

#include "test_reduce_support.hpp"

#include <cstring>

using namespace loom_test;
using namespace loom_test::reduce;

namespace {

// Runs the scan of `in` along `dim` into a fresh output (column-major when
// `out_transposed`) and checks every element against a sequential scan.
void check_scan(const std::string& op, const Tensor& in, int64_t dim, bool out_transposed = false) {
  const bool prod = op == "cumprod";
  const int32_t dt = in.dtype;
  Tensor out = make(dt, in.shape);
  if (out_transposed && in.shape.size() >= 2) {
    int64_t acc = 1;
    for (size_t d = 0; d < in.shape.size(); ++d) {
      out.strides[d] = acc;
      acc *= in.shape[d];
    }
  }
  fill_pattern(out, 55);
  run(op, {in.desc()}, {out.desc()}, {int_value(dim)});
  int64_t bad = 0;
  for_each_index(in.shape, [&](const std::vector<int64_t>& i) {
    if (!in.shape.empty() && i[static_cast<size_t>(dim)] != 0) return;  // once per line
    const int64_t len = in.shape.empty() ? 1 : in.shape[static_cast<size_t>(dim)];
    std::vector<int64_t> j = i;
    LD acc = prod ? 1 : 0, mag = 0;
    uint64_t iacc = prod ? 1 : 0;
    for (int64_t r = 0; r < len; ++r) {
      if (!in.shape.empty()) j[static_cast<size_t>(dim)] = r;
      const LD x = get(in, j);
      LD want;
      if (is_floating(dt)) {
        acc = prod ? acc * x : acc + x;
        mag = prod ? std::fabs(acc) : mag + std::fabs(x);
        want = to_dtype(dt, acc);
      } else {
        const uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(x));
        iacc = prod ? iacc * u : iacc + u;
        want = to_dtype(dt, static_cast<LD>(static_cast<int64_t>(iacc)));
      }
      const LD got = get(out, j);
      const LD tol = is_floating(dt) ? 2 * eps_of(dt) * std::fabs(want) + 1e-12L * mag + 1e-30L : 0;
      if (!close(got, want, tol) && bad++ < 5)
        FAIL_CHECK(op << " " << loom::plugin::dtype_name(dt) << " dim " << dim << " step " << r << ": got "
                      << static_cast<double>(got) << ", want " << static_cast<double>(want));
    }
  });
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("cumsum and cumprod: every dtype, dim and layout", "[reduce][scan][cpu]") {
  for (const std::string& op : {"cumsum", "cumprod"}) {
    for (int32_t dt : all_dtypes()) {
      INFO(op << " " << loom::plugin::dtype_name(dt));
      Tensor a = make(dt, {3, 4, 5});
      fill_pattern(a, 1);
      Tensor b = make(dt, {5, 4, 3});
      fill_pattern(b, 2);
      Tensor c = make(dt, {7, 9, 11});
      fill_pattern(c, 3);
      Tensor d = make(dt, {3, 1, 5});
      fill_pattern(d, 4);
      const std::vector<Tensor> inputs{a, transpose(b, 0, 2), slice(slice(c, 0, 2, 3), 1, 1, 4, 2),
                                       expand(d, {3, 4, 5})};
      for (const Tensor& t : inputs) {
        for (int64_t dim = 0; dim < 3; ++dim) {
          check_scan(op, t, dim);
          check_scan(op, t, dim, /*out_transposed=*/true);
        }
      }
      Tensor ones = make(dt, {1, 6, 1});
      fill_pattern(ones, 5);
      for (int64_t dim = 0; dim < 3; ++dim) check_scan(op, ones, dim);
      Tensor s = make(dt, {});
      fill_pattern(s, 6);
      check_scan(op, s, 0);  // a 0-d input scans as one element
      Tensor e = make(dt, {0, 3});
      check_scan(op, e, 0);
      check_scan(op, e, 1);
    }
  }
}

TEST_CASE("cumsum and cumprod of large inputs, both layouts", "[reduce][scan][cpu][large]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT64, LOOM_DTYPE_FLOAT16}) {
    Tensor a = make(dt, {300, 700});
    fill_pattern(a, 7);
    check_scan("cumsum", a, 0);  // columns advance together
    check_scan("cumsum", a, 1);  // one line per row
    check_scan("cumsum", transpose(a, 0, 1), 0);
    Tensor m = make(dt, {20, 300, 30});
    fill_pattern(m, 8);
    check_scan("cumsum", m, 1);
    if (!is_floating(dt)) check_scan("cumprod", m, 1);
  }
  Tensor q = make(LOOM_DTYPE_FLOAT64, {400, 500});
  for_each_index(q.shape, [&](const std::vector<int64_t>& i) {
    set(q, i, 1 + static_cast<LD>((i[0] * 7 + i[1] * 13) % 17 - 8) / 512);
  });
  check_scan("cumprod", q, 0);
  check_scan("cumprod", q, 1);
}

TEST_CASE("float32 cumsum accumulates in double", "[reduce][scan][cpu]") {
  const int64_t n = int64_t{1} << 22;
  Tensor a = make(LOOM_DTYPE_FLOAT32, {n});
  run("fill_", {a.desc()}, {a.desc()}, {float_value(0.1)});
  Tensor o = make(LOOM_DTYPE_FLOAT32, {n});
  run("cumsum", {a.desc()}, {o.desc()}, {int_value(0)});
  const LD want = static_cast<LD>(n) * static_cast<float>(0.1);
  CHECK(std::fabs(get(o, {n - 1}) - want) <= 1e-7L * want);
  CHECK(std::fabs(get(o, {n / 2 - 1}) - want / 2) <= 1e-7L * want);
}

TEST_CASE("scans propagate NaN and wrap integers", "[reduce][scan][cpu]") {
  Tensor a = make(LOOM_DTYPE_FLOAT32, {6});
  for (int64_t i = 0; i < 6; ++i) set(a, {i}, i == 2 ? kNaN : 1);
  Tensor o = make(LOOM_DTYPE_FLOAT32, {6});
  for (const std::string& op : {"cumsum", "cumprod"}) {
    run(op, {a.desc()}, {o.desc()}, {int_value(0)});
    CHECK(get(o, {1}) == (op == "cumsum" ? 2 : 1));
    for (int64_t i = 2; i < 6; ++i) CHECK(std::isnan(get(o, {i})));
  }
  Tensor t = make(LOOM_DTYPE_INT64, {50});
  for (int64_t i = 0; i < 50; ++i) set(t, {i}, 3);
  check_scan("cumprod", t, 0);  // 3^50 wraps modulo 2^64
  Tensor b = make(LOOM_DTYPE_BOOL, {5});
  for (int64_t i = 0; i < 5; ++i) set(b, {i}, i == 2);
  Tensor ob = make(LOOM_DTYPE_BOOL, {5});
  run("cumsum", {b.desc()}, {ob.desc()}, {int_value(0)});  // "any so far"
  CHECK((get(ob, {1}) == 0 && get(ob, {2}) == 1 && get(ob, {4}) == 1));
  run("cumprod", {b.desc()}, {ob.desc()}, {int_value(0)});  // "all so far"
  CHECK((get(ob, {1}) == 0 && get(ob, {0}) == 0));
}
