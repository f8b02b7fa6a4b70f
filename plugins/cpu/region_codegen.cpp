// The C++ of a fused region on the CPU (region_codegen.hpp).
//
// Every expression is a call of the functor the op's eager kernel runs
// (elementwise.cpp, binary.cpp, unary.cpp, unary_float.cpp,
// activation_backward.cpp), with its Scalar values converted as the kernel
// converts them (plugin::cast, like common.hpp's scalar_as), so a region's
// bits are eager's — region_codegen_test checks that per op against the
// tile interpreter. float16 and bfloat16 (rounded after every op),
// integers (errors a kernel must report) and ops whose kernels have no
// single functor decline: the tile interpreter runs those regions.
#include "region_codegen.hpp"

#include <loom/plugin.hpp>
#include <loom/plugin/fused_ops.hpp>
#include <loom/plugin/scalar_ops.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace loom::cpu {
namespace {

const char* ctype(int32_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT32: return "float";
    case LOOM_DTYPE_FLOAT64: return "double";
    default: return nullptr;
  }
}

// A Scalar value as C++ of type T, through plugin::cast as the kernels'
// scalar_as converts it; "" when `v` is not a Scalar.
std::string scalar(const LoomValue& v, const std::string& T) {
  char buf[64];
  switch (v.kind) {
    case LOOM_VALUE_BOOL: return "loom::plugin::cast<" + T + ">(" + std::string(v.u.i ? "true" : "false") + ")";
    case LOOM_VALUE_INT:
      std::snprintf(buf, sizeof buf, "(int64_t)%lldLL", static_cast<long long>(v.u.i));
      if (v.u.i == INT64_MIN) std::snprintf(buf, sizeof buf, "INT64_MIN");
      return "loom::plugin::cast<" + T + ">(" + buf + ")";
    case LOOM_VALUE_FLOAT:
      if (v.u.f != v.u.f) return "loom::plugin::cast<" + T + ">(std::numeric_limits<double>::quiet_NaN())";
      if (v.u.f == 1.0 / 0.0) return "loom::plugin::cast<" + T + ">(std::numeric_limits<double>::infinity())";
      if (v.u.f == -1.0 / 0.0) return "loom::plugin::cast<" + T + ">(-std::numeric_limits<double>::infinity())";
      std::snprintf(buf, sizeof buf, "%a", v.u.f);  // hex: exact
      return "loom::plugin::cast<" + T + ">(" + std::string(buf) + ")";
    default: return "";
  }
}

std::string text(const LoomValue& v) {
  return v.kind == LOOM_VALUE_STRING && v.u.str.data ? std::string(v.u.str.data, static_cast<size_t>(v.u.str.size))
                                                     : std::string();
}

struct Writer {
  const LoomFusedRegion& r;
  std::string declined;

  static std::string var(int32_t i) {
    std::string s = "v";  // not "v" + to_string: GCC 12's false -Wrestrict (its bug 105651)
    s += std::to_string(i);
    return s;
  }

  std::string decline(const std::string& why) {
    declined = why;
    return "";
  }

