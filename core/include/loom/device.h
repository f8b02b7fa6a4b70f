// loom/device.h — devices whose types are registered at run time by plugins.
//
// There is no enum of backends: "cpu", "cuda", "sim" are names that plugins
// register; each gets a small integer slot when registered, and that slot
// indexes the dispatch tables. Parsing a name the core has not seen yet asks
// the registry to load the plugin that provides it (load on first use).
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace loom {

// Upper bound on registered device types; slots index fixed-size tables so
// lookup is one load and registration never moves anything.
inline constexpr int kMaxDeviceTypes = 32;

// A device type by name, libtorch's DeviceType spelling: loom's device
// types are plugins, so this is their name, not a closed enum.
//   loom::Device d(loom::kCUDA);   loom::Device(loom::kCUDA, 1);
class DeviceType {
 public:
  // The CPU (libtorch programs declare `DeviceType t;` and assign later).
  constexpr DeviceType() = default;
  constexpr explicit DeviceType(const char* name) : name_(name) {}
  constexpr const char* name() const { return name_; }
  bool operator==(const DeviceType& o) const { return std::string_view(name_) == o.name_; }

 private:
  const char* name_ = "cpu";
};
inline constexpr DeviceType kCPU{"cpu"};
inline constexpr DeviceType kCUDA{"cuda"};
inline constexpr DeviceType kHIP{"hip"};

struct Device {
  int16_t type = -1;  // slot assigned at registration; -1 = none
  int16_t index = 0;

  Device() = default;
  Device(int16_t type_slot, int16_t device_index) : type(type_slot), index(device_index) {}
  // "cpu", "cuda:1", "sim". Loads the providing plugin on first use; throws
  // loom::Error naming the type and the known types when unknown.
  Device(const char* spec);         // NOLINT: implicit like torch.device
  Device(const std::string& spec);  // NOLINT
  // Device(kCUDA) is cuda:0, Device(kCUDA, 1) cuda:1.
  Device(DeviceType type, int index = 0);  // NOLINT: implicit like torch::Device

  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }

  std::string str() const;       // "sim:0"
  bool is_cuda() const { return type_name() == "cuda"; }
  bool is_cpu() const { return type_name() == "cpu"; }
  const std::string& type_name() const;
  bool is_host() const;          // memory the CPU can touch directly
  LoomDevice abi() const { return LoomDevice{type, index}; }
};

std::ostream& operator<<(std::ostream& os, const Device& d);

// The CPU device (loads the cpu plugin on first use).
Device cpu_device();

// Device slot of a type name; loads its plugin on first use. Throws when no
// plugin provides it.
int device_type_slot(std::string_view type_name);
// Same, but returns -1 instead of loading or throwing.
int find_device_type_slot(std::string_view type_name);

// Number of devices of a type, 0 when unknown or unavailable. Does not load.
int device_count(const std::string& type_name);
// Why a type has no devices (plugin's reason), or "" when it has some or is
// unknown.
std::string device_unavailable_reason(const std::string& type_name);
// Names of every registered device type, in slot order.
std::vector<std::string> device_type_names();

// Waits for all queued work on the device.
void synchronize(Device d);

// Threads the host-side kernels may use (every device type that offers the
// setting, the CPU plugin's included; one OpenMP pool shared with oneDNN).
void set_num_threads(int n);
// The CPU device's current setting (1 when no plugin offers one).
int get_num_threads();

}  // namespace loom
