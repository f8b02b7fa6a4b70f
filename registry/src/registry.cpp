// The Registry: discovered plugins, their states, and loading them.
//
// Locking. `mu` guards every record. It is never held while calling into a
// plugin or the core (load_plugin: dlopen, the entry symbol, register_plugin,
// device_count): the core may call the resolver — and so this registry —
// while it is resolving a device type, possibly from inside another plugin's
// init. A record being loaded is marked `loading` by the thread doing it;
// other threads wanting it wait on `cv`, and the same thread asking for it
// again (a plugin whose init needs one of its own types) gets an error
// instead of a deadlock.
#include "detail.h"

#include <loom/did_you_mean.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace loom::registry {

using detail::cat;
using detail::contains;
using detail::debugf;
using detail::join;
namespace fs = std::filesystem;

const char* to_string(PluginState state) {
  switch (state) {
    case PluginState::Found: return "found";
    case PluginState::Loaded: return "loaded";
    case PluginState::Failed: return "failed";
    case PluginState::NoDevices: return "no devices";
  }
  return "unknown";
}

namespace {

struct Entry {
  PluginRecord rec;
  detail::Manifest manifest;  // valid when manifest_ok
  bool manifest_ok = false;   // false: a manifest that could not be read, or
                              // a plugin loaded by library path
  bool by_library = false;    // loaded by library path, no manifest
  bool loading = false;
  std::thread::id loader;
  const LoomCommPluginInfo* comm = nullptr;  // a loaded communication plugin's table

  // How messages name this plugin.
  std::string label() const {
    return by_library ? cat("library ", rec.library_path) : cat("manifest ", rec.manifest_path);
  }
  bool settled() const { return rec.state != PluginState::Found; }
  bool usable() const {
    return rec.state == PluginState::Loaded || rec.state == PluginState::NoDevices;
  }
  detail::LoadRequest request() const {
    return {rec.name, label(), by_library ? rec.library_path : rec.manifest_path, rec.library_path,
            by_library, manifest, rec.device_types};
  }
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

struct Registry::State {
  mutable std::mutex mu;
  std::condition_variable cv;
  std::vector<SearchEntry> search;
  bool discovered = false;
  std::unordered_set<std::string> seen_manifests;  // path_key of every manifest read
  std::vector<std::unique_ptr<Entry>> entries;     // never shrinks: Entry* stay valid

