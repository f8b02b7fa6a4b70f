// Host-copy communication (host_copy.h).
#include "host_copy.h"

#include <loom/comm_api.h>
#include <loom/distributed/distributed.h>
#include <loom/error.h>
#include <loom/library.h>
#include <loom/registry.h>

#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace loom::distributed {
namespace {

std::mutex g_mutex;
std::map<std::pair<std::string, std::string>, uint64_t> g_counts;  // (op, device type) -> host copies
std::set<std::pair<std::string, std::string>> g_warned;
std::map<std::string, bool> g_has_plugin;  // device type -> answer, once asked

}  // namespace

std::vector<FallbackRecord> host_copy_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<FallbackRecord> out;
  for (const auto& [key, n] : g_counts) out.push_back({key.first, key.second, n});
  return out;
}

namespace detail {

bool has_comm_plugin_for(const std::string& device_type) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (auto it = g_has_plugin.find(device_type); it != g_has_plugin.end()) return it->second;
  }
  auto& registry = registry::Registry::global();
  bool found = false;
  for (const registry::PluginRecord& p : registry.plugins()) {
    if (p.comm_backends.empty()) continue;
    std::string type = p.comm_device_type;
    if (type.empty()) {
      // Only a loaded plugin says whose tensors it moves: load it (a plugin
      // that cannot run here, nccl without a GPU, still says).
      std::string why;
      if (const LoomCommPluginInfo* info = registry.load_comm_backend(p.comm_backends.front(), why))
        type = info->device_type ? info->device_type : "";
      registry::PluginRecord now;
      if (type.empty() && registry.find(p.name, now)) type = now.comm_device_type;
    }
    found = found || type == device_type;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_has_plugin[device_type] = found;
  return found;
}

void note_host_copy(const char* op, const std::string& device_type, const std::string& backend) {
  const std::string what = loom::detail::cat(op, ": the tensor is on a '", device_type,
                                             "' device, which has no communication plugin of its own");
  switch (fallback_policy()) {
    case FallbackPolicy::Error:
      throw Error(ErrorKind::Unsupported,
                  loom::detail::cat(what, "; LOOM_FALLBACK=error forbids communicating it through host copies over '",
                                    backend, "' (LOOM_FALLBACK=warn or allow permits it)"));
    case FallbackPolicy::Warn: {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (g_warned.insert({op, device_type}).second)
        std::cerr << "loom: warning: " << what << "; communicating it through host copies over '" << backend
                  << "' (shown once per op and device type; LOOM_FALLBACK=allow silences this)\n";
      break;
    }
    case FallbackPolicy::Allow: break;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_counts[{op, device_type}];
}

}  // namespace detail
}  // namespace loom::distributed
