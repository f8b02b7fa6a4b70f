// Fused regions compiled to C++ (region_codegen.cpp, region_compiler.cpp)
// against the tile interpreter, which runs the plugin's own kernels: every
// op with a generated form, on float32 and float64, with its inputs in
// place, uniform (a broadcast scalar) or gathered (strided), must give the
// interpreter's bits. Then what declines, and what a broken compiler does.
#include "test_support.hpp"

#include "region_codegen.hpp"

#include <loom/plugin/fused_ops.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace loom_test;

namespace {

constexpr int64_t kN = 5003;  // several tiles and threads' ranges, a ragged end

struct Instr {
  int32_t op;
  int32_t dtype;
  std::vector<int32_t> args;
  std::vector<LoomValue> values;
};

struct Region {
  int32_t num_inputs = 0;
  std::vector<Instr> instrs;
  std::vector<int32_t> outputs;
};

// The ABI form of `r`; `keep` holds its instructions.
LoomFusedRegion abi_region(const Region& r, std::vector<LoomFusedInstr>& keep) {
  keep.clear();
  for (const Instr& in : r.instrs) {
    LoomFusedInstr f{};
    f.op = in.op;
    f.dtype = in.dtype;
    f.compute_dtype = in.dtype;
    f.num_args = static_cast<int32_t>(in.args.size());
    for (size_t a = 0; a < in.args.size(); ++a) f.args[a] = in.args[a];
    f.num_values = static_cast<int32_t>(in.values.size());
    f.values = in.values.empty() ? nullptr : in.values.data();
    keep.push_back(f);
  }
  LoomFusedRegion region{};
  region.struct_size = sizeof region;
  region.hash = 1234;
  region.num_inputs = r.num_inputs;
  region.num_instrs = static_cast<int32_t>(keep.size());
  region.instrs = keep.data();
  region.num_outputs = static_cast<int32_t>(r.outputs.size());
  region.outputs = r.outputs.data();
  return region;
}

std::string take_error(LoomError* e) {
  if (!e) return "";
  std::string m = e->message ? e->message : "(no message)";
  if (e->destroy) e->destroy(e);
  return m;
}

// Compiles and runs `r` with LOOM_CPU_CODEGEN=`mode`; "" or the error.
std::string run_region(const char* mode, const Region& r, const std::vector<LoomTensorDesc>& in,
                       const std::vector<LoomTensorDesc>& out) {
  ::setenv("LOOM_CACHE_DIR", LOOM_TEST_REGION_CACHE, 1);
  ::setenv("LOOM_CPU_CODEGEN", mode, 1);
  const LoomDeviceTypeDesc& cpu = host().devices.at("cpu");
  std::vector<LoomFusedInstr> keep;
  const LoomFusedRegion region = abi_region(r, keep);
  void* kernel = nullptr;
  std::string err = take_error(cpu.fused_compile(nullptr, 0, &region, &kernel));
  if (err.empty()) {
    err = take_error(cpu.fused_run(nullptr, 0, kernel, in.data(), static_cast<int32_t>(in.size()), out.data(),
                                   static_cast<int32_t>(out.size()), nullptr));
    cpu.fused_release(nullptr, kernel);
  }
  ::unsetenv("LOOM_CPU_CODEGEN");
  return err;
}

// Random values with the special ones mixed in: NaN, infinities, signed
// zeros, subnormals, huge and tiny magnitudes, halves and integers.
void fill_inputs(const Tensor& t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> wide(-6.0, 6.0), small(-1.0, 1.0);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), 0.0, -0.0, 1e-40, -1e-45, 1e30, -3e38,
                             0.5, -2.5, 3.0, 2.0, 1.0, -1.0, 100.0, -88.5, 1e8};
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t pick = rng() % 16;
    double v = pick == 0 ? specials[rng() % std::size(specials)] : pick < 4 ? small(rng) : wide(rng);
    if (t.dtype == LOOM_DTYPE_FLOAT32) {
      const float f = static_cast<float>(v);
      std::memcpy(reinterpret_cast<char*>(t.store->data()) + (t.offset + i) * 4, &f, 4);
    } else {
      std::memcpy(reinterpret_cast<char*>(t.store->data()) + (t.offset + i) * 8, &v, 8);
    }
  }
}

