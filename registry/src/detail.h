// Internals of loom_registry shared between its source files. Not installed.
#pragma once

#include <loom/comm_api.h>
#include <loom/plugin_api.h>
#include <loom/plugin_host.h>
#include <loom/registry.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace loom::registry::detail {

namespace fs = std::filesystem;

template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

inline bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

inline std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// ------------------------------------------------------------ debug_log.cpp

// Writes "[loom plugin] <message>" to stderr (every line prefixed) when
// debug_enabled(). Never throws.
void debug(const std::string& message) noexcept;

// Lazily formatted: the arguments are only streamed when tracing is on.
template <class... Args>
void debugf(const Args&... args) noexcept {
  if (!debug_enabled()) return;
  try {
    debug(cat(args...));
  } catch (...) {
  }
}

// ------------------------------------------------------------- manifest.cpp

// A manifest that passed validation.
struct Manifest {
  std::string path;              // absolute path of the manifest file
  std::string name;
  std::string library_path_raw;  // as written in the manifest
  std::string library_path;      // absolute, lexically normalised
  std::string abi_version;       // "MAJOR.MINOR" as written
  int abi_major = 0;
  int abi_minor = 0;
  std::vector<std::string> device_types;
  std::vector<std::string> comm_backends;  // a communication plugin's (comm_api.h)
  int priority = 0;
};

// Reads and validates one manifest. On failure returns false and sets
// `error` to the cause (without the manifest path; the caller prefixes it)
// and, when the manifest at least names its plugin, `name_hint`.
// Never throws except std::bad_alloc.
bool read_manifest(const fs::path& path, Manifest& out, std::string& error,
                   std::string& name_hint);

// Same, from text already in memory (`path` is used to resolve
// library_path and in messages).
bool parse_manifest(const std::string& text, const fs::path& path, Manifest& out,
                    std::string& error, std::string& name_hint);

// Parses "MAJOR.MINOR" (both non-negative decimal integers).
bool parse_version(const std::string& text, int& major, int& minor);

// ---------------------------------------------------------- search_path.cpp

// A key that is equal for two spellings of the same file or directory.
std::string path_key(const fs::path& p);

// Builds entries from plain paths (origin "explicit").
std::vector<SearchEntry> explicit_search_path(const std::vector<std::string>& paths);

// Removes later duplicates (by path_key) and refreshes `exists`.
std::vector<SearchEntry> dedup_search_path(std::vector<SearchEntry> entries);

// The manifests an entry contributes: the file itself, or the *.json files
// directly inside a directory, sorted by file name. Traces what it scans.
std::vector<fs::path> manifests_in(const SearchEntry& entry);

// ------------------------------------------------------- library_loader.cpp

// Loads `library` (an absolute path) and never unloads it, looks up
// LOOM_PLUGIN_ENTRY_SYMBOL and calls it. On failure returns false with
// `error` set to the cause, including the loader's own text.
bool open_plugin_library(const fs::path& library, const LoomPluginInfo*& info,
                         std::string& error);
// The same for a communication plugin (comm_api.h's entry symbol).
bool open_comm_plugin_library(const fs::path& library, const LoomCommPluginInfo*& info,
                              std::string& error);

// ---------------------------------------------------------- load_plugin.cpp

// One plugin to load, as the registry knows it.
struct LoadRequest {
  std::string name;          // for messages
  std::string label;         // "manifest <path>" or "library <path>"
  std::string origin;        // handed to register_plugin: manifest or library path
  std::string library_path;  // absolute
  bool by_library = false;   // no manifest: skip the manifest checks
  Manifest manifest;         // when !by_library
  std::vector<std::string> device_types;  // the manifest's
};

// What came of it.
struct LoadOutcome {
  PluginState state = PluginState::Failed;
  std::string reason;              // names the manifest and the cause
  std::string version;             // the plugin's, once its entry ran
  std::string plugin_abi_version;  // "MAJOR.MINOR", once its entry ran
  std::string plugin_name;         // LoomPluginInfo.name
  PluginRegistration registration;
  int device_count = 0;
  const LoomCommPluginInfo* comm = nullptr;  // a communication plugin's table, once loaded
};

// Checks the manifest ABI, opens the library, negotiates the plugin's ABI,
// runs its init through loom::register_plugin and counts its devices.
// Calls into the plugin and the core: never call it holding a registry lock.
// Never throws except std::bad_alloc.
LoadOutcome load_plugin(const LoadRequest& request);

}  // namespace loom::registry::detail
