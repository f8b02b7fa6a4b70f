// Loading one plugin: the manifest's ABI, the library, version negotiation
// with the plugin, its init (through the core) and its devices. Runs without
// any registry lock; the registry applies the outcome to its record.
#include "detail.h"

#include <loom/device.h>

#include <cstddef>
#include <utility>

namespace loom::registry::detail {

namespace {
std::string version_string(uint32_t major, uint32_t minor) { return cat(major, '.', minor); }

// A communication plugin (comm_api.h): its own ABI version, its own entry
// symbol, no init through the core; its probe says whether it is usable.
template <class Fail>
LoadOutcome load_comm_plugin(const LoadRequest& e, Fail& fail) {
  LoadOutcome out;
  debugf("manifest declares communication ABI ", e.manifest.abi_version, "; host communication ABI ",
         LOOM_COMM_ABI_MAJOR, '.', LOOM_COMM_ABI_MINOR);
  if (e.manifest.abi_major != LOOM_COMM_ABI_MAJOR)
    return fail(cat("communication ABI major version mismatch: the manifest declares abi_version \"",
                    e.manifest.abi_version, "\" but this loom speaks communication ABI ", LOOM_COMM_ABI_MAJOR,
                    '.', LOOM_COMM_ABI_MINOR, " (major versions must match); library not loaded"));
  std::error_code ec;
  if (!fs::exists(e.library_path, ec))
    return fail(cat("library not found: ", e.library_path, " (library_path \"", e.manifest.library_path_raw,
                    "\" in the manifest)"));
  const LoomCommPluginInfo* info = nullptr;
  std::string error;
  if (!open_comm_plugin_library(e.library_path, info, error)) return fail(error);
  if (info->struct_size < offsetof(LoomCommPluginInfo, work_release) + sizeof(info->work_release))
    return fail(cat("LoomCommPluginInfo.struct_size is ", info->struct_size,
                    ", smaller than the communication ABI 1.0 minimum; not a valid loom communication plugin"));
  out.plugin_abi_version = version_string(info->abi_major, info->abi_minor);
  if (info->name) out.plugin_name = info->name;
  if (info->version) out.version = info->version;
  if (info->abi_major != LOOM_COMM_ABI_MAJOR)
    return fail(cat("communication ABI major version mismatch: the plugin was built for ",
                    out.plugin_abi_version, " but this loom speaks ", LOOM_COMM_ABI_MAJOR, '.',
                    LOOM_COMM_ABI_MINOR, " (major versions must match)"));
  const std::pair<const char*, bool> required[] = {
      {"comm_create", info->comm_create != nullptr},   {"comm_destroy", info->comm_destroy != nullptr},
      {"collective_start", info->collective_start != nullptr}, {"work_wait", info->work_wait != nullptr},
      {"work_test", info->work_test != nullptr},       {"work_release", info->work_release != nullptr}};
  for (const auto& [slot, present] : required)
    if (!present) return fail(cat("the communication plugin leaves the required slot ", slot, " NULL"));
  out.comm = info;
  if (info->probe) {
    if (LoomError* err = info->probe()) {
      out.state = PluginState::NoDevices;
      out.reason = err->message ? err->message : "unusable (no reason given)";
      if (err->destroy) err->destroy(err);
      debugf("communication plugin '", e.name, "' loaded, but is not usable here: ", out.reason);
      return out;
    }
  }
  out.state = PluginState::Loaded;
  debugf("communication plugin '", e.name, "' loaded: backends [", join(e.manifest.comm_backends, ", "),
         "] for ", info->device_type ? info->device_type : "?", " tensors");
  return out;
}
}  // namespace

LoadOutcome load_plugin(const LoadRequest& e) {
  LoadOutcome out;
  const std::string& label = e.label;
  auto fail = [&](const std::string& cause) {
    out.state = PluginState::Failed;
    out.reason = cat(label, ": ", cause);
    debugf("plugin '", e.name, "' failed: ", out.reason);
    return out;
  };

  debugf("loading plugin '", e.name, "' from ", label);
  debugf("resolved library path: ", e.library_path,
         e.by_library ? "" : cat(" (library_path \"", e.manifest.library_path_raw, "\")"));

  if (!e.by_library && !e.manifest.comm_backends.empty()) return load_comm_plugin(e, fail);

  // 1. The manifest's declared ABI, checked before any plugin code runs.
  if (!e.by_library) {
    debugf("manifest declares ABI ", e.manifest.abi_version, "; host ABI ", LOOM_ABI_MAJOR, '.',
           LOOM_ABI_MINOR);
    if (e.manifest.abi_major != LOOM_ABI_MAJOR)
      return fail(cat("ABI major version mismatch: the manifest declares abi_version \"",
                      e.manifest.abi_version, "\" but this loom speaks ABI ", LOOM_ABI_MAJOR, '.',
                      LOOM_ABI_MINOR, " (major versions must match); library not loaded"));
  }

  // 2. The library itself.
  std::error_code ec;
  if (!fs::exists(e.library_path, ec))
    return fail(e.by_library ? cat("library not found: ", e.library_path)
                             : cat("library not found: ", e.library_path, " (library_path \"",
                                   e.manifest.library_path_raw, "\" in the manifest)"));

  const LoomPluginInfo* info = nullptr;
  std::string error;
  if (!detail::open_plugin_library(e.library_path, info, error)) return fail(error);

  // 3. Version negotiation with what the plugin says about itself.
  if (info->struct_size < offsetof(LoomPluginInfo, init) + sizeof(info->init))
    return fail(cat("LoomPluginInfo.struct_size is ", info->struct_size, ", smaller than the ABI ",
                    LOOM_ABI_MAJOR, ".0 minimum; not a valid loom plugin"));
  out.plugin_abi_version = version_string(info->abi_major, info->abi_minor);
  if (info->name) out.plugin_name = info->name;
  if (info->version) out.version = info->version;
  debugf("version negotiation for '", e.name, "': plugin built for ABI ", out.plugin_abi_version,
         ", host ABI ", LOOM_ABI_MAJOR, '.', LOOM_ABI_MINOR,
         e.by_library ? std::string() : cat(", manifest says ", e.manifest.abi_version));
  if (info->abi_major != LOOM_ABI_MAJOR)
    return fail(cat("ABI major version mismatch: the plugin was built for ABI ",
                    out.plugin_abi_version, " but this loom speaks ABI ", LOOM_ABI_MAJOR, '.',
                    LOOM_ABI_MINOR, " (major versions must match); init not run"));
  if (info->abi_minor > LOOM_ABI_MINOR)
    debugf("plugin '", e.name, "' is built for a newer minor ABI (", out.plugin_abi_version,
           "); it must check LOOM_STRUCT_HAS before using newer host slots");
  if (!e.by_library && (int)info->abi_minor != e.manifest.abi_minor)
    debugf("note: manifest abi_version ", e.manifest.abi_version,
           " differs from the plugin's own ", out.plugin_abi_version);
  if (!e.by_library && !out.plugin_name.empty() && out.plugin_name != e.name)
    debugf("note: manifest names the plugin '", e.name, "' but the library calls itself '",
           out.plugin_name, "'");

  // 4. init, through the core.
  const std::string& origin = e.origin;
  try {
    out.registration = loom::register_plugin(info, origin);
  } catch (const std::exception& ex) {
    return fail(cat("registering the plugin threw: ", ex.what()));
  } catch (...) {
    return fail("registering the plugin threw an unknown exception");
  }
  if (!out.registration.ok) {
    // The core's message starts with "<origin>: "; `fail` names the manifest
    // itself, so do not say it twice.
    std::string why = out.registration.error;
    const std::string prefix = origin + ": ";
    if (why.rfind(prefix, 0) == 0) return fail(why.substr(prefix.size()));
    return fail(cat("registration failed: ", why));
  }
  debugf("plugin '", e.name, "' registered device types [",
         join(out.registration.device_types, ", "), "], ", out.registration.kernels, " kernels, ",
         out.registration.ops_defined, " ops, ", out.registration.fallbacks, " fallbacks");
  for (const auto& t : e.device_types)
    if (!contains(out.registration.device_types, t))
      debugf("note: manifest lists device type '", t, "' but plugin '", e.name,
             "' did not register it");

  // 5. Devices present?
  std::vector<std::string> unavailable;
  for (const auto& t : out.registration.device_types) {
    try {
      int n = loom::device_count(t);
      debugf("device type '", t, "': ", n, " device(s)");
      if (n > 0) {
        out.device_count += n;
      } else {
        std::string r = loom::device_unavailable_reason(t);
        unavailable.push_back(cat(t, ": ", r.empty() ? "device_count is 0" : r));
      }
    } catch (const std::exception& ex) {
      unavailable.push_back(cat(t, ": device_count failed: ", ex.what()));
    }
  }
  if (!out.registration.device_types.empty() && out.device_count == 0) {
    out.state = PluginState::NoDevices;
    out.reason = join(unavailable, "; ");
    debugf("plugin '", e.name, "' loaded, but has no devices: ", out.reason);
  } else {
    out.state = PluginState::Loaded;
    debugf("plugin '", e.name, "' loaded: version ", out.version.empty() ? "?" : out.version,
           ", ", out.device_count, " device(s)");
  }
  return out;
}

}  // namespace loom::registry::detail
