// Helpers shared by the registry tests.
#pragma once

#include <loom/device.h>
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

// A registry over REGTEST_DIR/<dir> with everything loaded, never freed.
// Call it once per directory (from a function-local static) and share it
// among the test cases: test plugins register into the one process-wide
// core, so each may be loaded only once.
inline Registry& loaded_registry(const std::string& dir) {
  auto* reg = new Registry(std::vector<std::string>{path(dir)});
  reg->load_all();
  return *reg;
}

// The registry over mixed/.
inline Registry& mixed() {
  static Registry& r = loaded_registry("mixed");
  return r;
}

// Whether the cpu plugin (found in the build tree) is there: tensors start
// on the CPU, so the tensor parts of the tests need it.
inline bool have_cpu() {
  try {
    loom::device_type_slot("cpu");
    return true;
  } catch (const std::exception& e) {
    WARN("cpu plugin unavailable, skipping the tensor part: " << e.what());
    return false;
  }
}

// The record whose manifest is `manifest` (an absolute path).
inline PluginRecord by_manifest(const Registry& r, const std::string& manifest) {
  for (const auto& p : r.plugins())
    if (p.manifest_path == manifest) return p;
  FAIL("no plugin record for manifest " << manifest);
  return {};
}

// Checks that the plugin of REGTEST_DIR/<rel> failed for every one of
// `causes`, with a reason naming its manifest.
inline PluginRecord expect_failed_in(const Registry& r, const std::string& rel,
                                     std::initializer_list<std::string> causes) {
  const std::string manifest = path(rel);
  PluginRecord rec = by_manifest(r, manifest);
  INFO("reason: " << rec.reason);
  CHECK(rec.state == PluginState::Failed);
  CHECK_THAT(rec.reason, Contains("manifest " + manifest));
  for (const auto& c : causes) CHECK_THAT(rec.reason, Contains(c));
  return rec;
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