// Bit-equal, but for NaNs, which need only both be NaN.
void require_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  const int64_t n = a.numel();
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    const char* pa = reinterpret_cast<const char*>(a.store->data()) + i * a.itemsize();
    const char* pb = reinterpret_cast<const char*>(b.store->data()) + i * b.itemsize();
    if (std::memcmp(pa, pb, a.itemsize()) == 0) continue;
    bool both_nan;
    if (a.dtype == LOOM_DTYPE_FLOAT32) {
      float x, y;
      std::memcpy(&x, pa, 4);
      std::memcpy(&y, pb, 4);
      both_nan = x != x && y != y;
    } else {
      double x, y;
      std::memcpy(&x, pa, 8);
      std::memcpy(&y, pb, 8);
      both_nan = x != x && y != y;
    }
    if (!both_nan && mismatches++ == 0) first = i;
  }
  INFO(what << ": first differing element " << first << " (interpreted " << (double)get(a, {first >= 0 ? first : 0})
            << ", compiled " << (double)get(b, {first >= 0 ? first : 0}) << ")");
  CHECK(mismatches == 0);
}

enum class Layout { InPlace, Uniform, Strided };

// An input of `dtype` in `layout`, over kN elements.
Tensor make_input(int32_t dtype, Layout layout, uint32_t seed) {
  if (layout == Layout::Uniform) {
    Tensor t = make(dtype, {1});
    fill_inputs(t, seed);
    t.shape = {kN};
    t.strides = {0};
    return t;
  }
  if (layout == Layout::Strided) {
    Tensor t = make(dtype, {2 * kN});
    fill_inputs(t, seed);
    return slice(t, 0, 1, kN, 2);
  }
  Tensor t = make(dtype, {kN});
  fill_inputs(t, seed);
  return t;
}

// Runs `r` interpreted and compiled over the same inputs and compares;
// `labels` names the outputs when given.
void check_region(const Region& r, int32_t out_dtype, const std::vector<Tensor>& inputs, const std::string& what,
                  const std::vector<std::string>& labels = {}) {
  std::vector<LoomTensorDesc> in;
  for (const Tensor& t : inputs) in.push_back(t.desc());
  std::vector<Tensor> expected, got;
  std::vector<LoomTensorDesc> expected_d, got_d;
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    expected.push_back(make(out_dtype, {kN}));
    got.push_back(make(out_dtype, {kN}));
    expected_d.push_back(expected.back().desc());
    got_d.push_back(got.back().desc());
  }
  INFO(what);
  REQUIRE(run_region("never", r, in, expected_d) == "");
  REQUIRE(run_region("require", r, in, got_d) == "");
  for (size_t k = 0; k < r.outputs.size(); ++k)
    require_same_bits(expected[k], got[k], k < labels.size() ? labels[k] + ", " + what : what);
}

struct OpCase {
  int32_t op;
  int arity;
  std::vector<LoomValue> values;
  const char* label;
};

LoomValue string_value(const char* s) {
  LoomValue v{};
  v.kind = LOOM_VALUE_STRING;
  v.u.str.data = s;
  v.u.str.size = static_cast<int64_t>(std::strlen(s));
  return v;
}

