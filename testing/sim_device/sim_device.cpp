// sim_device.cpp — the "sim" device type: what it is, its allocator (with
// PyTorch-style statistics) and copies. Streams, events and options are in
// sim_runtime.cpp. Built against loom/plugin_api.h alone, like any third
// party's backend.
#include "sim_memory.hpp"
#include "sim_queue.hpp"
#include "sim_runtime.hpp"

#include <loom/plugin.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace sim {
namespace {

using loom::plugin::Failure;
using loom::plugin::guard;
using loom::plugin::make_error;

int32_t device_count(void*) {
  // LOOM_SIM_DEVICES lets tests ask for several sim devices.
  const char* v = std::getenv("LOOM_SIM_DEVICES");
  return v ? std::atoi(v) : 1;
}

const char* unavailable_reason(void*) { return "LOOM_SIM_DEVICES is 0"; }

// Bytes one sim device pretends to have: LOOM_SIM_TOTAL_MEMORY, else 8 GiB.
// Allocations past it fail as out of memory, as on a real device.
uint64_t total_memory() {
  const char* v = std::getenv("LOOM_SIM_TOTAL_MEMORY");
  return v ? std::strtoull(v, nullptr, 10) : uint64_t{8} << 30;
}

void check_index(int32_t index) {
  if (index < 0 || index >= device_count(nullptr))
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "sim: no device sim:" + std::to_string(index));
}

// sim caches nothing: every block is malloc'd and freed at once, so reserved
// equals allocated and every allocation is a device allocation.
struct Usage {
  uint64_t allocated = 0, peak = 0, allocs = 0, ooms = 0;
};
std::mutex usage_mutex;
std::map<int32_t, Usage> usage;  // by device index

LoomError* allocate(void*, int32_t index, size_t nbytes, void** out) {
  std::lock_guard lock(usage_mutex);
  Usage& u = usage[index];
  void* p = u.allocated + nbytes <= total_memory() ? std::malloc(nbytes ? nbytes : 1) : nullptr;
  if (!p) {
    ++u.ooms;
    return make_error(LOOM_STATUS_OUT_OF_MEMORY,
                      "sim: out of memory allocating " + std::to_string(nbytes) + " bytes on sim:" +
                          std::to_string(index) + " (" + std::to_string(u.allocated) + " of " +
                          std::to_string(total_memory()) + " bytes in use)");
  }
  u.allocated += nbytes;
  u.peak = std::max(u.peak, u.allocated);
  ++u.allocs;
  *out = to_device(p);
  return nullptr;
}

void deallocate(void*, int32_t index, void* ptr, size_t nbytes) {
  if (!ptr) return;
  drain_all();  // a queued copy may still read or write this block
  std::free(to_host(ptr));
  std::lock_guard lock(usage_mutex);
  usage[index].allocated -= nbytes;
}

LoomError* memory_stats(void*, int32_t index, LoomMemoryStats* out) {
  return guard([&] {
    check_index(index);
    std::lock_guard lock(usage_mutex);
    const Usage& u = usage[index];
    // Every field is from ABI 1.2, the first host version that calls this.
    if (!LOOM_STRUCT_HAS(out, LoomMemoryStats, num_ooms))
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "sim: LoomMemoryStats too small");
    out->allocated_bytes = out->reserved_bytes = u.allocated;
    out->max_allocated_bytes = out->max_reserved_bytes = u.peak;
    out->num_allocs = out->num_device_allocs = u.allocs;
    out->num_cache_hits = 0;
    out->num_ooms = u.ooms;
  });
}

LoomError* empty_cache(void*, int32_t index) {
  return guard([&] { check_index(index); });  // nothing is cached
}

LoomError* reset_peak_memory_stats(void*, int32_t index) {
  return guard([&] {
    check_index(index);
    std::lock_guard lock(usage_mutex);
    Usage& u = usage[index];
    u.peak = u.allocated;
  });
}

LoomError* device_properties(void*, int32_t index, LoomDeviceProperties* out) {
  return guard([&] {
    check_index(index);
    if (!LOOM_STRUCT_HAS(out, LoomDeviceProperties, multiprocessor_count))
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "sim: LoomDeviceProperties too small");
    std::snprintf(out->name, sizeof out->name, "loom sim device");
    out->total_memory = total_memory();
    out->capability_major = out->capability_minor = 0;  // not applicable
    out->multiprocessor_count = 1;                       // the calling thread
  });
}

// Copies check the stream loom gives them like kernels do (sim_runtime.hpp).
// Those of pinned memory stay queued on it (sim_queue.hpp).
LoomError* copy_to_host(void*, int32_t index, void* dst, const void* src, size_t n, void* stream) {
  return guard([&] {
    check_work_stream(index, stream);
    if (is_pinned(dst)) enqueue(index, stream, [=] { std::memcpy(dst, to_host(src), n); });
    else std::memcpy(dst, to_host(src), n);
  });
}

LoomError* copy_from_host(void*, int32_t index, void* dst, const void* src, size_t n, void* stream) {
  return guard([&] {
    check_work_stream(index, stream);
    if (is_pinned(src)) enqueue(index, stream, [=] { std::memcpy(to_host(dst), src, n); });
    else std::memcpy(to_host(dst), src, n);
  });
}

LoomError* synchronize(void*, int32_t index) {
  return guard([&] {
    check_index(index);
    drain_device(index);
  });
}

LoomError* host_allocate(void*, size_t nbytes, void** out) {
  void* p = pinned_allocate(nbytes);
  if (!p)
    return make_error(LOOM_STATUS_OUT_OF_MEMORY,
                      "sim: out of memory allocating " + std::to_string(nbytes) + " bytes of pinned host memory");
  *out = p;
  return nullptr;
}

void host_deallocate(void*, void* ptr, size_t) { pinned_free(ptr); }

// `stream` is the source device's (loom's rule for copies between devices).
LoomError* copy_on_device(void*, int32_t, void* dst, int32_t src_index, const void* src, size_t n,
                          void* stream) {
  return guard([&] {
    check_work_stream(src_index, stream);
    std::memmove(to_host(dst), to_host(src), n);
  });
}

// sim offers no fused kernels: it declines every region, which proves the
// decline path (the host runs the region op by op, through sim's kernels and
// the CPU fallback). fused_run and fused_release are never called then, but
// the slots are all or none.
LoomError* fused_compile(void*, int32_t, const LoomFusedRegion* region, void**) {
  return make_error(LOOM_STATUS_UNSUPPORTED,
                    "sim declines fused regions (" + std::to_string(region->num_instrs) +
                        " instructions): it runs them op by op");
}

LoomError* fused_run(void*, int32_t, void*, const LoomTensorDesc*, int32_t, const LoomTensorDesc*, int32_t, void*) {
  return make_error(LOOM_STATUS_INTERNAL, "sim: fused_run called, but sim compiles no region");
}

void fused_release(void*, void*) {}

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
  d.synchronize = &synchronize;
  d.host_allocate = &host_allocate;
  d.host_deallocate = &host_deallocate;
  d.device_properties = &device_properties;
  d.memory_stats = &memory_stats;
  d.empty_cache = &empty_cache;
  d.reset_peak_memory_stats = &reset_peak_memory_stats;
  add_runtime_slots(d);
  d.fused_compile = &fused_compile;
  d.fused_run = &fused_run;
  d.fused_release = &fused_release;
  return d;
}

}  // namespace sim
