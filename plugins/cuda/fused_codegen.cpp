// The CUDA source of a fused region (fused_codegen.hpp).
//
// Each instruction becomes one local variable of its dtype's value type
// (float for float16 and bfloat16, which are rounded back to their 16 bits
// after every instruction, as the node-by-node kernels store them), written
// with loom's semantics (plugin/scalar_ops.hpp): integers wrap (unsigned
// arithmetic), maximum/minimum/clamp/relu propagate NaN, casts saturate as
// copy_ does, Python's floor division and modulo for floats. The generated
// code includes no header: NVRTC's built-in math functions, and the 16-bit
// conversions by PTX cvt (float16) and by bits (bfloat16).
#include "fused_codegen.hpp"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace loom::cuda_fusion {
namespace {

const char* kPreamble = R"(typedef long long i64;
typedef unsigned long long u64;
struct Params {
  i64 n;
  int ndim;
  int contiguous;
  i64 shape[8];
  i64 strides[16][8];
  const void* in[16];
  void* out[4];
  int scalar[16];
};
__device__ __forceinline__ float h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float bf2f(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }
__device__ __forceinline__ unsigned short f2bf(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
template <class V> __device__ __forceinline__ V nan_max(V a, V b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
template <class V> __device__ __forceinline__ V nan_min(V a, V b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
__device__ __forceinline__ float py_mod(float a, float b) { float m = fmodf(a, b); if (m != 0.f && ((b < 0.f) != (m < 0.f))) m += b; return m; }
__device__ __forceinline__ double py_mod(double a, double b) { double m = fmod(a, b); if (m != 0.0 && ((b < 0.0) != (m < 0.0))) m += b; return m; }
template <class V> __device__ __forceinline__ V floor_div(V a, V b) {
  if (b == V(0)) return a / b;
  V m = py_mod(a, b);
  V d = (a - m) / b;
  if (d != V(0)) { V f = floor(d); if (d - f > V(0.5)) f += V(1); return f; }
  return copysign(V(0), a / b);
}
template <class I> __device__ __forceinline__ I sat(double v, double lo, double hi, I ilo, I ihi) {
  return v != v ? I(0) : (v <= lo ? ilo : (v >= hi ? ihi : (I)v));
}
)";

bool is_float(int32_t d) {
  return d == LOOM_DTYPE_FLOAT16 || d == LOOM_DTYPE_BFLOAT16 || d == LOOM_DTYPE_FLOAT32 || d == LOOM_DTYPE_FLOAT64;
}
bool is_half(int32_t d) { return d == LOOM_DTYPE_FLOAT16 || d == LOOM_DTYPE_BFLOAT16; }

// The C type a value of `d` is held in.
const char* value_type(int32_t d) {
  switch (d) {
    case LOOM_DTYPE_BOOL: return "bool";
    case LOOM_DTYPE_UINT8: return "unsigned char";
    case LOOM_DTYPE_INT8: return "signed char";
    case LOOM_DTYPE_INT16: return "short";
    case LOOM_DTYPE_INT32: return "int";
    case LOOM_DTYPE_INT64: return "i64";
    case LOOM_DTYPE_FLOAT64: return "double";
    default: return "float";
  }
}
// The C type of `d`'s storage.
const char* storage_type(int32_t d) { return is_half(d) ? "unsigned short" : value_type(d); }

// `expr` (of the value type) rounded to `d` as a store would.
std::string rounded(int32_t d, const std::string& expr) {
  if (d == LOOM_DTYPE_FLOAT16) return "h2f(f2h(" + expr + "))";
  if (d == LOOM_DTYPE_BFLOAT16) return "bf2f(f2bf(" + expr + "))";
  if (d == LOOM_DTYPE_BOOL) return "(bool)(" + expr + ")";
  return "(" + std::string(value_type(d)) + ")(" + expr + ")";
}

std::string literal(double v) {
  if (v != v) return "(0.0/0.0)";
  if (v > 1.7976931348623157e308) return "(1.0/0.0)";
  if (v < -1.7976931348623157e308) return "(-1.0/0.0)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

double number(const LoomValue& v, double fallback) {
  if (v.kind == LOOM_VALUE_FLOAT) return v.u.f;
  if (v.kind == LOOM_VALUE_INT || v.kind == LOOM_VALUE_BOOL) return static_cast<double>(v.u.i);
  return fallback;
}
bool present(const LoomValue& v) { return v.kind == LOOM_VALUE_FLOAT || v.kind == LOOM_VALUE_INT || v.kind == LOOM_VALUE_BOOL; }
std::string text(const LoomValue& v) {
  return v.kind == LOOM_VALUE_STRING ? std::string(v.u.str.data, static_cast<size_t>(v.u.str.size)) : std::string();
}

// The largest finite value of a floating dtype, and of the integer dtypes'
// ranges for saturating casts.
double float_max(int32_t d) {
  switch (d) {
    case LOOM_DTYPE_FLOAT16: return 65504.0;
    case LOOM_DTYPE_BFLOAT16: return 3.3895313892515355e38;
    case LOOM_DTYPE_FLOAT32: return 3.4028234663852886e38;
    default: return 1.7976931348623157e308;
  }
}

std::string cast(int32_t from, int32_t to, const std::string& a) {
  if (to == LOOM_DTYPE_BOOL) return "(bool)(" + a + " != 0)";
  if (is_float(to)) return rounded(to, "(" + std::string(value_type(to)) + ")(" + a + ")");
  if (!is_float(from)) return "(" + std::string(value_type(to)) + ")(" + a + ")";
  // Floating to integer: NaN is 0, out of range saturates, else truncates.
  struct Range { const char *lo, *hi, *ilo, *ihi; };
  Range r{};
  switch (to) {
    case LOOM_DTYPE_UINT8: r = {"0.0", "255.0", "(unsigned char)0", "(unsigned char)255"}; break;
    case LOOM_DTYPE_INT8: r = {"-128.0", "127.0", "(signed char)-128", "(signed char)127"}; break;
    case LOOM_DTYPE_INT16: r = {"-32768.0", "32767.0", "(short)-32768", "(short)32767"}; break;
    case LOOM_DTYPE_INT32: r = {"-2147483648.0", "2147483647.0", "(int)(-2147483647-1)", "(int)2147483647"}; break;
    default: r = {"-9223372036854775808.0", "9223372036854775807.0", "(i64)(-9223372036854775807LL-1)", "(i64)9223372036854775807LL"};
  }
  return std::string("sat<") + value_type(to) + ">((double)(" + a + "), " + r.lo + ", " + r.hi + ", " + r.ilo + ", " +
         r.ihi + ")";
}

struct Writer {
  const LoomFusedRegion& r;
  std::string declined;

  std::string v(int32_t i) const { return "v" + std::to_string(i); }
  int32_t dt(int32_t i) const { return r.instrs[i].dtype; }

  // The float function `name` for compute dtype `c` (f suffix but for double).
  static std::string fn(const char* name, int32_t c) { return std::string(name) + (c == LOOM_DTYPE_FLOAT64 ? "" : "f"); }

  // The expression of instruction `i` in its compute dtype's value type,
  // or "" (with `declined` set).
  std::string expr(int32_t i) {
    const LoomFusedInstr& in = r.instrs[i];
    const int32_t c = in.compute_dtype;
    const bool fl = is_float(c);
    const std::string T = value_type(c);
    const std::string a = in.num_args > 0 ? v(in.args[0]) : "", b = in.num_args > 1 ? v(in.args[1]) : "",
                      w = in.num_args > 2 ? v(in.args[2]) : "";
    auto val = [&](int k, double fallback) { return k < in.num_values ? number(in.values[k], fallback) : fallback; };
    auto lit = [&](double x) { return "(" + T + ")" + literal(x); };
    auto wrap2 = [&](const char* op) { return "(" + T + ")((u64)(i64)" + a + " " + op + " (u64)(i64)" + b + ")"; };
    auto decline = [&](const std::string& why) {
      declined = why;
      return std::string();
    };
    switch (in.op) {
      case LOOM_FUSED_ADD:
      case LOOM_FUSED_SUB: {
        const char* op = in.op == LOOM_FUSED_ADD ? "+" : "-";
        const double alpha = val(0, 1.0);
        if (c == LOOM_DTYPE_BOOL) return "(" + a + " || (" + (alpha != 0 ? "true" : "false") + " && " + b + "))";
        if (!fl) {
          const std::string scaled = alpha == 1.0 ? b : "(" + T + ")((u64)(i64)" + literal(alpha) + " * (u64)(i64)" + b + ")";
          return "(" + T + ")((u64)(i64)" + a + " " + op + " (u64)(i64)" + scaled + ")";
        }
        return alpha == 1.0 ? "(" + a + " " + op + " " + b + ")" : "(" + a + " " + op + " " + lit(alpha) + " * " + b + ")";
      }
      case LOOM_FUSED_MUL:
        if (c == LOOM_DTYPE_BOOL) return "(" + a + " && " + b + ")";
        return fl ? "(" + a + " * " + b + ")" : wrap2("*");
      case LOOM_FUSED_DIV: {
        if (!fl) return decline("an integer division (its by-zero error cannot be reported from a kernel)");
        const std::string mode = in.num_values ? text(in.values[0]) : "";
        if (mode == "trunc") return fn("trunc", c) + "(" + a + " / " + b + ")";
        if (mode == "floor") return "floor_div(" + a + ", " + b + ")";
        return "(" + a + " / " + b + ")";
      }
      case LOOM_FUSED_REMAINDER:
        return fl ? "py_mod(" + a + ", " + b + ")" : decline("an integer remainder (division by zero)");
      case LOOM_FUSED_FMOD:
        return fl ? fn("fmod", c) + "(" + a + ", " + b + ")" : decline("an integer fmod (division by zero)");
      case LOOM_FUSED_POW:
        return fl ? fn("pow", c) + "(" + a + ", " + b + ")" : decline("an integer pow (negative exponents are errors)");
      case LOOM_FUSED_MAXIMUM: return fl ? "nan_max(" + a + ", " + b + ")" : "(" + a + " > " + b + " ? " + a + " : " + b + ")";
      case LOOM_FUSED_MINIMUM: return fl ? "nan_min(" + a + ", " + b + ")" : "(" + a + " < " + b + " ? " + a + " : " + b + ")";
      case LOOM_FUSED_ATAN2: return fn("atan2", c) + "(" + a + ", " + b + ")";
      case LOOM_FUSED_BITWISE_AND: return "(" + a + " & " + b + ")";
      case LOOM_FUSED_BITWISE_OR: return "(" + a + " | " + b + ")";
      case LOOM_FUSED_BITWISE_XOR: return "(" + a + " ^ " + b + ")";
      case LOOM_FUSED_LOGICAL_AND: return "((" + a + " != 0) && (" + b + " != 0))";
      case LOOM_FUSED_LOGICAL_OR: return "((" + a + " != 0) || (" + b + " != 0))";
      case LOOM_FUSED_LOGICAL_XOR: return "((" + a + " != 0) != (" + b + " != 0))";
      case LOOM_FUSED_EQ: return "(" + a + " == " + b + ")";
      case LOOM_FUSED_NE: return "(" + a + " != " + b + ")";
      case LOOM_FUSED_LT: return "(" + a + " < " + b + ")";
      case LOOM_FUSED_LE: return "(" + a + " <= " + b + ")";
      case LOOM_FUSED_GT: return "(" + a + " > " + b + ")";
      case LOOM_FUSED_GE: return "(" + a + " >= " + b + ")";
      case LOOM_FUSED_WHERE: return "(" + a + " ? " + b + " : " + w + ")";
      case LOOM_FUSED_LERP: {
        const std::string d = "(" + b + " - " + a + ")";
        return "((" + w + " < 0 ? -" + w + " : " + w + ") < " + lit(0.5) + " ? " + a + " + " + w + " * " + d + " : " + b +
               " - " + d + " * (" + lit(1) + " - " + w + "))";
      }
      case LOOM_FUSED_NEG:
        return fl ? "(-" + a + ")" : "(" + T + ")((u64)0 - (u64)(i64)" + a + ")";
      case LOOM_FUSED_RELU:
        return fl ? "(" + a + " != " + a + " ? " + a + " : (" + a + " > 0 ? " + a + " : " + lit(0) + "))"
                  : "(" + a + " > 0 ? " + a + " : (" + T + ")0)";
      case LOOM_FUSED_ROUND: {
        const double d = val(0, 0);
        if (!fl) return a;
        if (d == 0) return fn("rint", c) + "(" + a + ")";
        double p = 1;
        for (int k = 0; k < (d < 0 ? -d : d); ++k) p *= 10;
        return d < 0 ? fn("rint", c) + "(" + a + " / " + lit(p) + ") * " + lit(p)
                     : fn("rint", c) + "(" + a + " * " + lit(p) + ") / " + lit(p);
      }
      case LOOM_FUSED_GELU:
        if (in.num_values && text(in.values[0]) == "tanh")
          return "(" + lit(0.5) + " * " + a + " * (" + lit(1) + " + " + fn("tanh", c) + "(" + lit(0.7978845608028654) +
                 " * (" + a + " + " + lit(0.044715) + " * " + a + " * " + a + " * " + a + "))))";
        return "(" + a + " * " + lit(0.5) + " * (" + lit(1) + " + " + fn("erf", c) + "(" + a + " * " +
               lit(0.7071067811865476) + ")))";
      case LOOM_FUSED_SOFTPLUS: {
        const std::string beta = lit(val(0, 1)), thr = lit(val(1, 20));
        return "(" + a + " * " + beta + " > " + thr + " ? " + a + " : " + fn("log1p", c) + "(" + fn("exp", c) + "(" + a +
               " * " + beta + ")) / " + beta + ")";
      }
      case LOOM_FUSED_ELU:
        return "(" + a + " > 0 ? " + a + " * " + lit(val(1, 1)) + " : " + fn("expm1", c) + "(" + a + " * " +
               lit(val(2, 1)) + ") * " + lit(val(0, 1) * val(1, 1)) + ")";
      case LOOM_FUSED_LEAKY_RELU:
        return "(" + a + " > 0 ? " + a + " : " + a + " * " + lit(val(0, 0.01)) + ")";
      case LOOM_FUSED_NAN_TO_NUM: {
        if (!fl) return a;
        const double mx = float_max(c);
        const LoomValue none{};
        const LoomValue& nv = in.num_values > 0 ? in.values[0] : none;
        const LoomValue& pv = in.num_values > 1 ? in.values[1] : none;
        const LoomValue& mv = in.num_values > 2 ? in.values[2] : none;
        return "(" + a + " != " + a + " ? " + lit(number(nv, 0)) + " : (" + a + " == " + lit(1.0 / 0.0) + " ? " +
               lit(present(pv) ? number(pv, mx) : mx) + " : (" + a + " == " + lit(-1.0 / 0.0) + " ? " +
               lit(present(mv) ? number(mv, -mx) : -mx) + " : " + a + ")))";
      }
      case LOOM_FUSED_CLAMP:
      case LOOM_FUSED_HARDTANH: {
        if (!fl && in.op == LOOM_FUSED_HARDTANH) return decline("hardtanh of integers");
        const LoomValue none{};
        const bool hard = in.op == LOOM_FUSED_HARDTANH;
        const LoomValue& lo = in.num_values > 0 ? in.values[0] : none;
        const LoomValue& hi = in.num_values > 1 ? in.values[1] : none;
        std::string e = a;
        if (hard || present(lo)) e = "(" + e + " < " + lit(number(lo, -1)) + " ? " + lit(number(lo, -1)) + " : " + e + ")";
        if (hard || present(hi)) e = "(" + e + " > " + lit(number(hi, 1)) + " ? " + lit(number(hi, 1)) + " : " + e + ")";
        return fl ? "(" + a + " != " + a + " ? " + a + " : " + e + ")" : e;
      }
      case LOOM_FUSED_ABS:
        return fl ? fn("fabs", c) + "(" + a + ")" : "(" + a + " < 0 ? (" + T + ")((u64)0 - (u64)(i64)" + a + ") : " + a + ")";
      case LOOM_FUSED_SIGN:
        if (c == LOOM_DTYPE_BOOL) return a;
        return "(" + T + ")((" + a + " > 0) - (" + a + " < 0))";
      case LOOM_FUSED_SQUARE: return fl ? "(" + a + " * " + a + ")" : "(" + T + ")((u64)(i64)" + a + " * (u64)(i64)" + a + ")";
      case LOOM_FUSED_EXP2: return fn("exp2", c) + "(" + a + ")";
      case LOOM_FUSED_EXPM1: return fn("expm1", c) + "(" + a + ")";
      case LOOM_FUSED_EXP: return fn("exp", c) + "(" + a + ")";
      case LOOM_FUSED_LOG: return fn("log", c) + "(" + a + ")";
      case LOOM_FUSED_LOG2: return fn("log2", c) + "(" + a + ")";
      case LOOM_FUSED_LOG1P: return fn("log1p", c) + "(" + a + ")";
      case LOOM_FUSED_SQRT: return fn("sqrt", c) + "(" + a + ")";
      case LOOM_FUSED_RSQRT: return "(" + lit(1) + " / " + fn("sqrt", c) + "(" + a + "))";
      case LOOM_FUSED_RECIPROCAL: return "(" + lit(1) + " / " + a + ")";
      case LOOM_FUSED_SIN: return fn("sin", c) + "(" + a + ")";
      case LOOM_FUSED_COS: return fn("cos", c) + "(" + a + ")";
      case LOOM_FUSED_TAN: return fn("tan", c) + "(" + a + ")";
      case LOOM_FUSED_TANH: return fn("tanh", c) + "(" + a + ")";
      case LOOM_FUSED_SIGMOID: return "(" + lit(1) + " / (" + lit(1) + " + " + fn("exp", c) + "(-" + a + ")))";
      case LOOM_FUSED_ERF: return fn("erf", c) + "(" + a + ")";
      case LOOM_FUSED_FLOOR: return fl ? fn("floor", c) + "(" + a + ")" : a;
      case LOOM_FUSED_CEIL: return fl ? fn("ceil", c) + "(" + a + ")" : a;
      case LOOM_FUSED_TRUNC: return fl ? fn("trunc", c) + "(" + a + ")" : a;
      case LOOM_FUSED_SILU: return "(" + a + " / (" + lit(1) + " + " + fn("exp", c) + "(-" + a + ")))";
      case LOOM_FUSED_LOGICAL_NOT: return "(" + a + " == 0)";
      case LOOM_FUSED_ISNAN: return fl ? "(" + a + " != " + a + ")" : "false";
      case LOOM_FUSED_ISINF: return fl ? "isinf(" + a + ")" : "false";
      case LOOM_FUSED_ISFINITE: return fl ? "isfinite(" + a + ")" : "true";
      // The activations' gradients (plugin/scalar_ops.hpp): a is the
      // output's gradient, b the activation's result or input.
      case LOOM_FUSED_TANH_BACKWARD: return "(" + a + " * (" + lit(1) + " - " + b + " * " + b + "))";
      case LOOM_FUSED_SIGMOID_BACKWARD: return "(" + a + " * (" + b + " * (" + lit(1) + " - " + b + ")))";
      case LOOM_FUSED_THRESHOLD_BACKWARD: return "(" + b + " <= " + lit(val(0, 0)) + " ? " + lit(0) + " : " + a + ")";
      case LOOM_FUSED_SILU_BACKWARD: {
        const std::string s = "(" + lit(1) + " / (" + lit(1) + " + " + fn("exp", c) + "(-" + b + ")))";
        return "(" + a + " * " + s + " * (" + lit(1) + " + " + b + " * (" + lit(1) + " - " + s + ")))";
      }
      case LOOM_FUSED_GELU_BACKWARD: {
        if (in.num_values && text(in.values[0]) == "tanh") {
          const std::string k = lit(0.79788456080286535588), c3 = lit(0.044715);
          const std::string t = fn("tanh", c) + "(" + k + " * (" + b + " + " + c3 + " * (" + b + " * " + b + " * " + b + ")))";
          return "(" + a + " * (" + lit(0.5) + " * (" + lit(1) + " + " + t + ") + " + lit(0.5) + " * " + b + " * (" +
                 lit(1) + " - " + t + " * " + t + ") * " + k + " * (" + lit(1) + " + " + lit(3) + " * " + c3 + " * " +
                 b + " * " + b + ")))";
        }
        return "(" + a + " * (" + lit(0.5) + " * " + fn("erfc", c) + "(-" + b + " * " + lit(0.70710678118654752440) +
               ") + " + b + " * " + fn("exp", c) + "(" + lit(-0.5) + " * " + b + " * " + b + ") * " +
               lit(0.39894228040143267794) + "))";
      }
      default: return decline("op code " + std::to_string(in.op) + " is not known to this plugin");
    }
  }
};

}  // namespace

FusedSource generate(const LoomFusedRegion& r) {
  FusedSource out;
  if (r.num_inputs > kMaxInputs || r.num_outputs > kMaxOutputs) {
    out.declined = "a region of " + std::to_string(r.num_inputs) + " inputs and " + std::to_string(r.num_outputs) +
                   " outputs (at most " + std::to_string(kMaxInputs) + " and " + std::to_string(kMaxOutputs) + ")";
    return out;
  }
  Writer wr{r, {}};
  std::ostringstream body;
  for (int32_t i = 0; i < r.num_instrs; ++i) {
    const LoomFusedInstr& in = r.instrs[i];
    const int32_t d = in.dtype;
    std::string e;
    if (in.op == LOOM_FUSED_INPUT) {
      const std::string at = "((const " + std::string(storage_type(d)) + "*)p.in[" + std::to_string(in.args[0]) +
                             "])[off[" + std::to_string(in.args[0]) + "]]";
      e = d == LOOM_DTYPE_FLOAT16 ? "h2f(" + at + ")" : d == LOOM_DTYPE_BFLOAT16 ? "bf2f(" + at + ")" : at;
    } else if (in.op == LOOM_FUSED_CAST) {
      e = cast(r.instrs[in.args[0]].dtype, d, wr.v(in.args[0]));
    } else {
      e = wr.expr(i);
      if (e.empty()) {
        out.declined = wr.declined;
        return out;
      }
      e = rounded(d, e);
    }
    body << "    const " << value_type(d) << " " << wr.v(i) << " = " << e << ";\n";
  }
  for (int32_t k = 0; k < r.num_outputs; ++k) {
    const int32_t i = r.outputs[k], d = r.instrs[i].dtype;
    const std::string val = d == LOOM_DTYPE_FLOAT16 ? "f2h(" + wr.v(i) + ")" : d == LOOM_DTYPE_BFLOAT16 ? "f2bf(" + wr.v(i) + ")" : wr.v(i);
    body << "    ((" << storage_type(d) << "*)p.out[" << k << "])[i] = " << val << ";\n";
  }
  std::ostringstream src;
  src << "// loom fused region " << r.hash << "\n" << kPreamble;
  src << "extern \"C\" __global__ void loom_fused(Params p) {\n"
      << "  const i64 step = (i64)gridDim.x * blockDim.x;\n"
      << "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {\n"
      << "    i64 off[" << (r.num_inputs > 0 ? r.num_inputs : 1) << "];\n"
      << "    if (p.contiguous) {\n"
      << "      for (int k = 0; k < " << r.num_inputs << "; ++k) off[k] = p.scalar[k] ? 0 : i;\n"
      << "    } else {\n"
      << "      for (int k = 0; k < " << r.num_inputs << "; ++k) off[k] = 0;\n"
      << "      i64 rem = i;\n"
      << "      for (int d = p.ndim - 1; d >= 0; --d) {\n"
      << "        const i64 idx = rem % p.shape[d];\n"
      << "        rem /= p.shape[d];\n"
      << "        for (int k = 0; k < " << r.num_inputs << "; ++k) off[k] += idx * p.strides[k][d];\n"
      << "      }\n"
      << "    }\n"
      << body.str() << "  }\n}\n";
  out.code = src.str();
  return out;
}

}  // namespace loom::cuda_fusion
