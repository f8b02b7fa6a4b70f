// Unary ops (docs/kernel_conventions.md, "Elementwise unary ops"): every op
// in every dtype its rule admits, against long double references, on
// contiguous, transposed, broadcast (stride 0), offset, in-place, 0-d,
// empty and large (parallel) layouts with special values mixed in; then
// registration masks and error cases. Whole-range accuracy sweeps are in
// test_unary_accuracy.cpp.
#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "unary_test_support.hpp"

#include <cmath>
#include <limits>

using namespace loom_test;
using namespace loom_test::unary;

namespace {

// Inputs: specials, magnitudes across the range, round-half cases and a
// sweep of small exact values. set() rounds each to the tensor's dtype.
std::vector<long double> float_inputs() {
  const long double inf = std::numeric_limits<long double>::infinity();
  std::vector<long double> v{std::numeric_limits<long double>::quiet_NaN(),
                             inf,
                             -inf,
                             0.0L,
                             -0.0L,
                             1,
                             -1,
                             0.5L,
                             -0.5L,
                             1.5L,
                             2.5L,
                             -2.5L,
                             3.5L,
                             0.125L,
                             -0.375L,
                             1e-3L,
                             -1e-3L,
                             1e-6L,
                             1e-30L,
                             -1e-30L,
                             1e-40L,
                             3.14159265358979L,
                             -3.14159265358979L,
                             1.5707963267949L,
                             10,
                             -10,
                             20,
                             -20,
                             25,
                             88,
                             -88,
                             89,
                             -104,
                             700,
                             -750,
                             1e5L,
                             -1e5L,
                             1e6L,
                             3e9L,
                             -3e9L,
                             1e20L,
                             1e30L,
                             -1e30L,
                             3e38L,
                             1e300L,
                             -1e300L};
  for (int i = -60; i <= 60; ++i) v.push_back(static_cast<long double>(i) / 8 + 0.03125L * (i % 3));
  return v;
}

std::vector<long double> int_inputs(int32_t dt) {
  std::vector<long double> v{0, 1, -1, 2, -3, 7, -8, 100, -100, 127, -128, 255};
  const long double lo = dt == LOOM_DTYPE_INT16   ? -32768.0L
                         : dt == LOOM_DTYPE_INT32 ? -2147483648.0L
                         : dt == LOOM_DTYPE_INT64 ? -9223372036854775808.0L
                                                  : -128.0L;
  v.push_back(lo);       // INT_MIN: abs wraps
  v.push_back(-lo - 1);  // INT_MAX: square wraps
  v.push_back(lo + 1);
  for (int i = -20; i <= 20; ++i) v.push_back(i * 5);
  return v;
}

std::vector<long double> inputs_for(int32_t dt) {
  if (is_floating(dt)) return float_inputs();
  if (dt == LOOM_DTYPE_BOOL) return {0, 1, 1, 0, 0, 1};
  return int_inputs(dt);  // set() wraps values beyond uint8/int8
}

void fill_inputs(const Tensor& t, int seed = 0) {
  const std::vector<long double> v = inputs_for(t.dtype);
  size_t i = static_cast<size_t>(seed);
  for_each_index(t.shape, [&](const std::vector<int64_t>& idx) { set(t, idx, v[i++ % v.size()]); });
}

// Every layout for one (case, dtype).
void check_layouts(const Case& c, int32_t dt) {
  INFO(c.op << " " << loom::plugin::dtype_name(dt) << " " << c.label);
  const int32_t odt = c.rule == Rule::ToBool ? LOOM_DTYPE_BOOL : dt;
  const int64_t n = static_cast<int64_t>(inputs_for(dt).size());
  {  // contiguous, every input value once
    Tensor a = make(dt, {n}), o = make(odt, {n});
    fill_inputs(a);
    check_call(c, a, o);
  }
  {  // transposed input
    Tensor base = make(dt, {7, 13});
    fill_inputs(base, 3);
    check_call(c, transpose(base, 0, 1), make(odt, {13, 7}));
  }
  {  // broadcast: stride 0 outer (row reused) and inner (one value per run)
    Tensor row = make(dt, {1, 17}), col = make(dt, {9, 1});
    fill_inputs(row, 5);
    fill_inputs(col, 11);
    check_call(c, expand(row, {6, 17}), make(odt, {6, 17}));
    check_call(c, expand(col, {9, 4}), make(odt, {9, 4}));
  }
  {  // offset, step-2 input into an offset output view
    Tensor big = make(dt, {2 * n + 5}), bigo = make(odt, {n + 3});
    fill_inputs(big, 2);
    check_call(c, slice(big, 0, 3, n, 2), slice(bigo, 0, 2, n));
  }
  if (c.rule != Rule::ToBool) {  // in place, contiguous and transposed
    Tensor a = make(dt, {n});
    fill_inputs(a, 1);
    check_call(c, a, a);
    Tensor b = make(dt, {11, 6});
    fill_inputs(b, 4);
    const Tensor bt = transpose(b, 0, 1);
    check_call(c, bt, bt);
  }
  {  // 0-d and empty
    Tensor s = make(dt, {}), so = make(odt, {});
    fill_inputs(s, 7);
    check_call(c, s, so);
    check_call(c, make(dt, {0, 3}), make(odt, {0, 3}));
  }
  if (dt == LOOM_DTYPE_FLOAT32 || dt == LOOM_DTYPE_INT32 || dt == LOOM_DTYPE_BFLOAT16) {
    // past kParallelGrain: the OpenMP paths, contiguous and strided
    Tensor a = make(dt, {200, 210}), o = make(odt, {200, 210});
    fill_inputs(a, 9);
    check_call(c, a, o);
    Tensor b = make(dt, {210, 200});
    fill_inputs(b, 13);
    check_call(c, transpose(b, 0, 1), o);
  }
}

void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases)
    for (int32_t dt : dtypes_of(c)) check_layouts(c, dt);
}

}  // namespace

