// device_registry.h (core-internal) — the table of registered device types.
//
// Slots are handed out once and never reused; an entry is immutable after
// publication, so readers need only an atomic load.
#pragma once

#include <loom/device.h>
#include <loom/plugin_api.h>

#include <atomic>
#include <string>

namespace loom::detail {

struct DeviceTypeEntry {
  std::string name;
  std::string plugin;       // who registered it
  LoomDeviceTypeDesc desc;  // copied, zero-filled past the plugin's struct_size
  int slot = -1;
  // False while the plugin that registered the type is still registering
  // its kernels (plugin_host.cpp's commit): device_type_slot then waits for
  // the load to finish instead of handing out a device with no kernels yet.
  std::atomic<bool> ready{true};
  bool host_memory() const { return desc.flags & LOOM_DEVICE_HOST_MEMORY; }
};

// The entry for a slot; throws when the slot is not registered.
const DeviceTypeEntry& device_type(int slot);
// nullptr when unregistered.
const DeviceTypeEntry* device_type_or_null(int slot);

// Registers a type; throws loom::Error when the name is taken or invalid.
// `ready` false: the registering plugin's kernels follow, and
// mark_device_type_ready(slot) ends the wait device_type_slot makes until then.
int register_device_type(const LoomDeviceTypeDesc& desc, const std::string& plugin, bool ready = true);
void mark_device_type_ready(int slot);
// Throws naming the missing slots when `desc` fills part of one of
// plugin_api.h's all-or-none groups (register_device_type checks too; the
// plugin host checks while staging, so a refused plugin leaves no trace).
void check_slot_groups(const LoomDeviceTypeDesc& desc);

// The entry of d's type, after checking that its plugin fills the optional
// slots `what` names (`offered`); otherwise throws ErrorKind::Unsupported
// naming the device, the plugin and `what` (device_info.cpp).
const DeviceTypeEntry& device_type_offering(Device d, bool offered, const char* what);

// The slot of the CPU device type, loading the cpu plugin on first use.
int cpu_slot();

}  // namespace loom::detail
