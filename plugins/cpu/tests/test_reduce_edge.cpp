// Reductions at the edges: registration and dtype masks, NaN and ±inf,
// empty reductions and identities, var/std corrections, norm orders,
// first-occurrence ties, integer wrapping and limits, and malformed calls.
#include <catch2/catch.hpp>

#include "test_reduce_support.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

using namespace loom_test;
using namespace loom_test::reduce;
using loom::plugin::Half;

// Counts heap allocations (for the whole test binary), so a test can check
// that small reductions make none. Every unaligned form is replaced, so no
// block from the runtime's own operator new (e.g. Catch2's nothrow new)
// reaches this std::free: AddressSanitizer reports that mismatch.
static std::atomic<int64_t> g_allocations{0};
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new[](std::size_t n, const std::nothrow_t& tag) noexcept { return operator new(n, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

constexpr uint64_t kAll = (uint64_t{1} << LOOM_DTYPE_COUNT) - 1;
constexpr uint64_t kFloating = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT16) | LOOM_DTYPE_BIT(LOOM_DTYPE_BFLOAT16) |
                               LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64);

Tensor filled(int32_t dt, std::vector<int64_t> shape, const std::vector<LD>& v) {
  Tensor t = make(dt, std::move(shape));
  size_t i = 0;
  for_each_index(t.shape, [&](const std::vector<int64_t>& idx) { set(t, idx, v[i++ % v.size()]); });
  return t;
}

// Calls `op` and returns the first output's only element.
LD scalar_result(const std::string& op, const Tensor& in, std::vector<int64_t> dims, double param = 0) {
  Tensor out = make(out_dtype(op, in.dtype), keepdim_shape(in.shape, dims));
  Tensor idx = make(LOOM_DTYPE_INT64, out.shape);
  std::vector<LoomTensorDesc> outs{out.desc()};
  if (has_indices(op)) outs.push_back(idx.desc());
  std::vector<LoomValue> values{int_list_value(dims)};
  if (has_param(op)) values.push_back(float_value(param));
  run(op, {in.desc()}, outs, values);
  return get(out, std::vector<int64_t>(out.shape.size(), 0));
}

}  // namespace

TEST_CASE("reduction kernels are registered with their dtype masks", "[reduce][cpu][registration]") {
  const FakeHost& h = host();
  const std::vector<std::pair<std::string, uint64_t>> want{
      {"sum", kAll},        {"mean", kFloating},   {"prod", kAll},      {"amax", kAll},
      {"amin", kAll},       {"max.dim", kAll},     {"min.dim", kAll},   {"argmax", kAll},
      {"argmin", kAll},     {"var", kFloating},    {"std", kFloating},  {"norm", kFloating},
      {"logsumexp", kFloating}, {"all", kAll},     {"any", kAll},       {"cumsum", kAll},
      {"cumprod", kAll}};
  for (const auto& [op, mask] : want) {
    INFO(op);
    REQUIRE(h.kernels.count(op) == 1);
    CHECK(h.kernels.at(op).dtypes == mask);
    CHECK(h.kernels.at(op).flags == 0);
    CHECK(h.kernels.at(op).line > 0);
  }
}

TEST_CASE("NaN and infinities in every floating reduction", "[reduce][cpu]") {
  const LD nan = kNaN, inf = kInf;
  // Rows of several lengths put the specials in vector bodies, tails and
  // later blocks; columns exercise the outer layout.
  const std::vector<std::vector<LD>> patterns{
      {1, nan, 2, 3},
      {nan, 5, nan, -1},
      {1, inf, 2, -3},
      {-inf, -inf, -inf},
      {inf, -inf, 1},
      {inf, nan, -inf},
      {-inf, 2, -inf, 7, 7},
      {0, -0.0L, 0},
  };
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16}) {
    for (const auto& pat : patterns) {
      for (int64_t len : {int64_t{5}, int64_t{37}, int64_t{300}, int64_t{2500}}) {
        if (len > 1024 && dt != LOOM_DTYPE_FLOAT32) continue;  // past one arg block: enough once
        std::vector<LD> v(static_cast<size_t>(len));
        for (size_t i = 0; i < v.size(); ++i) v[i] = i % 2 ? 0.5L : 2.0L;  // products stay in range
        // The pattern lands at the start, the middle and the end.
        for (size_t k = 0; k < pat.size(); ++k) {
          v[k % v.size()] = pat[k];
          v[(v.size() / 2 + k) % v.size()] = pat[k];
          v[(v.size() - pat.size() + k) % v.size()] = pat[k];
        }
        Tensor row = filled(dt, {len}, v);
        Tensor col = slice(filled(dt, {len, 2}, v), 1, 0, 1);  // [len, 1], stride 2: the strided path
        Tensor two = filled(dt, {len, 3}, v);
        INFO(loom::plugin::dtype_name(dt) << " length " << len << " pattern " << static_cast<double>(pat[0]));
        for (const std::string& op : value_ops()) {
          if (op == "all" || op == "any" || op == "prod" || op == "sum" || op == "mean" || op == "amax" ||
              op == "amin" || op == "logsumexp") {
            check(op, row, {0});
            check(op, col, {0});
            check(op, two, {0});
            check(op, two, {1});
          }
        }
        for (double c : {0.0, 1.0}) {
          check("var", row, {0}, c);
          check("std", two, {0}, c);
        }
        for (double p : {2.0, 1.0, 0.0, 3.0, HUGE_VAL, -HUGE_VAL}) {
          check("norm", row, {0}, p);
          check("norm", two, {0}, p);
        }
        for (const std::string& op : index_ops()) {
          check(op, row, {0});
          check(op, two, {0});
          check(op, two, {1});
        }
      }
    }
  }
}

