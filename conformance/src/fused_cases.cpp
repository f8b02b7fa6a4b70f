// fused_cases.cpp — random fused regions against op-by-op execution
// (fused_cases.h).
//
// A case: one to three inputs of the case's dtype — the full shape [37, 129]
// (several CPU tiles, a ragged end), a row [129], a column [37, 1] — and
// sometimes a 0-d float64 / int64 input, as a Python scalar becomes; then two
// to eight random ops of plugin_api.h's LOOM_FUSED_OP_LIST over earlier
// values (an op whose promotion rejects the dtypes is redrawn), with random
// non-default arguments where an op has them (add's alpha, clamp's bounds,
// gelu's tanh form, div's rounding); one or two outputs. The reference is
// loom::fusion::RegionBuilder::run_reference on the CPU: the same ops one by
// one, which the region must reproduce within the op cases' tolerances.
#include "fused_cases.h"

#include "compare.h"

#include <loom/error.h>
#include <loom/fusion.h>
#include <loom/loom.h>
#include <loom/op_registry.h>
#include <loom/schema_defaults.h>

#include <ostream>
#include <random>

namespace loom::conformance {
namespace {

constexpr int64_t kRows = 37, kCols = 129;

std::vector<const OpDef*> fusable_ops() {
  std::vector<const OpDef*> ops;
#define LOOM_CONFORMANCE_FUSED_OP(CODE, name, value) \
  if (const OpDef* op = Dispatcher::instance().find(name)) ops.push_back(op);
  LOOM_FUSED_OP_LIST(LOOM_CONFORMANCE_FUSED_OP)
#undef LOOM_CONFORMANCE_FUSED_OP
  return ops;
}

LoomValue float_value(double f) {
  LoomValue v{};
  v.kind = LOOM_VALUE_FLOAT;
  v.u.f = f;
  return v;
}
LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}
LoomValue string_value(const char* s) {
  LoomValue v{};
  v.kind = LOOM_VALUE_STRING;
  v.u.str.data = s;
  v.u.str.size = static_cast<int64_t>(std::char_traits<char>::length(s));
  return v;
}

// The op's non-tensor arguments: its defaults, with some drawn instead.
std::vector<LoomValue> draw_values(const OpDef& op, std::mt19937_64& rng) {
  std::vector<LoomValue> values;
  const std::string& name = op.name();
  for (const Argument& a : op.schema().args) {
    if (a.is_tensor()) continue;
    LoomValue v = a.default_text ? default_value_of(a) : LoomValue{};
    const bool draw = rng() % 2 == 0;
    if ((name == "clamp" || name == "hardtanh") && (a.name == "min" || a.name == "min_val")) v = float_value(-0.5);
    if ((name == "clamp" || name == "hardtanh") && (a.name == "max" || a.name == "max_val")) v = float_value(draw ? 0.75 : 2.0);
    if ((name == "add" || name == "sub") && a.name == "alpha" && draw) v = int_value(rng() % 2 ? 2 : -1);
    if (name == "gelu" && a.name == "approximate" && draw) v = string_value("tanh");
    if (name == "div" && a.name == "rounding_mode" && draw) v = string_value(rng() % 2 ? "trunc" : "floor");
    if (name == "leaky_relu" && draw) v = float_value(0.2);
    values.push_back(v);
  }
  return values;
}

bool floating(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}

Tensor random_input(DType dtype, IntArrayRef sizes, std::mt19937_64& rng) {
  const int64_t seed = static_cast<int64_t>(rng() % 1000000);
  manual_seed(seed);
  if (floating(dtype)) return (randn(sizes) * 2.0).to(dtype);
  if (dtype == DType::Bool) return randint(0, 2, sizes).to(dtype);
  if (dtype == DType::UInt8) return randint(1, 30, sizes).to(dtype);
  // Mostly non-zero integers: fewer cases lost to division by zero.
  Tensor t = randint(1, 10, sizes) * (randint(0, 2, sizes) * 2 - 1);
  return t.to(dtype);
}

void make_case(RandomRegion& c, DType dtype, std::mt19937_64& rng, const std::vector<const OpDef*>& ops) {
  std::vector<int32_t> pool;
  const int n_inputs = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < n_inputs; ++i) {
    std::vector<int64_t> sizes = {kRows, kCols};
    DType d = dtype;
    if (i > 0) {
      switch (rng() % 4) {
        case 0: break;
        case 1: sizes = {kCols}; break;
        case 2: sizes = {kRows, 1}; break;
        default:
          sizes = {};
          d = floating(dtype) ? DType::Float64 : (dtype == DType::Bool ? DType::Bool : DType::Int64);
      }
    }
    c.inputs.push_back(random_input(d, sizes, rng));
    pool.push_back(c.builder->input(d, static_cast<int64_t>(sizes.size())));
  }
  const int n_ops = 2 + static_cast<int>(rng() % 7);
  int32_t last = pool.back();
  for (int k = 0; k < n_ops; ++k) {
    for (int attempt = 0; attempt < 40; ++attempt) {
      const OpDef& op = *ops[rng() % ops.size()];
      std::vector<int32_t> args;
      for (const Argument& a : op.schema().args)
        if (a.is_tensor()) args.push_back(rng() % 2 ? last : pool[rng() % pool.size()]);
      try {
        last = c.builder->add(op, args, draw_values(op, rng));
        pool.push_back(last);
        break;
      } catch (const Error&) {
        // The op's promotion rejects these dtypes: draw another.
      }
    }
  }
  c.builder->output(last);
  if (pool.size() > static_cast<size_t>(n_inputs) + 1 && rng() % 3 == 0)
    c.builder->output(pool[static_cast<size_t>(n_inputs) + rng() % (pool.size() - static_cast<size_t>(n_inputs) - 1)]);
}

}  // namespace

