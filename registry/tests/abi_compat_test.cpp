// The ABI's versioning promise (docs/backend_guide.md), tested with real
// compiled plugins rather than hand-made structs (core/tests/plugin_host_test
// covers those):
//  - a plugin built against an OLDER minor header (the frozen 1.0 header in
//    abi_1_0/) loads on this host, and its kernel runs;
//  - a plugin built against a NEWER minor loads too; the host reads only the
//    fields it knows of its larger structs.
// Both plugins leave poison right after the fields the host may read, so a
// host that read past its limits would crash this test.
#include "regtest.h"

#include <loom/device.h>
#include <loom/library.h>
#include <loom/ops.h>
#include <loom/plugin_api.h>
#include <loom/tensor.h>

using namespace regtest;

namespace {

Registry& abi_registry() {
  static Registry& r = loaded_registry("abi");
  return r;
}

}  // namespace

TEST_CASE("a plugin built against the ABI 1.0 header loads and its kernel runs",
          "[registry][abi]") {
  PluginRecord rec = by_name(abi_registry(), "regtest_abi_1_0");
  INFO("reason: " << rec.reason);
  REQUIRE(rec.state == PluginState::Loaded);
  CHECK(rec.abi_version == "1.0");
  CHECK(rec.plugin_abi_version == "1.0");
  CHECK(rec.version == "1.0.0-frozen");
  CHECK(rec.registered_device_types == std::vector<std::string>{"regtest_abi10"});
  CHECK(rec.kernels == 1);
  CHECK(loom::device_count("regtest_abi10") == 1);

  if (!have_cpu()) return;
  // The 1.1 thread slots lie beyond its struct_size (poison in memory): the
  // host must treat them as absent. (get_num_threads asks the cpu plugin.)
  REQUIRE_NOTHROW(loom::set_num_threads(loom::get_num_threads()));

  loom::Device dev("regtest_abi10");
  const std::vector<int64_t> sizes{2, 2};
  auto a = loom::from_vector<float>({1.f, 2.f, 3.f, 4.f}, sizes, dev);
  auto b = loom::from_vector<float>({10.f, 20.f, 30.f, 40.f}, sizes, dev);
  const uint64_t fallbacks = loom::fallback_count("add", "regtest_abi10");
  auto c = a + b;
  CHECK(c.device() == dev);
  CHECK((c.to_vector<float>() == std::vector<float>{11.f, 22.f, 33.f, 44.f}));
  // Its own kernel ran, not the CPU fallback.
  CHECK(loom::fallback_count("add", "regtest_abi10") == fallbacks);
}

TEST_CASE("a plugin built against a newer minor loads; unknown fields are ignored",
          "[registry][abi]") {
  PluginRecord rec = by_name(abi_registry(), "regtest_newer_minor");
  INFO("reason: " << rec.reason);
  REQUIRE(rec.state == PluginState::Loaded);
  CHECK(rec.plugin_abi_version ==
        std::to_string(LOOM_ABI_MAJOR) + "." + std::to_string(LOOM_ABI_MINOR + 1));
  CHECK(rec.kernels == 1);
  CHECK(loom::device_count("regtest_newer_minor") == 1);

  if (!have_cpu()) return;
  REQUIRE_NOTHROW(loom::set_num_threads(loom::get_num_threads()));
  loom::Device dev("regtest_newer_minor");
  const std::vector<int64_t> sizes{3};
  auto t = loom::from_vector<float>({1.f, 2.f, 3.f}, sizes, dev);
  CHECK((t.to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f}));
}