TEST_CASE("logsumexp special cases", "[reduce][cpu]") {
  const LD inf = kInf;
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_BFLOAT16}) {
    CHECK(scalar_result("logsumexp", filled(dt, {4}, {-inf}), {0}) == -inf);
    CHECK(scalar_result("logsumexp", filled(dt, {4}, {-inf, inf}), {0}) == inf);
    CHECK(scalar_result("logsumexp", filled(dt, {3000}, {-inf, 1, inf}), {0}) == inf);
    CHECK(std::isnan(scalar_result("logsumexp", filled(dt, {5}, {inf, kNaN}), {0})));
    // Large arguments do not overflow: max-shifted.
    const LD big = scalar_result("logsumexp", filled(dt, {2}, {1000, 1000}), {0});
    CHECK(std::fabs(big - (1000 + std::log(2.0L))) <= 2 * eps_of(dt) * 1001);
    CHECK(scalar_result("logsumexp", filled(dt, {2}, {-1000, -1000}), {0}) ==
          Approx(static_cast<double>(to_dtype(dt, -1000 + std::log(2.0L)))).epsilon(eps_of(dt) * 2));
  }
}

TEST_CASE("empty reductions give the identity; empty outputs are left alone", "[reduce][cpu]") {
  const std::vector<std::pair<std::string, LD>> identities{
      {"sum", 0}, {"prod", 1}, {"all", 1}, {"any", 0}, {"mean", kNaN},
      {"var", kNaN}, {"std", kNaN}, {"norm", 0}, {"logsumexp", -kInf}};
  for (const auto& [op, want] : identities) {
    for (int32_t dt : dtypes_of(op)) {
      INFO(op << " " << loom::plugin::dtype_name(dt));
      Tensor e = make(dt, {0, 3});
      check(op, e, {0}, op == "norm" ? 2.0 : 1.0);     // [1, 3] of identities
      check(op, e, {1}, op == "norm" ? 2.0 : 1.0);     // [0, 1]: nothing to write
      check(op, e, {0, 1}, op == "norm" ? 3.0 : 0.0);  // [1, 1]
      const LD got = scalar_result(op, e, {0, 1}, op == "norm" ? 2.0 : 1.0);
      if (want != want) CHECK(got != got);
      else CHECK(got == want);
    }
  }
  CHECK(scalar_result("norm", make(LOOM_DTYPE_FLOAT32, {0}), {0}, HUGE_VAL) == 0);
  CHECK(scalar_result("norm", make(LOOM_DTYPE_FLOAT32, {0}), {0}, -HUGE_VAL) == kInf);
  // No identity: the core rejects these; the kernel refuses too.
  for (const std::string& op : {"amax", "amin", "max.dim", "min.dim", "argmax", "argmin"}) {
    INFO(op);
    Tensor e = make(LOOM_DTYPE_FLOAT32, {0, 3});
    Tensor out = make(out_dtype(op, LOOM_DTYPE_FLOAT32), {1, 3});
    Tensor idx = make(LOOM_DTYPE_INT64, {1, 3});
    std::vector<LoomTensorDesc> outs{out.desc()};
    if (has_indices(op)) outs.push_back(idx.desc());
    CHECK(status_of(op, {e.desc()}, outs, {int_list_value({0})}) == LOOM_STATUS_INVALID_ARGUMENT);
    // ... but a reduction of non-empty slices into an empty output is fine.
    Tensor e2 = make(LOOM_DTYPE_FLOAT32, {0, 3});
    Tensor out2 = make(out_dtype(op, LOOM_DTYPE_FLOAT32), {0, 1});
    Tensor idx2 = make(LOOM_DTYPE_INT64, {0, 1});
    std::vector<LoomTensorDesc> outs2{out2.desc()};
    if (has_indices(op)) outs2.push_back(idx2.desc());
    CHECK(status_of(op, {e2.desc()}, outs2, {int_list_value({1})}) == LOOM_STATUS_OK);
  }
}