TEST_CASE("unary same-dtype ops: abs sign square floor ceil trunc round nan_to_num clamp",
          "[unary][cpu]") {
  check_cases(same_dtype_cases());
}

TEST_CASE("unary float-rule ops: exp2 ... erf in every floating dtype", "[unary][cpu]") {
  check_cases(float_cases());
}

TEST_CASE("unary activations: gelu silu softplus elu leaky_relu", "[unary][cpu]") {
  check_cases(activation_cases());
}

TEST_CASE("unary to-bool ops read the input in its own dtype", "[unary][cpu]") {
  check_cases(bool_cases());
}

TEST_CASE("unary known answers and edge values", "[unary][cpu]") {
  const long double inf = std::numeric_limits<long double>::infinity();
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  // abs(INT_MIN) wraps; square overflow wraps.
  CHECK(run1("abs", LOOM_DTYPE_INT8, -128) == -128);
  CHECK(run1("abs", LOOM_DTYPE_INT64, -9223372036854775808.0L) == -9223372036854775808.0L);
  CHECK(run1("square", LOOM_DTYPE_INT8, 16) == 0);
  CHECK(run1("square", LOOM_DTYPE_INT32, 65536) == 0);
  CHECK(run1("square", LOOM_DTYPE_UINT8, 255) == 1);
  // sign: NaN gives 0; -0 gives +0.
  CHECK(run1("sign", LOOM_DTYPE_FLOAT32, nan) == 0);
  CHECK(!std::signbit(run1("sign", LOOM_DTYPE_FLOAT32, -0.0L)));
  CHECK(run1("sign", LOOM_DTYPE_FLOAT16, -inf) == -1);
  // round half to even, with decimals.
  CHECK(run1("round", LOOM_DTYPE_FLOAT32, 2.5L, {int_value(0)}) == 2);
  CHECK(run1("round", LOOM_DTYPE_FLOAT32, -0.5L, {int_value(0)}) == 0);
  CHECK(std::signbit(run1("round", LOOM_DTYPE_FLOAT32, -0.5L, {int_value(0)})));
  CHECK(run1("round", LOOM_DTYPE_FLOAT64, 1.25L, {int_value(1)}) == static_cast<long double>(1.2));
  CHECK(run1("round", LOOM_DTYPE_FLOAT64, 1250, {int_value(-2)}) == 1200);
  CHECK(run1("round", LOOM_DTYPE_INT32, 1251, {int_value(-2)}) == 1251);
  // Exactness at integers and powers of two.
  CHECK(run1("exp2", LOOM_DTYPE_FLOAT32, 10) == 1024);
  CHECK(run1("exp2", LOOM_DTYPE_FLOAT32, -149) == std::ldexp(1.0L, -149));
  CHECK(run1("log2", LOOM_DTYPE_FLOAT32, 0x1p-140L) == -140);
  CHECK(run1("log", LOOM_DTYPE_FLOAT32, 1) == 0);
  // Special values.
  CHECK(run1("log", LOOM_DTYPE_FLOAT32, -0.0L) == -inf);
  CHECK(std::isnan(run1("log", LOOM_DTYPE_BFLOAT16, -1)));
  CHECK(run1("log1p", LOOM_DTYPE_FLOAT32, -1) == -inf);
  CHECK(run1("rsqrt", LOOM_DTYPE_FLOAT32, -0.0L) == -inf);
  CHECK(run1("reciprocal", LOOM_DTYPE_FLOAT16, 0.0L) == inf);
  CHECK(std::signbit(run1("expm1", LOOM_DTYPE_FLOAT32, -0.0L)));
  CHECK(std::signbit(run1("sin", LOOM_DTYPE_FLOAT32, -0.0L)));
  CHECK(std::isnan(run1("cos", LOOM_DTYPE_FLOAT32, inf)));
  CHECK(run1("tanh", LOOM_DTYPE_FLOAT32, -inf) == -1);
  CHECK(run1("sigmoid", LOOM_DTYPE_FLOAT32, -1000) == 0);
  CHECK(run1("sigmoid", LOOM_DTYPE_FLOAT64, -1000) == 0);
  CHECK(run1("sigmoid", LOOM_DTYPE_FLOAT64, 1000) == 1);
  CHECK(run1("erf", LOOM_DTYPE_FLOAT32, inf) == 1);
  // gelu for very negative x has no cancellation: x * Phi(x), tiny but nonzero.
  const long double g = run1("gelu", LOOM_DTYPE_FLOAT32, -10, {string_value("none")});
  CHECK(g < 0);
  CHECK(std::fabs(g - -7.6198530241605260e-23L) < 1e-29L);
  // clamp: NaN stays NaN, lo > hi gives hi, one-sided, NaN bound, saturated int bound.
  const LoomValue none = none_value();
  CHECK(std::isnan(run1("clamp", LOOM_DTYPE_FLOAT32, nan, {float_value(0), float_value(1)})));
  CHECK(run1("clamp", LOOM_DTYPE_FLOAT32, 0.5L, {float_value(2), float_value(1)}) == 1);
  CHECK(run1("clamp", LOOM_DTYPE_FLOAT32, -inf, {none, float_value(1)}) == -inf);
  CHECK(std::isnan(run1("clamp", LOOM_DTYPE_FLOAT32, 0.5L, {float_value(NAN), none})));
  CHECK(run1("clamp", LOOM_DTYPE_INT8, 5, {int_value(300), none}) == 127);
  CHECK(run1("clamp", LOOM_DTYPE_INT8, 5, {none, int_value(-300)}) == -128);
  // nan_to_num with explicit values and with the defaults (NONE).
  CHECK(run1("nan_to_num", LOOM_DTYPE_FLOAT16, inf, {none, none, none}) == 65504);
  CHECK(run1("nan_to_num", LOOM_DTYPE_FLOAT16, -inf, {none, none, none}) == -65504);
  CHECK(run1("nan_to_num", LOOM_DTYPE_FLOAT32, nan, {float_value(7), none, none}) == 7);
  CHECK(run1("nan_to_num", LOOM_DTYPE_INT32, 5, {float_value(7), none, none}) == 5);
  // to-bool ops.
  CHECK(run1("isnan", LOOM_DTYPE_FLOAT16, nan) == 1);
  CHECK(run1("isinf", LOOM_DTYPE_BFLOAT16, -inf) == 1);
  CHECK(run1("isfinite", LOOM_DTYPE_INT64, 5) == 1);
  CHECK(run1("logical_not", LOOM_DTYPE_FLOAT32, -0.0L) == 1);
  CHECK(run1("logical_not", LOOM_DTYPE_FLOAT32, nan) == 0);
}

