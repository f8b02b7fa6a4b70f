// Reference definitions of the unary ops for test_unary.cpp and
// test_unary_accuracy.cpp: one Case per (op, values), with the dtypes its
// rule admits and a long double reference taken straight from the table in
// docs/kernel_conventions.md, plus the comparison each dtype deserves.
#pragma once

#include "test_support.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace loom_test::unary {

enum class Rule { All, NoBool, Floating, ToBool };
// Exact: the reference, rounded to the output dtype, must match bit for bit
// (sign of zero included). Approx: within a few eps (relative), see matches().
enum class Cmp { Exact, Approx };

struct Case {
  std::string op;
  Rule rule;
  std::vector<LoomValue> values;
  std::string label;  // the values, for messages
  Cmp cmp;
  std::function<long double(long double, int32_t)> fref;  // floating input x of dtype dt
  std::function<long double(int64_t, int32_t)> iref;      // integer / bool input
  double f64_eps = 8;              // float64 tolerance in eps (libm, composite formulas)
  std::vector<int32_t> only = {};  // restricts the rule's dtypes when set
  double f32_ulps = 1;             // float32 tolerance in ulps (tanh computes in float lanes)
};

inline LoomValue none_value() { return LoomValue{}; }
inline LoomValue string_value(const char* s) {  // s must outlive the call
  LoomValue v{};
  v.kind = LOOM_VALUE_STRING;
  v.u.str.data = s;
  v.u.str.size = static_cast<int64_t>(std::strlen(s));
  return v;
}

inline std::vector<int32_t> dtypes_of(Rule r) {
  std::vector<int32_t> out;
  for (int32_t dt : all_dtypes()) {
    if (r == Rule::NoBool && dt == LOOM_DTYPE_BOOL) continue;
    if (r == Rule::Floating && !is_floating(dt)) continue;
    out.push_back(dt);
  }
  return out;
}
inline std::vector<int32_t> dtypes_of(const Case& c) {
  return c.only.empty() ? dtypes_of(c.rule) : c.only;
}

// v rounded to dtype dt (through a 0-d tensor, i.e. exactly as stored).
inline long double round_to(int32_t dt, long double v) {
  const Tensor t = make(dt, {});
  set(t, {}, v);
  return get(t, {});
}

// A parameter as the kernel holds it: float64 keeps double, every other
// floating dtype computes in float.
inline long double cparam(double v, int32_t dt) {
  return dt == LOOM_DTYPE_FLOAT64 ? static_cast<long double>(v)
                                  : static_cast<long double>(static_cast<float>(v));
}

