// device.cpp — device-type slots, device parsing and load-on-first-use.
#include "device_registry.h"
#include "plugin_call.h"

#include <loom/op_registry.h>
#include <loom/error.h>
#include <loom/plugin_host.h>

#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <mutex>

namespace loom {
namespace detail {
namespace {

struct DeviceTable {
  std::array<std::atomic<const DeviceTypeEntry*>, kMaxDeviceTypes> slots{};
  std::atomic<int> count{0};
  std::mutex mutex;  // registration only
  std::mutex resolver_mutex;
  DeviceTypeResolver resolver;
};

DeviceTable& table() {
  static auto* t = new DeviceTable;  // never destroyed: plugins outlive statics
  return *t;
}

bool valid_type_name(const char* s) {
  if (!s || !*s) return false;
  for (const char* p = s; *p; ++p)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
  return true;
}

}  // namespace

const DeviceTypeEntry* device_type_or_null(int slot) {
  if (slot < 0 || slot >= kMaxDeviceTypes) return nullptr;
  return table().slots[slot].load(std::memory_order_acquire);
}

const DeviceTypeEntry& device_type(int slot) {
  const DeviceTypeEntry* e = device_type_or_null(slot);
  if (!e) throw Error(ErrorKind::NotFound, cat("no device type registered in slot ", slot));
  return *e;
}

// plugin_api.h's "all or none" groups of optional slots: a device type that
// fills part of a group is refused at registration, naming what is missing,
// rather than failing at the first call of an empty slot. Slots that need
// another capability (set_current_stream needs streams) are checked too.
void check_slot_groups(const LoomDeviceTypeDesc& d) {
  struct Slot {
    const char* name;
    bool set;
  };
  auto all_or_none = [&](const char* what, std::initializer_list<Slot> slots) {
    size_t n_set = 0;
    for (const Slot& s : slots) n_set += s.set ? 1 : 0;
    if (n_set == 0 || n_set == slots.size()) return;
    std::string list;
    for (const Slot& s : slots)
      if (!s.set) list += cat(list.empty() ? "" : ", ", s.name);
    throw Error(cat("device type '", d.name, "' fills part of the ", what, " slots; they are all or none (missing: ",
                    list, ")"));
  };
  all_or_none("stream", {{"stream_create", d.stream_create != nullptr},
                         {"stream_destroy", d.stream_destroy != nullptr},
                         {"stream_synchronize", d.stream_synchronize != nullptr}});
  all_or_none("event", {{"event_create", d.event_create != nullptr},
                        {"event_destroy", d.event_destroy != nullptr},
                        {"event_record", d.event_record != nullptr},
                        {"event_synchronize", d.event_synchronize != nullptr},
                        {"event_elapsed_ms", d.event_elapsed_ms != nullptr}});
  all_or_none("thread-count", {{"set_num_threads", d.set_num_threads != nullptr},
                               {"get_num_threads", d.get_num_threads != nullptr}});
  all_or_none("memory-statistics", {{"memory_stats", d.memory_stats != nullptr},
                                    {"empty_cache", d.empty_cache != nullptr},
                                    {"reset_peak_memory_stats", d.reset_peak_memory_stats != nullptr}});
  all_or_none("pinned-memory", {{"host_allocate", d.host_allocate != nullptr},
                                {"host_deallocate", d.host_deallocate != nullptr}});
  all_or_none("query", {{"stream_query", d.stream_query != nullptr}, {"event_query", d.event_query != nullptr}});
  all_or_none("fusion", {{"fused_compile", d.fused_compile != nullptr},
                         {"fused_run", d.fused_run != nullptr},
                         {"fused_release", d.fused_release != nullptr}});
  auto needs = [&](bool slot, const char* name, bool capability, const char* what) {
    if (slot && !capability)
      throw Error(cat("device type '", d.name, "' fills ", name, " but not the ", what, " slots it works on"));
  };
  const bool streams = d.stream_create != nullptr, events = d.event_create != nullptr;
  needs(d.set_current_stream != nullptr, "set_current_stream", streams, "stream");
  needs(d.stream_wait_event != nullptr, "stream_wait_event", streams && events, "stream and event");
  needs(d.stream_query != nullptr, "stream_query / event_query", streams && events, "stream and event");
}

int register_device_type(const LoomDeviceTypeDesc& desc, const std::string& plugin, bool ready) {
  if (!valid_type_name(desc.name))
    throw Error(cat("invalid device type name '", desc.name ? desc.name : "(null)",
                    "': use lower-case letters, digits and '_'"));
  if (!desc.device_count || !desc.allocate || !desc.deallocate || !desc.copy_to_host ||
      !desc.copy_from_host)
    throw Error(cat("device type '", desc.name,
                    "' lacks a required function (device_count, allocate, deallocate, "
                    "copy_to_host, copy_from_host)"));
  auto& t = table();
  int slot;
  {
    std::lock_guard lock(t.mutex);
    const int n = t.count.load();
    for (int i = 0; i < n; ++i) {
      const DeviceTypeEntry* e = t.slots[i].load();
      if (e->name == desc.name)
        throw Error(cat("device type '", desc.name, "' is already provided by ", e->plugin));
    }
    if (n >= kMaxDeviceTypes)
      throw Error(cat("too many device types (limit ", kMaxDeviceTypes, ")"));
    auto* e = new DeviceTypeEntry;
    e->name = desc.name;
    e->plugin = plugin;
    std::memset(&e->desc, 0, sizeof e->desc);
    std::memcpy(&e->desc, &desc, std::min(desc.struct_size, sizeof e->desc));
    e->desc.struct_size = sizeof e->desc;
    try {
      check_slot_groups(e->desc);  // on the copy: slots past the plugin's struct_size read as empty
    } catch (...) {
      delete e;
      throw;
    }
    e->desc.name = e->name.c_str();
    e->slot = n;
    e->ready.store(ready, std::memory_order_relaxed);
    t.slots[n].store(e, std::memory_order_release);
    t.count.store(n + 1);
    slot = n;
  }
  Dispatcher::instance().on_device_type_registered(desc.name, slot);
  return slot;
}

void mark_device_type_ready(int slot) {
  const_cast<DeviceTypeEntry&>(device_type(slot)).ready.store(true, std::memory_order_release);
}

int cpu_slot() {
  static std::atomic<int> cached{-1};
  int s = cached.load(std::memory_order_relaxed);
  if (s >= 0) [[likely]] return s;
  s = device_type_slot("cpu");
  cached.store(s, std::memory_order_relaxed);
  return s;
}

}  // namespace detail

void set_device_type_resolver(DeviceTypeResolver resolver) {
  auto& t = detail::table();
  std::lock_guard lock(t.resolver_mutex);
  t.resolver = std::move(resolver);
}

int find_device_type_slot(std::string_view type_name) {
  auto& t = detail::table();
  const int n = t.count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const auto* e = t.slots[i].load(std::memory_order_acquire);
    if (e && e->name == type_name) return i;
  }
  return -1;
}

