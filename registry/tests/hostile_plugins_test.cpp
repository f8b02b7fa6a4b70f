// Hostile plugins (plugins/regtest_plugin.cpp's hostile modes, in hostile/):
// plugin code that throws C++ exceptions across the C ABI, returns error
// statuses, registers a kernel for an op nobody defined, claims another
// plugin's device type, or throws out of init. Each must come back as a clear
// loom::Error or a Failed record naming the plugin, never std::terminate; and
// after each one the good plugin (hostile/a_ok.json) still loads and computes.
#include "regtest.h"

#include <loom/device.h>
#include <loom/op_registry.h>
#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/ops.h>
#include <loom/tensor.h>

using namespace regtest;

namespace {

Registry& hostile() {
  static Registry& r = loaded_registry("hostile");
  return r;
}

loom::Tensor call_op(const std::string& op, const loom::Tensor& t) {
  loom::OpCall call(loom::Dispatcher::instance().op(op));
  call.args.push_back(&t);
  loom::dispatch(call);
  return call.result();
}

// The good plugin is Loaded, and its own kernel computes on its device.
void check_good_plugin_works() {
  PluginRecord ok = by_manifest(hostile(), path("hostile/a_ok.json"));
  INFO("reason: " << ok.reason);
  REQUIRE(ok.state == PluginState::Loaded);
  std::string why;
  CHECK(hostile().load("regtest_hostile_ok", why));
  if (!have_cpu()) return;
  loom::Device dev("regtest_hostile_ok");
  auto x = loom::from_vector<float>({1.f, -2.f, 3.f}, std::vector<int64_t>{3}, dev);
  auto y = call_op("regtest_hostile_ok_identity", x);
  CHECK(y.device() == dev);
  CHECK((y.to_vector<float>() == std::vector<float>{1.f, -2.f, 3.f}));
}

PluginRecord expect_failed(const std::string& file, std::initializer_list<std::string> causes) {
  return expect_failed_in(hostile(), "hostile/" + file, causes);
}

// Runs f, which must throw loom::Error of `kind` whose message holds every
// one of `parts`.
template <class F>
void expect_error(F&& f, loom::ErrorKind kind, std::initializer_list<std::string> parts) {
  try {
    f();
    FAIL("expected a loom::Error");
  } catch (const loom::Error& e) {
    INFO("message: " << e.what());
    CHECK(e.kind() == kind);
    for (const auto& p : parts) CHECK_THAT(std::string(e.what()), Contains(p));
  }
}

}  // namespace

TEST_CASE("hostile: a kernel throwing a C++ exception becomes a loom::Error", "[registry][hostile]") {
  REQUIRE(by_name(hostile(), "regtest_throwing").state == PluginState::Loaded);
  if (!have_cpu()) return;
  loom::Device dev("regtest_throwing");
  auto x = loom::from_vector<float>({1.f, 2.f}, std::vector<int64_t>{2}, dev);
  const std::string who = "plugin 'regtest_throwing'";
  expect_error([&] { call_op("regtest_throwing_throw_std", x); }, loom::ErrorKind::Internal,
               {"op 'regtest_throwing_throw_std'", "regtest_throwing:0", who,
                "threw a C++ exception across the plugin ABI", "std::runtime_error",
                "regtest: kernel threw on purpose"});
  expect_error([&] { call_op("regtest_throwing_throw_other", x); }, loom::ErrorKind::Internal,
               {"op 'regtest_throwing_throw_other'", who, "of non-standard type",
                "RegtestOddity"});
  expect_error([&] { call_op("regtest_throwing_throw_bad_alloc", x); },
               loom::ErrorKind::OutOfMemory,
               {"op 'regtest_throwing_throw_bad_alloc'", who, "std::bad_alloc"});
  // The plugin's well-behaved kernel, and the good plugin, still work.
  CHECK((call_op("regtest_throwing_identity", x).to_vector<float>() == std::vector<float>{1.f, 2.f}));
  check_good_plugin_works();
}

TEST_CASE("hostile: a kernel's error status keeps its message and kind", "[registry][hostile]") {
  REQUIRE(by_name(hostile(), "regtest_throwing").state == PluginState::Loaded);
  if (!have_cpu()) return;
  loom::Device dev("regtest_throwing");
  auto x = loom::from_vector<float>({1.f}, std::vector<int64_t>{1}, dev);
  expect_error([&] { call_op("regtest_throwing_error_status", x); }, loom::ErrorKind::Device,
               {"regtest_throwing_error_status on regtest_throwing:0 (plugin 'regtest_throwing')",
                "regtest: the device is on fire"});
  expect_error([&] { call_op("regtest_throwing_oom_status", x); }, loom::ErrorKind::OutOfMemory,
               {"regtest_throwing_oom_status", "regtest: 123456789 bytes do not fit"});
  check_good_plugin_works();
}