TEST_CASE("var and std with corrections 0, 1, N and beyond", "[reduce][cpu]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_FLOAT16}) {
    Tensor a = make(dt, {6, 7});
    fill_pattern(a, 11);
    for (double c : {0.0, 1.0, 2.0, 6.0, 7.0, 9.0, -1.0, 0.5}) {
      INFO("correction " << c);
      for (const std::string& op : {"var", "std"}) {
        check(op, a, {0}, c);  // N = 6: c = 6 divides by 0 (inf), c = 9 too
        check(op, a, {1}, c);  // N = 7
        check(op, a, {}, c);
      }
    }
    // N = 1 with correction 1: 0/0 = NaN; a constant slice with c = N: 0/0.
    CHECK(std::isnan(scalar_result("var", filled(dt, {1}, {3}), {0}, 1.0)));
    CHECK(std::isnan(scalar_result("std", filled(dt, {4}, {2}), {0}, 4.0)));
    CHECK(scalar_result("var", filled(dt, {4}, {1, 2}), {0}, 4.0) == kInf);
    CHECK(scalar_result("var", filled(dt, {4}, {2}), {0}, 1.0) == 0);
    // Offset data: the two-pass / Chan formulas keep full precision.
    const LD off = dt == LOOM_DTYPE_FLOAT64 ? 1e9L : (dt == LOOM_DTYPE_FLOAT32 ? 1e4L : 100);
    Tensor b = filled(dt, {3001}, {off + 1, off + 2, off + 3});
    check("var", b, {0}, 1.0);
    check("var", transpose(filled(dt, {1, 3001}, {off + 1, off + 2, off + 3}), 0, 1), {0}, 0.0);
  }
}

