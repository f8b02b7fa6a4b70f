// Binary and ternary ops (binary.cpp, binary_compare.cpp, div's rounding
// modes): every op x every dtype its kernel admits, in contiguous, broadcast
// (stride 0), transposed, offset, in-place, 0-d, empty and large (parallel)
// layouts, against long double reference loops; then the edge values of
// docs/kernel_conventions.md ("Elementwise binary and ternary ops").
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <cstring>
#include <limits>

using namespace loom_test;

namespace {

// clang-format off
enum class R {
  Remainder, Pow, Maximum, Minimum, Atan2, Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr,
  LogicalXor, BitwiseAnd, BitwiseOr, BitwiseXor, Where, Lerp, DivTrue, DivTrunc, DivFloor
};
// clang-format on

struct Case {
  R r;
  const char* op;  // kernel name
  int arity;
};

const std::vector<Case>& cases() {
  // clang-format off
  static const std::vector<Case> v{
      {R::Remainder, "remainder", 2}, {R::Pow, "pow", 2}, {R::Maximum, "maximum", 2},
      {R::Minimum, "minimum", 2}, {R::Atan2, "atan2", 2}, {R::Eq, "eq", 2}, {R::Ne, "ne", 2},
      {R::Lt, "lt", 2}, {R::Le, "le", 2}, {R::Gt, "gt", 2}, {R::Ge, "ge", 2},
      {R::LogicalAnd, "logical_and", 2}, {R::LogicalOr, "logical_or", 2},
      {R::LogicalXor, "logical_xor", 2}, {R::BitwiseAnd, "bitwise_and", 2},
      {R::BitwiseOr, "bitwise_or", 2}, {R::BitwiseXor, "bitwise_xor", 2}, {R::Where, "where", 3},
      {R::Lerp, "lerp", 3}, {R::DivTrue, "div", 2}, {R::DivTrunc, "div", 2},
      {R::DivFloor, "div", 2}};
  // clang-format on
  return v;
}

constexpr uint64_t bit(int32_t dt) { return uint64_t{1} << dt; }
constexpr uint64_t kAll = (uint64_t{1} << LOOM_DTYPE_COUNT) - 1;
constexpr uint64_t kFloat = bit(LOOM_DTYPE_FLOAT16) | bit(LOOM_DTYPE_BFLOAT16) |
                            bit(LOOM_DTYPE_FLOAT32) | bit(LOOM_DTYPE_FLOAT64);
constexpr uint64_t kNoBool = kAll & ~bit(LOOM_DTYPE_BOOL);
constexpr uint64_t kIntegral = kAll & ~kFloat;

bool bool_out(R r) { return r >= R::Eq && r <= R::LogicalXor; }
bool is_logical(R r) { return r >= R::LogicalAnd && r <= R::LogicalXor; }

LoomValue str_value(const char* s) {
  LoomValue v{};
  v.kind = LOOM_VALUE_STRING;
  v.u.str.data = s;
  v.u.str.size = static_cast<int64_t>(std::strlen(s));
  return v;
}
LoomValue none_value() { return LoomValue{}; }

std::vector<LoomValue> values_of(R r) {
  if (r == R::DivTrue) return {none_value()};
  if (r == R::DivTrunc) return {str_value("trunc")};
  if (r == R::DivFloor) return {str_value("floor")};
  return {};
}

// The dtypes a case runs in: what its kernel is registered for (div's
// rounding modes: every dtype but bool, whatever div's mask says today).
std::vector<int32_t> dtypes_of(const Case& c) {
  uint64_t mask = host().kernels.at(c.op).dtypes;
  if (c.r == R::DivTrue) mask = kFloat;
  if (c.r == R::DivTrunc || c.r == R::DivFloor) mask = kNoBool;
  std::vector<int32_t> out;
  for (int32_t dt : all_dtypes())
    if (mask & bit(dt)) out.push_back(dt);
  return out;
}

long double wrap(int32_t dt, uint64_t v) {  // two's complement into dt
  switch (dt) {
    case LOOM_DTYPE_BOOL:
      return v != 0;
    case LOOM_DTYPE_UINT8:
      return static_cast<uint8_t>(v);
    case LOOM_DTYPE_INT8:
      return static_cast<int8_t>(v);
    case LOOM_DTYPE_INT16:
      return static_cast<int16_t>(v);
    case LOOM_DTYPE_INT32:
      return static_cast<int32_t>(v);
    default:
      return static_cast<int64_t>(v);
  }
}

// The exact result (before rounding into a floating dtype); integer results
// wrapped into dt. Integer inputs are small except in the edge-case tests.
long double reference(R r, int32_t dt, long double a, long double b, long double c) {
  const bool fl = is_floating(dt);
  const auto ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b);
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  switch (r) {
    case R::Eq:
      return a == b;
    case R::Ne:
      return a != b;
    case R::Lt:
      return a < b;
    case R::Le:
      return a <= b;
    case R::Gt:
      return a > b;
    case R::Ge:
      return a >= b;
    case R::LogicalAnd:
      return a != 0 && b != 0;
    case R::LogicalOr:
      return a != 0 || b != 0;
    case R::LogicalXor:
      return (a != 0) != (b != 0);
    case R::BitwiseAnd:
      return wrap(dt, static_cast<uint64_t>(ia & ib));
    case R::BitwiseOr:
      return wrap(dt, static_cast<uint64_t>(ia | ib));
    case R::BitwiseXor:
      return wrap(dt, static_cast<uint64_t>(ia ^ ib));
    case R::Maximum:
      return std::isnan(a) || std::isnan(b) ? nan : std::max(a, b);
    case R::Minimum:
      return std::isnan(a) || std::isnan(b) ? nan : std::min(a, b);
    case R::Where:
      return a != 0 ? b : c;
    case R::Atan2:
      return std::atan2(a, b);
    case R::DivTrue:
      return a / b;
    case R::Lerp:
      return std::fabs(c) < 0.5L ? a + c * (b - a) : b - (b - a) * (1 - c);
    case R::Remainder: {
      if (fl) {
        long double m = std::fmod(a, b);
        if (m != 0 && (b < 0) != (m < 0)) m += b;
        return m;
      }
      int64_t m = ia % ib;
      if (m != 0 && (ib < 0) != (m < 0)) m += ib;
      return wrap(dt, static_cast<uint64_t>(m));
    }
    case R::DivTrunc:
      return fl ? std::trunc(a / b) : wrap(dt, static_cast<uint64_t>(ia / ib));
    case R::DivFloor: {
      if (!fl) {
        const int64_t q = ia / ib;
        return wrap(dt, static_cast<uint64_t>(ia % ib != 0 && (ia < 0) != (ib < 0) ? q - 1 : q));
      }
      if (b == 0) return a / b;
      const long double q = std::floor(a / b);
      return q == 0 ? std::copysign(0.0L, a / b) : q;
    }
    case R::Pow: {
      if (fl) return std::pow(a, b);
      uint64_t p = 1;  // repeated multiplication, mod 2^64 like every dtype's wrap
      for (int64_t k = 0; k < ib; ++k) p *= static_cast<uint64_t>(ia);
      return wrap(dt, p);
    }
  }
  return 0;
}

