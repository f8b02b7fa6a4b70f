// add, sub, mul, div, neg, relu, exp: every dtype the op takes, in
// contiguous, broadcast (stride 0), transposed, offset, in-place, 0-d, empty
// and large (parallel) layouts, against long double reference loops.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <limits>

using namespace loom_test;

namespace {

enum class Op { Add, Sub, Mul, Div, Neg, Relu, Exp };

const char* op_name(Op op) {
  switch (op) {
    case Op::Add: return "add";
    case Op::Sub: return "sub";
    case Op::Mul: return "mul";
    case Op::Div: return "div";
    case Op::Neg: return "neg";
    case Op::Relu: return "relu";
    case Op::Exp: return "exp";
  }
  return "?";
}
// Largest finite value of a floating dtype (beyond it a result is inf).
long double max_of(int32_t dt) {
  switch (dt) {
    case LOOM_DTYPE_FLOAT16: return 65504.0L;
    case LOOM_DTYPE_BFLOAT16: return 3.3895313892515355e38L;
    case LOOM_DTYPE_FLOAT32: return 3.4028234663852886e38L;
    default: return 1.7976931348623157e308L;
  }
}

bool is_binary(Op op) { return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div; }
bool has_alpha(Op op) { return op == Op::Add || op == Op::Sub; }

std::vector<int32_t> dtypes_of(Op op) {
  std::vector<int32_t> out;
  for (int32_t dt : all_dtypes()) {
    if ((op == Op::Div || op == Op::Exp) && !is_floating(dt)) continue;
    if ((op == Op::Sub || op == Op::Neg || op == Op::Relu) && dt == LOOM_DTYPE_BOOL) continue;
    out.push_back(dt);
  }
  return out;
}

// The exact result before rounding to dt (integers: wrapped to dt).
long double reference(Op op, int32_t dt, long double a, long double b, long double alpha) {
  if (dt == LOOM_DTYPE_BOOL) {
    switch (op) {
      case Op::Add: return (a != 0 || (alpha != 0 && b != 0)) ? 1 : 0;
      case Op::Mul: return (a != 0 && b != 0) ? 1 : 0;
      default: return 0;
    }
  }
  long double r = 0;
  switch (op) {
    case Op::Add: r = a + alpha * b; break;
    case Op::Sub: r = a - alpha * b; break;
    case Op::Mul: r = a * b; break;
    case Op::Div: r = a / b; break;
    case Op::Neg: r = -a; break;
    case Op::Relu: r = a < 0 ? 0 : a; break;
    case Op::Exp: r = std::exp(a); break;
  }
  if (!is_floating(dt)) {  // wrap like two's complement
    const int64_t w = static_cast<int64_t>(r);
    switch (dt) {
      case LOOM_DTYPE_UINT8: return static_cast<uint8_t>(w);
      case LOOM_DTYPE_INT8: return static_cast<int8_t>(w);
      case LOOM_DTYPE_INT16: return static_cast<int16_t>(w);
      case LOOM_DTYPE_INT32: return static_cast<int32_t>(w);
      default: return w;
    }
  }
  return r;
}

// Runs op on (a[, b]) into out and compares with the reference computed
// from the inputs as they were before the call (out may alias a).
void check_op(Op op, const Tensor& out, const Tensor& a, const Tensor* b, long double alpha = 1) {
  const int32_t dt = out.dtype;
  std::vector<long double> want, scale;
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    const long double x = get(a, idx);
    const long double y = b ? get(*b, idx) : 0;
    want.push_back(reference(op, dt, x, y, alpha));
    scale.push_back(std::fabs(x) + std::fabs(alpha * y));
  });
  std::vector<LoomValue> values;
  if (has_alpha(op)) {
    if (std::floor(alpha) == alpha) values.push_back(int_value(static_cast<int64_t>(alpha)));
    else values.push_back(float_value(static_cast<double>(alpha)));
  }
  std::vector<LoomTensorDesc> inputs{a.desc()};
  if (b) inputs.push_back(b->desc());
  run(op_name(op), inputs, {out.desc()}, values);
  size_t i = 0;
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    const long double got = get(out, idx);
    const long double w = want[i];
    const long double s = scale[i++];
    bool ok;
    if (!is_floating(dt)) ok = got == w;
    else if (std::isnan(w)) ok = std::isnan(got);
    else if (std::fabs(w) > max_of(dt) * (1 + eps_of(dt))) ok = std::isinf(got) && std::signbit(got) == std::signbit(w);
    else ok = std::fabs(got - w) <= 2 * eps_of(dt) * std::max(std::fabs(w), op == Op::Exp ? 0.0L : s) + 1e-30L;
    if (!ok)
      FAIL_CHECK(op_name(op) << " " << loom::plugin::dtype_name(dt) << " at element " << i - 1
                             << ": got " << static_cast<double>(got) << ", want "
                             << static_cast<double>(w));
  });
}

