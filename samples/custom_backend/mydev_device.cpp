// mydev_device.cpp — the device type: how many devices there are, memory,
// and copies between them and the host, each a call into the device's
// runtime (mydev_runtime.h; a real device puts its driver's calls here).
// Streams, events, pinned memory and memory statistics are optional slots
// left NULL (testing/sim_device fills them).
#include "mydev_runtime.h"

#include <loom/plugin.hpp>

#include <string>

namespace mydev {
namespace {

using loom::plugin::guard;
using loom::plugin::make_error;

int32_t device_count(void*) { return mydev_rt_device_count(); }

LoomError* allocate(void*, int32_t, size_t nbytes, void** out) {
  void* p = mydev_rt_malloc(nbytes);
  if (!p)  // the host turns this status into loom's out-of-memory error
    return make_error(LOOM_STATUS_OUT_OF_MEMORY, "mydev: out of memory allocating " + std::to_string(nbytes) + " bytes");
  *out = p;
  return nullptr;
}

void deallocate(void*, int32_t, void* ptr, size_t) { mydev_rt_free(ptr); }

// `stream` is NULL: mydev has no streams, so every copy completes before it
// returns.
LoomError* copy_to_host(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  return guard([&] { mydev_rt_memcpy(dst, src, n); });
}

LoomError* copy_from_host(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  return guard([&] { mydev_rt_memcpy(dst, src, n); });
}

}  // namespace

LoomDeviceTypeDesc device_type_desc() {
  LoomDeviceTypeDesc d{};
  d.struct_size = sizeof d;
  d.name = "mydev";
  d.device_count = &device_count;
  d.allocate = &allocate;
  d.deallocate = &deallocate;
  d.copy_to_host = &copy_to_host;
  d.copy_from_host = &copy_from_host;
  return d;
}

}  // namespace mydev