bool exact(R r) { return r != R::Pow && r != R::Atan2 && r != R::Lerp && r != R::DivTrue; }

long double max_of(int32_t dt) {
  switch (dt) {
    case LOOM_DTYPE_FLOAT16:
      return 65504.0L;
    case LOOM_DTYPE_BFLOAT16:
      return 3.3895313892515355e38L;
    case LOOM_DTYPE_FLOAT32:
      return 3.4028234663852886e38L;
    default:
      return 1.7976931348623157e308L;
  }
}
long double min_normal(int32_t dt) {
  switch (dt) {
    case LOOM_DTYPE_FLOAT16:
      return 6.103515625e-5L;
    case LOOM_DTYPE_BFLOAT16:
    case LOOM_DTYPE_FLOAT32:
      return 1.1754943508222875e-38L;
    default:
      return 2.2250738585072014e-308L;
  }
}

bool matches(R r, int32_t out_dt, int32_t dt, long double got, long double want,
             long double scale) {
  if (!is_floating(out_dt) || exact(r)) return got == want || (std::isnan(got) && std::isnan(want));
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(got) && std::fabs(want) > max_of(dt))
    return std::signbit(got) == std::signbit(want);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= 4 * eps_of(dt) * (std::fabs(want) + scale) + min_normal(dt);
}

int32_t in_dtype(R r, int k, int32_t dt) { return r == R::Where && k == 0 ? LOOM_DTYPE_BOOL : dt; }

