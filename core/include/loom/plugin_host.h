// loom/plugin_host.h — the core side of the plugin ABI, as the registry sees it.
//
// The registry finds and loads libraries; this is where a loaded plugin's
// LoomPluginInfo is negotiated and its init() run against the core's
// LoomHostApi. Registrations made during init are staged and committed only
// when init succeeds, so a failing plugin leaves no trace.
#pragma once

#include <loom/plugin_api.h>

#include <functional>
#include <string>
#include <vector>

namespace loom {

// What came of registering one plugin.
struct PluginRegistration {
  bool ok = false;
  std::string error;                    // why it failed, when !ok
  std::vector<std::string> device_types;  // types it registered
  int kernels = 0;                      // kernels it registered
  int ops_defined = 0;                  // schemas it added
  int fallbacks = 0;                    // boxed fallbacks it registered
};

// Negotiates the ABI version of `info` and runs its init. `origin` names the
// plugin in messages (the manifest path, or the library path). Never throws:
// every failure comes back in PluginRegistration::error.
PluginRegistration register_plugin(const LoomPluginInfo* info, const std::string& origin);

// Called by the core the first time a device type name is not registered,
// so the registry can load the plugin that provides it ("load on first use").
// Returns true when it loaded something that may provide the type; when it
// returns false it may set `why` to a reason that names the failed plugin.
using DeviceTypeResolver = std::function<bool(const std::string& type_name, std::string& why)>;
void set_device_type_resolver(DeviceTypeResolver resolver);

// A host table not tied to any plugin, for code outside a plugin's init that
// needs op_name / op_schema / log (boxed fallbacks, tests). Its registration
// slots return an error. Valid until exit.
const LoomHostApi* host_api();

}  // namespace loom
