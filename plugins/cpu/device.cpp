// The "cpu" device type: one device whose memory is ordinary host memory.
// Blocks are 64-byte aligned (a cache line, and enough for any vector ISA
// and for oneDNN; see host_allocator.hpp); copies are memcpy; there are no
// streams or events, so every kernel has finished when it returns and
// synchronize has nothing to do.
#include "common.hpp"
#include "fused_region.hpp"
#include "host_allocator.hpp"
#include "host_memory_stats.hpp"
#include "large_block_cache.hpp"
#include "kernels.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>

namespace loom::cpu {
namespace {

int32_t device_count(void*) { return 1; }

LoomError* allocate(void*, int32_t index, size_t nbytes, void** out_ptr) {
  *out_ptr = nullptr;
  if (nbytes == 0) return nullptr;  // the ABI allows NULL for 0 bytes
  void* p = host_allocate(nbytes);
  if (p == nullptr) {
    stats_oom();
    char msg[160];
    std::snprintf(msg, sizeof msg,
                  "cpu:%d: out of memory: failed to allocate %zu bytes (%.2f GiB)", index, nbytes,
                  static_cast<double>(nbytes) / (1024.0 * 1024.0 * 1024.0));
    return plugin::make_error(LOOM_STATUS_OUT_OF_MEMORY, msg);
  }
  *out_ptr = p;
  return nullptr;
}

void deallocate(void*, int32_t, void* ptr, size_t) { host_free(ptr); }

// loom::memory_stats(cpu): host_memory_stats.hpp says what is counted.
LoomError* memory_stats(void*, int32_t, LoomMemoryStats* out) {
  fill_memory_stats(out);
  return nullptr;
}
LoomError* empty_cache(void*, int32_t) {
  large_block_release_all();
  return nullptr;
}
LoomError* reset_peak(void*, int32_t) {
  reset_peak_memory_stats();
  return nullptr;
}

// memcpy with a NULL pointer is undefined even for 0 bytes, and 0-byte
// tensors may have NULL data.
LoomError* copy_bytes(void* dst, const void* src, size_t nbytes) {
  if (nbytes != 0) std::memcpy(dst, src, nbytes);
  return nullptr;
}

LoomError* copy_to_host(void*, int32_t, void* host_dst, const void* device_src, size_t nbytes,
                        void*) {
  return copy_bytes(host_dst, device_src, nbytes);
}

LoomError* copy_from_host(void*, int32_t, void* device_dst, const void* host_src, size_t nbytes,
                          void*) {
  return copy_bytes(device_dst, host_src, nbytes);
}

LoomError* copy_on_device(void*, int32_t, void* dst, int32_t, const void* src, size_t nbytes,
                          void*) {
  // memmove: the host may copy between overlapping parts of one storage.
  if (nbytes != 0) std::memmove(dst, src, nbytes);
  return nullptr;
}

LoomError* synchronize(void*, int32_t) { return nullptr; }

// One setting for the whole process: parallel_for reads it on every call.
// OpenMP's own value is set too, for the calling thread, so oneDNN (which
// runs on the same OpenMP pool) uses the same team size.
std::atomic<int> g_max_threads{0};

LoomError* set_num_threads(void*, int32_t n) {
  if (n < 1) return plugin::make_error(LOOM_STATUS_INVALID_ARGUMENT, "cpu: set_num_threads needs n >= 1");
  g_max_threads.store(n, std::memory_order_relaxed);
  omp_set_num_threads(n);
  return nullptr;
}

int32_t get_num_threads(void*) { return max_threads(); }

LoomDeviceTypeDesc make_desc() {
  LoomDeviceTypeDesc d{};
  d.struct_size = sizeof d;
  d.name = "cpu";
  d.device_data = nullptr;
  d.flags = LOOM_DEVICE_HOST_MEMORY;
  d.device_count = &device_count;
  d.allocate = &allocate;
  d.deallocate = &deallocate;
  d.copy_to_host = &copy_to_host;
  d.copy_from_host = &copy_from_host;
  d.copy_on_device = &copy_on_device;
  d.synchronize = &synchronize;
  d.set_num_threads = &set_num_threads;
  d.get_num_threads = &get_num_threads;
  d.memory_stats = &memory_stats;
  d.empty_cache = &empty_cache;
  d.reset_peak_memory_stats = &reset_peak;
  // Streams and events stay NULL: CPU kernels run synchronously.
  fill_fused_slots(d);
  return d;
}

}  // namespace

int max_threads() noexcept {
  const int n = g_max_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

const LoomDeviceTypeDesc& device_type_desc() {
  static const LoomDeviceTypeDesc desc = make_desc();
  return desc;
}

}  // namespace loom::cpu
