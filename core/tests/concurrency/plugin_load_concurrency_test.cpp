// Plugin loading racing with dispatch. The registry loads a device type's
// plugin on its first use (registry/src/registry.cpp's resolver), so the
// first tensors on "cpu" and "sim" made by several threads at once load
// those plugins while other threads already dispatch; an explicit
// Registry::load_all() runs into the middle of it as well.
//
// CTest runs each test case of this binary in a process of its own
// (catch_discover_tests), so here the uses really are the first ones.
#include "run_threads.hpp"

#include <catch2/catch.hpp>
#include <loom/device.h>
#include <loom/registry.h>

using conc::kThreads;
using conc::compare;

namespace {

// y = 2x + 1 on `device`, copied back: sim runs add/mul itself and reaches
// the CPU plugin through the fallback for the rest.
std::string check_affine(const loom::Device& device, float base) {
  auto x = loom::arange(16, loom::DType::Float32, device) + base;
  auto y = (x * 2 + 1).cpu();
  std::vector<float> want(16);
  for (size_t i = 0; i < 16; ++i) want[i] = 2 * (base + static_cast<float>(i)) + 1;
  return compare(device.str() + " affine", y.to_vector<float>(), want);
}

}  // namespace

TEST_CASE("first uses of cpu and sim from 8 threads load each plugin once", "[concurrency]") {
  // Under CTest nothing has touched either device type yet (see above).
  INFO("sim already loaded before the threads: " << (loom::find_device_type_slot("sim") >= 0));
  auto failures = conc::run_threads(kThreads, [](int t) -> std::string {
    const loom::Device device = t % 2 == 0 ? loom::cpu_device() : loom::Device("sim");
    for (int iter = 0; iter < 10; ++iter)
      if (auto bad = check_affine(device, static_cast<float>(t * 100 + iter)); !bad.empty())
        return bad;
    return {};
  });
  CHECK(failures == std::vector<std::string>{});

  auto& registry = loom::registry::Registry::global();
  int cpu_records = 0, sim_records = 0;
  for (const auto& p : registry.plugins()) {
    if (p.name == "cpu") {
      ++cpu_records;
      CHECK(p.state == loom::registry::PluginState::Loaded);
    }
    if (p.name == "sim") {
      ++sim_records;
      CHECK(p.state == loom::registry::PluginState::Loaded);
    }
  }
  CHECK(cpu_records == 1);
  CHECK(sim_records == 1);
}

TEST_CASE("load_all runs while other threads dispatch", "[concurrency]") {
  // Thread 0 loads every plugin on the search path (again and again: the
  // later calls find them loaded); the others dispatch on cpu and sim.
  auto failures = conc::run_threads(kThreads, [](int t) -> std::string {
    if (t == 0) {
      for (int i = 0; i < 20; ++i) loom::registry::Registry::global().load_all();
      return {};
    }
    const loom::Device device = t % 2 == 0 ? loom::cpu_device() : loom::Device("sim");
    for (int iter = 0; iter < 20; ++iter)
      if (auto bad = check_affine(device, static_cast<float>(t + iter)); !bad.empty()) return bad;
    return {};
  });
  CHECK(failures == std::vector<std::string>{});
  CHECK(loom::find_device_type_slot("sim") >= 0);
}