void check_layouts(Op op, int32_t dt) {
  INFO(op_name(op) << " " << loom::plugin::dtype_name(dt));
  const bool bin = is_binary(op);
  const long double alpha = dt == LOOM_DTYPE_BOOL ? 1 : is_floating(dt) ? 0.5L : 3;
  // Contiguous.
  {
    Tensor a = make(dt, {3, 4, 5}), b = make(dt, {3, 4, 5}), o = make(dt, {3, 4, 5});
    fill_pattern(a, 1);
    fill_pattern(b, 2);
    check_op(op, o, a, bin ? &b : nullptr, has_alpha(op) ? alpha : 1);
  }
  // Broadcast: a [1,4,1] and b [3,1,5] expanded to [3,4,5]; scalar broadcast.
  {
    Tensor a0 = make(dt, {1, 4, 1}), b0 = make(dt, {3, 1, 5}), s0 = make(dt, {1, 1, 1});
    fill_pattern(a0, 3);
    fill_pattern(b0, 4);
    fill_pattern(s0, 5);
    const Tensor a = expand(a0, {3, 4, 5}), b = expand(b0, {3, 4, 5}), s = expand(s0, {3, 4, 5});
    Tensor o = make(dt, {3, 4, 5});
    check_op(op, o, a, bin ? &b : nullptr);
    Tensor full = make(dt, {3, 4, 5});
    fill_pattern(full, 6);
    check_op(op, o, full, bin ? &s : nullptr);
    if (bin) check_op(op, o, s, &full);
  }
  // Transposed input and an offset, strided output.
  {
    Tensor a0 = make(dt, {5, 4, 3}), b = make(dt, {3, 4, 5});
    fill_pattern(a0, 7);
    fill_pattern(b, 8);
    const Tensor a = transpose(a0, 0, 2);
    Tensor big = make(dt, {4, 9, 11});
    const Tensor o = slice(slice(big, 1, 2, 4), 2, 1, 5, 2);  // [4,4,5] view
    const Tensor o3 = slice(o, 0, 1, 3);                       // [3,4,5], offset
    check_op(op, o3, a, bin ? &b : nullptr, has_alpha(op) ? alpha : 1);
  }
  // In place: out aliases a.
  {
    Tensor a = make(dt, {6, 7}), b = make(dt, {6, 7});
    fill_pattern(a, 9);
    fill_pattern(b, 10);
    check_op(op, a, a, bin ? &b : nullptr, has_alpha(op) ? alpha : 1);
    fill_pattern(a, 9);
    const Tensor at = transpose(a, 0, 1), bt = transpose(b, 0, 1);
    check_op(op, at, at, bin ? &bt : nullptr);
  }
  // 0-d and empty.
  {
    Tensor a = make(dt, {}), b = make(dt, {}), o = make(dt, {});
    fill_pattern(a, 11);
    fill_pattern(b, 12);
    check_op(op, o, a, bin ? &b : nullptr);
    Tensor e1 = make(dt, {0, 3}), e2 = make(dt, {0, 3}), eo = make(dt, {0, 3});
    check_op(op, eo, e1, bin ? &e2 : nullptr);
  }
  // Large enough for the OpenMP paths, contiguous and strided.
  {
    Tensor a = make(dt, {256, 300}), b = make(dt, {256, 300}), o = make(dt, {256, 300});
    fill_pattern(a, 13);
    fill_pattern(b, 14);
    check_op(op, o, a, bin ? &b : nullptr, has_alpha(op) ? alpha : 1);
    Tensor a2 = make(dt, {300, 256});
    fill_pattern(a2, 15);
    const Tensor at = transpose(a2, 0, 1);
    check_op(op, o, at, bin ? &b : nullptr);
    Tensor row = make(dt, {1, 300});
    fill_pattern(row, 16);
    const Tensor rb = expand(row, {256, 300});
    check_op(op, o, a, bin ? &rb : nullptr);
  }
}

}  // namespace

