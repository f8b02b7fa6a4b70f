// Internals of loom_registry shared between its source files. Not installed.
#pragma once

#include <loom/plugin_api.h>
#include <loom/registry.h>

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

}  // namespace loom::registry::detail