// Pattern values, adjusted where an integer op needs valid inputs: nonzero
// divisors, exponents 0..7.
void fill_operand(R r, int k, const Tensor& t, int seed) {
  fill_pattern(t, seed);
  if (is_floating(t.dtype) || t.dtype == LOOM_DTYPE_BOOL || k != 1) return;
  for_each_index(t.shape, [&](const std::vector<int64_t>& idx) {
    const long double v = get(t, idx);
    if ((r == R::Remainder || r == R::DivTrunc || r == R::DivFloor) && v == 0) set(t, idx, 7);
    if (r == R::Pow) set(t, idx, std::fmod(std::fabs(v), 8.0L));
  });
}

// Runs the case into `out` and checks every element against the reference
// computed from the inputs as they were before the call (out may alias one).
void check_case(const Case& c, int32_t dt, const Tensor& out, const std::vector<Tensor>& ins) {
  std::vector<long double> want, scale;
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    long double x[3] = {0, 0, 0};
    for (size_t k = 0; k < ins.size(); ++k) x[k] = get(ins[k], idx);
    want.push_back(reference(c.r, dt, x[0], x[1], x[2]));
    scale.push_back(c.r == R::Lerp ? std::fabs(x[0]) + std::fabs(x[1]) : 0);
  });
  std::vector<LoomTensorDesc> descs;
  for (const Tensor& t : ins) descs.push_back(t.desc());
  run(c.op, descs, {out.desc()}, values_of(c.r));
  size_t i = 0;
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    const long double got = get(out, idx);
    if (!matches(c.r, out.dtype, dt, got, want[i], scale[i]))
      FAIL_CHECK(c.op << " " << loom::plugin::dtype_name(dt) << " at element " << i << ": got "
                      << static_cast<double>(got) << ", want " << static_cast<double>(want[i]));
    ++i;
  });
}

std::vector<Tensor> make_inputs(const Case& c, int32_t dt, const std::vector<int64_t>& shape,
                                int seed) {
  std::vector<Tensor> ins;
  for (int k = 0; k < c.arity; ++k) {
    ins.push_back(make(in_dtype(c.r, k, dt), shape));
    fill_operand(c.r, k, ins.back(), seed + k);
  }
  return ins;
}

void check_layouts(const Case& c, int32_t dt) {
  INFO(c.op << " " << loom::plugin::dtype_name(dt) << " case " << static_cast<int>(c.r));
  const int32_t out_dt = bool_out(c.r) ? LOOM_DTYPE_BOOL : dt;
  const std::vector<int64_t> s{3, 4, 5};
  check_case(c, dt, make(out_dt, s), make_inputs(c, dt, s, 1));  // contiguous
  {  // broadcast: mixed [1,4,1] / [3,1,5] / [1,1,1]; then one scalar among full operands
    const std::vector<std::vector<int64_t>> small{{1, 4, 1}, {3, 1, 5}, {1, 1, 1}};
    std::vector<Tensor> ins;
    for (int k = 0; k < c.arity; ++k) {
      Tensor t = make(in_dtype(c.r, k, dt), small[static_cast<size_t>(k)]);
      fill_operand(c.r, k, t, 3 + k);
      ins.push_back(expand(t, s));
    }
    check_case(c, dt, make(out_dt, s), ins);
    for (int b = 0; b < c.arity; ++b) {
      std::vector<Tensor> mixed = make_inputs(c, dt, s, 5);
      Tensor one = make(in_dtype(c.r, b, dt), {1, 1, 1});
      fill_operand(c.r, b, one, 9 + b);
      mixed[static_cast<size_t>(b)] = expand(one, s);
      check_case(c, dt, make(out_dt, s), mixed);
    }
  }
  {  // transposed first input, offset strided output
    std::vector<Tensor> ins = make_inputs(c, dt, s, 11);
    Tensor t0 = make(in_dtype(c.r, 0, dt), {5, 4, 3});
    fill_operand(c.r, 0, t0, 12);
    ins[0] = transpose(t0, 0, 2);
    const Tensor big = make(out_dt, {4, 9, 11});
    check_case(c, dt, slice(slice(slice(big, 1, 2, 4), 2, 1, 5, 2), 0, 1, 3), ins);
  }
  // In place: out aliases inputs[0] (where: self). Bool-result ops only
  // where the output may have the inputs' dtype (logical ops) or it is bool.
  if (!bool_out(c.r) || is_logical(c.r) || dt == LOOM_DTYPE_BOOL) {
    const size_t self = c.r == R::Where ? 1 : 0;
    std::vector<Tensor> ins = make_inputs(c, dt, {6, 7}, 13);
    check_case(c, dt, ins[self], ins);
    ins = make_inputs(c, dt, {7, 6}, 14);
    for (Tensor& t : ins) t = transpose(t, 0, 1);
    check_case(c, dt, ins[self], ins);
  }
  check_case(c, dt, make(out_dt, {}), make_inputs(c, dt, {}, 15));          // 0-d
  check_case(c, dt, make(out_dt, {0, 3}), make_inputs(c, dt, {0, 3}, 16));  // empty
  {  // large enough for the OpenMP paths: contiguous, transposed, broadcast row
    const std::vector<int64_t> l{256, 300};
    check_case(c, dt, make(out_dt, l), make_inputs(c, dt, l, 17));
    std::vector<Tensor> ins = make_inputs(c, dt, l, 18);
    Tensor t = make(in_dtype(c.r, 0, dt), {300, 256});
    fill_operand(c.r, 0, t, 19);
    ins[0] = transpose(t, 0, 1);
    check_case(c, dt, make(out_dt, l), ins);
    Tensor row = make(in_dtype(c.r, 1, dt), {1, 300});
    fill_operand(c.r, 1, row, 20);
    ins[1] = expand(row, l);
    check_case(c, dt, make(out_dt, l), ins);
  }
}