TEST_CASE("exp_, neg_ and relu_ run in place", "[unary][cpu]") {
  Tensor a = make(LOOM_DTYPE_FLOAT32, {3, 4});
  fill_pattern(a, 1);
  const Tensor at = transpose(a, 0, 1);
  std::vector<long double> before;
  for_each_index(at.shape, [&](const std::vector<int64_t>& i) { before.push_back(get(at, i)); });
  run("neg_", {at.desc()}, {at.desc()});
  run("relu_", {at.desc()}, {at.desc()});
  run("exp_", {at.desc()}, {at.desc()});
  size_t k = 0;
  for_each_index(at.shape, [&](const std::vector<int64_t>& i) {
    const long double want = std::exp(std::max(-before[k++], 0.0L));
    CHECK(std::fabs(get(at, i) - want) <= 2e-7L * want);
  });
}

TEST_CASE("unary kernels are registered with their rule's dtype mask", "[unary][cpu]") {
  const FakeHost& h = host();
  for (const auto& [op, mask, in_place] : registrations()) {
    INFO(op);
    REQUIRE(h.kernels.count(op) == 1);
    CHECK(h.kernels.at(op).dtypes == mask);
    CHECK(h.kernels.at(op).flags == 0u);
    CHECK(h.kernels.count(op + "_") == (in_place ? 1u : 0u));
    if (in_place) CHECK(h.kernels.at(op + "_").dtypes == mask);
  }
  for (const char* op : {"exp_", "neg_", "relu_"}) CHECK(h.kernels.count(op) == 1);
}

