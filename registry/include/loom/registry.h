// loom/registry.h — finding, loading and reporting device plugins.
//
// Every device (CPU included) is a shared library described by a JSON
// manifest, Vulkan-loader style:
//
//   {
//     "file_format_version": "1.0",
//     "plugin": {
//       "name": "cpu",
//       "library_path": "../../../lib/loom/plugins/libloom_cpu.so",
//       "abi_version": "1.0",
//       "device_types": ["cpu"],
//       "priority": 0
//     }
//   }
//
// `library_path` is relative to the manifest's directory (absolute allowed);
// `priority` is optional (default 0) and decides which manifest wins when two
// plugins list the same device type (higher wins).
//
// Search order (default_search_path()):
//   1. LOOM_PLUGIN_PATH — colon-separated directories or manifest files;
//   2. the user's data dir: $XDG_DATA_HOME/loom/plugins or
//      ~/.local/share/loom/plugins;
//   3. the install prefix: <dir of libloom_registry>/../share/loom/plugins;
//   4. the build tree's manifest directory, only while this library runs
//      from the build tree (an installed loom never looks there).
// Missing directories are skipped, a directory is scanned once, and when two
// manifests carry the same plugin name the first one found wins (a manifest
// that cannot be read is listed as Failed but shadows nothing).
//
// A plugin is loaded on first use of one of its device types (the registry
// installs a resolver into the core, see install()), or explicitly with
// Registry::load / load_all. A failing plugin — unreadable manifest, missing
// library, loader error, missing entry symbol, ABI major mismatch, init error
// — is marked Failed with a reason naming its manifest and the cause; it never
// throws out of the registry and never stops the others from loading.
// Loaded libraries stay resident until process exit.
//
// LOOM_PLUGIN_DEBUG=1 (or set_debug(true)) traces all of this on stderr,
// each line prefixed "[loom plugin] ".
//
// Every member of Registry is thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

struct LoomCommPluginInfo;  // loom/comm_api.h

namespace loom::registry {

enum class PluginState {
  Found,      // manifest read, library not loaded yet
  Loaded,     // init succeeded and at least one device is present (or the
              // plugin registers no device type at all)
  Failed,     // see PluginRecord::reason
  NoDevices,  // init succeeded but every device type it registered reports 0
              // devices (reason: the plugin's own explanation)
};

// "found", "loaded", "failed", "no devices".
const char* to_string(PluginState state);

// Everything known about one plugin. A snapshot: copies, not live views.
struct PluginRecord {
  std::string name;            // manifest "name" (the file stem when the
                               // manifest could not be read; the library's
                               // own name for a plugin loaded by library path)
  std::string version;         // the plugin's own version, once loaded
  std::string manifest_path;   // absolute; empty for a plugin loaded by
                               // library path
  std::string library_path;    // absolute, resolved against the manifest dir
  std::string abi_version;     // "MAJOR.MINOR" the manifest declares
  std::string plugin_abi_version;  // "MAJOR.MINOR" the plugin reports, once
                                   // its entry symbol has run
  std::vector<std::string> device_types;             // from the manifest
  std::vector<std::string> comm_backends;            // a communication plugin's
                                                     // (comm_api.h), from the manifest
  std::string comm_device_type;  // whose tensors a communication plugin moves, once loaded
  std::vector<std::string> registered_device_types;  // what init registered
  int priority = 0;
  PluginState state = PluginState::Found;
  std::string reason;          // why Failed / NoDevices, else ""
  int device_count = 0;        // sum over registered_device_types
  int kernels = 0;             // kernels registered by init
  int ops_defined = 0;         // op schemas added by init
  int fallbacks = 0;           // boxed fallbacks registered by init
};

// One entry of the search path.
struct SearchEntry {
  std::string path;    // a directory or a manifest file
  std::string origin;  // "LOOM_PLUGIN_PATH", "user data dir",
                       // "install prefix", "build tree" or "explicit"
  bool exists = false;
};

// The search path from the environment as it is now (see the file comment).
// Duplicates are removed (first occurrence kept); missing entries are kept
// with exists = false so they can be reported.
std::vector<SearchEntry> default_search_path();

class Registry {
 public:
  // The process-wide registry the core's resolver uses; its search path is
  // default_search_path() at first use. Never destroyed.
  static Registry& global();

  // A registry over the given directories / manifest files, in that order
  // (for tests and tools). Plugins it loads register into the same process-
  // wide core as any other.
  explicit Registry(std::vector<std::string> search_entries);
  explicit Registry(std::vector<SearchEntry> search_entries);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Scans the search path for manifests (*.json) and reads them. Safe to
  // call again: only manifests not seen before are added. Returns the number
  // of plugins added. Every other member calls it once implicitly.
  std::size_t discover();

  // Loads one plugin, named by its manifest name, a manifest path (*.json)
  // or a library path (*.so). Returns true when it is Loaded or NoDevices
  // (also when it already was); otherwise `why` gets the reason.
  bool load(const std::string& what, std::string& why);
  bool load(const std::string& what);

  // Loads the highest-priority plugin that lists `type` and has not failed;
  // when it fails, tries the next. Returns true when a plugin providing the
  // type is loaded; otherwise `why` says which plugins were tried and why
  // they failed, or that none lists the type. This is the core's resolver.
  bool load_for_device_type(const std::string& type, std::string& why);

  // Loads the highest-priority communication plugin (comm_api.h) whose
  // manifest lists `backend` ("gloo", "nccl") and is usable here, trying
  // the next when one fails; its table stays valid for the process's
  // lifetime. nullptr with `why` naming what was tried and why it failed
  // (or which backends are installed).
  const LoomCommPluginInfo* load_comm_backend(const std::string& backend, std::string& why);

  // Loads every plugin found. Returns true when none failed.
  bool load_all();

  // Snapshot of every plugin, in discovery order.
  std::vector<PluginRecord> plugins() const;
  // Copies the record of the plugin named `name` into `out` (preferring one
  // whose manifest could be read). Returns false when there is none.
  bool find(const std::string& name, PluginRecord& out) const;

  std::vector<SearchEntry> search_path() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Installs the global registry's resolver into the core so that an unknown
// device type name loads its plugin. Idempotent; the library also calls it
// from a static initializer.
void install();

// Debug tracing: on when LOOM_PLUGIN_DEBUG is set to anything but "" or "0",
// or after set_debug(true).
void set_debug(bool on);
bool debug_enabled();

}  // namespace loom::registry