// 1-d tensor of the given values.
Tensor vec(int32_t dt, const std::vector<long double>& v) {
  Tensor t = make(dt, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) set(t, {static_cast<int64_t>(i)}, v[i]);
  return t;
}

// Runs op(a, b[, c]) into a fresh tensor of out_dt and returns its values.
std::vector<long double> eval(const std::string& op, int32_t out_dt, const std::vector<Tensor>& ins,
                              const std::vector<LoomValue>& values = {}) {
  Tensor out = make(out_dt, ins.at(0).shape);
  std::vector<LoomTensorDesc> descs;
  for (const Tensor& t : ins) descs.push_back(t.desc());
  run(op, descs, {out.desc()}, values);
  std::vector<long double> v;
  for (int64_t i = 0; i < out.numel(); ++i) v.push_back(get(out, {i}));
  return v;
}

// The error of a call that must fail, as (code, message).
std::pair<int32_t, std::string> error_of(const std::string& op,
                                         const std::vector<LoomTensorDesc>& ins,
                                         const std::vector<LoomTensorDesc>& outs,
                                         const std::vector<LoomValue>& values = {}) {
  LoomError* e = call(op, ins, outs, values);
  REQUIRE(e != nullptr);
  std::pair<int32_t, std::string> r{e->code, e->message};
  e->destroy(e);
  return r;
}

const long double kNaN = std::numeric_limits<long double>::quiet_NaN();
const long double kInf = std::numeric_limits<long double>::infinity();
const std::vector<int32_t> kFloats{LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32,
                                   LOOM_DTYPE_FLOAT64};
const std::vector<int32_t> kSigned{LOOM_DTYPE_INT8, LOOM_DTYPE_INT16, LOOM_DTYPE_INT32,
                                   LOOM_DTYPE_INT64};

long double int_min(int32_t dt) {
  switch (dt) {
    case LOOM_DTYPE_INT8:
      return -128;
    case LOOM_DTYPE_INT16:
      return -32768;
    case LOOM_DTYPE_INT32:
      return -2147483648.0L;
    default:
      return -9223372036854775808.0L;
  }
}

}  // namespace