TEST_CASE("elementwise ops match the reference in every layout", "[elementwise]") {
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Neg, Op::Relu, Op::Exp})
    for (int32_t dt : dtypes_of(op)) check_layouts(op, dt);
}

TEST_CASE("integer arithmetic wraps instead of overflowing", "[elementwise]") {
  Tensor a = make(LOOM_DTYPE_INT8, {2}), o = make(LOOM_DTYPE_INT8, {2});
  set(a, {0}, 100);
  set(a, {1}, -128);
  run("add", {a.desc(), a.desc()}, {o.desc()}, {int_value(1)});
  CHECK(get(o, {0}) == -56);
  CHECK(get(o, {1}) == 0);
  run("neg", {a.desc()}, {o.desc()});
  CHECK(get(o, {1}) == -128);

  Tensor i = make(LOOM_DTYPE_INT32, {1}), io = make(LOOM_DTYPE_INT32, {1});
  set(i, {0}, 2147483647.0L);
  Tensor one = make(LOOM_DTYPE_INT32, {1});
  set(one, {0}, 1);
  run("add", {i.desc(), one.desc()}, {io.desc()}, {int_value(1)});
  CHECK(get(io, {0}) == -2147483648.0L);
  run("sub", {i.desc(), one.desc()}, {io.desc()}, {int_value(-1)});
  CHECK(get(io, {0}) == -2147483648.0L);

  Tensor l = make(LOOM_DTYPE_INT64, {1}), lo = make(LOOM_DTYPE_INT64, {1});
  set(l, {0}, static_cast<long double>(int64_t{1} << 62));
  run("mul", {l.desc(), l.desc()}, {lo.desc()});
  CHECK(get(lo, {0}) == 0);

  Tensor u = make(LOOM_DTYPE_UINT8, {1}), uo = make(LOOM_DTYPE_UINT8, {1});
  set(u, {0}, 1);
  run("neg", {u.desc()}, {uo.desc()});
  CHECK(get(uo, {0}) == 255);
  run("relu", {u.desc()}, {uo.desc()});
  CHECK(get(uo, {0}) == 1);
}

TEST_CASE("float special values", "[elementwise]") {
  Tensor a = make(LOOM_DTYPE_FLOAT32, {3}), o = make(LOOM_DTYPE_FLOAT32, {3});
  set(a, {0}, std::numeric_limits<long double>::quiet_NaN());
  set(a, {1}, -std::numeric_limits<long double>::infinity());
  set(a, {2}, -0.0L);
  run("relu", {a.desc()}, {o.desc()});
  CHECK(std::isnan(get(o, {0})));
  CHECK(get(o, {1}) == 0);
  run("exp", {a.desc()}, {o.desc()});
  CHECK(std::isnan(get(o, {0})));
  CHECK(get(o, {1}) == 0);
  CHECK(get(o, {2}) == 1);
  run("neg", {a.desc()}, {o.desc()});
  CHECK(!std::signbit(get(o, {2})));
  Tensor z = make(LOOM_DTYPE_FLOAT16, {1}), zo = make(LOOM_DTYPE_FLOAT16, {1}),
         one = make(LOOM_DTYPE_FLOAT16, {1});
  set(one, {0}, 1);
  run("div", {one.desc(), z.desc()}, {zo.desc()});
  CHECK(std::isinf(get(zo, {0})));
}
