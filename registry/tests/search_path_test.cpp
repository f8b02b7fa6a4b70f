// Search order, LOOM_PLUGIN_PATH, duplicates, and priority.
#include "regtest.h"

using namespace regtest;
using loom::registry::default_search_path;
using loom::registry::SearchEntry;

namespace {
std::vector<std::string> origins(const std::vector<SearchEntry>& sp) {
  std::vector<std::string> out;
  for (const auto& e : sp) out.push_back(e.origin);
  return out;
}
}  // namespace

TEST_CASE("search order is LOOM_PLUGIN_PATH then user dir then install prefix then build tree",
          "[registry][search]") {
  const std::string a = path("path_a"), b = path("path_b");
  EnvGuard xdg("XDG_DATA_HOME", path("xdg").c_str());
  EnvGuard env("LOOM_PLUGIN_PATH", (b + "::" + a).c_str());  // empty entry ignored
  auto sp = default_search_path();
  REQUIRE(sp.size() >= 4);
  CHECK(sp[0].path == b);
  CHECK(sp[0].origin == "LOOM_PLUGIN_PATH");
  CHECK(sp[0].exists);
  CHECK(sp[1].path == a);
  CHECK(sp[1].origin == "LOOM_PLUGIN_PATH");
  CHECK(sp[2].path == path("xdg") + "/loom/plugins");
  CHECK(sp[2].origin == "user data dir");
  CHECK_FALSE(sp[2].exists);
  CHECK(sp[3].origin == "install prefix");
  CHECK_THAT(sp[3].path, Catch::Matchers::EndsWith("/share/loom/plugins"));
  // In the build tree the install-prefix dir (<lib>/../share/loom/plugins)
  // is the build tree's manifest dir, so the latter may be deduplicated.
  if (sp.size() == 5) CHECK(sp[4].origin == "build tree");
}

TEST_CASE("the user data dir falls back to ~/.local/share", "[registry][search]") {
  EnvGuard xdg("XDG_DATA_HOME", nullptr);
  EnvGuard home("HOME", "/regtest_home");
  EnvGuard env("LOOM_PLUGIN_PATH", nullptr);
  auto sp = default_search_path();
  REQUIRE_FALSE(sp.empty());
  CHECK(sp[0].path == "/regtest_home/.local/share/loom/plugins");
  CHECK(sp[0].origin == "user data dir");
}

TEST_CASE("the first manifest found for a name wins", "[registry][search]") {
  const std::string a = path("path_a"), b = path("path_b");
  {
    EnvGuard env("LOOM_PLUGIN_PATH", (b + ":" + a).c_str());
    Registry r(default_search_path());
    CHECK(by_name(r, "regtest_dup").manifest_path == b + "/dup.json");
    int dups = 0;
    for (const auto& p : r.plugins()) dups += p.name == "regtest_dup";
    CHECK(dups == 1);  // the later one is only mentioned in debug output
  }
  {
    EnvGuard env("LOOM_PLUGIN_PATH", (a + ":" + b).c_str());
    Registry r(default_search_path());
    CHECK(by_name(r, "regtest_dup").manifest_path == a + "/dup.json");
  }
}

TEST_CASE("LOOM_PLUGIN_PATH may name a manifest file", "[registry][search]") {
  EnvGuard env("LOOM_PLUGIN_PATH", (path("path_b/dup.json") + ":" + path("path_a")).c_str());
  Registry r(default_search_path());
  CHECK(by_name(r, "regtest_dup").manifest_path == path("path_b/dup.json"));
}

TEST_CASE("a directory is scanned once and missing ones are skipped", "[registry][search]") {
  Registry r(std::vector<std::string>{path("missing_dir"), path("path_a"), path("path_a") + "/",
                                      path("path_b/../path_a")});
  auto sp = r.search_path();
  REQUIRE(sp.size() == 2);
  CHECK(origins(sp) == std::vector<std::string>{"explicit", "explicit"});
  CHECK_FALSE(sp[0].exists);
  CHECK(sp[1].exists);
  auto plugins = r.plugins();
  REQUIRE(plugins.size() == 1);
  CHECK(plugins[0].state == PluginState::Found);  // discovery does not load
  CHECK(r.discover() == 0);                        // nothing new the second time
}

TEST_CASE("the highest-priority manifest for a device type wins", "[registry][priority]") {
  Registry r(std::vector<std::string>{path("prio")});
  std::string why;
  REQUIRE(r.load_for_device_type("regtest_prio", why));
  CHECK(by_name(r, "regtest_prio_high").state == PluginState::Loaded);
  CHECK(by_name(r, "regtest_prio_high").priority == 5);
  CHECK(by_name(r, "regtest_prio_low").state == PluginState::Found);  // never loaded
}

TEST_CASE("a failing provider falls back to the next priority", "[registry][priority]") {
  Registry r(std::vector<std::string>{path("prio_fallback")});
  std::string why;
  REQUIRE(r.load_for_device_type("regtest_fb", why));
  auto broken = by_name(r, "regtest_fb_broken");
  CHECK(broken.state == PluginState::Failed);
  CHECK_THAT(broken.reason, Contains("library not found"));
  CHECK(by_name(r, "regtest_fb_ok").state == PluginState::Loaded);
}

TEST_CASE("a device type nobody lists is reported", "[registry][priority]") {
  Registry r(std::vector<std::string>{path("prio")});
  std::string why;
  CHECK_FALSE(r.load_for_device_type("regtest_nobody", why));
  CHECK_THAT(why, Contains("no plugin manifest lists device type 'regtest_nobody'"));
  CHECK_THAT(why, Contains(path("prio")));
}