TEST_CASE("unary kernels reject bad calls with errors", "[unary][cpu]") {
  Tensor f = make(LOOM_DTYPE_FLOAT32, {4}), fo = make(LOOM_DTYPE_FLOAT32, {4});
  Tensor i = make(LOOM_DTYPE_INT32, {4}), io = make(LOOM_DTYPE_INT32, {4});
  Tensor b = make(LOOM_DTYPE_BOOL, {4}), bo = make(LOOM_DTYPE_BOOL, {4});
  const LoomValue none = none_value();
  // dtypes outside the rule
  CHECK(status_of("sqrt", {i.desc()}, {io.desc()}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("abs", {b.desc()}, {bo.desc()}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("gelu", {i.desc()}, {io.desc()}, {string_value("none")}) ==
        LOOM_STATUS_UNSUPPORTED);
  // bad values
  CHECK(status_of("gelu", {f.desc()}, {fo.desc()}, {string_value("exact")}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("gelu", {f.desc()}, {fo.desc()}, {string_value("")}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("gelu", {f.desc()}, {fo.desc()}, {int_value(1)}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("gelu", {f.desc()}, {fo.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("round", {f.desc()}, {fo.desc()}, {float_value(1)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("clamp", {f.desc()}, {fo.desc()}, {string_value("1"), none}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("softplus", {f.desc()}, {fo.desc()}, {float_value(1)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("leaky_relu", {f.desc()}, {fo.desc()}, {none}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("nan_to_num", {f.desc()}, {fo.desc()}, {string_value("x"), none, none}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  // malformed calls
  CHECK(status_of("isnan", {f.desc()}, {fo.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("exp2", {f.desc(), f.desc()}, {fo.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("exp2", {f.desc()}, {}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("abs", {i.desc()}, {fo.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor f5 = make(LOOM_DTYPE_FLOAT32, {5});
  CHECK(status_of("tanh", {f.desc()}, {f5.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
}