int device_type_slot(std::string_view type_name) {
  int s = find_device_type_slot(type_name);
  // A type whose plugin is still registering its kernels on another thread:
  // the resolver below waits for that load to finish (the registry's
  // `loading` wait) rather than this thread dispatching to no kernels.
  if (s >= 0 && detail::device_type(s).ready.load(std::memory_order_acquire)) [[likely]] return s;
  auto& t = detail::table();
  std::string why;
  DeviceTypeResolver resolver;
  {
    std::lock_guard lock(t.resolver_mutex);
    resolver = t.resolver;
  }
  // The resolver may load a plugin, which registers device types: call it
  // without holding any lock of ours.
  if (resolver) resolver(std::string(type_name), why);
  s = find_device_type_slot(type_name);
  if (s >= 0) return s;
  std::string known;
  for (const auto& n : device_type_names()) known += (known.empty() ? "" : ", ") + n;
  if (!why.empty())
    throw Error(ErrorKind::NotFound,
                detail::cat("device type '", type_name, "' is unavailable: ", why,
                            " (registered types: ", known.empty() ? "(none)" : known, ")"));
  throw Error(ErrorKind::NotFound,
              detail::cat("unknown device type '", type_name, "'; registered types: ",
                          known.empty() ? "(none)" : known,
                          resolver ? "; no plugin manifest provides it (LOOM_PLUGIN_DEBUG=1 shows the search)"
                                   : "; no plugin registry is installed"));
}