TEST_CASE("binary kernels are registered with the doc's compute dtypes", "[binary][cpu]") {
  // clang-format off
  const std::vector<std::pair<const char*, uint64_t>> want{
      {"remainder", kNoBool}, {"remainder_", kNoBool}, {"pow", kNoBool}, {"pow_", kNoBool},
      {"maximum", kAll}, {"minimum", kAll}, {"atan2", kFloat}, {"atan2_", kFloat},
      {"eq", kAll}, {"ne", kAll}, {"lt", kAll}, {"le", kAll}, {"gt", kAll}, {"ge", kAll},
      {"logical_and", kAll}, {"logical_or", kAll}, {"logical_xor", kAll},
      {"logical_and_", kAll}, {"logical_or_", kAll}, {"logical_xor_", kAll},
      {"bitwise_and", kIntegral}, {"bitwise_or", kIntegral}, {"bitwise_xor", kIntegral},
      {"bitwise_and_", kIntegral}, {"bitwise_or_", kIntegral}, {"bitwise_xor_", kIntegral},
      {"where", kAll}, {"lerp", kFloat}, {"lerp_", kFloat}, {"sub_", kNoBool}, {"div_", kNoBool}};
  // clang-format on
  const FakeHost& h = host();
  for (const auto& [op, mask] : want) {
    INFO(op);
    REQUIRE(h.kernels.count(op) == 1);
    CHECK(h.kernels.at(op).dtypes == mask);
    CHECK(h.kernels.at(op).flags == 0);
    CHECK(h.kernels.at(op).line > 0);
  }
  CHECK(h.kernels.count("maximum_") == 0);  // not a PyTorch op
  // In-place forms are the out-of-place kernels.
  for (const char* op :
       {"sub", "div", "remainder", "pow", "atan2", "lerp", "logical_and", "bitwise_xor"})
    CHECK(h.kernels.at(op).fn == h.kernels.at(std::string(op) + "_").fn);
}

TEST_CASE("binary ops match the reference for every dtype in every layout", "[binary][cpu]") {
  for (const Case& c : cases())
    for (int32_t dt : dtypes_of(c)) check_layouts(c, dt);
}

