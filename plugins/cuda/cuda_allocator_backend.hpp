// The caching allocator's view of one CUDA device (allocator/
// caching_allocator.hpp): raw cudaMalloc/cudaFree, free memory for the
// out-of-memory message, and events that say when a stream is done with a
// freed block. Events come from a small pool: creating one per free would
// cost a driver call each time.
#pragma once

#include "allocator/caching_allocator.hpp"
#include "vendor/gpu_target.hpp"

#include <mutex>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {

class CudaAllocatorBackend final : public gpu::AllocatorBackend {
 public:
  explicit CudaAllocatorBackend(int device) : device_(device) {}

  void* raw_alloc(size_t bytes) override;
  void raw_free(void* ptr) override;
  void mem_info(size_t* free, size_t* total) override;
  Event record_event(Stream stream) override;
  bool event_done(Event event) override;
  void release_event(Event event) override;
  void synchronize() override;

 private:
  int device_;
  std::mutex mu_;
  std::vector<void*> spare_events_;  // cudaEvent_t, created without timing
};

}  // namespace loom::LOOM_GPU_NAMESPACE
