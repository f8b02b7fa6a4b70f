// loom/device_info.h — what a device is, how its allocator stands, and
// device-type settings: the runtime queries a plugin may answer (ABI 1.2).
//
//   loom::Device gpu("cuda:0");
//   auto p = loom::device_properties(gpu);     // name, memory, capability
//   auto before = loom::memory_stats(gpu).allocated_bytes;
//   loom::empty_cache(gpu);                     // give cached blocks back
//   loom::set_device_option("cuda", "allow_tf32", "1");
//
// Each query needs its slot in the plugin's LoomDeviceTypeDesc; a device
// whose plugin leaves it empty gets an error naming the device and what is
// missing (device_runtime_features says in advance what is offered).
#pragma once

#include <loom/device.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace loom {

struct DeviceProperties {
  std::string name;            // "NVIDIA H100 80GB HBM3", "loom sim device"
  uint64_t total_memory = 0;   // bytes; 0 when unknown
  int major = 0;               // compute capability; 0 when not applicable
  int minor = 0;
  int multi_processor_count = 0;  // compute units; 0 when unknown
};

// The allocator's bookkeeping, PyTorch's memory_allocated & co.: bytes held
// by tensors, bytes held from the device (tensors plus cache), each now and
// at its peak since the last reset_peak_memory_stats, and counts.
struct MemoryStats {
  uint64_t allocated_bytes = 0;
  uint64_t max_allocated_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t max_reserved_bytes = 0;
  uint64_t num_allocs = 0;         // allocate calls served
  uint64_t num_cache_hits = 0;     // of those, served from the cache
  uint64_t num_device_allocs = 0;  // blocks taken from the device
  uint64_t num_ooms = 0;           // allocate calls that failed
};

// Which optional runtime slots a device type's plugin fills.
struct DeviceRuntimeFeatures {
  bool streams = false;
  bool events = false;
  bool properties = false;
  bool memory_stats = false;  // with empty_cache and reset_peak_memory_stats
  bool current_stream = false;
  bool options = false;
  bool pinned_memory = false;  // host_allocate: Tensor::pin_memory (ABI 1.3)
  bool stream_wait = false;    // stream_wait_event: waits without the host
  bool queries = false;        // stream_query and event_query
  bool fusion = false;         // fused_compile/run/release: loom.jit's fused regions (ABI 1.4)
};
// Throws when no plugin provides the type (loads it on first use).
DeviceRuntimeFeatures device_runtime_features(std::string_view type_name);

// Number of devices of a type, loading its plugin on first use; 0 when no
// plugin provides it or it has no devices. Never throws for a missing type
// (torch.cuda.device_count() on a machine without CUDA).
int available_device_count(std::string_view type_name);

DeviceProperties device_properties(Device d);
MemoryStats memory_stats(Device d);
// Releases the allocator's cached blocks that no tensor uses. Does nothing on
// a device without memory statistics (there is no cache to empty).
void empty_cache(Device d);
// Restarts the max_* figures of memory_stats from the current values.
void reset_peak_memory_stats(Device d);

// A device-type-wide setting, e.g. ("cuda", "allow_tf32", "1"). Throws
// naming the type when its plugin has no options, and the key when the
// plugin does not know it.
void set_device_option(std::string_view type_name, const std::string& key, const std::string& value);

}  // namespace loom
