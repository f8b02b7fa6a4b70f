// Load on first use through the core, explicit loads, and concurrency.
#include "regtest.h"

#include <loom/device.h>
#include <loom/error.h>

#include <atomic>
#include <thread>

using namespace regtest;

TEST_CASE("the plugin of a device type is loaded on first use", "[registry][resolver]") {
  // main() pointed LOOM_PLUGIN_PATH at lazy/ before the global registry
  // existed.
  auto& global = Registry::global();
  REQUIRE_FALSE(global.search_path().empty());
  REQUIRE(global.search_path()[0].path == path("lazy"));

  loom::registry::install();  // idempotent: the library already did it
  loom::registry::install();
  REQUIRE(loom::find_device_type_slot("regtest_lazy") == -1);
  int slot = loom::device_type_slot("regtest_lazy");
  CHECK(slot >= 0);
  CHECK(loom::Device("regtest_lazy:0").type == slot);
  CHECK(by_name(global, "regtest_lazy").state == PluginState::Loaded);
}

TEST_CASE("the core error for a failed type carries the plugin reason",
          "[registry][resolver]") {
  loom::registry::install();
  const std::string manifest = path("lazy/lazy_broken.json");
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second one does not retry
    REQUIRE_THROWS_WITH(loom::device_type_slot("regtest_lazy_broken"),
                        Contains(manifest) && Contains("entry symbol 'loom_plugin_entry' not found"));
  }
  CHECK(by_name(Registry::global(), "regtest_lazy_broken").state == PluginState::Failed);
}

TEST_CASE("an unknown device type says no manifest lists it", "[registry][resolver]") {
  loom::registry::install();
  REQUIRE_THROWS_WITH(loom::device_type_slot("regtest_no_such_type"),
                      Contains("no plugin manifest lists device type 'regtest_no_such_type'"));
}

TEST_CASE("a plugin can be loaded by manifest path", "[registry][load]") {
  Registry r(std::vector<std::string>{});  // searches nothing
  std::string why;
  REQUIRE(r.load(path("explicit/regtest_explicit.json"), why));
  auto rec = by_name(r, "regtest_explicit");
  CHECK(rec.state == PluginState::Loaded);
  CHECK(rec.manifest_path == path("explicit/regtest_explicit.json"));
  CHECK(r.plugins().size() == 1);
  CHECK(r.load(path("explicit/regtest_explicit.json"), why));  // no second init
  CHECK(r.load("regtest_explicit", why));
}

TEST_CASE("a plugin can be loaded by library path", "[registry][load]") {
  Registry r(std::vector<std::string>{});
  std::string why;
  REQUIRE(r.load(path("lib/libregtest_bylib.so"), why));
  auto rec = by_name(r, "regtest_bylib");  // the name the plugin gives itself
  CHECK(rec.state == PluginState::Loaded);
  CHECK(rec.manifest_path.empty());
  CHECK(rec.library_path == path("lib/libregtest_bylib.so"));
  CHECK(rec.device_types == std::vector<std::string>{"regtest_bylib"});
  CHECK(loom::find_device_type_slot("regtest_bylib") >= 0);

  CHECK_FALSE(r.load(path("lib/libregtest_nope.so"), why));
  CHECK_THAT(why, Contains("library not found: " + path("lib/libregtest_nope.so")));
  CHECK_THAT(why, Contains("library " + path("lib/libregtest_nope.so")));
}

TEST_CASE("loading by an unknown name is reported", "[registry][load]") {
  std::string why;
  CHECK_FALSE(mixed().load("regtest_nobody_has_this_name", why));
  CHECK_THAT(why, Contains("no plugin named 'regtest_nobody_has_this_name'"));
  CHECK_FALSE(mixed().load("regtest_initfail", why));
  CHECK_THAT(why, Contains("deliberate init failure"));
}

TEST_CASE("concurrent first uses load a plugin once", "[registry][load][concurrency]") {
  Registry r(std::vector<std::string>{path("conc")});
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      std::string why;
      if (r.load_for_device_type("regtest_conc", why)) ++ok;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == 8);
  CHECK(by_name(r, "regtest_conc").state == PluginState::Loaded);
}
