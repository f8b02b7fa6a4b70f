// sim_device.cpp — the "sim" device type: allocator and copies.
// Built against loom/plugin_api.h alone, like any third party's backend.
#include "sim_memory.hpp"

#include <loom/plugin.hpp>

#include <cstdlib>
#include <cstring>
#include <string>

namespace sim {
namespace {

using loom::plugin::make_error;

int32_t device_count(void*) {
  // LOOM_SIM_DEVICES lets tests ask for several sim devices.
  const char* v = std::getenv("LOOM_SIM_DEVICES");
  return v ? std::atoi(v) : 1;
}

const char* unavailable_reason(void*) { return "LOOM_SIM_DEVICES is 0"; }

LoomError* allocate(void*, int32_t, size_t nbytes, void** out) {
  void* p = std::malloc(nbytes ? nbytes : 1);
  if (!p)
    return make_error(LOOM_STATUS_OUT_OF_MEMORY,
                      "sim: out of memory allocating " + std::to_string(nbytes) + " bytes");
  *out = to_device(p);
  return nullptr;
}

void deallocate(void*, int32_t, void* ptr, size_t) {
  if (ptr) std::free(to_host(ptr));
}

LoomError* copy_to_host(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  std::memcpy(dst, to_host(src), n);
  return nullptr;
}

LoomError* copy_from_host(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  std::memcpy(to_host(dst), src, n);
  return nullptr;
}

LoomError* copy_on_device(void*, int32_t, void* dst, int32_t, const void* src, size_t n, void*) {
  std::memmove(to_host(dst), to_host(src), n);
  return nullptr;
}

}  // namespace

LoomDeviceTypeDesc device_type_desc() {
  LoomDeviceTypeDesc d{};
  d.struct_size = sizeof d;
  d.name = "sim";
  d.device_count = &device_count;
  d.unavailable_reason = &unavailable_reason;
  d.allocate = &allocate;
  d.deallocate = &deallocate;
  d.copy_to_host = &copy_to_host;
  d.copy_from_host = &copy_from_host;
  d.copy_on_device = &copy_on_device;
  return d;
}

}  // namespace sim
