// Which catalog ops run natively on cuda, checked without a GPU (the plugin
// registers its kernels whether or not a device exists). Every op has a
// cuda kernel or a composite (made of ops that do), except the ones listed
// below, which run on the CPU through the core's fallback: visibly, in
// loom::fallback_count(op, "cuda"). A new op without a cuda kernel fails
// this test until it gets one or is listed here (and in docs/cuda.md).
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <set>
#include <string>
#include <vector>

// The device type under test: "cuda", or "hip" when plugins/hip/tests
// builds this file for the HIP plugin (built from the same sources).
#ifndef LOOM_TEST_GPU
#define LOOM_TEST_GPU "cuda"
#endif

namespace {

// Ops whose every call falls back to the CPU on cuda, and why.
const std::set<std::string> kCpuFallback = {
};

}  // namespace

TEST_CASE("every catalog op runs natively on the GPU or is a listed CPU fallback") {
  const int slot = loom::device_type_slot(LOOM_TEST_GPU);
  std::vector<std::string> missing, stale;
  for (const loom::OpDef* op : loom::Dispatcher::instance().ops()) {
    const std::string& name = op->name();
    // Ops defined by tests and samples in this process (test_, sim_...) are
    // not the catalog.
    if (name.rfind("sim_", 0) == 0 || name.find("::") != std::string::npos) continue;
    const bool native = op->kernel(slot) != nullptr || op->composite() != nullptr;
    if (!native && !kCpuFallback.count(name)) missing.push_back(name);
    if (native && kCpuFallback.count(name)) stale.push_back(name);
  }
  std::string list;
  for (const auto& m : missing) list += "  " + m + "\n";
  INFO("catalog ops with neither a " LOOM_TEST_GPU " kernel nor a composite:\n" << list);
  CHECK(missing.empty());
  std::string old;
  for (const auto& s : stale) old += "  " + s + "\n";
  INFO("listed as CPU fallbacks but native now:\n" << old);
  CHECK(stale.empty());
}