RandomRegion random_region(DType dtype, uint64_t seed) {
  static const auto ops = fusable_ops();
  std::mt19937_64 rng(seed);
  RandomRegion c;
  make_case(c, dtype, rng, ops);
  return c;
}

FusedReport run_fused_cases(Device device, int per_dtype, uint64_t seed) {
  FusedReport report;
  for (int code = 0; code < LOOM_DTYPE_COUNT; ++code) {
    const DType dtype = static_cast<DType>(code);
    for (int i = 0; i < per_dtype; ++i) {
      RandomRegion c = random_region(dtype, seed * 1000003u + static_cast<uint64_t>(code) * 7919u + static_cast<uint64_t>(i));
      const LoomFusedRegion& region = c.builder->region();
      ++report.cases;
      const std::string id = "fused/" + std::string(name(dtype)) + "/" + std::to_string(i);
      std::vector<Tensor> expected;
      std::vector<const Tensor*> cpu_in;
      for (const Tensor& t : c.inputs) cpu_in.push_back(&t);
      try {
        expected = c.builder->run_reference(cpu_in);
      } catch (const Error&) {
        ++report.skipped;
        continue;
      }
      fusion::Compiled compiled;
      try {
        compiled = fusion::compile(device, region);
      } catch (const std::exception& e) {
        report.failures.push_back(id + ": compiling failed: " + e.what() + "\n" + fusion::listing(region));
        continue;
      }
      if (!compiled.kernel) {
        if (report.declined_reason.empty()) report.declined_reason = compiled.declined;
        ++report.declined;
        continue;
      }
      std::vector<Tensor> on_device;
      std::vector<const Tensor*> dev_in;
      for (const Tensor& t : c.inputs) on_device.push_back(t.to(device));
      for (const Tensor& t : on_device) dev_in.push_back(&t);
      std::vector<Tensor> got;
      try {
        got = compiled.kernel->run(dev_in);
      } catch (const std::exception& e) {
        report.failures.push_back(id + ": running failed: " + e.what() + "\n" + fusion::listing(region));
        continue;
      }
      std::string why;
      for (size_t k = 0; k < expected.size() && why.empty(); ++k) {
        const Comparison cmp = compare(got[k], expected[k], opinfo::Compare::Close,
                                       result_tolerance(dtype, expected[k].dtype()));
        if (cmp.status != Status::Pass) why = "output " + std::to_string(k) + ": " + cmp.message;
      }
      if (!why.empty()) {
        report.failures.push_back(id + ": " + why + "\n" + fusion::listing(region));
        continue;
      }
      ++report.matched;
    }
  }
  return report;
}

void print_fused_report(std::ostream& os, const std::string& device, const FusedReport& r) {
  os << "fused regions on " << device << ": " << r.cases << " random regions, " << r.matched << " compiled and match op-by-op";
  if (r.declined) os << ", " << r.declined << " declined (" << r.declined_reason << "; they run op by op)";
  if (r.skipped) os << ", " << r.skipped << " skipped (the op-by-op reference raised)";
  if (!r.failures.empty()) os << ", " << r.failures.size() << " FAILED";
  os << "\n";
  for (const auto& f : r.failures) os << "  FAIL " << f;
}

}  // namespace loom::conformance
