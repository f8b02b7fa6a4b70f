// Hooks the global registry into the core: an unknown device type name makes
// the core ask the registry to load the plugin that provides it.
#include "detail.h"

#include <loom/plugin_host.h>

#include <mutex>

namespace loom::registry {

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    loom::set_device_type_resolver([](const std::string& type, std::string& why) -> bool {
      // The core calls this from arbitrary code paths: nothing may escape.
      try {
        return Registry::global().load_for_device_type(type, why);
      } catch (const std::exception& e) {
        why = detail::cat("loading a plugin for device type '", type, "' failed: ", e.what());
      } catch (...) {
        why = detail::cat("loading a plugin for device type '", type, "' failed");
      }
      return false;
    });
    detail::debugf("device type resolver installed");
  });
}

namespace {
// Installed as soon as the library is loaded, so that merely linking
// loom_registry gives load-on-first-use. loom_core is a dependency of this
// library and is therefore initialised first.
const bool g_installed = [] {
  try {
    install();
  } catch (...) {
    // Leave it to an explicit install() call.
  }
  return true;
}();
}  // namespace

}  // namespace loom::registry