// An integer result wrapped to dt like two's complement.
inline long double wrap(int32_t dt, uint64_t v) {
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

inline long double max_of(int32_t dt) {
  switch (dt) {
    case LOOM_DTYPE_FLOAT16:
      return 65504.0L;
    case LOOM_DTYPE_BFLOAT16:
      return 3.3895313892515355e38L;
    case LOOM_DTYPE_FLOAT32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}
inline long double denorm_of(int32_t dt) {
  switch (dt) {
    case LOOM_DTYPE_FLOAT16:
      return 0x1p-24L;
    case LOOM_DTYPE_BFLOAT16:
      return 0x1p-133L;
    case LOOM_DTYPE_FLOAT32:
      return 0x1p-149L;
    default:
      return 0x1p-1074L;
  }
}
// The spacing of dt's values at |w| (one ulp).
inline long double ulp_of(int32_t dt, long double w) {
  const int p = dt == LOOM_DTYPE_FLOAT16    ? 11
                : dt == LOOM_DTYPE_BFLOAT16 ? 8
                : dt == LOOM_DTYPE_FLOAT32  ? 24
                                            : 53;
  const int emin = dt == LOOM_DTYPE_FLOAT16 ? -14 : dt == LOOM_DTYPE_FLOAT64 ? -1022 : -126;
  const int e = w == 0 ? emin : std::max(static_cast<int>(std::ilogb(w)), emin);
  return std::ldexp(1.0L, e - (p - 1));
}

// Does `got` (in out_dt) match the reference `w` for input dtype dt?
// `tol` is the allowed error in ulps of out_dt for Approx comparisons.
inline bool matches(const Case& c, int32_t out_dt, long double got, long double w, double tol) {
  if (!is_floating(out_dt)) return got == w;
  if (c.cmp == Cmp::Exact) {
    const long double r = round_to(out_dt, w);
    if (std::isnan(r)) return std::isnan(got);
    return got == r && std::signbit(got) == std::signbit(r);
  }
  if (std::isnan(w)) return std::isnan(got);
  if (std::fabs(w) >= max_of(out_dt) + ulp_of(out_dt, max_of(out_dt)) / 2)
    return std::isinf(got) && std::signbit(got) == std::signbit(w);
  if (w == 0 && got == 0) return std::signbit(got) == std::signbit(w);
  return std::fabs(got - w) <= tol * ulp_of(out_dt, w) + denorm_of(out_dt) / 2;
}

// The default Approx tolerance in ulps: float, float16 and bfloat16 go
// through double inside (error well under an ulp, plus the 16-bit types'
// second rounding from float), but for tanh, in float lanes (nn_math.hpp's
// bound over every float32, under its case's f32_ulps; well under an ulp of
// the 16-bit types); float64 is libm's, per case.
inline double default_tol(const Case& c, int32_t dt) {
  return dt == LOOM_DTYPE_FLOAT64 ? c.f64_eps : dt == LOOM_DTYPE_FLOAT32 ? c.f32_ulps : 1.0;
}

inline long double reference(const Case& c, int32_t dt, long double x) {
  if (is_floating(dt)) return c.fref(x, dt);
  return c.iref(static_cast<int64_t>(x), dt);
}

// Runs c on `in` into `out` (which may alias it) and compares every element
// with the reference taken from the inputs before the call.
inline void check_call(const Case& c, const Tensor& in, const Tensor& out, double tol = -1) {
  const int32_t dt = in.dtype;
  if (tol < 0) tol = default_tol(c, dt);
  std::vector<long double> xs, want;
  for_each_index(in.shape, [&](const std::vector<int64_t>& idx) {
    xs.push_back(get(in, idx));
    want.push_back(reference(c, dt, xs.back()));
  });
  run(c.op, {in.desc()}, {out.desc()}, c.values);
  size_t k = 0;
  int bad = 0;
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    const long double got = get(out, idx);
    if (!matches(c, out.dtype, got, want[k], tol) && bad++ < 5)
      FAIL_CHECK(c.op << " " << c.label << " " << loom::plugin::dtype_name(dt)
                      << " x=" << static_cast<double>(xs[k]) << ": got " << static_cast<double>(got)
                      << ", want " << static_cast<double>(want[k]));
    ++k;
  });
}

inline bool is_to_bool(const std::string& op) {
  return op == "logical_not" || op == "isnan" || op == "isinf" || op == "isfinite";
}

// Runs op on a single element x of dtype dt; returns the result.
inline long double run1(const std::string& op, int32_t dt, long double x,
                        const std::vector<LoomValue>& values = {}) {
  const Tensor a = make(dt, {1});
  const Tensor o = make(is_to_bool(op) ? LOOM_DTYPE_BOOL : dt, {1});
  set(a, {0}, x);
  run(op, {a.desc()}, {o.desc()}, values);
  return get(o, {0});
}

// ------------------------------------------------------------------ cases ---

using F = std::function<long double(long double, int32_t)>;
using I = std::function<long double(int64_t, int32_t)>;

inline I identity() {
  return [](int64_t x, int32_t dt) { return wrap(dt, static_cast<uint64_t>(x)); };
}

