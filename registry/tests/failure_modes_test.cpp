// Every way a plugin can fail, each beside a good plugin in mixed/: the
// broken one is Failed with a reason naming its manifest and the cause, and
// the good one still loads and works.
#include "regtest.h"

#include <loom/device.h>
#include <loom/plugin_api.h>
#include <loom/tensor.h>

using namespace regtest;

namespace {

// Checks that the plugin of mixed/<file> failed for the given cause(s).
PluginRecord expect_failed(const std::string& file, std::initializer_list<std::string> causes) {
  return expect_failed_in(mixed(), "mixed/" + file, causes);
}

std::string abi(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

}  // namespace

TEST_CASE("a good plugin loads and works beside broken ones", "[registry][failure]") {
  PluginRecord ok = by_manifest(mixed(), path("mixed/ok.json"));
  INFO("reason: " << ok.reason);
  REQUIRE(ok.state == PluginState::Loaded);
  CHECK(ok.name == "regtest_ok");
  CHECK(ok.version == "0.0.1-regtest");
  CHECK(ok.abi_version == abi(LOOM_ABI_MAJOR, LOOM_ABI_MINOR));
  CHECK(ok.plugin_abi_version == abi(LOOM_ABI_MAJOR, LOOM_ABI_MINOR));
  CHECK(ok.library_path == path("lib/libregtest_ok.so"));  // resolved, "../" gone
  CHECK(ok.registered_device_types == std::vector<std::string>{"regtest_ok"});
  CHECK(ok.device_count == 1);
  CHECK(ok.kernels == 1);
  CHECK(ok.ops_defined == 1);
  CHECK(ok.reason.empty());

  // It is really in the core.
  CHECK(loom::find_device_type_slot("regtest_ok") >= 0);
  CHECK(loom::device_count("regtest_ok") == 1);
  loom::Device dev("regtest_ok:0");
  CHECK(dev.type_name() == "regtest_ok");

  // Loading it again is a no-op that succeeds.
  std::string why;
  CHECK(mixed().load("regtest_ok", why));
}

TEST_CASE("the good plugin device round-trips data", "[registry][failure]") {
  REQUIRE(by_manifest(mixed(), path("mixed/ok.json")).state == PluginState::Loaded);
  if (!have_cpu()) return;  // nothing to copy from
  loom::Device dev("regtest_ok");
  std::vector<int64_t> sizes{4};
  loom::Tensor t = loom::from_vector<float>({1.f, 2.f, 3.f, 4.f}, sizes, dev);
  CHECK(t.device() == dev);
  CHECK(t.to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f, 4.f});
}

TEST_CASE("failures never throw and load_all reports them", "[registry][failure]") {
  bool all_ok = true;
  REQUIRE_NOTHROW(all_ok = mixed().load_all());
  CHECK_FALSE(all_ok);
  int failed = 0;
  for (const auto& p : mixed().plugins())
    if (p.state == PluginState::Failed) ++failed;
  CHECK(failed == 16);  // every manifest in mixed/ but ok.json and nodev.json
}

TEST_CASE("bad JSON names the parser position", "[registry][failure][manifest]") {
  auto rec = expect_failed("badjson.json", {"invalid JSON", "parse error at line 4, column"});
  CHECK(rec.name == "badjson");  // the file stem when the name is unreadable
  expect_failed("empty.json", {"invalid JSON"});
}

TEST_CASE("missing and mistyped manifest fields are named", "[registry][failure][manifest]") {
  auto rec = expect_failed("missing_field.json", {"field \"plugin.library_path\" is missing"});
  CHECK(rec.name == "regtest_missing_field");
  expect_failed("no_plugin.json", {"field \"plugin\" is missing"});
  expect_failed("wrong_type.json",
                {"field \"plugin.device_types\" must be an array of strings, got string"});
  expect_failed("bad_type_entry.json",
                {"field \"plugin.device_types[1]\" must be a string, got number"});
  expect_failed("bad_priority.json", {"field \"plugin.priority\" must be an integer"});
  expect_failed("bad_abi_string.json",
                {"field \"plugin.abi_version\" must be \"MAJOR.MINOR\", got \"one\""});
}

TEST_CASE("an unsupported file_format_version major is refused", "[registry][failure][manifest]") {
  expect_failed("bad_format.json",
                {"field \"file_format_version\"", "unsupported major version 2"});
}

TEST_CASE("a missing library is reported with its resolved path", "[registry][failure]") {
  expect_failed("nolib.json", {"library not found: " + path("lib/libregtest_does_not_exist.so"),
                               "library_path \"../lib/libregtest_does_not_exist.so\""});
}

TEST_CASE("loader errors carry the loader text", "[registry][failure]") {
  expect_failed("undefined.json",
                {"loader error", "undefined symbol: regtest_symbol_nobody_defines"});
  expect_failed("garbage.json", {"loader error", path("lib/libregtest_garbage.so")});
}

TEST_CASE("a library without the entry symbol is refused", "[registry][failure]") {
  expect_failed("noentry.json", {"entry symbol 'loom_plugin_entry' not found in " +
                                     path("lib/libregtest_noentry.so"),
                                 "undefined symbol: loom_plugin_entry"});
}

TEST_CASE("an ABI major mismatch in the plugin is refused before init", "[registry][failure]") {
  auto rec = expect_failed("badabi.json",
                           {"ABI major version mismatch",
                            "plugin was built for ABI " + abi(LOOM_ABI_MAJOR + 1, 0),
                            "this loom speaks ABI " + abi(LOOM_ABI_MAJOR, LOOM_ABI_MINOR)});
  CHECK(rec.plugin_abi_version == abi(LOOM_ABI_MAJOR + 1, 0));
  // Its init (which would abort) never ran, so nothing was registered.
  CHECK(loom::find_device_type_slot("regtest_badabi") == -1);
}

TEST_CASE("an ABI major mismatch in the manifest is refused before loading", "[registry][failure]") {
  auto rec = expect_failed("manifest_abi.json",
                           {"ABI major version mismatch",
                            "abi_version \"" + abi(LOOM_ABI_MAJOR + 1, 0) + "\"",
                            "this loom speaks ABI " + abi(LOOM_ABI_MAJOR, LOOM_ABI_MINOR)});
  CHECK(rec.plugin_abi_version.empty());  // the library was never opened
}

TEST_CASE("an init error leaves no trace and its message is kept", "[registry][failure]") {
  expect_failed("initfail.json", {"regtest: deliberate init failure after registering a device type"});
  // The device type it registered before failing was not committed.
  CHECK(loom::find_device_type_slot("regtest_initfail") == -1);
  CHECK(loom::device_count("regtest_initfail") == 0);

  // Asking for its type again gives the same reason, without a retry.
  std::string why;
  CHECK_FALSE(mixed().load_for_device_type("regtest_initfail", why));
  CHECK_THAT(why, Contains("deliberate init failure"));
  CHECK_THAT(why, Contains(path("mixed/initfail.json")));
}

TEST_CASE("a plugin without devices is NoDevices with its reason", "[registry][failure]") {
  PluginRecord rec = by_manifest(mixed(), path("mixed/nodev.json"));
  CHECK(rec.state == PluginState::NoDevices);
  CHECK_THAT(rec.reason, Contains("regtest_nodev: regtest: no hardware present"));
  CHECK(rec.device_count == 0);
  CHECK(loom::find_device_type_slot("regtest_nodev") >= 0);  // registered all the same
  std::string why;
  CHECK(mixed().load("regtest_nodev", why));  // loaded, just without devices
}
