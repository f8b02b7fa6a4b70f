// The CUDA plugin's fused-region generator, without a GPU: every source it
// writes must compile with NVRTC for sm_90, and it declines only what it
// documents (integer division, remainder, fmod and pow, whose errors a
// kernel cannot report; hardtanh of integers). What the kernels compute is
// checked on a GPU by loom-conformance --device cuda (its fused regions).
#include <catch2/catch.hpp>

#include "fused_cases.h"
#include "fused_codegen.hpp"
#include "nvrtc_compiler.hpp"

#include <loom/fusion.h>
#include <loom/loom.h>
#include <loom/op_registry.h>
#include <loom/schema_defaults.h>

namespace {

using loom::DType;

bool documented_decline(const std::string& why) {
  for (const char* known : {"integer division", "integer remainder", "integer fmod", "integer pow", "hardtanh of integers"})
    if (why.find(known) != std::string::npos) return true;
  return false;
}

// Ops the generator declines on integer inputs (their promotion may keep
// them integral): left out of the all-ops region of those dtypes.
bool declined_for(const std::string& name, DType dtype) {
  const bool floating = dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float32 ||
                        dtype == DType::Float64;
  return !floating && (name == "div" || name == "remainder" || name == "fmod" || name == "pow" || name == "hardtanh");
}

void check_compiles(const LoomFusedRegion& region, const std::string& what) {
  const auto src = loom::cuda_fusion::generate(region);
  INFO(what << "\n" << loom::fusion::listing(region));
  if (!src.declined.empty()) {
    CHECK(documented_decline(src.declined));
    return;
  }
  std::string error;
  const std::string cubin = loom::cuda_fusion::compile_cubin(src.code, 90, error);
  INFO(src.code << "\n" << error);
  CHECK(!cubin.empty());
}

}  // namespace

TEST_CASE("every op of the fused-op table, on every dtype, compiles with NVRTC") {
  if (!loom::cuda_fusion::nvrtc_missing().empty()) {
    WARN("skipped: " << loom::cuda_fusion::nvrtc_missing());
    return;
  }
  for (int code = 0; code < LOOM_DTYPE_COUNT; ++code) {
    const DType dtype = static_cast<DType>(code);
    loom::fusion::RegionBuilder b;
    const int32_t x = b.input(dtype, 2), y = b.input(dtype, 1), c = b.input(DType::Bool, 2);
    int32_t last = x, added = 0;
#define LOOM_TEST_FUSED_OP(CODE, name, value)                                                        \
  if (const loom::OpDef* op = loom::Dispatcher::instance().find(name); op && !declined_for(name, dtype)) { \
    std::vector<int32_t> args;                                                                       \
    std::vector<LoomValue> values;                                                                   \
    for (const loom::Argument& a : op->schema().args) {                                              \
      if (a.is_tensor()) args.push_back(args.empty() && std::string(name) == "where" ? c : (args.size() % 2 ? y : x)); \
      else values.push_back(a.default_text ? loom::default_value_of(a) : LoomValue{});                \
    }                                                                                                \
    if (std::string(name) == "clamp") values[0] = LoomValue{LOOM_VALUE_FLOAT, 0, {.f = -0.5}};        \
    try {                                                                                            \
      last = b.add(*op, args, values);                                                               \
      ++added;                                                                                       \
    } catch (const loom::Error&) {                                                                   \
    }                                                                                                \
  }
    LOOM_FUSED_OP_LIST(LOOM_TEST_FUSED_OP)
#undef LOOM_TEST_FUSED_OP
    b.output(last);
    INFO(loom::name(dtype) << ": " << added << " ops");
    CHECK(added >= 10);
    const LoomFusedRegion& region = b.region();
    check_compiles(region, std::string("all ops, ") + std::string(loom::name(dtype)));
  }
}

TEST_CASE("random regions of every dtype compile with NVRTC") {
  if (!loom::cuda_fusion::nvrtc_missing().empty()) {
    WARN("skipped: " << loom::cuda_fusion::nvrtc_missing());
    return;
  }
  for (int code = 0; code < LOOM_DTYPE_COUNT; ++code)
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto r = loom::conformance::random_region(static_cast<DType>(code), seed * 31 + static_cast<uint64_t>(code));
      check_compiles(r.builder->region(), std::string(loom::name(static_cast<DType>(code))));
    }
}

TEST_CASE("a source NVRTC rejects comes back with its log, and GELU's source reads as written") {
  if (!loom::cuda_fusion::nvrtc_missing().empty()) {
    WARN("skipped: " << loom::cuda_fusion::nvrtc_missing());
    return;
  }
  std::string error;
  CHECK(loom::cuda_fusion::compile_cubin("this is not CUDA", 90, error).empty());
  CHECK_THAT(error, Catch::Contains("nvrtcCompileProgram"));

  loom::fusion::RegionBuilder b;
  const int32_t x = b.input(DType::BFloat16, 2);
  LoomValue tanh_form{};
  tanh_form.kind = LOOM_VALUE_STRING;
  tanh_form.u.str.data = "tanh";
  tanh_form.u.str.size = 4;
  b.output(b.add(*loom::Dispatcher::instance().find("gelu"), {x}, {tanh_form}));
  const auto src = loom::cuda_fusion::generate(b.region());
  REQUIRE(src.declined.empty());
  CHECK_THAT(src.code, Catch::Contains("tanhf("));
  CHECK_THAT(src.code, Catch::Contains("bf2f(f2bf("));  // rounded to bfloat16 as the eager kernel stores it
  CHECK(!loom::cuda_fusion::compile_cubin(src.code, 90, error).empty());
}