inline std::vector<Case> same_dtype_cases() {
  constexpr long double inf = std::numeric_limits<long double>::infinity();
  std::vector<Case> v;
  v.push_back(
      {"abs",
       Rule::NoBool,
       {},
       "",
       Cmp::Exact,
       [](long double x, int32_t) { return std::fabs(x); },
       [](int64_t x, int32_t dt) { return wrap(dt, x < 0 ? 0 - static_cast<uint64_t>(x) : x); }});
  v.push_back(
      {"sign",
       Rule::All,
       {},
       "",
       Cmp::Exact,
       [](long double x, int32_t) -> long double { return x > 0   ? 1
                                                          : x < 0 ? -1
                                                                  : 0; },
       [](int64_t x, int32_t dt) { return wrap(dt, static_cast<uint64_t>((x > 0) - (x < 0))); }});
  v.push_back({"square",
               Rule::NoBool,
               {},
               "",
               Cmp::Exact,
               [](long double x, int32_t dt) -> long double {
                 if (dt == LOOM_DTYPE_FLOAT64)
                   return static_cast<double>(x) * static_cast<double>(x);
                 return x * x;  // exact for <= 24-bit significands
               },
               [](int64_t x, int32_t dt) {
                 return wrap(dt, static_cast<uint64_t>(x) * static_cast<uint64_t>(x));
               }});
  v.push_back({"floor",
               Rule::NoBool,
               {},
               "",
               Cmp::Exact,
               [](long double x, int32_t) { return std::floor(x); },
               identity()});
  v.push_back({"ceil",
               Rule::NoBool,
               {},
               "",
               Cmp::Exact,
               [](long double x, int32_t) { return std::ceil(x); },
               identity()});
  v.push_back({"trunc",
               Rule::NoBool,
               {},
               "",
               Cmp::Exact,
               [](long double x, int32_t) { return std::trunc(x); },
               identity()});
  for (int d : {0, 2, -1}) {
    // In the compute type, as the kernel (and PyTorch) do.
    const F fr = [d](long double x, int32_t dt) -> long double {
      const auto go = [d](auto xc) {
        using C = decltype(xc);
        const C p = static_cast<C>(std::pow(10.0, std::abs(d)));
        return d < 0 ? std::nearbyint(xc / p) * p : std::nearbyint(xc * p) / p;
      };
      return dt == LOOM_DTYPE_FLOAT64 ? go(static_cast<double>(x)) : go(static_cast<float>(x));
    };
    v.push_back({"round",
                 Rule::NoBool,
                 {int_value(d)},
                 "decimals=" + std::to_string(d),
                 Cmp::Exact,
                 fr,
                 identity()});
  }
  // nan_to_num: explicit values, and NONE (the dtype's max / lowest).
  v.push_back({"nan_to_num",
               Rule::All,
               {float_value(1.5), float_value(100), float_value(-200)},
               "(1.5,100,-200)",
               Cmp::Exact,
               [](long double x, int32_t) -> long double {
                 return std::isnan(x) ? 1.5L : x == inf ? 100 : x == -inf ? -200 : x;
               },
               identity()});
  v.push_back({"nan_to_num",
               Rule::All,
               {none_value(), none_value(), none_value()},
               "(None,None,None)",
               Cmp::Exact,
               [](long double x, int32_t dt) -> long double {
                 return std::isnan(x) ? 0 : x == inf ? max_of(dt) : x == -inf ? -max_of(dt) : x;
               },
               identity()});
  // clamp: integer bounds for every dtype; float bounds (rounded to the
  // dtype) for floating ones; one-sided; lo > hi.
  const auto clamp_case = [&](LoomValue lo, LoomValue hi, std::string label,
                              std::vector<int32_t> only) {
    const bool has_lo = lo.kind != LOOM_VALUE_NONE, has_hi = hi.kind != LOOM_VALUE_NONE;
    const double flo = lo.kind == LOOM_VALUE_FLOAT ? lo.u.f : static_cast<double>(lo.u.i);
    const double fhi = hi.kind == LOOM_VALUE_FLOAT ? hi.u.f : static_cast<double>(hi.u.i);
    const F fr = [=](long double x, int32_t dt) -> long double {
      if (std::isnan(x)) return x;
      long double y = has_lo && x < round_to(dt, flo) ? round_to(dt, flo) : x;
      return has_hi && y > round_to(dt, fhi) ? round_to(dt, fhi) : y;
    };
    const I ir = [=](int64_t x, int32_t) -> long double {
      const long double xl = static_cast<long double>(x);  // exact, unlike double
      const long double y = has_lo && xl < flo ? flo : xl;
      return has_hi && y > fhi ? fhi : y;
    };
    v.push_back({"clamp", Rule::NoBool, {lo, hi}, label, Cmp::Exact, fr, ir, 8, std::move(only)});
  };
  const std::vector<int32_t> floats{LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32,
                                    LOOM_DTYPE_FLOAT64};
  clamp_case(int_value(-3), int_value(7), "[-3,7]", {});
  clamp_case(int_value(-3), none_value(), "[-3,]", {});
  clamp_case(none_value(), int_value(7), "[,7]", {});
  clamp_case(int_value(9), int_value(2), "[9,2]", {});
  clamp_case(float_value(-1.5), float_value(0.3), "[-1.5,0.3]", floats);
  clamp_case(none_value(), float_value(-0.1), "[,-0.1]", floats);
  return v;
}