  // Instruction i's expression of C++ type T, or "" (declined set).
  std::string expr(int32_t i) {
    const LoomFusedInstr& in = r.instrs[i];
    const char* name = plugin::fused_op_name(in.op);
    const std::string op = name ? name : "op code " + std::to_string(in.op);
    const char* t = ctype(in.dtype);
    if (!t || in.compute_dtype != in.dtype)
      return decline("'" + op + "' in " + plugin::dtype_name(in.compute_dtype) + " (generated: float32, float64)");
    const std::string T = t, ops = "loom::plugin::ops::", fns = "loom::cpu::fns::";
    std::string args;
    for (int32_t k = 0; k < in.num_args; ++k) {
      if (r.instrs[in.args[k]].dtype != in.dtype) return decline("'" + op + "' of mixed dtypes");
      args += (k ? ", " : "") + var(in.args[k]);
    }
    // Scalar value k (a required one: the host fills defaults in).
    auto value = [&](int32_t k) -> std::string {
      if (k >= in.num_values) return decline("'" + op + "' without its value " + std::to_string(k));
      std::string s = scalar(in.values[k], T);
      if (s.empty()) return decline("'" + op + "' with a non-Scalar value " + std::to_string(k));
      return s;
    };
    auto call = [&](const std::string& functor, const std::string& init = "") {
      return declined.empty() ? functor + "{" + init + "}(" + args + ")" : std::string();
    };
    switch (in.op) {
      case LOOM_FUSED_ADD: return call(ops + "Add<" + T + ">", value(0));
      case LOOM_FUSED_SUB: return call(ops + "Sub<" + T + ">", value(0));
      case LOOM_FUSED_MUL: return call(ops + "Mul<" + T + ">");
      case LOOM_FUSED_DIV: {
        const std::string mode = in.num_values ? text(in.values[0]) : "";
        if (mode == "trunc") return call(ops + "DivTrunc<" + T + ">");
        if (mode == "floor") return call(ops + "DivFloor<" + T + ">");
        if (!mode.empty()) return decline("div with rounding_mode '" + mode + "'");
        return call(ops + "Div<" + T + ">");
      }
      case LOOM_FUSED_REMAINDER: return call(ops + "Remainder<" + T + ">");
      case LOOM_FUSED_FMOD: return call(ops + "Fmod<" + T + ">");
      case LOOM_FUSED_POW: {
        // binary.cpp's small_power: an exponent of 2 or 3 that is one value
        // for all elements is products, as PyTorch computes it. Per element,
        // generate_region makes one loop per case instead (pow_alternatives).
        if (!uniform[static_cast<size_t>(i)] || !uniform[static_cast<size_t>(in.args[1])])
          return call(ops + "Pow<" + T + ">");
        const std::string a = var(in.args[0]), b = var(in.args[1]);
        return "(" + b + " == " + T + "(2) ? " + a + " * " + a + " : " + b + " == " + T + "(3) ? " + a + " * " + a +
               " * " + a + " : " + call(ops + "Pow<" + T + ">") + ")";
      }
      case LOOM_FUSED_MAXIMUM: return call(ops + "Maximum<" + T + ">");
      case LOOM_FUSED_MINIMUM: return call(ops + "Minimum<" + T + ">");
      case LOOM_FUSED_ATAN2: return call(ops + "Atan2<" + T + ">");
      case LOOM_FUSED_LERP: return call(ops + "Lerp<" + T + ">");
      case LOOM_FUSED_NEG: return call(ops + "Neg<" + T + ">");
      case LOOM_FUSED_RELU: return call(ops + "Relu<" + T + ">");
      case LOOM_FUSED_ABS: return call(ops + "Abs<" + T + ">");
      case LOOM_FUSED_SIGN: return call(ops + "Sign<" + T + ">");
      case LOOM_FUSED_SQUARE: return call(ops + "Square<" + T + ">");
      case LOOM_FUSED_FLOOR: return call(ops + "RoundTo<" + ops + "Rounding::Floor, " + T + ">");
      case LOOM_FUSED_CEIL: return call(ops + "RoundTo<" + ops + "Rounding::Ceil, " + T + ">");
      case LOOM_FUSED_TRUNC: return call(ops + "RoundTo<" + ops + "Rounding::Trunc, " + T + ">");
      case LOOM_FUSED_EXP: return call(fns + "Exp<" + T + ">");
      case LOOM_FUSED_EXP2: return call(fns + "Exp2");
      case LOOM_FUSED_EXPM1: return call(fns + "Expm1");
      case LOOM_FUSED_LOG: return call(fns + "Log");
      case LOOM_FUSED_LOG2: return call(fns + "Log2");
      case LOOM_FUSED_LOG1P: return call(fns + "Log1p");
      case LOOM_FUSED_SQRT: return call(fns + "Sqrt");
      case LOOM_FUSED_RSQRT: return call(fns + "Rsqrt");
      case LOOM_FUSED_RECIPROCAL: return call(fns + "Reciprocal");
      case LOOM_FUSED_SIN: return call(fns + "TrigFn<" + fns + "Trig::Sin>");
      case LOOM_FUSED_COS: return call(fns + "TrigFn<" + fns + "Trig::Cos>");
      case LOOM_FUSED_TAN: return call(fns + "TrigFn<" + fns + "Trig::Tan>");
      case LOOM_FUSED_TANH: return call(fns + "Tanh");
      case LOOM_FUSED_SIGMOID: return call(fns + "Sigmoid");
      case LOOM_FUSED_ERF: return call(fns + "Erf");
      case LOOM_FUSED_SILU: return call(fns + "Silu");
      case LOOM_FUSED_GELU:
      case LOOM_FUSED_GELU_BACKWARD: {
        const std::string form = in.num_values ? text(in.values[0]) : "";  // approximate
        if (form != "tanh" && form != "none") return decline("'" + op + "' with approximate '" + form + "'");
        const std::string tanh_form = form == "tanh" ? "true" : "false";
        return call(fns + (in.op == LOOM_FUSED_GELU ? "GeluFn<" : "GeluBackward<") + T + ", " + tanh_form + ">");
      }
#define LOOM_CPU_ACTIVATION_BACKWARD(fn, op_name, Functor, values)                     \
  case LOOM_FUSED_##Functor##_CODE_: {                                                 \
    std::string init;                                                                  \
    for (int32_t k = 0; k < (values); ++k) init += (k ? ", " : "") + value(k);         \
    return call(ops + #Functor "<" + T + ">", init);                                   \
  }
#define LOOM_FUSED_ThresholdBackward_CODE_ LOOM_FUSED_THRESHOLD_BACKWARD
#define LOOM_FUSED_SigmoidBackward_CODE_ LOOM_FUSED_SIGMOID_BACKWARD
#define LOOM_FUSED_TanhBackward_CODE_ LOOM_FUSED_TANH_BACKWARD
#define LOOM_FUSED_SiluBackward_CODE_ LOOM_FUSED_SILU_BACKWARD
      LOOM_CPU_ACTIVATION_BACKWARD(, , ThresholdBackward, 1)
      LOOM_CPU_ACTIVATION_BACKWARD(, , SigmoidBackward, 0)
      LOOM_CPU_ACTIVATION_BACKWARD(, , TanhBackward, 0)
      LOOM_CPU_ACTIVATION_BACKWARD(, , SiluBackward, 0)
#undef LOOM_CPU_ACTIVATION_BACKWARD
      default: return decline("'" + op + "' (no generated form: the tile interpreter runs it)");
    }
  }