std::vector<std::string> device_type_names() {
  std::vector<std::string> names;
  auto& t = detail::table();
  const int n = t.count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) names.push_back(t.slots[i].load()->name);
  return names;
}

int device_count(const std::string& type_name) {
  int s = find_device_type_slot(type_name);
  if (s < 0) return 0;
  const auto& e = detail::device_type(s);
  return LOOM_DEVICE_SLOT(e, device_count);
}

std::string device_unavailable_reason(const std::string& type_name) {
  int s = find_device_type_slot(type_name);
  if (s < 0) return "";
  const auto& e = detail::device_type(s);
  if (LOOM_DEVICE_SLOT(e, device_count) > 0) return "";
  if (e.desc.unavailable_reason) {
    const char* r = LOOM_DEVICE_SLOT(e, unavailable_reason);
    if (r) return r;
  }
  return "the plugin reports no devices";
}

namespace {
Device parse_device(std::string_view spec) {
  std::string_view type = spec;
  int64_t index = 0;
  if (auto colon = spec.find(':'); colon != std::string_view::npos) {
    type = spec.substr(0, colon);
    auto num = spec.substr(colon + 1);
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), index);
    if (ec != std::errc() || p != num.data() + num.size() || index < 0 || index > 32767)
      throw Error(detail::cat("invalid device string '", spec,
                              "': expected 'type' or 'type:index' with a non-negative index"));
  }
  if (type.empty()) throw Error(detail::cat("invalid device string '", spec, "': empty type"));
  int slot = device_type_slot(type);
  const auto& e = detail::device_type(slot);
  const int count = LOOM_DEVICE_SLOT(e, device_count);
  if (index >= count) {
    std::string reason = count == 0 ? device_unavailable_reason(e.name) : "";
    throw Error(ErrorKind::Device,
                detail::cat("device '", spec, "' does not exist: ", e.name, " has ", count,
                            " device(s)", reason.empty() ? "" : " (" + reason + ")"));
  }
  return Device(static_cast<int16_t>(slot), static_cast<int16_t>(index));
}
}  // namespace

Device::Device(const char* spec) : Device(parse_device(spec)) {}
Device::Device(const std::string& spec) : Device(parse_device(spec)) {}
Device::Device(DeviceType type, int index) : Device(std::string(type.name()) + ":" + std::to_string(index)) {}

const std::string& Device::type_name() const { return detail::device_type(type).name; }
bool Device::is_host() const { return detail::device_type(type).host_memory(); }
std::string Device::str() const { return detail::cat(type_name(), ":", index); }
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

Device cpu_device() { return Device(static_cast<int16_t>(detail::cpu_slot()), 0); }

void synchronize(Device d) {
  const auto& e = detail::device_type(d.type);
  if (!e.desc.synchronize) return;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, synchronize, d.index))
    detail::throw_abi_error(err, detail::cat("synchronize(", d.str(), ")"));
}

void set_num_threads(int n) {
  LOOM_CHECK(n >= 1, "set_num_threads: expected a positive number of threads, got ", n);
  (void)detail::cpu_slot();  // the CPU plugin must be loaded to receive it
  for (const auto& name : device_type_names()) {
    const auto& e = detail::device_type(find_device_type_slot(name));
    if (!e.desc.set_num_threads) continue;
    if (LoomError* err = LOOM_DEVICE_SLOT(e, set_num_threads, n))
      detail::throw_abi_error(err, detail::cat("set_num_threads(", n, ") on ", name));
  }
}

int get_num_threads() {
  const auto& e = detail::device_type(detail::cpu_slot());
  return e.desc.get_num_threads ? LOOM_DEVICE_SLOT(e, get_num_threads) : 1;
}

}  // namespace loom