// float-rule ops: f is the long double function of the exact input.
inline std::vector<Case> float_cases() {
  std::vector<Case> v;
  const auto add = [&](const char* op, long double (*f)(long double), double f64_eps = 8) {
    v.push_back({op,
                 Rule::Floating,
                 {},
                 "",
                 Cmp::Approx,
                 [f](long double x, int32_t) { return f(x); },
                 nullptr,
                 f64_eps});
  };
  add("exp2", [](long double x) { return std::exp2(x); });
  add("expm1", [](long double x) { return std::expm1(x); });
  add("log", [](long double x) { return std::log(x); });
  add("log2", [](long double x) { return std::log2(x); });
  add("log1p", [](long double x) { return std::log1p(x); });
  add("sqrt", [](long double x) { return std::sqrt(x); });
  add("rsqrt", [](long double x) { return 1 / std::sqrt(x); });
  add("reciprocal", [](long double x) { return 1 / x; });
  add("sin", [](long double x) { return std::sin(x); });
  add("cos", [](long double x) { return std::cos(x); });
  add("tan", [](long double x) { return std::tan(x); });
  add("tanh", [](long double x) { return std::tanh(x); });
  v.back().f32_ulps = 1.5;
  add("sigmoid", [](long double x) { return 1 / (1 + std::exp(-x)); });
  add("erf", [](long double x) { return std::erf(x); });
  return v;
}