  // Per instruction: one value for the whole range (a uniform input, or
  // computed only from such), so it is computed before the loop.
  std::vector<bool> uniform;
};

}  // namespace

RegionSource generate_region(const LoomFusedRegion& r, uint64_t uniform_inputs) {
  RegionSource out;
  if (r.num_inputs > 64) {
    out.declined = "a region of " + std::to_string(r.num_inputs) + " inputs (at most 64)";
    return out;
  }
  Writer wr{r, {}, std::vector<bool>(static_cast<size_t>(r.num_instrs), false)};
  std::vector<bool> is_output(static_cast<size_t>(r.num_instrs), false);
  for (int32_t k = 0; k < r.num_outputs; ++k) is_output[static_cast<size_t>(r.outputs[k])] = true;
  std::ostringstream before;
  // The loop body: a line per instruction, with the alternatives of a pow
  // by a uniform exponent (x*x, x*x*x, pow) — each combination gets its own
  // loop, chosen before it, so no loop holds a branch on the exponent (a
  // select computing pow's libm call for every element).
  struct Line {
    int switch_index;                   // into `switched`, or -1
    std::vector<std::string> alternatives;
  };
  std::vector<Line> lines;
  std::vector<int32_t> switched;  // instructions with alternatives
  std::vector<bool> pointer_declared(static_cast<size_t>(r.num_inputs), false);
  for (int32_t i = 0; i < r.num_instrs; ++i) {
    const LoomFusedInstr& in = r.instrs[i];
    const char* T = ctype(in.dtype);
    std::string e;
    bool uniform;
    std::vector<std::string> alternatives;
    if (in.op == LOOM_FUSED_INPUT) {
      if (!T) {
        out.declined = std::string("an input of ") + plugin::dtype_name(in.dtype) + " (generated: float32, float64)";
        return out;
      }
      uniform = (uniform_inputs >> in.args[0]) & 1u;
      const std::string k = std::to_string(in.args[0]);
      if (uniform) {
        e = "*static_cast<const " + std::string(T) + "*>(in[" + k + "])";
      } else {
        if (!pointer_declared[static_cast<size_t>(in.args[0])])
          before << "  const " << T << "* const in" << k << " = static_cast<const " << T << "*>(in[" << k << "]);\n";
        pointer_declared[static_cast<size_t>(in.args[0])] = true;
        e = "in" + k + "[i]";
      }
    } else {
      uniform = in.num_args > 0;
      for (int32_t k = 0; k < in.num_args; ++k) uniform = uniform && wr.uniform[static_cast<size_t>(in.args[k])];
      wr.uniform[static_cast<size_t>(i)] = uniform;
      if (in.op == LOOM_FUSED_CAST) {
        const char* from = ctype(r.instrs[in.args[0]].dtype);
        if (!T || !from) {
          out.declined = std::string("a cast to ") + plugin::dtype_name(in.dtype) + " (generated: float32, float64)";
          return out;
        }
        e = std::string("loom::plugin::cast<") + T + ">(" + Writer::var(in.args[0]) + ")";
      } else {
        e = wr.expr(i);
        if (e.empty()) {
          out.declined = wr.declined;
          return out;
        }
        if (in.op == LOOM_FUSED_POW && !uniform && wr.uniform[static_cast<size_t>(in.args[1])]) {
          if (switched.size() == 2) {
            out.declined = "more than two pows by a uniform exponent (a loop per combination)";
            return out;
          }
          const std::string a = Writer::var(in.args[0]), b = Writer::var(in.args[1]);
          before << "  const int m" << i << " = " << b << " == " << T << "(2) ? 0 : " << b << " == " << T
                 << "(3) ? 1 : 2;\n";
          alternatives = {a + " * " + a, a + " * " + a + " * " + a, e};
          switched.push_back(i);
        }
      }
    }
    wr.uniform[static_cast<size_t>(i)] = uniform;
    if (alternatives.empty()) alternatives = {e};
    const std::string head = "const " + std::string(T) + " " + Writer::var(i) + " = ";
    if (uniform) {
      before << "  " << head << e << ";\n";
    } else {
      for (std::string& alt : alternatives) alt = "    " + head + alt + ";\n";
      const int index = alternatives.size() > 1 ? static_cast<int>(switched.size()) - 1 : -1;
      lines.push_back({index, alternatives});
    }
  }
  for (int32_t k = 0; k < r.num_outputs; ++k) {
    const char* T = ctype(r.instrs[r.outputs[k]].dtype);
    before << "  " << T << "* const out" << k << " = static_cast<" << T << "*>(out[" << k << "]);\n";
    lines.push_back({-1, {"    out" + std::to_string(k) + "[i] = " + Writer::var(r.outputs[k]) + ";\n"}});
  }
  // The loops: combination c picks alternative (c / 3^j) % 3 of the j-th
  // switched instruction. ivdep: an output may be an input's buffer (in
  // place), but only at the same element, which no other iteration reads.
  std::ostringstream loops;
  int combinations = 1;
  for (size_t j = 0; j < switched.size(); ++j) combinations *= 3;
  for (int c = 0; c < combinations; ++c) {
    if (!switched.empty()) {
      loops << (c ? "  else if (" : "  if (");
      int rest = c;
      for (size_t j = 0; j < switched.size(); ++j, rest /= 3)
        loops << (j ? " && " : "") << "m" << switched[j] << " == " << rest % 3;
      loops << ")";
    }
    loops << " {\n#pragma GCC ivdep\n  for (int64_t i = 0; i < n; ++i) {\n";
    for (const Line& line : lines) {
      int pick = c;
      for (int j = 0; j < line.switch_index; ++j) pick /= 3;
      loops << line.alternatives[line.switch_index < 0 ? 0 : static_cast<size_t>(pick % 3)];
    }
    loops << "  }\n  }\n";
  }
  std::ostringstream src;
  src << "// loom cpu fused region " << r.hash << ", uniform inputs " << uniform_inputs << "\n"
      << "#include \"" << kRegionPrelude << "\"\n"
      << "#include <loom/plugin/cast.hpp>\n#include <cstdint>\n#include <limits>\n\n"
      // flatten: every functor inlined, so the loops vectorise.
      << "extern \"C\" __attribute__((visibility(\"default\"), flatten)) void " << kRegionSymbol
      << "(int64_t n, const void* const* in, void* const* out) {\n"
      << before.str() << loops.str() << "}\n";
  out.code = src.str();
  return out;
}

}  // namespace loom::cpu