  // Requires mu. Reads manifests not seen before.
  std::size_t discover_locked();
  // Requires mu. The entry for a manifest file, reading it if new.
  Entry* entry_for_manifest(const fs::path& manifest);
  // Requires mu held by `lock`; may release it while loading.
  bool load_entry(Entry& e, std::unique_lock<std::mutex>& lock, std::string& why);
  Entry* add_manifest(const fs::path& manifest, bool keep_duplicate_name);
  Entry* find_name(const std::string& name);
};

Entry* Registry::State::find_name(const std::string& name) {
  Entry* fallback = nullptr;
  for (auto& e : entries) {
    if (e->rec.name != name) continue;
    if (e->manifest_ok || e->by_library) return e.get();
    if (!fallback) fallback = e.get();
  }
  return fallback;
}

Entry* Registry::State::add_manifest(const fs::path& path, bool keep_duplicate_name) {
  seen_manifests.insert(detail::path_key(path));
  auto e = std::make_unique<Entry>();
  e->rec.manifest_path = path.string();
  std::string error, name_hint;
  debugf("found manifest ", path.string());
  if (detail::read_manifest(path, e->manifest, error, name_hint)) {
    const auto& m = e->manifest;
    if (!keep_duplicate_name) {
      for (auto& other : entries) {
        if (other->manifest_ok && other->rec.name == m.name) {
          debugf("ignoring manifest ", path.string(), ": plugin '", m.name, "' was already found in ",
                 other->rec.manifest_path, " (the first one found wins)");
          return nullptr;
        }
      }
    }
    e->manifest_ok = true;
    e->rec.name = m.name;
    e->rec.library_path = m.library_path;
    e->rec.abi_version = m.abi_version;
    e->rec.device_types = m.device_types;
    e->rec.comm_backends = m.comm_backends;
    e->rec.priority = m.priority;
    debugf("manifest ", path.string(), ": plugin '", m.name, "', library ", m.library_path,
           ", ABI ", m.abi_version, ", device types [", join(m.device_types, ", "),
           "], priority ", m.priority);
  } else {
    e->rec.name = name_hint.empty() ? path.stem().string() : name_hint;
    e->rec.state = PluginState::Failed;
    e->rec.reason = cat("manifest ", path.string(), ": ", error);
    debugf("bad manifest: ", e->rec.reason);
  }
  entries.push_back(std::move(e));
  return entries.back().get();
}

std::size_t Registry::State::discover_locked() {
  discovered = true;
  std::size_t before = entries.size();
  for (const auto& s : search) {
    for (const auto& m : detail::manifests_in(s)) {
      if (seen_manifests.count(detail::path_key(m))) continue;
      add_manifest(m, /*keep_duplicate_name=*/false);
    }
  }
  return entries.size() - before;
}

Entry* Registry::State::entry_for_manifest(const fs::path& manifest) {
  std::string key = detail::path_key(manifest);
  for (auto& e : entries)
    if (!e->by_library && detail::path_key(e->rec.manifest_path) == key) return e.get();
  // Named explicitly: keep it even when another manifest has the name.
  return add_manifest(fs::absolute(manifest).lexically_normal(), /*keep_duplicate_name=*/true);
}

bool Registry::State::load_entry(Entry& e, std::unique_lock<std::mutex>& lock, std::string& why) {
  while (e.loading) {
    if (e.loader == std::this_thread::get_id()) {
      why = cat(e.label(), ": plugin '", e.rec.name,
                "' was asked for again while it is being loaded (its init needs a device type "
                "it provides itself?)");
      return false;
    }
    cv.wait(lock);
  }
  if (e.settled()) {
    if (!e.usable()) why = e.rec.reason;
    return e.usable();
  }

  e.loading = true;
  e.loader = std::this_thread::get_id();
  const detail::LoadRequest request = e.request();  // a copy: read without the lock
  lock.unlock();
  detail::LoadOutcome out;
  try {
    out = detail::load_plugin(request);
  } catch (const std::exception& ex) {  // bad_alloc and the like
    out.state = PluginState::Failed;
    out.reason = cat(request.label, ": unexpected error while loading: ", ex.what());
  } catch (...) {  // must not leave the record marked loading
    out.state = PluginState::Failed;
    out.reason = cat(request.label, ": unexpected error while loading");
  }
  lock.lock();

  e.loading = false;
  e.rec.state = out.state;
  e.rec.reason = out.reason;
  if (!out.version.empty()) e.rec.version = out.version;
  if (!out.plugin_abi_version.empty()) e.rec.plugin_abi_version = out.plugin_abi_version;
  if (e.by_library && !out.plugin_name.empty()) e.rec.name = out.plugin_name;
  e.rec.registered_device_types = out.registration.device_types;
  if (e.by_library) e.rec.device_types = out.registration.device_types;
  e.rec.kernels = out.registration.kernels;
  e.rec.ops_defined = out.registration.ops_defined;
  e.rec.fallbacks = out.registration.fallbacks;
  e.rec.device_count = out.device_count;
  e.comm = out.comm;
  if (out.comm && out.comm->device_type) e.rec.comm_device_type = out.comm->device_type;
  cv.notify_all();
  if (!e.usable()) why = e.rec.reason;
  return e.usable();
}

// ------------------------------------------------------------------ Registry

Registry& Registry::global() {
  // Never destroyed: the core may consult the resolver during exit.
  static Registry* g = new Registry(default_search_path());
  return *g;
}

Registry::Registry(std::vector<std::string> search_entries)
    : Registry(detail::explicit_search_path(search_entries)) {}

Registry::Registry(std::vector<SearchEntry> search_entries) : state_(std::make_unique<State>()) {
  state_->search = detail::dedup_search_path(std::move(search_entries));
}

Registry::~Registry() = default;

std::size_t Registry::discover() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->discover_locked();
}

bool Registry::load(const std::string& what) {
  std::string why;
  return load(what, why);
}

bool Registry::load(const std::string& what, std::string& why) {
  try {
    std::unique_lock<std::mutex> lock(state_->mu);
    if (!state_->discovered) state_->discover_locked();
    Entry* e = nullptr;
    const bool is_manifest = ends_with(what, ".json");
    const bool is_library = ends_with(what, ".so") || what.find(".so.") != std::string::npos ||
                            ends_with(what, ".dylib") || ends_with(what, ".dll");
    if (is_manifest) {
      e = state_->entry_for_manifest(what);
    } else if (is_library) {
      std::string abs = fs::absolute(what).lexically_normal().string();
      for (auto& x : state_->entries)
        if (x->rec.library_path == abs && (x->manifest_ok || x->by_library)) e = x.get();
      if (!e) {
        auto fresh = std::make_unique<Entry>();
        fresh->by_library = true;
        fresh->rec.name = fs::path(abs).stem().string();
        fresh->rec.library_path = abs;
        state_->entries.push_back(std::move(fresh));
        e = state_->entries.back().get();
      }
    } else {
      e = state_->find_name(what);
      if (!e) {
        why = cat("no plugin named '", what, "' was found; searched: ");
        for (std::size_t i = 0; i < state_->search.size(); ++i)
          why += (i ? ", " : "") + state_->search[i].path;
        debugf(why);
        return false;
      }
    }
    if (!e) {  // a manifest named twice: the first one found wins
      why = cat("manifest ", what, " was ignored: another manifest with the same plugin name was found first");
      return false;
    }
    return state_->load_entry(*e, lock, why);
  } catch (const std::exception& ex) {
    why = cat("loading '", what, "' failed: ", ex.what());
    return false;
  }
}

bool Registry::load_for_device_type(const std::string& type, std::string& why) {
  try {
    std::unique_lock<std::mutex> lock(state_->mu);
    if (!state_->discovered) state_->discover_locked();

    // Candidates: readable manifests listing the type, highest priority
    // first, discovery order among equals.
    std::vector<Entry*> candidates;
    for (auto& e : state_->entries)
      if (e->manifest_ok && contains(e->rec.device_types, type)) candidates.push_back(e.get());
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Entry* a, const Entry* b) { return a->rec.priority > b->rec.priority; });
    debugf("resolving device type '", type, "': ", candidates.size(), " candidate plugin(s)");

