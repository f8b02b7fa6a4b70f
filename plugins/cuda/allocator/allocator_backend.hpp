// allocator_backend.hpp — what the caching allocator needs from a device.
//
// The allocator's policy (pools, splitting, merging, stream-safe reuse,
// statistics) is plain C++ over this interface, so it is tested host-side
// with a fake backend and needs no GPU. The CUDA plugin implements it with
// cudaMalloc / cudaFree / cudaEvent* / cudaMemGetInfo; one backend per device.
#pragma once

#include <cstddef>

namespace loom::gpu {

class AllocatorBackend {
 public:
  // Opaque to the allocator; nullptr is the device's default stream.
  using Stream = void*;
  using Event = void*;

  virtual ~AllocatorBackend() = default;

  // `bytes` (> 0) of device memory, or nullptr when the device is out of
  // memory. Any other failure may throw.
  virtual void* raw_alloc(size_t bytes) = 0;
  // Returns a pointer from raw_alloc. Work queued on the block's own stream
  // may still be using it, so raw_free must wait for that work, as cudaFree
  // and hipFree do (they synchronize the device).
  virtual void raw_free(void* ptr) = 0;
  // Free and total bytes on the device, as the driver sees them now.
  virtual void mem_info(size_t* free, size_t* total) = 0;

  // An event recorded now on `stream` (the backend may pool them). Each
  // event returned is handed back exactly once through release_event.
  virtual Event record_event(Stream stream) = 0;
  // Non-blocking: has all work before the event finished?
  virtual bool event_done(Event event) = 0;
  virtual void release_event(Event event) = 0;
  // Waits for all work on the whole device (before the allocator is torn
  // down with blocks still in use).
  virtual void synchronize() = 0;
};

}  // namespace loom::gpu
