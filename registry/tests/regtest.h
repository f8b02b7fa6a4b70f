// Helpers shared by the registry tests.
#pragma once

#include <loom/registry.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

namespace regtest {

using loom::registry::PluginRecord;
using loom::registry::PluginState;
using loom::registry::Registry;
using Catch::Matchers::Contains;

// Absolute path of something the test build made.
inline std::string path(const std::string& rel) { return std::string(REGTEST_DIR) + "/" + rel; }

// The registry over mixed/ with everything loaded. Shared by every test case
// in the process: test plugins register into the one process-wide core, so
// each may be loaded only once.
inline Registry& mixed() {
  static Registry* r = [] {
    auto* reg = new Registry(std::vector<std::string>{path("mixed")});
    reg->load_all();
    return reg;
  }();
  return *r;
}

// The record whose manifest is `manifest` (an absolute path).
inline PluginRecord by_manifest(const Registry& r, const std::string& manifest) {
  for (const auto& p : r.plugins())
    if (p.manifest_path == manifest) return p;
  FAIL("no plugin record for manifest " << manifest);
  return {};
}

inline PluginRecord by_name(const Registry& r, const std::string& name) {
  PluginRecord rec;
  if (!r.find(name, rec)) FAIL("no plugin named " << name);
  return rec;
}

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace regtest