TEST_CASE("norm orders", "[reduce][cpu]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_BFLOAT16}) {
    Tensor a = filled(dt, {2, 5}, {3, -4, 0, 0.5, -2, 1, 1, 1, 1, 1});
    for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -0.5, 4.5, HUGE_VAL, -HUGE_VAL})
      for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {}}) check("norm", a, dims, p);
    CHECK(scalar_result("norm", filled(dt, {2}, {3, -4}), {0}, 2.0) == 5);
    CHECK(scalar_result("norm", filled(dt, {3}, {3, 0, -4}), {0}, 0.0) == 2);
    CHECK(scalar_result("norm", filled(dt, {3}, {3, 0, -4}), {0}, HUGE_VAL) == 4);
    CHECK(scalar_result("norm", filled(dt, {3}, {3, -0.5, -4}), {0}, -HUGE_VAL) == 0.5);
    CHECK(scalar_result("norm", filled(dt, {3}, {3, 0, -4}), {0}, -1.0) == 0);  // 1/inf
  }
  // float32 squares that would overflow float do not: accumulated in double.
  CHECK(scalar_result("norm", filled(LOOM_DTYPE_FLOAT32, {2}, {3e20L, 4e20L}), {0}, 2.0) ==
        Approx(5e20).epsilon(1e-6));
  Tensor a = make(LOOM_DTYPE_FLOAT32, {2});
  Tensor o = make(LOOM_DTYPE_FLOAT32, {1});
  CHECK(status_of("norm", {a.desc()}, {o.desc()}, {int_list_value({0}), float_value(NAN)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("max.dim, argmax and friends pick the first of equal extremes", "[reduce][cpu]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8, LOOM_DTYPE_BOOL,
                     LOOM_DTYPE_FLOAT16, LOOM_DTYPE_INT16}) {
    for (int64_t len : {int64_t{7}, int64_t{100}, int64_t{1500}, int64_t{5000}}) {
      // Few distinct values: the extremes repeat within and across blocks.
      std::vector<LD> v(static_cast<size_t>(len));
      for (size_t i = 0; i < v.size(); ++i) v[i] = dt == LOOM_DTYPE_BOOL ? (i % 3 == 1) : static_cast<LD>(i % 5);
      Tensor row = filled(dt, {len}, v);
      Tensor rows = filled(dt, {3, len}, v);
      INFO(loom::plugin::dtype_name(dt) << " length " << len);
      for (const std::string& op : index_ops()) {
        check(op, row, {0});
        check(op, rows, {1});
        check(op, transpose(rows, 0, 1), {0});  // the outer layout over the same data
      }
      CHECK(scalar_result("argmax", row, {0}) == (dt == LOOM_DTYPE_BOOL ? 1 : 4));
      CHECK(scalar_result("argmin", row, {0}) == 0);
    }
  }
  // -0.0 and 0.0 compare equal: the first wins.
  Tensor z = filled(LOOM_DTYPE_FLOAT32, {3}, {-0.0L, 0.0L, -0.0L});
  CHECK(scalar_result("argmax", z, {0}) == 0);
  CHECK(scalar_result("argmin", z, {0}) == 0);
}

TEST_CASE("integer products wrap; integer extremes reach the limits", "[reduce][cpu]") {
  for (int32_t dt : {LOOM_DTYPE_INT64, LOOM_DTYPE_INT32, LOOM_DTYPE_INT8, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT16}) {
    Tensor a = filled(dt, {4, 70}, {3, -7, 5, 11, -13, 2});
    if (dt == LOOM_DTYPE_UINT8) a = filled(dt, {4, 70}, {3, 7, 5, 11, 13, 2});
    check("prod", a, {1});
    check("prod", a, {0});
    check("prod", a, {});
    check("sum", a, {});
  }
  const LD lo = static_cast<LD>(std::numeric_limits<int64_t>::min());
  const LD hi = static_cast<LD>(std::numeric_limits<int64_t>::max());
  Tensor e = filled(LOOM_DTYPE_INT64, {33}, {0, lo, hi, -1, 1});
  CHECK(scalar_result("amax", e, {0}) == hi);
  CHECK(scalar_result("amin", e, {0}) == lo);
  CHECK(scalar_result("argmax", e, {0}) == 2);
  CHECK(scalar_result("argmin", e, {0}) == 1);
  Tensor u = filled(LOOM_DTYPE_UINT8, {40}, {0, 255, 254});
  CHECK(scalar_result("amax", u, {0}) == 255);
  CHECK(scalar_result("amin", u, {0}) == 0);
}

TEST_CASE("all and any read every dtype; -0 is false and NaN true", "[reduce][cpu]") {
  for (int32_t dt : all_dtypes()) {
    INFO(loom::plugin::dtype_name(dt));
    Tensor zeros = make(dt, {5000});
    CHECK(scalar_result("any", zeros, {0}) == 0);
    CHECK(scalar_result("all", zeros, {0}) == 0);
    Tensor ones = filled(dt, {5000}, {1});
    CHECK(scalar_result("all", ones, {0}) == 1);
    set(ones, {4321}, 0);
    CHECK(scalar_result("all", ones, {0}) == 0);
    set(zeros, {4999}, 1);
    CHECK(scalar_result("any", zeros, {0}) == 1);
  }
  for (int32_t dt : {LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    CHECK(scalar_result("any", filled(dt, {7}, {-0.0L}), {0}) == 0);
    CHECK(scalar_result("all", filled(dt, {7}, {kNaN}), {0}) == 1);
    CHECK(scalar_result("any", filled(dt, {7}, {0, 0, kNaN}), {0}) == 1);
  }
}

TEST_CASE("malformed reduction calls are refused", "[reduce][cpu]") {
  Tensor a = make(LOOM_DTYPE_FLOAT32, {3, 4});
  Tensor o = make(LOOM_DTYPE_FLOAT32, {1, 4});
  Tensor wrong_shape = make(LOOM_DTYPE_FLOAT32, {4});
  Tensor wrong_dtype = make(LOOM_DTYPE_FLOAT64, {1, 4});
  Tensor idx = make(LOOM_DTYPE_INT64, {1, 4});
  const auto dims = int_list_value({0});
  CHECK(status_of("amax", {a.desc()}, {wrong_shape.desc()}, {dims}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("amax", {a.desc()}, {wrong_dtype.desc()}, {dims}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("amax", {a.desc()}, {o.desc()}, {int_list_value({2})}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("amax", {a.desc()}, {o.desc()}, {}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("var", {a.desc()}, {o.desc()}, {dims}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("max.dim", {a.desc()}, {o.desc()}, {dims}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("max.dim", {a.desc()}, {o.desc(), o.desc()}, {dims}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("max.dim", {a.desc()}, {o.desc(), idx.desc()}, {dims}) == LOOM_STATUS_OK);
  Tensor o11 = make(LOOM_DTYPE_INT64, {1, 1});
  CHECK(status_of("argmax", {a.desc()}, {o11.desc()}, {int_list_value({0, 1})}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  Tensor ai = make(LOOM_DTYPE_INT32, {3, 4});
  Tensor oi = make(LOOM_DTYPE_INT32, {1, 4});
  CHECK(status_of("mean", {ai.desc()}, {oi.desc()}, {dims}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("logsumexp", {ai.desc()}, {oi.desc()}, {dims}) == LOOM_STATUS_UNSUPPORTED);
  Tensor ob = make(LOOM_DTYPE_BOOL, {1, 4});
  CHECK(status_of("all", {a.desc()}, {o.desc()}, {dims}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("all", {a.desc()}, {ob.desc()}, {dims}) == LOOM_STATUS_OK);
  CHECK(status_of("cumsum", {a.desc()}, {a.desc()}, {int_value(2)}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("cumsum", {a.desc()}, {o.desc()}, {int_value(0)}) == LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("small reductions and scans allocate nothing", "[reduce][cpu]") {
  Tensor a = make(LOOM_DTYPE_FLOAT32, {3, 40, 5});
  fill_pattern(a, 13);
  Tensor o = make(LOOM_DTYPE_FLOAT32, {3, 1, 5});
  Tensor i = make(LOOM_DTYPE_INT64, {3, 1, 5});
  Tensor b = make(LOOM_DTYPE_BOOL, {3, 1, 5});
  Tensor full = make(LOOM_DTYPE_FLOAT32, {3, 40, 5});
  const std::vector<LoomTensorDesc> in{a.desc()}, out{o.desc()}, both{o.desc(), i.desc()},
      idx{i.desc()}, logical{b.desc()}, scan{full.desc()};
  const std::vector<LoomValue> dims{int_list_value({1})}, dims_p{int_list_value({1}), float_value(3.0)},
      all_dims{int_list_value({})}, scan_dim{int_value(1)};
  Tensor one = make(LOOM_DTYPE_FLOAT32, {1, 1, 1});
  const std::vector<LoomTensorDesc> scalar{one.desc()};
  (void)host();
  // No CHECK inside the measured stretch: Catch may allocate.
  LoomError* err[9];
  const int64_t before = g_allocations.load();
  err[0] = call("sum", in, out, dims);
  err[1] = call("mean", in, scalar, all_dims);
  err[2] = call("var", in, out, dims_p);
  err[3] = call("norm", in, out, dims_p);
  err[4] = call("logsumexp", in, out, dims);
  err[5] = call("max.dim", in, both, dims);
  err[6] = call("argmin", in, idx, dims);
  err[7] = call("any", in, logical, dims);
  err[8] = call("cumsum", in, scan, scan_dim);
  const int64_t after = g_allocations.load();
  for (LoomError* e : err) CHECK(e == nullptr);
  CHECK(after == before);
}

TEST_CASE("dims may arrive as NONE (every dim) or as one INT", "[reduce][cpu]") {
  Tensor a = make(LOOM_DTYPE_FLOAT64, {3, 4});
  fill_pattern(a, 14);
  Tensor all = make(LOOM_DTYPE_FLOAT64, {1, 1});
  Tensor rows = make(LOOM_DTYPE_FLOAT64, {3, 1});
  Tensor want_all = make(LOOM_DTYPE_FLOAT64, {1, 1});
  Tensor want_rows = make(LOOM_DTYPE_FLOAT64, {3, 1});
  LoomValue none{};
  none.kind = LOOM_VALUE_NONE;
  run("sum", {a.desc()}, {all.desc()}, {none});
  run("sum", {a.desc()}, {want_all.desc()}, {int_list_value({0, 1})});
  CHECK(get(all, {0, 0}) == get(want_all, {0, 0}));
  run("amax", {a.desc()}, {rows.desc()}, {int_value(1)});
  run("amax", {a.desc()}, {want_rows.desc()}, {int_list_value({1})});
  for (int64_t r = 0; r < 3; ++r) CHECK(get(rows, {r, 0}) == get(want_rows, {r, 0}));
}