TEST_CASE("hostile: device-table slots and fallbacks that throw become loom::Errors",
          "[registry][hostile]") {
  REQUIRE(by_name(hostile(), "regtest_throwing").state == PluginState::Loaded);
  loom::Device dev("regtest_throwing_baddev");
  const std::string who = "plugin 'regtest_throwing'";
  // allocate: std::runtime_error at 1 KiB, std::bad_alloc (out of memory,
  // naming device and bytes) at 1 MiB.
  expect_error([&] { loom::empty({256}, loom::DType::Float32, dev); }, loom::ErrorKind::Internal,
               {"allocating 1024 bytes on regtest_throwing_baddev:0", "allocate of " + who,
                "regtest: allocate threw on purpose"});
  expect_error([&] { loom::empty({1 << 18}, loom::DType::Float32, dev); },
               loom::ErrorKind::OutOfMemory,
               {"allocating 1048576 bytes on regtest_throwing_baddev:0", "std::bad_alloc"});
  if (!have_cpu()) return;
  // copy_from_host throws a non-std type for a 4-byte copy.
  expect_error([&] { loom::from_vector<float>({1.f}, std::vector<int64_t>{1}, dev); },
               loom::ErrorKind::Internal,
               {"copy_from_host of device type 'regtest_throwing_baddev'", who, "RegtestOddity"});
  // Every op on it runs its boxed fallback, which throws.
  auto x = loom::from_vector<float>({1.f, 2.f}, std::vector<int64_t>{2}, dev);
  expect_error([&] { loom::neg(x); }, loom::ErrorKind::Internal,
               {"the boxed fallback for op 'neg' on regtest_throwing_baddev:0", who, "std::logic_error",
                "regtest: fallback threw"});
  check_good_plugin_works();
}

TEST_CASE("hostile: a kernel for an op that does not exist fails that plugin's init",
          "[registry][hostile]") {
  // The host answers kernel_register with LOOM_STATUS_NOT_FOUND; the plugin
  // did not handle it, so its init failed and nothing it staged took effect.
  expect_failed("unknown_op.json",
                {"plugin 'regtest_unknown_op' init failed",
                 "kernel_register: unknown op 'regtest_no_such_op' for device type "
                 "'regtest_unknown_op'",
                 "regtest_plugin.cpp:"});
  CHECK(loom::find_device_type_slot("regtest_unknown_op") == -1);
  CHECK(loom::Dispatcher::instance().find("regtest_unknown_op_identity") == nullptr);
  check_good_plugin_works();
}

TEST_CASE("hostile: a plugin may skip a kernel for an unknown op and keep the rest",
          "[registry][hostile]") {
  PluginRecord rec = by_name(hostile(), "regtest_unknown_op_tolerated");
  INFO("reason: " << rec.reason);
  REQUIRE(rec.state == PluginState::Loaded);
  CHECK(rec.kernels == 1);  // identity only
  if (!have_cpu()) return;
  loom::Device dev("regtest_unknown_op_tolerated");
  auto x = loom::from_vector<float>({5.f}, std::vector<int64_t>{1}, dev);
  CHECK((call_op("regtest_unknown_op_tolerated_identity", x).to_vector<float>() ==
         std::vector<float>{5.f}));
  check_good_plugin_works();
}

TEST_CASE("hostile: a second plugin claiming a device type is refused, naming both",
          "[registry][hostile]") {
  expect_failed("same_type.json",
                {"plugin 'regtest_same_type' init failed",
                 "device type 'regtest_hostile_ok' is already provided by plugin "
                 "'regtest_hostile_ok' (" + path("hostile/a_ok.json") + ")"});
  check_good_plugin_works();
}

TEST_CASE("hostile: an init that throws a C++ exception fails only that plugin",
          "[registry][hostile]") {
  expect_failed("init_throws.json", {"plugin 'regtest_init_throws' init failed",
                                     "threw a C++ exception across the plugin ABI",
                                     "regtest: init threw on purpose"});
  expect_failed("init_throws_other.json",
                {"plugin 'regtest_init_throws_other' init failed", "RegtestOddity"});
  // What they registered before throwing was not committed.
  CHECK(loom::find_device_type_slot("regtest_init_throws") == -1);
  CHECK(loom::find_device_type_slot("regtest_init_throws_other") == -1);
  // load_all ran them on this thread before same_type, throwing and
  // unknown_op*: those loaded (or failed for their own reason), so a throwing
  // init leaves the thread able to load plugins.
  CHECK(by_name(hostile(), "regtest_throwing").state == PluginState::Loaded);
  check_good_plugin_works();
}