TEST_CASE("integer division and remainder: signs, INT_MIN / -1, division by zero",
          "[binary][cpu]") {
  const std::vector<LoomValue> trunc{str_value("trunc")}, floor{str_value("floor")};
  for (int32_t dt : kSigned) {
    INFO(loom::plugin::dtype_name(dt));
    const Tensor a = vec(dt, {-7, 7, -7, 7, int_min(dt), int_min(dt), 0});
    const Tensor b = vec(dt, {2, -2, -2, 2, -1, 1, -3});
    CHECK(eval("div", dt, {a, b}, trunc) ==
          std::vector<long double>{-3, -3, 3, 3, int_min(dt), int_min(dt), 0});
    CHECK(eval("div", dt, {a, b}, floor) ==
          std::vector<long double>{-4, -4, 3, 3, int_min(dt), int_min(dt), 0});
    CHECK(eval("remainder", dt, {a, b}) == std::vector<long double>{1, -1, -1, 1, 0, 0, 0});
    const Tensor z = vec(dt, {1, 2, 0, 4, 5, 6, 7});
    for (const auto& values : {trunc, floor}) {
      const auto [code, msg] =
          error_of("div", {a.desc(), z.desc()}, {make(dt, {7}).desc()}, values);
      CHECK(code == LOOM_STATUS_INVALID_ARGUMENT);
      CHECK(msg.find("division by zero") != std::string::npos);
    }
    // In place: the zero is found before anything is written.
    const Tensor self = vec(dt, {9, 9, 9, 9, 9, 9, 9});
    CHECK(error_of("remainder_", {self.desc(), z.desc()}, {self.desc()}).first ==
          LOOM_STATUS_INVALID_ARGUMENT);
    for (int64_t k = 0; k < 7; ++k) CHECK(get(self, {k}) == 9);
  }
  const Tensor u = vec(LOOM_DTYPE_UINT8, {255, 7, 0}), v = vec(LOOM_DTYPE_UINT8, {7, 255, 3});
  CHECK(eval("div", LOOM_DTYPE_UINT8, {u, v}, floor) == std::vector<long double>{36, 0, 0});
  CHECK(eval("remainder", LOOM_DTYPE_UINT8, {u, v}) == std::vector<long double>{3, 7, 0});
  // A zero divisor at the very end of a large (parallel, strided) tensor.
  Tensor big = make(LOOM_DTYPE_INT32, {300, 256}), d = make(LOOM_DTYPE_INT32, {256, 300});
  fill_pattern(big, 1);
  for_each_index(d.shape, [&](const std::vector<int64_t>& idx) { set(d, idx, 3); });
  set(d, {255, 299}, 0);
  const Tensor dt_ = transpose(d, 0, 1);
  CHECK(status_of("remainder", {big.desc(), dt_.desc()},
                  {make(LOOM_DTYPE_INT32, {300, 256}).desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("pow: exact wrapping integers, negative exponents, float specials", "[binary][cpu]") {
  for (int32_t dt : kSigned) {
    INFO(loom::plugin::dtype_name(dt));
    CHECK(eval("pow", dt, {vec(dt, {0, 2, -2, 1, -1, -1, 5}), vec(dt, {0, 5, 3, -5, -3, -2, 0})}) ==
          std::vector<long double>{1, 32, -8, 1, -1, 1, 1});
    for (long double base : {2.0L, 0.0L, -3.0L}) {
      const auto [code, msg] = error_of("pow", {vec(dt, {1, base}).desc(), vec(dt, {1, -1}).desc()},
                                        {make(dt, {2}).desc()});
      CHECK(code == LOOM_STATUS_INVALID_ARGUMENT);
      CHECK(msg.find("Integers to negative integer powers are not allowed.") != std::string::npos);
    }
    // Wrapping: 3^40 and (-2)^(bits-1) = INT_MIN.
    const int bits = static_cast<int>(loom::plugin::dtype_itemsize(dt)) * 8;
    uint64_t p = 1;
    for (int k = 0; k < 40; ++k) p *= 3;
    CHECK(eval("pow", dt, {vec(dt, {3, -2}), vec(dt, {40, static_cast<long double>(bits - 1)})}) ==
          std::vector<long double>{wrap(dt, p), int_min(dt)});
  }
  CHECK(eval("pow", LOOM_DTYPE_UINT8,
             {vec(LOOM_DTYPE_UINT8, {2, 3, 0}), vec(LOOM_DTYPE_UINT8, {8, 5, 0})}) ==
        std::vector<long double>{0, 243, 1});
  for (int32_t dt : kFloats) {
    INFO(loom::plugin::dtype_name(dt));
    const auto r = eval(
        "pow", dt,
        {vec(dt, {0, 0, -8, kNaN, 1, 4, -2, 0}), vec(dt, {0, -1, 1.0L / 3, 0, kNaN, 0.5, 3, 0.5})});
    CHECK(r[0] == 1);
    CHECK(r[1] == kInf);
    CHECK(std::isnan(r[2]));
    CHECK(r[3] == 1);
    CHECK(r[4] == 1);
    CHECK(r[5] == 2);
    CHECK(r[6] == -8);
    CHECK(r[7] == 0);
  }
}

TEST_CASE("maximum/minimum propagate NaN; comparisons on NaN, Inf and signed zero",
          "[binary][cpu]") {
  for (int32_t dt : kFloats) {
    INFO(loom::plugin::dtype_name(dt));
    const Tensor a = vec(dt, {kNaN, 1, -kInf, -0.0L, kNaN, 3});
    const Tensor b = vec(dt, {1, kNaN, 3, 0, kNaN, kInf});
    const auto mx = eval("maximum", dt, {a, b}), mn = eval("minimum", dt, {a, b});
    CHECK((std::isnan(mx[0]) && std::isnan(mx[1]) && std::isnan(mx[4])));
    CHECK((std::isnan(mn[0]) && std::isnan(mn[1]) && std::isnan(mn[4])));
    CHECK((mx[2] == 3 && mx[3] == 0 && mx[5] == kInf));
    CHECK((mn[2] == -kInf && mn[3] == 0 && mn[5] == 3));
    CHECK(eval("eq", LOOM_DTYPE_BOOL, {a, b}) == std::vector<long double>{0, 0, 0, 1, 0, 0});
    CHECK(eval("ne", LOOM_DTYPE_BOOL, {a, b}) == std::vector<long double>{1, 1, 1, 0, 1, 1});
    CHECK(eval("lt", LOOM_DTYPE_BOOL, {a, b}) == std::vector<long double>{0, 0, 1, 0, 0, 1});
    CHECK(eval("le", LOOM_DTYPE_BOOL, {a, b}) == std::vector<long double>{0, 0, 1, 1, 0, 1});
    CHECK(eval("gt", LOOM_DTYPE_BOOL, {a, b}) == std::vector<long double>{0, 0, 0, 0, 0, 0});
    CHECK(eval("ge", LOOM_DTYPE_BOOL, {a, b}) == std::vector<long double>{0, 0, 0, 1, 0, 0});
    // NaN is truthy; -0 is not.
    CHECK(eval("logical_and", LOOM_DTYPE_BOOL, {a, b}) ==
          std::vector<long double>{1, 1, 1, 0, 1, 1});
    CHECK(eval("logical_xor", LOOM_DTYPE_BOOL, {a, b}) ==
          std::vector<long double>{0, 0, 0, 0, 0, 0});
  }
}

TEST_CASE("float remainder and rounding division at special values", "[binary][cpu]") {
  const std::vector<LoomValue> trunc{str_value("trunc")}, floor{str_value("floor")};
  for (int32_t dt : kFloats) {
    INFO(loom::plugin::dtype_name(dt));
    const Tensor a = vec(dt, {5, -5, 5, kInf, -7.5, 0.25, -0.25, -0.0L, 5, -5, 0});
    const Tensor b = vec(dt, {kInf, kInf, 0, 2, 2, -1, 1, 3, 0, 0, 0});
    const auto rem = eval("remainder", dt, {a, b});
    CHECK((rem[0] == 5 && rem[1] == kInf && std::isnan(rem[2]) && std::isnan(rem[3])));
    CHECK((rem[4] == 0.5 && rem[5] == -0.75 && rem[6] == 0.75));
    const auto fl = eval("div", dt, {a, b}, floor);
    CHECK((fl[0] == 0 && fl[1] == -1 && fl[2] == kInf && std::isnan(fl[3])));
    CHECK((fl[4] == -4 && fl[5] == -1 && fl[6] == -1 && fl[8] == kInf && fl[9] == -kInf));
    CHECK((fl[7] == 0 && std::signbit(fl[7]) && !std::signbit(fl[0]) && std::isnan(fl[10])));
    const auto tr = eval("div", dt, {a, b}, trunc);
    CHECK((tr[0] == 0 && tr[2] == kInf && tr[4] == -3 && tr[5] == 0 && std::signbit(tr[5])));
  }
  // Floor division via fmod: 1 // 0.1 is 9 (1 / 0.1 rounds to 10).
  CHECK(eval("div", LOOM_DTYPE_FLOAT64,
             {vec(LOOM_DTYPE_FLOAT64, {1}), vec(LOOM_DTYPE_FLOAT64, {0.1L})}, floor)[0] == 9);
  CHECK(eval("div", LOOM_DTYPE_FLOAT32,
             {vec(LOOM_DTYPE_FLOAT32, {1}), vec(LOOM_DTYPE_FLOAT32, {static_cast<float>(0.1)})},
             floor)[0] == 9);
}

TEST_CASE("div: rounding_mode values and the dtypes each mode takes", "[binary][cpu]") {
  const Tensor i = vec(LOOM_DTYPE_INT32, {7, -7}), j = vec(LOOM_DTYPE_INT32, {2, 2});
  const Tensor o = make(LOOM_DTYPE_INT32, {2});
  CHECK(status_of("div", {i.desc(), j.desc()}, {o.desc()}, {none_value()}) ==
        LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("div", {i.desc(), j.desc()}, {o.desc()}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(error_of("div", {i.desc(), j.desc()}, {o.desc()}, {str_value("round")}).first ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("div", {i.desc(), j.desc()}, {o.desc()}, {int_value(1)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  const Tensor t = vec(LOOM_DTYPE_BOOL, {1, 1});
  CHECK(status_of("div", {t.desc(), t.desc()}, {t.desc()}, {str_value("floor")}) ==
        LOOM_STATUS_UNSUPPORTED);
  // A NONE value is true division, like no value at all.
  const Tensor f = vec(LOOM_DTYPE_FLOAT32, {7, -7}), g = vec(LOOM_DTYPE_FLOAT32, {2, 2});
  CHECK(eval("div", LOOM_DTYPE_FLOAT32, {f, g}, {none_value()}) ==
        std::vector<long double>{3.5, -3.5});
  // div_ in place on integers with a rounding mode.
  const Tensor self = vec(LOOM_DTYPE_INT64, {7, -7});
  run("div_", {self.desc(), vec(LOOM_DTYPE_INT64, {2, 2}).desc()}, {self.desc()},
      {str_value("floor")});
  CHECK((get(self, {0}) == 3 && get(self, {1}) == -4));
}

TEST_CASE("lerp endpoints and branches; where keeps bit patterns", "[binary][cpu]") {
  for (int32_t dt : kFloats) {
    INFO(loom::plugin::dtype_name(dt));
    const auto r = eval("lerp", dt,
                        {vec(dt, {1, 1, 1, 1, -2, 1}), vec(dt, {3, 3, 3, 3, 6, 3}),
                         vec(dt, {0, 1, 0.25, 0.75, -1, kNaN})});
    CHECK(
        (r[0] == 1 && r[1] == 3 && r[2] == 1.5 && r[3] == 2.5 && r[4] == -10 && std::isnan(r[5])));
    const auto w =
        eval("where", dt,
             {vec(LOOM_DTYPE_BOOL, {1, 0, 1}), vec(dt, {-0.0L, 1, kNaN}), vec(dt, {0, -0.0L, 2})});
    CHECK((w[0] == 0 && std::signbit(w[0]) && w[1] == 0 && std::signbit(w[1]) && std::isnan(w[2])));
  }
}

TEST_CASE("in-place logical ops write 0/1 in self's dtype; bitwise on bool", "[binary][cpu]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT16}) {
    const Tensor self = vec(dt, {0, 2.5, 3, 0});
    const Tensor other = vec(dt, {1, 0, -1, 0});
    run("logical_or_", {self.desc(), other.desc()}, {self.desc()});
    CHECK(eval("eq", LOOM_DTYPE_BOOL, {self, vec(dt, {1, 1, 1, 0})}) ==
          std::vector<long double>(4, 1));
  }
  const Tensor p = vec(LOOM_DTYPE_BOOL, {0, 0, 1, 1}), q = vec(LOOM_DTYPE_BOOL, {0, 1, 0, 1});
  CHECK(eval("bitwise_and", LOOM_DTYPE_BOOL, {p, q}) == std::vector<long double>{0, 0, 0, 1});
  CHECK(eval("bitwise_or", LOOM_DTYPE_BOOL, {p, q}) == std::vector<long double>{0, 1, 1, 1});
  CHECK(eval("bitwise_xor", LOOM_DTYPE_BOOL, {p, q}) == std::vector<long double>{0, 1, 1, 0});
  CHECK(eval("maximum", LOOM_DTYPE_BOOL, {p, q}) == std::vector<long double>{0, 1, 1, 1});
  CHECK(eval("minimum", LOOM_DTYPE_BOOL, {p, q}) == std::vector<long double>{0, 0, 0, 1});
}

TEST_CASE("binary kernels reject bad calls", "[binary][cpu]") {
  const Tensor f = make(LOOM_DTYPE_FLOAT32, {4}), i = make(LOOM_DTYPE_INT32, {4}),
               b = make(LOOM_DTYPE_BOOL, {4}), five = make(LOOM_DTYPE_FLOAT32, {5});
  Tensor bad = f;
  bad.dtype = 42;
  const auto st = [](const char* op, std::vector<Tensor> ins, const Tensor& out) {
    std::vector<LoomTensorDesc> d;
    for (const Tensor& t : ins) d.push_back(t.desc());
    return status_of(op, d, {out.desc()});
  };
  CHECK(st("bitwise_and", {f, f}, f) == LOOM_STATUS_UNSUPPORTED);
  CHECK(st("atan2", {i, i}, i) == LOOM_STATUS_UNSUPPORTED);
  CHECK(st("lerp", {i, i, i}, i) == LOOM_STATUS_UNSUPPORTED);
  CHECK(st("remainder", {b, b}, b) == LOOM_STATUS_UNSUPPORTED);
  CHECK(st("pow", {bad, bad}, bad) == LOOM_STATUS_UNSUPPORTED);
  CHECK(st("where", {b, bad, bad}, bad) == LOOM_STATUS_UNSUPPORTED);
  CHECK(st("eq", {bad, bad}, b) == LOOM_STATUS_UNSUPPORTED);
  CHECK(st("where", {i, f, f}, f) == LOOM_STATUS_INVALID_ARGUMENT);     // condition not bool
  CHECK(st("eq", {f, f}, i) == LOOM_STATUS_INVALID_ARGUMENT);           // result not bool
  CHECK(st("eq", {f, f}, f) == LOOM_STATUS_INVALID_ARGUMENT);           // no eq_ form
  CHECK(st("logical_and", {f, f}, i) == LOOM_STATUS_INVALID_ARGUMENT);  // neither bool nor self's
  CHECK(st("maximum", {f, i}, f) == LOOM_STATUS_INVALID_ARGUMENT);      // mixed dtypes
  CHECK(st("lt", {f, i}, b) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(st("minimum", {f, five}, f) == LOOM_STATUS_INVALID_ARGUMENT);  // shape
  CHECK(st("lerp", {f, f}, f) == LOOM_STATUS_INVALID_ARGUMENT);        // arity
  CHECK(st("where", {b, f, f, f}, f) == LOOM_STATUS_INVALID_ARGUMENT);
}
