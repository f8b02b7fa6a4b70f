// Where manifests are looked for, and which files a search entry yields.
#include "detail.h"

#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

// Relative path from the installed library directory to the data directory
// ("../share" for lib/ and share/), set by the build from GNUInstallDirs.
#ifndef LOOM_REGISTRY_LIB_TO_DATA
#define LOOM_REGISTRY_LIB_TO_DATA "../share"
#endif

namespace loom::registry {

namespace detail {

std::string path_key(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  fs::path canon = fs::weakly_canonical(abs, ec);
  if (ec) canon = abs.lexically_normal();
  std::string key = canon.string();
  // "dir" and "dir/" are the same directory.
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

std::vector<SearchEntry> dedup_search_path(std::vector<SearchEntry> entries) {
  std::vector<SearchEntry> out;
  std::unordered_set<std::string> seen;
  for (auto& e : entries) {
    if (e.path.empty()) continue;
    if (!seen.insert(path_key(e.path)).second) continue;
    std::error_code ec;
    e.exists = fs::exists(e.path, ec);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<SearchEntry> explicit_search_path(const std::vector<std::string>& paths) {
  std::vector<SearchEntry> entries;
  for (const auto& p : paths) entries.push_back(SearchEntry{p, "explicit", false});
  return dedup_search_path(std::move(entries));
}

std::vector<fs::path> manifests_in(const SearchEntry& entry) {
  std::vector<fs::path> found;
  std::error_code ec;
  fs::path root = fs::absolute(entry.path, ec);
  if (ec) root = entry.path;
  auto status = fs::status(root, ec);
  if (ec || !fs::exists(status)) {
    debugf("skipping ", root.string(), " (", entry.origin, "): does not exist");
    return found;
  }
  if (fs::is_regular_file(status)) {
    debugf("search path entry ", root.string(), " (", entry.origin, ") is a manifest file");
    found.push_back(root.lexically_normal());
    return found;
  }
  if (!fs::is_directory(status)) {
    debugf("skipping ", root.string(), " (", entry.origin, "): neither a directory nor a file");
    return found;
  }
  debugf("searching directory ", root.string(), " (", entry.origin, ")");
  fs::directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    debugf("cannot list ", root.string(), ": ", ec.message());
    return found;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      debugf("error while listing ", root.string(), ": ", ec.message());
      break;
    }
    const fs::path& p = it->path();
    std::error_code fec;
    if (p.extension() == ".json" && it->is_regular_file(fec)) found.push_back(p.lexically_normal());
  }
  std::sort(found.begin(), found.end());
  return found;
}

namespace {

// The directory holding libloom_registry.so, or "" when the library cannot
// find itself.
fs::path registry_library_dir() {
  std::error_code ec;
  fs::path self = boost::dll::this_line_location(ec);
  if (ec || self.empty()) {
    debugf("cannot locate the loom_registry library: ", ec.message());
    return {};
  }
  return self.parent_path();
}

// <dir of libloom_registry.so>/<lib-to-data>/loom/plugins, or "".
std::string install_prefix_dir(const fs::path& lib_dir) {
  if (lib_dir.empty()) return {};
  return (lib_dir / LOOM_REGISTRY_LIB_TO_DATA / "loom" / "plugins").lexically_normal().string();
}

std::string user_data_dir() {
  // XDG Base Directory: a relative XDG_DATA_HOME is invalid and ignored.
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return (fs::path(xdg) / "loom" / "plugins").string();
  const char* home = std::getenv("HOME");
  if (home && *home) return (fs::path(home) / ".local" / "share" / "loom" / "plugins").string();
  return {};
}

}  // namespace
}  // namespace detail

std::vector<SearchEntry> default_search_path() {
  using namespace detail;
  std::vector<SearchEntry> entries;
  if (const char* env = std::getenv("LOOM_PLUGIN_PATH")) {
    std::string_view rest(env);
    while (true) {
      auto colon = rest.find(':');
      std::string_view part = rest.substr(0, colon);
      if (!part.empty()) entries.push_back(SearchEntry{std::string(part), "LOOM_PLUGIN_PATH", false});
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  entries.push_back(SearchEntry{user_data_dir(), "user data dir", false});
  const fs::path lib_dir = registry_library_dir();
  entries.push_back(SearchEntry{install_prefix_dir(lib_dir), "install prefix", false});
#if defined(LOOM_REGISTRY_BUILD_MANIFEST_DIR) && defined(LOOM_REGISTRY_BUILD_LIB_DIR)
  // Only while this library runs from the build tree: an installed (or
  // packaged) loom must never pick up plugins from the tree it was built in.
  if (!lib_dir.empty() && path_key(lib_dir) == path_key(LOOM_REGISTRY_BUILD_LIB_DIR))
    entries.push_back(SearchEntry{LOOM_REGISTRY_BUILD_MANIFEST_DIR, "build tree", false});
#endif
  return dedup_search_path(std::move(entries));
}

}  // namespace loom::registry
