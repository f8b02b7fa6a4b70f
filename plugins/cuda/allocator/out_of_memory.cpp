// See out_of_memory.hpp.
#include "out_of_memory.hpp"

#include <cstdio>
#include <iterator>

namespace loom::gpu {
namespace {

std::string message(int device_index, size_t requested, size_t device_free,
                    size_t device_total, size_t reserved, size_t allocated,
                    const char* runtime) {
  return std::string(runtime) + " out of memory on device " + std::to_string(device_index) +
         ": tried to allocate " + format_bytes(requested) + "; the device has " +
         format_bytes(device_free) + " free of " + format_bytes(device_total) +
         "; loom holds " + format_bytes(reserved) + " reserved, of which " +
         format_bytes(allocated) + " allocated to tensors";
}

}  // namespace

std::string format_bytes(size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %s", value, kUnits[unit]);
  return text;
}

OutOfMemory::OutOfMemory(int device, size_t requested_bytes, size_t free_bytes,
                         size_t total_bytes, size_t reserved_bytes,
                         size_t allocated_bytes, const char* runtime)
    : std::runtime_error(message(device, requested_bytes, free_bytes, total_bytes,
                                 reserved_bytes, allocated_bytes, runtime)),
      device_index(device),
      requested(requested_bytes),
      device_free(free_bytes),
      device_total(total_bytes),
      reserved(reserved_bytes),
      allocated(allocated_bytes) {}

}  // namespace loom::gpu