std::vector<OpCase> generated_ops() {
  const LoomValue none{};
  return {
      {LOOM_FUSED_ADD, 2, {int_value(1)}, "add"},
      {LOOM_FUSED_ADD, 2, {float_value(2.5)}, "add alpha 2.5"},
      {LOOM_FUSED_SUB, 2, {int_value(3)}, "sub alpha 3"},
      {LOOM_FUSED_MUL, 2, {}, "mul"},
      {LOOM_FUSED_DIV, 2, {none}, "div"},
      {LOOM_FUSED_DIV, 2, {string_value("trunc")}, "div trunc"},
      {LOOM_FUSED_DIV, 2, {string_value("floor")}, "div floor"},
      {LOOM_FUSED_REMAINDER, 2, {}, "remainder"},
      {LOOM_FUSED_FMOD, 2, {}, "fmod"},
      {LOOM_FUSED_POW, 2, {}, "pow"},
      {LOOM_FUSED_MAXIMUM, 2, {}, "maximum"},
      {LOOM_FUSED_MINIMUM, 2, {}, "minimum"},
      {LOOM_FUSED_ATAN2, 2, {}, "atan2"},
      {LOOM_FUSED_LERP, 3, {}, "lerp"},
      {LOOM_FUSED_NEG, 1, {}, "neg"},
      {LOOM_FUSED_RELU, 1, {}, "relu"},
      {LOOM_FUSED_ABS, 1, {}, "abs"},
      {LOOM_FUSED_SIGN, 1, {}, "sign"},
      {LOOM_FUSED_SQUARE, 1, {}, "square"},
      {LOOM_FUSED_FLOOR, 1, {}, "floor"},
      {LOOM_FUSED_CEIL, 1, {}, "ceil"},
      {LOOM_FUSED_TRUNC, 1, {}, "trunc"},
      {LOOM_FUSED_EXP, 1, {}, "exp"},
      {LOOM_FUSED_EXP2, 1, {}, "exp2"},
      {LOOM_FUSED_EXPM1, 1, {}, "expm1"},
      {LOOM_FUSED_LOG, 1, {}, "log"},
      {LOOM_FUSED_LOG2, 1, {}, "log2"},
      {LOOM_FUSED_LOG1P, 1, {}, "log1p"},
      {LOOM_FUSED_SQRT, 1, {}, "sqrt"},
      {LOOM_FUSED_RSQRT, 1, {}, "rsqrt"},
      {LOOM_FUSED_RECIPROCAL, 1, {}, "reciprocal"},
      {LOOM_FUSED_SIN, 1, {}, "sin"},
      {LOOM_FUSED_COS, 1, {}, "cos"},
      {LOOM_FUSED_TAN, 1, {}, "tan"},
      {LOOM_FUSED_TANH, 1, {}, "tanh"},
      {LOOM_FUSED_SIGMOID, 1, {}, "sigmoid"},
      {LOOM_FUSED_ERF, 1, {}, "erf"},
      {LOOM_FUSED_SILU, 1, {}, "silu"},
      {LOOM_FUSED_GELU, 1, {string_value("none")}, "gelu"},
      {LOOM_FUSED_GELU, 1, {string_value("tanh")}, "gelu tanh"},
      {LOOM_FUSED_TANH_BACKWARD, 2, {}, "_tanh_backward"},
      {LOOM_FUSED_SIGMOID_BACKWARD, 2, {}, "_sigmoid_backward"},
      {LOOM_FUSED_THRESHOLD_BACKWARD, 2, {float_value(0.5)}, "_threshold_backward"},
      {LOOM_FUSED_SILU_BACKWARD, 2, {}, "_silu_backward"},
      {LOOM_FUSED_GELU_BACKWARD, 2, {string_value("none")}, "_gelu_backward"},
      {LOOM_FUSED_GELU_BACKWARD, 2, {string_value("tanh")}, "_gelu_backward tanh"},
  };
}

// inputs -> op -> output.
Region single_op(const OpCase& c, int32_t dtype) {
  Region r;
  r.num_inputs = c.arity;
  std::vector<int32_t> args;
  for (int k = 0; k < c.arity; ++k) {
    r.instrs.push_back({LOOM_FUSED_INPUT, dtype, {k}, {}});
    args.push_back(k);
  }
  r.instrs.push_back({c.op, dtype, args, c.values});
  r.outputs = {c.arity};
  return r;
}

const char* dtype_label(int32_t dt) { return dt == LOOM_DTYPE_FLOAT32 ? "float32" : "float64"; }

}  // namespace

// Every op of generated_ops() in one region over three shared inputs, one
// output each: one compile per dtype and uniform mask, not one per op.
Region all_ops(int32_t dtype) {
  Region r;
  r.num_inputs = 3;
  for (int k = 0; k < 3; ++k) r.instrs.push_back({LOOM_FUSED_INPUT, dtype, {k}, {}});
  for (const OpCase& c : generated_ops()) {
    std::vector<int32_t> args;
    for (int k = 0; k < c.arity; ++k) args.push_back(k);
    r.outputs.push_back(static_cast<int32_t>(r.instrs.size()));
    r.instrs.push_back({c.op, dtype, args, c.values});
  }
  return r;
}

