// device_info.cpp — device properties, allocator statistics and device-type
// options, through the plugin's optional ABI 1.2 slots (loom/device_info.h).
#include "device_registry.h"
#include "plugin_call.h"

#include <loom/device_info.h>
#include <loom/error.h>

#include <cstring>

namespace loom {
namespace detail {

const DeviceTypeEntry& device_type_offering(Device d, bool offered, const char* what) {
  const auto& e = device_type(d.type);
  if (!offered)
    throw Error(ErrorKind::Unsupported, cat("device '", d.str(), "' has no ", what, ": ", e.plugin,
                                            " leaves those slots of its device type empty"));
  return e;
}

namespace {

const DeviceTypeEntry& memory_stats_entry(Device d) {
  return device_type_offering(d, device_type(d.type).desc.memory_stats != nullptr,
                              "memory statistics");
}

}  // namespace
}  // namespace detail

DeviceRuntimeFeatures device_runtime_features(std::string_view type_name) {
  const auto& desc = detail::device_type(device_type_slot(type_name)).desc;
  DeviceRuntimeFeatures f;
  f.streams = desc.stream_create != nullptr;
  f.events = desc.event_create != nullptr;
  f.properties = desc.device_properties != nullptr;
  f.memory_stats = desc.memory_stats != nullptr;
  f.current_stream = desc.set_current_stream != nullptr;
  f.options = desc.set_option != nullptr;
  f.pinned_memory = desc.host_allocate != nullptr && desc.host_deallocate != nullptr;
  f.stream_wait = desc.stream_wait_event != nullptr;
  f.queries = desc.stream_query != nullptr && desc.event_query != nullptr;
  f.fusion = desc.fused_compile != nullptr;
  return f;
}

int available_device_count(std::string_view type_name) {
  try {
    (void)device_type_slot(type_name);  // loads the providing plugin on first use
  } catch (const Error&) {
    return 0;
  }
  return device_count(std::string(type_name));
}

DeviceProperties device_properties(Device d) {
  const auto& e = detail::device_type_offering(d, detail::device_type(d.type).desc.device_properties,
                                               "device properties");
  LoomDeviceProperties p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, device_properties, d.index, &p))
    detail::throw_abi_error(err, detail::cat("device_properties(", d.str(), ")"));
  p.name[sizeof p.name - 1] = '\0';  // a plugin that filled all 256 bytes
  DeviceProperties out;
  out.name = p.name;
  out.total_memory = p.total_memory;
  out.major = p.capability_major;
  out.minor = p.capability_minor;
  out.multi_processor_count = p.multiprocessor_count;
  return out;
}

MemoryStats memory_stats(Device d) {
  const auto& e = detail::memory_stats_entry(d);
  LoomMemoryStats s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, memory_stats, d.index, &s))
    detail::throw_abi_error(err, detail::cat("memory_stats(", d.str(), ")"));
  return MemoryStats{s.allocated_bytes, s.max_allocated_bytes, s.reserved_bytes,
                     s.max_reserved_bytes, s.num_allocs, s.num_cache_hits,
                     s.num_device_allocs, s.num_ooms};
}

void empty_cache(Device d) {
  const auto& e = detail::device_type(d.type);
  if (!e.desc.empty_cache) return;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, empty_cache, d.index))
    detail::throw_abi_error(err, detail::cat("empty_cache(", d.str(), ")"));
}

void reset_peak_memory_stats(Device d) {
  const auto& e = detail::memory_stats_entry(d);
  if (LoomError* err = LOOM_DEVICE_SLOT(e, reset_peak_memory_stats, d.index))
    detail::throw_abi_error(err, detail::cat("reset_peak_memory_stats(", d.str(), ")"));
}

void set_device_option(std::string_view type_name, const std::string& key, const std::string& value) {
  const auto& e = detail::device_type(device_type_slot(type_name));
  if (!e.desc.set_option)
    throw Error(ErrorKind::Unsupported,
                detail::cat("device type '", e.name, "' has no options (", e.plugin,
                            " leaves set_option empty), so '", key, "' cannot be set"));
  if (LoomError* err = LOOM_DEVICE_SLOT(e, set_option, key.c_str(), value.c_str()))
    detail::throw_abi_error(err, detail::cat("set_device_option('", e.name, "', '", key, "', '",
                                             value, "')"));
}

}  // namespace loom