    if (candidates.empty()) {
      std::vector<std::string> listed;
      for (const auto& e : state_->entries)
        if (e->manifest_ok) listed.insert(listed.end(), e->rec.device_types.begin(), e->rec.device_types.end());
      why = cat("no plugin manifest lists device type '", type, "'", did_you_mean(type, listed), "; searched: ");
      for (std::size_t i = 0; i < state_->search.size(); ++i)
        why += (i ? ", " : "") + state_->search[i].path;
      debugf(why);
      return false;
    }

    std::vector<std::string> failures;
    for (Entry* e : candidates) {
      std::string reason;
      if (state_->load_entry(*e, lock, reason)) {
        if (contains(e->rec.registered_device_types, type)) {
          debugf("device type '", type, "' is provided by plugin '", e->rec.name, "'");
          return true;
        }
        failures.push_back(cat("plugin '", e->rec.name, "' (", e->label(),
                               ") loaded but did not register device type '", type, "'"));
      } else {
        failures.push_back(cat("plugin '", e->rec.name, "' failed: ", reason));
      }
    }
    why = cat("no plugin could provide device type '", type, "': ", join(failures, "; "));
    debugf(why);
    return false;
  } catch (const std::exception& ex) {
    why = cat("resolving device type '", type, "' failed: ", ex.what());
    return false;
  }
}

const LoomCommPluginInfo* Registry::load_comm_backend(const std::string& backend, std::string& why) {
  try {
    std::unique_lock<std::mutex> lock(state_->mu);
    if (!state_->discovered) state_->discover_locked();
    std::vector<Entry*> candidates;
    for (auto& e : state_->entries)
      if (e->manifest_ok && contains(e->rec.comm_backends, backend)) candidates.push_back(e.get());
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Entry* a, const Entry* b) { return a->rec.priority > b->rec.priority; });
    if (candidates.empty()) {
      std::vector<std::string> listed;
      for (const auto& e : state_->entries)
        if (e->manifest_ok) listed.insert(listed.end(), e->rec.comm_backends.begin(), e->rec.comm_backends.end());
      why = cat("no plugin manifest lists communication backend '", backend, "'", did_you_mean(backend, listed),
                listed.empty() ? " (none is installed)" : cat(" (installed: ", join(listed, ", "), ")"),
                "; searched: ");
      for (std::size_t i = 0; i < state_->search.size(); ++i) why += (i ? ", " : "") + state_->search[i].path;
      debugf(why);
      return nullptr;
    }
    std::vector<std::string> failures;
    for (Entry* e : candidates) {
      std::string reason;
      if (!state_->load_entry(*e, lock, reason)) {
        failures.push_back(cat("plugin '", e->rec.name, "' failed: ", reason));
      } else if (e->rec.state == PluginState::NoDevices) {
        failures.push_back(cat("plugin '", e->rec.name, "' is not usable here: ", e->rec.reason));
      } else if (e->comm) {
        return e->comm;
      } else {
        failures.push_back(cat("plugin '", e->rec.name, "' (", e->label(), ") is not a communication plugin"));
      }
    }
    why = cat("no plugin could provide communication backend '", backend, "': ", join(failures, "; "));
    debugf(why);
    return nullptr;
  } catch (const std::exception& ex) {
    why = cat("loading communication backend '", backend, "' failed: ", ex.what());
    return nullptr;
  }
}

bool Registry::load_all() {
  std::vector<Entry*> all;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->discover_locked();
    for (auto& e : state_->entries) all.push_back(e.get());
  }
  bool ok = true;
  for (Entry* e : all) {
    std::unique_lock<std::mutex> lock(state_->mu);
    std::string why;
    try {
      if (!state_->load_entry(*e, lock, why)) ok = false;
    } catch (const std::exception&) {
      ok = false;
    }
  }
  return ok;
}

std::vector<PluginRecord> Registry::plugins() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!state_->discovered) state_->discover_locked();
  std::vector<PluginRecord> out;
  out.reserve(state_->entries.size());
  for (const auto& e : state_->entries) out.push_back(e->rec);
  return out;
}

bool Registry::find(const std::string& name, PluginRecord& out) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!state_->discovered) state_->discover_locked();
  Entry* e = state_->find_name(name);
  if (e) out = e->rec;
  return e != nullptr;
}

std::vector<SearchEntry> Registry::search_path() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->search;
}

}  // namespace loom::registry
