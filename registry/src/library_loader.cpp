// Loading plugin libraries with Boost.DLL and calling their entry symbol.
//
// Libraries are never unloaded: storage, kernels and error objects that came
// from a plugin may outlive any handle to it (see DESIGN.md, "Registry"), so
// every shared_library ever opened is kept in a heap vector that is
// intentionally never destroyed.
#include "detail.h"

#include <boost/dll/shared_library.hpp>

#include <mutex>
#include <system_error>

namespace loom::registry::detail {

namespace {

struct Resident {
  std::mutex mu;
  std::vector<boost::dll::shared_library> libraries;
};

Resident& resident() {
  static auto* r = new Resident;  // never destroyed, on purpose
  return *r;
}

// Boost.DLL reports "<context> (dlerror system message: <text>): <errc>";
// keep the loader's own text.
std::string loader_text(const std::exception& e) {
  std::string what = e.what();
  static constexpr std::string_view kMarker = "(dlerror system message: ";
  auto start = what.find(kMarker);
  if (start == std::string::npos) return what;
  start += kMarker.size();
  auto end = what.rfind(')');
  if (end == std::string::npos || end < start) return what.substr(start);
  return what.substr(start, end - start);
}

// The loader's text for a missing library names that library first
// ("libfoo.so: cannot open shared object file: ..."). When it is not the
// plugin's own file, it is one of the plugin's dependencies: say so, and how
// to find out which and why.
std::string explain_loader_error(const fs::path& library, const std::string& text) {
  static constexpr std::string_view kMissing = ": cannot open shared object file";
  const auto at = text.find(kMissing);
  if (at == std::string::npos) return text;
  const std::string missing = text.substr(0, at);
  if (missing == library.string() || missing == library.filename().string()) return text;
  return cat(text, " — '", missing, "' is a library the plugin depends on, not the plugin itself (",
             library.string(), "); `ldd ", library.string(),
             "` shows which of its dependencies are not found. Install it beside the plugin or in the "
             "prefix's lib folder (loom_add_plugin's RPATH: $ORIGIN, $ORIGIN/../..), name its folder in "
             "loom_add_plugin(... RUNTIME_DIRS <dir>), or add that folder to LD_LIBRARY_PATH");
}

}  // namespace

namespace {

// Loads `library` (kept resident), looks up `symbol` as an entry function
// returning a pointer to Info and calls it.
template <class Info>
bool open_library_entry(const fs::path& library, const char* symbol, const char* how_to_export,
                        const Info*& info, std::string& error) {
  info = nullptr;
  boost::dll::shared_library lib;
  try {
    // rtld_now: unresolved symbols fail here, with the loader's message,
    // rather than crash later. rtld_local: plugins do not leak symbols into
    // each other.
    lib.load(library, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    error = cat("loader error: ", explain_loader_error(library, loader_text(e)));
    debugf("loader error for ", library.string(), ": ", loader_text(e));
    return false;
  }
  debugf("loaded library ", library.string());
  const Info* (*entry)() = nullptr;
  std::string symbol_error;
  try {
    entry = &lib.get<const Info*()>(symbol);
  } catch (const std::exception& e) {
    symbol_error = loader_text(e);
  }
  // From here on the library stays loaded whatever happens.
  {
    std::lock_guard<std::mutex> lock(resident().mu);
    resident().libraries.push_back(std::move(lib));
  }
  if (!entry) {
    error = cat("entry symbol '", symbol, "' not found in ", library.string(), " (", how_to_export, "): ",
                symbol_error);
    debugf("entry symbol lookup failed: ", symbol_error);
    return false;
  }
  try {
    info = entry();
  } catch (...) {
    // The entry is C and must not throw; a C++ plugin that does anyway
    // should not take the process down.
    error = cat("entry symbol '", symbol, "' threw an exception");
    return false;
  }
  if (!info) {
    error = cat("entry symbol '", symbol, "' returned NULL");
    return false;
  }
  return true;
}

}  // namespace

bool open_plugin_library(const fs::path& library, const LoomPluginInfo*& info, std::string& error) {
  return open_library_entry(library, LOOM_PLUGIN_ENTRY_SYMBOL,
                            "is it a loom plugin? it must use LOOM_PLUGIN or export the symbol as extern \"C\"",
                            info, error);
}

bool open_comm_plugin_library(const fs::path& library, const LoomCommPluginInfo*& info, std::string& error) {
  return open_library_entry(library, LOOM_COMM_PLUGIN_ENTRY_SYMBOL,
                            "is it a loom communication plugin? it must export the symbol as extern \"C\"",
                            info, error);
}

}  // namespace loom::registry::detail