TEST_CASE("every generated op gives the interpreter's bits, in place, uniform and gathered", "[region_codegen]") {
  const std::vector<OpCase> ops = generated_ops();
  for (int32_t dtype : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    std::vector<LoomFusedInstr> keep;
    for (const OpCase& c : ops) {
      INFO(c.label << " " << dtype_label(dtype));
      CHECK(loom::cpu::generate_region(abi_region(single_op(c, dtype), keep), 0).declined == "");
    }
    const Region r = all_ops(dtype);
    // Each input in turn uniform, then strided.
    for (int special = -1; special < 3; ++special) {
      for (Layout layout : {Layout::Uniform, Layout::Strided}) {
        if (special < 0 && layout == Layout::Strided) continue;
        std::vector<Tensor> inputs;
        for (int k = 0; k < 3; ++k)
          inputs.push_back(make_input(dtype, k == special ? layout : Layout::InPlace, 17u * k + 3u + special));
        std::vector<std::string> labels;
        for (const OpCase& c : ops) labels.push_back(c.label);
        check_region(r, dtype, inputs,
                     std::string(dtype_label(dtype)) + ", input " + std::to_string(special) +
                         (special < 0 ? " (all in place)" : layout == Layout::Uniform ? " uniform" : " strided"),
                     labels);
      }
    }
  }
}

TEST_CASE("pow by a uniform 2 or 3 is products, as the eager kernel computes it", "[region_codegen]") {
  for (double e : {2.0, 3.0, 0.5, -1.0}) {
    const OpCase c{LOOM_FUSED_POW, 2, {}, "pow"};
    const Region r = single_op(c, LOOM_DTYPE_FLOAT32);
    Tensor base = make_input(LOOM_DTYPE_FLOAT32, Layout::InPlace, 5);
    Tensor exponent = make(LOOM_DTYPE_FLOAT32, {1});
    set(exponent, {0}, e);
    exponent.shape = {kN};
    exponent.strides = {0};
    check_region(r, LOOM_DTYPE_FLOAT32, {base, exponent}, "pow by " + std::to_string(e));
  }
}

TEST_CASE("GELU written as ops, with float64 scalars cast in, and two outputs", "[region_codegen]") {
  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x * x * x))), the
  // constants float64 0-d inputs cast to float32 as the tracer records them;
  // x*x also an output.
  const int32_t F = LOOM_DTYPE_FLOAT32, D = LOOM_DTYPE_FLOAT64;
  Region r;
  r.num_inputs = 5;
  r.instrs = {
      {LOOM_FUSED_INPUT, F, {0}, {}},                    // 0 x
      {LOOM_FUSED_INPUT, D, {1}, {}},                    // 1 0.5
      {LOOM_FUSED_INPUT, D, {2}, {}},                    // 2 0.044715
      {LOOM_FUSED_INPUT, D, {3}, {}},                    // 3 sqrt(2/pi)
      {LOOM_FUSED_INPUT, D, {4}, {}},                    // 4 1.0
      {LOOM_FUSED_CAST, F, {1}, {}},                     // 5
      {LOOM_FUSED_CAST, F, {2}, {}},                     // 6
      {LOOM_FUSED_CAST, F, {3}, {}},                     // 7
      {LOOM_FUSED_CAST, F, {4}, {}},                     // 8
      {LOOM_FUSED_MUL, F, {5, 0}, {}},                   // 9  0.5 x
      {LOOM_FUSED_MUL, F, {0, 0}, {}},                   // 10 x x
      {LOOM_FUSED_MUL, F, {10, 0}, {}},                  // 11 x x x
      {LOOM_FUSED_MUL, F, {6, 11}, {}},                  // 12
      {LOOM_FUSED_ADD, F, {0, 12}, {int_value(1)}},      // 13
      {LOOM_FUSED_MUL, F, {7, 13}, {}},                  // 14
      {LOOM_FUSED_TANH, F, {14}, {}},                    // 15
      {LOOM_FUSED_ADD, F, {8, 15}, {int_value(1)}},      // 16
      {LOOM_FUSED_MUL, F, {9, 16}, {}},                  // 17
  };
  r.outputs = {17, 10};
  std::vector<Tensor> inputs = {make_input(F, Layout::InPlace, 1)};
  for (double v : {0.5, 0.044715, std::sqrt(2.0 / M_PI), 1.0}) {
    Tensor s = make(D, {1});
    set(s, {0}, v);
    s.shape = {kN};
    s.strides = {0};
    inputs.push_back(s);
  }
  check_region(r, F, inputs, "GELU as ops");
}