inline std::vector<Case> activation_cases() {
  std::vector<Case> v;
  // gelu: x Phi(x) written with erfc (and the tanh form as x sigmoid(2y)),
  // so the reference itself does not cancel for negative x. For float64 the
  // inner argument is rounded to double as any double evaluation must; its
  // error grows like x^2 (x^3 for tanh) and is no error of the kernel's.
  v.push_back({"gelu",
               Rule::Floating,
               {string_value("none")},
               "none",
               Cmp::Approx,
               [](long double x, int32_t dt) {
                 long double u = -x / std::sqrt(2.0L);
                 if (dt == LOOM_DTYPE_FLOAT64) u = -static_cast<double>(x) * 0.7071067811865476;
                 return 0.5L * x * std::erfc(u);
               },
               nullptr,
               64});
  v.push_back({"gelu",
               Rule::Floating,
               {string_value("tanh")},
               "tanh",
               Cmp::Approx,
               [](long double x, int32_t dt) {
                 long double y =
                     std::sqrt(2 / 3.141592653589793238462643383279L) * (x + 0.044715L * x * x * x);
                 if (dt == LOOM_DTYPE_FLOAT64) {
                   const double xd = static_cast<double>(x);
                   y = 0.7978845608028654 * (xd + 0.044715 * (xd * xd * xd));
                 }
                 return x / (1 + std::exp(-2 * y));
               },
               nullptr,
               64});
  v.push_back({"silu",
               Rule::Floating,
               {},
               "",
               Cmp::Approx,
               [](long double x, int32_t) { return x / (1 + std::exp(-x)); },
               nullptr,
               16});
  for (auto [beta, th] : {std::pair{1.0, 20.0}, std::pair{2.0, 1.0}, std::pair{0.3, 5.0}}) {
    v.push_back({"softplus",
                 Rule::Floating,
                 {float_value(beta), float_value(th)},
                 "beta=" + std::to_string(beta),
                 Cmp::Approx,
                 [beta, th](long double x, int32_t dt) {
                   const long double b = cparam(beta, dt), xb = x * b;
                   return xb > cparam(th, dt) ? x : std::log1p(std::exp(xb)) / b;
                 },
                 nullptr,
                 64});
  }
  for (auto [alpha, scale, in_scale] : {std::tuple{1.0, 1.0, 1.0}, std::tuple{0.5, 1.5, 2.0}}) {
    v.push_back({"elu",
                 Rule::Floating,
                 {float_value(alpha), float_value(scale), float_value(in_scale)},
                 "alpha=" + std::to_string(alpha),
                 Cmp::Approx,
                 [=](long double x, int32_t dt) {
                   const long double s = cparam(scale, dt);
                   return x > 0 ? s * x
                                : s * cparam(alpha, dt) * std::expm1(x * cparam(in_scale, dt));
                 },
                 nullptr,
                 64});
  }
  for (double slope : {0.01, 0.2}) {
    v.push_back({"leaky_relu",
                 Rule::Floating,
                 {float_value(slope)},
                 "slope=" + std::to_string(slope),
                 Cmp::Exact,
                 [slope](long double x, int32_t dt) -> long double {  // in the compute type
                   if (x > 0) return x;
                   if (dt == LOOM_DTYPE_FLOAT64) return static_cast<double>(x) * slope;
                   return static_cast<float>(x) * static_cast<float>(slope);
                 },
                 nullptr});
  }
  return v;
}

inline std::vector<Case> bool_cases() {
  std::vector<Case> v;
  const auto add = [&](const char* op, bool (*f)(long double), bool for_ints) {
    v.push_back({op,
                 Rule::ToBool,
                 {},
                 "",
                 Cmp::Exact,
                 [f](long double x, int32_t) -> long double { return f(x); },
                 [for_ints, op](int64_t x, int32_t) -> long double {
                   return std::string(op) == "logical_not" ? x == 0 : for_ints;
                 }});
  };
  add(
      "logical_not", [](long double x) { return x == 0; }, false);
  add(
      "isnan", [](long double x) { return static_cast<bool>(std::isnan(x)); }, false);
  add(
      "isinf", [](long double x) { return static_cast<bool>(std::isinf(x)); }, false);
  add(
      "isfinite", [](long double x) { return static_cast<bool>(std::isfinite(x)); }, true);
  return v;
}

// (op, dtype mask, has an in-place form) for every unary op of the table.
inline std::vector<std::tuple<std::string, uint64_t, bool>> registrations() {
  constexpr uint64_t all = (uint64_t{1} << LOOM_DTYPE_COUNT) - 1;
  constexpr uint64_t no_bool = all & ~LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL);
  constexpr uint64_t floating =
      LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT16) | LOOM_DTYPE_BIT(LOOM_DTYPE_BFLOAT16) |
      LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64);
  std::vector<std::tuple<std::string, uint64_t, bool>> v;
  for (const char* op : {"abs", "square", "floor", "ceil", "trunc", "round", "clamp"})
    v.emplace_back(op, no_bool, true);
  for (const char* op : {"sign", "nan_to_num"}) v.emplace_back(op, all, true);
  for (const char* op :
       {"exp2", "expm1", "log", "log2", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
        "tanh", "sigmoid", "erf", "gelu", "silu", "softplus", "elu", "leaky_relu"})
    v.emplace_back(op, floating, true);
  for (const char* op : {"logical_not", "isnan", "isinf", "isfinite"})
    v.emplace_back(op, all, false);
  return v;
}

}  // namespace loom_test::unary
