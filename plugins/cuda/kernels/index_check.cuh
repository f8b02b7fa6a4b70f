// Out-of-range indices on the device, reported as the CPU plugin does: a
// kernel that meets one skips the element and records the first value it
// saw in a 16-byte slot from the device's caching allocator; after the
// launch the host reads the slot back on the call's stream and fails with
// INVALID_ARGUMENT naming the index (and the dim and size). The read
// synchronises the stream once per call of an op that takes indices: the
// error must surface from the call that caused it, as on the CPU.
#pragma once

#include "../cuda_error.hpp"
#include "../runtime.hpp"

#include <loom/plugin.hpp>

#include "vendor/gpu_runtime.hpp"

#include <cstdint>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE::indexing {

// The slot: `seen` turns 1 once, and its winner writes `value`.
struct BadIndexSlot {
  unsigned seen;
  unsigned pad;
  long long value;
};

__device__ inline void record_bad_index(BadIndexSlot* slot, int64_t v) {
  if (atomicCAS(&slot->seen, 0u, 1u) == 0u) slot->value = static_cast<long long>(v);
}

// Owns one slot for one call (freed on every path; the allocator reuses it
// on this stream only after the work queued here).
class BadIndexCheck {
 public:
  BadIndexCheck(int device, cudaStream_t stream)
      : device_(device), stream_(stream), allocator_(allocator(device)),
        slot_(static_cast<BadIndexSlot*>(allocator_.allocate(sizeof(BadIndexSlot), stream))) {
    try {
      check(cudaMemsetAsync(slot_, 0, sizeof(BadIndexSlot), stream_), device_, "cudaMemsetAsync (index check)");
    } catch (...) {
      allocator_.free(slot_);
      throw;
    }
  }
  ~BadIndexCheck() { allocator_.free(slot_); }
  BadIndexCheck(const BadIndexCheck&) = delete;
  BadIndexCheck& operator=(const BadIndexCheck&) = delete;

  BadIndexSlot* slot() const { return slot_; }

  // The first bad index the kernels queued so far recorded, if any (waits
  // for them).
  bool first_bad(int64_t& value) const {
    BadIndexSlot host{};
    check(cudaGetLastError(), device_, "index kernel launch");
    check(cudaMemcpyAsync(&host, slot_, sizeof host, cudaMemcpyDeviceToHost, stream_), device_,
          "cudaMemcpyAsync (index check)");
    check(cudaStreamSynchronize(stream_), device_, "cudaStreamSynchronize (index check)");
    value = host.value;
    return host.seen != 0;
  }

  // Fails with "<op>: index <v> is out of bounds for dimension <dim> with
  // size <size>" (the CPU plugin's words) when a kernel recorded one.
  void report(const char* op, int32_t dim, int64_t size) const {
    int64_t v = 0;
    if (!first_bad(v)) return;
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(v) +
                                                            " is out of bounds for dimension " +
                                                            std::to_string(dim) + " with size " +
                                                            std::to_string(size));
  }

 private:
  int device_;
  cudaStream_t stream_;
  gpu::CachingAllocator& allocator_;
  BadIndexSlot* slot_;
};

}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