TEST_CASE("a compiled region may write over its input", "[region_codegen]") {
  const OpCase c{LOOM_FUSED_TANH, 1, {}, "tanh"};
  const Region r = single_op(c, LOOM_DTYPE_FLOAT32);
  Tensor x = make_input(LOOM_DTYPE_FLOAT32, Layout::InPlace, 9);
  Tensor expected = make(LOOM_DTYPE_FLOAT32, {kN});
  REQUIRE(run_region("never", r, {x.desc()}, {expected.desc()}) == "");
  REQUIRE(run_region("require", r, {x.desc()}, {x.desc()}) == "");
  require_same_bits(expected, x, "tanh in place");
}

TEST_CASE("regions without a generated form decline and run interpreted", "[region_codegen]") {
  std::vector<LoomFusedInstr> keep;
  // Integers: their kernels report division by zero, which a loop cannot.
  const Region ints = single_op({LOOM_FUSED_ADD, 2, {int_value(1)}, "add"}, LOOM_DTYPE_INT32);
  CHECK_THAT(loom::cpu::generate_region(abi_region(ints, keep), 0).declined, Catch::Contains("int32"));
  const Region clamp = single_op({LOOM_FUSED_CLAMP, 1, {float_value(-1), float_value(1)}, "clamp"}, LOOM_DTYPE_FLOAT32);
  CHECK_THAT(loom::cpu::generate_region(abi_region(clamp, keep), 0).declined, Catch::Contains("clamp"));
  // Declining is no failure, even under "require": the interpreter runs it.
  Tensor a = make(LOOM_DTYPE_INT32, {kN}), b = make(LOOM_DTYPE_INT32, {kN}), out = make(LOOM_DTYPE_INT32, {kN});
  for (int64_t i = 0; i < kN; ++i) {
    set(a, {i}, static_cast<long double>(i));
    set(b, {i}, 7);
  }
  REQUIRE(run_region("require", ints, {a.desc(), b.desc()}, {out.desc()}) == "");
  CHECK(get(out, {kN - 1}) == kN - 1 + 7);
}

TEST_CASE("a missing or failing compiler: an error under require, the interpreter otherwise", "[region_codegen]") {
  const OpCase c{LOOM_FUSED_SIGMOID, 1, {}, "sigmoid"};
  const Region r = single_op(c, LOOM_DTYPE_FLOAT64);  // a source no earlier case compiled
  Tensor x = make_input(LOOM_DTYPE_FLOAT64, Layout::InPlace, 11);
  Tensor expected = make(LOOM_DTYPE_FLOAT64, {kN}), got = make(LOOM_DTYPE_FLOAT64, {kN});
  REQUIRE(run_region("never", r, {x.desc()}, {expected.desc()}) == "");
  const char* saved = std::getenv("LOOM_CXX");
  const std::string saved_value = saved ? saved : "";
  ::setenv("LOOM_CXX", "/nonexistent/c++", 1);
  CHECK_THAT(run_region("require", r, {x.desc()}, {got.desc()}), Catch::Contains("LOOM_CXX"));
  ::setenv("LOOM_CXX", "/bin/false", 1);
  CHECK_THAT(run_region("require", r, {x.desc()}, {got.desc()}),
             Catch::Contains("/bin/false exited with status 1"));
  REQUIRE(run_region("always", r, {x.desc()}, {got.desc()}) == "");
  require_same_bits(expected, got, "sigmoid, the compiler failing");
  if (saved) ::setenv("LOOM_CXX", saved_value.c_str(), 1);
  else ::unsetenv("LOOM_CXX");
}

TEST_CASE("LOOM_CPU_CODEGEN of an unknown value is refused, naming it", "[region_codegen]") {
  const Region r = single_op({LOOM_FUSED_NEG, 1, {}, "neg"}, LOOM_DTYPE_FLOAT32);
  Tensor x = make_input(LOOM_DTYPE_FLOAT32, Layout::InPlace, 2), out = make(LOOM_DTYPE_FLOAT32, {kN});
  CHECK_THAT(run_region("sometimes", r, {x.desc()}, {out.desc()}),
             Catch::Contains("LOOM_CPU_CODEGEN") && Catch::Contains("sometimes"));
}
